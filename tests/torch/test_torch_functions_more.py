"""The torch functions of _ops_order_stats, _ops_arrange, _ops_index_update,
_ops_math_more, _ops_linalg_legacy and _numeric_info against real PyTorch, beyond the
value/gradient table of facade_table_more.py (which test_facade_vs_pytorch.py runs):
PyTorch's error types and texts, the named tuples' fields, in-place methods returning
self, the settings, finfo/iinfo, second derivatives, and use from funcgrad's functional
transforms.
"""
from __future__ import annotations

import warnings

import numpy as np
import pytest

torch = pytest.importorskip("torch")
if not hasattr(torch, "tensor"):  # the tests/torch folder itself, seen as a namespace
    pytest.skip("PyTorch is not installed", allow_module_level=True)

import funcgrad.torch as fg  # noqa: E402

_R = np.random.RandomState(3)
M = _R.uniform(-2, 2, (3, 3))
V = _R.uniform(-2, 2, 3)
I2 = np.array([0, 2])


def _t(T, x, grad=False):
    t = T.tensor(x)
    return t.requires_grad_() if grad else t


# (label, call(T)): each must raise in PyTorch; the facade must raise the same type with
# the same text
ERRORS = [
    ("index_add index dtype", lambda T: T.index_add(_t(T, M), 0, _t(T, I2 * 1.0),
                                                    _t(T, M[:2]))),
    ("index_add source dtype", lambda T: T.index_add(_t(T, M), 0, _t(T, I2),
                                                     _t(T, M[:2]).float())),
    ("index_add count", lambda T: T.index_add(_t(T, M), 0, _t(T, I2), _t(T, M[:1]))),
    ("index_add bounds", lambda T: T.index_add(_t(T, M), 0, _t(T, np.array([0, 5])),
                                               _t(T, M[:2]))),
    ("index_copy count", lambda T: T.index_copy(_t(T, M), 0, _t(T, I2), _t(T, M[:1]))),
    ("index_fill index dtype", lambda T: T.index_fill(_t(T, M), 0, _t(T, I2 * 1.0), 1.0)),
    ("hsplit 0-d", lambda T: T.hsplit(T.tensor(1.0), 2)),
    ("vsplit 1-d", lambda T: T.vsplit(_t(T, V), 3)),
    ("dsplit 2-d", lambda T: T.dsplit(_t(T, M), 3)),
    ("hsplit divisible", lambda T: T.hsplit(_t(T, M), 2)),
    ("rot90 dims", lambda T: T.rot90(_t(T, M), 1, [0])),
    ("rot90 rank", lambda T: T.rot90(_t(T, V))),
    ("rot90 same dims", lambda T: T.rot90(_t(T, M), 1, [0, 0])),
    ("fliplr 1-d", lambda T: T.fliplr(_t(T, V))),
    ("flipud 0-d", lambda T: T.flipud(T.tensor(1.0))),
    ("broadcast_shapes", lambda T: T.broadcast_shapes((2, 3), (4,))),
    ("broadcast_tensors", lambda T: T.broadcast_tensors(_t(T, M), _t(T, M[:2, :2]))),
    ("repeat_interleave negative", lambda T: T.repeat_interleave(_t(T, M), -1)),
    ("repeat_interleave sizes", lambda T: T.repeat_interleave(
        _t(T, M), T.tensor([1, 2]), dim=1)),
    ("cross length", lambda T: T.cross(_t(T, M), _t(T, M[:, :2]), dim=1)),
    ("cross ranks", lambda T: T.cross(_t(T, M), _t(T, V), dim=-1)),
    ("diff prepend rank", lambda T: T.diff(_t(T, M), prepend=_t(T, V))),
    ("meshgrid dtypes", lambda T: T.meshgrid(_t(T, V), _t(T, V).float(), indexing="ij")),
    ("meshgrid indexing", lambda T: T.meshgrid(_t(T, V), indexing="yx")),
    ("scatter_reduce reduce", lambda T: T.scatter_reduce(
        _t(T, M), 0, T.tensor([[0]]), _t(T, M[:1, :1]), "foo")),
    ("cdist columns", lambda T: T.cdist(_t(T, M), _t(T, M[:, :2]))),
    ("cdist rank", lambda T: T.cdist(_t(T, V), _t(T, M))),
    ("cdist p", lambda T: T.cdist(_t(T, M), _t(T, M), p=-1)),
    ("block_diag rank", lambda T: T.block_diag(T.zeros(2, 2, 2))),
    ("kthvalue k", lambda T: T.kthvalue(_t(T, M), 5)),
    ("median empty dim", lambda T: T.median(_t(T, M[:0]), 0)),
    ("mode empty dim", lambda T: T.mode(_t(T, M[:0]), 0)),
    ("quantile q number", lambda T: T.quantile(_t(T, M), 1.5)),
    ("quantile q tensor", lambda T: T.quantile(_t(T, M), T.tensor([1.5], dtype=T.float64))),
    ("quantile q dtype", lambda T: T.quantile(_t(T, M).float(), T.tensor([0.5],
                                                                       dtype=T.float64))),
    ("quantile interpolation", lambda T: T.quantile(_t(T, M), 0.5, interpolation="foo")),
    ("quantile integer input", lambda T: T.quantile(_t(T, M).long(), 0.5)),
    ("quantile empty", lambda T: T.quantile(_t(T, M[:0]), 0.5)),
    ("searchsorted shapes", lambda T: T.searchsorted(_t(T, M), _t(T, V))),
    ("searchsorted side", lambda T: T.searchsorted(_t(T, V), _t(T, V), side="foo")),
    ("searchsorted side and right", lambda T: T.searchsorted(_t(T, V), _t(T, V), side="left",
                                                             right=True)),
    ("bucketize boundaries", lambda T: T.bucketize(_t(T, V), _t(T, M))),
    ("histc dtype", lambda T: T.histc(_t(T, M).long())),
    ("histc bins", lambda T: T.histc(_t(T, M), bins=0)),
    ("histc range", lambda T: T.histc(_t(T, M), min=2, max=1)),
    ("bincount negative", lambda T: T.bincount(T.tensor([-1]))),
    ("bincount dtype", lambda T: T.bincount(_t(T, V))),
    ("bincount minlength", lambda T: T.bincount(T.tensor([1]), minlength=-1)),
    ("bincount weights", lambda T: T.bincount(T.tensor([1]), T.ones(2))),
    ("aminmax empty", lambda T: T.aminmax(_t(T, M[:0]))),
    ("std_mean dtype", lambda T: T.std_mean(_t(T, M).long())),
    ("nanmean dtype", lambda T: T.nanmean(_t(T, M).long())),
    ("logcumsumexp dtype", lambda T: T.logcumsumexp(_t(T, M).long(), 0)),
    ("frac integer", lambda T: T.frac(T.tensor([1, 2]))),
    ("logaddexp number", lambda T: T.logaddexp(_t(T, M), 2.0)),
    ("heaviside dtypes", lambda T: T.heaviside(_t(T, M), _t(T, M).float())),
    ("gcd float", lambda T: T.gcd(_t(T, M), _t(T, M))),
    ("is_nonzero many", lambda T: T.is_nonzero(_t(T, M))),
    ("is_nonzero empty", lambda T: T.is_nonzero(_t(T, M[:0]))),
    ("positive bool", lambda T: T.positive(T.tensor([True]))),
    ("take bounds", lambda T: T.take(_t(T, M), T.tensor([9]))),
    ("put count", lambda T: T.put(_t(T, M), T.tensor([0, 1]), T.tensor([1.0],
                                                                        dtype=T.float64))),
    ("select_scatter shape", lambda T: T.select_scatter(_t(T, M), _t(T, V[:2]), 0, 0)),
    ("diagonal_scatter shape", lambda T: T.diagonal_scatter(_t(T, M), _t(T, V[:2]))),
    ("masked_scatter source", lambda T: T.masked_scatter(_t(T, M), T.tensor(M > -9),
                                                         T.zeros(4, dtype=T.float64))),
    ("renorm maxnorm", lambda T: T.renorm(_t(T, M), 2, 0, -1.0)),
    ("range step sign", lambda T: T.range(0, 3, -1)),
    ("polygamma negative n", lambda T: T.polygamma(-1, _t(T, M))),
    ("vander rank", lambda T: T.vander(_t(T, M))),
]


