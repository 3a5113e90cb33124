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

from typing import Any, Callable

import numpy as np

import funcgrad.numpy as fnp
from funcgrad.array import Array
from funcgrad.backend import wrap_on
from funcgrad.core import Primitive
from . import sampling
from .kernels.linalg import cofactor_matrix
from .sampling import Case
from .shape import reshape, transpose

# ---------------------------------------------------------------------------------------
# Helpers for rules (funcgrad ops only, so that rules differentiate again)
# ---------------------------------------------------------------------------------------


def mT(x: Any) -> Any:
    """x with its last two axes swapped."""
    n = x.ndim
    return transpose(x, axes=(1, 0) if n == 2 else tuple(range(n - 2)) + (n - 1, n - 2))


def is_complex(x: Any) -> bool:
    return np.issubdtype(x.dtype, np.complexfloating)


def conj(x: Any) -> Any:
    """The complex conjugate (x itself when real)."""
    return fnp.conj(x) if is_complex(x) else x


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


def constant(like: Any, raw: np.ndarray) -> Array:
    """A numpy constant placed on the device of ``like`` (a no-op on the CPU)."""
    return wrap_on(raw, fnp.asarray(like).concrete()._value)


def eye_like(x: Any, n: int) -> Array:
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
    return fnp.sum(diagonal_of(x), axis=-1)


def real(x: Any) -> Any:
    return fnp.real(x) if is_complex(x) else x


# ---------------------------------------------------------------------------------------
# Samplers: small, well-conditioned matrices with batch dimensions (size 0 included)
# ---------------------------------------------------------------------------------------


def draw_batch(draw: Callable, max_dims: int = 2) -> tuple:
    return sampling.draw_shape(draw, 0, max_dims, 0, 2)


def draw_int(draw: Callable, lo: int, hi: int) -> int:
    from hypothesis import strategies as st
    return draw(st.integers(lo, hi))


def draw_bool(draw: Callable) -> bool:
    from hypothesis import strategies as st
    return draw(st.booleans())


def well_conditioned(rng: np.random.RandomState, shape: tuple, complex_: bool = False
                     ) -> np.ndarray:
    """Random (..., m, n) matrices, diagonally dominant (singular values near max(m, n)),
    with random row signs so that determinants take both signs."""
    *batch, m, n = shape
    a = sampling.values(rng, shape, (-1.0, 1.0), complex_=complex_)
    a = a + (max(m, n) + 1) * np.eye(m, n)
    return a * rng.choice([-1.0, 1.0], (*batch, m, 1))


def unitary(rng: np.random.RandomState, shape: tuple, complex_: bool = False) -> np.ndarray:
    """Random (..., n, k) matrices with orthonormal columns (n >= k)."""
    q, _ = np.linalg.qr(sampling.values(rng, shape, (-1.0, 1.0), complex_=complex_))
    return q


def spread(rng: np.random.RandomState, batch: tuple, k: int) -> np.ndarray:
    """(..., k) positive values at least 1 apart, ascending."""
    return 1.0 + np.arange(k) * 1.5 + rng.uniform(0.0, 0.5, (*batch, k))


def spd(rng: np.random.RandomState, batch: tuple, n: int, complex_: bool = False
        ) -> np.ndarray:
    """Hermitian positive definite matrices with eigenvalues at least 1 apart."""
    q = unitary(rng, (*batch, n, n), complex_)
    return (q * spread(rng, batch, n)[..., None, :]) @ np.conj(np.swapaxes(q, -1, -2))


def abs2(x: Any) -> Any:
    """|x|^2 (a phase- and sign-invariant view of eigen- and singular vectors)."""
    return real(x * conj(x))


# ---------------------------------------------------------------------------------------
# matmul
# ---------------------------------------------------------------------------------------


def _matmul_impl(x: Any, y: Any) -> Any:
    try:
        return np.matmul(x, y)
    except ValueError:
        xs, ys = np.shape(x), np.shape(y)
        if not xs or not ys:
            hint = "matmul does not take 0-d operands; use multiply (*) for scalars"
        elif xs[-1] != ys[-2 if len(ys) > 1 else 0]:
            hint = (f"the last axis of the first operand ({xs[-1]}) must equal the "
                    f"{'second-to-last' if len(ys) > 1 else 'only'} axis of the second "
                    f"({ys[-2 if len(ys) > 1 else 0]})")
        else:
            hint = "their batch dimensions (all but the last two) do not broadcast"
        raise ValueError(f"matmul: shapes {xs} and {ys} do not match: {hint}") from None


