"""64-bit dtypes requested explicitly with ``jax_enable_x64`` disabled are truncated to 32
bits with JAX's UserWarning, pointing at the caller's line (`funcgrad._config.
requested_dtype`): each creation, range, cast and reduction function gives jax.numpy's
dtype and warning text in x32 mode; with x64 on nothing warns and the request is kept.
funcgrad's own requests in an existing Array's dtype (the transforms' cotangents of Arrays
made before the flag changed) are honoured and silent."""
import importlib.util
import pathlib
import sys
import warnings

import numpy as np
import pytest

jax = pytest.importorskip("jax")
import jax.numpy as jnp  # noqa: E402

import funcgrad  # noqa: E402
import funcgrad.numpy as fnp  # noqa: E402
from funcgrad import grad, jacfwd, jacrev, jvp, lax  # noqa: E402


def _x64():
    """tests/test_dtype_lattice.py's ``x64`` block (tests/ is not a package)."""
    name = "dtype_lattice_grid"
    if name not in sys.modules:
        path = pathlib.Path(__file__).with_name("test_dtype_lattice.py")
        spec = importlib.util.spec_from_file_location(name, path)
        sys.modules[name] = module = importlib.util.module_from_spec(spec)
        spec.loader.exec_module(module)
    return sys.modules[name].x64


x64 = _x64()
F64 = "float64"
# name -> call of the library namespace m with a one-vector x (made in the block)
CALLS = {
    "array": lambda m, x: m.array(1, dtype=np.int64),
    "array_of_array": lambda m, x: m.array(x, dtype=F64),
    "asarray": lambda m, x: m.asarray([1.0, 2.0], dtype=F64),
    "asarray_of_array": lambda m, x: m.asarray(x, dtype=F64),
    "zeros": lambda m, x: m.zeros(3, F64),
    "zeros_complex": lambda m, x: m.zeros(2, np.complex128),
    "zeros_uint": lambda m, x: m.zeros(2, np.uint64),
    "ones": lambda m, x: m.ones(3, F64),
    "empty": lambda m, x: m.empty(3, F64),
    "full": lambda m, x: m.full(3, 1.0, F64),
    "eye": lambda m, x: m.eye(2, dtype=F64),
    "identity": lambda m, x: m.identity(2, dtype=F64),
    "tri": lambda m, x: m.tri(2, dtype=F64),
    "zeros_like": lambda m, x: m.zeros_like(x, dtype=F64),
    "ones_like": lambda m, x: m.ones_like(x, dtype=F64),
    "full_like": lambda m, x: m.full_like(x, 2, dtype=F64),
    "astype": lambda m, x: m.astype(x, F64),
    "astype_method": lambda m, x: x.astype(F64),
    "arange": lambda m, x: m.arange(3, dtype=F64),
    "arange_int": lambda m, x: m.arange(3, dtype=np.int64),
    "linspace": lambda m, x: m.linspace(0, 1, 3, dtype=F64),
    "logspace": lambda m, x: m.logspace(0, 1, 3, dtype=F64),
    "geomspace": lambda m, x: m.geomspace(1, 2, 3, dtype=F64),
    "indices": lambda m, x: m.indices((2,), dtype=np.int64),
    "sum": lambda m, x: m.sum(x, dtype=F64),
    "prod": lambda m, x: m.prod(x, dtype=F64),
    "mean": lambda m, x: m.mean(x, dtype=F64),
    "var": lambda m, x: m.var(x, dtype=F64),
    "cumsum": lambda m, x: m.cumsum(x, dtype=F64),
    "cumprod": lambda m, x: m.cumprod(x, dtype=F64),
}
# funcgrad's empty_like names itself; jax.numpy's goes through ones_like and names that
RENAMED = {"empty_like": "ones_like"}
# requests JAX answers silently: a numpy array's own dtype, the Python types' defaults
SILENT = {
    "asarray_numpy": lambda m, x: m.asarray(np.ones(2)),
    "zeros_int": lambda m, x: m.zeros(2, int),
    "zeros_float": lambda m, x: m.zeros(2, float),
    "zeros_complex_type": lambda m, x: m.zeros(2, complex),
    "arange_float": lambda m, x: m.arange(3, dtype=float),
    "indices_default": lambda m, x: m.indices((2,)),
}


def _run(call, m, enabled):
    """(dtype, [(message, file name)]) of ``call`` on library m with x64 ``enabled``."""
    with x64(enabled), warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        x = m.ones(2, "float32")
        out = call(m, x)
    return np.dtype(out.dtype), [(str(w.message), pathlib.Path(w.filename).name,
                                  w.category) for w in caught]


@pytest.mark.parametrize("name", list(CALLS))
def test_truncated_with_jaxs_warning_pointing_at_the_caller(name):
    got_dtype, got = _run(CALLS[name], fnp, False)
    want_dtype, want = _run(CALLS[name], jnp, False)
    assert got_dtype == want_dtype
    assert len(got) == 1, got
    message, filename, category = got[0]
    assert category is UserWarning and filename == pathlib.Path(__file__).name
    # JAX warns once more from some composites (its sum's convert_element_type): its first
    assert message == want[0][0]


def test_empty_like_names_itself():
    _, got = _run(lambda m, x: m.empty_like(x, dtype=F64), fnp, False)
    _, want = _run(lambda m, x: m.empty_like(x, dtype=F64), jnp, False)
    assert got[0][0] == want[0][0].replace(RENAMED["empty_like"], "empty_like")


@pytest.mark.parametrize("name", list(SILENT))
def test_silent_canonicalization(name):
    got_dtype, got = _run(SILENT[name], fnp, False)
    want_dtype, want = _run(SILENT[name], jnp, False)
    assert (got_dtype, got, want) == (want_dtype, [], [])


@pytest.mark.parametrize("name", list(CALLS))
def test_x64_on_keeps_the_request_silently(name):
    got_dtype, got = _run(CALLS[name], fnp, True)
    want_dtype, _ = _run(CALLS[name], jnp, True)
    assert (got_dtype, got) == (want_dtype, [])


TRANSFORMS = {
    "grad": lambda x: grad(lambda v: fnp.sum(fnp.sin(v) * fnp.mean(v)))(x),
    "jacrev": lambda x: jacrev(fnp.sin)(x),
    "jacfwd": lambda x: jacfwd(fnp.sin)(x),
    "jvp": lambda x: jvp(fnp.cumsum, (x,), (fnp.ones_like(x),))[1],
    "scan": lambda x: grad(lambda v: lax.scan(lambda c, e: (c + e * c, c), v[0], v)[0])(x),
    "where": lambda x: grad(lambda v: fnp.sum(fnp.where(v > 0.5, v, 0.0)))(x),
    "reductions": lambda x: grad(lambda v: fnp.std(v) + fnp.var(v) + fnp.prod(v))(x),
    "cond": lambda x: grad(lambda v: lax.cond(v[0] > 0, fnp.sum, lambda w: fnp.sum(2 * w),
                                              v))(x),
}


@pytest.mark.parametrize("name", list(TRANSFORMS))
def test_arrays_made_before_the_flag_changed_keep_64_bit_gradients_silently(name):
    x = fnp.linspace(0.0, 1.0, 3)
    assert x.dtype == np.float64
    with funcgrad.config.enable_x64(False), warnings.catch_warnings():
        warnings.simplefilter("error")
        out = TRANSFORMS[name](x)
    assert out.dtype == np.float64
