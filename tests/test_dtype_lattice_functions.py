"""JAX's type promotion beyond the elementwise primitives: funcgrad.numpy's composite
functions (concatenate, matmul, einsum, polyval, interp, mean, linspace...) called on a grid
of operand dtypes and Python numbers give jax.numpy's result dtypes, with x64 enabled and
disabled. They all decide through `funcgrad._promotion.computed_dtype` (or, for
concatenate, matmul and einsum, the primitives' own promotion in `bind`), so int64 with
float32 is float32 (numpy: float64) and the mean of int8 is float32.

The grid and JAX's answers (``jax.eval_shape``: traced, not run) are those of
tests/test_dtype_lattice.py. Cases where funcgrad differs for a named reason are in
`GAPS` and kept by `test_known_gaps` (strict xfail: a gap that closes must leave).
"""
import importlib.util
import itertools
import pathlib
import sys
import warnings

import numpy as np
import pytest

jax = pytest.importorskip("jax")
import jax.numpy as jnp  # noqa: E402

import funcgrad.numpy as fnp  # noqa: E402


def _lattice_module():
    """tests/test_dtype_lattice.py (tests/ is not a package): its grid and helpers."""
    name = "dtype_lattice_grid"
    if name not in sys.modules:
        path = pathlib.Path(__file__).with_name("test_dtype_lattice.py")
        spec = importlib.util.spec_from_file_location(name, path)
        sys.modules[name] = module = importlib.util.module_from_spec(spec)
        spec.loader.exec_module(module)
    return sys.modules[name]


_grid = _lattice_module()
x64, DTYPES, NUMBERS, jax_dtype = _grid.x64, _grid.DTYPES, _grid.NUMBERS, _grid._jax_dtype
_TRUE_FALSE = [True, False]

# name -> (function of the library namespace ``m`` -> function of the operands, arity)
FUNCTIONS = {
    "concatenate": (lambda m: lambda a, b: m.concatenate([a, b]), 2),
    "stack": (lambda m: lambda a, b: m.stack([a, b]), 2),
    "hstack": (lambda m: lambda a, b: m.hstack([a, b]), 2),
    "vstack": (lambda m: lambda a, b: m.vstack([a, b]), 2),
    "concat": (lambda m: lambda a, b: m.concat([a, b]), 2),
    "append": (lambda m: m.append, 2),
    "where": (lambda m: lambda a, b: m.where(m.array(_TRUE_FALSE), a, b), 2),
    "select": (lambda m: lambda a, b: m.select([m.array(_TRUE_FALSE)], [a], b), 2),
    "matmul": (lambda m: m.matmul, 2),
    "dot": (lambda m: m.dot, 2),
    "vdot": (lambda m: m.vdot, 2),
    "inner": (lambda m: m.inner, 2),
    "outer": (lambda m: m.outer, 2),
    "tensordot": (lambda m: lambda a, b: m.tensordot(a, b, 1), 2),
    "einsum": (lambda m: lambda a, b: m.einsum("i,i->", a, b), 2),
    "kron": (lambda m: m.kron, 2),
    "vecdot": (lambda m: m.vecdot, 2),
    "clip": (lambda m: lambda a, b: m.clip(a, b, None), 2),
    "polyval": (lambda m: m.polyval, 2),
    "polyadd": (lambda m: m.polyadd, 2),
    "polymul": (lambda m: m.polymul, 2),
    "convolve": (lambda m: m.convolve, 2),
    "correlate": (lambda m: m.correlate, 2),
    "interp": (lambda m: lambda a, b: m.interp(a, m.array([0.0, 1.0], "float32"), b), 2),
    "interp_x": (lambda m: lambda a: m.interp(2.0, a, a), 1),
    "diff_prepend": (lambda m: lambda a, b: m.diff(a, prepend=b), 2),
    "linspace": (lambda m: lambda a, b: m.linspace(a, b, 3), 2),
    "average_weights": (lambda m: lambda a, b: m.average(a, weights=b), 2),
    "float_power": (lambda m: m.float_power, 2),
    "trapezoid_x": (lambda m: m.trapezoid, 2),
    **{n: ((lambda n: lambda m: getattr(m, n))(n), 1) for n in (
        "sum", "prod", "mean", "var", "std", "cumsum", "cumprod", "cumulative_sum",
        "average", "median", "max", "ptp", "nanmean", "nansum", "nanstd", "nanvar",
        "nanmedian", "nancumsum", "nanprod", "count_nonzero", "diff", "gradient",
        "trapezoid", "ediff1d", "angle", "polyder", "polyint", "roots", "corrcoef", "cov",
        "histogram")},
    "quantile": (lambda m: lambda a: m.quantile(a, 0.5), 1),
    "percentile": (lambda m: lambda a: m.percentile(a, 50), 1),
    "trace": (lambda m: lambda a: m.trace(m.outer(a, a)), 1),
    "fft": (lambda m: lambda a: m.fft.fft(a), 1),
    "norm": (lambda m: lambda a: m.linalg.norm(a), 1),
    "det": (lambda m: lambda a: m.linalg.det(m.outer(a, a) + m.eye(2, dtype=a.dtype)), 1),
    "polyval_number": (lambda m: lambda a: m.polyval(a, 2.0), 1),
}


