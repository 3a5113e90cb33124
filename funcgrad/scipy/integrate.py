"""funcgrad.scipy.integrate: `odeint`, JAX's differentiable ODE solver.

``odeint(func, y0, t, *args)`` integrates dy/dt = func(y, t, *args) from t[0] and returns
y at every time in ``t`` (a leading axis on each leaf of the pytree y0). The solver is
Dormand and Prince's adaptive Runge-Kutta 5(4) with error control by rtol/atol, Hairer's
initial step, and 4th-order dense output between steps (Hairer, Norsett and Wanner,
Solving ODEs I, II.4-II.6) -- the algorithm of JAX's odeint, so its numbers agree with
JAX's closely.

Reverse mode is the adjoint method (Pontryagin; Chen et al. 2018, "Neural ordinary
differential equations"): the cotangents of y, of ``args`` and of the times are integrated
backwards with the same solver, one observation interval at a time, as a `custom_vjp`.
The backward integration is odeint again, so derivatives of every order work. Parameters
are best passed through ``*args``: if ``func`` closes over a value being differentiated
(which the adjoint rule cannot see), odeint differentiates through the solver's steps
instead -- the exact derivative of the numerical solution, at a memory cost proportional
to the number of steps.
"""
from __future__ import annotations

from typing import Any, Callable

import numpy as np

import funcgrad.numpy as fnp
from funcgrad import tree_util
from funcgrad.array import Array
from funcgrad.core import Tracer
from funcgrad.transforms import custom_vjp, vjp

__all__ = ["odeint"]

# Dormand-Prince 5(4): nodes, stages, the 5th-order weights and the error weights
_ALPHA = (1 / 5, 3 / 10, 4 / 5, 8 / 9, 1.0, 1.0)
_BETA = ((1 / 5,),
         (3 / 40, 9 / 40),
         (44 / 45, -56 / 15, 32 / 9),
         (19372 / 6561, -25360 / 2187, 64448 / 6561, -212 / 729),
         (9017 / 3168, -355 / 33, 46732 / 5247, 49 / 176, -5103 / 18656),
         (35 / 384, 0.0, 500 / 1113, 125 / 192, -2187 / 6784, 11 / 84))
_C_SOL = (35 / 384, 0.0, 500 / 1113, 125 / 192, -2187 / 6784, 11 / 84, 0.0)
_C_ERROR = (35 / 384 - 1951 / 21600, 0.0, 500 / 1113 - 22642 / 50085, 125 / 192 - 451 / 720,
            -2187 / 6784 + 12231 / 42400, 11 / 84 - 649 / 6300, -1.0 / 60.0)
# the weights of the solution at the middle of a step (for the dense output)
_C_MID = (6025192743 / 30085553152 / 2, 0.0, 51252292925 / 65400821598 / 2,
          -2691868925 / 45128329728 / 2, 187940372067 / 1594534317056 / 2,
          -1776094331 / 19743644256 / 2, 11237099 / 235043384 / 2)


def _concrete(x: Any) -> float:
    """The value of x for step-size control (decisions, not differentiated)."""
    if isinstance(x, Tracer):
        x = x.concrete()
    return float(np.asarray(fnp.asarray(x).to_numpy()))


def _combine(weights: tuple, ks: list) -> Any:
    total = None
    for w, k in zip(weights, ks):
        if w:
            total = w * k if total is None else total + w * k
    return total


def _rk_step(f: Callable, y: Array, f0: Array, t: Any, dt: float) -> tuple:
    """One Dormand-Prince step: (y1, f(y1, t + dt), error estimate, the 7 stages)."""
    ks = [f0]
    for alpha, beta in zip(_ALPHA, _BETA):
        ks.append(f(y + dt * _combine(beta, ks), t + dt * alpha))
    return y + dt * _combine(_C_SOL, ks), ks[-1], dt * _combine(_C_ERROR, ks), ks


def _interpolant(y0: Array, y1: Array, ks: list, dt: float) -> tuple:
    """Coefficients (a, b, c, d, e) of the quartic in x = (t - t0) / dt through y0, y1 and
    the midpoint estimate, with slopes f0 and f1 at the ends."""
    y_mid = y0 + dt * _combine(_C_MID, ks)
    dy0, dy1 = dt * ks[0], dt * ks[-1]
    return (-2 * dy0 + 2 * dy1 - 8 * y0 - 8 * y1 + 16 * y_mid,
            5 * dy0 - 3 * dy1 + 18 * y0 + 14 * y1 - 32 * y_mid,
            -4 * dy0 + dy1 - 11 * y0 - 5 * y1 + 16 * y_mid,
            dy0, y0)


