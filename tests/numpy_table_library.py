"""The cases of test_numpy_vs_jax.py, part 2: numpy's library beyond the ufuncs and the
core reductions (numpy_table.py): predicates and dtype queries, nan-functions and
statistics, histograms and searching, joining and splitting, selection and the
``inplace=False`` writes, index helpers, sets, polynomials, windows, creation from other
objects, and the utilities. Numpy only; the inputs are numpy_table's, in its few shapes.
"""
from __future__ import annotations

from typing import Any

import numpy as np

from numpy_table import (BATCH, BOOLS, COMPLEX, COMPLEX_VECTOR, EDGE_PAIRS, EDGES, EMPTY,
                         INF, INTS, INTS_POS, M, M_POS, NAN, POS, REGULAR, ROW, SCALAR,
                         SPECIAL_ROWS, SQUARE, TIES, WITH_NAN, WITH_ZERO, binary, c, known,
                         reductions, unary)

TABLE: dict = {}


def _as_bool(name: str, *args: Any, **kwargs: Any) -> Any:
    """A case of a function answering one truth value, read as a Python bool."""
    return c(*args, call=lambda xp, *a: bool(getattr(xp, name)(*a, **kwargs)), eager=True)


# -- predicates and dtype queries (not differentiable; some return Python values) ----------
_CLOSE = M + 1e-9
TABLE.update({
    "isclose": [c(EDGE_PAIRS[0], EDGE_PAIRS[1]), c(M, _CLOSE), c(M, M_POS, 0.5, 1.0),
                c(EDGES, EDGES, equal_nan=True), c(INTS, INTS_POS)],
    # numpy's answers are Python bools, jax.numpy's 0-d arrays: compared as bools
    "allclose": [_as_bool("allclose", M, _CLOSE), _as_bool("allclose", M, M_POS),
                 _as_bool("allclose", EDGES, EDGES, equal_nan=True),
                 _as_bool("allclose", EDGES, EDGES)],
    "array_equal": [_as_bool("array_equal", M, M), _as_bool("array_equal", M, M_POS),
                    _as_bool("array_equal", M, ROW), _as_bool("array_equal", WITH_NAN, WITH_NAN),
                    _as_bool("array_equal", WITH_NAN, WITH_NAN, equal_nan=True)],
    "array_equiv": [_as_bool("array_equiv", M, M),
                    _as_bool("array_equiv", np.ones((2, 3)), np.ones(3)),
                    _as_bool("array_equiv", M, ROW)],
    "iscomplex": [c(COMPLEX_VECTOR), c(M), c(INTS)],
    "isreal": [c(COMPLEX_VECTOR), c(M), c(INTS)],
    "iscomplexobj": [c(COMPLEX, eager=True), c(M, eager=True), c(INTS, eager=True)],
    "isrealobj": [c(COMPLEX, eager=True), c(M, eager=True)],
    "isneginf": [c(EDGES)], "isposinf": [c(EDGES)],
    "isscalar": [c(call=lambda xp: [xp.isscalar(v) for v in (1.5, 2, [1], None)], eager=True),
                 c(SCALAR, call=lambda xp, x: xp.isscalar(x), eager=True)],
    "iterable": [c(call=lambda xp: [xp.iterable(v) for v in (1.5, [1], (2,))], eager=True),
                 c(M, call=lambda xp, x: xp.iterable(x), eager=True)],
    "isdtype": [c(call=lambda xp: [xp.isdtype(t, k) for t in (np.float32, np.int64, np.bool_,
                                                              np.complex128)
                                   for k in ("real floating", "integral", "numeric",
                                             ("bool", "complex floating"))], eager=True)],
    "can_cast": [c(call=lambda xp: [xp.can_cast(f, t) for f in (np.float32, np.int64, np.bool_)
                                    for t in (np.float64, np.int32, np.complex64)],
                   eager=True),
                 c(call=lambda xp: xp.can_cast(np.float64, np.float32, "same_kind"),
                   eager=True)],
    "promote_types": [c(call=lambda xp: [str(xp.promote_types(f, t))
                                         for f in (np.float32, np.int64, np.bool_)
                                         for t in (np.float64, np.int8, np.uint8)],
                        eager=True)],
    "iinfo": [c(call=lambda xp: [(i.min, i.max, i.bits) for i in (xp.iinfo(np.int8),
                                                                   xp.iinfo(np.uint32))],
                eager=True)],
    "count_nonzero": [c(WITH_ZERO), c(WITH_ZERO, 0), c(WITH_ZERO, 1, keepdims=True),
                      c(BOOLS), c(INTS, (0, 1)), c(EMPTY)],
})

