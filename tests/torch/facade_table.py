"""The cases of test_facade_vs_pytorch.py: for each facade name, the calls to compare with
PyTorch, over inputs holding the values where conventions bite, plus the names not
compared and the conventions that legitimately differ (each with its reason).

Numpy only: each library makes its own tensors from the arrays (`Case`, `DT`, `Const`).
"""
from __future__ import annotations

import math
from typing import Any, Callable, NamedTuple

import numpy as np

NAN, INF = math.nan, math.inf


class Case(NamedTuple):
    """One call: ``args``/``kwargs`` with numpy arrays standing for tensors (floating ones
    require grad). The op is called as a function, a method and in place, whichever the
    name has; ``call(T, *args, **kwargs)`` replaces that for calls of another form.
    ``grad``: compare gradients too."""
    args: tuple
    kwargs: dict = {}
    label: str = ""
    grad: bool = True
    call: Callable | None = None
    differs: tuple = ()  # (what, why): a convention that legitimately differs, see `known`


def c(*args: Any, label: str = "", grad: bool = True, call: Callable | None = None,
      **kwargs: Any) -> Case:
    return Case(args, kwargs, label, grad, call)


def known(cases: list, index: int, what: str, why: str) -> None:
    """Mark ``cases[index]`` as differing from PyTorch in ``what`` (comma-separated:
    values, grad, name, backward; ``inplace:`` limits one to the in-place form) for the
    reason ``why``. Everything else about the case is still compared."""
    old = cases[index].differs
    aspects = tuple(what.split(",")) + (old[0] if old else ())
    cases[index] = cases[index]._replace(differs=(aspects, why + (f"; {old[1]}" if old
                                                                   else "")))


class DT(NamedTuple):
    """A dtype argument, named: each library gets its own (``T.float64``)."""
    name: str


class Const(NamedTuple):
    """An array argument that does not require grad (weights, targets PyTorch cannot
    differentiate)."""
    value: np.ndarray


F64, F32, I64, I32 = DT("float64"), DT("float32"), DT("int64"), DT("int32")


def a(values: Any, dtype: Any = None) -> np.ndarray:
    """An input array: float64 (complex128 for complex values) unless ``dtype`` is given."""
    if dtype is None:
        dtype = np.complex128 if np.iscomplexobj(values) else np.float64
    return np.asarray(values, dtype=dtype)


# -- the inputs ----------------------------------------------------------------------------

EDGES = a([-INF, -3.0, -1.0, -0.5, -0.0, 0.0, 0.5, 1.0, 3.0, INF, NAN])
RAND = np.random.RandomState(0)
M23 = RAND.uniform(-2, 2, (2, 3))
M23_F32 = M23.astype(np.float32)
POS = RAND.uniform(0.2, 2, (2, 3))
UNIT = RAND.uniform(-0.9, 0.9, (2, 3))
TIES = a([[1.0, 3.0, 3.0], [2.0, 2.0, -1.0]])
WITH_NAN = a([[1.0, NAN, 3.0], [NAN, 2.0, NAN]])
WITH_ZERO = a([[0.0, 0.0, 0.0], [0.0, 1.0, -2.0]])
INTS = a([[-2, 0, 3], [1, 5, -7]], np.int64)
BOOLS = a([[True, False, True], [False, False, True]], np.bool_)
EMPTY = a(np.zeros((0, 3)))
SCALAR = a(1.5)


def unary_inputs(domain: np.ndarray = M23) -> list:
    """The inputs of an elementwise unary op: the edge values, a float32 and a float64
    matrix in its domain, an empty tensor, a 0-d tensor and integers (promotion)."""
    return [c(EDGES), c(domain.astype(np.float32)), c(domain), c(EMPTY), c(SCALAR), c(INTS)]


BINARY_INPUTS = [
    (M23, RAND.uniform(-2, 2, (2, 3))),                       # same shape
    (M23, RAND.uniform(0.5, 2, (3,))),                        # broadcasting
    (RAND.uniform(-2, 2, (2, 1)), RAND.uniform(-2, 2, (1, 3))),
    (TIES, a([[1.0, 3.0, 0.0], [2.0, 5.0, -1.0]])),           # ties
    (EDGES, EDGES[::-1].copy()),                              # inf, NaN, signed zeros
    (M23_F32, M23),                                           # float32 with float64
    (M23, INTS),                                              # float with int
    (INTS, a([[1, 2, 3], [4, -5, 6]], np.int64)),             # integers
    (SCALAR, M23),                                            # 0-d with 2-d
    (EMPTY, a([1.0, 2.0, 3.0])),
]
NUMBERS = [2, 0.5, -1.5, 0, True]  # Python-number second operands


def binary_inputs(inputs: list = BINARY_INPUTS, numbers: list = NUMBERS) -> list:
    return ([c(x, y) for x, y in inputs] + [c(M23, n) for n in numbers]
            + [c(INTS, n) for n in numbers])


def dims_inputs(empty_ok: bool = True) -> list:
    """The inputs of a reduction: all of it, one dim, two dims kept, ties, NaN, zeros,
    integers, bools, a 0-d tensor, and an empty tensor (all of it and along its empty
    dim) when the reduction has an identity."""
    cases = [c(M23), c(M23, 1), c(M23, (0, 1), True), c(M23, -1, keepdim=True), c(TIES),
             c(TIES, 1), c(WITH_NAN), c(WITH_NAN, 1), c(WITH_ZERO), c(WITH_ZERO, 0),
             c(INTS), c(INTS, 0), c(BOOLS), c(SCALAR), c(SCALAR, 0), c(M23_F32, 0)]
    return cases + ([c(EMPTY), c(EMPTY, 0), c(EMPTY, 1)] if empty_ok else [c(EMPTY, 1)])


def _pos(x: np.ndarray) -> np.ndarray:
    return np.abs(x) + 0.2


IDX = a([[0, 2, 1], [1, 0, 0]], np.int64)
MASK = a([[True, False, True], [False, True, False]], np.bool_)
SQUARE = RAND.uniform(-1, 1, (3, 3)) + 3 * np.eye(3)
SPD = SQUARE @ SQUARE.T
BATCH = RAND.uniform(-1, 1, (2, 3, 4))
PROBS = RAND.uniform(0.05, 0.95, (2, 3))
LABELS = a([2, 0], np.int64)
NUMS = [2, 0.5, -1.5]


TABLE: dict = {}
# elementwise unary: the edge values, a matrix in the domain, empty, 0-d, integers
for _name, _domain in [("exp", M23), ("exp2", M23), ("expm1", M23), ("log", POS),
                       ("log2", POS), ("log10", POS), ("log1p", POS), ("sqrt", POS),
                       ("rsqrt", POS), ("sin", M23), ("cos", M23), ("tan", UNIT),
                       ("asin", UNIT), ("acos", UNIT), ("atan", M23), ("sinh", M23),
                       ("cosh", M23), ("tanh", M23), ("asinh", M23), ("acosh", POS + 1),
                       ("atanh", UNIT), ("sigmoid", M23), ("logit", (UNIT + 1) / 2),
                       ("erf", M23), ("erfc", M23), ("reciprocal", POS), ("abs", M23),
                       ("neg", M23), ("sign", M23), ("floor", M23 * 3), ("ceil", M23 * 3),
                       ("round", M23 * 3), ("trunc", M23 * 3), ("square", M23),
                       ("relu", M23), ("conj", M23), ("angle", M23),
                       ("isnan", M23), ("isinf", M23), ("isfinite", M23),
                       ("signbit", M23), ("logical_not", M23)]:
    TABLE[_name] = [c(*case.args) for case in unary_inputs(_domain)] + [c(WITH_ZERO)]
