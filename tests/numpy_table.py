"""The cases of test_numpy_vs_jax.py: for each public function of funcgrad.numpy (and its
linalg and fft, and funcgrad.scipy.special), the calls to compare with jax.numpy, the
names left out (with the reason), and the conventions that legitimately differ.

Numpy only. The inputs come in few shapes on purpose: JAX compiles each primitive once per
shape and dtype, and reusing shapes keeps the whole table fast.
"""
from __future__ import annotations

import math
from typing import Any, Callable, NamedTuple

import numpy as np

NAN, INF = math.nan, math.inf


class Case(NamedTuple):
    """One call ``f(*args, **kwargs)``: float and complex arrays in ``args`` are the
    differentiated inputs (values, VJPs and JVPs are compared), anything else is static.
    ``call(np_like, *args)`` replaces ``f`` for calls of another form (``np_like`` is
    funcgrad.numpy or jax.numpy). ``differs``: (aspects, reason), see `known`."""
    args: tuple
    kwargs: dict = {}
    call: Callable | None = None
    differs: tuple = ()
    eager: bool = False  # its output is not an array (a shape, a dtype): not jitted


def c(*args: Any, call: Callable | None = None, eager: bool = False, **kwargs: Any) -> Case:
    return Case(args, kwargs, call, eager=eager)


def known(cases: list, index: int, what: str, why: str) -> None:
    """Mark ``cases[index]`` as differing from JAX in ``what`` (comma-separated: values,
    vjp, jvp, dtype) for the reason ``why``; everything else is still compared."""
    cases[index] = cases[index]._replace(differs=(tuple(what.split(",")), why))


RNG = np.random.RandomState(0)
# 16 values: the edges (infinities, NaN, signed zeros, integers, halves) and regular ones
EDGES = np.array([-INF, -3.0, -1.0, -0.5, -0.0, 0.0, 0.5, 1.0, 3.0, INF, NAN, 0.25, -2.0,
                  2.0, 1.5, -1.5])
REGULAR = RNG.uniform(-2, 2, 16)
POS = RNG.uniform(0.2, 2, 16)
UNIT = RNG.uniform(-0.9, 0.9, 16)
M = RNG.uniform(-2, 2, (2, 3))
M_POS = RNG.uniform(0.2, 2, (2, 3))
ROW = RNG.uniform(0.5, 2, (3,))
TIES = np.array([[1.0, 3.0, 3.0], [2.0, 2.0, -1.0]])
WITH_NAN = np.array([[1.0, NAN, 3.0], [NAN, 2.0, NAN]])
WITH_ZERO = np.array([[0.0, 0.0, 0.0], [0.0, 1.0, -2.0]])
INTS = np.array([[-2, 0, 3], [1, 5, -7]])
INTS_POS = np.array([[2, 1, 3], [1, 5, 7]])
BOOLS = np.array([[True, False, True], [False, False, True]])
EMPTY = np.zeros((0, 3))
COMPLEX = M + 1j * M_POS
COMPLEX_VECTOR = np.concatenate([REGULAR + 1j * POS, [0j, 1 + 0j, -1 + 0j, 2j]])
# all pairs of the edge values whose first is one of -inf, -1, -0, 0, 1, 2, inf, nan and the
# second one of the same plus a regular value: x in the first vector, y in the second
_PAIR_VALUES = np.array([-INF, -1.0, -0.0, 0.0, 1.0, 2.0, INF, NAN])
EDGE_PAIRS = tuple(np.array(v) for v in zip(*[(x, y) for x in _PAIR_VALUES
                                               for y in list(_PAIR_VALUES) + [0.7]]))
SQUARE = RNG.uniform(-1, 1, (3, 3)) + 3 * np.eye(3)
SPD = SQUARE @ SQUARE.T
BATCH = RNG.uniform(-1, 1, (2, 3, 4))
SCALAR = np.array(1.5)