# -- elementwise functions numpy_table.py does not have --------------------------------------
TABLE.update({
    "i0": unary(REGULAR, complex_=False),
    "spacing": [c(call=lambda xp: xp.spacing(EDGES)),
                c(call=lambda xp: xp.spacing(np.float32(1.0)))],
    "nextafter": [c(call=lambda xp: xp.nextafter(*EDGE_PAIRS)),
                  c(call=lambda xp: xp.nextafter(M, 0.0))],
    "heaviside": binary(complex_=False),
    "ldexp": [c(REGULAR, np.arange(-8, 8)), c(EDGES, 3), c(M, INTS), c(INTS, INTS_POS)],
    "frexp": [c(EDGES), c(REGULAR * 100), c(INTS)],
    "modf": [c(EDGES), c(REGULAR * 3), c(INTS)],
    "nan_to_num": [c(EDGES), c(EDGES, nan=1.0, posinf=2.0, neginf=-2.0), c(INTS),
                   c(np.array([complex(NAN, INF), complex(-INF, 1.0), 1 + 2j]))],
    "sort_complex": [c(REGULAR), c(COMPLEX_VECTOR), c(np.array([1 + 2j, 1 - 1j, -1 + 0j]))],
    "gcd": [c(INTS, INTS_POS), c(INTS, 4), c(np.array([0, 0, 12]), np.array([0, 5, -18]))],
    "lcm": [c(INTS, INTS_POS), c(INTS, 4), c(np.array([0, 0, 12]), np.array([0, 5, -18]))],
    "bitwise_count": [c(INTS), c(INTS_POS * 1000), c(np.array([0, 255], np.uint8))],
    "bitwise_left_shift": [c(INTS_POS, INTS_POS[::-1].copy()), c(INTS, 2)],
    "bitwise_right_shift": [c(INTS_POS * 64, INTS_POS[::-1].copy()), c(INTS, 1)],
})

# -- nan-functions, order statistics, statistics --------------------------------------------
ALL_NAN_ROW = np.array([[NAN, NAN, NAN], [1.0, NAN, 2.0]])
for _name in ["nansum", "nanprod", "nanmean", "nanmax", "nanmin", "nanstd", "nanvar"]:
    TABLE[_name] = [c(WITH_NAN), c(WITH_NAN, 0), c(WITH_NAN, 1, keepdims=True),
                    c(SPECIAL_ROWS, 1), c(M), c(INTS, 0)]
for _name in ["nanmean", "nanmax", "nanmin", "nanstd", "nanvar"]:
    TABLE[_name] += [c(ALL_NAN_ROW, 1)]
TABLE["nansum"] += [c(ALL_NAN_ROW, 1), c(EMPTY)]
TABLE["nanprod"] += [c(ALL_NAN_ROW, 1)]
TABLE["nanvar"] += [c(WITH_NAN, 1, ddof=1)]
TABLE["nanstd"] += [c(WITH_NAN, 0, ddof=1)]
TABLE["nanargmax"] = TABLE["nanargmin"] = [c(WITH_NAN), c(WITH_NAN, 0), c(SPECIAL_ROWS[:1], 1),
                                           c(M, 1, keepdims=True), c(INTS)]
TABLE["nancumsum"] = TABLE["nancumprod"] = [c(WITH_NAN), c(WITH_NAN, 1), c(SPECIAL_ROWS, 0),
                                            c(INTS, 1)]
for _name in ["median", "nanmedian"]:
    TABLE[_name] = [c(M), c(M, 1), c(TIES, 0, keepdims=True), c(BATCH, (0, 2)), c(INTS, 1),
                    c(SPECIAL_ROWS, 1)]
TABLE["nanmedian"] += [c(ALL_NAN_ROW, 1)]
_Q = np.array([0.0, 0.3, 0.5, 1.0])
for _name, _scale in [("quantile", 1.0), ("percentile", 100.0), ("nanquantile", 1.0),
                      ("nanpercentile", 100.0)]:
    TABLE[_name] = [c(M, 0.3 * _scale), c(M, _Q * _scale, 1), c(TIES, 0.5 * _scale, 0, keepdims=True),
                    c(M, _Q * _scale, method="lower"), c(M, 0.4 * _scale, 1, method="nearest"),
                    c(M, 0.4 * _scale, 1, method="midpoint"), c(BATCH, 0.7 * _scale, (0, 2)),
                    c(INTS, 0.5 * _scale, 1), c(M, np.array(0.25 * _scale), 1)]
    if _name.startswith("nan"):
        TABLE[_name] += [c(WITH_NAN, 0.5 * _scale, 1), c(ALL_NAN_ROW, 0.3 * _scale, 1)]
