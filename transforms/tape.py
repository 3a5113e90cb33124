"""The tape: reverse mode's record of what a function did, and its public API.

`RevTrace` records one `Record` per primitive call on its tracers: the primitive, which
variables went in and came out, the static params, and only the residuals that the
primitive's VJP rules read (each rule names them). `backward_pass` walks the records in
reverse and calls the rules, which are funcgrad ops and so are themselves traced by any
outer transform. A `Tape` packages records with its inputs and outputs: it can be printed
like a jaxpr, replayed on new inputs, differentiated (`Tape.backward`), and its residuals
read and replaced. Everything that builds on recorded programs (vjp, make_tape,
checkpoint, linearize, jit, the torch facade) uses this API:

- `trace_flat(fun, primals)`: run ``fun`` under a reverse-mode trace, get its `Tape`;
- `record_primitive(prim, params, args, diff)` (in `tape_call`): one call as a one-record
  tape, no trace;
- `build_record(...)`: the one place a `Record` is made;
- `backward_pass(records, ...)` over records, and its step for one record,
  `accumulate_input_cotangents` (a one-record tape runs just that step);
- `Tape.backward`, `Tape.replay`, `Tape.residuals`, `Tape.with_residuals`.

The backward pass and the records' phase live in `funcgrad.transforms.backward` and are
exported from here.
"""
from __future__ import annotations

import sys
from typing import Any, Callable, Iterator, NamedTuple, Sequence

import numpy as np

from funcgrad import tree_util
from funcgrad.array import as_array
from funcgrad.core import Primitive, Trace, TraceCall, Tracer, bind, layout_of, new_trace
from funcgrad.dtypes import EXTENDED_FLOATS
from funcgrad.meta import ShapeDtypeStruct
from .backward import (PhaseCell, accumulate_input_cotangents, aval_of, backward_pass,
                       backward_passes, current_phase, fit_cotangent, phase_cell)
from .tape_text import tape_text

__all__ = ["RevTrace", "RevTracer", "Record", "Residual", "Tape", "make_tape", "trace_flat",
           "build_record", "Aux", "backward_pass", "accumulate_input_cotangents",
           "fit_cotangent", "aval_of", "avals_of", "PhaseCell", "phase_cell",
           "current_phase", "backward_passes", "Var", "Literal"]



class RevTracer(Tracer):
    """A value recorded on a tape: its primal, its variable number on that tape, and
    whether it carries a derivative (its dtype is inexact; known once, read by every call
    that takes it)."""

    __slots__ = ("_var", "_diff")


class Var:
    """A program variable as JAX's jaxprs show it (``eqn.invars``): its number on the tape,
    and its shape and dtype where known. Equal by number, so an interpreter can key an
    environment by it."""

    __slots__ = ("count", "aval")

    def __init__(self, count: int, aval: Any = None):
        self.count, self.aval = count, aval

    def __eq__(self, other: Any) -> bool:
        return type(other) is Var and other.count == self.count

    def __hash__(self) -> int:
        return hash(("Var", self.count))

    def __repr__(self) -> str:
        return f"Var({self.count})"


class Literal:
    """A constant input as JAX's jaxprs show it (``type(v) is core.Literal``; ``v.val``)."""

    __slots__ = ("val",)

    def __init__(self, val: Any):
        self.val = val

    def __repr__(self) -> str:
        return f"Literal({self.val!r})"


class Record:
    """One primitive application on the tape.

    ``in_vars``/``out_vars`` are variable numbers (-1 for a constant input or an output
    that is not traced); ``saved`` holds, per input, the value kept for the backward pass
    (``None`` where no rule reads it; constants too when the tape is to be replayed) and
    ``out`` the output if a rule reads it. ``sub`` is a nested `Tape` (checkpoint, custom
    rules) when there is one.
    """

    __slots__ = ("prim", "params", "in_vars", "in_avals", "out_vars", "saved", "out",
                 "phase", "source", "sub")

    def __repr__(self) -> str:
        return f"Record({self.prim.name}, in={self.in_vars}, out={self.out_vars})"

    @property
    def primitive(self) -> Primitive:
        """``prim``, by the name of a JAX equation's field."""
        return self.prim

    @property
    def invars(self) -> list:
        """JAX's ``eqn.invars``: a `Var` per variable input, a `Literal` per constant."""
        return [Var(v, self.in_avals[i] if self.in_avals else None) if v >= 0 else
                Literal(self.saved[i]) for i, v in enumerate(self.in_vars)]

    @property
    def outvars(self) -> list:
        """JAX's ``eqn.outvars``."""
        return [Var(v) for v in self.out_vars]

    def copy(self) -> "Record":
        new = _new(Record)
        for name in Record.__slots__:
            setattr(new, name, getattr(self, name))
        return new


