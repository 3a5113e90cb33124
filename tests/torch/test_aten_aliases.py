"""The torch.* names of functional ops with ATen's signatures, the ``*_copy`` view ops and
the other aliases (`funcgrad.torch._aten_aliases`), against PyTorch: values and
gradients."""
from __future__ import annotations

import warnings

import numpy as np
import pytest

import funcgrad.torch as F

# name -> program of (torch module, x (2, 3, 4) leaf, w (2, 3) leaf)
PROGRAMS = {
    "dropout": lambda m, x, w: m.dropout(x, 0.0, True),
    "alpha_dropout": lambda m, x, w: m.alpha_dropout(x, 0.0, False),
    "feature_alpha_dropout": lambda m, x, w: m.feature_alpha_dropout(x, 0.0, False),
    "layer_norm": lambda m, x, w: m.layer_norm(x, [4]),
    "group_norm": lambda m, x, w: m.group_norm(x, 1, w[0] * 0 + 1, w[1] * 0),
    "rms_norm": lambda m, x, w: m.rms_norm(x, [4], x[0, 0] * 0 + 2),
    "batch_norm": lambda m, x, w: m.batch_norm(x, None, None, None, None, True, 0.1, 1e-5,
                                               False),
    "instance_norm": lambda m, x, w: m.instance_norm(x, None, None, None, None, True, 0.1,
                                                     1e-5, False),
    "embedding": lambda m, x, w: m.embedding(x[0], m.tensor([1, 0, 1])),
    "celu": lambda m, x, w: m.celu(x - 1, 2.0),
    "celu_": lambda m, x, w: m.celu_(x * 1 - 1),
    "selu": lambda m, x, w: m.selu(x - 1),
    "selu_": lambda m, x, w: m.selu_(x * 1 - 1),
    "rrelu": lambda m, x, w: m.rrelu(x - 1),
    "rrelu_": lambda m, x, w: m.rrelu_(x * 1 - 1),
    "threshold": lambda m, x, w: m.threshold(x, 0.3, -1.0),
    "threshold_": lambda m, x, w: m.threshold_(x * 1, 0.3, -1.0),
    "hardshrink": lambda m, x, w: m.hardshrink(x - 1),
    "prelu": lambda m, x, w: m.prelu(x - 1, w[0, :1]),
    "max_pool1d": lambda m, x, w: m.max_pool1d(x, 2),
    "max_pool1d_with_indices": lambda m, x, w: m.max_pool1d_with_indices(x, 2)[0],
    "max_pool2d": lambda m, x, w: m.max_pool2d(x, 2),
    "max_pool3d": lambda m, x, w: m.max_pool3d(x[None], 2),
    "avg_pool1d": lambda m, x, w: m.avg_pool1d(x, 2),
    "adaptive_avg_pool1d": lambda m, x, w: m.adaptive_avg_pool1d(x, 2),
    "adaptive_max_pool1d": lambda m, x, w: m.adaptive_max_pool1d(x, 2)[0],
    "conv1d": lambda m, x, w: m.conv1d(x, w[:, :, None].expand(2, 3, 2)),
    "conv2d": lambda m, x, w: m.conv2d(x[None], w.t()[:, :, None, None]),
    "conv3d": lambda m, x, w: m.conv3d(x[None, :, :, None], w.t()[:, :, None, None, None]),
    "conv_transpose1d": lambda m, x, w: m.conv_transpose1d(x[:, :2], w[:, :, None]),
    "conv_transpose2d": lambda m, x, w: m.conv_transpose2d(x[None, :2], w[:, :, None, None]),
    "conv_transpose3d": lambda m, x, w: m.conv_transpose3d(x[None, :2, :, None],
                                                           w[:, :, None, None, None]),
    "bilinear": lambda m, x, w: m.bilinear(x[0], x[1], x[:, :, :, None].expand(2, 3, 4, 4)[:, 0]),
    "channel_shuffle": lambda m, x, w: m.channel_shuffle(x[None].expand(1, 2, 3, 4)
                                                         .reshape(1, 6, 4), 2),
    "pixel_shuffle": lambda m, x, w: m.pixel_shuffle(x.reshape(1, 4, 3, 2), 2),
    "pixel_unshuffle": lambda m, x, w: m.pixel_unshuffle(x.reshape(1, 1, 4, 6), 2),
    "cosine_similarity": lambda m, x, w: m.cosine_similarity(x[0], x[1]),
    "pairwise_distance": lambda m, x, w: m.pairwise_distance(x[0], x[1]),
    "pdist": lambda m, x, w: m.pdist(x[0]),
    "kl_div": lambda m, x, w: m.kl_div(x, x.detach() * 2),
    "kl_div(sum)": lambda m, x, w: m.kl_div(x, x.detach() * 2, 2),
    "binary_cross_entropy_with_logits": lambda m, x, w: m.binary_cross_entropy_with_logits(
        x, x.detach() / 4, None, None, 1),
    "margin_ranking_loss": lambda m, x, w: m.margin_ranking_loss(x, x * 2, m.ones(2, 3, 4)),
    "hinge_embedding_loss": lambda m, x, w: m.hinge_embedding_loss(x, m.ones(2, 3, 4)),
    "triplet_margin_loss": lambda m, x, w: m.triplet_margin_loss(x[0], x[1], x[0] * 2),
    "cosine_embedding_loss": lambda m, x, w: m.cosine_embedding_loss(x[0], x[1], m.ones(3)),
    "poisson_nll_loss": lambda m, x, w: m.poisson_nll_loss(x, x.detach(), True, False, 1e-8, 1),
    "ctc_loss": lambda m, x, w: m.ctc_loss(x.permute(2, 0, 1).log_softmax(2),
                                           m.tensor([[1, 2], [1, 1]]), [4, 4], [2, 2]),
    "view_copy": lambda m, x, w: m.view_copy(x, [6, 4]),
    "permute_copy": lambda m, x, w: m.permute_copy(x, [2, 0, 1]),
    "t_copy": lambda m, x, w: m.t_copy(x[0]),
    "transpose_copy": lambda m, x, w: m.transpose_copy(x, 0, 2),
    "squeeze_copy": lambda m, x, w: m.squeeze_copy(x[:1]),
    "unsqueeze_copy": lambda m, x, w: m.unsqueeze_copy(x, 1),
    "select_copy": lambda m, x, w: m.select_copy(x, 1, 0),
    "diagonal_copy": lambda m, x, w: m.diagonal_copy(x[0]),
    "narrow_copy": lambda m, x, w: m.narrow_copy(x, 2, 1, 2),
    "expand_copy": lambda m, x, w: m.expand_copy(x[:, :1], [2, 3, 4]),
    "unfold_copy": lambda m, x, w: m.unfold_copy(x, 2, 2, 2),
    "as_strided_copy": lambda m, x, w: m.as_strided_copy(x, (2, 2), (1, 2)),
    "alias_copy": lambda m, x, w: m.alias_copy(x),
    "detach_copy": lambda m, x, w: m.detach_copy(x.detach()) * w.sum(),
    "view_as_real_copy": lambda m, x, w: m.view_as_real_copy(x.detach().to(m.complex128)) * w.sum(),
    "view_as_complex_copy": lambda m, x, w: m.view_as_complex_copy(x.detach()[..., :2]).abs() * w.sum(),
    "split_copy": lambda m, x, w: m.split_copy(x, 2, 2)[1],
    "unbind_copy": lambda m, x, w: m.unbind_copy(x)[1],
    "split_with_sizes": lambda m, x, w: m.split_with_sizes(x, [1, 3], 2)[1],
    "split_with_sizes_copy": lambda m, x, w: m.split_with_sizes_copy(x, [1, 3], 2)[1],
    "Tensor.split_with_sizes": lambda m, x, w: x.split_with_sizes([1, 3], 2)[1],
    "unsafe_split": lambda m, x, w: m.unsafe_split(x, 2, 2)[1],
    "Tensor.unsafe_split": lambda m, x, w: x.unsafe_split(2, 2)[1],
    "unsafe_chunk": lambda m, x, w: m.unsafe_chunk(x, 2, 2)[1],
    "Tensor.unsafe_chunk": lambda m, x, w: x.unsafe_chunk(2, 2)[1],
    "unsafe_split_with_sizes": lambda m, x, w: m.unsafe_split_with_sizes(x, [3, 1], 2)[0],
    "Tensor.unsafe_split_with_sizes": lambda m, x, w: x.unsafe_split_with_sizes([3, 1], 2)[0],
    "resolve_conj": lambda m, x, w: m.resolve_conj(x),
    "Tensor.resolve_conj": lambda m, x, w: x.resolve_conj(),
    "resolve_neg": lambda m, x, w: m.resolve_neg(x),
    "Tensor.resolve_neg": lambda m, x, w: x.resolve_neg(),
    "zero_": lambda m, x, w: m.zero_(x.detach().clone()) + w.sum(),
    "resize_as_": lambda m, x, w: m.resize_as_(m.zeros(1), x.detach()) * 0 + w.sum(),
}


