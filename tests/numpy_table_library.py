"""The cases of test_numpy_vs_jax.py, part 2: numpy's library beyond the ufuncs and the
core reductions (numpy_table.py): predicates and dtype queries, nan-functions and
statistics, histograms and searching, joining and splitting, selection and the
``inplace=False`` writes, index helpers, sets, polynomials, windows, creation from other
objects, and the utilities. Numpy only; the inputs are numpy_table's, in its few shapes.
"""
from __future__ import annotations

import io
import os
import tempfile
from typing import Any

import numpy as np

from numpy_table import (BATCH, BOOLS, COMPLEX, COMPLEX_VECTOR, EDGE_PAIRS, EDGES, EMPTY,
                         INF, INTS, INTS_POS, M, M_POS, NAN, POS, REGULAR, ROW, SCALAR, UNIT,
                         SPECIAL_ROWS, SQUARE, TIES, WITH_NAN, WITH_ZERO, binary, c, known,
                         reductions, unary)

TABLE: dict = {}
# names compared against numpy (or scipy) instead of JAX, and why: values and dtypes only
REFERENCE: dict = {}


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


# -- joining, splitting, reshaping -----------------------------------------------------------
TABLE.update({
    "append": [c(M, M_POS), c(M, M_POS, 0), c(M, ROW[None], axis=0), c(ROW, 2.5), c(INTS, M)],
    "block": [c(M, M_POS, call=lambda xp, x, y: xp.block([x, y])),
              c(M, M_POS, call=lambda xp, x, y: xp.block([[x], [y]])),
              c(SQUARE, M, call=lambda xp, a, b: xp.block([[a[:2, :2], b[:, :1]]])),
              c(ROW, call=lambda xp, x: xp.block([x, 1.0]))],
    "concat": [c(M, M_POS, call=lambda xp, x, y: xp.concat([x, y])),
               c(M, M_POS, call=lambda xp, x, y: xp.concat((x, y), axis=1)),
               c(M, INTS, call=lambda xp, x, y: xp.concat([x, y], axis=None))],
    "delete": [c(M, 1), c(M, 1, 1), c(M, np.array([0, 2]), 1), c(BATCH, slice(0, 2), 2),
               c(M, np.array([True, False, True]), 1)],
    "insert": [c(M, 1, 2.5), c(M, 1, ROW, 0), c(M, np.array([0, 2]), M_POS[:, :2].copy(), 1),
               c(ROW, 1, 7.0), c(INTS, 2, 9, 1)],
    "hsplit": [c(M, 3), c(BATCH, [1, 2])], "vsplit": [c(M, 2), c(BATCH, [1])],
    "dsplit": [c(BATCH, 2), c(BATCH, [1, 3])],
    "permute_dims": [c(BATCH, (2, 0, 1)), c(M, (1, 0))],
    "rollaxis": [c(BATCH, 2), c(BATCH, 0, 3), c(BATCH, -1, 1)],
    "resize": [c(M, (3, 4)), c(M, (2, 2)), c(ROW, 7), c(INTS, (1, 8))],
    "unstack": [c(M), c(BATCH, axis=2)],
    "trim_zeros": [c(np.array([0.0, 0.0, 1.5, 0.0, 2.0, 0.0])),
                   c(np.array([0.0, 1.5, 0.0]), "f"), c(np.array([0, 0, 3, 0]), "b")],
    "copy": [c(M), c(INTS), c(SCALAR)],
})