TABLE["real"] = TABLE["imag"] = [c(M23), c(M23 + 1j * POS), c(INTS)]
TABLE["conj"] += [c(M23 + 1j * POS)]
TABLE["abs"] += [c(M23 + 1j * POS), c(a([0j, 1 + 1j]))]
TABLE["bitwise_not"] = [c(INTS), c(BOOLS), c(M23)]
TABLE["round"] += [c(M23 * 3, decimals=1), c(a([0.5, 1.5, 2.5, -0.5]))]
TABLE["logit"] += [c((UNIT + 1) / 2, 0.1), c(EDGES, 0.25)]

# elementwise binary: broadcasting, ties, edge values, mixed dtypes, numbers
for _name in ["add", "sub", "mul", "div", "pow", "atan2", "maximum", "minimum", "remainder",
              "fmod", "floor_divide", "float_power", "eq", "ne", "lt", "le", "gt", "ge"]:
    TABLE[_name] = binary_inputs()
for _name in ["logical_and", "logical_or", "logical_xor"]:  # tensor operands only
    TABLE[_name] = binary_inputs(numbers=[])
TABLE["atan2"] = binary_inputs(numbers=[])  # torch.atan2 takes tensors only
TABLE["maximum"] = TABLE["minimum"] = [case for case in binary_inputs()
                                       if all(isinstance(x, np.ndarray) for x in case.args)]
TABLE["pow"] += [c(a([0.0, 0.0, 1.0, 2.0]), a([0.0, 2.0, 0.0, -1.0])), c(INTS, -1),
                 c(a([-2.0, 0.0, 2.0]), 0.5), c(a([0.0, 0.0]), 0), c(2.0, POS, label="number base",
                                                                   call=lambda T, n, x: T.pow(n, x))]
TABLE["atan2"] += [c(a([0.0, -0.0, 0.0, 1.0, INF]), a([0.0, 0.0, -0.0, 0.0, 1.0]))]
TABLE["fmod"] += [c(a([-3.0, 3.0, 5.5, -5.5]), a([2.0, -2.0, 2.0, 2.0]))]
TABLE["remainder"] += [c(a([-3.0, 3.0, 5.5, -5.5]), a([2.0, -2.0, 2.0, 2.0]))]
TABLE["div"] += [c(M23, POS, rounding_mode="trunc"), c(M23, POS, rounding_mode="floor"),
                 c(INTS, a([2, -3, 4], np.int64), rounding_mode="floor"),
                 c(INTS, a([2, -3, 4], np.int64), rounding_mode="trunc"), c(INTS, 2)]
TABLE["add"] += [c(M23, POS, alpha=2.0), c(M23, 2, alpha=-1)]
TABLE["sub"] += [c(M23, POS, alpha=0.5)]
TABLE["rsub"] = [c(M23, POS), c(M23, 2), c(M23, POS, alpha=3.0), c(INTS, 1.5)]
for _name in ["bitwise_and", "bitwise_or", "bitwise_xor"]:
    TABLE[_name] = [c(INTS, a([3, 1, 2], np.int64)), c(BOOLS, BOOLS[::-1].copy()),
                    c(INTS, 6), c(M23, M23)]
TABLE["lerp"] = [c(M23, POS, 0.3), c(M23, POS, UNIT), c(M23, POS, a(0.7)), c(EDGES, EDGES, 0.5)]
TABLE["addcmul"] = [c(M23, POS, UNIT), c(M23, POS, UNIT, value=-0.5), c(M23, a([1.0, 2, 3]), POS)]
TABLE["addcdiv"] = [c(M23, UNIT, POS), c(M23, UNIT, POS, value=2.0)]
TABLE["equal"] = [c(M23, M23), c(M23, POS), c(M23, M23[:1]), c(INTS, INTS)]
TABLE["clamp"] = [c(EDGES, 0.5), c(EDGES, None, 0.5), c(EDGES, 0.0, 1.0), c(EDGES, 1.0, 0.0),
                  c(EDGES, min=-1.0), c(EDGES, max=-1.0), c(M23, UNIT, POS),
                  c(EDGES, np.zeros(11), np.ones(11)), c(EDGES, np.ones(11), np.zeros(11)),
                  c(M23, min=UNIT), c(M23, max=UNIT), c(a([0.5, 0.5, 0.5]), a([NAN, 0, 0]),
                                                         a([1.0, NAN, 1])),
                  c(INTS, 0, 3), c(INTS, 0.5), c(M23_F32, 0.0, 1.0), c(EMPTY, 0.0, 1.0),
                  c(SCALAR, 0.0, 1.0), c(M23, a(0.5), a([1.0, 2.0, 0.0]))]
TABLE["clamp_min"] = [c(EDGES, 0.5), c(M23, UNIT), c(INTS, 1), c(EDGES, -INF)]
TABLE["clamp_max"] = [c(EDGES, 0.5), c(M23, UNIT), c(INTS, 1), c(EDGES, INF)]
TABLE["where"] = [c(MASK, M23, POS), c(MASK, M23, 0.0), c(MASK, 1.0, M23),
                  c(MASK[0], M23, a(2.0)), c(MASK, M23_F32, M23), c(MASK, INTS, M23),
                  c(MASK), c(MASK, M23, POS, call=lambda T, m, x, y: x.where(m, y))]

# reductions, scans, softmax, norms
for _name in ["sum", "mean", "prod", "nansum", "logsumexp", "amax", "amin", "all", "any",
              "count_nonzero", "var", "std"]:
    TABLE[_name] = dims_inputs(_name not in ("amax", "amin", "logsumexp"))
# torch.prod takes one dim only
TABLE["prod"] = [case for case in TABLE["prod"] if not any(isinstance(x, tuple)
                                                           for x in case.args)]
TABLE["logsumexp"] = [case for case in TABLE["logsumexp"] if len(case.args) > 1] + [
    c(a([-INF, -INF]), 0), c(a([INF, 1.0]), 0)]
for _name in ["sum", "mean", "prod", "nansum"]:
    TABLE[_name] += [c(INTS, dtype=F64), c(M23_F32, 1, dtype=F64)]
TABLE["var"] += [c(M23, 1, unbiased=False), c(M23, 1, correction=0), c(M23, 1, True, True),
                 c(a([1.0]), 0)]
TABLE["std"] += [c(M23, 1, unbiased=False), c(a([2.0, 2.0, 2.0])), c(a([1.0]), 0)]
TABLE["max"] = TABLE["min"] = (
    [c(x) for x in (M23, TIES, WITH_NAN, a([3.0, 3.0, 3.0]), a([-INF, -INF]), INTS,
                    SCALAR, EMPTY)]
    + [c(x, d) for x in (M23, TIES, WITH_NAN, INTS, a([[INF, 1.0, INF]])) for d in (0, 1)]
    + [c(TIES, 1, True), c(SCALAR, 0), c(EMPTY, 1), c(EMPTY, 0), c(TIES, TIES[::-1].copy())])
