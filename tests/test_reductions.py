"""Reductions and scans: values against numpy (axes, keepdims, dtypes, scalars, empty
arrays), gradient semantics (ties, zeros in products), float32 preservation, errors."""
import numpy as np
import pytest
from hypothesis import given, strategies as st
from hypothesis.extra import numpy as hnp

import funcgrad
import funcgrad.numpy as fnp
from funcgrad import grad
from funcgrad.test_util import check_grads

RNG = np.random.RandomState(0)
X = RNG.randn(2, 3, 4)
REDUCTIONS = ["sum", "mean", "prod", "max", "min", "amax", "amin", "std", "var", "ptp",
              "all", "any"]


def same(actual, expected):
    actual = np.asarray(actual)
    assert actual.shape == np.shape(expected)
    assert actual.dtype == np.asarray(expected).dtype
    np.testing.assert_allclose(actual, expected, rtol=1e-6, atol=1e-12)


@pytest.mark.parametrize("name", REDUCTIONS)
@pytest.mark.parametrize("axis", [None, 0, -1, (0, 2), (-1, 1), ()])
@pytest.mark.parametrize("keepdims", [False, True])
def test_reduction_values(name, axis, keepdims):
    same(getattr(fnp, name)(X, axis=axis, keepdims=keepdims),
         getattr(np, name)(X, axis=axis, keepdims=keepdims))


@given(data=st.data())
def test_reduction_values_on_random_shapes(data):
    shape = data.draw(hnp.array_shapes(min_dims=0, max_dims=3, min_side=0, max_side=3))
    axes = tuple(i for i in range(len(shape)) if data.draw(st.booleans()))
    keepdims = data.draw(st.booleans())
    x = np.random.RandomState(1).randn(*shape)
    for name in ("sum", "prod", "all", "any"):
        same(getattr(fnp, name)(x, axis=axes, keepdims=keepdims),
             getattr(np, name)(x, axis=axes, keepdims=keepdims))
    nonempty = tuple(a for a in axes if shape[a])
    same(fnp.max(x, axis=nonempty, keepdims=keepdims),
         np.max(x, axis=nonempty, keepdims=keepdims))


@pytest.mark.parametrize("name", ["cumsum", "cumprod"])
@pytest.mark.parametrize("axis", [None, 0, 1, -1])
def test_scan_values(name, axis):
    same(getattr(fnp, name)(X, axis=axis), getattr(np, name)(X, axis=axis))


@pytest.mark.parametrize("name", ["argmax", "argmin"])
@pytest.mark.parametrize("axis", [None, 0, -1])
@pytest.mark.parametrize("keepdims", [False, True])
def test_arg_values(name, axis, keepdims):
    same(getattr(fnp, name)(X, axis=axis, keepdims=keepdims),
         getattr(np, name)(X, axis=axis, keepdims=keepdims))


def test_scalars_and_empty_arrays():
    same(fnp.sum(3.0), np.sum(3.0))
    same(fnp.max(np.float64(2.0)), np.float64(2.0))
    same(fnp.cumsum(2.0), np.cumsum(2.0))
    empty = np.zeros((0, 3))
    for name in ("sum", "prod", "all", "any"):
        same(getattr(fnp, name)(empty, axis=0), getattr(np, name)(empty, axis=0))
    same(fnp.max(empty, axis=1), np.max(empty, axis=1))
    same(fnp.cumprod(empty, axis=0), np.cumprod(empty, axis=0))
    with pytest.raises(ValueError, match="zero-size"):
        fnp.max(empty)


def test_integer_and_boolean_dtypes_follow_numpy():
    """numpy's values; the dtypes are jax.numpy's where numpy's differ: the mean and
    variance of int32 are float32, cumulative sums keep int32 (see
    tests/test_dtype_lattice_functions.py)."""
    xi = np.arange(6, dtype=np.int32).reshape(2, 3)
    for name in ("sum", "prod", "max"):
        same(getattr(fnp, name)(xi), getattr(np, name)(xi))
    for name, dtype in (("mean", np.float32), ("var", np.float32), ("cumsum", np.int32),
                        ("cumprod", np.int32)):
        same(getattr(fnp, name)(xi), getattr(np, name)(xi).astype(dtype))
    same(fnp.sum(xi > 2), np.sum(xi > 2))
    same(fnp.sum(xi, dtype=np.float32), np.sum(xi, dtype=np.float32))
    same(fnp.mean(xi, axis=0, dtype=np.float32), np.mean(xi, axis=0, dtype=np.float32))