# -- selection, and numpy's in-place writes as functions (inplace=False in both) ------------
TABLE.update({
    "compress": [c(np.array([True, False, True]), M, 1), c(np.array([False, True]), M, 0),
                 c(np.array([True, False, True, True]), M)],
    "extract": [c(BOOLS, M), c(WITH_ZERO, M)],
    "choose": [c(np.array([[0, 1, 1], [1, 0, 1]]), [M, M_POS]),
               c(np.array([0, 2, 1]), [ROW, ROW * 2, ROW * 3]),
               c(np.array([[0, 3, 1], [1, -1, 0]]), [M, M_POS], mode="clip"),
               c(np.array([[0, 3, 1], [1, -1, 0]]), [M, M_POS], mode="wrap")],
    "select": [c(M, M_POS, call=lambda xp, x, y: xp.select([x > 0, y > 1], [x, y])),
               c(M, M_POS, call=lambda xp, x, y: xp.select([x > 0, x < -1], [x, y], -1.0)),
               c(M, call=lambda xp, x: xp.select([x > 0], [x * 2], x))],
    "piecewise": [c(M, call=lambda xp, x: xp.piecewise(x, [x < 0, x >= 0], [lambda v: -v,
                                                                           lambda v: v ** 2])),
                  c(M, call=lambda xp, x: xp.piecewise(x, [x < -1], [0.0, lambda v: v * 3]))],
    "place": [c(M, BOOLS, np.array([9.0, 8.0]), inplace=False),
              c(M, BOOLS, np.array([1.0, 2.0, 3.0, 4.0]), inplace=False)],
    "put": [c(M, np.array([0, 4]), np.array([9.0, 8.0]), inplace=False),
            c(M, np.array([1, 7]), 5.0, mode="clip", inplace=False),
            c(M, np.array([-1, 8]), np.array([1.0, 2.0]), mode="wrap", inplace=False)],
    "put_along_axis": [c(M, np.array([[0], [2]]), np.array([[9.0], [8.0]]), 1, inplace=False),
                       c(M, np.array([[1, 0, 1]]), 0.5, 0, inplace=False)],
    "fill_diagonal": [c(SQUARE, 2.0, inplace=False), c(M, np.array([1.0, 2.0]), inplace=False),
                      c(np.zeros((5, 2)), 1.0, True, inplace=False)],
    "apply_along_axis": [c(M, call=lambda xp, x: xp.apply_along_axis(lambda r: r * r[0], 1, x)),
                         c(BATCH, call=lambda xp, x: xp.apply_along_axis(xp.sum, 2, x))],
    "apply_over_axes": [c(BATCH, call=lambda xp, x: xp.apply_over_axes(xp.sum, x, [0, 2])),
                        c(M, call=lambda xp, x: xp.apply_over_axes(xp.mean, x, [1])),
                        c(M, call=lambda xp, x: xp.apply_over_axes(xp.mean, x, 1))],
    # partition orders differently inside the two sides: compared by what a partition fixes
    "partition": [c(M, call=lambda xp, x: (xp.partition(x, 1)[:, 1],
                                           xp.sort(xp.partition(x, 1), axis=1))),
                  c(TIES, call=lambda xp, x: xp.partition(x, 0, axis=0)[0]),
                  c(INTS, call=lambda xp, x: xp.sort(xp.partition(x, 2)))],
    "argpartition": [c(M, call=lambda xp, x: xp.take_along_axis(x, xp.argpartition(x, 1),
                                                                1)[:, 1]),
                     c(INTS, call=lambda xp, x: xp.sort(xp.argpartition(x, 0, axis=0), 0)[0])],
    "lexsort": [c(call=lambda xp: xp.lexsort((np.array([1, 1, 0, 0]), np.array([2, 1, 2, 1])))),
                c(M, call=lambda xp, x: xp.lexsort(x)), c(TIES, call=lambda xp, x: xp.lexsort(x))],
})