def unary(domain: np.ndarray = REGULAR, complex_: bool = True) -> list:
    """The edge values and values in the domain (one vector), integers, and complex values.
    (Shapes, 0-d and empty arrays of elementwise functions are the registry tests' job.)"""
    cases = [c(np.concatenate([EDGES, domain])), c(INTS)]
    return cases + ([c(COMPLEX_VECTOR)] if complex_ else [])


def binary(numbers: bool = True, complex_: bool = True) -> list:
    """Every pair of edge values (in two vectors), broadcasting with ties, mixed dtypes,
    integers, and Python numbers."""
    cases = [c(EDGE_PAIRS[0], EDGE_PAIRS[1]), c(M, TIES[0]), c(M, INTS), c(INTS, INTS_POS)]
    if numbers:
        cases += [c(M, 2.0), c(3, M_POS)]
    return cases + ([c(COMPLEX_VECTOR, COMPLEX_VECTOR[::-1].copy())] if complex_ else [])


# rows holding ties, NaN, zeros and a zero among others: reduced along axis 1 at once
SPECIAL_ROWS = np.array([[1.0, 3.0, 3.0], [NAN, 2.0, NAN], [0.0, 0.0, 0.0], [0.0, 1.0, -2.0]])


def reductions(empty: bool = True) -> list:
    """All axes; the special rows along each axis (kept); two axes; negative axis; integers,
    bools, 0-d and empty arrays (all of it, when the reduction has an identity)."""
    cases = [c(M), c(SPECIAL_ROWS, 1), c(SPECIAL_ROWS, 0, keepdims=True),
             c(BATCH, (0, 2)), c(M, axis=-1), c(INTS, 0), c(BOOLS), c(SCALAR)]
    return cases + ([c(EMPTY), c(EMPTY, 0)] if empty else [c(EMPTY, 1)])


TABLE: dict = {}
for _name, _domain in [("sin", REGULAR), ("cos", REGULAR), ("tan", UNIT), ("arcsin", UNIT),
                       ("arccos", UNIT), ("arctan", REGULAR), ("sinh", REGULAR),
                       ("cosh", REGULAR), ("tanh", REGULAR), ("arcsinh", REGULAR),
                       ("arccosh", POS + 1), ("arctanh", UNIT), ("exp", REGULAR),
                       ("exp2", REGULAR), ("expm1", REGULAR), ("log", POS), ("log2", POS),
                       ("log10", POS), ("log1p", POS), ("sqrt", POS), ("square", REGULAR),
                       ("reciprocal", POS), ("negative", REGULAR), ("positive", REGULAR),
                       ("abs", REGULAR), ("sign", REGULAR), ("conj", REGULAR),
                       ("real", REGULAR), ("imag", REGULAR), ("angle", REGULAR),
                       ("isfinite", REGULAR), ("isnan", REGULAR), ("isinf", REGULAR),
                       ("logical_not", REGULAR)]:
    TABLE[_name] = unary(_domain)
for _name, _domain in [("cbrt", REGULAR), ("floor", REGULAR * 3), ("ceil", REGULAR * 3),
                       ("trunc", REGULAR * 3), ("rint", REGULAR * 3), ("fabs", REGULAR),
                       ("signbit", REGULAR), ("sinc", REGULAR), ("deg2rad", REGULAR),
                       ("rad2deg", REGULAR)]:
    TABLE[_name] = unary(_domain, complex_=False)
TABLE["round"] = unary(REGULAR * 3, complex_=False) + [c(REGULAR * 3, 1), c(
    np.array([0.5, 1.5, 2.5, -0.5]))]
TABLE["angle"] += [c(COMPLEX, deg=True), c(np.array([0j, -1 + 0j]))]
TABLE["abs"] += [c(np.array([0j, 1 + 1j, -2j]))]
TABLE["invert"] = [c(INTS), c(BOOLS)]

for _name in ["add", "subtract", "multiply", "divide", "power", "maximum", "minimum",
              "equal", "not_equal", "less", "less_equal", "greater", "greater_equal"]:
    TABLE[_name] = binary()
for _name in ["floor_divide", "mod", "fmod", "fmax", "fmin", "arctan2", "hypot",
              "logaddexp", "logaddexp2", "copysign", "logical_and", "logical_or",
              "logical_xor", "float_power"]:
    TABLE[_name] = binary(complex_=False)
