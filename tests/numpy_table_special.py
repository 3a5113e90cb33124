"""The cases of test_numpy_vs_jax.py, part 3: the vector products and row_stack of
funcgrad.numpy, the linalg and fft functions numpy_table.py does not have, and
funcgrad.scipy.special beyond its first functions (against jax.scipy.special, or
scipy.special where JAX lacks a function: see REFERENCE). Numpy only; numpy_table's inputs.
"""
from __future__ import annotations

from typing import Any

import numpy as np

from numpy_table import (BATCH, EDGES, INTS, M, M_POS, NAN, POS, REGULAR, ROW, RNG, SPD,
                         SQUARE, UNIT, c, known, unary)

TABLE: dict = {}
_V3 = RNG.uniform(-1, 1, (2, 3))


def _row_stack(xp: Any) -> Any:
    return getattr(xp, "row_stack", None) or xp.vstack

# -- vector products ------------------------------------------------------------------------
TABLE.update({
    "cross": [c(_V3, M), c(ROW, M), c(_V3[:, :2].copy(), M[:, :2].copy()),
              c(M.T.copy(), _V3.T.copy(), axisa=0, axisb=0), c(_V3, M, axisc=0),
              c(INTS, INTS[::-1].copy())],
    "linalg.cross": [c(_V3, M), c(M.T.copy(), _V3.T.copy(), axis=0)],
    "vecdot": [c(M, M_POS), c(M, ROW), c(BATCH, BATCH, axis=1),
               c(M + 1j * M_POS, M_POS + 0j)],
    "matvec": [c(BATCH, np.ones(4) * 0.5), c(SQUARE, ROW), c(BATCH, BATCH[:, 0])],
    "vecmat": [c(ROW, SQUARE), c(BATCH[:, :, 0], BATCH), c(ROW + 1j, SQUARE)],
    # numpy's deprecated alias of vstack, which jax.numpy dropped: against JAX's vstack
    "row_stack": [c(M, M_POS, call=lambda xp, x, y: _row_stack(xp)([x, y])),
                  c(ROW, ROW * 2, call=lambda xp, x, y: _row_stack(xp)((x, y))),
                  c(ROW, M, call=lambda xp, x, y: _row_stack(xp)([x, y]))],
})


def _sorted_eig(xp: Any, a: Any) -> tuple:
    """Eigenvalues sorted, and |A v - w v| (zero for any scaling of the vectors)."""
    w, v = xp.linalg.eig(a)
    residual = xp.abs(a @ v - v * w[None, :])
    return xp.sort_complex(w), residual


def _eigenvalues(xp: Any, a: Any) -> Any:
    """eig's eigenvalues, sorted; jax.numpy's through eigvals (see linalg.eig below)."""
    if xp.__name__.startswith("jax"):
        return xp.sort_complex(xp.linalg.eigvals(a))
    return xp.sort_complex(xp.linalg.eig(a)[0])


_NONSYMMETRIC = np.array([[2.0, 1.0, 0.0], [0.5, 3.0, 1.0], [0.0, 1.0, 4.0]])
_ROTATION = np.array([[0.0, -1.0], [1.0, 0.0]]) * 1.5 + np.eye(2) * 0.3
TABLE.update({
    "linalg.cond": [c(SQUARE), c(SQUARE, 1), c(SQUARE, np.inf), c(SQUARE, "fro"), c(SQUARE, -2),
                    c(M), c(np.stack([SQUARE, SPD]))],
    # JAX differentiates the eigenvalues only when no eigenvectors are computed (its eig
    # raises NotImplementedError): funcgrad's eig(a)[0] against JAX's eigvals(a) there;
    # the vectors through the residuals |A v - w v| (values: no argument, no derivative)
    "linalg.eig": [c(_NONSYMMETRIC, call=_eigenvalues), c(_ROTATION, call=_eigenvalues),
                   c(call=lambda xp: _sorted_eig(xp, _NONSYMMETRIC)),
                   c(call=lambda xp: _sorted_eig(xp, _ROTATION))],
    "linalg.eigvals": [c(_NONSYMMETRIC, call=lambda xp, a: xp.sort_complex(
        xp.linalg.eigvals(a))), c(_ROTATION, call=lambda xp, a: xp.sort_complex(
            xp.linalg.eigvals(a)))],
    "linalg.lstsq": [c(M.T.copy(), ROW, call=lambda xp, a, b: xp.linalg.lstsq(a, b)[:2]),
                     c(M.T.copy(), M_POS.T.copy(), call=lambda xp, a, b: xp.linalg.lstsq(a, b)[0]),
                     c(SQUARE, ROW, call=lambda xp, a, b: xp.linalg.lstsq(a, b)[0]),
                     c(M.T.copy(), ROW, call=lambda xp, a, b: xp.linalg.lstsq(a, b)[2:3])],
    "linalg.matrix_rank": [c(SQUARE), c(np.array([[1.0, 2.0], [2.0, 4.0]])), c(M),
                           c(np.zeros((2, 2))), c(np.stack([SQUARE, SPD])),
                           c(SQUARE, 10.0), c(SPD, hermitian=True)],
    "linalg.matrix_transpose": [c(BATCH), c(M)],
    "linalg.tensorinv": [c(np.eye(6).reshape(6, 2, 3) + RNG.uniform(-0.1, 0.1, (6, 2, 3)), 1),
                         c(np.eye(4).reshape(2, 2, 2, 2) * 2 + RNG.uniform(-0.1, 0.1,
                                                                            (2, 2, 2, 2)))],
    "linalg.tensorsolve": [c(np.eye(6).reshape(2, 3, 6) + RNG.uniform(-0.1, 0.1, (2, 3, 6)), M),
                           c(np.eye(6).reshape(6, 2, 3) + RNG.uniform(-0.1, 0.1, (6, 2, 3)),
                             np.arange(6.0), call=lambda xp, a, b: xp.linalg.tensorsolve(a, b))],
    "fft.hfft": [c(M + 1j * M_POS), c(M + 1j * M_POS, 6), c(M + 0j, norm="ortho")],
    "fft.ihfft": [c(M), c(BATCH, 3), c(BATCH, norm="forward")],
})

