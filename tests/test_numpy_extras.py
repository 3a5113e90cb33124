"""The functions funcgrad.numpy added for numpy and jax.numpy parity, value by value
against numpy itself (the same expression evaluated with ``m = numpy`` and
``m = funcgrad.numpy``), and the issue-15 input checks (integer axes and shapes, Arrays
given to creation functions)."""
import warnings

import numpy as np
import pytest

import funcgrad
import funcgrad.numpy as fnp
from funcgrad import grad

RNG = np.random.RandomState(0)
A = RNG.randn(4, 5)
B = RNG.randn(4, 5)
V = RNG.randn(7)
W = RNG.rand(7) + 0.1
XP = np.sort(RNG.rand(6))
NANS = A.copy()
NANS[0, 1] = np.nan
NANS[2] = np.nan
P = np.array([1.0, -3.0, 2.0, 5.0])
SQ = RNG.randn(3, 3) + 3 * np.eye(3)
QS = np.array([0.0, 0.1, 0.5, 0.77, 1.0])

# name -> expression in the namespace m (numpy or funcgrad.numpy)
CASES = {
    "concat": lambda m: (m.concat if m is fnp else m.concatenate)([A, B], axis=1),
    "permute_dims": lambda m: m.permute_dims(A[None], (2, 0, 1)),
    "unstack": lambda m: m.stack(m.unstack(A, axis=1)),
    "hsplit": lambda m: m.hsplit(A[:, :4], 2)[1],
    "vsplit": lambda m: m.vsplit(A, [1, 3])[1],
    "dsplit": lambda m: m.dsplit(A.reshape(2, 2, 5), [2])[1],
    "append": lambda m: m.append(A, B[:1], axis=0),
    "insert": lambda m: m.insert(A, [1, 3], -1.0, axis=1),
    "delete": lambda m: m.delete(A, slice(1, 4, 2), axis=1),
    "block": lambda m: m.block([[A, B], [B, A]]),
    "row_stack": lambda m: m.vstack([V, V]),
    "resize": lambda m: m.resize(V, (3, 4)),
    "rollaxis": lambda m: m.rollaxis(A[None], 2, 1),
    "trim_zeros": lambda m: m.trim_zeros(np.array([0.0, 0.0, 1.0, 2.0, 0.0])),
    "select": lambda m: m.select([A < -0.5, A > 0.5], [A, -A], 0.25),
    "choose": lambda m: m.choose(np.array([0, 1, 1, 0]), [V[:4], W[:4]]),
    "compress": lambda m: m.compress([True, False, True], A, axis=1),
    "extract": lambda m: m.extract(A > 0, A),
    "place": lambda m: _in_place(m, "place", A, A > 0, [1.0, 2.0]),
    "put": lambda m: _in_place(m, "put", A, [0, 7, 19], [-1.0, -2.0]),
    "putmask": lambda m: _in_place(m, "putmask", A, A < 0, [5.0, 6.0, 7.0]),
    "fill_diagonal": lambda m: _in_place(m, "fill_diagonal", A, 9.0),
    "put_along_axis": lambda m: _in_place(m, "put_along_axis", A,
                                          np.argsort(A, axis=1)[:, :2], 0.0, 1),
    "apply_along_axis": lambda m: m.apply_along_axis(lambda r: r[::2] * 2, 1, A),
    "apply_over_axes": lambda m: m.apply_over_axes(m.sum, A[None], [0, 2]),
    "piecewise": lambda m: m.piecewise(V, [V < 0, V > 1], [lambda x: -x, lambda x: x ** 2,
                                                            0.5]),
    "isclose": lambda m: m.isclose([1.0, np.inf, np.nan, 2.0], [1 + 1e-9, np.inf, np.nan, 3],
                                   equal_nan=True),
    "diff": lambda m: m.diff(A, n=2, axis=0, prepend=0.0, append=A[:1]),
    "ediff1d": lambda m: m.ediff1d(V, to_end=[9.0], to_begin=-1.0),
    "gradient": lambda m: m.stack(m.gradient(A, 0.5, XP[:5], edge_order=2)),
    "trapezoid": lambda m: m.trapezoid(A, XP[:5]),
    "cross": lambda m: m.cross(A[:, :3], B[:, :3]),
    "convolve": lambda m: m.convolve(V, W[:3], "same"),
    "correlate": lambda m: m.correlate(V, W[:4] + 1j, "full"),
    "interp": lambda m: m.interp(np.linspace(-0.2, 1.2, 9), XP, V[:6], left=-5.0),
    "interp periodic": lambda m: m.interp(np.linspace(0, 9, 9), XP * 3, V[:6], period=2.5),
    "unwrap": lambda m: m.unwrap(np.cumsum(V * 2)),
    "quantile": lambda m: m.quantile(A, QS, axis=1, method="median_unbiased"),
    "quantile lower": lambda m: m.quantile(A, QS, axis=0, method="closest_observation"),
    "percentile": lambda m: m.percentile(A, [10, 90], keepdims=True),
    "median": lambda m: m.median(A[:, :4], axis=1),
    "nanmedian": lambda m: m.nanmedian(NANS, axis=1),
    "nanquantile": lambda m: m.nanquantile(NANS, QS, axis=1, method="hazen"),
    "nanpercentile": lambda m: m.nanpercentile(NANS, 30),
    "cov": lambda m: m.cov(A, fweights=[1, 2, 1, 3, 1], aweights=W[:5]),
    "corrcoef": lambda m: m.corrcoef(A, B),
    "histogram": lambda m: m.histogram(V, 4, weights=W, density=True)[0],
    "histogram2d": lambda m: m.histogram2d(V, W, 3)[0],
    "histogramdd": lambda m: m.histogramdd(A[:, :2], (2, 3))[0],
    "histogram_bin_edges": lambda m: m.histogram_bin_edges(V, "auto"),
    "bincount": lambda m: m.bincount([0, 2, 2, 5], weights=[0.5, 1.0, 2.0, 3.0]),
    "digitize": lambda m: m.digitize(V, [-1.0, 0.0, 1.0]),
    "searchsorted": lambda m: m.searchsorted(XP, V, side="right"),
    "count_nonzero": lambda m: m.count_nonzero(A > 0, axis=1),
    "nansum": lambda m: m.nansum(NANS, axis=1),
    "nanmax": lambda m: m.nanmax(NANS[:2], axis=1),
    "nanargmin": lambda m: m.nanargmin(NANS[:2], axis=1),
    "nanmean": lambda m: m.nanmean(NANS, axis=0),
    "nanstd": lambda m: m.nanstd(NANS, axis=0, ddof=1),
    "nancumprod": lambda m: m.nancumprod(NANS[0]),
    "unique": lambda m: m.unique(np.array([3, 1, 3, 2, 1]), return_counts=True)[1],
    "intersect1d": lambda m: m.intersect1d([1, 3, 4, 3], [3, 1, 2, 1]),
    "union1d": lambda m: m.union1d([-1, 0, 1], [-2, 0, 2]),
    "setdiff1d": lambda m: m.setdiff1d([1, 2, 3, 2, 4], [3, 4, 5]),
    "setxor1d": lambda m: m.setxor1d([1, 2, 3, 2, 4], [2, 3, 5, 7]),
    "isin": lambda m: m.isin(A.round(), [0.0, 1.0]),
    "lexsort": lambda m: m.lexsort((V, V.round())),
    "sort_complex": lambda m: m.sort_complex(V),
    "partition": lambda m: m.partition(V, 3)[3],
    "meshgrid": lambda m: m.stack(m.meshgrid(V[:3], W[:2], indexing="xy")),
    "geomspace": lambda m: m.geomspace(1, 1000, 4),
    "logspace": lambda m: m.logspace(0, 2, 5, base=2.0),
    "linspace": lambda m: m.linspace([0.0, 1.0], 3.0, 4, axis=1),
    "vander": lambda m: m.vander(V[:4], 3, increasing=True),
    "tri": lambda m: m.tri(3, 4, 1),
    "indices": lambda m: m.indices((2, 3)),
    "polyval": lambda m: m.polyval(P, V),
    "polydiv": lambda m: m.polydiv(P, [2.0, 1.0])[1],
    "polyint": lambda m: m.polyint(P, 2, [1.0, 2.0]),
    "polyder": lambda m: m.polyder(P, 2),
    "polyfit": lambda m: m.polyfit(XP, V[:6], 2, w=W[:6]),
    "poly": lambda m: m.poly(SQ),
    "r_": lambda m: m.r_["0,2,0", [1, 2, 3], [4, 5, 6]],
    "c_": lambda m: m.c_[V[:3], W[:3], 1:4],
    "mgrid": lambda m: m.mgrid[0:1:3j, 0:2],
    "ix_": lambda m: m.ix_([1, 3], [0, 2])[1],
    "triu_indices": lambda m: m.triu_indices(4, 1, 5)[1],
    "unravel_index": lambda m: m.unravel_index([22, 41], (7, 6))[1],
    "frexp": lambda m: m.frexp(V)[0],
    "modf": lambda m: m.modf(V * 3)[0],
    "ldexp": lambda m: m.ldexp(V, 3),
    "nextafter": lambda m: m.nextafter(V, 0.0) - V,
    "spacing": lambda m: m.spacing(V),
    "heaviside": lambda m: m.heaviside(np.array([-1.0, 0.0, 2.0]), 0.5),
    "gcd": lambda m: m.gcd([12, 20], 8),
    "lcm": lambda m: m.lcm([4, 6], 10),
    "bitwise_count": lambda m: m.bitwise_count(np.array([7, 255], np.uint8)),
    "i0": lambda m: m.i0(V),
    "nan_to_num": lambda m: m.nan_to_num(np.array([np.nan, np.inf, -np.inf, 1.0]), nan=-1.0),
    "real_if_close": lambda m: m.real_if_close(V + 1e-20j),
    "isposinf": lambda m: m.isposinf(np.array([np.inf, -np.inf, 1.0])),
    "matvec": lambda m: m.matvec(A, V[:5]),
    "vecmat": lambda m: m.vecmat(V[:4], A),
    "vecdot": lambda m: m.vecdot(A, B),
    "lstsq": lambda m: m.linalg.lstsq(A.T, V[:5], rcond=None)[0],
    "matrix_rank": lambda m: m.linalg.matrix_rank(np.stack([SQ, np.ones((3, 3))])),
    "cond": lambda m: m.linalg.cond(SQ, "fro"),
    "tensorinv": lambda m: m.linalg.tensorinv(np.eye(6).reshape(6, 2, 3) + 0.1, 1),
    "tensorsolve": lambda m: m.linalg.tensorsolve(np.eye(6).reshape(2, 3, 6), A[:2, :3]),
    "hfft": lambda m: m.fft.hfft(V[:4] + 1j * W[:4], 7, norm="ortho"),
    "ihfft": lambda m: m.fft.ihfft(V, norm="forward"),
}