def _matmul_x(g: Any, y: Any, x_shape: tuple) -> Any:
    if len(x_shape) > 1:
        return expand(g, -1) * y if y.ndim == 1 else matmul(g, mT(y))
    if y.ndim == 1:
        return g * y
    return squeeze(matmul(y, expand(g, -1)), -1)


def column_major(x: Any) -> bool:
    """Whether ``x`` is a concrete matrix stored column by column, as the transpose ``w.T``
    of a row-major ``w`` is (tracers: no, their layout is not known yet)."""
    if type(x) is not Array or x.ndim != 2:
        return False
    flags = x._value.flags
    return flags.f_contiguous and not flags.c_contiguous


def _matmul_y(g: Any, x: Any, y: Any) -> Any:
    if y.ndim > 1:
        if x.ndim == 1:
            return expand(x, -1) * expand(g, -2)
        if g.ndim == 2 and column_major(y):
            # the gradient in y's layout, as PyTorch's layout contract asks: for y = w.T
            # the transpose's VJP then hands w a row-major gradient, and an update
            # ``w - lr * grad`` runs on matching layouts (mixed ones are ~10x slower)
            return mT(matmul(mT(g), x))
        return matmul(mT(x), g)
    if x.ndim == 1:
        return g * x
    return squeeze(matmul(expand(g, -2), x), -2)


def _matmul_cases(rng: np.random.RandomState, draw: Callable) -> list:
    from hypothesis.extra import numpy as hnp
    n, k, m = (draw_int(draw, 0, 3) for _ in range(3))
    bx, by = draw(hnp.mutually_broadcastable_shapes(
        num_shapes=2, min_dims=0, max_dims=2, min_side=0, max_side=2)).input_shapes
    xs = (k,) if draw_bool(draw) else (*bx, n, k)
    ys = (k,) if draw_bool(draw) else (*by, k, m)
    cx, cy = draw_bool(draw), draw_bool(draw)
    return [Case(matmul, (sampling.values(rng, xs, complex_=cx),
                          sampling.values(rng, ys, complex_=cy)), f"{xs} @ {ys}")]


matmul = Primitive("matmul", _matmul_impl, ("x", "y"), sample=sampling.custom(_matmul_cases),
                   doc="numpy's matmul: 1-D operands and broadcasting batch dimensions.")
matmul.defvjp(_matmul_x, _matmul_y)
matmul.defjvp(lambda t, y: matmul(t, y), lambda t, x: matmul(x, t))


def _addmm_impl(c: Any, x: Any, y: Any) -> Any:
    """``c + x @ y``, the add done in place on the fresh product where that is the same
    (``c`` broadcasts to it and does not widen its dtype): one pass and one array less."""
    out = _matmul_impl(x, y)
    if type(out) is np.ndarray and np.result_type(out, c) == out.dtype:
        try:
            out += c
            return out
        except ValueError:  # c does not broadcast into the product: add's own error
            pass
    return np.add(out, c)


def _addmm_cases(rng: np.random.RandomState, draw: Callable) -> list:
    n, k, m = (draw_int(draw, 0, 3) for _ in range(3))
    cs = ((), (m,), (1, m), (n, 1), (n, m))[draw_int(draw, 0, 4)]
    return [Case(addmm, (sampling.values(rng, cs), sampling.values(rng, (n, k)),
                         sampling.values(rng, (k, m))), f"{cs} + {(n, k)} @ {(k, m)}")]


# c + x @ y for matrices x, y (PyTorch's addmm, what every linear layer computes): one
# record instead of two, and one pass over the result instead of two
addmm = Primitive("addmm", _addmm_impl, ("c", "x", "y"), sample=sampling.custom(_addmm_cases),
                  doc="c + x @ y, for matrices x and y and c broadcasting to their product.")