TABLE["power"] += [c(np.array([0.0, 0.0, 1.0, 2.0, -2.0]), np.array([0.0, 2.0, 0.0, -1.0, 0.5])),
                   c(np.array([0.0, 2.0]), 0)]
TABLE["arctan2"] += [c(np.array([0.0, -0.0, 0.0, 1.0]), np.array([0.0, 0.0, -0.0, 0.0]))]
TABLE["divmod"] = [c(REGULAR * 3, POS), c(INTS, INTS_POS)]
for _name in ["bitwise_and", "bitwise_or", "bitwise_xor", "left_shift", "right_shift"]:
    TABLE[_name] = [c(INTS_POS, INTS_POS[::-1].copy()), c(INTS_POS, 2)] + (
        [c(BOOLS, BOOLS[::-1].copy())] if "shift" not in _name else [])
TABLE["where"] = [c(BOOLS, M, M_POS), c(BOOLS, M, 0.0), c(BOOLS[0], M, ROW), c(BOOLS, eager=True)]
TABLE["clip"] = [c(EDGES, 0.0, 1.0), c(EDGES, None, 0.5), c(EDGES, -1.0, None),
                 c(M, -0.5, M_POS), c(TIES, 2.0, 3.0), c(INTS, 0, 3)]

for _name in ["sum", "prod", "mean", "all", "any"]:
    TABLE[_name] = reductions()
for _name in ["max", "min", "ptp"]:
    TABLE[_name] = reductions(empty=False)
for _name in ["std", "var"]:
    TABLE[_name] = reductions() + [c(SPECIAL_ROWS, 1, ddof=1)]
TABLE["sum"] += [c(INTS, dtype=np.float64), c(M, 0, dtype=np.complex128)]
TABLE["argmax"] = TABLE["argmin"] = [c(M), c(SPECIAL_ROWS, 1), c(M, 0, keepdims=True),
                                     c(INTS)]
TABLE["cumsum"] = TABLE["cumprod"] = [c(M), c(SPECIAL_ROWS, 1), c(INTS, 0), c(EMPTY, 0),
                                      c(M, 0, dtype=np.complex128)]
TABLE["average"] = [c(M), c(M, 1), c(M, 1, M_POS[0]), c(M, None, M_POS),
                    c(M, 1, M_POS[0], True)]