def _in_place(m, name, a, *args):
    """numpy's in-place function on a copy, funcgrad's with inplace=False."""
    if m is fnp:
        return getattr(fnp, name)(a, *args, inplace=False)
    out = np.array(a)
    getattr(np, name)(out, *args)
    return out


@pytest.mark.parametrize("name", sorted(CASES))
def test_matches_numpy(name):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", RuntimeWarning)
        want = np.asarray(CASES[name](np))
        got = CASES[name](fnp)
    assert isinstance(got, fnp.ndarray), type(got)
    assert got.shape == want.shape and got.dtype.kind == want.dtype.kind
    np.testing.assert_allclose(np.asarray(got), want, rtol=1e-10, atol=1e-12, equal_nan=True)


def test_eig_matches_numpy_and_is_complex():
    w, v = fnp.linalg.eig(SQ)
    nw, nv = np.linalg.eig(SQ)
    assert w.dtype == np.complex128 and v.dtype == np.complex128
    np.testing.assert_allclose(np.sort_complex(np.asarray(w)), np.sort_complex(nw))
    np.testing.assert_allclose(np.asarray(SQ @ v), np.asarray(v * w), atol=1e-12)
    roots = fnp.roots([1.0, -6.0, 11.0, -6.0, 0.0])
    np.testing.assert_allclose(np.sort_complex(np.asarray(roots)), [0, 1, 2, 3], atol=1e-12)