TABLE["cumulative_sum"] = TABLE["cumulative_prod"] = [
    c(ROW), c(M, axis=1), c(M, axis=0, include_initial=True), c(INTS, axis=1),
    c(M, axis=1, dtype=np.complex128), c(EMPTY, axis=0)]
TABLE.update({
    "cov": [c(M), c(M.T.copy(), rowvar=False), c(M, M_POS), c(ROW), c(M, bias=True),
            c(M, ddof=0), c(M, fweights=np.array([1, 2, 1])), c(M, aweights=ROW),
            c(BATCH[0])],
    "corrcoef": [c(M), c(M, M_POS), c(BATCH[0]), c(M.T.copy(), rowvar=False)],
    "diff": [c(M), c(M, 2), c(M, 1, 0), c(M, prepend=0.0), c(M, append=M_POS[:, :1]),
             c(INTS), c(BOOLS), c(ROW, 0)],
    "ediff1d": [c(M), c(ROW, to_end=np.array([1.0, 2.0])), c(ROW, to_begin=-1.0), c(INTS)],
    "gradient": [c(ROW), c(M), c(M, 2.0), c(M, axis=1), c(M, edge_order=2),
                 c(M, np.array([0.0, 1.0]), np.array([0.0, 0.5, 2.0])), c(BATCH, axis=(0, 2))],
    "trapezoid": [c(ROW), c(M), c(M, dx=0.5), c(M, ROW), c(M, axis=0),
                  c(M, np.array([[0.0, 1.0, 3.0], [0.0, 2.0, 2.5]]))],
    "convolve": [c(ROW, np.array([1.0, -0.5])), c(M[0], ROW, "same"), c(M[0], ROW, "valid"),
                 c(np.arange(5.0), ROW), c(INTS[0], INTS_POS[0])],
    "correlate": [c(ROW, np.array([1.0, -0.5])), c(M[0], ROW, "same"), c(M[0], ROW, "full"),
                  c(COMPLEX_VECTOR[:5], COMPLEX_VECTOR[5:8].copy())],
    "interp": [c(np.array([-1.0, 0.0, 0.25, 1.0, 1.5, 3.0, 4.0]), np.array([0.0, 1.0, 3.0]),
                 np.array([2.0, -1.0, 4.0])),
               c(np.array([0.5, 2.0]), np.array([0.0, 1.0, 3.0]), np.array([2.0, -1.0, 4.0]),
                 left=-9.0, right=9.0),
               c(np.array([-0.5, 0.0, 7.0]), np.array([0.0, 1.0, 3.0]),
                 np.array([2.0, -1.0, 4.0]), period=4.0)],
    "unwrap": [c(np.array([0.0, 3.0, 6.5, 1.0, -3.5, 2.0])), c(M * 3, axis=0),
               c(np.array([0.0, 3.0, 6.5, 1.0]), 4.0), c(np.array([0, 2, 5, 1]), period=4)],
})

# -- histograms, bins and searching ----------------------------------------------------------
_BINS = np.array([-1.0, 0.0, 0.5, 2.0])
_SAMPLE = np.array([-2.0, -1.0, -0.5, 0.0, 0.25, 0.5, 1.0, 2.0, 2.5])
TABLE.update({
    "histogram": [c(_SAMPLE), c(_SAMPLE, 4), c(_SAMPLE, _BINS), c(_SAMPLE, 3, (-1.0, 1.0)),
                  c(_SAMPLE, _BINS, density=True), c(_SAMPLE, 3, weights=np.linspace(0.5, 1.5, 9)),
                  c(_SAMPLE, call=lambda xp, a: xp.histogram(a, 4)[1]),
                  c(_SAMPLE, _BINS, call=lambda xp, a, b: xp.histogram(a, b)[1])],
    "histogram_bin_edges": [c(_SAMPLE), c(_SAMPLE, 4), c(_SAMPLE, 3, (-1.0, 1.0))],
    "histogram2d": [c(_SAMPLE, _SAMPLE[::-1].copy(), 3),
                    c(_SAMPLE, _SAMPLE[::-1].copy(), [_BINS, _BINS]),
                    c(_SAMPLE, _SAMPLE[::-1].copy(), 2, density=True)],
    "histogramdd": [c(np.stack([_SAMPLE, _SAMPLE[::-1]], 1), 3),
                    c(np.stack([_SAMPLE, _SAMPLE[::-1]], 1), (2, 3),
                      weights=np.linspace(0.5, 1.5, 9))],
    # eager: jax.numpy's bincount needs a static length under jit
    "bincount": [c(np.array([0, 1, 1, 3, 2, 1]), eager=True),
                 c(np.array([0, 1, 1, 3]), minlength=6, eager=True),
                 c(np.array([0, 1, 1, 3]), ROW[[0, 1, 2, 0]].copy(), eager=True),
                 c(np.array([0, 1, 1, 3]), length=5, eager=True),
                 c(np.array([0, 1, 1, 3]), ROW[[0, 1, 2, 0]].copy(), length=2, eager=True)],
    "digitize": [c(_SAMPLE, _BINS), c(_SAMPLE, _BINS, True), c(_SAMPLE, _BINS[::-1].copy()),
                 c(INTS, np.array([0, 2, 4]))],
    "searchsorted": [c(_BINS, _SAMPLE), c(_BINS, _SAMPLE, "right"), c(_BINS, 0.5),
                     c(np.array([3.0, 1.0, 2.0]), 2.5, sorter=np.array([1, 2, 0])),
                     c(np.array([1, 3, 5]), INTS)],
})