TABLE["argmax"] = TABLE["argmin"] = [c(M23), c(M23, 1), c(TIES, 1, True), c(WITH_NAN, 1),
                                     c(INTS), c(EMPTY), c(EMPTY, 1)]
TABLE["cumsum"] = TABLE["cumprod"] = [c(M23, 0), c(M23, 1), c(WITH_ZERO, 1), c(INTS, 0),
                                      c(EMPTY, 0), c(SCALAR, 0), c(M23_F32, -1),
                                      c(M23, 1, dtype=F32), c(WITH_NAN, 1)]
TABLE["softmax"] = TABLE["log_softmax"] = [
    c(M23, 1), c(M23, 0), c(M23_F32, -1), c(a([[-INF, 0.0, 1.0], [INF, 1.0, 0.0]]), 1),
    c(a([[-INF, -INF]]), 1), c(EMPTY, 1), c(SCALAR, 0), c(M23_F32, 1, F64),
    c(WITH_NAN, 1)]
TABLE["norm"] = [c(x, p) for x in (M23, WITH_ZERO, a([0.0, 0.0]), TIES, WITH_NAN, EMPTY)
                 for p in (2, 1, 3, 0.5, INF, -INF, 0)] + [
    c(M23, 2, 1), c(WITH_ZERO, 2, 1, True), c(M23, "fro"), c(M23, "fro", (0, 1)),
    c(M23, "nuc"), c(SCALAR), c(M23_F32)]

# shapes, joining, indexing
TABLE.update({
    "reshape": [c(M23, (3, 2)), c(M23, (-1,)), c(M23, (-1, 6)), c(SCALAR, (1,)),
                c(EMPTY, (3, 0)), c(M23, (4, 2)), c(M23, (-1, -1)),
                c(M23, call=lambda T, x: x.reshape(3, 2))],
    "Tensor.view": [c(M23, 3, 2), c(M23, -1), c(M23, (6, 1)), c(M23, 4, 2)],
    "Tensor.view_as": [c(M23, a(np.zeros((3, 2))))],
    "Tensor.reshape_as": [c(M23, a(np.zeros((6,))))],
    "flatten": [c(M23), c(BATCH, 1), c(BATCH, 0, 1), c(SCALAR), c(EMPTY)],
    "unflatten": [c(BATCH, 2, (2, 2)), c(BATCH, -1, (-1, 2))],
    "squeeze": [c(a(np.ones((1, 3, 1)))), c(a(np.ones((1, 3, 1))), 0), c(M23, 0),
                c(a(np.ones((1, 3, 1))), (0, 2)), c(SCALAR)],
    "unsqueeze": [c(M23, 0), c(M23, -1), c(SCALAR, 0), c(M23, 3)],
    "t": [c(M23), c(a([1.0, 2.0])), c(SCALAR), c(BATCH)],
    "transpose": [c(BATCH, 0, 2), c(M23, -1, -2), c(SCALAR, 0, -1)],
    "permute": [c(BATCH, (2, 0, 1)), c(BATCH, (-1, 0, 1)), c(BATCH, (0, 1)),
                c(BATCH, call=lambda T, x: x.permute(2, 0, 1))],
    "movedim": [c(BATCH, 0, 2), c(BATCH, (0, 1), (2, 0))],
    "Tensor.expand": [c(a([[1.0], [2.0]]), 2, 3), c(a([1.0, 2.0]), 3, -1), c(M23, 4, 2)],
    "Tensor.expand_as": [c(a([[1.0], [2.0]]), M23)],
    "broadcast_to": [c(a([1.0, 2.0, 3.0]), (2, 3)), c(SCALAR, (2, 2))],
    "Tensor.repeat": [c(M23, 2, 1), c(a([1.0, 2.0]), 2, 2)],
    "tile": [c(M23, (2,)), c(M23, (2, 1, 2))],
    "flip": [c(M23, (0,)), c(M23, (0, 1)), c(M23, (-1,))],
    "roll": [c(M23, 1), c(M23, 1, 1), c(M23, (1, -1), (0, 1))],
    "clone": [c(M23), c(INTS)],
    "tril": [c(M23), c(M23, 1), c(BATCH, -1)],
    "triu": [c(M23), c(M23, 1), c(BATCH, -1)],
    "diagonal": [c(SQUARE), c(SQUARE, 1), c(BATCH, 0, 1, 2)],
    "diag": [c(SQUARE), c(a([1.0, 2.0])), c(SQUARE, -1), c(a([1.0, 2.0]), 1)],
    "trace": [c(SQUARE), c(M23)],
    "narrow": [c(M23, 1, 1, 2), c(M23, 0, 0, 1)],
    "as_strided": [c(M23, (2, 2), (1, 3)), c(M23, (3,), (2,), 1), c(M23, (2, 2), (0, 1))],
    "Tensor.as_strided": [c(M23, (3, 2), (1, 3)), c(M23, (2, 3), (3, 1), 0),
                          c(M23, (10, 10), (6, 1))],
    "Tensor.unfold": [c(M23, 1, 2, 1), c(M23, 0, 2, 1), c(M23, 1, 3, 2), c(M23, -1, 2, 2),
                      c(a(1.5), 0, 1, 1), c(M23, 1, 4, 1)],
    "view_as_real": [c(M23 + 2j * M23), c(a([1.0 + 2.0j])), c(M23)],
    "view_as_complex": [c(RAND.uniform(-1, 1, (3, 2))), c(RAND.uniform(-1, 1, (2, 2, 2))),
                        c(M23), c(INTS[:, :2])],
    "stack": [c(M23, POS, call=lambda T, x, y: T.stack([x, y])),
              c(M23, POS, call=lambda T, x, y: T.stack([x, y], -1)),
              c(M23, INTS, call=lambda T, x, y: T.stack([x, y], 1))],
    "hstack": [c(M23, POS, call=lambda T, x, y: T.hstack([x, y])),
               c(a([1.0]), a([2.0, 3.0]), call=lambda T, x, y: T.hstack([x, y]))],
    "vstack": [c(M23, POS, call=lambda T, x, y: T.vstack([x, y])),
               c(a([1.0, 2.0]), a([2.0, 3.0]), call=lambda T, x, y: T.vstack([x, y]))],
    "split": [c(BATCH, 2, 2), c(BATCH, [1, 3], -1), c(M23, 1), c(M23, [1, 1])],
    "chunk": [c(BATCH, 2, 2), c(BATCH, 3, -1), c(M23, 2)],
    "unbind": [c(M23), c(M23, 1)],
    "gather": [c(M23, 1, IDX), c(M23, 0, IDX[:, :2]), c(M23, 1, IDX.astype(np.float64))],
    "index_select": [c(M23, 1, a([2, 0, 2], np.int64)), c(M23, 0, a([1], np.int64))],
    "masked_fill": [c(M23, MASK, 0.0), c(M23, MASK[0], -1.5), c(M23, MASK, a(2.0))],
    "masked_select": [c(M23, MASK), c(M23, MASK[0])],
    "scatter": [c(M23, 1, IDX[:, :2], POS[:, :2]), c(M23, 0, IDX[:1], 2.0),
                c(M23, 1, IDX[:, :2], Const(POS))],
    "scatter_add": [c(M23, 1, IDX, POS), c(M23, 0, IDX, POS)],
    "Tensor.__getitem__": [
        c(M23, call=lambda T, x: x[0]), c(M23, call=lambda T, x: x[:, 1:]),
        c(M23, call=lambda T, x: x[..., None]), c(M23, call=lambda T, x: x[[1, 0, 1]]),
        c(M23, IDX[0], call=lambda T, x, i: x[:, i]), c(M23, MASK, call=lambda T, x, m: x[m]),
        c(M23, call=lambda T, x: x[1, -1]), c(M23, call=lambda T, x: x[::2, 1::2]),
        c(M23, call=lambda T, x: x[5])],
    "Tensor.__setitem__": [
        c(M23, call=lambda T, x: _set(x * 1, (0, 1), 5.0)),
        c(M23, POS, call=lambda T, x, y: _set(x * 1, (slice(None), 1), y[:, 0])),
        c(M23, call=lambda T, x: _set(x * 1, T.tensor([[True, False, True],
                                                          [False, False, True]]), 0.0))],
})