_new = object.__new__


def avals_of(prim: Primitive, primals: Sequence) -> tuple:
    """Each input's (shape, dtype), and third its layout token (`layout_of`) where a rule
    of ``prim`` asks for that input's (``None`` elsewhere: finding it costs more than the
    rest): what rules reading ``<input>_shape`` and the like are handed."""
    layouts = prim.layout_inputs
    if layouts:
        return tuple([(*aval_of(p), layout_of(p) if i in layouts else None)
                      for i, p in enumerate(primals)])
    return tuple([aval_of(p) for p in primals])


def build_record(prim: Primitive, params: dict, primals: Sequence, in_vars: Sequence[int],
                 mask: int, out_vars: tuple, out: Any, keep_consts: bool = False,
                 source: str | None = None, phase: str = "forward",
                 needs: tuple | None = None) -> Record:
    """The record of ``prim`` applied to ``primals`` with result ``out``, keeping exactly
    the residuals the VJP rules of the inputs in bit mask ``mask`` read (and, with
    ``keep_consts``, every constant input, so that the record can be replayed). Values are
    referenced, never copied: funcgrad Arrays are immutable, and a numpy array the user
    passes must not change while a transform holds it (as with any zero-copy view).
    ``phase``: "backward" for a record made during a backward pass; ``needs``:
    ``prim.needs(mask, len(primals))`` where the caller has it already."""
    n = len(primals)
    ins, reads_out = needs or prim.needs_cache.get(mask | 1 << n) or prim.needs(mask, n)
    if ins or keep_consts:
        saved = ([p if v < 0 else None for p, v in zip(primals, in_vars)] if keep_consts
                 else [None] * n)
        for i in ins:
            saved[i] = primals[i]
        saved = tuple(saved)
    else:  # the rules read no input (a sum; tanh's reads its output)
        saved = (None,) * n
    rec = _new(Record)
    rec.prim = prim
    rec.params = params
    rec.in_vars = tuple(in_vars)
    rec.in_avals = avals_of(prim, primals) if prim.reads_avals or keep_consts else None
    rec.out_vars = out_vars
    rec.saved = saved
    # a multi-output record keeps its outputs when one is not traced: the zero cotangent
    # of that output is shaped after it
    rec.out = out if reads_out or (prim.multiple_results and -1 in out_vars) else None
    rec.phase = phase
    rec.source = source
    rec.sub = None
    return rec


def _user_source() -> str:
    """file:line of the innermost caller outside funcgrad (for residual reports)."""
    f = sys._getframe(2)
    while f is not None:
        name = f.f_code.co_filename
        if "funcgrad" not in name and "/transforms/" not in name and "/primitives/" not in name:
            return f"{name}:{f.f_lineno}"
        f = f.f_back
    return "?"


