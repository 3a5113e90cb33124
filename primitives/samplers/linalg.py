"""Samplers of the linear-algebra, decomposition and FFT families: small, well-conditioned
matrices with batch dimensions (size 0 included)."""
from __future__ import annotations

from typing import Any, Callable

import numpy as np

from .. import sampling
from ..sampling import Case, draw_bool, draw_int

__all__ = ["draw_batch", "well_conditioned", "unitary", "spread", "spd", "matmul", "addmm",
           "einsum", "diagonal", "square", "hermitian", "general", "rectangular", "fourier"]


def draw_batch(draw: Callable, max_dims: int = 2) -> tuple:
    return sampling.draw_shape(draw, 0, max_dims, 0, 2)


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


def _matmul(prim: Any, rng: np.random.RandomState, draw: Callable) -> list:
    from hypothesis.extra import numpy as hnp  # a test dependency
    n, k, m = (draw_int(draw, 0, 3) for _ in range(3))
    bx, by = draw(hnp.mutually_broadcastable_shapes(
        num_shapes=2, min_dims=0, max_dims=2, min_side=0, max_side=2)).input_shapes
    xs = (k,) if draw_bool(draw) else (*bx, n, k)
    ys = (k,) if draw_bool(draw) else (*by, k, m)
    cx, cy = draw_bool(draw), draw_bool(draw)
    return [Case(prim, (sampling.values(rng, xs, complex_=cx),
                        sampling.values(rng, ys, complex_=cy)), f"{xs} @ {ys}")]


matmul = sampling.sampler(_matmul)


def _addmm(prim: Any, rng: np.random.RandomState, draw: Callable) -> list:
    n, k, m = (draw_int(draw, 0, 3) for _ in range(3))
    cs = ((), (m,), (1, m), (n, 1), (n, m))[draw_int(draw, 0, 4)]
    return [Case(prim, (sampling.values(rng, cs), sampling.values(rng, (n, k)),
                        sampling.values(rng, (k, m))), f"{cs} + {(n, k)} @ {(k, m)}")]


addmm = sampling.sampler(_addmm)


def _matmul_tn(prim: Any, rng: np.random.RandomState, draw: Callable) -> list:
    n, k, m = (draw_int(draw, 0, 3) for _ in range(3))
    layout = "F" if draw_bool(draw) else "C"  # column- or row-major result
    return [Case(lambda a, b: prim(a, b, layout=layout), (sampling.values(rng, (k, n)),
                                                          sampling.values(rng, (k, m))),
                 f"{(k, n)}^T @ {(k, m)}, {layout}")]


matmul_tn = sampling.sampler(_matmul_tn)

_EINSUM_SAMPLES = ["ij,jk->ik", "ii->i", "ii->", "ij->", "ij->ji", "i,i->", "ij,j->i",
                   "bij,bjk->bik", "i,j->ij", "ij,jk,kl->il", "iij->j", "ij,ij->ij",
                   "ijk,k->ij", "ab,c->abc", "iji->j"]


def _einsum(prim: Any, rng: np.random.RandomState, draw: Callable) -> list:
    from hypothesis import strategies as st  # a test dependency
    subscripts = draw(st.sampled_from(_EINSUM_SAMPLES))
    sizes = {c: draw_int(draw, 0, 3) for c in sorted(set(subscripts) - set(",->"))}
    ins = subscripts.split("->")[0].split(",")
    complex_ = draw_bool(draw)
    args = tuple(sampling.values(rng, tuple(sizes[c] for c in s), complex_=complex_)
                 for s in ins)
    return [Case(lambda *xs: prim(*xs, subscripts=subscripts), args, f"{subscripts} {sizes}")]


einsum = sampling.sampler(_einsum)


def diagonal(embed: bool) -> Callable:
    def cases(prim: Any, rng: np.random.RandomState, draw: Callable) -> list:
        from hypothesis import strategies as st  # a test dependency
        shape = sampling.draw_shape(draw, 2, 4, 0, 3)
        axis1, axis2 = draw(st.permutations(range(len(shape))))[:2]
        offset = draw_int(draw, -2, 2)
        kw = dict(offset=offset, axis1=axis1, axis2=axis2)
        x = sampling.values(rng, shape)
        if embed:
            return [Case(lambda d: prim(d, shape=shape, **kw),
                         (np.diagonal(x, **kw).copy(),), f"{shape} {kw}")]
        return [Case(lambda a: prim(a, **kw), (x,), f"{shape} {kw}")]
    return sampling.sampler(cases)