# -- index helpers ----------------------------------------------------------------------------
TABLE.update({
    "indices": [c(call=lambda xp: xp.indices((2, 3))),
                c(call=lambda xp: xp.indices((2, 3), sparse=True))],
    "ix_": [c(call=lambda xp: xp.ix_(np.array([0, 1]), np.array([2, 0, 1]))),
            c(call=lambda xp: xp.ix_(np.array([True, False, True])))],
    "meshgrid": [c(ROW, M[0], call=lambda xp, x, y: xp.meshgrid(x, y)),
                 c(ROW, M[0], call=lambda xp, x, y: xp.meshgrid(x, y, indexing="ij")),
                 c(ROW, M[0], call=lambda xp, x, y: xp.meshgrid(x, y, sparse=True))],
    "diag_indices": [c(call=lambda xp: xp.diag_indices(3)),
                     c(call=lambda xp: xp.diag_indices(2, 3))],
    "diag_indices_from": [c(SQUARE, call=lambda xp, a: xp.diag_indices_from(a))],
    "tril_indices": [c(call=lambda xp: xp.tril_indices(3)),
                     c(call=lambda xp: xp.tril_indices(3, 1, 4))],
    "triu_indices": [c(call=lambda xp: xp.triu_indices(3)),
                     c(call=lambda xp: xp.triu_indices(3, -1, 2))],
    "tril_indices_from": [c(SQUARE, call=lambda xp, a: xp.tril_indices_from(a)),
                          c(M, call=lambda xp, a: xp.tril_indices_from(a, 1))],
    "triu_indices_from": [c(SQUARE, call=lambda xp, a: xp.triu_indices_from(a, 1))],
    "mask_indices": [c(call=lambda xp: xp.mask_indices(3, xp.triu)),
                     c(call=lambda xp: xp.mask_indices(3, xp.tril, -1))],
    "ravel_multi_index": [c(call=lambda xp: xp.ravel_multi_index(
        (np.array([0, 1, 1]), np.array([2, 0, 1])), (2, 3))),
        c(call=lambda xp: xp.ravel_multi_index((np.array([3, -1]), np.array([1, 5])), (2, 3),
                                               mode="wrap")),
        c(call=lambda xp: xp.ravel_multi_index((np.array([0, 1]), np.array([1, 2])), (2, 3),
                                               order="F"))],
    "unravel_index": [c(call=lambda xp: xp.unravel_index(np.array([0, 4, 5]), (2, 3))),
                      c(call=lambda xp: xp.unravel_index(np.array([1, 4]), (2, 3), order="F"))],
    "tri": [c(call=lambda xp: xp.tri(3)), c(call=lambda xp: xp.tri(2, 4, 1)),
            c(call=lambda xp: xp.tri(3, dtype=np.int32))],
    "vander": [c(ROW), c(ROW, 4), c(ROW, increasing=True), c(INTS[0])],
    "packbits": [c(BOOLS), c(BOOLS, axis=1), c(np.array([1, 0, 1, 1, 0, 0, 0, 1, 1], np.uint8)),
                 c(BOOLS, bitorder="little")],
    "unpackbits": [c(np.array([5, 255, 0], np.uint8)), c(np.array([[5], [3]], np.uint8), 1),
                   c(np.array([5, 255], np.uint8), count=10),
                   c(np.array([5, 255], np.uint8), bitorder="little")],
})

# -- sets -------------------------------------------------------------------------------------
_SET_A = np.array([3.0, 1.0, 2.0, 3.0, -1.0, 1.0])
_SET_B = np.array([1.0, 4.0, 3.0, 5.0])
TABLE.update({
    "unique": [c(_SET_A), c(TIES), c(TIES, axis=1), c(INTS),
               c(_SET_A, call=lambda xp, a: xp.unique(a, return_index=True,
                                                      return_inverse=True,
                                                      return_counts=True)),
               c(np.array([[1.0, 2.0], [1.0, 2.0], [0.0, 3.0]]), axis=0)],
    "unique_values": [c(_SET_A), c(INTS)],
    "unique_counts": [c(_SET_A), c(INTS)],
    "unique_inverse": [c(_SET_A), c(TIES)],
    "unique_all": [c(_SET_A), c(INTS)],
    "intersect1d": [c(_SET_A, _SET_B), c(INTS, INTS_POS),
                    c(_SET_A, _SET_B, call=lambda xp, a, b: xp.intersect1d(
                        a, b, return_indices=True))],
    "union1d": [c(_SET_A, _SET_B), c(INTS, INTS_POS)],
    "setdiff1d": [c(_SET_A, _SET_B), c(INTS, INTS_POS)],
    "setxor1d": [c(_SET_A, _SET_B), c(INTS, INTS_POS)],
    "isin": [c(_SET_A, _SET_B), c(INTS, INTS_POS), c(_SET_A, _SET_B, invert=True),
             c(INTS, 5)],
})

def _trimmed_division(xp: Any, u: Any, v: Any) -> tuple:
    quotient, remainder = xp.polydiv(u, v)
    return quotient, remainder[-(v.shape[0] - 1):]


