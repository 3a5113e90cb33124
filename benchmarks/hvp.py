"""Workload 4: Hessian-vector product of a 1000-dimensional scalar function by
forward-over-reverse (the JVP of the gradient), versus one gradient.

The function is the n-dimensional Rosenbrock function, the classic HVP test case (a Newton-CG
optimiser needs exactly this): sums of slices, squares and products, so it measures both
per-op overhead and forward mode's cost on top of reverse mode. Hand-written numpy gradient
and HVP (the formulas scipy.optimize's rosen_der / rosen_hess_prod use) are the floor.

Target: funcgrad's HVP at most 3x funcgrad's gradient.
"""
from __future__ import annotations

from typing import Any, Callable

import numpy as np

from .harness import (Config, Report, Row, missing_note, peer, skipped_row,
                      time_all, time_target)

N, QUICK_N = 1000, 50


def rosen(np_like: Any = np) -> Callable:
    def f(x):
        return np_like.sum(100.0 * (x[1:] - x[:-1] ** 2) ** 2 + (1.0 - x[:-1]) ** 2)
    return f


def numpy_grad(x: np.ndarray) -> np.ndarray:
    g = np.zeros_like(x)
    g[1:-1] = (200 * (x[1:-1] - x[:-2] ** 2) - 400 * (x[2:] - x[1:-1] ** 2) * x[1:-1]
               - 2 * (1 - x[1:-1]))
    g[0] = -400 * x[0] * (x[1] - x[0] ** 2) - 2 * (1 - x[0])
    g[-1] = 200 * (x[-1] - x[-2] ** 2)
    return g


def numpy_hvp(x: np.ndarray, v: np.ndarray) -> np.ndarray:
    hv = np.zeros_like(x)
    hv[0] = (1200 * x[0] ** 2 - 400 * x[1] + 2) * v[0] - 400 * x[0] * v[1]
    hv[1:-1] = (-400 * x[:-2] * v[:-2] + (202 + 1200 * x[1:-1] ** 2 - 400 * x[2:]) * v[1:-1]
                - 400 * x[1:-1] * v[2:])
    hv[-1] = -400 * x[-2] * v[-2] + 200 * v[-1]
    return hv


def implementations(x: np.ndarray, v: np.ndarray) -> tuple[dict[str, tuple], list[str]]:
    """{library: (gradient callable, HVP callable)} for every installed library (zero-arg
    callables returning arrays), and notes for the missing peers."""
    import funcgrad
    import funcgrad.numpy as fnp
    impls = {"numpy": (lambda: numpy_grad(x), lambda: numpy_hvp(x, v))}
    fx, fv = fnp.asarray(x), fnp.asarray(v)
    f_grad = funcgrad.grad(rosen(fnp))
    impls["funcgrad"] = (lambda: f_grad(fx), lambda: funcgrad.jvp(f_grad, (fx,), (fv,))[1])
    missing = []

    torch = peer("torch")
    if torch is None:
        missing.append(missing_note("torch"))
    else:
        tx, tv = torch.from_numpy(x), torch.from_numpy(v)
        t_grad = torch.func.grad(rosen(torch))
        impls["torch"] = (lambda: t_grad(tx), lambda: torch.func.jvp(t_grad, (tx,), (tv,))[1])

    autograd = peer("autograd")
    if autograd is None:
        missing.append(missing_note("autograd"))
    else:
        import autograd.numpy as anp
        a_grad = autograd.grad(rosen(anp))
        a_hvp = autograd.make_jvp(a_grad)
        impls["autograd"] = (lambda: a_grad(x), lambda: a_hvp(x)(v)[1])

    jax = peer("jax")
    if jax is None:
        missing.append(missing_note("jax"))
    else:
        import jax.numpy as jnp
        jx, jv = jnp.asarray(x), jnp.asarray(v)
        j_grad = jax.grad(rosen(jnp))

        def j_hvp(x, v):
            return jax.jvp(j_grad, (x,), (v,))[1]
        jit_grad, jit_hvp = jax.jit(j_grad), jax.jit(j_hvp)
        impls["jax eager"] = (lambda: j_grad(jx).block_until_ready(),
                              lambda: j_hvp(jx, jv).block_until_ready())
        impls["jax jit"] = (lambda: jit_grad(jx).block_until_ready(),
                            lambda: jit_hvp(jx, jv).block_until_ready())
    return impls, missing


def check(impls: dict[str, tuple]) -> None:
    """Every gradient and HVP equals hand-written numpy's, or AssertionError."""
    grad, hvp = (np.asarray(f()) for f in impls["numpy"])
    for name, (g, h) in impls.items():
        np.testing.assert_allclose(np.asarray(g()), grad, rtol=1e-10, err_msg=f"grad of {name}")
        np.testing.assert_allclose(np.asarray(h()), hvp, rtol=1e-10, err_msg=f"HVP of {name}")


def run(cfg: Config) -> Report:
    n = QUICK_N if cfg.quick else N
    rng = np.random.RandomState(0)
    impls, missing = implementations(rng.randn(n), rng.randn(n))
    check(impls)
    fns = {}
    for name, (g, h) in impls.items():
        fns[(name, "grad")], fns[(name, "hvp")] = g, h
    timings = time_all(fns, cfg)
    report = Report()
    base = timings[("numpy", "grad")].median
    for name in impls:
        med, spread, _ = timings[(name, "grad")]
        report.rows.append(Row(4, f"Rosenbrock n={n}: gradient", name, med, "s", med / base,
                               "numpy", spread, "torch.func" if name == "torch" else ""))
    for name in impls:
        med, spread, _ = timings[(name, "hvp")]
        report.rows.append(Row(4, f"Rosenbrock n={n}: HVP fwd-over-rev", name, med, "s",
                               med / timings[(name, "grad")].median, "own grad", spread))
    report.rows += [skipped_row(4, f"Rosenbrock n={n}", "-", note) for note in missing]
    report.targets.append(time_target("W4: funcgrad HVP <= 3x funcgrad gradient",
                                      timings[("funcgrad", "hvp")],
                                      timings[("funcgrad", "grad")], 3.0))
    return report
