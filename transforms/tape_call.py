"""One primitive call as a tape, at the cost of the call: `record_primitive`, `CallTape`.

The torch facade records most ops as exactly one primitive on concrete arrays; tracing each
of them (`trace_flat`) would build a trace, tracers and a backward pass over one record.
`record_primitive` applies the primitive and keeps the call's `Record` (made by
`build_record`, so it keeps exactly the residuals its rules read) in a `CallTape`: a `Tape`
whose lists are made only when read, and whose `backward` runs the record's VJP rules
directly. `record_call` is the same without the `CallTape` (its parts, for a caller that
makes the tape only when one is asked for), and `call_cotangents` runs its rules.
"""
from __future__ import annotations

from typing import Any, Callable, Sequence

from funcgrad.array import Array
from funcgrad.core import Primitive, bind
from funcgrad.dtypes import EXTENDED_FLOATS
from .tape import (Record, Residual, Tape, accumulate_input_cotangents, aval_of,
                   backward_passes, build_record, current_phase, phase_cell)

__all__ = ["record_primitive", "record_call", "call_cotangents", "CallTape"]

_new = object.__new__


def record_primitive(prim: Primitive, params: dict, args: Sequence, diff: Sequence[int]
                     ) -> tuple[Any, "CallTape"]:
    """``prim`` applied to concrete ``args``, and the one-record tape of that call with the
    arguments at positions ``diff`` (ascending) as its inputs (variables 0..k-1) and the
    output as the next: what `trace_flat` would give for a one-primitive function, without
    a trace (a `CallTape`, whose backward runs the rules directly)."""
    out, rec, avals, positions, is_complex, _, traced = record_call(prim, params, args, diff)
    return out, CallTape.of(rec, avals, (out.shape, out.dtype) if traced else None,
                            positions, is_complex, prim.name)


def record_call(prim: Primitive, params: dict, args: Sequence, diff: Sequence[int]
                ) -> tuple[Any, Record | None, tuple, tuple, bool, tuple, bool]:
    """`record_primitive` without its tape: ``(out, record, avals, positions, is_complex,
    reads, traced)``. ``record`` is ``None`` where the output is not differentiable or no
    differentiated argument is (an integer output, integer arguments); ``avals`` are the
    (shape, dtype) of the arguments at ``diff`` (the tape's input variables);
    ``positions`` is ``diff`` as a tuple; ``is_complex`` says whether one of them or the
    output is complex; ``reads`` is (the argument positions whose values the rules read,
    whether they read the output); ``traced`` says whether the output is a tape variable
    (one inexact output). For a caller that keeps these itself (the torch facade's node of
    an op) and builds the `CallTape` only when asked for one (`CallTape.of`);
    `call_cotangents` runs the record's rules."""
    out = bind(prim, args, params)
    n = len(args)
    avals = []
    mask = 0
    key = 1 << n  # the bits of ``diff`` and of ``n``: the key of its `_in_vars`
    last = -1
    d = out.dtype
    kind = d.kind  # (a dtype's kind is a getter making a string: read once each)
    is_complex = kind == "c"
    traced = not prim.multiple_results and (kind in "fc" or d in EXTENDED_FLOATS)
    for i in diff:
        if i <= last:
            raise ValueError(f"record_primitive: diff must be ascending, got {list(diff)}")
        last = i
        key |= 1 << i
        a = args[i]
        aval = (a.shape, a.dtype) if type(a) is Array else aval_of(a)
        avals.append(aval)
        dtype = aval[1]
        kind = dtype.kind
        if kind in "fc" or dtype in EXTENDED_FLOATS:
            mask |= 1 << i
            is_complex = is_complex or kind == "c"
    k = len(avals)
    in_vars, positions = _IN_VARS.get(key) or _in_vars(key, diff, n)
    rec = None
    reads = ((), False)
    if traced and mask and prim.differentiable:
        reads = prim.needs_cache.get(mask | 1 << n) or prim.needs(mask, n)
        # (the phase is "forward" unless some backward pass runs: no thread-local read)
        rec = build_record(prim, params, args, in_vars, mask,
                           _OUT_VARS[k] if k < 8 else (k,), out, False, None,
                           current_phase() if backward_passes.open else "forward",
                           reads)  # (positional: a call with keywords costs more)
    # (a tuple: the garbage collector stops tracking it)
    return out, rec, tuple(avals), positions, is_complex, reads, traced