def _polyval(coeffs: tuple, x: Any) -> Array:
    out = coeffs[0]
    for c in coeffs[1:]:
        out = out * x + c
    return out


def _error_ratio(error: Array, rtol: float, atol: float, y0: Array, y1: Array) -> float:
    tol = atol + rtol * fnp.maximum(fnp.abs(y0), fnp.abs(y1))
    return _concrete(fnp.sqrt(fnp.mean(fnp.square(error / tol)))) if error.size else 0.0


def _next_step(dt: float, ratio: float, safety: float = 0.9, ifactor: float = 10.0,
               dfactor: float = 0.2, order: float = 5.0) -> float:
    if ratio == 0:
        return dt * ifactor
    dfactor = 1.0 if ratio < 1 else dfactor
    return dt * min(ifactor, max(ratio ** (-1 / order) * safety, dfactor))


def _initial_step(f: Callable, t0: Any, y0: Array, f0: Array, rtol: float,
                  atol: float) -> float:
    """Hairer, Norsett and Wanner's starting step for a method of order 4."""
    if y0.size == 0:
        return 1.0
    scale = atol + fnp.abs(y0) * rtol
    d0 = _concrete(fnp.linalg.norm(y0 / scale))
    d1 = _concrete(fnp.linalg.norm(f0 / scale))
    h0 = 1e-6 if d0 < 1e-5 or d1 < 1e-5 else 0.01 * d0 / d1
    f1 = f(y0 + h0 * f0, t0 + h0)
    d2 = _concrete(fnp.linalg.norm((f1 - f0) / scale)) / h0
    if d1 <= 1e-15 and d2 <= 1e-15:
        h1 = max(1e-6, h0 * 1e-3)
    else:
        h1 = (0.01 / max(d1, d2)) ** (1 / 5)
    return min(100 * h0, h1)


def _solve(f: Callable, y0: Array, ts: Array, rtol: float, atol: float, mxstep: float,
           hmax: float) -> Array:
    """y at each of the times ts (increasing), as rows."""
    t = ts[0]
    y, fy = y0, f(y0, t)
    dt = min(max(_initial_step(f, t, y0, fy, rtol, atol), 0.0), hmax)
    last_t, coeffs = t, (y0,) * 5
    out = [y0]
    for k in range(1, ts.shape[0]):
        target, steps = ts[k], 0
        while _concrete(t) < _concrete(target):
            if steps >= mxstep or dt <= 0:
                raise RuntimeError(
                    f"odeint: {steps} steps did not reach t = {_concrete(target):g} from "
                    f"t = {_concrete(t):g} (step size {dt:g}); the system may be stiff. "
                    "Raise mxstep, or loosen rtol and atol.")
            y1, f1, error, ks = _rk_step(f, y, fy, t, dt)
            ratio = _error_ratio(error, rtol, atol, y, y1)
            if ratio <= 1:
                coeffs, last_t = _interpolant(y, y1, ks, dt), t
                y, fy, t = y1, f1, t + dt
            dt = min(max(_next_step(dt, ratio), 0.0), hmax)
            steps += 1
        out.append(_polyval(coeffs, (target - last_t) / (t - last_t))
                   if _concrete(t) != _concrete(last_t) else y)
    return fnp.stack(out)


def _ravel(tree: Any) -> tuple:
    """(the leaves of ``tree`` as one float vector, a function rebuilding the tree)."""
    leaves, treedef = tree_util.tree_flatten(tree)
    leaves = [fnp.asarray(x) for x in leaves]
    shapes = [x.shape for x in leaves]
    sizes = [int(np.prod(s)) for s in shapes]
    dtype = np.result_type(*[x.dtype for x in leaves], np.float32) if leaves else np.float64
    flat = (fnp.concatenate([fnp.ravel(x).astype(dtype) for x in leaves]) if leaves
            else fnp.zeros(0))

    def unravel(vector: Array) -> Any:
        parts, start = [], 0
        for shape, size in zip(shapes, sizes):
            parts.append(fnp.reshape(vector[start:start + size], shape))
            start += size
        return tree_util.tree_unflatten(treedef, parts)
    return flat, unravel


def _tree_dot(a: Any, b: Any) -> Array:
    return sum(fnp.sum(x * y) for x, y in zip(tree_util.tree_leaves(a),
                                              tree_util.tree_leaves(b)))


def _zeros_like_tree(tree: Any) -> Any:
    return tree_util.tree_map(lambda x: fnp.zeros_like(fnp.asarray(x)), tree)


