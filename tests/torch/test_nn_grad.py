"""torch.nn.grad.conv{1,2,3}d_{input,weight} (also F.grad) against real PyTorch: values for
strides, paddings, dilations and groups, a graph when grad_output requires grad, and
second-order gradients through it."""
from __future__ import annotations

import numpy as np
import pytest

import funcgrad.torch as torch

CASES = [  # n, input shape, weight shape, stride, padding, dilation, groups
    (1, (2, 4, 11), (6, 4, 3), 1, 0, 1, 1), (1, (2, 4, 12), (6, 2, 3), 2, 1, 2, 2),
    (2, (2, 3, 8, 9), (4, 3, 3, 2), 1, 0, 1, 1), (2, (1, 4, 9, 10), (4, 2, 3, 3), (2, 3), (1, 2),
                                                   (2, 1), 2),
    (2, (2, 2, 7, 7), (2, 1, 2, 2), 2, 0, 1, 2),
    (3, (1, 2, 5, 6, 7), (3, 2, 2, 3, 2), 1, 1, 1, 1), (3, (2, 2, 7, 6, 5), (4, 1, 3, 2, 2), 2, 0,
                                                         (1, 2, 1), 2)]


def _arrays(in_shape, w_shape, T, args):
    rng = np.random.default_rng(0)
    x = rng.standard_normal(in_shape).astype(np.float32)
    w = rng.standard_normal(w_shape).astype(np.float32)
    out = getattr(T.nn.functional, f"conv{len(in_shape) - 2}d")(T.tensor(x), T.tensor(w), None,
                                                                  *args)
    g = rng.standard_normal(tuple(out.shape)).astype(np.float32)
    return x, w, g


@pytest.mark.parametrize("n,in_shape,w_shape,stride,padding,dilation,groups", CASES)
def test_values(real, n, in_shape, w_shape, stride, padding, dilation, groups):
    args = (stride, padding, dilation, groups)
    x, w, g = _arrays(in_shape, w_shape, real, args)
    results = []
    for T in (torch, real):
        gi = getattr(T.nn.grad, f"conv{n}d_input")(in_shape, T.tensor(w), T.tensor(g), *args)
        gw = getattr(T.nn.functional.grad, f"conv{n}d_weight")(T.tensor(x), w_shape,
                                                               T.tensor(g), *args)
        results.append((gi.numpy(), gw.numpy()))
    for a, b in zip(*results):
        np.testing.assert_allclose(a, b, rtol=1e-4, atol=1e-4)


@pytest.mark.parametrize("case", [CASES[1], CASES[3]])
def test_second_order(real, case):
    n, in_shape, w_shape, *args = case
    x, w, g = _arrays(in_shape, w_shape, real, args)
    results = []
    for T in (torch, real):
        wt, gt = T.tensor(w, requires_grad=True), T.tensor(g, requires_grad=True)
        gi = getattr(T.nn.grad, f"conv{n}d_input")(in_shape, wt, gt, *args)
        assert gi.requires_grad
        (gi * gi).sum().backward()
        results.append((wt.grad.numpy(), gt.grad.numpy()))
    for a, b in zip(*results):
        np.testing.assert_allclose(a, b, rtol=1e-4, atol=1e-3)


def test_no_graph_without_grad():
    gi = torch.nn.grad.conv1d_input((1, 2, 5), torch.ones(3, 2, 2), torch.ones(1, 3, 4))
    assert not gi.requires_grad and gi.grad_fn is None
    assert torch.nn.functional.grad is torch.nn.grad