# shapes and joining
TABLE.update({
    "reshape": [c(M, (3, 2)), c(M, (-1,)), c(M, (6, -1)), c(SCALAR, (1, 1)), c(EMPTY, (3, 0))],
    "broadcast_to": [c(ROW, (2, 3)), c(SCALAR, (2, 2))],
    "broadcast_arrays": [c(M, ROW), c(SCALAR, M)],
    "transpose": [c(BATCH), c(BATCH, (2, 0, 1)), c(M)],
    "swapaxes": [c(BATCH, 0, 2), c(M, -1, 0)],
    "moveaxis": [c(BATCH, 0, -1), c(BATCH, (0, 1), (2, 0))],
    "expand_dims": [c(M, 0), c(M, (0, 3)), c(SCALAR, -1)],
    "squeeze": [c(np.ones((1, 3, 1))), c(np.ones((1, 3, 1)), 0), c(np.ones((1, 3, 1)), (0, 2))],
    "ravel": [c(M), c(BATCH), c(SCALAR)],
    "tile": [c(M, 2), c(M, (2, 1, 2))],
    "repeat": [c(M, 2), c(M, 2, 1), c(ROW, [1, 0, 2], eager=True)],
    "flip": [c(M), c(M, 0), c(BATCH, (0, 2))],
    "fliplr": [c(M)],
    "flipud": [c(M)],
    "roll": [c(M, 1), c(M, 1, 1), c(M, (1, -1), (0, 1))],
    "rot90": [c(M), c(M, 3), c(BATCH, 1, (1, 2))],
    "pad": [c(M, 1), c(M, ((1, 0), (0, 2))), c(M, 1, constant_values=2.5),
            c(M, 1, mode="edge"), c(M, 1, mode="reflect")],
    "atleast_1d": [c(SCALAR), c(M)],
    "atleast_2d": [c(SCALAR), c(ROW)],
    "atleast_3d": [c(SCALAR), c(ROW), c(M)],
    "matrix_transpose": [c(BATCH), c(M)],
    "split": [c(BATCH, 2, 2), c(BATCH, [1, 3], 2), c(M, 2)],
    "array_split": [c(BATCH, 3, 2), c(M, [1], 1)],
    "take": [c(M, np.array([0, 5, 2])), c(M, np.array([2, 0]), 1), c(M, np.array([[1, 0]]), 0)],
    "take_along_axis": [c(M, np.array([[0, 2, 1], [1, 1, 0]]), 1),
                        c(M, np.array([[1, 0, 1]]), 0)],
    "sort": [c(M), c(M, 0), c(TIES, 1), c(INTS)],
    "argsort": [c(M), c(M, 0), c(INTS)],
    "nonzero": [c(WITH_ZERO, eager=True), c(INTS, eager=True)],
    "argwhere": [c(WITH_ZERO, eager=True)],
    "flatnonzero": [c(WITH_ZERO, eager=True)],
    "shape": [c(M, eager=True), c(SCALAR, eager=True)],
    "ndim": [c(M, eager=True), c(SCALAR, eager=True)],
    "size": [c(M, eager=True), c(M, 1, eager=True)],
    "broadcast_shapes": [c(call=lambda xp: xp.broadcast_shapes((2, 1), (3,)), eager=True)],
})
for _name in ["concatenate", "stack", "hstack", "vstack", "dstack", "column_stack"]:
    TABLE[_name] = [c(M, M_POS, call=lambda xp, x, y, n=_name: getattr(xp, n)([x, y])),
                    c(ROW, ROW * 2, call=lambda xp, x, y, n=_name: getattr(xp, n)((x, y)))]
TABLE["concatenate"] += [c(M, M_POS, call=lambda xp, x, y: xp.concatenate([x, y], 1)),
                         c(M, INTS, call=lambda xp, x, y: xp.concatenate([x, y], axis=None))]
TABLE["stack"] += [c(M, M_POS, call=lambda xp, x, y: xp.stack([x, y], -1))]

# products, diagonals, triangles
TABLE.update({
    "matmul": [c(M, M_POS.T.copy()), c(M, ROW), c(ROW, M.T.copy()), c(ROW, ROW), c(BATCH, BATCH.transpose(0, 2, 1).copy()),
               c(BATCH, RNG.uniform(size=(4, 2))), c(INTS, INTS.T.copy()), c(COMPLEX, M.T.copy())],
    "dot": [c(M, M_POS.T.copy()), c(ROW, ROW), c(M, ROW), c(SCALAR, M), c(BATCH, np.ones((4, 2)))],
    "vdot": [c(ROW, ROW * 2), c(COMPLEX, COMPLEX[::-1].copy()), c(M, M_POS)],
    "inner": [c(ROW, ROW * 2), c(M, M_POS), c(SCALAR, M)],
    "outer": [c(ROW, M.ravel()), c(M, ROW)],
    "tensordot": [c(BATCH, np.ones((4, 3))[None].repeat(2, 0)), c(M, M_POS, 2), c(M, M_POS.T.copy(), 1),
                  c(BATCH, M, ((0, 1), (0, 1)))],
    "kron": [c(M, M_POS), c(ROW, M)],
    "trace": [c(SQUARE), c(M, 1), c(BATCH, 0, 1, 2)],
    "diag": [c(SQUARE), c(ROW), c(SQUARE, 1), c(ROW, -1)],
    "diagflat": [c(ROW), c(M, 1)],
    "diagonal": [c(SQUARE), c(SQUARE, 1), c(BATCH, 0, 1, 2)],
    "tril": [c(M), c(M, 1), c(BATCH, -1)],
    "triu": [c(M), c(M, 1), c(BATCH, -1)],
    "einsum": [c(M, M_POS, call=lambda xp, x, y: xp.einsum("ij,kj->ik", x, y)),
               c(M, call=lambda xp, x: xp.einsum("ij->j", x)),
               c(SQUARE, call=lambda xp, x: xp.einsum("ii", x)),
               c(BATCH, BATCH, call=lambda xp, x, y: xp.einsum("bij,bkj->bik", x, y)),
               c(M, ROW, call=lambda xp, x, y: xp.einsum("...j,j", x, y))],
})