def test_float32_stays_float32_forward_and_backward():
    x = X.astype(np.float32)
    for name in ("sum", "mean", "prod", "max", "min", "std", "var", "cumsum", "cumprod"):
        f = getattr(fnp, name)
        assert f(x, axis=1).dtype == np.float32, name
        g = grad(lambda v: fnp.sum(f(v, axis=1)))(fnp.asarray(x))
        assert g.dtype == np.float32, name


def test_var_std_ddof_and_average():
    same(fnp.var(X, axis=0, ddof=1), np.var(X, axis=0, ddof=1))
    same(fnp.std(X, axis=(0, 1), ddof=2, keepdims=True),
         np.std(X, axis=(0, 1), ddof=2, keepdims=True))
    w = [1.0, 2.0, 3.0]
    same(fnp.average(X, axis=1, weights=w), np.average(X, axis=1, weights=w))
    for a, b in zip(fnp.average(X, axis=1, weights=w, returned=True),
                    np.average(X, axis=1, weights=w, returned=True)):
        same(a, b)
    same(fnp.average(X), np.average(X))
    with pytest.raises(ValueError, match="weights"):
        fnp.average(X, weights=w)


def test_complex_variance_is_real():
    z = X + 1j * X[::-1]
    same(fnp.var(z, axis=1), np.var(z, axis=1))
    check_grads(lambda v: fnp.std(v, axis=0), (z,), modes=("fwd", "rev"))


# -- gradient semantics ----------------------------------------------------------------

def test_max_ties_split_the_gradient_equally():
    x = fnp.asarray([1.0, 3.0, 3.0, 2.0])
    np.testing.assert_allclose(np.asarray(grad(fnp.max)(x)), [0, 0.5, 0.5, 0])
    np.testing.assert_allclose(np.asarray(grad(fnp.min)(fnp.asarray([1.0, 1.0, 1.0]))),
                               [1 / 3] * 3)
    m = fnp.asarray([[2.0, 2.0], [1.0, 5.0]])
    np.testing.assert_allclose(np.asarray(grad(lambda v: fnp.sum(fnp.max(v, axis=1)))(m)),
                               [[0.5, 0.5], [0, 1]])
    _, tangent = funcgrad.jvp(fnp.max, (x,), (fnp.asarray([0.0, 1.0, 3.0, 0.0]),))
    assert float(tangent) == 2.0


@pytest.mark.parametrize("x", [[2.0, 0.0, 3.0, 4.0], [0.0, 5.0, 0.0], [0.0], []])
def test_prod_gradient_with_zeros(x):
    x = np.asarray(x)
    expected = [np.prod(np.delete(x, i)) for i in range(x.size)]
    np.testing.assert_allclose(np.asarray(grad(fnp.prod)(fnp.asarray(x))), expected)
    check_grads(fnp.prod, (x,), modes=("fwd", "rev"))


def test_prod_gradient_with_zeros_over_axes():
    x = X.copy()
    x[0, 1, 2] = 0.0
    x[1, :, 3] = 0.0
    check_grads(lambda v: fnp.prod(v, axis=(0, 2)), (x,), modes=("fwd", "rev"))
    check_grads(lambda v: fnp.prod(v, axis=1, keepdims=True), (x,), modes=("fwd", "rev"))


def test_cumprod_gradient_with_zeros():
    x = np.array([2.0, 0.0, 3.0, 0.0, 5.0])
    g = grad(lambda v: fnp.sum(fnp.cumprod(v)))(fnp.asarray(x))
    # d/dx_k sum_i prod_{j<=i} x_j = sum_{i>=k} prod_{j<=i, j!=k} x_j
    expected = [sum(np.prod(np.delete(x[:i + 1], k)) for i in range(k, x.size))
                for k in range(x.size)]
    np.testing.assert_allclose(np.asarray(g), expected)
    check_grads(lambda v: fnp.cumprod(v, axis=1), (np.where(X > 0.5, 0.0, X),),
                modes=("fwd", "rev"), order=3)