def _joined(name: str) -> list:
    """Cases of torch.cat and its aliases (a list of tensors as the first argument)."""
    def join(*args: Any) -> Callable:
        return lambda T, x, y: getattr(T, name)([x, y], *args)
    return [c(M23, POS, call=join()), c(M23, POS, call=join(1)), c(M23, a([]), call=join()),
            c(M23, INTS, call=join()), c(M23, M23_F32, call=join(-1)),
            c(M23, a([1.0, 2.0]), call=join())]


for _name in ["cat", "concat", "concatenate"]:
    TABLE[_name] = _joined(_name)


def _set(x: Any, idx: Any, value: Any) -> Any:
    x[idx] = value
    return x


# matrix products
TABLE.update({
    "matmul": [c(M23, POS.T), c(M23, a([1.0, 2.0, 3.0])), c(a([1.0, 2.0]), M23),
               c(a([1.0, 2.0, 3.0]), a([3.0, 2.0, 1.0])), c(BATCH, RAND.uniform(size=(4, 2))),
               c(BATCH, RAND.uniform(size=(2, 4, 5))), c(M23, M23), c(SCALAR, M23),
               c(M23_F32, POS.T), c(INTS, INTS.T.copy())],
    "mm": [c(M23, POS.T), c(M23, M23), c(BATCH, BATCH)],
    "bmm": [c(BATCH, RAND.uniform(size=(2, 4, 2))), c(M23, M23)],
    "mv": [c(M23, a([1.0, 2.0, 3.0])), c(M23, M23)],
    "dot": [c(a([1.0, 2.0]), a([3.0, 4.0])), c(M23, M23)],
    "inner": [c(a([1.0, 2.0]), a([3.0, 4.0]))],
    "outer": [c(a([1.0, 2.0]), a([3.0, 4.0, 5.0]))],
    "addmm": [c(a([1.0, 2.0]), M23, RAND.uniform(size=(3, 2))),
              c(a([[1.0, 2.0], [3.0, 4.0]]), M23, RAND.uniform(size=(3, 2))),
              c(a([1.0, 2.0]), M23, RAND.uniform(size=(3, 2)), beta=0.5, alpha=2.0),
              c(a([1.0, 2.0]), M23, M23)],
    "einsum": [c(M23, POS, call=lambda T, x, y: T.einsum("ij,kj->ik", x, y)),
               c(M23, call=lambda T, x: T.einsum("ij->j", x)),
               c(BATCH, call=lambda T, x: T.einsum("bij,bkj->bik", [x, x]))],
    "baddbmm": [c(RAND.uniform(size=(2, 3)), RAND.uniform(size=(2, 2, 4)),
                  RAND.uniform(size=(2, 4, 3))),
                c(RAND.uniform(size=(2, 2, 3)), RAND.uniform(size=(2, 2, 4)),
                  RAND.uniform(size=(2, 4, 3)), beta=0.5, alpha=2.0),
                c(a([np.nan, 1.0, 2.0]), RAND.uniform(size=(2, 2, 4)),
                  RAND.uniform(size=(2, 4, 3)), beta=0),
                c(M23, BATCH, BATCH)],
    "addbmm": [c(RAND.uniform(size=(2, 3)), RAND.uniform(size=(5, 2, 4)),
                 RAND.uniform(size=(5, 4, 3))),
               c(a([1.0, 2.0, 3.0]), RAND.uniform(size=(5, 2, 4)),
                 RAND.uniform(size=(5, 4, 3)), beta=2.0, alpha=-1.0),
               c(M23, M23, M23)],
    "addmv": [c(a([1.0, 2.0]), M23, a([1.0, 2.0, 3.0])),
              c(a([1.0, 2.0]), M23, a([1.0, 2.0, 3.0]), beta=0.5, alpha=2.0),
              c(a([np.nan, 1.0]), M23, a([1.0, 2.0, 3.0]), beta=0),
              c(a([1.0, 2.0]), M23, M23)],
    "addr": [c(M23, a([1.0, 2.0]), a([3.0, 4.0, 5.0])),
             c(a([1.0, 2.0, 3.0]), a([1.0, 2.0]), a([3.0, 4.0, 5.0]), beta=3.0, alpha=0.5)],
    "tensordot": [c(BATCH, RAND.uniform(size=(4, 2)),
                    call=lambda T, x, y: T.tensordot(x, y, dims=1)),
                  c(BATCH, RAND.uniform(size=(4, 3, 2)),
                    call=lambda T, x, y: T.tensordot(x, y, dims=([1, 2], [2, 0]))),
                  c(M23, M23.T.copy(), call=lambda T, x, y: T.tensordot(x, y))],
})

# sorting and selection
TABLE.update({
    "sort": [c(M23), c(M23, 0), c(M23, descending=True), c(SCALAR), c(INTS, 1)],
    "argsort": [c(M23), c(M23, 0, True), c(INTS)],
    "topk": [c(M23, 2), c(M23, 1, 0), c(M23, 2, largest=False), c(INTS, 1)],
    "nonzero": [c(WITH_ZERO), c(WITH_ZERO, as_tuple=True), c(a([0.0, 1.0])), c(EMPTY)],
})