# creation (values and dtypes; funcgrad's arrays are what jnp's are, on the CPU)
TABLE.update({
    "asarray": [c(call=lambda xp: xp.asarray([1, 2])), c(call=lambda xp: xp.asarray(2.5)),
                c(M, call=lambda xp, x: xp.asarray(x, dtype=np.float32))],
    "array": [c(call=lambda xp: xp.array([[1.0, 2.0]])), c(call=lambda xp: xp.array(True))],
    "zeros": [c(call=lambda xp: xp.zeros((2, 3))), c(call=lambda xp: xp.zeros(3, np.int32))],
    "ones": [c(call=lambda xp: xp.ones((2,)))],
    "empty": [c(call=lambda xp: xp.empty((2, 3)).shape, eager=True)],
    "full": [c(call=lambda xp: xp.full((2,), 1.5)), c(call=lambda xp: xp.full(3, 2))],
    "zeros_like": [c(M), c(INTS)],
    "ones_like": [c(M), c(INTS, dtype=np.float64)],
    "empty_like": [c(M, call=lambda xp, x: xp.empty_like(x).shape, eager=True)],
    "full_like": [c(M, 2.5), c(INTS, 1.5)],
    "arange": [c(call=lambda xp: xp.arange(5)), c(call=lambda xp: xp.arange(0, 1, 0.25)),
               c(call=lambda xp: xp.arange(3, 0, -1))],
    "linspace": [c(call=lambda xp: xp.linspace(0, 1, 5)),
                 c(call=lambda xp: xp.linspace(0, 1, 4, endpoint=False))],
    "logspace": [c(call=lambda xp: xp.logspace(0, 2, 3)), c(call=lambda xp: xp.logspace(0, 3, 4, base=2))],
    "eye": [c(call=lambda xp: xp.eye(3)), c(call=lambda xp: xp.eye(2, 3, 1))],
    "identity": [c(call=lambda xp: xp.identity(2))],
    "astype": [c(M, np.float32, call=lambda xp, x, t: xp.astype(x, t)),
               c(M, call=lambda xp, x: xp.astype(x, np.int64))],
    "result_type": [c(call=lambda xp: str(xp.result_type(np.float32, np.int64)), eager=True)],
    "issubdtype": [c(call=lambda xp: xp.issubdtype(np.float32, np.floating), eager=True)],
})

# numpy.linalg
TABLE.update({
    "linalg.solve": [c(SQUARE, M.T.copy()), c(SQUARE, ROW)],
    "linalg.inv": [c(SQUARE), c(np.stack([SQUARE, SPD]))],
    "linalg.det": [c(SQUARE), c(np.zeros((3, 3))), c(np.array([[1.0, 2.0], [2.0, 4.0]]))],
    "linalg.slogdet": [c(SQUARE), c(-SQUARE)],
    "linalg.cholesky": [c(SPD)],
    "linalg.eigh": [c(SPD, call=lambda xp, a: _squared_vectors(xp.linalg.eigh(a)))],
    "linalg.eigvalsh": [c(SPD)],
    "linalg.svd": [c(M, call=lambda xp, a: _squared_vectors(xp.linalg.svd(a, full_matrices=False)))],
    "linalg.svdvals": [c(M), c(SQUARE)],
    "linalg.qr": [c(M.T.copy(), call=lambda xp, a: _qr_invariants(xp.linalg.qr(a)))],
    "linalg.pinv": [c(M), c(SQUARE)],
    "linalg.norm": [c(M), c(ROW), c(WITH_ZERO, axis=1), c(M, 1), c(M, np.inf), c(M, "fro"),
                    c(M, "nuc"), c(ROW, 3), c(ROW, 0), c(ROW, -np.inf)],
    "linalg.vector_norm": [c(M), c(M, axis=1), c(M, ord=1), c(M, ord=np.inf), c(ROW, ord=3)],
    "linalg.matrix_norm": [c(M), c(SQUARE, ord=1), c(SQUARE, ord="nuc"), c(BATCH)],
    "linalg.matrix_power": [c(SQUARE, 3), c(SQUARE, 0), c(SQUARE, -2)],
    "linalg.multi_dot": [c(M, M_POS.T.copy(), M, call=lambda xp, a, b, d: xp.linalg.multi_dot([a, b, d]))],
    "linalg.matmul": [c(M, M_POS.T.copy())],
    "linalg.tensordot": [c(M, M_POS.T.copy(), axes=1)],
    "linalg.outer": [c(ROW, ROW * 2)],
    "linalg.trace": [c(SQUARE), c(BATCH)],
    "linalg.diagonal": [c(SQUARE), c(BATCH, offset=1)],
    "linalg.vecdot": [c(M, M_POS), c(COMPLEX, COMPLEX[::-1].copy())],
})