@pytest.mark.parametrize("label,call", ERRORS, ids=[e[0] for e in ERRORS])
def test_errors_match_pytorch(label, call):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        with pytest.raises(Exception) as expected:
            call(torch)
        with pytest.raises(Exception) as actual:
            call(fg)
    assert type(actual.value).__name__ == type(expected.value).__name__, label
    assert str(actual.value) == str(expected.value), label


@pytest.mark.parametrize("name,args,fields", [
    ("median", (M, 1), ("values", "indices")), ("nanmedian", (M, 0), ("values", "indices")),
    ("kthvalue", (M, 2), ("values", "indices")), ("mode", (M,), ("values", "indices")),
    ("cummax", (M, 1), ("values", "indices")), ("cummin", (M, 0), ("values", "indices")),
    ("aminmax", (M,), ("min", "max")), ("frexp", (M,), ("mantissa", "exponent")),
    ("slogdet", (M,), ("sign", "logabsdet")), ("qr", (M,), ("Q", "R")),
    ("svd", (M,), ("U", "S", "V")),
])
def test_named_tuples(name, args, fields):
    """The result types and fields of torch.return_types."""
    got = getattr(fg, name)(fg.tensor(args[0]), *args[1:])
    want = getattr(torch, name)(torch.tensor(args[0]), *args[1:])
    assert type(got).__name__ == type(want).__name__ == name
    for f in fields:
        np.testing.assert_equal(getattr(got, f).shape, tuple(getattr(want, f).shape))
    assert repr(got).startswith(f"torch.return_types.{name}(")


