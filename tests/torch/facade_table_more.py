"""The cases of test_facade_vs_pytorch.py, part 3: the torch functions of
_ops_order_stats, _ops_arrange, _ops_index_update, _ops_math_more, _ops_linalg_legacy and
_numeric_info (order statistics, arrangement, index updates, more elementwise math, the
legacy linear algebra names, distances and statistics). Numpy only; facade_table's inputs
and helpers. Inputs avoid ties where PyTorch documents no index (median, kthvalue) and
sign-ambiguous factors (svd, qr) are compared through gauge-free results.
"""
from __future__ import annotations

import numpy as np

from facade_table import (EDGES, EMPTY, I32, I64, INTS, M23, M23_F32, POS, SCALAR, UNIT,
                          Const, a, c, known)

_R = np.random.RandomState(2)
V3 = _R.uniform(-2, 2, 3)
M33 = _R.uniform(-2, 2, (3, 3))
M34 = _R.uniform(-2, 2, (3, 4))
B23 = _R.uniform(-2, 2, (2, 3))
ROW_NAN = a([[3.0, np.nan, 1.0, 2.0], [4.0, 0.5, 2.5, 1.5]])
MODES = a([[3.0, 1.0, 3.0, 1.0, 2.0], [2.0, 2.0, 5.0, 4.0, 4.0]])
RUNS = a([[1.0, 3.0, 3.0, np.nan, 5.0, np.nan, 2.0], [2.0, 1.0, 1.0, 0.0, 4.0, -1.0, 0.0]])
IDX2 = a([0, 2], np.int64)
SQ = _R.uniform(-1, 1, (3, 3)) + 3 * np.eye(3)
SPD = SQ @ SQ.T
LOW = np.linalg.cholesky(SPD)
X43, X23 = _R.uniform(-1, 1, (4, 3)), _R.uniform(-1, 1, (2, 3))
SORTED = a([[1.0, 2.0, 3.0, 5.0], [0.0, 0.5, 4.0, 9.0]])
POS23 = _R.uniform(0.2, 2, (2, 3))
I23 = a([[4, 6, -3], [0, 9, 5]], np.int64)
I23B = a([[6, 9, 2], [3, 0, -10]], np.int64)