# torch.nn.functional
_W, _B = RAND.uniform(-1, 1, (4, 3)), RAND.uniform(-1, 1, (4,))
TABLE.update({
    "F.linear": [c(M23, _W, _B), c(M23, _W), c(BATCH[..., :3], _W, _B), c(a([1.0, 2, 3]), _W, _B)],
    "F.relu": [c(EDGES), c(M23), c(INTS)],
    "F.relu_": [c(EDGES), c(M23)],
    "F.leaky_relu": [c(EDGES), c(M23, 0.2)],
    "F.gelu": [c(EDGES), c(M23), c(M23, approximate="tanh")],
    "F.silu": [c(EDGES), c(M23)],
    "F.elu": [c(EDGES), c(M23, 0.5)],
    "F.softplus": [c(EDGES), c(M23, 2.0), c(M23 * 20, 1.0, 10.0)],
    "F.sigmoid": [c(EDGES), c(M23)],
    "F.tanh": [c(EDGES), c(M23)],
    "F.softmax": [c(M23, 1), c(M23, 0), c(M23, -1, dtype=F64)],
    "F.log_softmax": [c(M23, 1), c(M23, 0), c(M23_F32, 1)],
    "F.dropout": [c(M23, 0.5, False), c(M23, 0.0), c(M23, 1.0), c(M23, 1.5)],
    "F.nll_loss": [c(np.log(PROBS), LABELS), c(np.log(PROBS), LABELS, reduction="sum"),
                   c(np.log(PROBS), LABELS, reduction="none"),
                   c(np.log(PROBS), a([2, -100], np.int64)),
                   c(np.log(PROBS), LABELS, Const(POS[0])), c(np.log(PROBS), a([0, 5], np.int64)),
                   c(np.log(PROBS), LABELS.astype(np.float64)),
                   c(np.log(PROBS[0]), a(1, np.int64))],
    "F.cross_entropy": [c(M23, LABELS), c(M23, LABELS, label_smoothing=0.1),
                        c(M23, PROBS / PROBS.sum(1, keepdims=True)),
                        c(M23, LABELS, Const(POS[0]), reduction="sum"), c(BATCH, a([[0, 1, 2, 0],
                                                                             [1, 1, 0, 2]],
                                                                            np.int64)),
                        c(M23, a([1, -100], np.int64), ignore_index=-100)],
    "F.mse_loss": [c(M23, POS), c(M23, POS, reduction="sum"), c(M23, POS, reduction="none"),
                   c(M23, POS[0])],
    "F.l1_loss": [c(M23, POS), c(M23, M23), c(M23, POS, reduction="none")],
    "F.smooth_l1_loss": [c(M23, POS), c(M23, POS, beta=0.5), c(M23, M23 + 1.0)],
    "F.binary_cross_entropy": [c(PROBS, PROBS[::-1].copy()), c(a([0.0, 1.0, 0.5]),
                                                              a([0.0, 1.0, 1.0])),
                               c(PROBS, np.round(PROBS), Const(POS))],
    "F.binary_cross_entropy_with_logits": [c(M23, PROBS), c(EDGES[:-1], np.ones(10) * 0.5),
                                           c(M23, PROBS, Const(POS), pos_weight=Const(POS[0]))],
    "F.one_hot": [c(LABELS), c(LABELS, 4), c(IDX)],
    "F.embedding": [c(IDX, _W), c(a([3, 3], np.int64), _W)],
    "F.normalize": [c(M23), c(WITH_ZERO), c(M23, 1.0, 0), c(a([0.0, 0.0]), dim=0)],
    "F.logsigmoid": [c(EDGES), c(M23)],
    "F.hardtanh": [c(EDGES), c(EDGES, 0.0, 1.0), c(EDGES, 2.0, 1.0)],
    "F.relu6": [c(a([-1.0, 0.0, 3.0, 6.0, 7.0, NAN]))],
    "F.softsign": [c(EDGES), c(M23)],
})
TABLE["F.relu_"] = [c(x, call=lambda T, x: T.nn.functional.relu_(x * 1)) for x in (EDGES, M23)]

# torch.linalg (decompositions through quantities that do not depend on sign choices)
TABLE.update({
    "linalg.vector_norm": [c(x, o) for x in (M23, WITH_ZERO, a([0.0, 0.0]), TIES)
                           for o in (2, 1, 3, 0.5, -1, -2, INF, -INF, 0)] + [
        c(M23, 2, 1), c(WITH_ZERO, 2, (0, 1), True), c(M23_F32, dtype=F64),
        c(INTS), c(WITH_NAN), c(M23 + 1j * POS)],
    "linalg.matrix_norm": [c(x, o) for x in (M23, WITH_ZERO, SQUARE)
                           for o in ("fro", 1, -1, INF, -INF)] + [
        c(M23, "nuc"), c(M23, 2), c(M23, -2), c(BATCH), c(BATCH, dim=(0, 2)),
        c(a([0.0, 1.0])), c(M23, 3)],
    "linalg.norm": [c(M23), c(WITH_ZERO), c(BATCH), c(M23, 1), c(M23, INF), c(M23, "fro"),
                    c(M23, "nuc"), c(M23, dim=1), c(M23, 3, 1), c(a([0.0, 0.0]))],
    "linalg.inv": [c(SQUARE), c(np.stack([SQUARE, SPD]))],
    "linalg.det": [c(SQUARE), c(np.stack([SQUARE, SPD])), c(np.zeros((2, 2)))],
    "linalg.slogdet": [c(SQUARE), c(-SQUARE)],
    "linalg.solve": [c(SQUARE, M23.T.copy()), c(SQUARE, a([1.0, 2.0, 3.0]))],
    "linalg.cholesky": [c(SPD)],
    "linalg.qr": [c(M23.T.copy(), call=lambda T, A: _product(T.linalg.qr(A)))],
    "linalg.eigh": [c(SPD, call=lambda T, A: _squared_vectors(T.linalg.eigh(A)))],
    "linalg.svd": [c(M23, call=lambda T, A: _squared_vectors(T.linalg.svd(
        A, full_matrices=False)))],
})


def _product(qr: tuple) -> Any:
    q, r = qr
    return q @ r, r.abs()


def _squared_vectors(decomposition: tuple) -> tuple:
    """Eigen- or singular values, and the squared vectors (invariant under sign flips)."""
    if len(decomposition) == 2:
        return decomposition[0], decomposition[1] ** 2
    u, s, vh = decomposition
    return s, u ** 2, vh ** 2


# torch.special
for _name, _target in [("expit", "sigmoid"), ("logit", "logit"), ("erf", "erf"),
                       ("erfc", "erfc"), ("expm1", "expm1"), ("log1p", "log1p")]:
    TABLE["special." + _name] = [c(*case.args) for case in TABLE[_target]]
TABLE["special.logsumexp"] = [c(M23, 1), c(M23, (0, 1))]
TABLE["special.softmax"] = TABLE["special.log_softmax"] = [c(M23, 1), c(M23_F32, 0)]

# factories (values and dtypes; random ones by shape and dtype, their streams differ)
def _meta(t: Any) -> tuple:
    return tuple(t.shape), str(t.dtype), t.requires_grad