addmm.defvjp(lambda g: g, lambda g, y: matmul(g, mT(y)), _matmul_y)
addmm.defjvp(lambda t: t, lambda t, y: matmul(t, y), lambda t, x: matmul(x, t))

# ---------------------------------------------------------------------------------------
# einsum (explicit subscripts "ab,bc->ac": the namespace resolves '...' and implicit mode)
# ---------------------------------------------------------------------------------------

LETTERS = "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ"


def parse_subscripts(subscripts: str) -> tuple[list[str], str]:
    ins, out = subscripts.split("->")
    return ins.split(","), out


def _einsum_impl(*xs: Any, subscripts: str) -> Any:
    # numpy's path search (BLAS, contraction order) costs ~15us: worth it on larger inputs
    big = len(xs) > 1 and sum(np.size(x) for x in xs) > 1000
    return np.einsum(subscripts, *xs, optimize=big)


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
            operands.append(fnp.ones_like(like, shape=(sizes[c],)))
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


_EINSUM_SAMPLES = ["ij,jk->ik", "ii->i", "ii->", "ij->", "ij->ji", "i,i->", "ij,j->i",
                   "bij,bjk->bik", "i,j->ij", "ij,jk,kl->il", "iij->j", "ij,ij->ij",
                   "ijk,k->ij", "ab,c->abc", "iji->j"]


def _einsum_cases(rng: np.random.RandomState, draw: Callable) -> list:
    from hypothesis import strategies as st
    subscripts = draw(st.sampled_from(_EINSUM_SAMPLES))
    sizes = {c: draw_int(draw, 0, 3) for c in sorted(set(subscripts) - set(",->"))}
    ins, _ = parse_subscripts(subscripts)
    complex_ = draw_bool(draw)
    args = tuple(sampling.values(rng, tuple(sizes[c] for c in s), complex_=complex_)
                 for s in ins)
    return [Case(lambda *xs: einsum(*xs, subscripts=subscripts), args,
                 f"{subscripts} {sizes}")]


einsum = Primitive("einsum", _einsum_impl, None, ("subscripts",),
                   sample=sampling.custom(_einsum_cases),
                   doc="numpy's einsum with explicit subscripts such as 'ij,jk->ik'.")
einsum.defvjp(_einsum_vjp)
einsum.defjvp(_einsum_jvp)

# ---------------------------------------------------------------------------------------
# diagonal and its transpose diagonal_embed
# ---------------------------------------------------------------------------------------


def _embed_impl(x: Any, shape: tuple, offset: int, axis1: int, axis2: int) -> Any:
    out = np.zeros_like(x, shape=shape)
    k = x.shape[-1]
    i = np.arange(k)
    view = np.moveaxis(out, (axis1, axis2), (-2, -1))
    view[..., i + max(-offset, 0), i + max(offset, 0)] = x
    return out


def _diagonal_case(embed: bool) -> Callable:
    def cases(rng: np.random.RandomState, draw: Callable) -> list:
        from hypothesis import strategies as st
        shape = sampling.draw_shape(draw, 2, 4, 0, 3)
        axis1, axis2 = draw(st.permutations(range(len(shape))))[:2]
        offset = draw_int(draw, -2, 2)
        kw = dict(offset=offset, axis1=axis1, axis2=axis2)
        x = sampling.values(rng, shape)
        if embed:
            return [Case(lambda d: diagonal_embed(d, shape=shape, **kw),
                         (np.diagonal(x, **kw).copy(),), f"{shape} {kw}")]
        return [Case(lambda a: diagonal(a, **kw), (x,), f"{shape} {kw}")]
    return sampling.custom(cases)


diagonal = Primitive("diagonal", lambda x, offset, axis1, axis2: np.diagonal(
    x, offset, axis1, axis2), params=("offset", "axis1", "axis2"), view=True,
    sample=_diagonal_case(False), doc="numpy's diagonal (axes non-negative).")