# -- scipy.special ----------------------------------------------------------------------------
_A = np.array([0.5, 1.0, 2.5, 4.0, 0.5, 3.0])
_X = np.array([0.2, 1.0, 0.5, 6.0, 3.0, 0.0])
_B = np.array([0.5, 2.0, 1.5, 3.0, 4.0, 1.0])
_P01 = np.array([0.0, 0.1, 0.5, 0.9, 1.0, 0.3])
_ZETA_Q = np.array([1.0, 0.5, 2.0, 3.0, 1.5, 1.0])
TABLE.update({
    "special.gamma": unary(np.concatenate([POS, -POS - 0.5]), complex_=False),
    "special.gammasgn": unary(np.concatenate([POS, -POS - 0.5]), complex_=False),
    "special.rgamma": unary(np.concatenate([POS, -POS - 0.5]), complex_=False),
    "special.erfinv": unary(UNIT, complex_=False) + [c(np.array([-1.0, 1.0, 0.0, 2.0]))],
    "special.erfcinv": unary(UNIT + 1, complex_=False) + [c(np.array([0.0, 2.0, 1.0, -1.0]))],
    "special.ndtri": unary((UNIT + 1) / 2, complex_=False),
    "special.log_ndtr": unary(REGULAR * 10, complex_=False),
    "special.i0": unary(REGULAR, complex_=False), "special.i0e": unary(REGULAR, complex_=False),
    "special.i1": unary(REGULAR, complex_=False), "special.i1e": unary(REGULAR, complex_=False),
    "special.entr": unary(POS, complex_=False),
    "special.spence": unary(POS, complex_=False),
    "special.log_expit": unary(REGULAR * 10, complex_=False),
    "special.sinc": unary(REGULAR, complex_=False),
    "special.j0": unary(REGULAR * 5, complex_=False),
    "special.j1": unary(REGULAR * 5, complex_=False),
    "special.y0": unary(POS * 5, complex_=False), "special.y1": unary(POS * 5, complex_=False),
    "special.beta": [c(_A, _B), c(np.array([-0.5, 1.0, 0.0]), np.array([2.0, -1.5, 1.0])),
                     c(_A, 2.0)],
    "special.betaln": [c(_A, _B), c(_A, 2.0)],
    "special.betainc": [c(_A, _B, _P01), c(_A, 2.0, 0.5), c(_A, _B, np.array([0.0, 1.0, 1.5, -0.1,
                                                                             NAN, 0.5]))],
    "special.betaincinv": [c(_A, _B, _P01), c(_A, 2.0, 0.5)],
    "special.gammainc": [c(_A, _X), c(np.array([1.0, 0.0, -1.0]), np.array([0.0, 1.0, 1.0]))],
    "special.gammaincc": [c(_A, _X), c(np.array([1.0, 0.0, -1.0]), np.array([0.0, 1.0, 1.0]))],
    "special.gammaincinv": [c(_A, _P01), c(2.0, _P01)],
    "special.kl_div": [c(_X, _B), c(np.array([0.0, 0.0, 1.0, -1.0, 1.0]),
                                    np.array([0.0, 2.0, 0.0, 1.0, -1.0]))],
    "special.rel_entr": [c(_X, _B), c(np.array([0.0, 0.0, 1.0, -1.0, 1.0]),
                                      np.array([0.0, 2.0, 0.0, 1.0, -1.0]))],
    "special.multigammaln": [c(_A + 2.0, 2), c(np.array(3.5), 3)],
    "special.zeta": [c(_A + 1.0, _ZETA_Q), c(_A + 1.0), c(np.array([1.0, 0.5, -1.0]), 1.0)],
    "special.factorial": [c(INTS), c(np.array([0.0, 1.0, 2.5, 5.0, -1.0])),
                          c(np.array([0, 3, 5]), exact=False)],
    "special.stdtr": [c(_B, REGULAR[:6]), c(3.0, EDGES)],
    "special.stdtrit": [c(_B, _P01), c(3.0, np.array([0.025, 0.5, 0.975]))],
    "special.jn": [c(2, REGULAR * 5), c(np.array([0, 1, 3]), np.array([0.5, 2.0, 7.0]))],
    "special.yn": [c(2, POS * 5), c(np.array([0, 1, 3]), np.array([0.5, 2.0, 7.0]))],
    "special.jv": [c(np.array([0.0, 0.5, 2.5]), np.array([0.5, 2.0, 7.0])), c(1.5, POS * 5)],
    "special.yv": [c(np.array([0.0, 0.5, 2.5]), np.array([0.5, 2.0, 7.0])), c(1.5, POS * 5)],
    "special.iv": [c(np.array([0.0, 0.5, 2.5]), np.array([0.5, 2.0, 7.0])), c(1.5, REGULAR)],
    "special.ive": [c(np.array([0.0, 0.5, 2.5]), np.array([0.5, 2.0, 7.0])), c(1.5, REGULAR)],
})