class RevTrace(Trace):
    """Reverse-mode trace. ``keep_all`` keeps every constant and non-float value (for
    `make_tape`); otherwise only values that can carry a derivative are traced.
    ``policy`` makes it a checkpoint's sub-tape: constants are kept (to replay the
    records), and of the values computed inside only those the policy allows."""

    mode = "rev"
    tracer_type: type = RevTracer  # the class of this trace's tracers

    def __init__(self, name: str = "vjp", keep_all: bool = False, sources: bool = False,
                 policy: Callable[[Record], bool] | None = None):
        super().__init__()
        self.name = name
        self.keep_all = keep_all
        self.sources = sources
        self.policy = policy
        self.keep_consts = keep_all or policy is not None
        # read on every traced call, and an instance attribute is read faster than a class's
        self.tracer_type = type(self).tracer_type
        self.kept_vars: set = set()
        self.phase_cell = phase_cell()  # its records' phase: ``.value``
        self.records: list[Record] = []
        self.var_avals: list[tuple] = []

    def new_var(self, primal: Any, diff: bool | None = None) -> RevTracer:
        """A tracer of ``primal``, the tape's next variable; ``diff``: whether it carries a
        derivative (found from the dtype if not given)."""
        var_avals = self.var_avals
        t = _new(self.tracer_type)
        t._trace = self
        t._primal = primal
        t.dtype = dtype = primal.dtype
        t.shape = shape = primal.shape  # a tuple already (an Array's, a backend array's)
        t.ndim = primal.ndim
        t._diff = (dtype.kind in "fc" or dtype in EXTENDED_FLOATS) if diff is None else diff
        t._var = len(var_avals)
        var_avals.append((shape, dtype))
        return t

    def var_of(self, x: Any) -> int:
        """The variable number of ``x`` on this tape, or -1 if it is not traced here."""
        return x._var if isinstance(x, Tracer) and x._trace is self else -1

    def primal_of(self, x: Any) -> Any:
        """The primal of a tracer of this trace; anything else unchanged."""
        return x._primal if isinstance(x, Tracer) and x._trace is self else x

    def lower(self, args: Sequence) -> tuple[list, list, int]:
        """(primals, variable numbers (-1 for constants), bit mask of the inputs that carry
        a derivative) of a call's arguments.

        `process` and `record` write this method and `new_var` out for the one-output call
        they handle for every traced operation: the two calls cost 3.4% of the small-op
        chain's gradient (callgrind: 12.98M -> 12.57M instructions; issue 16 bounds the
        eager path at 5% over the count before the one-path core). Keep them alike."""
        primals, in_vars, mask = [], [], 0
        bit = 1
        own = self.tracer_type
        for a in args:
            if type(a) is own and a._trace is self:
                primals.append(a._primal)
                in_vars.append(a._var)
                if a._diff:
                    mask |= bit
            else:
                primals.append(a)
                in_vars.append(-1)
            bit <<= 1
        return primals, in_vars, mask

    def process(self, prim: Primitive, args: Sequence, params: dict) -> Any:
        primals, in_vars, mask = [], [], 0  # `lower`, written out: once per traced call
        bit = 1
        own = self.tracer_type
        for a in args:
            if type(a) is own and a._trace is self:
                primals.append(a._primal)
                in_vars.append(a._var)
                if a._diff:
                    mask |= bit
            else:
                primals.append(a)
                in_vars.append(-1)
            bit <<= 1
        out = bind(prim, primals, params)
        if mask and prim.differentiable or self.keep_all:
            return self.record(prim, params, primals, in_vars, mask, out)
        return out

    def _traced(self, out: Any) -> Any:
        """A tracer for an output that can carry a derivative (every output: keep_all)."""
        d = out.dtype
        diff = d.kind in "fc" or d in EXTENDED_FLOATS  # bfloat16's kind is "V"
        return self.new_var(out, diff) if diff or self.keep_all else out

    def record(self, prim: Primitive, params: dict, primals: Sequence, in_vars: Sequence,
               mask: int, out: Any) -> Any:
        """Append a record of ``prim`` having produced ``out``; return its tracers."""
        if prim.multiple_results:
            # map, not a comprehension: one would make ``self`` a cell in every call
            result: Any = tuple(map(self._traced, out))
            out_vars = tuple(map(self.var_of, result))
        else:
            d = out.dtype
            diff = d.kind in "fc" or d in EXTENDED_FLOATS
            if diff or self.keep_all:  # `new_var`, written out: once per traced call
                var_avals = self.var_avals
                result = t = _new(self.tracer_type)
                t._trace = self
                t._primal = out
                t.dtype = d
                t.shape = shape = out.shape
                t.ndim = out.ndim
                t._diff = diff
                t._var = v = len(var_avals)
                var_avals.append((shape, d))
                out_vars = (v,)
            else:
                result, out_vars = out, (-1,)
        rec = build_record(prim, params, primals, in_vars, mask, out_vars, out,
                           self.keep_consts, _user_source() if self.sources else None,
                           self.phase_cell.value)
        if self.policy is not None:
            self._apply_policy(rec, out)
        self.records.append(rec)
        return result

    def _apply_policy(self, rec: Record, out: Any) -> None:
        """Keep the outputs of a record the policy allows; drop every residual that is
        neither such an output, nor an input of the sub-tape, nor a constant."""
        kept = self.kept_vars
        if self.policy(rec):
            kept.update(rec.out_vars)
            rec.out = out
        else:
            rec.out = None
        rec.saved = tuple(s if (v < 0 or v in kept) else None
                          for s, v in zip(rec.saved, rec.in_vars))