@pytest.mark.parametrize("method,args", [
    ("index_add_", (0, I2, M[:2])), ("index_copy_", (1, I2, M[:, :2])),
    ("index_fill_", (0, I2, 3.0)), ("scatter_reduce_", (1, np.array([[0, 0]] * 3), M[:, :2],
                                                        "amax")),
    ("index_put_", ((I2,), M[0])), ("put_", (np.array([0, 4]), V[:2])),
    ("masked_scatter_", (M > 0, _R.uniform(-1, 1, 9))), ("sinc_", ()), ("frac_", ()),
    ("deg2rad_", ()), ("nan_to_num_", ()), ("copysign_", (-1.0,)), ("xlogy_", (2.0,)),
    ("hypot_", (M,)), ("renorm_", (2, 0, 1.0)), ("polygamma_", (1,)), ("i0_", ()),
])
def test_inplace_methods_return_self(method, args):
    """In-place forms write into the tensor, return it and record the node (grad flows
    to the source, as PyTorch's)."""
    def convert(T, a):
        if isinstance(a, tuple):
            return tuple(convert(T, x) for x in a)
        return T.tensor(a) if isinstance(a, np.ndarray) else a
    results = []
    for T in (torch, fg):
        base = T.tensor(np.abs(M) + 0.5, requires_grad=True)
        x = base * 1
        out = getattr(x, method)(*convert(T, args))
        assert out is x
        out.sum().backward()
        results.append((x.detach().numpy(), base.grad.numpy(), x.grad_fn.name()))
    np.testing.assert_allclose(results[1][0], results[0][0], rtol=1e-9)
    np.testing.assert_allclose(results[1][1], results[0][1], rtol=1e-9, atol=1e-12)


def test_sgn_gradient_is_zero_for_reals():
    x = fg.tensor([-2.0, 0.0, 3.0], requires_grad=True)
    x.sgn().sum().backward()
    np.testing.assert_array_equal(x.grad.numpy(), [0.0, 0.0, 0.0])


