"""F.fractional_max_pool{2,3}d(_with_indices) and nn.FractionalMaxPool{2,3}d against real
PyTorch: with the same ``_random_samples``, values and indices are equal exactly and the
input gradients equal; without them the samples come from the facade's generator; the
module reprs, buffers and the error texts are PyTorch's."""
from __future__ import annotations

import numpy as np
import pytest

import funcgrad.torch as torch

CASES = [((2, 3, 9, 11), 2, (4, 5)), ((3, 10, 10), 3, (5, 6)), ((2, 5, 6, 7), (2, 3), (4, 4)),
         ((1, 2, 16, 5), 2, (15, 1)), ((2, 1, 5, 5), 1, 5), ((2, 2, 4, 4), 4, 1),
         ((2, 2, 7, 8, 9), 2, (3, 4, 5)), ((3, 5, 6, 7), (1, 2, 3), (4, 4, 2)),
         ((1, 2, 9, 5, 4), 3, (6, 2, 1))]


def _fn(T, n):
    return T.nn.functional.fractional_max_pool2d if n == 2 else (
        T.nn.functional.fractional_max_pool3d)


def _run(T, shape, kernel, out, samples, dtype):
    n = 2 if len(shape) in (3, 4) and not (len(shape) == 4 and isinstance(out, tuple)
                                            and len(out) == 3) else 3
    x = T.tensor(np.random.default_rng(0).standard_normal(shape).astype(dtype),
                 requires_grad=True)
    v, i = _fn(T, n)(x, kernel, output_size=out, return_indices=True,
                     _random_samples=T.tensor(samples))
    (v * T.tensor(np.arange(v.numel()).reshape(tuple(v.shape)).astype(dtype))).sum().backward()
    return v.detach().numpy(), i.numpy(), x.grad.numpy(), type(v.grad_fn).__name__


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
@pytest.mark.parametrize("shape,kernel,out", CASES)
@pytest.mark.parametrize("seed", [0, 1, 2])
def test_given_samples(real, shape, kernel, out, dtype, seed):
    n = len(out) if isinstance(out, tuple) else 2
    batch = shape[0] if len(shape) == n + 2 else 1
    samples = np.random.default_rng(seed).random((batch + seed, shape[-n - 1], n)).astype(dtype)
    ours, theirs = (_run(T, shape, kernel, out, samples, dtype) for T in (torch, real))
    np.testing.assert_array_equal(ours[0], theirs[0])
    np.testing.assert_array_equal(ours[1], theirs[1])
    np.testing.assert_allclose(ours[2], theirs[2])
    assert ours[3] == theirs[3]


@pytest.mark.parametrize("samples", [[0.0, 0.999999], [0.5, 0.25], [0.999, 0.0]])
def test_edge_samples(real, samples):
    s = np.array(samples, np.float32)[None, None]
    ours, theirs = (_run(T, (1, 1, 23, 17), 3, (9, 7), s, np.float32) for T in (torch, real))
    np.testing.assert_array_equal(ours[1], theirs[1])


def test_drawn_samples_use_the_generator():
    x = torch.randn(2, 3, 10, 9)
    torch.manual_seed(5)
    drawn = torch.nn.functional.fractional_max_pool2d(x, 2, output_size=4, return_indices=True)
    torch.manual_seed(5)
    given = torch.nn.functional.fractional_max_pool2d(
        x, 2, output_size=4, return_indices=True, _random_samples=torch.rand(2, 3, 2))
    for a, b in zip(drawn, given):
        np.testing.assert_array_equal(a.numpy(), b.numpy())
    torch.manual_seed(6)
    v = torch.nn.functional.fractional_max_pool3d(x, (1, 2, 2), output_size=(1, 4, 4))
    torch.manual_seed(6)
    w = torch.nn.functional.fractional_max_pool3d(x, (1, 2, 2), output_size=(1, 4, 4),
                                                  _random_samples=torch.rand(1, 2, 3))
    np.testing.assert_array_equal(v.numpy(), w.numpy())


@pytest.mark.parametrize("n,ratio", [(2, (0.5, 0.7)), (2, [0.3, 0.9]), (3, 0.5),
                                     (3, (0.5, 0.6, 0.7))])
def test_output_ratio_and_module(real, n, ratio):
    shape = (2, 3, 9, 10) if n == 2 else (2, 3, 6, 9, 10)
    x = np.random.default_rng(0).standard_normal(shape).astype(np.float32)
    s = np.random.default_rng(1).random((2, 3, n)).astype(np.float32)
    results = []
    for T in (torch, real):
        cls = T.nn.FractionalMaxPool2d if n == 2 else T.nn.FractionalMaxPool3d
        m = cls(2, output_ratio=ratio, return_indices=True, _random_samples=T.tensor(s))
        results.append((repr(m), list(m.state_dict()), m.kernel_size, m.output_ratio,
                        [t.numpy() for t in m(T.tensor(x))]))
    (r1, k1, ks1, or1, o1), (r2, k2, ks2, or2, o2) = results
    assert (r1, k1, ks1, or1) == (r2, k2, ks2, or2)
    for a, b in zip(o1, o2):
        np.testing.assert_array_equal(a, b)