# ---------------------------------------------------------------------------------------
# Tapes: recorded programs you can print, replay and differentiate
# ---------------------------------------------------------------------------------------

class Residual(NamedTuple):
    """One value a tape keeps for its backward pass: input ``slot`` (kind "in") or output
    ``slot`` (kind "out") of record number ``record``, tape variable ``var`` (-1 for a
    constant)."""
    record: int
    kind: str
    slot: int
    var: int
    value: Any


class Tape:
    """A recorded program: flat inputs (tape variables ``in_vars``), records, flat outputs
    (variables ``out_vars``, or constants ``out_consts`` where an output is not traced).
    Print it to read it (one record a line, like a jaxpr); call it to re-run it on new
    inputs; `backward` pulls output cotangents back to the inputs."""

    def __init__(self, records: list[Record], var_avals: list[tuple], in_vars: list[int],
                 out_vars: list[int], out_consts: list | None = None,
                 in_tree: Any = None, out_tree: Any = None, name: str = "tape"):
        self.records = records
        self.var_avals = var_avals
        self.in_vars = in_vars
        self.out_vars = out_vars
        self.out_consts = [None] * len(out_vars) if out_consts is None else out_consts
        self._in_tree = in_tree
        self._out_tree = out_tree
        self.name = name

    @property
    def in_tree(self) -> Any:
        """The pytree structure of the inputs (a flat tuple unless set)."""
        if self._in_tree is None:
            self._in_tree = tree_util.tree_structure(tuple(self.in_vars))
        return self._in_tree

    @in_tree.setter
    def in_tree(self, tree: Any) -> None:
        self._in_tree = tree

    @property
    def out_tree(self) -> Any:
        """The pytree structure of the outputs (a flat tuple unless set)."""
        if self._out_tree is None:
            self._out_tree = tree_util.tree_structure(tuple(self.out_vars))
        return self._out_tree

    @out_tree.setter
    def out_tree(self, tree: Any) -> None:
        self._out_tree = tree

    # -- running ---------------------------------------------------------------------
    def replay(self, inputs: Sequence) -> list:
        """The flat outputs of the recorded program on new flat ``inputs`` (each record's
        primitive applied again, through any transforms active around the call)."""
        env: list = [None] * len(self.var_avals)
        for var, x in zip(self.in_vars, inputs):
            env[var] = x
        for rec in self.records:
            args = [env[v] if v >= 0 else rec.saved[i] for i, v in enumerate(rec.in_vars)]
            out = bind(rec.prim, args, rec.params)
            for v, o in zip(rec.out_vars, out if rec.prim.multiple_results else (out,)):
                if v >= 0:
                    env[v] = o
        return [env[v] if v >= 0 else c for v, c in zip(self.out_vars, self.out_consts)]

    def __call__(self, *args: Any) -> Any:
        leaves, tree = tree_util.tree_flatten(args)
        if tree != self.in_tree:
            raise TypeError(f"this tape was recorded for inputs {self.in_tree}, got {tree}")
        inputs = []
        for var, x in zip(self.in_vars, leaves):
            x = as_array(np.asarray(x) if isinstance(x, (list, tuple)) else x)
            shape, dtype = self.var_avals[var]
            if tuple(x.shape) != shape or x.dtype != dtype:
                raise TypeError(f"this tape was recorded for an input of shape {shape} and "
                                f"dtype {dtype}, got {tuple(x.shape)} {x.dtype}")
            inputs.append(x)
        return self.out_tree.unflatten(self.replay(inputs))

    def backward(self, cotangents: Sequence, consume: bool = False) -> list:
        """The cotangents of the inputs (``None`` where zero) for the output cotangents
        ``cotangents`` (``None`` for a zero one); with ``consume`` the residuals are freed
        as the pass goes (the tape cannot run again)."""
        seeds = [(v, as_array(c)) for v, c in zip(self.out_vars, cotangents)
                 if v >= 0 and c is not None]
        cts = backward_pass(self.records, self.var_avals, seeds, consume)
        return [cts[v] for v in self.in_vars]

    # -- residuals -------------------------------------------------------------------
    def residuals(self) -> list[Residual]:
        """Every value the records keep (inputs the rules read, kept outputs, constants
        kept for replay), in record order."""
        found = []
        for k, rec in enumerate(self.records):
            for i, (s, v) in enumerate(zip(rec.saved, rec.in_vars)):
                if s is not None:
                    found.append(Residual(k, "in", i, v, s))
            if rec.out is not None:
                outs = rec.out if rec.prim.multiple_results else (rec.out,)
                for j, (v, o) in enumerate(zip(rec.out_vars, outs)):
                    found.append(Residual(k, "out", j, v, o))
        return found

    def held_values(self) -> list:
        """Every value the tape keeps for its backward pass: its residuals, then what the
        calls of its records hold (`TraceCall.held_values`). The leaves of a vjp function
        as a pytree (`with_held_values` puts others in their places)."""
        found = [r.value for r in self.residuals()]
        for rec in self.records:
            call = _call_of(rec)
            if call is not None:
                found += call.held_values()
        return found

    def with_held_values(self, values: Iterator) -> "Tape":
        """A copy of this tape holding the next values of ``values`` in place of
        `held_values` (records and calls copied: this tape is unchanged)."""
        tape = self.with_residuals(lambda r: next(values))
        for rec in tape.records:
            call = _call_of(rec)
            if call is not None:
                new_call, rec.sub = call.with_held_values(values, rec.sub)
                rec.params = {**rec.params, "call": new_call}
        return tape

    def with_residuals(self, replace: Callable[[Residual], Any]) -> "Tape":
        """A copy of this tape whose residuals are ``replace(residual)`` (records copied,
        so this tape is unchanged): for double backward on new values, or saved-value
        hooks that pack and unpack residuals."""
        records = []
        for k, rec in enumerate(self.records):
            new = rec.copy()
            new.saved = tuple(None if s is None else replace(Residual(k, "in", i, v, s))
                              for i, (s, v) in enumerate(zip(rec.saved, rec.in_vars)))
            if rec.out is not None:
                outs = rec.out if rec.prim.multiple_results else (rec.out,)
                outs = tuple(replace(Residual(k, "out", j, v, o))
                             for j, (v, o) in enumerate(zip(rec.out_vars, outs)))
                new.out = outs if rec.prim.multiple_results else outs[0]
            records.append(new)
        return Tape(records, self.var_avals, self.in_vars, self.out_vars, self.out_consts,
                    self._in_tree, self._out_tree, self.name)

    # -- reading -----------------------------------------------------------------------
    def __str__(self) -> str:
        return tape_text(self)

    __repr__ = __str__

    def __len__(self) -> int:
        return len(self.records)

    @property
    def primitives(self) -> list[str]:
        """The primitive names in recording order."""
        return [r.prim.name for r in self.records]

    # -- JAX's names, for code written against what `make_jaxpr` returns ----------------
    @property
    def jaxpr(self) -> "Tape":
        """The tape itself: it stands for both JAX's ClosedJaxpr (what `make_jaxpr`
        returns) and the Jaxpr inside it, so ``make_jaxpr(f)(x).jaxpr`` is this program."""
        return self

    @property
    def invars(self) -> list:
        """JAX's ``jaxpr.invars``: a `Var` per flat input."""
        return [Var(v, self.var_avals[v]) for v in self.in_vars]

    @property
    def outvars(self) -> list:
        """JAX's ``jaxpr.outvars`` (a constant output as a `Literal`)."""
        return [Var(v, self.var_avals[v]) if v >= 0 else Literal(c)
                for v, c in zip(self.out_vars, self.out_consts)]

    # the tape's constants are its records' literal inputs: no constvars
    constvars = consts = literals = property(lambda self: [])

    @property
    def eqns(self) -> list[Record]:
        """The records (JAX's equations: ``primitive``, ``params``, ``in_vars``, ...)."""
        return self.records

    @property
    def in_avals(self) -> list[ShapeDtypeStruct]:
        """Shape and dtype of each flat input."""
        return [ShapeDtypeStruct(*self.var_avals[v]) for v in self.in_vars]

    @property
    def out_avals(self) -> list[ShapeDtypeStruct]:
        """Shape and dtype of each flat output (a constant output's own)."""
        return [ShapeDtypeStruct(*self.var_avals[v]) if v >= 0 else
                ShapeDtypeStruct(*aval_of(c)) for v, c in zip(self.out_vars, self.out_consts)]


