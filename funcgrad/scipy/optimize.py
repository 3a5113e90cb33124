"""funcgrad.scipy.optimize: `minimize` by BFGS on funcgrad's gradients (JAX's
jax.scipy.optimize.minimize: its options, status codes and `OptimizeResults` fields).

BFGS keeps an estimate H of the inverse Hessian, steps along -H g with a line search that
satisfies the strong Wolfe conditions (Nocedal and Wright, Numerical Optimization,
algorithms 3.5 and 3.6, with cubic and quadratic interpolation in the zoom), and updates
H with the BFGS formula (6.17), skipping the update when the curvature s.y is not
positive. The iteration runs on concrete values: the result is not differentiated (as in
JAX); calling it on traced values raises.
"""
from __future__ import annotations

from typing import Any, Callable, NamedTuple

import numpy as np

import funcgrad.numpy as fnp
from funcgrad import tree_util
from funcgrad.array import Array
from funcgrad.core import Tracer
from funcgrad.transforms import value_and_grad

__all__ = ["minimize", "OptimizeResults"]


class OptimizeResults(NamedTuple):
    """x: the solution; success: whether it converged; status: 0 converged, 1 maxiter
    reached, 3 the line search's zoom failed, 4 no descent direction (a saddle point),
    5 the line search's iterations ran out; fun, jac: the value and gradient at x;
    hess_inv: the BFGS estimate of the inverse Hessian; nfev, njev: evaluations of the
    function and its gradient; nit: iterations."""
    x: Array
    success: Any
    status: Any
    fun: Array
    jac: Array
    hess_inv: Array
    nfev: Any
    njev: Any
    nit: Any


class _Objective:
    """fun and its gradient at concrete points, counting evaluations."""

    def __init__(self, fun: Callable, dtype: np.dtype):
        self.value_and_grad = value_and_grad(lambda x: fun(x))
        self.dtype = dtype
        self.evaluations = 0

    def __call__(self, x: np.ndarray) -> tuple:
        self.evaluations += 1
        value, grad = self.value_and_grad(fnp.asarray(x.astype(self.dtype)))
        if isinstance(value, Tracer) or isinstance(grad, Tracer):
            raise TypeError("minimize: fun returned a traced value; minimize is not "
                            "differentiable (as in JAX): pass concrete arguments, or "
                            "stop_gradient them")
        value = np.asarray(value.to_numpy())
        if value.shape != ():
            raise TypeError(f"minimize: fun must return a scalar, got shape {value.shape}")
        return float(value), np.asarray(grad.to_numpy(), np.float64)


class _Search(NamedTuple):
    step: float
    value: float
    grad: np.ndarray
    status: int  # 0 Wolfe conditions met, 3 zoom failed, 4 no descent, 5 out of iterations


def _interpolate(a: float, fa: float, da: float, b: float, fb: float, db: float) -> float:
    """The minimiser of the cubic matching values and slopes at a and b, if it lies well
    inside [a, b]; else the bisection."""
    lo, hi = min(a, b), max(a, b)
    d1 = da + db - 3 * (fa - fb) / (a - b)
    disc = d1 * d1 - da * db
    if disc >= 0:
        d2 = np.sign(b - a) * np.sqrt(disc)
        denom = db - da + 2 * d2
        if denom != 0:
            t = b - (b - a) * (db + d2 - d1) / denom
            margin = 0.1 * (hi - lo)
            if lo + margin <= t <= hi - margin:
                return float(t)
    return 0.5 * (lo + hi)


def _line_search(f: _Objective, x: np.ndarray, p: np.ndarray, value: float, grad: np.ndarray,
                 old_old_value: float, maxiter: int, c1: float = 1e-4,
                 c2: float = 0.9) -> _Search:
    """A step a along p satisfying the strong Wolfe conditions phi(a) <= phi(0) +
    c1 a phi'(0) and |phi'(a)| <= c2 |phi'(0)| for phi(a) = f(x + a p)."""
    slope0 = float(grad @ p)
    if not slope0 < 0:
        return _Search(0.0, value, grad, 4)

    def phi(a: float) -> tuple:
        fa, ga = f(x + a * p)
        return fa, ga, float(ga @ p)

    step = 1.0
    if np.isfinite(old_old_value) and slope0 != 0:  # Nocedal & Wright (3.60)
        step = min(1.0, 1.01 * 2 * (value - old_old_value) / slope0)
        step = 1.0 if step <= 0 else step
    prev, f_prev, d_prev = 0.0, value, slope0
    for i in range(maxiter):
        fa, ga, da = phi(step)
        if not np.isfinite(fa) or fa > value + c1 * step * slope0 or (i > 0 and fa >= f_prev):
            return _zoom(phi, prev, f_prev, d_prev, step, fa, da, value, slope0, c1, c2,
                         maxiter)
        if abs(da) <= -c2 * slope0:
            return _Search(step, fa, ga, 0)
        if da >= 0:
            return _zoom(phi, step, fa, da, prev, f_prev, d_prev, value, slope0, c1, c2,
                         maxiter)
        prev, f_prev, d_prev = step, fa, da
        step *= 2
    return _Search(prev, f_prev, f(x + prev * p)[1], 5)


