"""F.ctc_loss / nn.CTCLoss against real PyTorch: losses and gradients through log_softmax
for every reduction, padded and concatenated targets, unbatched input, another blank,
empty targets, impossible alignments (inf, and zero_infinity), and PyTorch's errors."""
from __future__ import annotations

import numpy as np
import pytest

import funcgrad.torch as torch

RNG = np.random.default_rng(0)
LOGITS = RNG.standard_normal((7, 3, 5))
TARGETS = np.array([[1, 2, 2, 4], [3, 1, 0, 0], [2, 2, 2, 0]])
FLAT = np.array([1, 2, 2, 4, 3, 1, 2, 2, 2])


def _loss(T, logits, call):
    x = T.from_numpy(logits.copy()).requires_grad_(True)
    loss = call(T, x.log_softmax(-1))
    loss.sum().backward()
    return loss.detach().numpy(), x.grad.numpy()


CASES = {
    **{f"{red}": (lambda red: lambda T, lp: T.nn.functional.ctc_loss(
        lp, T.from_numpy(TARGETS), T.tensor([7, 6, 7]), T.tensor([4, 2, 3]),
        reduction=red))(red) for red in ("mean", "sum", "none")},
    "concatenated targets, tuples": lambda T, lp: T.nn.functional.ctc_loss(
        lp, T.from_numpy(FLAT), (7, 6, 7), (4, 2, 3), reduction="none"),
    "empty target": lambda T, lp: T.nn.functional.ctc_loss(
        lp, T.from_numpy(TARGETS), (7, 6, 7), (0, 2, 3), reduction="none"),
    "blank 4": lambda T, lp: T.nn.CTCLoss(blank=4)(
        lp, T.from_numpy(TARGETS % 4), T.tensor([7, 7, 5]), T.tensor([4, 2, 3])),
    "impossible, zero_infinity": lambda T, lp: T.nn.CTCLoss(
        reduction="sum", zero_infinity=True)(lp, T.from_numpy(TARGETS), T.tensor([2, 6, 7]),
                                             T.tensor([4, 2, 3])),
    "float32": lambda T, lp: T.nn.functional.ctc_loss(
        lp.float(), T.from_numpy(TARGETS), T.tensor([7, 6, 7]), T.tensor([4, 2, 3])),
}


@pytest.mark.parametrize("name", list(CASES))
def test_loss_and_gradient_match_pytorch(real, name):
    (ours, our_grad), (theirs, their_grad) = (_loss(T, LOGITS, CASES[name])
                                              for T in (torch, real))
    tol = 1e-5 if name == "float32" else 1e-12
    np.testing.assert_allclose(ours, theirs, rtol=tol, atol=tol)
    np.testing.assert_allclose(our_grad, their_grad, rtol=tol, atol=tol)


def test_unbatched_input(real):
    (ours, _), (theirs, _) = (_loss(T, LOGITS[:, 0], lambda T, lp: T.nn.functional.ctc_loss(
        lp, T.tensor([1, 2, 2]), T.tensor(7), T.tensor(3), blank=3)) for T in (torch, real))
    np.testing.assert_allclose(ours, theirs, rtol=1e-12)


def test_an_impossible_alignment_is_infinite_as_pytorchs(real):
    losses = [T.nn.functional.ctc_loss(T.from_numpy(LOGITS).log_softmax(-1),
                                       T.from_numpy(TARGETS), (2, 6, 7), (4, 2, 3),
                                       reduction="none").numpy() for T in (torch, real)]
    np.testing.assert_allclose(losses[0], losses[1], rtol=1e-12)
    assert np.isinf(losses[0][0])


def test_the_gradient_in_log_probs_is_the_true_one(real):
    """PyTorch's kernel returns the derivative plus exp(log_probs) on valid frames (the
    form that assumes a log_softmax before it); funcgrad's is the derivative itself."""
    lp_values = np.log(np.full((4, 1, 3), 1 / 3))
    grads = []
    for T in (torch, real):
        lp = T.from_numpy(lp_values.copy()).requires_grad_(True)
        T.nn.functional.ctc_loss(lp, T.tensor([[1, 2]]), (4,), (2,), reduction="sum").backward()
        grads.append(lp.grad.numpy())
    np.testing.assert_allclose(grads[0] + np.exp(lp_values), grads[1], atol=1e-12)


ERRORS = {
    "input length too long": ((8, 6, 7), (4, 2, 3), {}),
    "target longer than its row": ((7, 6, 7), (5, 2, 3), {}),
    "wrong number of lengths": ((7, 6, 7), (4, 2), {}),
    "negative target length": ((7, 6, 7), (4, -1, 3), {}),
    "blank out of range": ((7, 6, 7), (4, 2, 3), {"blank": 5}),
    "bad reduction": ((7, 6, 7), (4, 2, 3), {"reduction": "avg"}),
}


@pytest.mark.parametrize("name", list(ERRORS))
def test_errors_are_pytorchs(peer, name):
    lengths, target_lengths, kwargs = ERRORS[name]

    def call(T):
        T.nn.functional.ctc_loss(T.from_numpy(LOGITS).log_softmax(-1), T.from_numpy(TARGETS),
                                 lengths, target_lengths, **kwargs)
    peer.raises(call)


def test_a_label_outside_the_classes_is_refused():
    with pytest.raises(RuntimeError, match="target label is outside"):
        torch.nn.functional.ctc_loss(torch.from_numpy(LOGITS).log_softmax(-1),
                                     torch.from_numpy(TARGETS + 5), (7, 6, 7), (4, 2, 3))
