"""`debug_callback`: a call of a Python function on the values of arrays, for its effect
(printing, logging). It computes nothing, so it has no derivative: under grad and jvp the
function sees the primal values; under vmap it runs once per example, in order (as JAX's
does); under jit the compiled program makes the call each time it runs (an effectful
primitive is never dropped or merged). `funcgrad.debug` builds `print` and `callback` on it.
"""
from __future__ import annotations

from typing import Any, Callable, Sequence

from funcgrad.core import Primitive, bind
from .batching import to_front

__all__ = ["debug_callback"]


def _impl(*raws: Any, callback: Callable) -> tuple:
    callback(*raws)
    return ()


debug_callback = Primitive(
    "debug_callback", _impl, None, ("callback",), multiple_results=True,
    differentiable=False, effectful=True,
    doc="callback(*values) for its effect; no result.")


class _PerExample:
    """The callback of a batched call: run once per example, the batched arguments (batch
    axis in front) indexed, the others as they are."""

    def __init__(self, callback: Callable, batched: tuple):
        self.callback = callback
        self.batched = batched

    def __call__(self, *raws: Any) -> None:
        size = next(len(r) for r, b in zip(raws, self.batched) if b)
        for i in range(size):
            self.callback(*[r[i] if b else r for r, b in zip(raws, self.batched)])


def _batch(args: Sequence, dims: Sequence, *, callback: Callable) -> tuple:
    fronts = [a if d is None else to_front(a, d) for a, d in zip(args, dims)]
    per_example = _PerExample(callback, tuple(d is not None for d in dims))
    bind(debug_callback, fronts, {"callback": per_example})
    return (), ()


debug_callback.defbatch(_batch)