def test_scan_and_reduction_gradients_to_second_order():
    for f in (lambda v: fnp.cumsum(v, axis=-1), lambda v: fnp.mean(v, axis=(0, 2)),
              lambda v: fnp.var(v, axis=1, ddof=1), lambda v: fnp.std(v),
              lambda v: fnp.ptp(v, axis=0), lambda v: fnp.cumsum(v),
              lambda v: fnp.average(v, axis=1, weights=[1.0, 2.0, 3.0])):
        check_grads(f, (X,), modes=("fwd", "rev"))


def test_argmax_any_all_are_not_differentiable_but_usable():
    x = fnp.asarray([1.0, 4.0, 2.0])
    g = grad(lambda v: v[fnp.argmax(v)] * fnp.sum(fnp.any(v > 3)))(x)
    np.testing.assert_allclose(np.asarray(g), [0.0, 1.0, 0.0])


# -- errors --------------------------------------------------------------------------------

@pytest.mark.parametrize("name", ["sum", "max", "mean", "argmax", "cumsum", "all"])
def test_bad_axis_names_the_axis(name):
    with pytest.raises(fnp.AxisError, match="axis 3 is out of bounds for array of "
                                            "dimension 3"):
        getattr(fnp, name)(X, axis=3)


def test_repeated_axis_is_an_error():
    with pytest.raises(ValueError, match="repeated axis"):
        fnp.sum(X, axis=(1, -2))


def test_methods_call_the_namespace():
    x = fnp.asarray(X)
    same(x.sum(axis=1), X.sum(axis=1))
    same(x.max(0), X.max(0))
    same(x.cumprod(1), X.cumprod(1))
    same(np.sum(x, axis=0), X.sum(axis=0))


@pytest.mark.parametrize("dtype", ["<i8", ">i8", "i4", "i1", "u1", "<u2"])
def test_nll_loss_kernel_checks_labels_of_every_integer_dtype(dtype):
    """The kernel's one-reduction range check (labels read as unsigned) finds a negative
    label, the most negative one, and one past the classes, whatever the byte order; the
    loss of good labels (strided ones too) is the mean of their -logp."""
    from funcgrad.primitives.kernels import reductions as kernels
    logp = np.log(np.full((4, 3), 1 / 3)) + np.arange(3)
    labels = np.array([[0, 2], [1, 1], [2, 0], [1, 2]], dtype=dtype)[:, 1]  # strided
    want = -np.mean(logp[np.arange(4), labels.astype(int)])
    np.testing.assert_allclose(kernels.nll_loss(logp, labels, 1.0, 1, "mean"), want)
    bad = [3, np.iinfo(dtype).max] + ([-1, np.iinfo(dtype).min] if np.dtype(dtype).kind == "i" else [])
    for label in bad:
        with pytest.raises(IndexError, match=f"Target {label} is out of bounds"):
            kernels.nll_loss(logp, np.array([0, label, 1, 1], dtype=dtype), 1.0, 1, "mean")


@pytest.mark.parametrize("shape", [(128, 10), (40, 32), (8, 10), (64, 33)])
def test_logsumexp_kernel_of_short_rows_is_numpy_max_bit_for_bit(shape):
    """A batch of short rows takes its max through a transposed copy: the same bits as
    numpy's row-wise reduction (signed zeros, infinities, NaN rows included), and the
    log-softmax built on it numpy's formula's."""
    from funcgrad.primitives.kernels import reductions as kernels
    z = np.random.RandomState(0).randn(*shape).astype(np.float32)
    z[1], z[2], z[3, 0], z[4] = 0.0, -0.0, np.nan, -np.inf
    z[5, 1] = np.inf
    with np.errstate(all="ignore"):
        got = kernels.logsumexp(z, (1,), True)
        peak = np.max(z, axis=1, keepdims=True)
        peak = np.where(np.isfinite(peak), peak, 0)
        want = np.log(np.sum(np.exp(z - peak), axis=1, keepdims=True)) + peak
    assert got.shape == want.shape and got.tobytes() == want.tobytes()
    rows = np.random.RandomState(1).randn(*shape).astype(np.float32)
    lse = np.log(np.sum(np.exp(rows - rows.max(1, keepdims=True)), 1, keepdims=True))
    assert kernels.log_softmax(rows, (1,)).tobytes() == (
        rows - (lse + rows.max(1, keepdims=True))).tobytes()