TABLE: dict = {
    # order statistics
    "median": [c(M34), c(M34, 1), c(M34, 0, True), c(ROW_NAN), c(ROW_NAN, 1), c(SCALAR),
               c(INTS, 1), c(EMPTY, 0), c(a([2.0, 2.0, 1.0, 3.0]))],
    "nanmedian": [c(ROW_NAN), c(ROW_NAN, 1), c(M34, 0), c(a([np.nan, np.nan])),
                  c(a([[np.nan, np.nan], [1.0, 2.0]]), 1)],
    "kthvalue": [c(M34, 2), c(M34, 1, 0), c(M34, 3, -1, True), c(ROW_NAN, 4), c(M34, 5),
                 c(SCALAR, 1)],
    "mode": [c(MODES), c(MODES, 1, True), c(a([[1, 1, 2], [3, 2, 2]], np.int64)),
             c(EMPTY, 0)],
    "msort": [c(M34), c(INTS)],
    "quantile": [c(M34, 0.3), c(M34, 0.5, 1), c(M34, 0.25, 0, True),
                 c(M34, a([0.1, 0.9]), 1), c(ROW_NAN, 0.4, 1),
                 c(M34, 0.3, 1, interpolation="lower"), c(M34, 0.3, 1, interpolation="higher"),
                 c(M34, 0.3, 1, interpolation="midpoint"),
                 c(M34, 0.5, 1, interpolation="nearest"), c(M34, 1.5), c(M34, 0.5,
                                                                        interpolation="x"),
                 c(INTS, 0.5), c(EMPTY, 0.5), c(M23_F32, a([0.5])), c(M34, a([1.5]))],
    "nanquantile": [c(ROW_NAN, 0.4, 1), c(ROW_NAN, a([0.2, 0.7])), c(M34, 0.3)],
    "cummax": [c(RUNS, 1), c(M34, 0), c(INTS, 1), c(SCALAR, 0), c(EMPTY, 0)],
    "cummin": [c(RUNS, 1), c(M34, 0), c(INTS, 1)],
    "logcumsumexp": [c(M34, 1), c(M34, 0), c(a([[-np.inf, 0.0, 1.0, -np.inf]]), 1),
                     c(M23_F32, 1), c(SCALAR, 0), c(INTS, 0)],
    "aminmax": [c(M34), c(M34, dim=1), c(M34, dim=0, keepdim=True), c(INTS, dim=1),
                c(a([[1.0, 3.0, 3.0], [1.0, 1.0, 0.0]]), dim=1), c(EMPTY)],
    "std_mean": [c(M34), c(M34, 1), c(M34, (0, 1), keepdim=True), c(M34, 1, correction=0),
                 c(INTS)],
    "var_mean": [c(M34), c(M34, 0), c(M34, 1, False, True)],
    "nanmean": [c(ROW_NAN), c(ROW_NAN, 1), c(M34, 0, True), c(a([np.nan])), c(INTS)],
    "searchsorted": [c(SORTED[0], a([0.5, 2.0, 7.0, np.nan])),
                     c(SORTED[0], a([0.5, 2.0, 7.0]), right=True),
                     c(SORTED, a([[2.0, 6.0], [0.5, 9.0]])),
                     c(SORTED, a([[2.0, 6.0], [0.5, 9.0]]), side="right"),
                     c(SORTED[0], a([3.0]), out_int32=True), c(SORTED[0], 3.0),
                     c(SORTED, a([1.0])), c(SORTED[0], a([1.0]), side="x"),
                     c(SORTED[0], a([1.0]), side="left", right=True),
                     c(a([5.0, 1.0, 3.0]), a([2.0, 4.0]), sorter=a([1, 2, 0], np.int64))],
    "bucketize": [c(a([0.5, 2.0, 7.0]), SORTED[0]), c(a([[2.0, 3.0]]), SORTED[0], right=True),
                  c(3.0, SORTED[0]), c(a([1.0]), SORTED)],
    "histc": [c(M34, bins=4), c(M34, 5, -1, 1), c(a([1.0, 1.0])), c(INTS), c(M34, 0),
              c(M34, 4, 2, 1)],
    "bincount": [c(a([1, 1, 3, 0], np.int64)), c(a([1, 1, 3], np.int64), minlength=6),
                 c(a([1, 1, 3], np.int64), Const(a([0.5, 1.0, 2.0]))),
                 c(a([1, 1, 3], np.int64), Const(a([0.5, 1.0, 2.0], np.float32))),
                 c(a([1, 2], np.int64), Const(a([3, 4], np.int64))),
                 c(a([-1], np.int64)), c(M23), c(a([1], np.int64), minlength=-1)],
    "isin": [c(INTS, a([0, 5, 9], np.int64)), c(INTS, a([0, 5], np.int64), invert=True),
             c(INTS, 5), c(3, INTS), c(M23, M23[0])],
    # arrangement
    "meshgrid": [c(V3, V3[:2], indexing="ij"), c(V3, V3[:2], indexing="xy"),
                 c(V3, SCALAR, V3, indexing="ij"), c(V3, indexing="x"),
                 c(V3, V3[:2].astype(np.float32), indexing="ij")],
    "cartesian_prod": [c(V3, V3[:2]), c(V3), c(V3, V3[:1], V3[:2])],
    "combinations": [c(V3), c(V3, 3), c(V3, 2, True), c(V3, 0)],
    "kron": [c(M33, B23), c(V3, B23), c(INTS, INTS), c(M23_F32, M23)],
    "block_diag": [c(M33, B23, V3, SCALAR), c(B23, INTS), c(a(np.zeros((2, 2, 2))))],
    "cross": [c(M33, M33[::-1].copy(), 1), c(M33, M33[::-1].copy()),
              c(M33, V3, -1), c(B23, B23[:, :2].copy(), 1)],
    "linalg.cross": [c(M33, M33[::-1].copy()), c(M33, M33[::-1].copy(), dim=0),
                     c(B23[:, :2].copy(), B23[:, :2].copy())],
    "diff": [c(M34), c(M34, 2, 0), c(M34, 1, 1, M34[:, :1].copy()),
             c(M34, 1, 0, None, M34[:1].copy()),
             c(a([True, False, False, True])), c(INTS, 3), c(SCALAR),
             c(M34, 1, 0, V3)],
    "atleast_1d": [c(SCALAR), c(V3), c(M33, call=lambda T, x: T.atleast_1d([x, x[0, 0]]))],
    "atleast_2d": [c(SCALAR), c(V3), c(M33)],
    "atleast_3d": [c(SCALAR), c(V3), c(M33), c(M33, call=lambda T, x: T.atleast_3d(x, x[0]))],
    "column_stack": [c(V3, M33, call=lambda T, v, m: T.column_stack([v, m])),
                     c(V3, call=lambda T, v: T.column_stack([v, v * 2]))],
    "row_stack": [c(V3, B23, call=lambda T, v, b: T.row_stack([v, b]))],
    "dstack": [c(M33, call=lambda T, m: T.dstack([m, m * 2])),
               c(V3, call=lambda T, v: T.dstack([v, v]))],
    "tensor_split": [c(M34, 2), c(M34, 3, 1), c(M34, [1, 3], 1), c(M34, [2, 9]),
                     c(M34, a([1, 2], np.int64), 1), c(M34, 0), c(SCALAR, 1)],
    "hsplit": [c(M34, 2), c(M34, [1]), c(V3, 3), c(M34, 3), c(SCALAR, 1)],
    "vsplit": [c(M34, 3), c(M34, [1, 2]), c(V3, 3), c(M34, 2)],
    "dsplit": [c(_R.uniform(-1, 1, (2, 2, 4)), 2), c(M34, 2)],
    "rot90": [c(M34), c(M34, 2), c(M34, -1, [1, 0]), c(M34, 0), c(M34, 5),
              c(_R.uniform(-1, 1, (2, 3, 4)), 1, [0, 2]), c(V3), c(M34, 1, [0]),
              c(M34, 1, [0, 0])],
    "fliplr": [c(M34), c(V3)],
    "flipud": [c(M34), c(V3), c(SCALAR)],
    "ravel": [c(M34), c(SCALAR), c(M34, call=lambda T, x: T.ravel(x.t()))],
    "repeat_interleave": [c(M34, 2), c(M34, 2, 0), c(M34, a([1, 2, 0], np.int64), 0),
                          c(a([1, 2, 0], np.int64)), c(M34, -1),
                          c(M34, a([1, 2], np.int64), 1), c(SCALAR, 3),
                          c(M34, 2, 1, output_size=8)],
    "diag_embed": [c(B23), c(B23, 1), c(B23, -1, 0, 2), c(V3), c(B23, 0, 1, 1)],
    "diagflat": [c(B23), c(V3, 1), c(V3, -2), c(SCALAR)],
    "broadcast_tensors": [c(V3, M33), c(SCALAR, V3, B23), c(M33, B23[:, :2].copy())],
    "broadcast_shapes": [c((2, 1), (3,), 1, call=lambda T, *s: T.broadcast_shapes(*s)),
                         c((2, 3), (4,), call=lambda T, *s: T.broadcast_shapes(*s))],
    "vander": [c(a([1.0, 2.0, 3.0]), grad=False), c(a([1, 2, 3], np.int64), 4, True),
               c(V3, 2, grad=False), c(M33)],
    "tril_indices": [c(3, 4, 1), c(4, 3, -1), c(3, 3, dtype=I32)],
    "triu_indices": [c(3, 4, 1), c(4, 3, -1), c(0, 2)],
    # index updates and gathers
    "index_add": [c(M33, 0, IDX2, B23), c(M33, 1, IDX2, B23.T.copy(), alpha=2.0),
                  c(M33, 0, a([1, 1], np.int64), B23), c(M33, 0, IDX2.astype(np.float64), B23),
                  c(M33, 0, IDX2, B23.astype(np.float32)), c(M33, 0, IDX2, B23[:1]),
                  c(M33, 0, a([0, 5], np.int64), B23)],
    "index_copy": [c(M33, 0, IDX2, B23), c(M33, 1, IDX2, B23.T.copy()),
                   c(M33, 0, IDX2, B23[:1])],
    "index_fill": [c(M33, 1, IDX2, 2.0), c(M33, 0, IDX2, a(-1.5)), c(INTS, 1, IDX2, 7),
                   c(M33, 0, IDX2.astype(np.float64), 1.0)],
    "scatter_reduce": [c(M33, 1, a([[0, 0], [1, 1], [2, 0]], np.int64), B23.T.copy(), r,
                         include_self=inc) for r in ("sum", "prod", "mean", "amax", "amin")
                       for inc in (True, False)] + [
        c(a([[1.0, 2.0, 2.0]]), 1, a([[0, 0, 1, 1]], np.int64), a([[2.0, 1.0, 2.0, 0.0]]),
          "amax"),
        c(a([[1.0, 0.0, 2.0]]), 1, a([[0, 0, 1, 1]], np.int64), a([[0.0, 1.0, 2.0, 0.0]]),
          "prod"),
        c(INTS, 0, a([[1, 0, 1]], np.int64), a([[5, 6, 7]], np.int64), "mean"),
        c(M33, 1, a([[0]], np.int64), B23, "foo")],
    "select_scatter": [c(M33, V3, 0, 1), c(M33, V3, 1, -1), c(M33, V3[:2], 0, 0)],
    "slice_scatter": [c(M33, B23, 0, 0, 2), c(M34, M34[:, ::2].copy(), 1, None, None, 2),
                      c(M33, V3[None], 0, 2), c(M33, B23, 0)],
    "diagonal_scatter": [c(M33, V3), c(M33, V3[:2], 1), c(M33, V3[:2], -1),
                         c(_R.uniform(-1, 1, (2, 3, 3)), B23, 0, 1, 2), c(M33, V3[:2])],
    "index_put": [c(M33, call=lambda T, x: T.index_put(x, (T.tensor([0, 2]),), x[1] * 2)),
                  c(M33, call=lambda T, x: T.index_put(x, (T.tensor([0, 0]), T.tensor([1, 1])),
                                                      T.tensor([1.0, 2.0], dtype=x.dtype),
                                                      True)),
                  c(M33, call=lambda T, x: x.clone().index_put_(
                      (T.tensor([1]),), x[0] + 1, accumulate=True))],
    "put": [c(M33, a([0, 8, 0], np.int64), a([1.0, 2.0, 3.0]), True),
            c(M33, a([0, 8, 4], np.int64), a([1.0, 2.0, 3.0])),
            c(M33, a([0, 9], np.int64), a([1.0, 2.0]))],
    "masked_scatter": [c(M33, M33 > 0, _R.uniform(-1, 1, 9)),
                       c(M33, a([True, False, True]), _R.uniform(-1, 1, 7)),
                       c(M33, M33 > -9, _R.uniform(-1, 1, 4))],
    "take": [c(M33, a([[0, 8], [3, -1]], np.int64)), c(M33, a([9], np.int64)),
             c(M33, a([1], np.int32))],
    "take_along_dim": [c(M33, a([[0], [1], [2]], np.int64), 1), c(M33, a([0, 4], np.int64)),
                       c(M33, a([[2, 0, 1]], np.int64), 0), c(M33, a([[0, 1]], np.int64), 0),
                       c(M33, a([[0]], np.int64), 1)],
    # more elementwise math
    "logaddexp": [c(M23, B23), c(M23, B23[0]), c(INTS, M23), c(M23_F32, M23), c(M23, 2.0),
                  c(a([-np.inf, np.inf, 0.0]), a([-np.inf, np.inf, -np.inf]))],
    "logaddexp2": [c(M23, B23), c(INTS, M23), c(M23, 2.0)],
    "hypot": [c(M23, B23), c(M23_F32, M23), c(M23, 2.0)],
    "fmax": [c(M23, B23), c(a([1.0, np.nan, 2.0, np.nan]), a([np.nan, 3.0, 2.0, np.nan])),
             c(INTS, I23B), c(M23, 2.0)],
    "fmin": [c(M23, B23), c(a([1.0, np.nan, 2.0, np.nan]), a([np.nan, 3.0, 2.0, np.nan])),
             c(INTS, I23B)],
    "nextafter": [c(M23, B23, grad=False), c(M23, 2.0)],
    "copysign": [c(M23, B23), c(M23, -1.0),
                 c(a([0.0, -0.0, 1.0, -2.0]), a([-1.0, 1.0, -0.0, 1.0])),
                 c(INTS, M23), c(INTS, -1)],
    "xlogy": [c(M23, POS23), c(a([0.0, 0.0, 1.0]), a([0.0, np.nan, 2.0])), c(M23, 2.0),
              c(2.0, POS23, call=lambda T, s, y: T.xlogy(s, y)), c(INTS, POS23)],
    "heaviside": [c(a([-1.0, 0.0, 2.0]), a([0.5, 0.5, 0.5]), grad=False),
                  c(a([-1.0, 0.0, 2.0]), a(0.25), grad=False), c(INTS, INTS),
                  c(M23, M23_F32, grad=False)],
    "gcd": [c(I23, I23B), c(M23, M23)],
    "lcm": [c(I23, I23B), c(M23, M23)],
    "bitwise_left_shift": [c(I23, a([[1, 2, 0], [3, 1, 2]], np.int64)), c(I23, 2), c(M23, M23)],
    "bitwise_right_shift": [c(I23, a([[1, 2, 0], [3, 1, 2]], np.int64)), c(I23, 1),
                            c(M23, M23)],
    "ldexp": [c(M23, a([1, 2, 3], np.int64)), c(M23, a([[1.0, 0.0, -1.0]])),
              c(INTS, a([1, 2, 3], np.int64))],
    "sinc": [c(EDGES), c(M23), c(a([0.0, 1.0, -2.0])), c(INTS)],
    "frac": [c(EDGES), c(M23), c(INTS)],
    "deg2rad": [c(M23), c(INTS), c(M23_F32)],
    "rad2deg": [c(M23), c(INTS)],
    "erfinv": [c(UNIT), c(a([-1.0, 1.0, 0.0, 2.0])), c(INTS)],
    "digamma": [c(POS), c(M23), c(INTS)],
    "lgamma": [c(POS), c(M23), c(INTS)],
    "i0": [c(M23), c(INTS)],
    # PyTorch's gradient of sgn on reals is a ZeroTensor, which has no numpy view: the
    # values here, the zero gradient in test_torch_functions_more.py
    "sgn": [c(EDGES, grad=False), c(M23, grad=False), c(INTS)],
    "polygamma": [c(1, POS23, call=lambda T, n, x: T.polygamma(n, x)),
                  c(2, POS23, call=lambda T, n, x: T.polygamma(n, x)),
                  c(POS23, call=lambda T, x: x.polygamma(1)),
                  c(POS23, call=lambda T, x: (x * 1).polygamma_(2))],
    "mvlgamma": [c(POS23 + 2, 2), c(POS23 + 1, 1)],
    "nan_to_num": [c(EDGES), c(EDGES, 1.0, 2.0, -3.0), c(EDGES.astype(np.float32)), c(INTS),
                   c(EDGES, posinf=9.0)],
    "frexp": [c(EDGES[1:-2].copy()), c(M23), c(M23_F32), c(INTS)],
    "polar": [c(POS23, M23), c(POS23, M23_F32)],
    "complex": [c(M23, B23), c(M23_F32, M23_F32), c(M23, M23_F32)],
    "isposinf": [c(EDGES), c(INTS)],
    "isneginf": [c(EDGES), c(INTS)],
    "isreal": [c(EDGES), c(a([1 + 0j, 1j, 2]))],
    "positive": [c(M23), c(INTS), c(a([True]))],
    "is_nonzero": [c(a([1.0])), c(a(0.0)), c(M23), c(EMPTY)],
    "is_same_size": [c(M23, B23), c(M23, V3)],
    "is_signed": [c(M23), c(INTS), c(a([1], np.uint8)), c(a([True]))],
    # legacy linear algebra, distances, statistics
    "det": [c(SQ), c(_R.uniform(-1, 1, (2, 3, 3))), c(M34)],
    "logdet": [c(SPD), c(-SPD), c(SQ)],
    "slogdet": [c(SQ), c(-SQ)],
    "inverse": [c(SQ), c(_R.uniform(-1, 1, (2, 3, 3)) + 3 * np.eye(3)), c(M34), c(INTS)],
    "pinverse": [c(M34), c(SQ)],
    "matrix_power": [c(SQ, 3), c(SQ, -2), c(SQ, 0), c(SQ, 1), c(M34, 2)],
    "matrix_exp": [c(SQ / 3), c(_R.uniform(-1, 1, (2, 3, 3)))],
    "cholesky": [c(SPD), c(SPD, True)],
    "cholesky_solve": [c(X43[:3, :2].copy(), LOW), c(X43[:3, :2].copy(), LOW.T.copy(), True),
                       c(X43[:3, :2].astype(np.float32), LOW)],
    "cholesky_inverse": [c(LOW), c(LOW.T.copy(), True)],
    "qr": [c(M34, call=lambda T, x: T.qr(x).Q @ T.qr(x).R),
           c(M34.T.copy(), call=lambda T, x: T.qr(x).Q @ T.qr(x).R),
           c(M34, call=lambda T, x: tuple(p.abs() for p in T.qr(x.detach(), False)))],
    "svd": [c(M34, call=lambda T, x: T.svd(x).S),
            c(M34, call=lambda T, x: (lambda r: r.U @ T.diag(r.S) @ r.V.mT)(T.svd(x))),
            c(M34.T.copy(), call=lambda T, x: tuple(p.shape for p in T.svd(x, some=False))),
            c(M34, call=lambda T, x: T.svd(x, compute_uv=False))],
    "chain_matmul": [c(SQ, SQ, M34), c(SQ)],
    "cdist": [c(X43, X23), c(X43, X23, 1.0), c(X43, X23, 3.0), c(X43, X43[:2].copy()),
              c(X43, X23, 0.0), c(X43, X23, np.inf), c(_R.uniform(-1, 1, (2, 4, 3)), X23),
              c(X43, X23[:, :2].copy()), c(V3, X23), c(X43, X23, -1.0)],
    "dist": [c(X43, X43 * 2), c(X43, X43 * 2, 3), c(X43, X23[:1]), c(X43, X43, 1)],
    "renorm": [c(X43, 2, 0, 0.5), c(X43, 1, 1, 1.0), c(X43, 2, 0, 5.0), c(X43, 0, 0, 1.0),
               c(X43, 2, 0, -1.0)],
    "cov": [c(X43), c(X43[0]), c(X43, correction=0),
            c(X43, fweights=Const(a([1, 2, 1], np.int64))),
            c(X43, aweights=Const(a([0.5, 1.0, 2.0]))), c(INTS), c(_R.rand(2, 2, 2))],
    "corrcoef": [c(X43), c(X43[0]), c(INTS)],
    "trapezoid": [c(X43), c(X43, dx=2.0), c(X43, a([0.0, 1.0, 3.0])), c(X43, dim=0),
                  c(X43, X43 * 3)],
    "trapz": [c(X43), c(X43, a([0.0, 1.0, 3.0]))],
    "cumulative_trapezoid": [c(X43), c(X43, a([0.0, 1.0, 3.0])), c(X43, dx=0.5, dim=0)],
    "unique": [c(a([3, 1, 3, 2], np.int64)), c(a([3, 1, 3, 2], np.int64), True, True, True),
               c(a([[1, 2], [1, 2], [0, 5]], np.int64), dim=0, return_counts=True),
               c(a([[1, 2], [1, 2], [0, 5]], np.int64), return_inverse=True),
               c(M33, grad=False)],
    "unique_consecutive": [c(a([1, 1, 2, 2, 3, 1, 1, 2], np.int64), True, True),
                           c(a([[1, 2], [1, 2], [0, 5], [1, 2]], np.int64), dim=0,
                             return_counts=True), c(a([[1, 1], [1, 2]], np.int64),
                                                    return_inverse=True)],
    "unravel_index": [c(a([4, 1, 5], np.int64), (2, 3)), c(a(7, np.int64), (2, 2, 2)),
                      c(a([1.0]), (2, 3))],
    "argwhere": [c(a([[0, 1], [2, 0]], np.int64)), c(M33, grad=False), c(EMPTY, grad=False)],
    "vdot": [c(V3, V3[::-1].copy()), c(a([1 + 2j, 3j]), a([2 - 1j, 1 + 1j])),
             c(V3, V3.astype(np.float32)), c(M33, M33)],
    "adjoint": [c(M34), c(a([[1 + 2j, 3j], [1, 2]])), c(V3), c(_R.uniform(-1, 1, (2, 3, 4)))],
    # numbers and settings
    "range": [c(1, 4, 0.5), c(5), c(0, 3, dtype=I64), c(3, 0, -1), c(0, 3, -1)],
    "get_float32_matmul_precision": [c(call=lambda T: T.get_float32_matmul_precision())],
}

