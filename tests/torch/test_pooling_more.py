"""Unpooling, 3-D adaptive max and Lp pooling, pdist and the in-place functional
activations: values, gradients, grad_fn names and errors against real PyTorch."""
from __future__ import annotations

import numpy as np
import pytest

import funcgrad.torch as torch
import funcgrad.torch.nn.functional as F


def _run(T, build):
    """(output values, input gradient, grad_fn name) of ``build(T, x)`` on one input."""
    x = T.from_numpy(np.random.default_rng(0).standard_normal((2, 3, 6, 5, 4))).float()
    x.requires_grad_(True)
    out = build(T, x)
    out = out[0] if isinstance(out, tuple) else out
    weight = T.from_numpy(np.linspace(-1, 1, out.numel()).reshape(tuple(out.shape))).float()
    (out * weight).sum().backward()
    return out.detach().numpy(), x.grad.numpy(), type(out.grad_fn).__name__


def _unpool2d(T, x):
    plane = x[:, :, 0]
    pooled, idx = T.nn.functional.max_pool2d(plane, 2, return_indices=True)
    return T.nn.MaxUnpool2d(2)(pooled, idx, output_size=plane.shape)


def _unpool1d(T, x):
    line = x[:, :, 0, 0]
    pooled, idx = T.nn.functional.max_pool1d(line, 2, stride=2, return_indices=True)
    return T.nn.functional.max_unpool1d(pooled, idx, 2)


def _unpool3d(T, x):
    pooled, idx = T.nn.functional.max_pool3d(x[..., :4, :4], 2, return_indices=True)
    return T.nn.MaxUnpool3d(2)(pooled, idx)


BUILDS = {
    "unpool1d": _unpool1d, "unpool2d": _unpool2d, "unpool3d": _unpool3d,
    "adaptive_max3d": lambda T, x: T.nn.AdaptiveMaxPool3d((4, 3, 2))(x),
    "adaptive_max3d_indices": lambda T, x: T.nn.functional.adaptive_max_pool3d(
        x, (2, None, 3), return_indices=True),
    "lp3d": lambda T, x: T.nn.LPPool3d(2.0, (2, 2, 1), stride=(2, 1, 2))(x),
    "lp3d_p3": lambda T, x: T.nn.functional.lp_pool3d(x.abs() + 0.1, 3.0, 2),
    "pdist2": lambda T, x: T.nn.functional.pdist(x.reshape(6, -1)[:, :7]),
    "pdist1": lambda T, x: T.nn.functional.pdist(x.reshape(6, -1)[:, :7], 1.0),
    "pdist_inf": lambda T, x: T.nn.functional.pdist(x.reshape(6, -1)[:, :7], float("inf")),
    "pdist0_5": lambda T, x: T.nn.functional.pdist(x.reshape(6, -1)[:, :7], 0.5),
}


@pytest.mark.parametrize("name", list(BUILDS))
def test_matches_pytorch(real, name):
    ours, theirs = _run(torch, BUILDS[name]), _run(real, BUILDS[name])
    np.testing.assert_allclose(ours[0], theirs[0], rtol=2e-6, atol=1e-6)
    np.testing.assert_allclose(ours[1], theirs[1], rtol=2e-5, atol=1e-6)
    assert ours[2] == theirs[2]


def test_adaptive_max_pool3d_indices_are_pytorchs(real):
    x = np.random.default_rng(1).standard_normal((2, 7, 5, 6)).astype(np.float32)
    _, ours = F.adaptive_max_pool3d(torch.from_numpy(x), (3, 2, 4), return_indices=True)
    _, theirs = real.nn.functional.adaptive_max_pool3d(real.from_numpy(x), (3, 2, 4),
                                                       return_indices=True)
    np.testing.assert_array_equal(ours.numpy(), theirs.numpy())


ERRORS = {
    "index past the plane": lambda T: T.nn.functional.max_unpool2d(
        T.ones(1, 1, 2, 2), T.full((1, 1, 2, 2), 17, dtype=T.int64), 2),
    "negative index": lambda T: T.nn.functional.max_unpool3d(
        T.ones(1, 1, 1, 2, 2), T.full((1, 1, 1, 2, 2), -1, dtype=T.int64), 2),
    "float indices": lambda T: T.nn.functional.max_unpool2d(
        T.ones(1, 1, 2, 2), T.zeros(1, 1, 2, 2), 2),
    "output size out of range": lambda T: T.nn.functional.max_unpool2d(
        T.ones(1, 1, 2, 2), T.zeros(1, 1, 2, 2, dtype=T.int64), 2, output_size=(7, 7)),
    "output size length": lambda T: T.nn.functional.max_unpool2d(
        T.ones(1, 1, 2, 2), T.zeros(1, 1, 2, 2, dtype=T.int64), 2, output_size=(4,)),
    "pdist 3-D": lambda T: T.nn.functional.pdist(T.ones(2, 3, 4)),
    "pdist negative p": lambda T: T.nn.functional.pdist(T.ones(2, 3), -1.0),
}


@pytest.mark.parametrize("name", list(ERRORS))
def test_errors_are_pytorchs(peer, name):
    peer.raises(ERRORS[name])


@pytest.mark.parametrize("name,args", [("elu_", (0.7,)), ("celu_", (1.3,)), ("selu_", ()),
                                       ("leaky_relu_", (0.2,)), ("hardtanh_", (-0.5, 0.25))])
def test_in_place_functional_activations(real, name, args):
    values = np.linspace(-2, 2, 9).astype(np.float32)
    results = []
    for T in (torch, real):
        x = T.from_numpy(values.copy()).requires_grad_(True)
        y = x * 1.0
        out = getattr(T.nn.functional, name)(y, *args)
        assert out is y  # in place, as PyTorch
        out.sum().backward()
        results.append((out.detach().numpy().copy(), x.grad.numpy().copy(),
                        type(out.grad_fn).__name__))
    np.testing.assert_allclose(results[0][0], results[1][0], rtol=1e-6)
    np.testing.assert_allclose(results[0][1], results[1][1], rtol=1e-6)
    assert results[0][2] == results[1][2]


def test_unpool_module_reprs_are_pytorchs(real):
    for name, args in (("MaxUnpool1d", (2,)), ("MaxUnpool2d", (2, 1)),
                       ("MaxUnpool3d", ((2, 1, 2), None, 1)), ("LPPool3d", (2, 3)),
                       ("AdaptiveMaxPool3d", ((1, 2, 3),))):
        assert repr(getattr(torch.nn, name)(*args)) == repr(getattr(real.nn, name)(*args))
