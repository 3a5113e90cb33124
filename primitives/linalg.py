"""Linear-algebra primitives: products, diagonals and the square-matrix solvers.

| primitive        | VJP (JAX's convention: the transpose, never the adjoint)             |
|------------------|----------------------------------------------------------------------|
| matmul           | g @ y^T and x^T @ g, with numpy's 1-D operands handled explicitly     |
| addmm            | c + x @ y: g for c, and matmul's for x and y                         |
| einsum           | einsum of g with the other operands, back to the operand's indices    |
| diagonal         | diagonal_embed of g (scatter into zeros)                              |
| diagonal_embed   | diagonal of g                                                         |
| solve            | gb = solve(a^T, g), ga = -gb @ x^T                                    |
| inv              | -inv^T @ g @ inv^T                                                    |
| det              | g * cofactor(a) (= det * inv(a)^T, exact at singular matrices too)    |
| cofactor         | (<g, C> C - C g^T C) / det (the derivative of det * inv^T)            |
| slogdet          | (g_logdet + i Im(sign g_sign)) * inv(a)^T                             |

The decompositions (cholesky, eigh, svd, qr, pinv) live in `decompositions`; the helpers
below (matrix transpose, conjugate transpose, diagonal matrices, constants placed on the
device of an array) serve both modules. Batch dimensions broadcast as in numpy: rules
return cotangents of the broadcast shape and the tape sums them back.
"""
from __future__ import annotations

from typing import Any

import numpy as np

from funcgrad.core import ZERO, Primitive
from funcgrad.meta import ShapeDtypeStruct, def_meta_impl, stand_in
from .constants import constant, ones_like, zeros_like
from .elementwise import conj as conj_p, real as real_p
from .promotion import SAME
from .kernels import linalg as kernels
from .reductions import reduce_sum
from .samplers import linalg as samplers
from .shape import reshape, transpose

__all__ = ["matmul", "matmul_tn", "addmm", "einsum", "diagonal", "diagonal_embed", "solve",
           "inv", "det", "slogdet", "mT", "H", "conj", "real", "expand", "squeeze", "diag",
           "diagonal_of", "trace", "eye_like", "abs2", "constant", "is_complex"]

# ---------------------------------------------------------------------------------------
# Helpers for rules (funcgrad ops only, so that rules differentiate again)
# ---------------------------------------------------------------------------------------


def mT(x: Any) -> Any:
    """x with its last two axes swapped."""
    n = x.ndim
    return transpose.bind(x, axes=(1, 0) if n == 2 else tuple(range(n - 2)) + (n - 1, n - 2))


def is_complex(x: Any) -> bool:
    return np.issubdtype(x.dtype, np.complexfloating)


def conj(x: Any) -> Any:
    """The complex conjugate (x itself when real)."""
    return conj_p(x) if is_complex(x) else x


def H(x: Any) -> Any:
    """The conjugate transpose of the last two axes."""
    return conj(mT(x))


def expand(x: Any, axis: int) -> Any:
    """x with a new size-1 axis at ``axis`` (negative counts from the end of the result)."""
    shape = list(x.shape)
    shape.insert(axis % (x.ndim + 1), 1)
    return reshape(x, shape=tuple(shape))


def squeeze(x: Any, axis: int) -> Any:
    shape = list(x.shape)
    del shape[axis]
    return reshape(x, shape=tuple(shape))


def eye_like(x: Any, n: int) -> Any:
    """The n x n identity with x's dtype, on x's device."""
    return constant(x, np.eye(n, dtype=x.dtype))


def diag(v: Any) -> Any:
    """The (..., k, k) diagonal matrices with diagonals v (..., k)."""
    return expand(v, -2) * eye_like(v, v.shape[-1])


def diagonal_of(x: Any) -> Any:
    """The diagonals of the last two axes."""
    return diagonal(x, offset=0, axis1=x.ndim - 2, axis2=x.ndim - 1)


def trace(x: Any) -> Any:
    """The traces of the last two axes."""
    d = diagonal_of(x)
    return reduce_sum(d, axis=(d.ndim - 1,), keepdims=False)