# -- polynomials (coefficient arrays, highest power first) ----------------------------------
_P = np.array([2.0, -3.0, 0.5, 1.0])
_Q2 = np.array([1.0, -1.0])
TABLE.update({
    "polyval": [c(_P, ROW), c(_P, M), c(_P, 2.0), c(INTS[0], INTS_POS[0])],
    "polyadd": [c(_P, _Q2), c(_Q2, _P)], "polysub": [c(_P, _Q2), c(_Q2, _P)],
    "polymul": [c(_P, _Q2), c(_Q2, _Q2)],
    "polyder": [c(_P), c(_P, 2), c(_P, 4)],
    "polyint": [c(_P), c(_P, 2), c(_P, 1, 3.0)],
    # jax.numpy keeps the remainder's leading zeros (numpy trims them): its last deg(v)
    "polydiv": [c(_P, _Q2, call=lambda xp, u, v: _trimmed_division(xp, u, v)),
                c(_P, np.array([2.0, 0.5, 1.0]), call=lambda xp, u, v: _trimmed_division(
                    xp, u, v))],
    "polyfit": [c(REGULAR, POS, 2), c(REGULAR, POS, 1, w=UNIT + 1.5),
                c(ROW, np.array([1.0, 2.0, 0.5]), 2)],
    "poly": [c(ROW), c(np.array([1.0, 1.0, -2.0])), c(SQUARE)],
    # the roots' order is the eigenvalue solver's: compared as the sorted roots
    "roots": [c(_P, call=lambda xp, p: xp.sort_complex(xp.roots(p))),
              c(np.array([1.0, -3.0, 2.0]), call=lambda xp, p: xp.sort_complex(xp.roots(p)))],
})

# -- window functions -------------------------------------------------------------------------
for _name in ["bartlett", "blackman", "hamming", "hanning"]:
    TABLE[_name] = [c(call=lambda xp, n=_name: getattr(xp, n)(7)),
                    c(call=lambda xp, n=_name: getattr(xp, n)(1)),
                    c(call=lambda xp, n=_name: getattr(xp, n)(0))]
TABLE["kaiser"] = [c(call=lambda xp: xp.kaiser(7, 5.0)), c(call=lambda xp: xp.kaiser(1, 2.0)),
                   c(call=lambda xp: xp.kaiser(4, 0.0))]

# -- creation from functions, buffers, iterables and other arrays ---------------------------
TABLE.update({
    "geomspace": [c(call=lambda xp: xp.geomspace(1, 1000, 4)),
                  c(call=lambda xp: xp.geomspace(-1, -16, 5, endpoint=False)),
                  c(call=lambda xp: xp.geomspace(2.0, 0.5, 3))],
    "fromfunction": [c(call=lambda xp: xp.fromfunction(lambda i, j: i * 3 + j, (2, 3))),
                     c(call=lambda xp: xp.fromfunction(lambda i: i ** 2, (4,),
                                                       dtype=np.int64))],
    "fromiter": [c(call=lambda xp: xp.fromiter((v * 0.5 for v in range(4)), float)),
                 c(call=lambda xp: xp.fromiter(iter([1, 2, 3]), np.int32, 2))],
    "frombuffer": [c(call=lambda xp: xp.frombuffer(np.arange(4.0).tobytes())),
                   c(call=lambda xp: xp.frombuffer(b"\x01\x02\x03\x04", np.uint8, 2, 1))],
    "fromstring": [c(call=lambda xp: xp.fromstring("1 2 3.5", sep=" ")),
                   c(call=lambda xp: xp.fromstring("1,2", dtype=np.int64, sep=","))],
    "from_dlpack": [c(M, call=lambda xp, x: xp.from_dlpack(np.asarray(x)))],
    "frompyfunc": [c(M, M_POS, call=lambda xp, x, y: xp.frompyfunc(lambda a, b: a * b + 1, 2, 1)(
        x, y))],
})


# -- printing, files and memory: against numpy (REFERENCE), through in-memory files ---------
_TEXT = "1.5 2\n-3 4.25\n"


def _saved(xp: Any, save: str, *arrays: Any) -> Any:
    """What ``xp.<save>`` writes, read back by numpy (the same bytes must come back)."""
    buffer = io.BytesIO()
    getattr(xp, save)(buffer, *arrays)
    buffer.seek(0)
    if save == "savetxt":
        return buffer.getvalue().decode()
    out = np.load(buffer)
    return out if isinstance(out, np.ndarray) else [out[k] for k in sorted(out.files)]