# -- conventions that legitimately differ (each case is still compared in every other way) --
_INDEX_DTYPE = ("numpy's (and funcgrad's) positions are intp (int64); jax.numpy's "
                "searchsorted and digitize return int32")
_COUNTS = ("numpy's (and funcgrad's) unweighted histogram counts are int64, JAX's float64")
_COUNTS_DD = ("numpy's (and funcgrad's) histogram2d/histogramdd counts are float64, JAX's "
              "integers")
_KNOTS = ("d/dq where q hits an order statistic exactly (q = 0, 0.5 of 3 values): "
          "funcgrad's one-sided slope (the next segment's), JAX 0 (its floor and ceil "
          "positions coincide there)")
_EMPTY_VARIANCE = ("the variance of one or no value with ddof = 1 (or of an all-NaN slice) "
                   "is 0/0 = NaN, and so is funcgrad's derivative; JAX's is 0")
_ALL_NAN = ("an all-NaN slice, where the value is NaN whatever the inputs: funcgrad's "
            "gather sends the cotangent to the slice's first NaN, JAX's sends none")
for _name, _i, _what, _why in [
        *[(n, i, "dtype", _INDEX_DTYPE) for n in ("searchsorted", "digitize")
          for i in range(len(TABLE[n]))],
        *[("histogram", i, "dtype,vjp,jvp", _COUNTS + " (so JAX differentiates them: "
           "the edges' derivatives are compared in the edges-only cases)") for i in range(4)],
        *[(n, 0, "dtype", _COUNTS_DD) for n in ("histogram2d", "histogramdd")],
        ("histogram2d", 1, "dtype", _COUNTS_DD),
        *[(n, 1, "vjp,jvp", _KNOTS) for n in ("quantile", "percentile", "nanquantile",
                                               "nanpercentile")],
        *[(n, 10, "vjp,jvp", _ALL_NAN) for n in ("nanquantile", "nanpercentile")],
        ("nanmedian", 6, "vjp,jvp", _ALL_NAN),
        ("nanvar", 6, "vjp,jvp", _EMPTY_VARIANCE), ("nanvar", 7, "vjp,jvp", _EMPTY_VARIANCE),
        ("nanstd", 6, "vjp,jvp", _EMPTY_VARIANCE), ("nanstd", 7, "vjp,jvp", _EMPTY_VARIANCE),
        ("convolve", 4, "dtype,values", "numpy's convolve of integers is exact in int64; "
         "jax.numpy's computes in floats"),
        ("heaviside", 0, "vjp,jvp", "d/dy at x = NaN (where the value is NaN): funcgrad 0, "
         "JAX passes the cotangent to y (its select falls through to y)"),
        ("ldexp", 1, "vjp,jvp", "d/dx of x 2**i at x = +-0 and +-inf: funcgrad's 2**i; JAX's "
         "bit-level ldexp selects x itself there (slope 1)"),
        ("modf", 0, "values", "numpy's (and funcgrad's) modf(+-inf) is (+-0, +-inf); JAX's "
         "x - trunc(x) is NaN"),
        ("isscalar", 1, "values", "a 0-d array: numpy's isscalar is False (only scalar types "
         "are), JAX's True")]:
    known(TABLE[_name], _i, _what, _why)
