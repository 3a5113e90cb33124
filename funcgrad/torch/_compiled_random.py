"""Random draws inside ``torch.compile``d programs, from the facade's generator.

Eager random ops (``rand``, ``randn``, ``bernoulli``, dropout's ``bernoulli_``...) draw
from the default `Generator`'s numpy PCG64 stream. A compiled program must draw the same
numbers on every call as eager mode would, and fresh ones each call: so the stream's state
is an input of the program and its state after the draws an output, and each draw is one
`draw_p` record taking a state and returning the next state and the values, exactly as
the eager method call on that stream would. The calls chain through the state, so no
compiler pass may drop, merge or reorder them, and ``manual_seed(0); compiled(x)`` gives
eager's numbers bit for bit.

While a compiled function is traced, `stream` (the `TracedStream` of that trace) stands
for the default generator's numpy stream: the factories ask `active` for it. A program
takes the state only if it draws: its first trace runs without it, and a draw there raises
`NeedsState`, so that the caller traces again with the state (`GENERATOR`, among the
program's state inputs). A program that draws nothing reads and sets no generator state.

The state's byte layout (``Generator.get_state``) is defined here once: `state_bytes` and
`stream_of`.
"""
from __future__ import annotations

import contextlib
from typing import Any, Iterator

import numpy as np

import funcgrad.numpy as fnp
from funcgrad.core import Primitive, Tracer
from funcgrad.torch._compile_state import GraphBreak

__all__ = ["STATE_BYTES", "state_bytes", "stream_of", "draw_p", "TracedStream", "stream",
           "active", "GENERATOR", "NeedsState"]

_STATE_WORD = 16  # bytes per word (PCG64's state is 128-bit)
STATE_BYTES = 5 * _STATE_WORD  # the seed, then PCG64's state, inc, has_uint32, uinteger
GENERATOR = "<generator state>"  # its name among a compiled program's state inputs


def state_bytes(seed: int, rng: np.random.Generator) -> bytes:
    """The state layout of `Generator.get_state`: ``seed`` and where ``rng`` stands."""
    st = rng.bit_generator.state
    words = (seed, st["state"]["state"], st["state"]["inc"], st["has_uint32"],
             st["uinteger"])
    return b"".join(int(w).to_bytes(_STATE_WORD, "little") for w in words)


def stream_of(raw: bytes) -> tuple[int, np.random.Generator]:
    """(seed, a numpy stream standing where ``raw`` says): `state_bytes` inverted."""
    seed, state, inc, has_uint32, uinteger = (
        int.from_bytes(raw[i:i + _STATE_WORD], "little")
        for i in range(0, STATE_BYTES, _STATE_WORD))
    rng = np.random.default_rng()
    rng.bit_generator.state = {"bit_generator": "PCG64",
                               "state": {"state": state, "inc": inc},
                               "has_uint32": has_uint32, "uinteger": uinteger}
    return seed, rng


def _draw(state: np.ndarray, *, method: str, args: tuple, kwargs: tuple) -> tuple:
    seed, rng = stream_of(np.ascontiguousarray(state).tobytes())
    values = np.asarray(getattr(rng, method)(*args, **dict(kwargs)))
    return np.frombuffer(state_bytes(seed, rng), np.uint8).copy(), values


draw_p = Primitive(
    "torch_generator_draw", _draw, ("state",), ("method", "args", "kwargs"),
    multiple_results=True, differentiable=False,
    doc="(next state, values) of the numpy Generator method ``method(*args, **kwargs)`` "
        "called on a stream standing at ``state`` (the facade's generator layout).")


def _batch_draw(operands: tuple, axes: tuple, **params: Any) -> tuple:
    """vmap of a draw over a batch of states: each example's state draws its own numbers
    (one draw per example, in order), the next states and values stacked."""
    (state,), (axis,) = operands, axes
    states = fnp.moveaxis(state, axis, 0)
    drawn = [draw_p.bind(states[k], **params) for k in range(states.shape[0])]
    return (fnp.stack([d[0] for d in drawn]), fnp.stack([d[1] for d in drawn])), (0, 0)


draw_p.defbatch(_batch_draw)


class NeedsState(Exception):
    """A trace run without the generator's state drew random numbers: trace again with
    it."""


class TracedStream:
    """The default generator's stream inside a trace: each numpy Generator method called
    on it (``random``, ``standard_normal``, ``integers``, ``normal``, ``uniform``,
    ``exponential``, ``permutation``) is a `draw_p` record on the traced ``state``."""

    def __init__(self, state: Any):
        self.state = state  # (None: the program has no state input)

    def __getattr__(self, method: str) -> Any:
        def draw(*args: Any, **kwargs: Any) -> Any:
            if self.state is None:
                raise NeedsState(method)
            args = tuple(_static(a) for a in args)
            kwargs = tuple(sorted((k, _static(v)) for k, v in kwargs.items()))
            self.state, values = draw_p.bind(self.state, method=method, args=args,
                                             kwargs=kwargs)
            return values
        return draw


def _static(value: Any) -> Any:
    """A draw's argument as a record's static parameter (shapes as tuples, numbers as
    Python numbers); a traced one is a graph break (the draw's shape or bounds would
    depend on a tensor's value)."""
    if isinstance(value, Tracer):
        raise GraphBreak("a random draw's size or bounds depend on a tensor's value")
    if isinstance(value, (list, tuple)):
        return tuple(_static(v) for v in value)
    if isinstance(value, np.ndarray):
        return tuple(value.tolist()) if value.ndim else value.item()
    if isinstance(value, np.generic):
        return value.item()
    return value


_active: list = []  # the streams of the traces in progress, innermost last


def active() -> TracedStream | None:
    """The stream of the innermost compiled trace in progress, if any."""
    return _active[-1] if _active else None


@contextlib.contextmanager
def stream(compiling: bool, state: Any) -> Iterator[TracedStream | None]:
    """Within the block of a compiled trace (``compiling``), the default generator's
    draws are records on the traced ``state`` (the stream yielded; its ``state`` after
    the block is the next one), or raise `NeedsState` where ``state`` is None. Otherwise
    (a trace that is not torch.compile's) nothing changes and None is yielded."""
    if not compiling:
        yield None
        return
    traced = TracedStream(state)
    _active.append(traced)
    try:
        yield traced
    finally:
        _active.pop()
