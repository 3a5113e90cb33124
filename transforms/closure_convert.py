"""Closure conversion of a staged construct's functions (JAX's ``closure_convert``): the
traced values a cond branch, a loop body or a loop condition reads from its closure become
explicit operands of the construct, so that every transform sees them.

Why: under ``jit(grad(f))`` a cond whose branch reads ``w`` (differentiated by the grad
applied inside the jitted function) is staged by jit, one level below grad. Run there, the
branch would hand ``w`` to grad's trace, which would record the branch's work on its own
tape with the branch's inputs as constants: the construct's derivative with respect to
``w`` would be lost. JAX traces a branch into a jaxpr, whose constants are the captured
tracers, and makes them operands. funcgrad's transforms run Python functions eagerly, so it
does the same with the function itself:

- `captured_values` runs the functions once on stand-ins of the construct's operands (new
  values of the staging jit trace), while a `_Lift` intercepts every other trace: each
  tracer of theirs that reaches a primitive is one the functions read from their closure
  (their own values are the jit trace's). It is replaced by a stand-in too, so the run
  leaves no records on any tape; what it records in the jit trace is dropped.
- `converted` makes ``g(*args, *values)``: ``fun(*args)`` with each captured tracer
  replaced by the value given in its place, wherever it reaches a primitive (inside nested
  constructs, custom rules and transforms too) or is returned.

A `_Lift` intercepts a trace by giving it, for the time of the run, a level above every
other (so that each primitive call holding one of its tracers comes to it first), an alive
flag (a derivative's branch may run after the transform returned), and ``process`` and
``process_call`` methods of its own that replace the tracers, then hand the call on to the
trace truly on top of the new arguments, as `funcgrad.core.bind` would. Lifts nest (a cond
inside a converted branch): the innermost one's traces rank highest and replace first.
"""
from __future__ import annotations

import threading
from typing import Any, Callable, Iterable, Sequence

import funcgrad.numpy as fnp
from funcgrad.core import (Primitive, Trace, TraceCall, Tracer, active_traces, bind,
                           escaped_error)
from .jit_trace import JitTrace
from .vmap import BatchTracer

__all__ = ["captured_values", "converted", "true_level"]

_RANK = 1 << 40  # a lifted trace's level: its lift's depth times this, plus its own level


class _Truth(threading.local):
    """Per thread: the real (level, alive) of each trace a lift holds, by id, how many
    lifts hold it and the trace; and how deep lifts are nested."""

    def __init__(self) -> None:
        self.held: dict[int, list] = {}
        self.depth = 0

    def traces(self) -> list[Trace]:
        return [h[3] for h in self.held.values()]


_truth = _Truth()


def true_level(trace: Trace) -> int:
    """``trace``'s level in the stack of transforms, whether or not a lift holds it."""
    held = _truth.held.get(id(trace))
    return trace.level if held is None else held[0]


def _truly_alive(trace: Trace) -> bool:
    held = _truth.held.get(id(trace))
    return trace.alive if held is None else held[1]


def _true_top(args: Sequence) -> Trace | None:
    """`funcgrad.core.find_top_trace` by the real levels."""
    top, level = None, -1
    for a in args:
        if isinstance(a, Tracer):
            t = a._trace
            lv = true_level(t)
            if lv > level:
                top, level = t, lv
    return top


