"""Ops that are one primitive call are recorded as one (`PrimNode`, no trace), with the
gradients, double backward and node names they had when traced, compared with PyTorch
when it is installed."""
from __future__ import annotations

import numpy as np
import pytest

import funcgrad.torch as ft
from funcgrad.torch._op_node import PrimNode

CASES = {  # name -> (op of (library, x, w), input shape, PyTorch's node name)
    "matmul": (lambda L, x, w: x @ w, (3, 4), "MmBackward0"),
    "mm": (lambda L, x, w: L.mm(x, w), (3, 4), "MmBackward0"),
    "mv": (lambda L, x, w: x @ w[:, 0].detach(), (3, 4), "MvBackward0"),
    "pow2": (lambda L, x, w: x ** 2, (3, 4), "PowBackward0"),
    "pow_half": (lambda L, x, w: x.abs().add(1.0) ** 0.5, (3, 4), "PowBackward0"),
    "unsqueeze": (lambda L, x, w: x.unsqueeze(1), (3, 4), "UnsqueezeBackward0"),
    "expand": (lambda L, x, w: x[:, :1].expand(3, 5), (3, 4), "ExpandBackward0"),
    "flatten": (lambda L, x, w: x.flatten(), (3, 4), "ViewBackward0"),
    "view": (lambda L, x, w: x.view(2, 6), (3, 4), "ViewBackward0"),
    "select": (lambda L, x, w: x[1], (3, 4), "SelectBackward0"),
    "slice": (lambda L, x, w: x[:, 1:3], (3, 4), "SliceBackward0"),
    "step_slice": (lambda L, x, w: x[::2, -1], (3, 4), "SelectBackward0"),
    "newaxis": (lambda L, x, w: x[None, ..., 2:], (3, 4), "SliceBackward0"),
    "cat": (lambda L, x, w: L.cat([x, x[:, :2] * 2, x.detach()], 1), (3, 4), "CatBackward0"),
    "select_op": (lambda L, x, w: x.select(1, -1), (3, 4), "SelectBackward0"),
    "clamp": (lambda L, x, w: x.clamp(-0.5, 0.7) * x, (3, 4), "MulBackward0"),
    "clamp_min": (lambda L, x, w: (x * x).clamp_min(0.2), (3, 4), "ClampMinBackward0"),
    "clamp_max": (lambda L, x, w: (x * x).clamp_max(0.5), (3, 4), "ClampMaxBackward0"),
}


def _run(lib, case):
    fn, shape, _ = CASES[case]
    rng = np.random.RandomState(0)
    x = lib.tensor(rng.randn(*shape), requires_grad=True)
    w = lib.tensor(rng.randn(4, 5), requires_grad=True)
    y = fn(lib, x, w)
    g = lib.tensor(np.linspace(-1, 1, int(np.prod(tuple(y.shape)))).reshape(tuple(y.shape)))
    gx, = lib.autograd.grad(y, x, g, create_graph=True)
    ggx, = lib.autograd.grad((gx * gx * x).sum(), x)
    return y, gx, ggx


@pytest.mark.parametrize("case", sorted(CASES))
def test_one_primitive_node(case):
    y, gx, ggx = _run(ft, case)
    assert isinstance(y.grad_fn, PrimNode), type(y.grad_fn).__mro__
    assert type(y.grad_fn).__name__ == CASES[case][2]
    try:
        import torch
    except ImportError:
        return
    ty, tgx, tggx = _run(torch, case)
    assert type(ty.grad_fn).__name__ == CASES[case][2]
    np.testing.assert_allclose(y.detach().numpy(), ty.detach().numpy(), rtol=1e-12)
    np.testing.assert_allclose(gx.detach().numpy(), tgx.detach().numpy(), rtol=1e-12)
    np.testing.assert_allclose(ggx.numpy(), tggx.numpy(), rtol=1e-10, atol=1e-12)


def test_int_pow_and_promoting_pow_still_right():
    """A power that changes the dtype (int ** float) takes the traced path: same values."""
    x = ft.tensor([1, 2, 3])
    assert (x ** 2).dtype == ft.int64 and (x ** 2).tolist() == [1, 4, 9]
    assert (x ** 0.5).dtype == ft.float32
    np.testing.assert_allclose((x ** 0.5).numpy(), np.sqrt([1, 2, 3]), rtol=1e-6)


def test_view_errors_unchanged():
    x = ft.randn(2, 3, 4)
    with pytest.raises(RuntimeError, match=r"shape '\[5, -1\]' is invalid for input of size 24"):
        x.view(5, -1)
    with pytest.raises(RuntimeError, match="only one dimension can be inferred"):
        x.view(-1, -1)
    with pytest.raises(RuntimeError, match=r"shape '\[7\]' is invalid"):
        x.reshape(7)
    assert x.view(6, -1).shape == (6, 4) and x.flatten(1).shape == (2, 12)


def test_basic_index_errors_and_views():
    x = ft.arange(12.0).reshape(3, 4).clone()
    with pytest.raises(IndexError, match="index 3 is out of bounds for dimension 0 with size 3"):
        x[3]
    v = x[1, 1:3]
    assert v._is_view() and v._base is x
    v.mul_(10)  # writes through the view
    assert x[1].tolist() == [4.0, 50.0, 60.0, 7.0]
    assert x[True].shape == (1, 3, 4) and x[()].shape == (3, 4)  # the traced special cases


def test_clamp_is_one_primitive_with_pytorch_gradients():
    """Bounds included, NaN and crossed bounds (max wins) as PyTorch."""
    values = [-1.0, -0.5, 0.0, 0.3, 1.0, 2.0, float("nan")]
    x = ft.tensor(values, requires_grad=True)
    y = x.clamp(-0.5, 1.0)
    assert isinstance(y.grad_fn, PrimNode) and type(y.grad_fn).__name__ == "ClampBackward1"
    g, = ft.autograd.grad(y.sum(), x)
    assert g.tolist() == [0.0, 1.0, 1.0, 1.0, 1.0, 0.0, 0.0]
    crossed = x.clamp(min=2.0, max=1.0)
    assert crossed.tolist()[:-1] == [1.0] * 6 and np.isnan(crossed.tolist()[-1])
    assert not isinstance(x.clamp(min=float("nan")).grad_fn, PrimNode)  # traced, as before