def _squared_vectors(decomposition: tuple) -> tuple:
    """Values and squared vectors: invariant under the vectors' sign choices."""
    if len(decomposition) == 2:
        return decomposition[0], decomposition[1] ** 2
    u, s, vh = decomposition
    return s, u ** 2, vh ** 2


def _qr_invariants(qr: tuple) -> tuple:
    q, r = qr
    return q @ r, r ** 2


# numpy.fft
_SIGNAL = RNG.uniform(-1, 1, (2, 8))
TABLE.update({
    "fft.fft": [c(_SIGNAL), c(_SIGNAL + 1j * _SIGNAL[::-1]), c(_SIGNAL, 6), c(_SIGNAL, norm="ortho")],
    "fft.ifft": [c(_SIGNAL + 0j), c(_SIGNAL, norm="forward")],
    "fft.rfft": [c(_SIGNAL), c(_SIGNAL, 5)],
    "fft.irfft": [c(_SIGNAL[:, :5] + 1j * _SIGNAL[:, 3:]), c(_SIGNAL[:, :5] + 0j, 8)],
    "fft.fft2": [c(_SIGNAL)], "fft.ifft2": [c(_SIGNAL + 0j)], "fft.fftn": [c(BATCH)],
    "fft.ifftn": [c(BATCH + 0j)], "fft.rfft2": [c(_SIGNAL)], "fft.rfftn": [c(BATCH)],
    "fft.irfft2": [c(_SIGNAL[:, :5] + 0j)], "fft.irfftn": [c(BATCH[..., :3] + 0j)],
    "fft.fftfreq": [c(call=lambda xp: xp.fft.fftfreq(8, 0.5))],
    "fft.rfftfreq": [c(call=lambda xp: xp.fft.rfftfreq(9))],
    "fft.fftshift": [c(_SIGNAL), c(_SIGNAL, axes=1)], "fft.ifftshift": [c(_SIGNAL)],
})

# scipy.special (jax.scipy.special)
TABLE.update({
    "special.erf": unary(REGULAR, complex_=False), "special.erfc": unary(REGULAR, complex_=False),
    "special.ndtr": unary(REGULAR, complex_=False), "special.gammaln": unary(POS, complex_=False),
    "special.digamma": unary(POS, complex_=False), "special.expit": unary(REGULAR, complex_=False),
    "special.logit": unary((UNIT + 1) / 2, complex_=False),
    "special.polygamma": [c(1, POS), c(2, POS), c(0, POS)],
    "special.logsumexp": [c(M), c(M, 1), c(np.array([-INF, -INF])), c(M, 0, M_POS),
                          c(M, 1, keepdims=True)],
    "special.softmax": [c(M, axis=1), c(M), c(np.array([[-INF, 0.0, 1.0]]), axis=1)],
    "special.log_softmax": [c(M, axis=1), c(M, axis=0)],
    "special.xlogy": [c(np.array([0.0, 0.0, 1.0, 2.0]), np.array([0.0, 2.0, 3.0, 0.5])), c(M_POS, POS[:3])],
    "special.xlog1py": [c(np.array([0.0, 0.0, 1.0]), np.array([-1.0, 2.0, 3.0])), c(M_POS, POS[:3])],
})