# conventions that legitimately differ
known(TABLE["kthvalue"], 0, "values,grad",
      "ties: PyTorch documents no index among equal values (ours: first in stable order)")
known(TABLE["meshgrid"], 3, "message", "PyTorch prints the offending tensor in the error")
known(TABLE["heaviside"], 0, "name", "PyTorch records a NotImplemented node that raises in "
      "backward; funcgrad records no node for an op without a derivative")
known(TABLE["heaviside"], 1, "name", "as above")
known(TABLE["vander"], 1, "name", "PyTorch's composition ends in an in-place copy")

NOT_COMPARED = {
    "set_num_threads": "a setting (tests/torch/test_torch_functions_more.py)",
    "get_num_threads": "numpy's kernels pick their own threads; the value is recorded only "
                       "(test_torch_functions_more.py)",
    "set_num_interop_threads": "a setting (test_torch_functions_more.py)",
    "get_num_interop_threads": "a setting (test_torch_functions_more.py)",
    "set_float32_matmul_precision": "a setting (test_torch_functions_more.py)",
}
# PyTorch's older and lower-level names: compared with PyTorch (values, gradients, warnings,
# error texts) in test_legacy_api.py
NOT_COMPARED.update({name: "test_legacy_api.py" for name in (
    "ldexp_ as_strided_scatter eig geqrf is_storage lstsq lu lu_solve lu_unpack matrix_rank orgqr "
    "ormqr slice_copy solve symeig triangular_solve Tensor.as_strided_scatter Tensor.cauchy_ "
    "Tensor.ccol_indices Tensor.coalesce Tensor.col_indices Tensor.const_data_ptr "
    "Tensor.crow_indices Tensor.dense_dim Tensor.eig Tensor.geometric_ Tensor.geqrf "
    "Tensor.indices Tensor.log_normal_ Tensor.lstsq Tensor.lu Tensor.lu_solve "
    "Tensor.module_load Tensor.new_empty_strided Tensor.orgqr Tensor.ormqr Tensor.pin_memory "
    "Tensor.reinforce Tensor.resize Tensor.resize_as Tensor.row_indices Tensor.share_memory_ "
    "Tensor.solve Tensor.sparse_dim Tensor.symeig Tensor.triangular_solve Tensor.values"
).split()})
# ATen's lower-level names: compared with PyTorch (or, for the synchronised batch norm's
# statistics, which PyTorch has on CUDA only, with their formulas) in test_aten_native.py
NOT_COMPARED.update({name: "test_aten_native.py" for name in (
    "affine_grid_generator batch_norm_elemt batch_norm_gather_stats "
    "batch_norm_gather_stats_with_counts batch_norm_stats batch_norm_update_stats "
    "compiled_with_cxx11_abi cond constant_pad_nd convolution empty_permuted feature_dropout "
    "feature_dropout_ frobenius_norm get_device_module grid_sampler grid_sampler_2d "
    "grid_sampler_3d gru_cell histogramdd lstm_cell native_batch_norm native_channel_shuffle "
    "native_dropout native_group_norm native_layer_norm norm_except_dim nuclear_norm "
    "rnn_relu_cell rnn_tanh_cell to_dlpack while_loop conv_tbc from_file pca_lowrank "
    "segment_reduce svd_lowrank lstm gru rnn_tanh rnn_relu").split()})
known(TABLE["logaddexp"], 5, "grad", "PyTorch's gradient at logaddexp(-inf, -inf) is NaN "
      "(exp(-inf - -inf)); ours splits it evenly")
known(TABLE["polygamma"], 2, "name", "PyTorch's method form records the other overload")
known(TABLE["polygamma"], 3, "name", "PyTorch's method form records the other overload")
known(TABLE["xlogy"], 1, "grad", "x == 0 with y == 0: PyTorch's gradient in y is 0 * inf")
known(TABLE["logcumsumexp"], 2, "grad", "PyTorch's gradient is NaN at a leading -inf (its "
      "formula divides exp(-inf) by exp(-inf)); ours is the limit")
known(TABLE["nanmean"], 3, "grad", "an all-NaN slice: PyTorch's gradient is 0/0 = NaN, ours 0")
known(TABLE["quantile"], 4, "grad", "a NaN slice: PyTorch sends gradient to the NaN element "
      "it sorted into the interpolation; the NaN result has none in ours")