def odeint(func: Callable, y0: Any, t: Any, *args: Any, rtol: float = 1.4e-8,
           atol: float = 1.4e-8, mxstep: float = np.inf, hmax: float = np.inf) -> Any:
    """y at the times ``t`` for dy/dt = func(y, t, *args), y(t[0]) = y0 (a pytree);
    differentiable in y0, t and args (by the adjoint method)."""
    for arg in tree_util.tree_leaves(args):
        if not isinstance(arg, (Array, np.ndarray, np.generic, int, float, complex)) \
                or isinstance(arg, bool):
            raise TypeError(f"The contents of odeint *args must be arrays or scalars, but "
                            f"got {arg}.")
    t = fnp.asarray(t)
    if t.ndim != 1:
        raise ValueError(f"odeint: t must be a 1-D array of times, got shape {t.shape}")
    if t.shape[0] > 1 and bool(fnp.any(t[1:] <= t[:-1])):
        raise ValueError("odeint: the times t must be strictly increasing")
    flat_y0, unravel = _ravel(y0)
    args = tree_util.tree_map(fnp.asarray, args)  # numbers as Arrays: every leaf has a shape

    def flat_func(y: Array, s: Any, *a: Any) -> Array:
        return _ravel(func(unravel(y), s, *a))[0]

    solver = _odeint if not _closes_over_tracers(flat_func, flat_y0, t, args) \
        else _solve_with_args
    ys = solver(flat_func, float(rtol), float(atol), mxstep, hmax, flat_y0, t, *args)
    return _unstack(ys, unravel)


def _without_tracers(tree: Any) -> Any:
    return tree_util.tree_map(lambda x: x.concrete() if isinstance(x, Tracer) else x, tree)


def _closes_over_tracers(func: Callable, y0: Array, t: Array, args: tuple) -> bool:
    """Whether func, given values free of tracers, still returns one: it closes over a
    value being differentiated. The adjoint rule cannot see such values (they are not
    arguments), so odeint then differentiates through the solver's steps instead."""
    probe = func(*_without_tracers((y0, t[0], *args)))
    return any(isinstance(leaf, Tracer) for leaf in tree_util.tree_leaves(probe))


def _unstack(ys: Array, unravel: Callable) -> Any:
    """Rows of flat states -> one pytree whose leaves have a leading time axis."""
    rows = [unravel(ys[k]) for k in range(ys.shape[0])]
    return tree_util.tree_map(lambda *leaves: fnp.stack(leaves), *rows)


def _solve_with_args(func: Callable, rtol: float, atol: float, mxstep: float, hmax: float,
                     y0: Array, ts: Array, *args: Any) -> Array:
    return _solve(lambda y, s: func(y, s, *args), y0, ts, rtol, atol, mxstep, hmax)


_odeint = custom_vjp(_solve_with_args, nondiff_argnums=(0, 1, 2, 3, 4))


def _odeint_fwd(func: Callable, rtol: float, atol: float, mxstep: float, hmax: float,
                y0: Array, ts: Array, *args: Any) -> tuple:
    ys = _odeint(func, rtol, atol, mxstep, hmax, y0, ts, *args)
    return ys, (ys, ts, args)


def _odeint_rev(func: Callable, rtol: float, atol: float, mxstep: float, hmax: float,
                residuals: tuple, g: Array) -> tuple:
    """The adjoint pass: from the last observation back to the first, integrate
    (y, y_bar, t0_bar, args_bar) backwards in time (as forwards in s = -t), adding the
    cotangent of each observation on the way."""
    ys, ts, args = residuals

    def augmented(state: tuple, s: Any, *a: Any) -> tuple:
        y, y_bar = state[0], state[1]
        dy, pullback = vjp(func, y, -s, *a)
        y_dot, s_dot, *a_dot = pullback(y_bar)
        return -dy, y_dot, s_dot, tuple(a_dot)

    y_bar, t0_bar, args_bar = g[-1], fnp.asarray(0.0, dtype=ys.dtype), _zeros_like_tree(args)
    ts_bar = []
    for i in range(ts.shape[0] - 1, 0, -1):
        t_bar = fnp.sum(func(ys[i], ts[i], *args) * g[i])
        t0_bar = t0_bar - t_bar
        interval = fnp.stack([-ts[i], -ts[i - 1]])
        state = odeint(augmented, (ys[i], y_bar, t0_bar, args_bar), interval, *args,
                       rtol=rtol, atol=atol, mxstep=mxstep, hmax=hmax)
        _, y_bar, t0_bar, args_bar = tree_util.tree_map(lambda leaf: leaf[1], state)
        y_bar = y_bar + g[i - 1]
        ts_bar.append(t_bar)
    ts_bar = fnp.stack([t0_bar] + ts_bar[::-1])
    return (y_bar, ts_bar, *args_bar)


_odeint.defvjp(_odeint_fwd, _odeint_rev)