TABLE.update({
    "tensor": [c(call=lambda T: T.tensor(v)) for v in ([1, 2], [1.0, 2], 3, 2.5, True,
                                                       [[1, 2], [3, 4]], [], [1 + 2j])]
    + [c(call=lambda T: T.tensor([1, 2], dtype=T.float64, requires_grad=True)),
       c(INTS, call=lambda T, x: T.tensor(x.numpy(), dtype=T.float32)),
       c(call=lambda T: T.tensor([1, 2], requires_grad=True))],
    "as_tensor": [c(call=lambda T: T.as_tensor([1.0, 2.0])),
                  c(call=lambda T: T.as_tensor(np.arange(3), dtype=T.float32))],
    "from_numpy": [c(call=lambda T: T.from_numpy(v)) for v in (M23, M23_F32, INTS, BOOLS)],
    "scalar_tensor": [c(call=lambda T: T.scalar_tensor(2)),
                      c(call=lambda T: T.scalar_tensor(1.5, dtype=T.float64))],
    "zeros": [c(call=lambda T: T.zeros(2, 3)), c(call=lambda T: T.zeros((2,), dtype=T.int64)),
              c(call=lambda T: T.zeros([]))],
    "ones": [c(call=lambda T: T.ones(2, 3)), c(call=lambda T: T.ones(3, dtype=T.bool))],
    "empty": [c(call=lambda T: _meta(T.empty(2, 3))),
              c(call=lambda T: _meta(T.empty(2, dtype=T.int32)))],
    "full": [c(call=lambda T: T.full((2, 2), 3)), c(call=lambda T: T.full((2,), 1.5)),
             c(call=lambda T: T.full((2,), True)), c(call=lambda T: T.full((1,), 2, dtype=T.float64))],
    "zeros_like": [c(M23), c(INTS), c(M23, dtype=I64)],
    "ones_like": [c(M23), c(INTS)],
    "empty_like": [c(M23, call=lambda T, x: _meta(T.empty_like(x)))],
    "full_like": [c(M23, 7), c(INTS, 2.7), c(M23, 1, dtype=I32)],
    "arange": [
        c(call=lambda T: T.arange(5)), c(call=lambda T: T.arange(1, 4)),
        c(call=lambda T: T.arange(0, 1, 0.25)), c(call=lambda T: T.arange(5, dtype=T.float32)),
        c(call=lambda T: T.arange(3, 0, -1)), c(call=lambda T: T.arange(0.5, 2))],
    "linspace": [c(call=lambda T: T.linspace(0, 1, 5)), c(call=lambda T: T.linspace(-1, 1, 1)),
                 c(call=lambda T: T.linspace(0, 10, 4, dtype=T.float64))],
    "logspace": [c(call=lambda T: T.logspace(0, 2, 3)), c(call=lambda T: T.logspace(0, 3, 4, 2))],
    "eye": [c(call=lambda T: T.eye(3)), c(call=lambda T: T.eye(2, 3)),
            c(call=lambda T: T.eye(2, dtype=T.int64))],
    "rand": [c(call=lambda T: _meta(T.rand(2, 3))),
             c(call=lambda T: _meta(T.rand(2, dtype=T.float64, requires_grad=True)))],
    "randn": [c(call=lambda T: _meta(T.randn(2, 3))), c(call=lambda T: _meta(T.randn(())))],
    "randint": [c(call=lambda T: _meta(T.randint(0, 5, (2, 3)))),
                c(call=lambda T: _meta(T.randint(3, (4,))))],
    "rand_like": [c(M23, call=lambda T, x: _meta(T.rand_like(x)))],
    "randn_like": [c(M23_F32, call=lambda T, x: _meta(T.randn_like(x)))],
    "randint_like": [c(M23, call=lambda T, x: _meta(T.randint_like(x, 4)))],
    "randperm": [c(call=lambda T: (T.randperm(5).sort().values, str(T.randperm(3).dtype)))],
    "normal": [c(call=lambda T: _meta(T.normal(0.0, 1.0, (2, 3)))),
               c(M23, POS, call=lambda T, m, s: _meta(T.normal(m, s)))],
    "bernoulli": [c(PROBS, call=lambda T, p: _meta(T.bernoulli(p))),
                  c(a([0.0, 1.0]), call=lambda T, p: T.bernoulli(p))],
})
for _name, _dt in [("FloatTensor", np.float32), ("DoubleTensor", np.float64),
                   ("LongTensor", np.int64), ("IntTensor", np.int32), ("BoolTensor", np.bool_),
                   ("ByteTensor", np.uint8)]:
    TABLE[_name] = [c(call=lambda T, n=_name: getattr(T, n)([1, 0, 2])),
                    c(call=lambda T, n=_name: _meta(getattr(T, n)(2, 3)))]

# queries and conversions
TABLE.update({
    "numel": [c(M23), c(EMPTY), c(SCALAR)],
    "is_floating_point": [c(M23), c(INTS)],
    "is_complex": [c(M23), c(M23 + 0j)],
    "is_tensor": [c(M23), c(call=lambda T: T.is_tensor([1.0]))],
    "typename": [c(M23), c(INTS), c(call=lambda T: T.typename(1.0))],
    "result_type": [c(M23, INTS), c(INTS, 2.5), c(M23_F32, M23), c(BOOLS, 1),
                    c(M23_F32, a(1.0)), c(INTS, a(1.5))],
    "can_cast": [c(call=lambda T: [T.can_cast(f, t) for f in (T.float32, T.int64, T.bool)
                                   for t in (T.float32, T.int64, T.bool)])],
    "promote_types": [c(call=lambda T: [str(T.promote_types(f, t)) for f in (
        T.float32, T.int64, T.bool, T.float64) for t in (T.float32, T.int32, T.uint8)])],
    "get_default_dtype": [c(call=lambda T: str(T.get_default_dtype()))],
    "isclose": [c(M23, M23 + 1e-9), c(EDGES, EDGES), c(EDGES, EDGES, equal_nan=True),
                c(M23, POS, 0.5, 1.0)],
    "allclose": [c(M23, M23 + 1e-9), c(M23, POS), c(EDGES, EDGES, equal_nan=True)],
    "is_grad_enabled": [c(call=lambda T: T.is_grad_enabled())],
    "is_inference_mode_enabled": [c(call=lambda T: T.is_inference_mode_enabled())],
    "Tensor.size": [c(M23), c(M23, 1), c(M23, -1), c(SCALAR)],
    "Tensor.dim": [c(M23), c(SCALAR)],
    "Tensor.ndimension": [c(M23)],
    "Tensor.nelement": [c(M23)],
    "Tensor.element_size": [c(M23), c(M23_F32), c(BOOLS)],
    "Tensor.item": [c(SCALAR), c(a([2], np.int64)), c(M23)],
    "Tensor.tolist": [c(M23), c(INTS), c(SCALAR)],
    "Tensor.numpy": [c(M23, call=lambda T, x: x.detach().numpy()), c(M23)],
    "Tensor.type": [c(M23), c(M23, "torch.FloatTensor"), c(INTS, "torch.DoubleTensor"),
                    c(INTS, call=lambda T, x: x.type(T.float64)), c(M23, "torch.Nonsense")],
    "Tensor.type_as": [c(M23, INTS), c(INTS, M23_F32)],
    "Tensor.to": [c(M23, F32), c(INTS, F64), c(M23, "cpu"),
                  c(M23, M23_F32, call=lambda T, x, y: x.to(y)),
                  c(M23, call=lambda T, x: x.to(T.float64) is x),
                  c(M23, call=lambda T, x: x.to(dtype=T.float32, copy=True))],
    "Tensor.cpu": [c(M23)],
    "Tensor.contiguous": [c(M23)],
    "Tensor.is_contiguous": [c(M23), c(M23, call=lambda T, x: x.t().is_contiguous()),
                             c(M23, call=lambda T, x: x[:, ::2].is_contiguous())],
    "Tensor.stride": [c(M23), c(M23, 1), c(M23, call=lambda T, x: x.t().stride()),
                      c(M23, call=lambda T, x: x[:, ::2].stride()),
                      c(M23, call=lambda T, x: x.expand(4, 2, 3).stride()),
                      c(M23, call=lambda T, x: x.unsqueeze(1)[0].stride())],
    "Tensor.storage_offset": [c(M23), c(M23, call=lambda T, x: x[1].storage_offset()),
                              c(M23, call=lambda T, x: x[1:, 2:].storage_offset()),
                              c(M23, call=lambda T, x: x.t()[2].storage_offset())],
    "Tensor.untyped_storage": [
        c(M23, call=lambda T, x: x.untyped_storage().nbytes()),
        c(M23, call=lambda T, x: x[1].untyped_storage().data_ptr()
          == x.untyped_storage().data_ptr()),
        c(M23, call=lambda T, x: x.clone().untyped_storage().data_ptr()
          == x.untyped_storage().data_ptr())],
    "Tensor.is_inference": [c(M23)],
    "Tensor.detach": [c(M23)],
    "Tensor.new_tensor": [c(M23, [1, 2]), c(M23_F32, [1.5])],
    "Tensor.new_zeros": [c(M23, (2,)), c(INTS, 3)],
    "Tensor.new_ones": [c(M23, (2, 1))],
    "Tensor.new_full": [c(M23, (2,), 3)],
    "Tensor.new_empty": [c(M23, (2,), call=lambda T, x, s: _meta(x.new_empty(s)))],
    "Tensor.zero_": [c(M23)],
    "Tensor.fill_": [c(M23, 2.0), c(M23, a(3.0)), c(INTS, 1.5)],
    "Tensor.copy_": [c(M23, POS), c(M23, POS[0]), c(M23, INTS), c(INTS, M23)],
})
for _name in ["float", "double", "half", "bfloat16", "long", "int", "bool", "cfloat", "cdouble",
              "char", "short"]:
    TABLE["Tensor." + _name] = [c(M23), c(INTS)]
