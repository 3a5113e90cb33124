"""The op table, part 3b: matrix products (matmul, mm, bmm, mv, dot, inner, addmm, baddbmm,
addbmm, addmv, addr, outer, tensordot, einsum), with PyTorch's node names and its errors: products do not promote dtypes.

``a @ b`` on matrices is ``MmBackward0``, on a vector and a matrix ``SqueezeBackward4``
(PyTorch unsqueezes, multiplies and squeezes), batched ``UnsafeViewBackward0``; ``nn.Linear``
is ``AddmmBackward0``.
"""
from __future__ import annotations

from typing import Any

import numpy as np

import funcgrad.numpy as fnp
from funcgrad.dtypes import LOW_FLOATS
from funcgrad.primitives import linalg as linalg_prims
from funcgrad.torch._autocast import autocast_op
from funcgrad.torch._dispatch import PrimCall, apply
from funcgrad.torch._ops_basic import FUNCTIONS, Spec, cast, op, result_type
from funcgrad.torch._ops_shape import _expand  # the expand spec: PyTorch's expand error
from funcgrad.torch._tensor import Tensor, _type_word

__all__ = ["matmul", "einsum"]


# -- matrix products ---------------------------------------------------------------------

# the node of the aten op PyTorch's matmul dispatches to, by the operands' ranks (any other:
# UnsafeViewBackward0)
_MATMUL_NODES = {(1, 1): "DotBackward0", (2, 1): "MvBackward0", (2, 2): "MmBackward0",
                 (1, 2): "SqueezeBackward4"}


# the C++ names of dtypes in PyTorch's matmul messages
_C_TYPES = {"float32": "float", "float64": "double", "float16": "c10::Half",
            "int64": "long int", "int32": "int", "int16": "short int", "int8": "signed char",
            "uint8": "unsigned char", "bool": "bool", "complex64": "c10::complex<float>",
            "complex128": "c10::complex<double>"}


def _check_matmul_dtypes(name: str, input: Tensor, other: Tensor) -> None:
    """PyTorch's products do not promote: operands of different dtypes raise."""
    if input._a.dtype == other._a.dtype:  # (compared as numpy dtypes: no torch dtype built)
        return
    words = _type_word(input.dtype), _type_word(other.dtype)
    if name in ("dot", "inner") or (name == "matmul" and input.ndim == other.ndim == 1):
        msg = ("both inputs should have same dtype" if name == "inner" else
               f"dot : expected both vectors to have same dtype, but found {words[0]} and "
               f"{words[1]}")
    elif name == "mv" or (name == "matmul" and (input.ndim, other.ndim) == (2, 1)):
        msg = (f"addmv input tensors must have the same dtype, but got {words[1]}, "
               f"{words[0]}, and {words[1]}")
    elif name == "bmm" or (name == "matmul" and max(input.ndim, other.ndim) > 2):
        msg = f"expected scalar type {words[0]} but found {words[1]}"
    else:
        msg = (f"expected m1 and m2 to have the same dtype, but got: "
               f"{_C_TYPES[input.dtype.name]} != {_C_TYPES[other.dtype.name]}")
    raise RuntimeError(msg)


def _check_matmul(name: str, input: Tensor, other: Tensor) -> None:
    """PyTorch's shape and dtype errors of mm, bmm, mv, dot and matmul."""
    _check_matmul_dtypes(name, input, other)
    a, b = input._a.shape, other._a.shape
    if name in ("mm", "matmul") and len(a) == 2 and len(b) == 2 and a[1] != b[0]:
        raise RuntimeError(f"mat1 and mat2 shapes cannot be multiplied ({a[0]}x{a[1]} and "
                           f"{b[0]}x{b[1]})")
    if name in ("dot", "inner", "matmul") and len(a) == 1 and len(b) == 1 and a != b:
        raise RuntimeError(f"inconsistent tensor size, expected tensor [{a[0]}] and src "
                           f"[{b[0]}] to have the same number of elements, but got {a[0]} "
                           f"and {b[0]} elements respectively")
    if name == "mv" and len(a) == 2 and len(b) == 1 and a[1] != b[0]:
        raise RuntimeError(f"size mismatch, got input ({a[0]}), mat ({a[0]}x{a[1]}), vec "
                           f"({b[0]})")
    if name == "bmm" and len(a) == 3 and len(b) == 3 and b[:2] != (a[0], a[2]):
        raise RuntimeError(f"Expected size for first two dimensions of batch2 tensor to be: "
                           f"[{a[0]}, {a[2]}] but got: [{b[0]}, {b[1]}].")