def real(x: Any) -> Any:
    return real_p(x) if is_complex(x) else x


def abs2(x: Any) -> Any:
    """|x|^2 (a phase- and sign-invariant view of eigen- and singular vectors)."""
    return real(x * conj(x))


# ---------------------------------------------------------------------------------------
# matmul
# ---------------------------------------------------------------------------------------


def _matmul_x(g: Any, y: Any, x_shape: tuple) -> Any:
    if len(x_shape) > 1:
        return expand(g, -1) * y if y.ndim == 1 else matmul.bind(g, mT(y))
    if y.ndim == 1:
        return g * y
    return squeeze(matmul(y, expand(g, -1)), -1)


def _matmul_y(g: Any, x: Any, y_shape: tuple, y_layout: str) -> Any:
    """x^T g, summed over batch dimensions; it needs x, and of y only its shape and its
    layout token (what PyTorch keeps of mat2: its sizes and strides), so that the tape
    saves x alone, and writing y in place between two backward passes does not matter."""
    if len(y_shape) > 1:
        if x.ndim == 1:
            return expand(x, -1) * expand(g, -2)
        if g.ndim == 2 and x.ndim == 2 and len(y_shape) == 2:
            return matmul_tn.bind(x, g, layout=y_layout)  # laid out as y is (the kernel's job)
        return matmul.bind(mT(x), g)
    if x.ndim == 1:
        return g * x
    return squeeze(matmul(expand(g, -2), x), -2)


matmul = Primitive("matmul", kernels.matmul, ("x", "y"), sample=samplers.matmul, fresh=True,
                   promote=SAME,
                   doc="numpy's matmul: 1-D operands and broadcasting batch dimensions.")
matmul.defvjp(_matmul_x, _matmul_y)
matmul.defjvp(lambda t, y: matmul(t, y), lambda t, x: matmul(x, t))


def _matmul_on_meta(x: Any, y: Any) -> ShapeDtypeStruct:
    """matmul's result on meta arrays from the shapes alone: a product of stand-ins would
    cost a real product. Operands that do not fit raise the kernel's own error (numpy
    checks the shapes before multiplying, so that call costs nothing)."""
    xs, ys = tuple(x.shape), tuple(y.shape)
    fits = bool(xs and ys) and xs[-1] == ys[-2 if len(ys) > 1 else 0]
    try:
        batch = np.broadcast_shapes(xs[:-2], ys[:-2]) if fits else None
    except ValueError:
        batch = None
    if batch is None:
        kernels.matmul(stand_in(x), stand_in(y))
    dtype = kernels.matmul(np.zeros((1, 1), x.dtype), np.zeros((1, 1), y.dtype)).dtype
    return ShapeDtypeStruct(batch + xs[-2:-1] + ys[-1:] if len(ys) > 1 else
                            batch + xs[-2:-1], dtype)


def_meta_impl(matmul, _matmul_on_meta)


# x^T @ y for matrices, stored in the layout ``layout`` names ("C" or "F", a `layout_of`
# token: matmul's y-cotangent is laid out as y is; see the kernel): linear in x and y
matmul_tn = Primitive("matmul_tn", kernels.matmul_tn, ("x", "y"), ("layout",),
                      sample=samplers.matmul_tn, fresh=True,
                      doc="x^T @ y for matrices, stored row-major (layout='C') or column-major "
                          "(layout='F').")
matmul_tn.defvjp(lambda g, y: matmul(y, mT(g)), lambda g, x: matmul(x, g))
matmul_tn.defjvp(lambda t, y: matmul(mT(t), y), lambda t, x: matmul(mT(x), t))


# c + x @ y for matrices x, y (PyTorch's addmm, what every linear layer computes): one
# record instead of two, and one pass over the result instead of two
addmm = Primitive("addmm", kernels.addmm, ("c", "x", "y"), sample=samplers.addmm, fresh=True,
                  doc="c + x @ y, for matrices x and y and c broadcasting to their product.")
