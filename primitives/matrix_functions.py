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

from typing import Any

from funcgrad.core import Primitive
from .arrays import broadcast_arrays, concat
from .constants import zeros_like
from .kernels import scipy_linalg as K
from .linalg import matmul, mT
from .samplers import scipy_linalg as samplers

__all__ = ["expm", "expm_frechet", "solve_sylvester", "sqrtm"]


def expm_frechet(a: Any, e: Any) -> Any:
    """L(a, e) = d/dt expm(a + t e) at t = 0, as the top-right block of the exponential of
    [[a, e], [0, a]] (Najfeld and Havel 1995; Higham, Functions of Matrices, 3.2)."""
    a, e = broadcast_arrays(a, e)
    n = a.shape[-1]
    top = concat([a, e], axis=-1)
    bottom = concat([zeros_like(a), a], axis=-1)
    return expm(concat([top, bottom], axis=-2))[..., :n, n:]


expm = Primitive("expm", K.expm, ("a",), sample=samplers.square(samplers.moderate),
                 doc="The matrix exponential of square matrices.")
expm.defvjp(lambda g, a: expm_frechet(mT(a), g))
expm.defjvp(lambda t, a: expm_frechet(a, t))


solve_sylvester = Primitive(
    "solve_sylvester", K.solve_sylvester, ("a", "b", "q"),
    sample=samplers.square(samplers.sylvester),
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


sqrtm = Primitive("sqrtm", K.sqrtm, ("a",), sample=samplers.square(samplers.sqrtm),
                  doc="The principal square root of square matrices.")
sqrtm.defvjp(lambda g, out: solve_sylvester(mT(out), mT(out), g))
sqrtm.defjvp(lambda t, out: solve_sylvester(out, out, t))


# -- batching rules (vmap): one more leading dimension of matrices -----------------------------
# (imported here: funcgrad.primitives.batching builds on the shape primitives)
from . import batching as B  # noqa: E402

B.leading(expm)
B.leading(sqrtm)
B.leading(solve_sylvester, (2, 2, 2))