def test_vectorize_and_ufunc():
    f = fnp.vectorize(lambda a, b: a - b if a > b else a + b)
    assert f([1.0, 4.0], 2.0).tolist() == [3.0, 2.0]
    dot = fnp.vectorize(lambda x, y: fnp.sum(x * y), signature="(n),(n)->()")
    np.testing.assert_allclose(dot(A, B), (A * B).sum(1))
    with pytest.raises(ValueError, match="otypes"):
        f([], 1.0)
    assert fnp.vectorize(lambda x: x, otypes=[float])([]).shape == (0,)
    u = fnp.frompyfunc(lambda a, b: a * b + 1, 2, 1)
    assert u.reduce(fnp.asarray([1.0, 2.0, 3.0])).item() == 10.0
    assert u.outer([1, 2], [3, 4, 5]).shape == (2, 3)
    assert u.at(fnp.zeros(3), [0, 0, 2], 2.0, inplace=False).tolist() == [3.0, 0.0, 1.0]
    assert grad(lambda x: fnp.sum(f(x, 2.0)))(fnp.asarray([1.0, 4.0])).tolist() == [1, 1]


def test_in_place_functions_need_inplace_false():
    for name, args in (("put", ([0], [1.0])), ("place", ([True, False], [1.0])),
                       ("putmask", ([True, False], [1.0])), ("fill_diagonal", (1.0,))):
        with pytest.raises(ValueError, match="inplace=False"):
            getattr(fnp, name)(fnp.zeros((2, 2)) if name == "fill_diagonal" else
                               fnp.zeros(2), *args)