TABLE["Tensor.byte"] = [c(POS), c(INTS)]  # (negative floats to uint8: undefined in C)
TABLE["Tensor.get_device"] = [c(M23)]
for _name in ["uniform_", "normal_", "bernoulli_", "exponential_", "random_"]:
    TABLE["Tensor." + _name] = [c(M23, call=lambda T, x, n=_name: _meta(getattr(x * 1, n)()))]

TABLE["true_divide"] = [case for case in TABLE["div"] if "rounding_mode" not in case.kwargs]

# aliases: the cases of the name they stand for
for _alias, _target in [("absolute", "abs"), ("negative", "neg"), ("arcsin", "asin"),
                        ("arccos", "acos"), ("arctan", "atan"), ("arcsinh", "asinh"),
                        ("arccosh", "acosh"), ("arctanh", "atanh"), ("fix", "trunc"),
                        ("subtract", "sub"), ("multiply", "mul"), ("divide", "div"),
                        ("arctan2", "atan2"), ("clip", "clamp"),
                        ("greater", "gt"), ("less", "lt"), ("greater_equal", "ge"),
                        ("less_equal", "le"), ("not_equal", "ne"), ("swapaxes", "transpose"),
                        ("swapdims", "transpose"), ("moveaxis", "movedim"), ("ger", "outer")]:
    TABLE[_alias] = TABLE[_target]

# -- conventions that legitimately differ (each still compared in every other respect) ------

for _i in (0, 6):  # the edge values, and 0, 1, -2
    known(TABLE["acosh"], _i, "grad", "below the domain (x < 1, where the value is NaN) "
          "PyTorch's rsqrt(x**2 - 1) is finite for x <= -1; funcgrad's "
          "1 / (sqrt(x - 1) sqrt(x + 1)) is NaN")
for _key in ("logit", "special.logit"):
    for _i in (0, 4, 6):  # the edge values, 1.5, and -2
        known(TABLE[_key], _i, "grad", "outside [0, 1] (where the value is NaN) PyTorch "
              "defines the gradient as NaN; funcgrad's 1 / (x (1 - x)) is finite")
for _i in range(len(TABLE["logical_not"])):
    known(TABLE["logical_not"], _i, "inplace:grad,inplace:name", "PyTorch 2.13 records "
          "logical_not_ on a float tensor as a multiplication (MulBackward0) and passes the "
          "gradient through; the result is 0 or 1: funcgrad records no derivative")
for _key in ("logical_and", "logical_or", "logical_xor"):
    for _i in range(len(TABLE[_key])):
        known(TABLE[_key], _i, "inplace:grad", f"PyTorch 2.13 records {_key}_ on a float "
              "tensor as a multiplication (MulBackward0) and passes the gradient through; "
              "the result is 0 or 1 and funcgrad's gradient is 0")
for _key in ("asinh", "atanh", "acosh"):
    for _i in range(len(TABLE[_key])):
        known(TABLE[_key], _i, "inplace:backward", f"PyTorch 2.13 records {_key}_ as "
              f"{_key.capitalize()}Backward1, whose backward raises NotImplementedError; "
              "funcgrad differentiates it")
for _key, _i in [("prod", 6), ("prod", 7), ("cumprod", 8)]:
    known(TABLE[_key], _i, "grad", "with a NaN in a product PyTorch's out / x is NaN for "
          "every element; funcgrad's product of the other elements is exact, finite for the "
          "NaN itself")
for _key in ("softmax", "log_softmax"):
    known(TABLE[_key], 3, "values,grad", "a row holding +inf: PyTorch's shift by the max "
          "gives NaN for the whole row; funcgrad shifts by 0 when the max is not finite, so "
          "only the +inf's entry is NaN")
known(TABLE["F.binary_cross_entropy"], 1, "grad", "at p = 0 or 1 PyTorch's gradient is its "
      "own formula (p - y) / max(p (1 - p), 1e-12); funcgrad differentiates the loss it "
      "computes (the logs clamped at -100)")
known(TABLE["F.binary_cross_entropy_with_logits"], 1, "values,grad", "logits of +-inf: "
      "PyTorch's (1 - y) x + log1p(exp(-x)) is inf - inf = NaN; funcgrad's log-sigmoid form "
      "gives the limit, inf")
known(TABLE["clamp"], 13, "inplace:message", "PyTorch's clamp_ names the int64 it cannot "
      "cast to by its C++ name ('long int'), unlike its other in-place ops ('Long'), "
      "which funcgrad follows")
for _i in range(len(TABLE["einsum"])):
    known(TABLE["einsum"], _i, "name", "PyTorch's einsum node is whichever op its contraction "
          "path ends in (bmm, sum, view...); funcgrad's is one EinsumBackward0")
for _i in range(len(TABLE["floor_divide"])):
    known(TABLE["floor_divide"], _i, "name,backward", "PyTorch records a "
          "torch::autograd::NotImplemented node whose backward raises; funcgrad's quotient "
          "has the derivative 0 and does not require grad")

# -- names the table does not compare, and why -----------------------------------------------