def square(fun: Callable, complex_: bool = True, rhs: bool = False) -> Callable:
    """Sampler: stacks of well-conditioned square matrices (and right-hand sides) for the
    function ``fun`` of them."""
    def cases(rng: np.random.RandomState, draw: Callable) -> list:
        batch, n = draw_batch(draw), draw_int(draw, 0, 3)
        cplx = complex_ and draw_bool(draw)
        args = [well_conditioned(rng, (*batch, n, n), cplx)]
        if rhs:
            bb = batch[draw_int(draw, 0, len(batch)):]
            args.append(sampling.values(rng, (*bb, n, draw_int(draw, 0, 2)), complex_=cplx))
        return [Case(fun, tuple(args), f"{args[0].shape} {args[0].dtype}")]
    return sampling.custom(cases)


def hermitian(fun: Callable) -> Callable:
    """Sampler: Hermitian positive definite matrices with distinct eigenvalues."""
    def cases(rng: np.random.RandomState, draw: Callable) -> list:
        batch, n, cplx = draw_batch(draw), draw_int(draw, 0, 3), draw_bool(draw)
        return [Case(fun, (spd(rng, batch, n, cplx),), f"{batch} n={n} complex={cplx}")]
    return sampling.custom(cases)


def general(fun: Callable) -> Callable:
    """Sampler: square matrices S diag(l) S^-1 with eigenvalues l at least 1 apart: real
    ones with real eigenvalues, or complex ones."""
    def cases(rng: np.random.RandomState, draw: Callable) -> list:
        batch, n, cplx = draw_batch(draw), draw_int(draw, 0, 3), draw_bool(draw)
        s = well_conditioned(rng, (*batch, n, n), cplx)
        lam = spread(rng, batch, n) * rng.choice([-1.0, 1.0], (*batch, n))
        if cplx:
            lam = lam + 1j * spread(rng, batch, n)
        a = np.linalg.solve(np.swapaxes(s, -1, -2),
                            np.swapaxes(s * lam[..., None, :], -1, -2))
        return [Case(fun, (np.swapaxes(a, -1, -2),), f"{batch} n={n} complex={cplx}")]
    return sampling.custom(cases)


def _rectangular(rng: np.random.RandomState, draw: Callable, distinct: bool) -> tuple:
    """(m, n) matrices: with ``distinct``, singular values at least 1 apart."""
    batch, m, n, cplx = (draw_batch(draw), draw_int(draw, 0, 3), draw_int(draw, 0, 3),
                         draw_bool(draw))
    if not distinct:
        return well_conditioned(rng, (*batch, m, n), cplx), f"{batch} {m}x{n} {cplx}"
    k = min(m, n)
    u, v = unitary(rng, (*batch, m, k), cplx), unitary(rng, (*batch, n, k), cplx)
    s = spread(rng, batch, k)[..., ::-1]
    return (u * s[..., None, :]) @ np.conj(np.swapaxes(v, -1, -2)), f"{batch} {m}x{n} {cplx}"


def rectangular(fun: Callable, distinct: bool) -> Callable:
    """Sampler: rectangular matrices (with distinct singular values if ``distinct``)."""
    def cases(rng: np.random.RandomState, draw: Callable) -> list:
        a, label = _rectangular(rng, draw, distinct)
        return [Case(fun, (a,), label)]
    return sampling.custom(cases)


def fourier(real_input: bool = False, half: bool = False) -> Callable:
    """Sampler: arrays of 1 to 3 axes (other axes may have size 0), a random axis and
    norm; ``half`` draws the n // 2 + 1 input of irfft for an output length n."""
    def cases(prim: Any, rng: np.random.RandomState, draw: Callable) -> list:
        from hypothesis import strategies as st  # a test dependency
        shape = list(sampling.draw_shape(draw, 1, 3, 0, 3))
        axis = draw_int(draw, 0, len(shape) - 1)
        n = draw_int(draw, 1, 6)
        shape[axis] = n // 2 + 1 if half else n
        norm = draw(st.sampled_from(["backward", "ortho", "forward"]))
        cplx = not real_input and draw_bool(draw)
        kw = dict(axis=axis, norm=norm, **({"n": n} if half else {}))
        x = sampling.values(rng, tuple(shape), complex_=cplx or half)
        return [Case(lambda x: prim(x, **kw), (x,), f"{shape} {kw}")]
    return sampling.sampler(cases)
