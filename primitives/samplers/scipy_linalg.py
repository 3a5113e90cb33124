"""Samplers of the scipy.linalg primitives (triangular and banded solves, LU, matrix
functions, Sylvester's equation)."""
from __future__ import annotations

from typing import Any, Callable

import numpy as np

from .. import sampling
from ..sampling import Case, draw_bool, draw_int
from .linalg import draw_batch, spd, well_conditioned

__all__ = ["triangular_solve", "lu", "solve_banded", "square", "moderate",
           "right_half_plane", "sylvester", "sqrtm"]


def _triangular_solve(prim: Any, rng: np.random.RandomState, draw: Callable) -> list:
    batch, n, k = draw_batch(draw), draw_int(draw, 0, 3), draw_int(draw, 1, 2)
    flags = dict(lower=draw_bool(draw), transpose_a=draw_bool(draw),
                 conjugate_a=draw_bool(draw), unit_diagonal=draw_bool(draw))
    cplx = draw_bool(draw)
    a = well_conditioned(rng, (*batch, n, n), cplx)
    b = sampling.values(rng, (n, k), complex_=cplx)
    return [Case(lambda a, b: prim(a, b, **flags), (a, b),
                 f"{batch} n={n} k={k} {flags} complex={cplx}")]


triangular_solve = sampling.sampler(_triangular_solve)


def _lu(prim: Any, rng: np.random.RandomState, draw: Callable) -> list:
    """Row-permuted diagonally dominant matrices: pivoting is decided by a wide margin,
    so the finite differences do not switch pivots."""
    batch, m, n, cplx = (draw_batch(draw), draw_int(draw, 1, 4), draw_int(draw, 1, 4),
                         draw_bool(draw))
    a = well_conditioned(rng, (*batch, m, n), cplx)
    a = a[..., rng.permutation(m), :]
    return [Case(lambda a: prim(a)[:2], (a,), f"{batch} {m}x{n} complex={cplx}")]


lu = sampling.sampler(_lu)


def _solve_banded(prim: Any, rng: np.random.RandomState, draw: Callable) -> list:
    n = draw_int(draw, 1, 4)
    lower, upper, k = draw_int(draw, 0, n - 1), draw_int(draw, 0, n - 1), draw_int(draw, 1, 2)
    ab = sampling.values(rng, (lower + upper + 1, n))
    ab[upper] = (n + 1) * rng.choice([-1.0, 1.0], n) + ab[upper] * 0.5
    return [Case(lambda ab, b: prim(ab, b, lower=lower, upper=upper),
                 (ab, sampling.values(rng, (n, k))), f"n={n} l={lower} u={upper} k={k}")]


solve_banded = sampling.sampler(_solve_banded)


def square(make: Callable) -> Callable:
    """Sampler: square-matrix arguments ``make(rng, batch, n, complex)`` for the primitive
    itself."""
    def cases(prim: Any, rng: np.random.RandomState, draw: Callable) -> list:
        batch, n, cplx = draw_batch(draw), draw_int(draw, 0, 3), draw_bool(draw)
        return [Case(prim, make(rng, batch, n, cplx), f"{batch} n={n} complex={cplx}")]
    return sampling.sampler(cases)


def moderate(rng: np.random.RandomState, batch: tuple, n: int, cplx: bool) -> tuple:
    return (sampling.values(rng, (*batch, n, n), (-1.0, 1.0), complex_=cplx),)


def right_half_plane(rng: np.random.RandomState, batch: tuple, n: int,
                     cplx: bool) -> np.ndarray:
    """Symmetric positive definite matrices plus a non-symmetric part small enough to keep
    the spectrum in the right half plane."""
    return spd(rng, batch, n, cplx) + 0.2 * sampling.values(rng, (*batch, n, n), (-1.0, 1.0),
                                                            complex_=cplx)


def sylvester(rng: np.random.RandomState, batch: tuple, n: int, cplx: bool) -> tuple:
    """a (n, n) and b (m, m) with spectra in the right half plane: a x + x b = q has one
    solution."""
    m = max(n - 1, 0) if rng.uniform() < 0.5 else n
    return (right_half_plane(rng, batch, n, cplx), right_half_plane(rng, (), m, cplx),
            sampling.values(rng, (*batch, n, m), complex_=cplx))


def sqrtm(rng: np.random.RandomState, batch: tuple, n: int, cplx: bool) -> tuple:
    """Spectra in the right half plane: a unique principal root, real for real input."""
    return (right_half_plane(rng, batch, n, cplx),)