def _loaded(xp: Any, load: str, *args: Any, **kwargs: Any) -> Any:
    return getattr(xp, load)(io.StringIO(_TEXT), *args, **kwargs)


def _from_file(xp: Any, x: Any) -> Any:
    with tempfile.TemporaryDirectory() as folder:
        path = os.path.join(folder, "x.bin")
        np.asarray(x).tofile(path)
        return xp.fromfile(path)


def _npy(xp: Any, x: Any) -> Any:
    buffer = io.BytesIO()
    np.save(buffer, np.asarray(x))
    buffer.seek(0)
    return xp.load(buffer)


def _putmask(xp: Any, a: Any, mask: Any, values: Any) -> Any:
    """numpy's putmask writes into ``a``; funcgrad's returns the result (inplace=False)."""
    if xp is np:
        a = a.copy()
        np.putmask(a, mask, values)
        return a
    return xp.putmask(a, mask, values, inplace=False)


TABLE.update({
    "array_str": [c(M, call=lambda xp, x: xp.array_str(x), eager=True),
                  c(INTS, call=lambda xp, x: xp.array_str(x, precision=2), eager=True)],
    "array2string": [c(M, call=lambda xp, x: xp.array2string(xp.asarray(x), precision=3),
                       eager=True),
                     c(EDGES, call=lambda xp, x: xp.array2string(xp.asarray(x)), eager=True)],
    "save": [c(M, call=lambda xp, x: _saved(xp, "save", xp.asarray(x)), eager=True)],
    "savez": [c(M, INTS, call=lambda xp, x, i: _saved(xp, "savez", xp.asarray(x), i),
                eager=True)],
    "savez_compressed": [c(M, INTS, call=lambda xp, x, i: _saved(
        xp, "savez_compressed", xp.asarray(x), i), eager=True)],
    "savetxt": [c(M, call=lambda xp, x: _saved(xp, "savetxt", xp.asarray(x)), eager=True)],
    "load": [c(M, call=lambda xp, x: _npy(xp, x), eager=True)],
    "loadtxt": [c(call=lambda xp: _loaded(xp, "loadtxt"), eager=True),
                c(call=lambda xp: _loaded(xp, "loadtxt", usecols=1), eager=True)],
    "genfromtxt": [c(call=lambda xp: _loaded(xp, "genfromtxt"), eager=True)],
    "fromregex": [c(call=lambda xp: _loaded(xp, "fromregex", r"(\S+) (\S+)",
                                            [("a", np.float64), ("b", np.float64)])["a"],
                    eager=True)],
    "fromfile": [c(M, call=lambda xp, x: _from_file(xp, x), eager=True)],
    "may_share_memory": [c(M, call=lambda xp, x: xp.may_share_memory(x, x), eager=True),
                         c(M, M_POS, call=lambda xp, x, y: xp.may_share_memory(x, y),
                           eager=True)],
    "shares_memory": [c(M, M_POS, call=lambda xp, x, y: xp.shares_memory(x, y), eager=True)],
    "ndenumerate": [c(INTS, call=lambda xp, x: [(i, int(v)) for i, v in xp.ndenumerate(x)],
                      eager=True)],
    "putmask": [c(M, BOOLS, np.array([9.0, 8.0]), call=_putmask),
                c(M, M > 0, 0.5, call=_putmask)],
    "asanyarray": [c(M), c(INTS, np.float32), c(call=lambda xp: xp.asanyarray([1, 2.5]))],
    "asarray_chkfinite": [c(M), c(EDGES), c(INTS, np.float64)],
    "ascontiguousarray": [c(M), c(M.T), c(INTS, np.float32)],
    "asfortranarray": [c(M), c(INTS, np.float32)],
    "require": [c(M), c(M, np.float32), c(INTS, None, ["C", "A"])],
    "real_if_close": [c(COMPLEX_VECTOR), c(np.array([1.0 + 1e-15j, 2.0 + 0j])), c(M)],
    "common_type": [c(M, call=lambda xp, x: xp.common_type(x, np.zeros(2, np.float32)).__name__,
                      eager=True),
                    c(call=lambda xp: xp.common_type(np.zeros(2, np.float32),
                                                     np.zeros(2, np.complex64)).__name__,
                      eager=True),
                    c(INTS, call=lambda xp, x: xp.common_type(xp.asarray(x)).__name__,
                      eager=True)],
    "einsum_path": [c(M, M_POS.T.copy(), call=lambda xp, x, y: xp.einsum_path("ij,jk->ik", x, y)[0],
                      eager=True),
                    c(M, M_POS.T.copy(), M, call=lambda xp, x, y, z: xp.einsum_path(
                        "ij,jk,kl->il", x, y, z.T, optimize="optimal")[0], eager=True)],
})
REFERENCE.update({n: "jax.numpy has no " + n for n in [
    "array2string", "savez_compressed", "savetxt", "loadtxt", "genfromtxt", "fromregex",
    "may_share_memory", "shares_memory", "ndenumerate", "putmask", "asanyarray",
    "asarray_chkfinite", "ascontiguousarray", "asfortranarray", "require", "real_if_close",
    "common_type"]})