@op("matmul")
def _matmul(input: Tensor, other: Tensor) -> Spec:
    if input.ndim == 0 or other.ndim == 0:
        raise RuntimeError("both arguments to matmul need to be at least 1D, but they are "
                           f"{input.ndim}D and {other.ndim}D")
    _check_matmul("matmul", input, other)  # (one dtype past it: nothing to promote)
    return Spec(_MATMUL_NODES.get((input.ndim, other.ndim), "UnsafeViewBackward0"), _MATMUL,
                [input, other])


# PyTorch's rank errors of the fixed-rank products
_RANK_ERRORS = {
    "mm": lambda a, b: "self must be a matrix" if a != 2 else "mat2 must be a matrix",
    "bmm": lambda a, b: "batch1 must be a 3D tensor" if a != 3 else
    "batch2 must be a 3D tensor",
    "mv": lambda a, b: f"vector + matrix @ vector expected, got 1, {a}, {b}",
    "dot": lambda a, b: f"1D tensors expected, but got {a}D and {b}D tensors",
}


def _checked(name: str, node: str, nd: tuple) -> None:
    def spec(input: Tensor, other: Tensor) -> Spec:
        if (input.ndim, other.ndim) != nd:
            raise RuntimeError(_RANK_ERRORS[name](input.ndim, other.ndim))
        _check_matmul(name, input, other)
        s = _matmul(input, other)
        return s._replace(name=node)
    spec.__name__ = name
    op(name)(spec)


_checked("mm", "MmBackward0", (2, 2))
_checked("bmm", "BmmBackward0", (3, 3))
_checked("mv", "MvBackward0", (2, 1))
_checked("dot", "DotBackward0", (1, 1))


@op("inner")
def _inner(input: Tensor, other: Tensor) -> Spec:
    """The inner product over the last axes (PyTorch's composition ends in a view)."""
    _check_matmul("inner", input, other)
    dt = result_type(input, other).np
    return Spec("ViewBackward0", lambda a, b: fnp.inner(cast(a, dt), cast(b, dt)),
                [input, other])


@op("addmm", inplace=True, broadcasts=False)
def _addmm(input: Tensor, mat1: Tensor, mat2: Tensor, *, beta: Any = 1,
           alpha: Any = 1) -> Spec:
    if input._a.dtype != mat2._a.dtype:
        raise RuntimeError(f"self and mat2 must have the same dtype, but got "
                           f"{_type_word(input.dtype)} and {_type_word(mat2.dtype)}")
    _check_matmul("mm", mat1, mat2)
    if beta == 1 and alpha == 1:
        return Spec("AddmmBackward0", _ADDMM, [input, mat1, mat2])

    def f(c: Any, a: Any, b: Any) -> Any:
        low = c.dtype in LOW_FLOATS  # (PyTorch scales and sums in float32, rounds once)
        if low:
            c, a, b = (fnp.astype(x, np.float32) for x in (c, a, b))
        ab = fnp.matmul(a, b)
        out = fnp.add(c if beta == 1 else fnp.multiply(c, beta),
                      ab if alpha == 1 else fnp.multiply(ab, alpha))
        return fnp.astype(out, input._a.dtype) if low else out
    return Spec("AddmmBackward0", f, [input, mat1, mat2])


_ADDMM = PrimCall(linalg_prims.addmm)
_MATMUL = PrimCall(linalg_prims.matmul)


def _scaled_sum(c: Any, ab: Any, beta: Any, alpha: Any) -> Any:
    """``beta * c + alpha * ab``; with beta 0, c is ignored (its NaNs do not propagate)."""
    ab = ab if alpha == 1 else fnp.multiply(ab, alpha)
    if beta == 0:
        return fnp.add(ab, fnp.zeros_like(c))
    return fnp.add(c if beta == 1 else fnp.multiply(c, beta), ab)