def _zoom(phi: Callable, lo: float, f_lo: float, d_lo: float, hi: float, f_hi: float,
          d_hi: float, value: float, slope0: float, c1: float, c2: float,
          maxiter: int) -> _Search:
    """Shrink [lo, hi] (lo the best point satisfying sufficient decrease) until a point
    meets the strong Wolfe conditions (Nocedal & Wright, algorithm 3.6)."""
    g_lo = None
    for _ in range(maxiter):
        if not np.isfinite(f_hi):
            step = 0.5 * (lo + hi)
        else:
            step = _interpolate(lo, f_lo, d_lo, hi, f_hi, d_hi)
        fa, ga, da = phi(step)
        if fa > value + c1 * step * slope0 or fa >= f_lo:
            hi, f_hi, d_hi = step, fa, da
        else:
            if abs(da) <= -c2 * slope0:
                return _Search(step, fa, ga, 0)
            if da * (hi - lo) >= 0:
                hi, f_hi, d_hi = lo, f_lo, d_lo
            lo, f_lo, d_lo, g_lo = step, fa, da, ga
        if abs(hi - lo) <= 1e-14 * max(1.0, abs(lo)):
            break
    if g_lo is None or lo == 0:
        return _Search(0.0, value, None, 3)
    return _Search(lo, f_lo, g_lo, 3)


def _bfgs(f: _Objective, x0: np.ndarray, maxiter: int, norm: float, gtol: float,
          line_search_maxiter: int) -> tuple:
    """(x, f(x), grad, H, iterations, status)."""
    d = x0.shape[0]
    x, (value, grad) = x0, f(x0)
    h = np.eye(d)
    old_old = value + np.linalg.norm(grad) / 2
    k = 0
    while True:
        if np.linalg.norm(grad, ord=norm) < gtol:
            return x, value, grad, h, k, 0
        if k >= maxiter:
            return x, value, grad, h, k, 1
        p = -h @ grad
        search = _line_search(f, x, p, value, grad, old_old, line_search_maxiter)
        if search.status != 0 and search.step == 0:
            return x, value, grad, h, k, search.status
        s = search.step * p
        y = search.grad - grad
        curvature = float(y @ s)
        if curvature > 0 and np.isfinite(curvature):
            rho = 1.0 / curvature
            w = np.eye(d) - rho * np.outer(s, y)
            h = w @ h @ w.T + rho * np.outer(s, s)
        old_old, x, value, grad = value, x + s, search.value, search.grad
        k += 1
        if search.status != 0:
            return x, value, grad, h, k, search.status


def minimize(fun: Callable, x0: Any, args: tuple = (), method: str = "BFGS", *,
             tol: float | None = None, options: dict | None = None) -> OptimizeResults:
    """Minimise ``fun(x, *args)`` over the 1-D x from ``x0``. ``method``: 'BFGS'.
    ``options``: maxiter (default 200 * len(x0)), norm (of the gradient in the stopping
    test, default inf), gtol (default 1e-5, or ``tol``), line_search_maxiter (default
    10)."""
    if not isinstance(args, tuple):
        raise TypeError(f"args argument to funcgrad.scipy.optimize.minimize must be a tuple, "
                        f"got {args}")
    if method.lower() != "bfgs":
        raise ValueError(f"Method {method} not recognized")
    options = dict(options or {})
    if tol is not None:
        options.setdefault("gtol", tol)
    unknown = set(options) - {"maxiter", "norm", "gtol", "line_search_maxiter"}
    if unknown:
        raise TypeError(f"minimize: unknown options {sorted(unknown)} for method BFGS; "
                        "known: maxiter, norm, gtol, line_search_maxiter")
    if any(isinstance(leaf, Tracer) for leaf in tree_util.tree_leaves((x0, args))):
        raise TypeError("minimize is not differentiable (as in JAX): x0 and args must not "
                        "be traced; stop_gradient them, or differentiate the optimum "
                        "implicitly")
    x0 = fnp.asarray(x0)
    if x0.ndim != 1:
        raise ValueError(f"minimize: x0 must be one-dimensional, got shape {x0.shape}")
    dtype = x0.dtype if x0.dtype.kind == "f" else np.dtype(np.float64)
    objective = _Objective(lambda x: fun(x, *args), dtype)
    x, value, grad, h, k, status = _bfgs(
        objective, np.asarray(x0.to_numpy(), np.float64),
        int(options.get("maxiter", 200 * x0.shape[0])), options.get("norm", np.inf),
        float(options.get("gtol", 1e-5)), int(options.get("line_search_maxiter", 10)))
    return OptimizeResults(
        x=fnp.asarray(x.astype(dtype)), success=fnp.asarray(status == 0),
        status=fnp.asarray(status), fun=fnp.asarray(np.asarray(value, dtype)),
        jac=fnp.asarray(grad.astype(dtype)), hess_inv=fnp.asarray(h.astype(dtype)),
        nfev=fnp.asarray(objective.evaluations), njev=fnp.asarray(objective.evaluations),
        nit=fnp.asarray(k))