class _Lift:
    """While entered: ``traces`` intercepted, each argument ``replace`` maps to a new value
    replaced before the call goes on (see the module's docstring)."""

    def __init__(self, traces: Iterable[Trace], replace: Callable[[Any], Any]):
        self.traces = list({id(t): t for t in traces}.values())
        self.replace = replace
        self.saved: list[tuple] = []
        self.below: dict[int, tuple] = {}  # id(trace) -> (process, process_call) under it

    def __enter__(self) -> "_Lift":
        _truth.depth += 1
        for t in self.traces:
            held = _truth.held.setdefault(id(t), [t.level, t.alive, 0, t])
            held[2] += 1
            self.saved.append((t, t.level, t.alive, t.__dict__.get("process"),
                               t.__dict__.get("process_call")))
            self.below[id(t)] = (t.process, t.process_call)
            t.level = _truth.depth * _RANK + held[0]
            t.alive = True
            t.process = self._process  # type: ignore[method-assign]
            t.process_call = self._process_call  # type: ignore[method-assign]
        return self

    def __exit__(self, *exc: Any) -> None:
        for t, level, alive, process, process_call in reversed(self.saved):
            t.level, t.alive = level, alive
            for name, value in (("process", process), ("process_call", process_call)):
                if value is None:
                    del t.__dict__[name]
                else:
                    t.__dict__[name] = value
            held = _truth.held[id(t)]
            held[2] -= 1
            if not held[2]:
                del _truth.held[id(t)]
        _truth.depth -= 1

    def _handler(self, trace: Trace, index: int, what: Primitive | None) -> Callable:
        """``trace``'s process (0) or process_call (1) as it is under this lift."""
        if not _truly_alive(trace):
            raise escaped_error(trace, what)
        below = self.below.get(id(trace))
        if below is not None:
            return below[index]
        return trace.process if index == 0 else trace.process_call

    def _process(self, prim: Primitive, args: Sequence, params: dict) -> Any:
        new = [self.replace(a) for a in args]
        top = _true_top(new)
        if top is None:
            return bind(prim, new, params, True)
        return self._handler(top, 0, prim)(prim, new, params)

    def _process_call(self, call: TraceCall, args: Sequence) -> Any:
        new = [self.replace(a) for a in args]
        top = _true_top(new)
        if top is None:
            return call.fun(*new)
        return self._handler(top, 1, None)(call, new)


def _example(x: Tracer) -> Any:
    """A value of ``x``'s type to stand for it: its value in this call (under vmap, where
    it has one per example, ones)."""
    v, batched = x, False
    while isinstance(v, Tracer):
        batched = batched or isinstance(v, BatchTracer)
        v = v._primal
    return fnp.ones(x.shape, x.dtype) if batched else v


def captured_values(funs: Sequence[Callable], leaves: Sequence, staging: JitTrace) -> list:
    """The tracers of transforms other than ``staging`` (the jit trace staging the
    construct) that ``funs`` (flat in, flat out) read from their closure when run on
    ``leaves``; in the order first read. The run is on values of ``staging`` standing for
    the operands and the captured values (new inputs of a sub-program nothing runs), so
    that it leaves no records but ``staging``'s, which are dropped; the transforms it
    intercepts are those running and those an enclosing conversion holds (a derivative's
    branch runs after its transform returned)."""
    lifted = {id(t): t for t in [*active_traces(), *_truth.traces()] if t is not staging}
    found: dict[int, Tracer] = {}

    def stand_in(x: Any) -> Any:
        if isinstance(x, Tracer) and id(x._trace) in lifted:
            return staging.new_input(_example(x))
        return x

    def replace(x: Any) -> Any:
        if isinstance(x, Tracer) and id(x._trace) in lifted:
            found.setdefault(id(x), x)
        return stand_in(x)
    with _Lift(lifted.values(), replace):
        args = [stand_in(x) for x in leaves]
        for fun in funs:
            staging.scoped(fun, args)  # (a sub-program nothing runs: dropped)
    return list(found.values())


def converted(fun: Callable, captured: Sequence[Tracer], at: int | None = None) -> Callable:
    """``g``: ``fun`` (flat in, flat out) with each tracer of ``captured`` read as the
    value given in its place, given as ``g``'s last arguments; or, with ``at`` (a loop
    body carrying them), at position ``at`` of its arguments and of its outputs (the
    values unchanged)."""
    if not captured:
        return fun
    n = len(captured)
    keys = [id(c) for c in captured]
    traces = [c._trace for c in captured]

    def g(*args: Any) -> list:
        k = len(args) - n if at is None else at
        values = args[k:k + n]
        by_id = dict(zip(keys, values))

        def replace(x: Any) -> Any:
            return by_id.get(id(x), x) if isinstance(x, Tracer) else x
        with _Lift(traces, replace):
            outs = [replace(o) for o in fun(*args[:k], *args[k + n:])]
        return outs if at is None else [*outs[:at], *values, *outs[at:]]
    g.__name__ = getattr(fun, "__name__", "fun")
    g.__wrapped__ = fun  # type: ignore[attr-defined]
    g.carried = (at, n) if at is not None else None  # type: ignore[attr-defined]
    g.captured = captured  # type: ignore[attr-defined]  (alive: their ids stay theirs)
    return g