addmm.defvjp(lambda g: g, lambda g, y: matmul(g, mT(y)), _matmul_y)
addmm.defjvp(lambda t: t, lambda t, y: matmul(t, y), lambda t, x: matmul(x, t))


def _addmm_on_meta(c: Any, x: Any, y: Any) -> ShapeDtypeStruct:
    product = _matmul_on_meta(x, y)
    return ShapeDtypeStruct(np.broadcast_shapes(c.shape, product.shape),
                            np.result_type(product.dtype, c.dtype))


def_meta_impl(matmul_tn, lambda x, y, layout: _matmul_on_meta(
    ShapeDtypeStruct(x.shape[::-1], x.dtype), y))
def_meta_impl(addmm, _addmm_on_meta)

# ---------------------------------------------------------------------------------------
# einsum (explicit subscripts "ab,bc->ac": the namespace resolves '...' and implicit mode)
# ---------------------------------------------------------------------------------------

LETTERS = "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ"


def parse_subscripts(subscripts: str) -> tuple[list[str], str]:
    ins, out = subscripts.split("->")
    return ins.split(","), out


def _einsum_to(target: str, subs: list[str], operands: list, sizes: dict, like: Any) -> Any:
    """einsum of ``operands`` (indices ``subs``) laid out with indices ``target``: indices
    missing from ``subs`` are broadcast (a ones vector), repeated ones become diagonals (an
    identity matrix per repeat). This transposes an einsum back to one of its operands."""
    fresh = iter(c for c in LETTERS if c not in sizes)
    seen: set = set()
    out = ""
    subs, operands = list(subs), list(operands)
    avail = set("".join(subs))
    for c in target:
        if c in seen:  # a repeat: a new index tied to c by an identity matrix
            d = next(fresh)
            subs.append(c + d)
            operands.append(eye_like(like, sizes[c]))
            out += d
            continue
        seen.add(c)
        if c not in avail:
            subs.append(c)
            operands.append(ones_like(like, shape=(sizes[c],)))
        out += c
    return einsum(*operands, subscripts=",".join(subs) + "->" + out)


def _einsum_vjp(g: Any, xs: tuple, argnum: int, subscripts: str, shapes: tuple) -> Any:
    ins, out = parse_subscripts(subscripts)
    sizes: dict = {}
    for sub, shape in zip(ins + [out], shapes + (g.shape,)):
        for c, n in zip(sub, shape):
            sizes[c] = n if sizes.get(c, 1) == 1 else sizes[c]  # broadcasting
    others = [i for i in range(len(xs)) if i != argnum]
    return _einsum_to(ins[argnum], [out] + [ins[i] for i in others],
                      [g] + [xs[i] for i in others], sizes, g)


def _einsum_jvp(t: Any, xs: tuple, argnum: int, subscripts: str) -> Any:
    return einsum(*xs[:argnum], t, *xs[argnum + 1:], subscripts=subscripts)


einsum = Primitive("einsum", kernels.einsum, None, ("subscripts",), sample=samplers.einsum,
                   promote=SAME,
                   doc="numpy's einsum with explicit subscripts such as 'ij,jk->ik'.")
einsum.defvjp(_einsum_vjp)
einsum.defjvp(_einsum_jvp)

# ---------------------------------------------------------------------------------------
# diagonal and its transpose diagonal_embed
# ---------------------------------------------------------------------------------------


diagonal = Primitive("diagonal", lambda x, offset, axis1, axis2: np.diagonal(
    x, offset, axis1, axis2), params=("offset", "axis1", "axis2"), view=True,
    sample=samplers.diagonal(False), doc="numpy's diagonal (axes non-negative).")
diagonal_embed = Primitive(
    "diagonal_embed", kernels.diagonal_embed, params=("shape", "offset", "axis1", "axis2"),
    sample=samplers.diagonal(True),
    doc="Zeros of ``shape`` with x on the diagonal (offset, axis1, axis2): the transpose "
        "of diagonal.")
diagonal.defvjp(lambda g, x_shape, offset, axis1, axis2: diagonal_embed(
    g, shape=x_shape, offset=offset, axis1=axis1, axis2=axis2))