def test_module_without_samples(real):
    for T in (torch, real):
        m = T.nn.FractionalMaxPool2d(3, output_size=(4, 5))
        assert repr(m) == "FractionalMaxPool2d()" and m._random_samples is None
        assert list(m.state_dict()) == [] and m.output_size == (4, 5)
        assert tuple(m(T.randn(2, 3, 9, 9)).shape) == (2, 3, 4, 5)
    assert torch.nn.modules.pooling.FractionalMaxPool3d is torch.nn.FractionalMaxPool3d


def _error(fn):
    with pytest.raises(Exception) as info:
        fn()
    return type(info.value), str(info.value)


def _r(T, *shape, dtype=None):
    return T.rand(*shape, dtype=dtype or T.float32)


ERRORS = [
    (2, (2, 3, 7, 8), 2, {"output_ratio": 0.5}), (2, (2, 3, 7, 8), 2, {}),
    (3, (2, 3, 6, 7, 8), 2, {}),
    (2, (2, 3, 7, 8), (2, 2, 2), {"output_size": 3}), (2, (2, 3, 7, 8), 2, {"output_size": (3, 3, 3)}),
    (3, (2, 3, 6, 7, 8), (2, 2), {"output_size": 3}),
    (3, (2, 3, 6, 7, 8), 2, {"output_size": (3, 3)}),
    (2, (2, 3, 7, 8), 5, {"output_size": 4}), (2, (2, 3, 7, 8), 2, {"output_size": 7}),
    (2, (7, 8), 2, {"output_size": 3, "samples": (1, 7, 2)}),
    (2, (7, 8), 2, {"output_size": 3, "samples": (2, 3)}),
    (2, (2, 3, 7, 8), 2, {"output_size": 3, "samples": (2, 3, 2), "double": True}),
    (2, (2, 3, 7, 8), 2, {"output_size": 3, "samples": (1, 3, 2)}),
    (2, (2, 3, 7, 8), 2, {"output_size": 3, "samples": (2, 2, 2)}),
    (2, (2, 3, 7, 8), 2, {"output_size": 3, "samples": (2, 3, 3)}),
    (2, (2, 3, 0, 4), 2, {"output_size": 1}), (2, (3, 0, 4), 2, {"output_size": 1}),
    (2, (2, 0, 4, 4), 2, {"output_size": 1, "samples": (2, 0, 2)}),
    (2, (3, 8, 8), 2, {"output_size": 8, "samples": (2, 3)}),
    (2, (3, 8, 8), 2, {"output_size": 3, "samples": (2, 3)}),
    (2, (7, 8), 2, {"output_size": 3, "samples": (2, 3, 2), "double": True}),
    (3, (2, 3, 6, 7, 8), 2, {"output_size": (6, 3, 3), "samples": (2, 3)}),
    (3, (2, 3, 6, 7, 8), 2, {"output_size": (3, 7, 3)}),
    (3, (2, 3, 6, 7, 8), 2, {"output_size": (3, 3, 8)}),
    (3, (2, 3, 6, 7, 8), 2, {"output_size": 3, "samples": (2, 3, 3), "double": True}),
    (3, (2, 3, 6, 7, 8), 2, {"output_size": 3, "samples": (2, 3)}),
    (3, (2, 3, 6, 7, 8), 2, {"output_size": 3, "samples": (1, 3, 3)}),
    (3, (2, 3, 6, 7, 8), 2, {"output_size": 3, "samples": (2, 2, 3)}),
    (3, (2, 3, 6, 7, 8), 2, {"output_size": 3, "samples": (2, 3, 2)}),
    (3, (7, 8), 2, {"output_size": 3, "samples": (1, 3, 3)}),
    (3, (2, 3, 0, 4, 4), 2, {"output_size": 1}),
]


@pytest.mark.parametrize("n,shape,kernel,kwargs", ERRORS)
def test_errors(real, n, shape, kernel, kwargs):
    def call(T):
        kw = dict(kwargs)
        samples, double = kw.pop("samples", None), kw.pop("double", False)
        if samples is not None:
            kw["_random_samples"] = _r(T, *samples, dtype=T.float64 if double else None)
        return _fn(T, n)(T.zeros(*shape), kernel, **kw)
    assert _error(lambda: call(torch)) == _error(lambda: call(real))


@pytest.mark.parametrize("n,args,kwargs", [(2, (2,), {}), (2, (2, 3, 0.5), {}),
                                           (2, (2,), {"output_ratio": 1.5}),
                                           (3, (0,), {"output_ratio": 0.5}),
                                           (3, ((2, 0, 2),), {"output_ratio": 0.5}),
                                           (3, (2,), {"output_ratio": (0.5, 1.0, 0.5)})])
def test_module_errors(real, n, args, kwargs):
    name = f"FractionalMaxPool{n}d"
    assert (_error(lambda: getattr(torch.nn, name)(*args, **kwargs))
            == _error(lambda: getattr(real.nn, name)(*args, **kwargs)))


def test_empty_output_and_batch(real):
    for shape, out in (((2, 3, 7, 8), 0), ((0, 3, 5, 4), 1)):
        s = np.zeros((shape[0], 3, 2), np.float32)
        a, b = (_fn(T, 2)(T.zeros(*shape), 2, output_size=out, return_indices=True,
                          _random_samples=T.tensor(s)) for T in (torch, real))
        assert [tuple(t.shape) for t in a] == [tuple(t.shape) for t in b]