REFERENCE.update({
    "einsum_path": "jax.numpy's einsum_path returns opt_einsum's path, without numpy's "
                   "leading 'einsum_path' marker",
    "save": "jax.numpy.save is numpy's: funcgrad's must write the bytes numpy writes",
    "savez": "jax.numpy.savez is numpy's", "load": "jax.numpy.load is numpy's",
    "fromfile": "jax.numpy.fromfile raises NotImplementedError"})


# value-dependent output shapes (and mode="raise" checks): JAX needs concrete values, so
# these run op by op
for _name in ["choose", "compress", "extract", "intersect1d", "mask_indices", "roots",
              "setdiff1d", "setxor1d", "union1d", "trim_zeros", "unique", "unique_all",
              "unique_counts", "unique_inverse", "unique_values", "ravel_multi_index"]:
    TABLE[_name] = [case._replace(eager=True) for case in TABLE[_name]]

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
        ("argpartition", 1, "dtype", _INDEX_DTYPE.replace("searchsorted and digitize",
                                                          "argpartition")),
        ("apply_over_axes", 2, "raised", "jax.numpy's apply_over_axes takes a sequence of "
         "axes only; numpy's an int too"),
        ("fill_diagonal", 2, "raised", "jax.numpy's fill_diagonal does not implement wrap"),
        ("ix_", 1, "raised", "jax.numpy's ix_ does not take boolean arrays; numpy's does"),
        ("unravel_index", 1, "raised", "jax.numpy's unravel_index has no order='F'"),
        ("poly", 2, "dtype", "numpy's poly of a matrix is real where its eigenvalues come "
         "in conjugate pairs; JAX's is always complex"),
        *[("tri", i, "dtype", "jax.numpy's tri defaults to float32 even with x64; numpy's "
           "to float64") for i in (0, 1)],
        *[(n, i, "vjp,jvp", "jax.numpy's set functions read concrete values (their output "
           "is a constant: derivative 0); funcgrad's gather the elements they keep (the first "
           "occurrence of each value)") for n, i in [
              ("intersect1d", 0), ("setdiff1d", 0), ("setxor1d", 0), ("union1d", 0),
              ("unique", 0), ("unique", 1), ("unique", 2), ("unique", 5),
              ("unique_values", 0)]],
        ("isscalar", 1, "values", "a 0-d array: numpy's isscalar is False (only scalar types "
         "are), JAX's True")]:
    known(TABLE[_name], _i, _what, _why)

REFERENCE.update({"fromiter": "jax.numpy's fromiter raises NotImplementedError"})

NOT_COMPARED = {
    "array_repr": "the repr of funcgrad's own type ('Array([...], dtype=...)'), neither numpy's "
                  "'array(...)' nor JAX's 'ArrayImpl(...)'",
    **{n: "numpy's own function, which funcgrad.numpy re-exports (it takes numbers, dtypes "
          "or numpy's global state, no Arrays)" for n in [
        "set_printoptions", "get_printoptions", "printoptions", "format_float_positional",
        "format_float_scientific", "base_repr", "binary_repr", "seterr", "geterr",
        "seterrcall", "geterrcall", "getbufsize", "setbufsize", "min_scalar_type",
        "mintypecode", "typename"]},
}
