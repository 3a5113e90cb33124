"""Matrix functions and Sylvester's equation (scipy.linalg's expm, sqrtm, solve_sylvester).

| primitive        | derivative                                                            |
|------------------|-----------------------------------------------------------------------|
| expm             | the Frechet derivative L(A, E): the top-right block of                |
|                  | expm([[A, E], [0, A]]); its transpose is L(A^T, G)                    |
| solve_sylvester  | X with A X + X B = Q: dX solves A dX + dX B = dQ - dA X - X dB; the    |
|                  | transpose solves A^T Y + Y B^T = G, then gA = -Y X^T, gB = -X^T Y      |
| sqrtm            | X = sqrtm(A): dX solves X dX + dX X = dA (Sylvester with X, X)        |

Every rule is written with these primitives, so derivatives of every order follow (the
block matrix doubles in size per order of expm's derivative).
"""
from __future__ import annotations

from typing import Any, Callable

import numpy as np

import funcgrad.numpy as fnp
from funcgrad.core import Primitive
from . import sampling
from .kernels import scipy_linalg as K
from .linalg import draw_batch, draw_bool, draw_int, matmul, mT, spd
from .sampling import Case

__all__ = ["expm", "expm_frechet", "solve_sylvester", "sqrtm"]


def expm_frechet(a: Any, e: Any) -> Any:
    """L(a, e) = d/dt expm(a + t e) at t = 0, as the top-right block of the exponential of
    [[a, e], [0, a]] (Najfeld and Havel 1995; Higham, Functions of Matrices, 3.2)."""
    a, e = fnp.broadcast_arrays(a, e)
    n = a.shape[-1]
    top = fnp.concatenate([a, e], axis=-1)
    bottom = fnp.concatenate([fnp.zeros_like(a), a], axis=-1)
    return expm(fnp.concatenate([top, bottom], axis=-2))[..., :n, n:]


def _square_cases(fun: Callable, make: Callable) -> Callable:
    def cases(rng: np.random.RandomState, draw: Callable) -> list:
        batch, n, cplx = draw_batch(draw), draw_int(draw, 0, 3), draw_bool(draw)
        return [Case(fun, make(rng, batch, n, cplx), f"{batch} n={n} complex={cplx}")]
    return sampling.custom(cases)


def _moderate(rng: np.random.RandomState, batch: tuple, n: int, cplx: bool) -> tuple:
    return (sampling.values(rng, (*batch, n, n), (-1.0, 1.0), complex_=cplx),)


expm = Primitive("expm", K.expm, ("a",), sample=_square_cases(lambda a: expm(a), _moderate),
                 doc="The matrix exponential of square matrices.")
expm.defvjp(lambda g, a: expm_frechet(mT(a), g))
expm.defjvp(lambda t, a: expm_frechet(a, t))


def _right_half_plane(rng: np.random.RandomState, batch: tuple, n: int,
                     cplx: bool) -> np.ndarray:
    """Symmetric positive definite matrices plus a non-symmetric part small enough to keep
    the spectrum in the right half plane."""
    return spd(rng, batch, n, cplx) + 0.2 * sampling.values(rng, (*batch, n, n), (-1.0, 1.0),
                                                            complex_=cplx)


def _sylvester_cases(rng: np.random.RandomState, batch: tuple, n: int, cplx: bool) -> tuple:
    """a (n, n) and b (m, m) with spectra in the right half plane: a x + x b = q has one
    solution."""
    m = max(n - 1, 0) if rng.uniform() < 0.5 else n
    return (_right_half_plane(rng, batch, n, cplx), _right_half_plane(rng, (), m, cplx),
            sampling.values(rng, (*batch, n, m), complex_=cplx))


solve_sylvester = Primitive(
    "solve_sylvester", K.solve_sylvester, ("a", "b", "q"),
    sample=_square_cases(lambda a, b, q: solve_sylvester(a, b, q), _sylvester_cases),
    doc="X with a @ X + X @ b = q.")


def _sylvester_transposed(g: Any, a: Any, b: Any) -> Any:
    return solve_sylvester(mT(a), mT(b), g)


solve_sylvester.defvjp(
    lambda g, a, b, out: -matmul(_sylvester_transposed(g, a, b), mT(out)),
    lambda g, a, b, out: -matmul(mT(out), _sylvester_transposed(g, a, b)),
    _sylvester_transposed)
solve_sylvester.defjvp(
    lambda t, a, b, out: solve_sylvester(a, b, -matmul(t, out)),
    lambda t, a, b, out: solve_sylvester(a, b, -matmul(out, t)),
    lambda t, a, b: solve_sylvester(a, b, t))


def _sqrtm_cases(rng: np.random.RandomState, batch: tuple, n: int, cplx: bool) -> tuple:
    """Spectra in the right half plane: a unique principal root, real for real input."""
    return (_right_half_plane(rng, batch, n, cplx),)


sqrtm = Primitive("sqrtm", K.sqrtm, ("a",), sample=_square_cases(lambda a: sqrtm(a),
                                                                  _sqrtm_cases),
                  doc="The principal square root of square matrices.")
sqrtm.defvjp(lambda g, out: solve_sylvester(mT(out), mT(out), g))
sqrtm.defjvp(lambda t, out: solve_sylvester(out, out, t))