diagonal.defjvp(lambda t, offset, axis1, axis2: diagonal(
    t, offset=offset, axis1=axis1, axis2=axis2))
diagonal_embed.defvjp(lambda g, offset, axis1, axis2: diagonal(
    g, offset=offset, axis1=axis1, axis2=axis2))
diagonal_embed.defjvp(lambda t, shape, offset, axis1, axis2: diagonal_embed(
    t, shape=shape, offset=offset, axis1=axis1, axis2=axis2))

# ---------------------------------------------------------------------------------------
# solve, inv, det, slogdet
# ---------------------------------------------------------------------------------------


def _solve_vjp(g: Any, a: Any, out: Any) -> tuple:
    gb = solve(mT(a), g)
    return -matmul(gb, mT(out)), gb


def _slogdet_vjp(g: tuple, a: Any, out: tuple) -> Any:
    g_sign, g_logdet = g
    c = g_logdet
    if is_complex(a):  # d sign = i Im(tau) sign: its transpose adds i Im(sign g_sign)
        z = out[0] * g_sign
        c = c + (z - real(z))
    return expand(expand(c, -1), -1) * mT(inv(a))


def _slogdet_jvp(t: Any, a: Any, out: tuple) -> tuple:
    sign = out[0]
    tau = trace(solve(a, t))
    if is_complex(a):
        return sign * (tau - real(tau)), real(tau)
    return zeros_like(sign), tau


solve = Primitive("solve", np.linalg.solve, ("a", "b"),
                  sample=samplers.square(lambda a, b: solve(a, b), rhs=True),
                  doc="x with a @ x = b for a (..., M, M) and b (..., M, K).")
solve.defvjp_all(_solve_vjp)
solve.defjvp(lambda t, a, out: -solve(a, matmul(t, out)), lambda t, a: solve(a, t))

inv = Primitive("inv", np.linalg.inv, sample=samplers.square(lambda a: inv(a)))
inv.defvjp(lambda g, out: -matmul(matmul(mT(out), g), mT(out)))
inv.defjvp(lambda t, out: -matmul(matmul(out, t), out))

def _matrix_sum(x: Any) -> Any:
    """The sum over the last two axes."""
    return reduce_sum(x, axis=(x.ndim - 2, x.ndim - 1), keepdims=False)


def _cofactor_vjp(g: Any, x: Any, out: Any) -> Any:
    """The transpose of dC = (tr(C^T dA) C - C dA^T C) / det(a), the derivative of
    C = det(a) a^-T. (It divides by det: at a singular matrix the second derivative of
    det is NaN, its first one, the cofactor itself, is exact.)"""
    d = expand(expand(det(x), -1), -1)
    inner = expand(expand(_matrix_sum(g * out), -1), -1)
    return (inner * out - matmul(matmul(out, mT(g)), out)) / d


def _cofactor_jvp(t: Any, x: Any, out: Any) -> Any:
    d = expand(expand(det(x), -1), -1)
    inner = expand(expand(_matrix_sum(out * t), -1), -1)
    return (inner * out - matmul(matmul(out, mT(t)), out)) / d


# det's derivative, det(a) inv(a)^T, computed so that it exists at singular matrices too
cofactor = Primitive("cofactor", kernels.cofactor_matrix,
                     sample=samplers.square(lambda a: cofactor(a)),
                     doc="The cofactor matrices det(a) inv(a)^T of square matrices (exact "
                     "at singular ones).")
cofactor.defvjp(_cofactor_vjp)
cofactor.defjvp(_cofactor_jvp)

det = Primitive("det", np.linalg.det, sample=samplers.square(lambda a: det(a)))
det.defvjp(lambda g, x: expand(expand(g, -1), -1) * cofactor(x))
det.defjvp(lambda t, x: _matrix_sum(cofactor(x) * t))

slogdet = Primitive("slogdet", lambda a: tuple(np.linalg.slogdet(a)), ("a",),
                    multiple_results=True, sample=samplers.square(lambda a: slogdet(a)),
                    doc="(sign, log|det|) of square matrices.")
