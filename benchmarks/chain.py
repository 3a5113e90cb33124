"""The chain ``h = tanh(h * w_i + b_i)`` of workloads 1, 2 and 5, written once per library.

Its loss is ``sum(h)`` and every implementation returns the gradient with respect to the
input ``x``; the weights are passed as (non-differentiated) arguments everywhere, so that
jitted JAX does not bake them into the program as constants.
"""
from __future__ import annotations

from typing import Any, Callable

import numpy as np

from .harness import missing_note, peer


def make(n: int, depth: int, seed: int = 0) -> tuple[np.ndarray, list, list]:
    """Input, weights and biases (float64); weights ~0.5 keep tanh out of saturation."""
    rng = np.random.RandomState(seed)
    return (rng.randn(n), [rng.randn(n) * 0.5 for _ in range(depth)],
            [rng.randn(n) * 0.1 for _ in range(depth)])


def numpy_grad(x: np.ndarray, ws: list, bs: list, g: np.ndarray | None = None) -> np.ndarray:
    """Hand-written forward and backward: the floor for a numpy-based library. ``g``: the
    cotangent of the chain's output (ones: the gradient of its sum)."""
    hs = [x]
    for w, b in zip(ws, bs):
        hs.append(np.tanh(hs[-1] * w + b))
    g = np.ones_like(x) if g is None else g
    for i in range(len(ws) - 1, -1, -1):
        g = g * (1.0 - hs[i + 1] ** 2) * ws[i]
    return g


def _loss(np_like: Any) -> Callable:
    def loss(x, ws, bs):
        h = x
        for w, b in zip(ws, bs):
            h = np_like.tanh(h * w + b)
        return np_like.sum(h)
    return loss


def _backward_grad(torch: Any, x: np.ndarray, ws: list, bs: list) -> Callable:
    """The chain's gradient by PyTorch's ``backward()`` (PyTorch, or the facade)."""
    tx = torch.from_numpy(x)
    tws, tbs = [torch.from_numpy(w) for w in ws], [torch.from_numpy(b) for b in bs]
    t_loss = _loss(torch)

    def grad() -> Any:
        xt = tx.detach().requires_grad_(True)
        t_loss(xt, tws, tbs).backward()
        return xt.grad
    return grad


def implementations(x: np.ndarray, ws: list, bs: list) -> tuple[dict[str, Callable], list[str]]:
    """Zero-argument callables returning d sum(chain(x)) / dx, for numpy, funcgrad and every
    installed peer; and notes for the peers that are missing."""
    import funcgrad
    import funcgrad.numpy as fnp
    fns: dict[str, Callable] = {"numpy": lambda: numpy_grad(x, ws, bs)}
    fx, fws, fbs = fnp.asarray(x), [fnp.asarray(w) for w in ws], [fnp.asarray(b) for b in bs]
    f_grad = funcgrad.grad(_loss(fnp))
    fns["funcgrad"] = lambda: f_grad(fx, fws, fbs)
    jitted = jit_grad()
    fns["funcgrad jit"] = lambda: jitted(fx, fws, fbs)
    missing = []

    import funcgrad.torch as facade
    fns["funcgrad.torch"] = _backward_grad(facade, x, ws, bs)
    torch = peer("torch")
    if torch is None:
        missing.append(missing_note("torch"))
    else:
        fns["torch"] = _backward_grad(torch, x, ws, bs)

    autograd = peer("autograd")
    if autograd is None:
        missing.append(missing_note("autograd"))
    else:
        import autograd.numpy as anp
        a_grad = autograd.grad(_loss(anp))
        fns["autograd"] = lambda: a_grad(x, ws, bs)

    jax = peer("jax")
    if jax is None:
        missing.append(missing_note("jax"))
    else:
        import jax.numpy as jnp
        jx, jws, jbs = jnp.asarray(x), [jnp.asarray(w) for w in ws], [jnp.asarray(b) for b in bs]
        j_grad = jax.grad(_loss(jnp))
        j_jit = jax.jit(j_grad)
        fns["jax eager"] = lambda: j_grad(jx, jws, jbs).block_until_ready()
        fns["jax jit"] = lambda: j_jit(jx, jws, jbs).block_until_ready()
    return fns, missing


def jit_grad() -> Callable:
    """A fresh ``funcgrad.jit(funcgrad.grad(loss))`` (traced and compiled on its first
    call)."""
    import funcgrad
    import funcgrad.numpy as fnp
    return funcgrad.jit(funcgrad.grad(_loss(fnp)))


def first_call(x: np.ndarray, ws: list, bs: list) -> Callable[[], Callable[[], Any]]:
    """For `harness.first_call_row`: a fresh jitted gradient applied to the chain."""
    import funcgrad.numpy as fnp
    fx, fws, fbs = fnp.asarray(x), [fnp.asarray(w) for w in ws], [fnp.asarray(b) for b in bs]

    def make() -> Callable[[], Any]:
        jitted = jit_grad()
        return lambda: jitted(fx, fws, fbs)
    return make


def check(fns: dict[str, Callable], rtol: float = 1e-10) -> None:
    """Every implementation's gradient equals hand-written numpy's, or AssertionError."""
    expected = fns["numpy"]()
    for name, fn in fns.items():
        np.testing.assert_allclose(np.asarray(fn()), expected, rtol=rtol, atol=1e-12,
                                   err_msg=f"chain gradient of {name} differs from numpy's")