def _run(m, program):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        m.manual_seed(0)
        x = m.tensor(np.arange(24.0).reshape(2, 3, 4) / 7 + 0.1, requires_grad=True)
        w = m.tensor(np.linspace(-1, 1, 6).reshape(2, 3), requires_grad=True)
        out = program(m, x, w)
        out.abs().sum().backward()
        grads = [None if t.grad is None else t.grad.numpy() for t in (x, w)]
        return out.detach().numpy(), grads


@pytest.mark.parametrize("name", sorted(PROGRAMS))
def test_aliases_match_pytorch(real, name):
    (ours, our_grads), (theirs, their_grads) = (_run(m, PROGRAMS[name]) for m in (F, real))
    np.testing.assert_allclose(ours, theirs, rtol=1e-10, atol=1e-12)
    for a, b in zip(our_grads, their_grads):
        assert (a is None) == (b is None)
        if a is not None:
            np.testing.assert_allclose(a, b, rtol=1e-10, atol=1e-12)


def test_copies_own_their_memory():
    x = F.arange(6.0).reshape(2, 3)
    for copy in (F.view_copy(x, [6]), F.t_copy(x), F.select_copy(x, 0, 1),
                 F.expand_copy(x[:1], [2, 3])):
        copy.add_(1)
    assert x.tolist() == [[0.0, 1.0, 2.0], [3.0, 4.0, 5.0]]