# aliases: the same function as the name they stand for, whose cases cover them
ALIASES = dict([("absolute", "abs"), ("acos", "arccos"), ("asin", "arcsin"),
                        ("atan", "arctan"), ("acosh", "arccosh"), ("asinh", "arcsinh"),
                        ("atanh", "arctanh"), ("atan2", "arctan2"), ("true_divide", "divide"),
                        ("pow", "power"), ("remainder", "mod"), ("conjugate", "conj"),
                        ("around", "round"), ("radians", "deg2rad"), ("degrees", "rad2deg"),
                        ("amax", "max"), ("amin", "min"), ("bitwise_not", "invert"),
                        ("bitwise_invert", "invert"), ("fix", "trunc"),
                        ("special.psi", "special.digamma")])

# -- conventions that legitimately differ (each case is still compared in every other way) --
_INF_PAIRS = ("at infinite arguments funcgrad's softmax weight exp(x - out) is 0 or, for two "
              "-infs, 1/2; JAX replaces infinities by 0 in that weight (exp(x) at y = inf, NaN "
              "for two -infs)")
_COMPLEX_ZERO = ("at 0 + 0j, where the value is a complex infinity: funcgrad's -g out / y "
                 "gives nan + nanj, JAX's formula signed infinities")
_NAN_GROUPS = ("a group holding NaN: funcgrad's tie weights (x == max) / count are 0/0 = NaN, as "
               "PyTorch's amax; JAX 0.10's VJP gives 0 there (its JVP NaN, as funcgrad's)")