def _size(t: Tensor, dim: int) -> int:
    """``t.size(dim)``, with PyTorch's IndexError past the last axis."""
    if dim >= t.ndim:
        n = max(t.ndim, 1)
        raise IndexError(f"Dimension out of range (expected to be in range of [{-n}, "
                         f"{n - 1}], but got {dim})")
    return t.shape[dim]


def _expands_to(input: Tensor, target: tuple) -> None:
    """PyTorch's expand error when ``input`` does not broadcast to ``target``."""
    _expand(input, *target)  # the expand spec only checks here; nothing is recorded


def _check_batched(name: str, input: Tensor, batch1: Tensor, batch2: Tensor) -> None:
    """baddbmm's and addbmm's checks, in PyTorch's order: the input against the result
    shape, the ranks, the dtypes, the batch and inner sizes."""
    if name == "baddbmm":
        _expands_to(input, (_size(batch1, 0), _size(batch1, 1), _size(batch2, 2)))
    else:
        _expands_to(input, (_size(batch1, 1), _size(batch2, 2)))
    for t, which in ((batch1, "batch1"), (batch2, "batch2")):
        if t.ndim != 3:
            raise RuntimeError(f"{which} must be a 3D tensor")
    if name == "baddbmm":
        if not input.dtype is batch1.dtype is batch2.dtype:
            words = [_type_word(t.dtype) for t in (input, batch1, batch2)]
            raise RuntimeError(f"Input dtypes must be the same, got: input {words[0]}, "
                               f"batch1: {words[1]}, batch2: {words[2]}")
        _check_matmul("bmm", batch1, batch2)
        return
    if batch1.dtype is not batch2.dtype:
        raise RuntimeError(f"mat1 and mat2 must have the same dtype, but got "
                           f"{_type_word(batch1.dtype)} and {_type_word(batch2.dtype)}")
    if input.dtype is not batch2.dtype:
        raise RuntimeError(f"self and mat2 must have the same dtype, but got "
                           f"{_type_word(input.dtype)} and {_type_word(batch2.dtype)}")
    if batch1.shape[0] != batch2.shape[0]:
        raise RuntimeError(f"batch1 and batch2 must have same number of batches, got "
                           f"{batch1.shape[0]} and {batch2.shape[0]}")
    if batch1.shape[2] != batch2.shape[1]:
        raise RuntimeError(f"Incompatible matrix sizes for bmm ({batch1.shape[1]}x"
                           f"{batch1.shape[2]} and {batch2.shape[1]}x{batch2.shape[2]})")


@op("baddbmm", inplace=True, broadcasts=False)
def _baddbmm(input: Tensor, batch1: Tensor, batch2: Tensor, *, beta: Any = 1,
             alpha: Any = 1) -> Spec:
    """``beta * input + alpha * (batch1 @ batch2)``, input broadcast to (b, n, p)."""
    _check_batched("baddbmm", input, batch1, batch2)
    return Spec("BaddbmmBackward0", lambda c, a, b: _scaled_sum(c, fnp.matmul(a, b), beta,
                                                                 alpha),
                [input, batch1, batch2])


@op("addbmm")  # (addbmm_: `funcgrad.torch._legacy_api`, as it may resize)
def _addbmm(input: Tensor, batch1: Tensor, batch2: Tensor, *, beta: Any = 1,
            alpha: Any = 1) -> Spec:
    """``beta * input + alpha * sum_i batch1[i] @ batch2[i]``, input broadcast to (n, p)."""
    _check_batched("addbmm", input, batch1, batch2)
    return Spec("AddbmmBackward0", lambda c, a, b: _scaled_sum(
        c, fnp.sum(fnp.matmul(a, b), axis=0), beta, alpha), [input, batch1, batch2])


