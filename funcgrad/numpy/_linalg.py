"""Products and diagonals of funcgrad.numpy with numpy's signatures.

matmul, einsum and diagonal are primitives; everything else is composed from them and the
shape functions, so it is differentiable to any order with no rules of its own. einsum's
ellipsis, implicit output and interleaved (operand, sublist) forms are resolved here into
explicit subscripts such as "ab,bc->ac" before the primitive sees them.
"""
from __future__ import annotations

import operator
from typing import Any, Sequence

import numpy as np

import funcgrad.numpy as fnp
from funcgrad.array import Array
from funcgrad.primitives import linalg as P
from funcgrad.primitives.linalg import matmul
from funcgrad.numpy._creation import asarray, promote_dtypes
from funcgrad.numpy._reductions import axis_index, normalize_axis

__all__ = ["matmul", "dot", "vdot", "inner", "outer", "tensordot", "einsum", "einsum_path",
           "kron", "trace", "diag", "diagflat", "diagonal", "tril", "triu", "vecdot",
           "matvec", "vecmat"]


def dot(a: Any, b: Any) -> Array:
    """numpy's dot: the product of scalars, vectors or matrices; for N-D arrays a sum
    over the last axis of a and the second-to-last of b."""
    if np.ndim(a) == 0 or np.ndim(b) == 0:
        return a * b  # (a Python number stays weak)
    a, b = asarray(a), asarray(b)
    if b.ndim <= 2 or a.ndim == 1:
        return matmul(a, b)
    return tensordot(a, b, ([a.ndim - 1], [b.ndim - 2]))


def vdot(a: Any, b: Any) -> Array:
    """The dot product of the flattened arrays, conjugating the first."""
    a, b = asarray(a), asarray(b)
    return P.einsum(P.conj(fnp.ravel(a)), fnp.ravel(b), subscripts="i,i->")


def inner(a: Any, b: Any) -> Array:
    """The sum product over the last axes of a and b."""
    a, b = asarray(a), asarray(b)
    if a.ndim == 0 or b.ndim == 0:
        return a * b
    if a.shape[-1] != b.shape[-1]:
        raise ValueError(f"inner: the last axes of shapes {a.shape} and {b.shape} differ")
    letters = iter(P.LETTERS[1:])
    sa = "".join(next(letters) for _ in range(a.ndim - 1))
    sb = "".join(next(letters) for _ in range(b.ndim - 1))
    return P.einsum(a, b, subscripts=f"{sa}a,{sb}a->{sa}{sb}")


def outer(a: Any, b: Any) -> Array:
    """The outer product of the flattened arrays: out[i, j] = a[i] * b[j]."""
    return fnp.reshape(a, (-1, 1)) * fnp.reshape(b, (1, -1))


def _axes_pair(axes: Any, a: Array, b: Array) -> tuple[list, list]:
    if isinstance(axes, (int, np.integer)):
        n = operator.index(axes)
        return list(range(a.ndim - n, a.ndim)), list(range(n))
    xa, xb = axes
    xa = [xa] if isinstance(xa, (int, np.integer)) else list(xa)
    xb = [xb] if isinstance(xb, (int, np.integer)) else list(xb)
    if len(xa) != len(xb):
        raise ValueError(f"tensordot: axes {axes} pair {len(xa)} axes of a with {len(xb)} "
                         "of b; give as many of each")
    return ([normalize_axis(i, a.ndim)[0] for i in xa],
            [normalize_axis(i, b.ndim)[0] for i in xb])


def tensordot(a: Any, b: Any, axes: Any = 2) -> Array:
    """The sum product over ``axes`` (an int n: the last n of a with the first n of b;
    or a pair of axis lists)."""
    a, b = asarray(a), asarray(b)
    xa, xb = _axes_pair(axes, a, b)
    for i, j in zip(xa, xb):
        if a.shape[i] != b.shape[j]:
            raise ValueError(f"tensordot: axis {i} of a (shape {a.shape}) and axis {j} of "
                             f"b (shape {b.shape}) differ in length")
    sa = list(P.LETTERS[:a.ndim])
    sb = list(P.LETTERS[a.ndim:a.ndim + b.ndim])
    for i, j in zip(xa, xb):
        sb[j] = sa[i]
    out = [c for k, c in enumerate(sa) if k not in xa] + [
        c for k, c in enumerate(sb) if k not in xb]
    return P.einsum(a, b, subscripts=f"{''.join(sa)},{''.join(sb)}->{''.join(out)}")