# the jax name of a funcgrad name where they differ
JAX_NAMES = {"special.log_expit": "nn.log_sigmoid", "special.sinc": "sinc",
             "row_stack": "vstack"}

# names JAX lacks: values (and dtypes) against scipy.special
REFERENCE = {n: "jax.scipy.special has no " + n.split(".")[1] for n in [
    "special.rgamma", "special.erfcinv", "special.j0", "special.j1", "special.y0",
    "special.y1", "special.betaincinv", "special.gammaincinv", "special.stdtr",
    "special.stdtrit", "special.jn", "special.yn", "special.jv", "special.yv", "special.iv",
    "special.ive"]}

# -- conventions that legitimately differ (each case is still compared in every other way) --
_INTEGERS = ("jax.scipy.special.{} rejects integer input; scipy's and funcgrad's promote it")
for _name, _i, _what, _why in [
        *[(f"special.{n}", 1, "raised", _INTEGERS.format(n)) for n in ("log_ndtr", "ndtri",
                                                                       "spence")],
        ("special.beta", 1, "vjp,jvp", "negative arguments: funcgrad's B (psi(x) - "
         "psi(x + y)) is finite (-inf at the pole 0); JAX's goes through gammaln's sign and "
         "gives NaN"),
        ("special.entr", 0, "vjp,jvp", "d/dx at x = inf: funcgrad's xlogy(x, x) rule meets "
         "inf / inf (NaN); JAX's -(log x + 1) is -inf"),
        ("special.factorial", 1, "vjp,jvp", "factorial(-1) is 0 (scipy's convention for "
         "negative n): funcgrad's derivative of that constant is 0, JAX's NaN"),
        ("special.gamma", 0, "vjp,jvp", "at +-0 (the pole) funcgrad's gamma psi is -inf from "
         "both sides, which is the limit of the slope; JAX's NaN"),
        ("special.gammainc", 1, "vjp,jvp", "d/dx at x = 0 for a = 1: funcgrad's "
         "x**(a-1) e**-x / gamma(a) is 1; JAX's NaN"),
        ("special.gammaincc", 1, "vjp,jvp", "d/dx at x = 0 for a = 1: -1 (see gammainc); "
         "JAX's NaN"),
        ("special.i0", 0, "vjp,jvp", "i0 is even: funcgrad's i1(0) = 0 is its slope at 0; "
         "JAX's e**|x| i0e(x) form gives 1 through |x|'s slope at 0"),
        ("special.i1e", 0, "vjp,jvp", "at NaN funcgrad's derivative is NaN, JAX's finite"),
        ("special.kl_div", 1, "vjp,jvp", "where the divergence is inf (x > 0 = y, or a "
         "negative argument) funcgrad's derivative of that constant is 0; JAX's -1"),
        ("special.ndtri", 0, "vjp,jvp", "at p = 0 and 1 (ndtri = -inf, inf) funcgrad's "
         "sqrt(2 pi) exp(ndtri**2 / 2) is inf, the limit; JAX's 0"),
        ("special.spence", 0, "vjp,jvp", "funcgrad's log(x) / (1 - x): -inf at 0, -1 at 1 "
         "(the limit) and NaN below the domain; JAX's 0 at 0, 1 and below"),
        ("special.zeta", 1, "raised", "jax.scipy.special.zeta needs q (funcgrad's q=None is "
         "scipy's Riemann zeta)"),
        ("special.zeta", 2, "values,vjp,jvp", "zeta(x, 1) for x < 1: funcgrad gives the "
         "analytic continuation (Riemann's zeta, -1.46 at 0.5); scipy's Hurwitz zeta and "
         "JAX's give NaN there")]:
    known(TABLE[_name], _i, _what, _why)