@op("addmv", inplace=True, broadcasts=False)
def _addmv(input: Tensor, mat: Tensor, vec: Tensor, *, beta: Any = 1,
           alpha: Any = 1) -> Spec:
    """``beta * input + alpha * (mat @ vec)``."""
    if mat.ndim != 2 or vec.ndim != 1:
        raise RuntimeError(f"vector + matrix @ vector expected, got {input.ndim}, "
                           f"{mat.ndim}, {vec.ndim}")
    if not input.dtype is mat.dtype is vec.dtype:
        words = ", ".join(_type_word(t.dtype) for t in (input, mat))
        raise RuntimeError(f"addmv input tensors must have the same dtype, but got {words}, "
                           f"and {_type_word(vec.dtype)}")
    if mat.shape[1] != vec.shape[0] or input.shape not in ((), (1,), (mat.shape[0],)):
        raise RuntimeError(f"size mismatch, got input ({', '.join(map(str, input.shape))}),"
                           f" mat ({mat.shape[0]}x{mat.shape[1]}), vec ({vec.shape[0]})")
    return Spec("AddmvBackward0", lambda c, a, b: _scaled_sum(c, fnp.matmul(a, b), beta,
                                                               alpha), [input, mat, vec])


@op("addr")  # (addr_: `funcgrad.torch._legacy_api`, with its own checks)
def _addr(input: Tensor, vec1: Tensor, vec2: Tensor, *, beta: Any = 1,
          alpha: Any = 1) -> Spec:
    """``beta * input + alpha * outer(vec1, vec2)`` (addr promotes its dtypes)."""
    for t, which in ((vec1, "vec1"), (vec2, "vec2")):
        if t.ndim != 1:
            raise RuntimeError(f"addr: Expected 1-D argument {which}, but got {t.ndim}-D")
    _expands_to(input, (vec1.shape[0], vec2.shape[0]))
    dt = result_type(input, vec1, vec2).np
    return Spec("AddrBackward0", lambda c, a, b: _scaled_sum(
        cast(c, dt), fnp.multiply(fnp.reshape(cast(a, dt), (-1, 1)), cast(b, dt)), beta,
        alpha), [input, vec1, vec2])


@op("tensordot", method=False)
def _tensordot(a: Tensor, b: Tensor, dims: Any = 2) -> Spec:
    """Contract ``dims`` axes (a count: the last of a with the first of b; or two lists)."""
    if a.dtype is not b.dtype:
        raise RuntimeError("both inputs should have same dtype")
    if isinstance(dims, int):
        axes: Any = dims
        pairs = [(i - dims, i) for i in range(dims)]  # PyTorch's dims: -dims..-1 of a
    else:
        axes = tuple(tuple(int(i) for i in d) for d in dims)
        pairs = list(zip(*axes))
    for i, j in pairs:
        if a.shape[i] != b.shape[j]:
            raise RuntimeError(f"contracted dimensions need to match, but first has size "
                               f"{a.shape[i]} in dim {i} and second has size {b.shape[j]} "
                               f"in dim {j}")
    return Spec("ViewBackward0", lambda x, y: fnp.tensordot(x, y, axes=axes), [a, b])


@op("outer", "ger")
def _outer(input: Tensor, vec2: Tensor) -> Spec:
    return Spec("MulBackward0", lambda a, b: fnp.multiply(fnp.reshape(a, (-1, 1)), b),
                [input, vec2])


def einsum(equation: str, *operands: Any) -> Tensor:
    """Einstein summation (funcgrad.numpy.einsum)."""
    if len(operands) == 1 and isinstance(operands[0], (list, tuple)):
        operands = tuple(operands[0])
    dtypes = {t.dtype for t in operands if isinstance(t, Tensor)}
    if len(dtypes) > 1:
        first, *rest = [t.dtype for t in operands]
        other = next(d for d in rest if d is not first)
        raise RuntimeError(f"expected scalar type {_type_word(first)} but found "
                           f"{_type_word(other)}")
    dt = result_type(*operands).np
    return apply("EinsumBackward0", lambda *xs: fnp.einsum(equation, *[cast(x, dt)
                                                                       for x in xs]),
                 list(operands))


FUNCTIONS["einsum"] = autocast_op("einsum")(einsum)
matmul = FUNCTIONS["matmul"]