diagonal_embed = Primitive(
    "diagonal_embed", _embed_impl, params=("shape", "offset", "axis1", "axis2"),
    sample=_diagonal_case(True),
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


def square_cases(fun: Callable, complex_: bool = True, rhs: bool = False) -> Callable:
    """Sampler: stacks of well-conditioned square matrices (and right-hand sides)."""
    def cases(rng: np.random.RandomState, draw: Callable) -> list:
        batch, n = draw_batch(draw), draw_int(draw, 0, 3)
        cplx = complex_ and draw_bool(draw)
        args = [well_conditioned(rng, (*batch, n, n), cplx)]
        if rhs:
            bb = batch[draw_int(draw, 0, len(batch)):]
            args.append(sampling.values(rng, (*bb, n, draw_int(draw, 0, 2)), complex_=cplx))
        return [Case(fun, tuple(args), f"{args[0].shape} {args[0].dtype}")]
    return sampling.custom(cases)


def _solve_vjp(g: Any, a: Any, out: Any) -> tuple:
    gb = solve(mT(a), g)
    return -matmul(gb, mT(out)), gb


def _slogdet_vjp(g: tuple, a: Any, out: tuple) -> Any:
    g_sign, g_logdet = g
    c = g_logdet
    if is_complex(a):  # d sign = i Im(tau) sign: its transpose adds i Im(sign g_sign)
        z = out[0] * g_sign
        c = c + (z - fnp.real(z))
    return expand(expand(c, -1), -1) * mT(inv(a))


def _slogdet_jvp(t: Any, a: Any, out: tuple) -> tuple:
    sign = out[0]
    tau = trace(solve(a, t))
    if is_complex(a):
        return sign * (tau - fnp.real(tau)), fnp.real(tau)
    return fnp.zeros_like(sign), tau


solve = Primitive("solve", np.linalg.solve, ("a", "b"),
                  sample=square_cases(lambda a, b: solve(a, b), rhs=True),
                  doc="x with a @ x = b for a (..., M, M) and b (..., M, K).")
solve.defvjp_all(_solve_vjp)
solve.defjvp(lambda t, a, out: -solve(a, matmul(t, out)), lambda t, a: solve(a, t))

inv = Primitive("inv", np.linalg.inv, sample=square_cases(lambda a: inv(a)))
inv.defvjp(lambda g, out: -matmul(matmul(mT(out), g), mT(out)))
inv.defjvp(lambda t, out: -matmul(matmul(out, t), out))

def _cofactor_vjp(g: Any, x: Any, out: Any) -> Any:
    """The transpose of dC = (tr(C^T dA) C - C dA^T C) / det(a), the derivative of
    C = det(a) a^-T. (It divides by det: at a singular matrix the second derivative of
    det is NaN, its first one, the cofactor itself, is exact.)"""
    d = expand(expand(det(x), -1), -1)
    inner = expand(expand(fnp.sum(g * out, axis=(-2, -1)), -1), -1)
    return (inner * out - matmul(matmul(out, mT(g)), out)) / d


def _cofactor_jvp(t: Any, x: Any, out: Any) -> Any:
    d = expand(expand(det(x), -1), -1)
    inner = expand(expand(fnp.sum(out * t, axis=(-2, -1)), -1), -1)
    return (inner * out - matmul(matmul(out, mT(t)), out)) / d


# det's derivative, det(a) inv(a)^T, computed so that it exists at singular matrices too
cofactor = Primitive("cofactor", cofactor_matrix, sample=square_cases(lambda a: cofactor(a)),
                     doc="The cofactor matrices det(a) inv(a)^T of square matrices (exact "
                     "at singular ones).")
cofactor.defvjp(_cofactor_vjp)
cofactor.defjvp(_cofactor_jvp)

det = Primitive("det", np.linalg.det, sample=square_cases(lambda a: det(a)))
det.defvjp(lambda g, x: expand(expand(g, -1), -1) * cofactor(x))
det.defjvp(lambda t, x: fnp.sum(cofactor(x) * t, axis=(-2, -1)))

slogdet = Primitive("slogdet", lambda a: tuple(np.linalg.slogdet(a)), ("a",),
                    multiple_results=True, sample=square_cases(lambda a: slogdet(a)),
                    doc="(sign, log|det|) of square matrices.")
slogdet.defvjp(_slogdet_vjp)
slogdet.defjvp(_slogdet_jvp)