def _operands(mode: bool, arity: int) -> list:
    items = DTYPES[mode] + NUMBERS
    if arity == 1:
        return [(i,) for i in items]
    return [p for p in itertools.product(items, repeat=2)
            if not all(isinstance(v, (int, float, complex)) for v in p)]


def _number(v) -> bool:
    return isinstance(v, (int, float, complex))


def _with_number(ops) -> bool:
    return any(_number(v) for v in ops)


def _int_operand(ops) -> bool:
    return any(isinstance(v, str) and v[0] in "biu" for v in ops)


# name -> (the cases, why funcgrad differs)
GAPS: dict = {}


def _ours(fn, operands):
    args = [fnp.asarray(np.ones(2, v)) if isinstance(v, str) else v for v in operands]
    try:
        with warnings.catch_warnings(), np.errstate(all="ignore"):
            warnings.simplefilter("ignore")
            out = fn(*args)
    except Exception as e:  # noqa: BLE001
        return e
    return tuple(o.dtype for o in out) if isinstance(out, (tuple, list)) else out.dtype


def _table(name: str, mode: bool, gaps: bool = False) -> tuple:
    """(mismatches, compared) of one function on the grid without its known gaps
    (``gaps``: on those alone); cases JAX refuses are not compared."""
    make, arity = FUNCTIONS[name]
    in_gap = GAPS.get(name, (lambda ops: False,))[0]
    mismatches, compared = [], 0
    with x64(mode):
        for operands in _operands(mode, arity):
            if in_gap(operands) != gaps:
                continue
            theirs = jax_dtype(make(jnp), operands)
            if isinstance(theirs, Exception):
                continue
            compared += 1
            ours = _ours(make(fnp), operands)
            if isinstance(ours, Exception) or ours != theirs:
                mismatches.append((operands, str(theirs),
                                   repr(ours)[:80] if isinstance(ours, Exception) else str(ours)))
    return mismatches, compared


@pytest.mark.parametrize("mode", [True, False], ids=["x64", "x32"])
@pytest.mark.parametrize("name", sorted(FUNCTIONS))
def test_result_dtype_is_jax(name, mode):
    mismatches, compared = _table(name, mode)
    assert compared > 0 or name in GAPS  # (histogram: all of it)
    assert not mismatches, f"{len(mismatches)} of {compared}: {mismatches[:8]}"


@pytest.mark.parametrize("name", sorted(GAPS))
def test_known_gaps(name):
    """Each named gap still differs (strict: a gap that closes must leave `GAPS`)."""
    mismatches = [m for mode in (True, False) for m in _table(name, mode, gaps=True)[0]]
    if mismatches:
        pytest.xfail(f"{GAPS[name][1]} ({len(mismatches)} cases)")
    pytest.fail(f"the gap of {name} is closed: remove it from GAPS")


def test_int64_with_float32_is_float32():
    """The issue's example: JAX's lattice, not numpy's, in the composite functions."""
    with x64(True):
        i, f = fnp.ones(2, np.int64), fnp.ones(2, np.float32)
        for out in (fnp.concatenate([i, f]), fnp.stack([i, f]), fnp.matmul(i, f),
                    fnp.einsum("i,i->i", i, f), fnp.polyval(i, f),
                    fnp.where(fnp.array(_TRUE_FALSE), i, f)):
            assert out.dtype == np.float32
        assert fnp.mean(fnp.ones(3, np.int32)).dtype == np.float32
        assert fnp.mean(fnp.ones(3, np.int64)).dtype == np.float64