for _name, _i, _what, _why in [
        ("abs", 0, "vjp,jvp", "at 0 funcgrad's derivative is sign(x) = 0, the mean of the "
         "one-sided slopes; JAX's select(x >= 0) gives 1 (and -1 at NaN, funcgrad NaN)"),
        ("fabs", 0, "vjp,jvp", "as abs: funcgrad sign(x), 0 at 0; JAX 1 at 0 and -1 at NaN"),
        ("angle", 0, "vjp,jvp", "for real x funcgrad's angle is a constant (derivative 0); JAX "
         "differentiates atan2(0, x), NaN at x = 0 and at NaN"),
        ("arccosh", 0, "vjp,jvp", "below the domain (x < 1, where the value is NaN) JAX's "
         "derivative is finite for x <= -1; funcgrad's 1/(sqrt(x - 1) sqrt(x + 1)) is NaN"),
        ("repeat", 2, "raised", "jax.numpy.repeat takes per-element repeats as an array only; "
         "funcgrad takes numpy's list"),
        ("arccosh", 2, "vjp,jvp", "JAX's complex derivative 1/sqrt(z**2 - 1) is on the wrong "
         "branch for Re z < 0; funcgrad's 1/(sqrt(z - 1) sqrt(z + 1)) agrees with finite "
         "differences of numpy's arccosh"),
        ("copysign", 0, "vjp,jvp", "at x = -0 and NaN: funcgrad's d/dx is copysign(1, x) "
         "copysign(1, y) (by sign bit: -0 negative, NaN positive); JAX's |x| slope is 1 for "
         "x >= 0 and -1 at NaN"),
        ("divide", 6, "vjp,jvp", _COMPLEX_ZERO), ("reciprocal", 2, "vjp,jvp", _COMPLEX_ZERO),
        ("power", 6, "vjp,jvp", _COMPLEX_ZERO),
        ("power", 0, "vjp,jvp", "at x = y = 0 (and NaN ** 0) funcgrad's x-derivative is 0 "
         "where y == 0, as x ** 0 is constant; JAX 0.10's y x ** (y - 1) is 0 * inf = NaN"),
        ("power", 7, "vjp,jvp", "0 ** 0: see power's first case"),
        ("float_power", 0, "vjp,jvp", "0 ** 0: see power's first case"),
        ("hypot", 0, "vjp,jvp", "at the origin funcgrad's x / hypot is 0/0 = NaN, JAX's (the "
         "derivative of its max/min scaling) 1 for one argument; at infinities funcgrad's "
         "x / inf is 0, JAX's NaN"),
        ("logaddexp", 0, "vjp,jvp", _INF_PAIRS), ("logaddexp2", 0, "vjp,jvp", _INF_PAIRS),
        ("max", 1, "vjp", _NAN_GROUPS), ("max", 2, "vjp", _NAN_GROUPS),
        ("min", 1, "vjp", _NAN_GROUPS), ("min", 2, "vjp", _NAN_GROUPS),
        ("ptp", 1, "vjp", _NAN_GROUPS), ("ptp", 2, "vjp", _NAN_GROUPS),
        ("mean", 6, "dtype", "the mean of bools is float64 in numpy (and funcgrad), float32 in "
         "JAX"), ("std", 6, "dtype", "as mean: float64 for bools in numpy, float32 in JAX"),
        ("var", 6, "dtype", "as mean: float64 for bools in numpy, float32 in JAX"),
        ("var", 8, "jvp", "the variance of nothing is 0/0 = NaN, and so is funcgrad's "
         "tangent; JAX's tangent is 0"), ("var", 9, "jvp", "see var's empty case"),
        ("floor_divide", 0, "values", "where exactly one operand is infinite funcgrad follows "
         "the Array API standard (inf // 2 == inf, 1 // -inf == -0.0: x / y, issue 22); "
         "JAX gives numpy's nan and -1.0"),
        ("mod", 0, "vjp,jvp", "at x = +-inf (where the value is NaN) d/dy is -floor(x / y): "
         "numpy's inf // y is NaN, JAX's floor(inf / y) +-inf"),
        ("reciprocal", 1, "dtype,values", "numpy's reciprocal keeps integer dtypes (1 // x), "
         "jax.numpy's promotes to float"),
        ("result_type", 0, "values", "JAX's promotion lattice: float32 with int64 is float32 "
         "(numpy, and funcgrad: float64)"),
        ("special.digamma", 0, "values,vjp,jvp", "at the poles 0 and -0 scipy's (and "
         "funcgrad's) digamma is -inf and inf, JAX's NaN"),
        ("special.digamma", 1, "values", "integers: see digamma's poles at 0"),
        ("special.gammaln", 0, "values,vjp,jvp", "gammaln(-inf) is -inf in scipy (and "
         "funcgrad), inf in JAX"),
        ("special.ndtr", 1, "raised", "jax.scipy.special.ndtr rejects integer input; scipy's "
         "and funcgrad's promote it"),
        ("special.xlogy", 0, "vjp,jvp", "d/dx at x = 0: funcgrad's rule gives 0 instead of "
         "log(y), a defect of issue 15's functional-core list, fixed there"),
        ("special.xlog1py", 0, "vjp,jvp", "d/dx at x = 0: 0 instead of log1p(y), as xlogy")]:
    known(TABLE[_name], _i, _what, _why)

# the jax.numpy name of a funcgrad name where they differ
JAX_NAMES = {"fix": "trunc", "special.psi": "special.digamma"}

# -- names left out, and why ---------------------------------------------------------------
NOT_COMPARED = {
    "getitem": "x[idx] (funcgrad's Array.__getitem__ as a function): test_indexing.py",
    "normalize_axis": "an axis helper (numpy.lib's normalize_axis_tuple), not an array function",
    "normalize_axis_tuple": "an axis helper, not an array function",
    "logical_and_bitwise": "the operator & of Arrays (bitwise_and): compared as bitwise_and",
    "logical_or_bitwise": "the operator | of Arrays (bitwise_or): compared as bitwise_or",
    "logical_xor_bitwise": "the operator ^ of Arrays (bitwise_xor): compared as bitwise_xor",
    "special.softplus": "jax has it as jax.nn.softplus, not in jax.scipy.special",
}