# -- issue 15: no silent truncation of axes and shapes, no internal errors in creation ----

@pytest.mark.parametrize("call", [
    lambda x: fnp.sum(x, axis=1.5), lambda x: fnp.mean(x, axis=(0, 1.0)),
    lambda x: fnp.reshape(x, (3.0, 2)), lambda x: fnp.transpose(x, (1.0, 0)),
    lambda x: fnp.sum(x, axis=True), lambda x: fnp.cumsum(x, axis=1.0),
    lambda x: fnp.expand_dims(x, 0.0), lambda x: fnp.moveaxis(x, 0.5, 1),
    lambda x: fnp.zeros(3.0), lambda x: fnp.ones((2, 2.5)), lambda x: fnp.eye(2.0),
    lambda x: fnp.linspace(0, 1, 3.0), lambda x: fnp.split(x, 3.0),
    lambda x: fnp.roll(x, 1.5, 0), lambda x: fnp.argmax(x, axis=1.0),
    lambda x: fnp.squeeze(x[:1], axis=0.0), lambda x: fnp.diagonal(x, 1.0),
    lambda x: fnp.swapaxes(x, True, 0), lambda x: x.reshape(2.0, 3)])
def test_non_integer_axes_and_shapes_raise_numpys_type_error(call):
    x = fnp.reshape(fnp.arange(6.0), (3, 2))
    with pytest.raises(TypeError, match="integer"):
        call(x)


def test_integer_arrays_are_valid_axes_and_shapes():
    x = fnp.ones((2, 3))
    assert fnp.sum(x, axis=fnp.asarray(1)).shape == (2,)
    assert fnp.zeros(fnp.prod(fnp.asarray((2, 3)))).shape == (6,)
    assert fnp.zeros(fnp.asarray([2, 3])).shape == (2, 3)
    assert fnp.reshape(x, (fnp.asarray(3), 2)).shape == (3, 2)
    assert fnp.sum(x, axis=np.int64(0)).shape == (3,)


def test_creation_functions_take_arrays_differentiably():
    assert fnp.full((3,), fnp.asarray(2.0)).tolist() == [2.0] * 3
    assert fnp.full((2, 2), fnp.asarray([1, 2])).tolist() == [[1, 2], [1, 2]]
    assert grad(lambda v: fnp.sum(fnp.full((3,), v)))(2.0) == 3.0
    assert grad(lambda v: fnp.sum(fnp.full_like(fnp.ones(4), v)))(1.0) == 4.0
    # linspace in both endpoints (the last point is exactly stop)
    d_start = grad(lambda a: fnp.sum(fnp.linspace(a, 3.0, 5)))(1.0)
    d_stop = grad(lambda b: fnp.linspace(1.0, b, 5)[-1])(3.0)
    assert d_start == pytest.approx(2.5) and d_stop == 1.0
    assert fnp.linspace(fnp.asarray(1.0), 3.0, 5).tolist() == np.linspace(1, 3, 5).tolist()
    assert grad(lambda s: fnp.sum(fnp.arange(0.0, 3.0, s)))(1.0) == 3.0
    assert grad(lambda b: fnp.sum(fnp.logspace(0.0, 1.0, 3, base=b)))(10.0) == \
        pytest.approx(sum(k / 2 * 10.0 ** (k / 2 - 1) for k in range(3)))
    np.testing.assert_allclose(fnp.geomspace(fnp.asarray(1.0), 8.0, 4), [1, 2, 4, 8])
    assert fnp.zeros_like(fnp.asarray([1, 2]), shape=(3,)).shape == (3,)


def test_creation_errors_are_clear():
    with pytest.raises(ValueError, match="non-negative"):
        fnp.linspace(0, 1, -1)
    with pytest.raises(TypeError, match="cannot use a value of type 'object'"):
        fnp.asarray(object())
    with pytest.raises(ValueError, match="Geometric sequence cannot include zero"):
        fnp.geomspace(fnp.asarray(0.0), 1.0, 3)


def test_config_is_jaxs_object():
    assert funcgrad.config is funcgrad.config  # one global object, like jax.config
    assert repr(funcgrad.config).startswith("funcgrad.config(")