def _pairwise(T, a, b):
    """cdist spelled out (PyTorch's cdist has no double backward)."""
    return ((a[:, None, :] - b[None, :, :]) ** 2).sum(-1).sqrt()


@pytest.mark.parametrize("fn", [
    lambda T, x: T.median(x ** 3, 1).values.sum(),
    lambda T, x: (T.cdist(x, x * 2 + 1) if T is fg else _pairwise(T, x, x * 2 + 1)).sum(),
    lambda T, x: T.logcumsumexp(x, 1).sum(), lambda T, x: T.cummax(x ** 3, 0).values.sum(),
    lambda T, x: T.diff(x, 2).pow(2).sum(), lambda T, x: T.kron(x, x).sum(),
    lambda T, x: T.logaddexp(x, x.flip(0)).sum(), lambda T, x: T.det(x),
    lambda T, x: T.scatter_reduce(x, 1, T.tensor([[0, 0]] * 3), x[:, :2] ** 2,
                                  "prod").sum(),
    lambda T, x: T.index_add(x, 0, T.tensor([0, 0]), x[:2] ** 2).pow(2).sum(),
])
def test_second_derivatives_match_pytorch(fn):
    """create_graph=True: the gradient's own gradient (the ops are compositions)."""
    hvps = []
    for T in (torch, fg):
        x = T.tensor(M + 3 * np.eye(3), requires_grad=True)
        (g,) = T.autograd.grad(fn(T, x), x, create_graph=True)
        (h,) = T.autograd.grad((g * T.tensor(np.arange(9.0).reshape(3, 3))).sum(), x)
        hvps.append(h.numpy())
    np.testing.assert_allclose(hvps[1], hvps[0], rtol=1e-7, atol=1e-9)


def test_usable_from_functional_transforms():
    """funcgrad.torch.func.grad runs the ops under funcgrad's own tracing."""
    def f(x):
        return (fg.quantile(x, 0.3) + fg.cummax(x, 0).values.sum() +
                fg.cdist(x, x).sum() + fg.logcumsumexp(x, 1).sum())

    def g(x):
        return (torch.quantile(x, 0.3) + torch.cummax(x, 0).values.sum() +
                torch.cdist(x, x).sum() + torch.logcumsumexp(x, 1).sum())
    got = fg.func.grad(f)(fg.tensor(M)).numpy()
    want = torch.func.grad(g)(torch.tensor(M)).numpy()
    np.testing.assert_allclose(got, want, rtol=1e-9, atol=1e-12)


def test_settings_and_number_info():
    fg.set_num_threads(3)
    assert fg.get_num_threads() == 3
    fg.set_num_interop_threads(2)
    assert fg.get_num_interop_threads() == 2
    before = fg.get_float32_matmul_precision()
    fg.set_float32_matmul_precision("high")
    assert fg.get_float32_matmul_precision() == "high"
    fg.set_float32_matmul_precision(before)
    with pytest.raises(RuntimeError, match="Invalid precision"):
        fg.set_float32_matmul_precision("fast")
    for name in ("float32", "float64", "float16", "bfloat16"):
        got, want = fg.finfo(getattr(fg, name)), torch.finfo(getattr(torch, name))
        for attr in ("bits", "eps", "max", "min", "tiny", "smallest_normal", "resolution",
                     "dtype"):
            assert getattr(got, attr) == getattr(want, attr), (name, attr)
    assert fg.finfo().dtype == torch.finfo().dtype
    for name in ("int8", "int16", "int32", "int64", "uint8"):
        got, want = fg.iinfo(getattr(fg, name)), torch.iinfo(getattr(torch, name))
        assert (got.bits, got.max, got.min, got.dtype) == (want.bits, want.max, want.min,
                                                           want.dtype)
    with pytest.raises(TypeError):
        fg.finfo(fg.int32)
    assert fg.is_inference(fg.ones(2)) is False
    with fg.inference_mode():
        assert fg.is_inference(fg.ones(2)) is True