def call_cotangents(rec: Record, g: Array, avals: Sequence) -> list:
    """The cotangents of a one-record tape's inputs (of ``avals``, `record_call`'s) from
    that of its output: its rules run on concrete values, recording nothing anywhere (no
    trace takes them), so they need no phase; ``None`` for an input the rules give
    nothing."""
    cts: list = [None] * len(avals)
    accumulate_input_cotangents(rec, g, cts, avals)
    return cts


# (the variable numbers of a call's arguments (-1 for a constant), the differentiated
# positions), by the bits of those positions and of the number of arguments: shared tuples
# per kind of call (records live until their backward: fewer objects for the garbage
# collector to count and visit; a lookup by a small int costs little, unlike one by shape
# and dtype, which cost more than the tuples it saved)
_IN_VARS: dict = {}
_OUT_VARS = tuple((k,) for k in range(8))  # the output variable of a call of k inputs


def _in_vars(key: int, diff: Sequence[int], n: int) -> tuple:
    in_vars = [-1] * n
    for k, i in enumerate(diff):
        in_vars[i] = k
    got = _IN_VARS[key] = (tuple(in_vars), tuple(diff))
    return got


class CallTape(Tape):
    """The tape of one primitive call on concrete values (`record_primitive`), at the cost
    of one call: it holds the call's `Record` (``None`` where nothing is differentiable)
    and the (shape, dtype) of its inputs (``avals``) and output (``out_aval``, ``None`` for
    an output that is not traced); the `Tape` lists are made when read. `backward` runs the
    record's VJP rules directly, without a backward pass over records. ``is_complex``:
    whether a differentiated input or the output is complex; ``concrete``: whether its
    residuals are concrete (not so after `with_residuals`); ``positions``: the argument
    positions of its inputs (the call's ``diff``, as a tuple)."""

    __slots__ = ("record", "avals", "out_aval", "is_complex", "name", "concrete",
                 "positions", "_in_tree", "_out_tree")

    @staticmethod
    def of(record: Record | None, avals: tuple, out_aval: tuple | None, positions: tuple,
           is_complex: bool, name: str, concrete: bool = True) -> "CallTape":
        """The tape of a call `record_call` recorded (its ``record``, ``avals``,
        ``positions``, ``is_complex``) whose output has (shape, dtype) ``out_aval``."""
        tape = _new(CallTape)
        tape.record, tape.avals, tape.out_aval = record, avals, out_aval
        tape.positions, tape.is_complex, tape.name = positions, is_complex, name
        tape.concrete = concrete
        tape._in_tree = tape._out_tree = None
        return tape

    @property
    def records(self) -> list[Record]:
        return [] if self.record is None else [self.record]

    @property
    def var_avals(self) -> list[tuple]:
        return list(self.avals) if self.out_aval is None else [*self.avals, self.out_aval]

    @property
    def in_vars(self) -> list[int]:
        return list(range(len(self.avals)))

    @property
    def out_vars(self) -> list[int]:
        return [-1 if self.out_aval is None else len(self.avals)]

    @property
    def out_consts(self) -> list:
        return [None]

    def backward(self, cotangents: Sequence, consume: bool = False) -> list:
        rec = self.record
        g = cotangents[0]
        if rec is None or g is None:
            return [None] * len(self.avals)
        if self.concrete and type(g) is Array:
            cts = call_cotangents(rec, g, self.avals)
        else:
            cts = [None] * len(self.avals)
            cell = phase_cell()
            outer = cell.value  # "backward" already when this runs inside a backward pass
            cell.value = "backward"
            backward_passes.enter()
            try:
                accumulate_input_cotangents(rec, g, cts, self.avals)
            finally:
                cell.value = outer
                backward_passes.exit()
        if consume:
            rec.saved = rec.out = None
        return cts

    def with_residuals(self, replace: Callable[[Residual], Any]) -> "CallTape":
        record = (None if self.record is None else
                  Tape.with_residuals(self, replace).records[0])
        # (not concrete: the new residuals may be traced values)
        new = CallTape.of(record, self.avals, self.out_aval, self.positions,
                          self.is_complex, self.name, concrete=False)
        new._in_tree, new._out_tree = self._in_tree, self._out_tree
        return new
