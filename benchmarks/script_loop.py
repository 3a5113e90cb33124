"""Issue 40's speed target: a ``torch.jit.script``ed function with a loop runs, after its
first call, at most 1.5x the same function written with ``funcgrad.lax`` by hand.

The function: ``for i in range(n): x = tanh(x * 0.9 + 0.1)`` on a vector of ``SIZE``
float32, ``n = TRIPS``. Scripted, it is TorchScript source (a ``prim::Loop``) whose calls
run one compiled program per signature (`funcgrad.torch._script.compiled`: the loop is a
``lax.fori_loop`` in it); by hand, it is ``lax.fori_loop`` under ``funcgrad.jit`` with
the trip count static, as the scripted program has it. Counted by
``python -m benchmarks.instructions loop_script loop_lax`` (instructions per call).
"""
from __future__ import annotations

from typing import Callable

SIZE = 64
TRIPS = 10
TARGET = 1.5  # scripted / by hand, at most


def scripted() -> Callable[[], object]:
    """A call of the scripted function (its first call made)."""
    import funcgrad.torch as torch

    @torch.jit.script
    def loop(x: torch.Tensor, n: int) -> torch.Tensor:
        for i in range(n):
            x = torch.tanh(x * 0.9 + 0.1)
        return x
    x = torch.ones(SIZE)
    loop(x, TRIPS)
    return lambda: loop(x, TRIPS)


def by_hand() -> Callable[[], object]:
    """A call of the same loop written with ``funcgrad.lax``, jitted (first call made)."""
    import funcgrad
    import funcgrad.lax as lax
    import funcgrad.numpy as fnp

    def loop(x, n):
        return lax.fori_loop(0, n, lambda i, x: fnp.tanh(x * 0.9 + 0.1), x)
    jitted = funcgrad.jit(loop, static_argnums=1)
    x = fnp.ones(SIZE, dtype=fnp.float32)
    jitted(x, TRIPS)
    return lambda: jitted(x, TRIPS)