NOT_COMPARED = {
    "compile": "a wrapper running modules through funcgrad.jit (tests/torch/test_torch_jit.py)",
    # graph and autograd state, not ops: compared in test_torch_vs_pytorch.py and the engine,
    # hook and in-place tests of tests/torch/
    "Tensor.backward": "autograd machinery (test_torch_vs_pytorch.py, test_torch_engine.py)",
    "Tensor.register_hook": "autograd machinery (test_torch_engine.py)",
    "Tensor.register_post_accumulate_grad_hook": "autograd machinery (test_torch_engine.py)",
    "Tensor.retain_grad": "autograd machinery (test_torch_engine.py)",
    "Tensor.requires_grad_": "autograd machinery (test_torch_tensor.py)",
    "Tensor.detach_": "autograd machinery (test_torch_tensor.py)",
    "Tensor.data_ptr": "a memory address: no value to compare",
    "Tensor.as_subclass": "a tensor's class (rebuilt subclasses: test_serialization.py)",
    **{name: "an ATen-signature alias, compared with PyTorch in test_aten_aliases.py"
       for name in ("Tensor.resolve_conj", "Tensor.resolve_neg", "Tensor.split_with_sizes",
                    "Tensor.unsafe_chunk", "Tensor.unsafe_split",
                    "Tensor.unsafe_split_with_sizes", "adaptive_avg_pool1d",
                    "adaptive_max_pool1d", "alias_copy", "alpha_dropout", "as_strided_copy",
                    "avg_pool1d", "batch_norm", "bilinear", "binary_cross_entropy_with_logits",
                    "celu", "celu_", "channel_shuffle", "col_indices_copy", "conv1d",
                    "conv2d", "conv3d", "conv_transpose1d", "conv_transpose2d",
                    "conv_transpose3d", "cosine_embedding_loss", "cosine_similarity",
                    "crow_indices_copy", "ctc_loss", "detach_copy", "diagonal_copy",
                    "dropout", "embedding", "expand_copy", "feature_alpha_dropout",
                    "group_norm", "hardshrink", "hinge_embedding_loss", "indices_copy",
                    "instance_norm", "kl_div", "layer_norm", "margin_ranking_loss",
                    "max_pool1d", "max_pool1d_with_indices", "max_pool2d", "max_pool3d",
                    "narrow_copy", "pairwise_distance", "pdist", "permute_copy",
                    "pixel_shuffle", "pixel_unshuffle", "poisson_nll_loss", "prelu",
                    "resize_as_", "resolve_conj", "resolve_neg", "rms_norm", "rrelu",
                    "rrelu_", "select_copy", "selu", "selu_", "split_copy",
                    "split_with_sizes", "split_with_sizes_copy", "squeeze_copy", "t_copy",
                    "threshold", "threshold_", "transpose_copy", "triplet_margin_loss",
                    "unbind_copy", "unfold_copy", "unsafe_chunk", "unsafe_split",
                    "unsafe_split_with_sizes", "unsqueeze_copy", "values_copy",
                    "view_as_complex_copy", "view_as_real_copy", "view_copy", "zero_")},
    **{name: "compared with PyTorch in test_windows_flags_formats.py"
       for name in ("hann_window", "hamming_window", "blackman_window", "bartlett_window",
                    "kaiser_window", "use_deterministic_algorithms",
                    "are_deterministic_algorithms_enabled",
                    "is_deterministic_algorithms_warn_only_enabled",
                    "set_deterministic_debug_mode", "get_deterministic_debug_mode",
                    "set_warn_always", "is_warn_always_enabled", "set_flush_denormal",
                    "init_num_threads", "is_anomaly_enabled", "is_anomaly_check_nan_enabled",
                    "set_anomaly_enabled")},
    **{name: "compared with PyTorch in test_ops_extras.py"
       for name in ("Tensor.apply_", "Tensor.conj_physical", "Tensor.conj_physical_",
                    "Tensor.dim_order", "Tensor.fill_diagonal_", "Tensor.map2_", "Tensor.map_",
                    "Tensor.new", "Tensor.nonzero_static", "Tensor.sum_to_size",
                    "conj_physical", "conj_physical_", "nonzero_static", "index_reduce",
                    "Tensor.index_reduce", "Tensor.index_reduce_")},
    **{f"linalg.{name}": "compared with PyTorch in test_linalg_more.py"
       for name in ("LinAlgError", "cholesky_ex", "cond", "diagonal", "eig", "eigvals",
                    "eigvalsh", "inv_ex", "lstsq", "lu", "lu_factor", "lu_factor_ex",
                    "lu_solve", "matmul", "matrix_exp", "matrix_power", "matrix_rank",
                    "multi_dot", "pinv", "solve_ex", "solve_triangular", "svdvals",
                    "tensorinv", "tensorsolve", "vander", "vecdot")},
    **{name: "compared with PyTorch in test_fft.py"
       for name in ("stft", "istft", "Tensor.stft", "Tensor.istft")},
    **{name: "compared with PyTorch in test_more_functions.py"
       for name in ("asarray", "frombuffer", "empty_strided", "fill", "gradient",
                    "histogram", "poisson", "binomial")},
    **{name: "compared with PyTorch in test_special.py"
       for name in ("Tensor.igamma", "Tensor.igammac", "igamma", "igammac",
                    *(f"special.{n}" for n in (
                        "digamma", "entr", "erfinv", "exp2", "gammainc", "gammaincc",
                        "gammaln", "i0", "i0e", "i1", "i1e", "log_ndtr", "multigammaln",
                        "ndtr", "ndtri", "polygamma", "psi", "round", "sinc", "xlog1py",
                        "xlogy", "zeta")))},
    **{name: "sparse layouts, compared with PyTorch in test_sparse.py"
       for name in ("Tensor.sparse_mask", "Tensor.to_dense", "Tensor.to_sparse",
                    "Tensor.to_sparse_coo", "Tensor.to_sparse_csr", "sparse_coo_tensor",
                    "sparse_csr_tensor", "spmm")},
    "Tensor.resize_": "memory layout, compared with PyTorch in test_resize.py",
    "Tensor.resize_as_": "memory layout, compared with PyTorch in test_resize.py",
    **{f"Tensor.{name}": "a flag, compared with PyTorch's in test_torch_tensor.py"
       for name in ("is_coalesced", "is_conj", "is_distributed", "is_neg", "is_pinned",
                    "is_set_to", "is_shared")},
    "Tensor.cuda": "needs a GPU (tests/test_devices.py, marked gpu)",
    "manual_seed": "random streams differ by design (numpy's PCG64, not PyTorch's Philox/MT)",
    "seed": "random streams differ by design",
    "initial_seed": "random streams differ by design",
    "set_default_dtype": "global state (test_torch_tensor.py)",
    "set_printoptions": "printing (reprs are compared in test_torch_vs_pytorch.py)",
    "vmap": "a transform of functions (compared with torch.vmap in test_torch_vmap.py)",
    "save": "PyTorch's file format, both ways with PyTorch (test_serialization.py)",
    "load": "PyTorch's file format, both ways with PyTorch (test_serialization.py)",
    "from_dlpack": "memory exchange with other libraries (test_torch_library.py)",
    **{name: "autocast state (tests/torch/test_torch_amp.py)" for name in (
        "autocast_increment_nesting", "autocast_decrement_nesting", "clear_autocast_cache",
        "get_autocast_cpu_dtype", "get_autocast_dtype", "get_autocast_gpu_dtype",
        "is_autocast_cache_enabled", "is_autocast_cpu_enabled", "is_autocast_enabled",
        "set_autocast_cache_enabled", "set_autocast_cpu_dtype", "set_autocast_cpu_enabled",
        "set_autocast_dtype", "set_autocast_enabled", "set_autocast_gpu_dtype")},
}