def vecdot(x1: Any, x2: Any, /, *, axis: int = -1) -> Array:
    """sum(conj(x1) * x2) over ``axis`` of each operand (which must have one length in
    both; a non-negative axis counts in each operand's own shape, as numpy's), broadcasting
    the other axes; the result keeps the promoted dtype of the inputs."""
    x1, x2 = asarray(x1), asarray(x2)
    ax = axis_index(axis)
    ax1, ax2 = (normalize_axis(ax, x.ndim)[0] for x in (x1, x2))
    if x1.shape[ax1] != x2.shape[ax2]:
        raise ValueError(f"vecdot: x1 and x2 must have the same size along axis {axis}, "
                         f"got shapes {x1.shape} and {x2.shape}")
    x1, x2 = promote_dtypes(x1, x2)
    x1, x2 = fnp.moveaxis(x1, ax1, -1), fnp.moveaxis(x2, ax2, -1)
    return fnp.sum(P.conj(x1) * x2, axis=-1, dtype=x1.dtype)


def matvec(x1: Any, x2: Any, /) -> Array:
    """The matrix-vector products x1 @ x2 of stacks of matrices (..., M, N) and vectors
    (..., N), batch dimensions broadcast."""
    x1, x2 = asarray(x1), asarray(x2)
    if x1.ndim < 2 or x2.ndim < 1 or x1.shape[-1] != x2.shape[-1]:
        raise ValueError(f"matvec: shapes {x1.shape} and {x2.shape} do not match: need "
                         "(..., M, N) and (..., N)")
    return fnp.squeeze(matmul(x1, fnp.expand_dims(x2, -1)), -1)


def vecmat(x1: Any, x2: Any, /) -> Array:
    """The vector-matrix products conj(x1) @ x2 of stacks of vectors (..., M) and
    matrices (..., M, N), batch dimensions broadcast."""
    x1, x2 = asarray(x1), asarray(x2)
    if x2.ndim < 2 or x1.ndim < 1 or x1.shape[-1] != x2.shape[-2]:
        raise ValueError(f"vecmat: shapes {x1.shape} and {x2.shape} do not match: need "
                         "(..., M) and (..., M, N)")
    return fnp.squeeze(matmul(fnp.expand_dims(P.conj(x1), -2), x2), -2)


# -- einsum ------------------------------------------------------------------------------

def _interleaved(args: Sequence) -> tuple[str, list]:
    """einsum(op0, sublist0, op1, sublist1, ..., [sublistout]) as a subscripts string."""
    def letters(sub: Sequence) -> str:
        return "".join("..." if s is Ellipsis else P.LETTERS[s] for s in sub)
    paired = len(args) - len(args) % 2
    subscripts = ",".join(letters(s) for s in args[1:paired:2])
    if len(args) % 2:
        subscripts += "->" + letters(args[-1])
    return subscripts, list(args[0:paired:2])


def _explicit(subscripts: str, shapes: list[tuple]) -> str:
    """Subscripts with '...' spelled out and the output given ('->' numpy's implicit
    output: the indices seen once, sorted, after the broadcast ones)."""
    subscripts = subscripts.replace(" ", "")
    ins, arrow, out = subscripts.partition("->")
    ins = ins.split(",")
    if len(ins) != len(shapes):
        raise ValueError(f"einsum: subscripts {subscripts!r} name {len(ins)} operands but "
                         f"{len(shapes)} were given")
    used = set(subscripts) - set(",.->")
    spare = [c for c in P.LETTERS if c not in used]
    n_ell = max([len(s) - len(i.replace("...", "")) for i, s in zip(ins, shapes)
                 if "..." in i] or [0])
    ell = "".join(spare[:n_ell])
    for k, (sub, shape) in enumerate(zip(ins, shapes)):
        if "..." in sub:
            n = len(shape) - len(sub.replace("...", ""))
            sub = sub.replace("...", ell[n_ell - n:] if n else "")
        if len(sub) != len(shape):
            raise ValueError(f"einsum: operand {k} has {len(shape)} axes but subscripts "
                             f"{sub!r} name {len(sub)}")
        ins[k] = sub
    if arrow:
        out = out.replace("...", ell)
    else:
        joined = "".join(ins)
        out = ell + "".join(sorted(c for c in set(joined) - set(ell) if joined.count(c) == 1))
    return ",".join(ins) + "->" + out