slogdet.defvjp(_slogdet_vjp)
slogdet.defjvp(_slogdet_jvp)


# -- batching rules (vmap) ------------------------------------------------------------------
# (imported here: funcgrad.primitives.batching builds on the shape primitives)
from . import batching as B  # noqa: E402


def _batch_matmul(args: tuple, dims: tuple) -> tuple:
    """numpy's matmul with the batch axis as one more leading (broadcast) dimension: 1-D
    examples become a row (x) or a column (y) matrix, dropped again from the result."""
    (x, y), (dx, dy) = args, dims
    x_vec, y_vec = x.ndim - (dx is not None) == 1, y.ndim - (dy is not None) == 1
    if dx is not None:
        x = B.to_front(x, dx)
        x = expand(x, -2) if x_vec else x
    if dy is not None:
        y = B.to_front(y, dy)
        y = expand(y, -1) if y_vec else y
    rank = max(x.ndim - (dx is not None) + (x_vec and dx is None),
               y.ndim - (dy is not None) + (y_vec and dy is None))
    if dx is not None:
        x = B.lift(x, rank)
    elif x_vec:
        x = expand(x, -2)
    if dy is not None:
        y = B.lift(y, rank)
    elif y_vec:
        y = expand(y, -1)
    out = matmul(x, y)
    if y_vec:
        out = squeeze(out, -1)
    if x_vec:
        out = squeeze(out, -1 if y_vec else -2)
    return out, 0


def _batch_einsum(args: tuple, dims: tuple, subscripts: str) -> tuple:
    """A fresh index letter for the batch axis of each batched operand and the result."""
    ins, out = parse_subscripts(subscripts)
    b = next(c for c in LETTERS if c not in subscripts)
    ops = [x if d is None else B.to_front(x, d) for x, d in zip(args, dims)]
    ins = [s if d is None else b + s for s, d in zip(ins, dims)]
    return einsum(*ops, subscripts=",".join(ins) + "->" + b + out), 0


def _batch_solve(args: tuple, dims: tuple) -> tuple:
    """b of one example may be a vector: made a column, so that numpy's batched solve
    reads it as a right-hand side, not a stack of them."""
    (a, b), (da, db) = args, dims
    vector = b.ndim - (db is not None) == 1
    if vector:
        b = expand(b, -1)
    out = solve(*B.leading_args((a, b), (da, db), (2, 2)))
    return (squeeze(out, -1) if vector else out), 0


def _batch_diagonal(args: tuple, dims: tuple, offset: int, axis1: int, axis2: int) -> tuple:
    return diagonal(B.to_front(args[0], dims[0]), offset=offset, axis1=axis1 + 1,
                    axis2=axis2 + 1), 0


def _batch_diagonal_embed(args: tuple, dims: tuple, shape: tuple, offset: int, axis1: int,
                          axis2: int) -> tuple:
    x = B.to_front(args[0], dims[0])
    return diagonal_embed(x, shape=(x.shape[0],) + tuple(shape), offset=offset,
                          axis1=axis1 + 1, axis2=axis2 + 1), 0


def _batch_matmul_tn(args: tuple, dims: tuple, layout: str) -> tuple:
    """x^T @ y of each example (the layout token does not change the values)."""
    x, y = (B.to_front(a, d) if d is not None else a for a, d in zip(args, dims))
    return _batch_matmul((mT(x), y), tuple(None if d is None else 0 for d in dims))


def _batch_addmm(args: tuple, dims: tuple) -> tuple:
    c, x, y = args
    prod, _ = _batch_matmul((x, y), dims[1:])
    return (prod + (c if dims[0] is None else B.lift(B.to_front(c, dims[0]), 2))), 0


matmul.defbatch(_batch_matmul)
matmul_tn.defbatch(_batch_matmul_tn)
addmm.defbatch(_batch_addmm)
einsum.defbatch(_batch_einsum)
diagonal.defbatch(_batch_diagonal)
diagonal_embed.defbatch(_batch_diagonal_embed)
solve.defbatch(_batch_solve)
for _p in (inv, cofactor, det, slogdet):
    B.leading(_p)