def _call_of(rec: Record) -> TraceCall | None:
    """The construct a record stands for (checkpoint, custom rule, jit...), if any."""
    call = rec.params.get("call") if rec.params else None
    return call if isinstance(call, TraceCall) else None


def trace_flat(fun: Callable, primals: Sequence, name: str = "vjp", *,
               keep_all: bool = False, sources: bool = False,
               policy: Callable | None = None, trace: RevTrace | None = None
               ) -> tuple[Tape, list]:
    """Run ``fun(*tracers)`` (flat arrays in, an array or a flat sequence out) under a
    reverse-mode trace; return its `Tape` (inputs: the tape variables 0..n-1) and its
    outputs' primals. ``fun`` may also return ``(outputs, Aux(data))``: the aux data is
    then returned third, its tracers lowered to their primals. ``trace``: a trace of a
    `RevTrace` subclass to run under instead of a new one from the other arguments."""
    if trace is None:
        trace = RevTrace(name, keep_all=keep_all, sources=sources, policy=policy)
    with new_trace(trace):
        tracers = [trace.new_var(p) for p in primals]
        out = fun(*tracers)
    aux = None
    if isinstance(out, tuple) and len(out) == 2 and isinstance(out[1], Aux):
        out, aux = out[0], tree_util.tree_map(trace.primal_of, out[1].data)
    outs = list(out) if isinstance(out, (tuple, list)) else [out]
    out_vars = [trace.var_of(o) for o in outs]
    values = [trace.primal_of(o) for o in outs]
    tape = Tape(trace.records, trace.var_avals, [t._var for t in tracers], out_vars,
                [None if v >= 0 else o for v, o in zip(out_vars, values)], name=name)
    return (tape, values) if aux is None else (tape, values, aux)


class Aux(NamedTuple):
    """Auxiliary data a traced function returns beside its outputs (see `trace_flat`)."""
    data: Any


def make_tape(fun: Callable, *, sources: bool = False) -> Callable[..., Tape]:
    """``make_tape(f)(*args)`` records every primitive ``f`` applies and returns the
    `Tape`. Transforms inside ``f`` show up too: the tape of ``grad(f)`` holds the forward
    and the backward pass, marked as such."""

    def tape_of(*args: Any) -> Tape:
        leaves, in_tree = tree_util.tree_flatten(args)
        out_tree: list = []

        def flat(*xs: Any) -> list:
            out_leaves, tree = tree_util.tree_flatten(fun(*in_tree.unflatten(xs)))
            out_tree.append(tree)
            return out_leaves

        primals = [as_array(np.asarray(x) if isinstance(x, (list, tuple)) else x)
                   for x in leaves]
        tape, _ = trace_flat(flat, primals, "make_tape", keep_all=True, sources=sources)
        tape.in_tree, tape.out_tree = in_tree, out_tree[0]
        tape.name = getattr(fun, "__name__", "tape")
        return tape

    return tape_of