def einsum(*operands: Any, optimize: Any = None) -> Array:
    """numpy's einsum: ``einsum("ij,jk->ik", a, b)``, with '...', implicit output and the
    interleaved form ``einsum(a, [0, 1], b, [1, 2])``. ``optimize`` is accepted for
    numpy compatibility (contractions of three or more operands are always optimised)."""
    if isinstance(operands[0], str):
        subscripts, ops = operands[0], list(operands[1:])
    else:
        subscripts, ops = _interleaved(operands)
    ops = [asarray(x) for x in ops]
    return P.einsum(*ops, subscripts=_explicit(subscripts, [x.shape for x in ops]))


def einsum_path(*operands: Any, optimize: Any = "greedy", einsum_call: bool = False) -> Any:
    """numpy's contraction order for an einsum (computed on the operands' shapes)."""
    shaped = [np.empty(asarray(x).shape, dtype=[]) if not isinstance(x, (str, list)) else x
              for x in operands]
    return np.einsum_path(*shaped, optimize=optimize, einsum_call=einsum_call)


def kron(a: Any, b: Any) -> Array:
    """The Kronecker product: blocks a[i, j] * b."""
    a, b = asarray(a), asarray(b)
    nd = max(a.ndim, b.ndim)
    sa, sb = (1,) * (nd - a.ndim) + a.shape, (1,) * (nd - b.ndim) + b.shape
    a = fnp.reshape(a, tuple(x for n in sa for x in (n, 1)))
    b = fnp.reshape(b, tuple(x for n in sb for x in (1, n)))
    return fnp.reshape(a * b, tuple(m * n for m, n in zip(sa, sb)))


# -- diagonals and triangles ---------------------------------------------------------------

def diagonal(a: Any, offset: int = 0, axis1: int = 0, axis2: int = 1) -> Array:
    """The diagonal at ``offset`` of the planes (axis1, axis2), on the last axis."""
    a = asarray(a)
    if a.ndim < 2:
        raise ValueError(f"diagonal needs an array of at least 2 dimensions, got shape "
                         f"{a.shape}")
    ax1, ax2 = (normalize_axis(x, a.ndim)[0] for x in (axis1, axis2))
    if ax1 == ax2:
        raise ValueError(f"diagonal: axis1 and axis2 are the same axis ({ax1})")
    return P.diagonal(a, offset=operator.index(offset), axis1=ax1, axis2=ax2)


def trace(a: Any, offset: int = 0, axis1: int = 0, axis2: int = 1, dtype: Any = None) -> Array:
    """The sum along a diagonal (see `diagonal`)."""
    return fnp.sum(diagonal(a, offset, axis1, axis2), axis=-1, dtype=dtype)


def diag(v: Any, k: int = 0) -> Array:
    """The k-th diagonal of a 2-D array, or a 2-D array with the 1-D v on its k-th
    diagonal."""
    v = asarray(v)
    if v.ndim == 1:
        k = operator.index(k)
        n = v.shape[0] + abs(k)
        return P.diagonal_embed(v, shape=(n, n), offset=k, axis1=0, axis2=1)
    if v.ndim == 2:
        return diagonal(v, k)
    raise ValueError(f"diag: input must be 1-D or 2-D, got shape {v.shape}")


def diagflat(v: Any, k: int = 0) -> Array:
    """A 2-D array with the flattened v on its k-th diagonal."""
    return diag(fnp.ravel(v), k)


def _triangle(m: Any, k: int, lower: bool) -> Array:
    m = asarray(m)
    mask = np.tri(*m.shape[-2:], k=operator.index(k) - (0 if lower else 1), dtype=bool)
    mask = P.constant(m, mask if lower else ~mask)
    return fnp.where(mask, m, P.constant(m, np.zeros((), m.dtype)))


def tril(m: Any, k: int = 0) -> Array:
    """The lower triangle (below the k-th diagonal, inclusive) of the last two axes."""
    return _triangle(m, k, True)


def triu(m: Any, k: int = 0) -> Array:
    """The upper triangle (above the k-th diagonal, inclusive) of the last two axes."""
    return _triangle(m, k, False)
