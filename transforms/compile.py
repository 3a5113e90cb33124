"""From a traced `Tape` to one straight-line Python function calling numpy (or cupy).

`compile_tape` simplifies the records, then writes source code, one line per primitive
call on raw backend arrays (the primitive's implementation, its params bound once)::

    def program(v0, v1):
        v2 = mul_0(v0, v1)
        v3 = add_1(v2, c2, out=v2)   # buffer reuse: v2 is dead after this line
        del v0
        return (v3,)

The passes, in order:
- no-ops: a reshape, transpose, broadcast or cast that does not change its input (as
  backward passes produce), or a transpose undoing a transpose, is dropped, its output
  renamed to the value it gives back;
- common subexpressions: a record repeating an earlier one (same primitive, params and
  inputs, in the same pass: forward and backward are kept apart, so that a checkpoint's
  recomputation is not merged away) reuses the earlier result;
- dead code: records nothing needed depends on are dropped;
- transposed products: a column-major ``matmul_tn`` transposed back is computed
  row-major (`compile_simplify`, where the passes above live too);
- buffers: a value is deleted after its last use, and an elementwise ufunc writes into an
  input buffer whose last use it is (never a program input unless donated, never an
  array another live value may view);
- constants were folded while tracing: an operation on known values runs then, and enters
  the program as a constant;
- elementwise blocks (host programs): a run of ufunc calls on large arrays of one shape
  runs chunk by chunk, its intermediate values in scratch rows
  (`compile_blocks`).
Primitives that communicate (``effectful``) are never dropped or merged. Records with
sub-programs (control flow) are written by their `EMITTERS`; a few small kernels are
written out inline by `INLINE` (the same ufunc calls in the same order, with the
choices the kernel makes at run time made once from the avals), saving a Python call and
its checks per record: tanh's derivative, one per tanh in every backward pass.
"""
from __future__ import annotations

import functools
import math
import re
from typing import Any, Callable, Sequence

import numpy as np

from funcgrad._recursion import room
from funcgrad.array import Array
from . import compile_blocks as blocking
from .compile_simplify import (Step, defined_vars, fold_transposed_products,
                               live_steps, programs_of, simplify)
from .tape import Record, Tape, aval_of

__all__ = ["compile_tape", "Program", "EMITTERS", "Writer"]

# prim name -> emitter(writer, record, input names, output names): records with sub-programs
EMITTERS: dict[str, Callable] = {}
# prim name -> inliner(writer, step, input names, output name, var avals, indent): kernels
# written out as ufunc calls (checked bit for bit against the kernel by the registry tests)
INLINE: dict[str, Callable] = {}
# prim name -> the input position whose dead buffer its inliner may compute in
INLINE_REUSES: dict[str, int] = {}


class Program:
    """A compiled tape: ``fn(*raw inputs) -> list of raw outputs``, and its ``source``.
    ``unread``: the positions of the inputs it never reads (a caller may pass anything
    there, and free what it would have passed: a training step's discarded gradients)."""

    def __init__(self, fn: Callable, source: str, n_records: int,
                 unread: frozenset = frozenset()):
        self.fn = fn
        self.source = source
        self.n_records = n_records
        self.unread = unread

    def as_text(self) -> str:
        return self.source

    def __call__(self, *args: Any) -> Any:
        return self.fn(*args)

    def __repr__(self) -> str:
        return f"<compiled program, {self.n_records} calls>\n{self.source}"


# ---------------------------------------------------------------------------------------
# Writing the source
# ---------------------------------------------------------------------------------------

class Writer:
    """Accumulates the generated source and its globals (implementations, constants)."""

    def __init__(self, blocks: bool = False) -> None:
        self.blocks = blocks  # whether elementwise runs may be blocked (host arrays)
        self.lines: list[str] = []
        self.hoisted: list[str] = []  # top-level functions: sub-programs nested too deep
        self.globals: dict = {"np": np}
        self._names: dict = {}
        self._typed: dict = {}
        self._locals = 0

    def name_of(self, obj: Any, prefix: str) -> str:
        """A global name for ``obj`` (the same object gets the same name)."""
        key = id(obj)
        name = self._names.get(key)
        if name is None:
            name = self._names[key] = f"{prefix}{len(self._names)}"
            self.globals[name] = obj
        return name

    def local(self, prefix: str) -> str:
        """A fresh local name of the generated function (a nested function, a loop
        variable)."""
        self._locals += 1
        return f"_{prefix}{self._locals}"

    def impl(self, rec: Record) -> str:
        """The global name of a record's implementation (its params bound), named after
        the primitive so that the source reads: ``v3 = tanh_2(v2)``."""
        fn = rec.prim.lowering or rec.prim.impl
        if rec.params:
            fn = functools.partial(fn, **rec.params)
        return self.name_of(fn, re.sub(r"\W", "_", rec.prim.name) + "_")

    def const(self, x: Any) -> str:
        if type(x) in (bool, int, float) and np.isfinite(x):
            return repr(x)
        return self.name_of(x._value if type(x) is Array else x, "c")

    def typed_number(self, x: Any, dtype: np.dtype) -> str:
        """The global name of Python number ``x`` as a 0-d array of ``dtype``: the value
        numpy converts a weakly typed number to when it meets an array of that dtype,
        converted once (a ufunc takes a 0-d array operand with a quarter less work than a
        Python number, which it converts on every call)."""
        key = (type(x), repr(x), dtype)  # repr: -0.0 and 0.0 are different constants
        name = self._typed.get(key)
        if name is None:
            name = self._typed[key] = self.name_of(np.asarray(x, dtype), "n")
        return name

    def emit(self, indent: str, line: str) -> None:
        self.lines.append(indent + line)


def _last_uses(steps: list[Step], outputs: list) -> dict:
    """var -> index of the last step reading it (len(steps) for the outputs)."""
    last: dict = {}
    for k, step in enumerate(steps):
        for r in step.ins:
            if r[0] == "v":
                last[r[1]] = k
        for v in step.free:
            last[v] = k
    for r in outputs:
        if r[0] == "v":
            last[r[1]] = len(steps)
    return last


def as_zero_d(raw: Any) -> Any:
    """A numpy scalar as the 0-d array eager funcgrad would hold (numpy's scalar loops
    round differently from its array loops: complex multiply, for one), anything else as
    it is."""
    return np.asarray(raw) if isinstance(raw, np.generic) else raw


def _fresh(step: Step) -> bool:
    """Whether a step's output is a new buffer no other value shares."""
    return step.rec.prim.fresh


# views whose elements may share memory (a broadcast's zero strides, overlapping windows)
# or that numpy makes read-only (a diagonal): never written in place
_UNWRITABLE_VIEWS = frozenset({"broadcast_to", "sliding_windows", "diagonal"})


class _Buffers:
    """Which values share memory (a view and its base), to decide where an output may be
    written in place: into a dead buffer that nothing alive still views."""

    def __init__(self, owned: set):
        self.group: dict = {}      # var -> group id
        self.members: dict = {}    # group id -> vars
        self.owned: dict = {}      # group id -> whether its memory is ours to overwrite
        self.donated = frozenset(owned)  # the program inputs among those
        for v in owned:
            self._new(v, True)

    def _new(self, v: int, owned: bool) -> None:
        self.group[v] = v
        self.members[v] = {v}
        self.owned[v] = owned

    def add_fresh(self, v: int) -> None:
        """``v`` is a new buffer of the program's own."""
        self._new(v, True)

    def add(self, step: Step) -> None:
        """Record a step's outputs: fresh ones own their memory, others may view any
        array input (conservatively, all of them)."""
        if _fresh(step):
            self.add_fresh(step.outs[0])
            return
        viewed = [r[1] for r in step.ins if r[0] == "v" and r[1] in self.group]
        writable = bool(viewed) and step.rec.prim.name not in _UNWRITABLE_VIEWS
        for v in step.outs:  # memory of the viewed inputs: owned where all of theirs is
            self._new(v, writable)
            for u in viewed:
                self._merge(v, u)

    def _merge(self, v: int, u: int) -> None:
        """Put the groups of values ``v`` and ``u`` together (groups are looked up anew:
        an earlier merge of this step may have joined them already)."""
        gv, g = self.group[v], self.group[u]
        if gv == g:
            return
        for m in self.members.pop(gv):
            self.group[m] = g
            self.members[g].add(m)
        self.owned[g] = self.owned[g] and self.owned.pop(gv)

    def reusable(self, v: int, k: int, last: dict) -> bool:
        g = self.group.get(v)
        return (g is not None and self.owned[g]
                and all(last.get(m, -1) <= k for m in self.members[g]))

    def alone(self, v: int, among: list) -> bool:
        """Whether no value in ``among`` but ``v`` itself shares ``v``'s memory."""
        members = self.members[self.group[v]]
        return not any(u != v and u in members for u in among)

    def take(self, v: int, out: int) -> None:
        """``out`` now lives in ``v``'s buffer."""
        g = self.group[v]
        self.group[out] = g
        self.members[g].add(out)


# below this many elements a ufunc's ``out=`` costs more (keyword parsing, checks) than
# the allocation it saves (numpy caches small blocks)
REUSE_MIN_SIZE = 4096


def _reuse_target(step: Step, k: int, var_avals: list, last: dict,
                  buffers: _Buffers, returned: set) -> int | None:
    """An input buffer a ufunc step may write its output into, or None. A result the
    program returns goes into a donated input's buffer whatever its size: a training
    step's update ``w + (-lr) * g``, which its caller would otherwise copy into the
    parameter's memory after the call."""
    if not isinstance(step.rec.prim.impl, np.ufunc) or step.rec.params:
        return None  # only ufuncs take ``out=``
    out_aval = var_avals[step.outs[0]]
    if not out_aval[0]:
        return None  # 0-d results are numpy scalars: nothing to write into
    small = math.prod(out_aval[0]) < REUSE_MIN_SIZE
    only_donated = small and step.outs[0] in returned
    if small and not only_donated:
        return None
    for r in step.ins:
        if r[0] != "v" or var_avals[r[1]] != out_aval or (only_donated and r[1] not in
                                                            buffers.donated):
            continue
        if buffers.reusable(r[1], k, last):
            return r[1]
    return None


def _typed_numbers(w: Writer, step: Step, ins: list, var_avals: list) -> list:
    """``ins`` with a Python number operand of a binary ufunc made a 0-d array of the
    other operand's dtype, where that is the result's dtype (inexact): the same
    conversion numpy makes of the weakly typed number, so the same bits."""
    prim = step.rec.prim
    if (not isinstance(prim.impl, np.ufunc) or prim.impl.nin != 2 or step.rec.params
            or prim.multiple_results):
        return ins
    kinds = [r[0] for r in step.ins]
    if sorted(kinds) != ["c", "v"]:
        return ins
    k = kinds.index("c")
    x, var = step.ins[k][1], step.ins[1 - k][1]
    dtype = var_avals[var][1]
    if (type(x) not in (bool, int, float) or not math.isfinite(x) or abs(x) >= 2**53
            or dtype.kind not in "fc" or var_avals[step.outs[0]][1] != dtype):
        return ins
    with np.errstate(all="ignore"):
        if not np.isfinite(np.asarray(x, dtype)):  # overflows: numpy warns on each call
            return ins
    typed = list(ins)
    typed[k] = w.typed_number(x, dtype)
    return typed


def _aval(ref: tuple, var_avals: list) -> tuple:
    """(shape, dtype) of a step's input, a variable or a constant."""
    if ref[0] == "v":
        return var_avals[ref[1]]
    return aval_of(ref[1])


def _inline_target(step: Step, k: int, var_avals: list, last: dict,
                   buffers: _Buffers) -> int | None:
    """For an `INLINE` kernel: its input (the ``INLINE_REUSES`` position) whose dead
    buffer it may compute in, or None. Not one that another input views: the kernel's
    later calls read that input after the first has written the buffer."""
    position = INLINE_REUSES.get(step.rec.prim.name)
    if position is None or position >= len(step.ins):
        return None
    r = step.ins[position]
    out_aval = var_avals[step.outs[0]]
    if (r[0] != "v" or var_avals[r[1]] != out_aval or math.prod(out_aval[0]) < REUSE_MIN_SIZE
            or not buffers.reusable(r[1], k, last)):
        return None
    others = [o[1] for i, o in enumerate(step.ins) if i != position and o[0] == "v"]
    return r[1] if r[1] not in others and buffers.alone(r[1], others) else None


def _inline_tanh_backward(w: Writer, step: Step, ins: list, out: str, var_avals: list,
                          indent: str, into: str | None = None) -> None:
    """``g * (1 - y*y)`` as `kernels.tanh_backward` computes it: from `REUSE_MIN_SIZE`
    elements in one buffer (``1 - d`` and the product written into ``d``): ``into`` (the
    dead buffer of ``y``) or a fresh one; below it in fresh arrays; ``1`` converted once to
    the dtype of inexact values (see `Writer.typed_number`)."""
    g, y = ins
    g_aval, y_aval = (_aval(r, var_avals) for r in step.ins)
    mul, sub = w.name_of(np.multiply, "multiply"), w.name_of(np.subtract, "subtract")
    one = w.typed_number(1, y_aval[1]) if y_aval[1].kind in "fc" else "1"
    w.emit(indent, f"{out} = {mul}({y}, {y}{'' if into is None else ', out=' + into})")
    if math.prod(y_aval[0]) < REUSE_MIN_SIZE:
        w.emit(indent, f"{out} = {mul}({g}, {sub}({one}, {out}))")
        return
    w.emit(indent, f"{sub}({one}, {out}, out={out})")
    in_place = g_aval == y_aval
    w.emit(indent, f"{out} = {mul}({g}, {out}{', out=' + out if in_place else ''})")


INLINE["tanh_backward"] = _inline_tanh_backward
INLINE_REUSES["tanh_backward"] = 1  # y: read only by the first call


def write_steps(w: Writer, steps: list[Step], outputs: list, var_avals: list,
                owned: set, outer: set, indent: str) -> None:
    """The lines of ``steps``, then ``return`` of ``outputs``. ``owned``: input variables
    whose buffers may be overwritten (donated); ``outer``: variables of an enclosing
    program (read by a nested one), never deleted here."""
    steps, blocks = blocking.schedule(steps, var_avals) if w.blocks else (steps, [])
    _StepWriter(w, steps, blocks, outputs, var_avals, owned, outer, indent).write()


class _StepWriter:
    """`write_steps`' state while it writes: the schedule, each value's last use, the
    buffers that later steps may write into."""

    def __init__(self, w: Writer, steps: list[Step], blocks: list, outputs: list,
                 var_avals: list, owned: set, outer: set, indent: str):
        self.w, self.steps, self.outputs, self.var_avals = w, steps, outputs, var_avals
        self.outer, self.indent = outer, indent
        self.starts = {b.start: b for b in blocks}
        self.last = _last_uses(steps, outputs)
        self.buffers = _Buffers(owned)
        self.returned = {r[1] for r in outputs if r[0] == "v"}

    def write(self) -> None:
        block_end = 0
        for k, step in enumerate(self.steps):
            if k in self.starts:
                block_end = self.write_block(k)
            if k >= block_end:
                self.write_step(k, step)
        self.w.emit(self.indent,
                    "return (" + "".join(self.name(r) + ", " for r in self.outputs) + ")")

    def name(self, r: tuple) -> str:
        return f"v{r[1]}" if r[0] == "v" else self.w.const(r[1])

    def names(self, step: Step) -> list:
        return _typed_numbers(self.w, step, [self.name(r) for r in step.ins], self.var_avals)

    def claim(self, v: int, k: int, candidates: list) -> int | None:
        """A dead input buffer (ours) block value ``v`` made at step ``k`` may take: not
        one that another value the block reads views (a chunk written would change
        that value's other chunks)."""
        buffers = self.buffers
        for u in candidates:
            if (self.var_avals[u] == self.var_avals[v] and buffers.reusable(u, k, self.last)
                    and buffers.alone(u, candidates)):
                buffers.take(u, v)
                return u
        return None

    def write_block(self, k: int) -> int:
        """The block starting at step ``k``, then the deletion of the values that die in
        it; returns the step after it."""
        block, steps, last = self.starts[k], self.steps, self.last
        members = steps[k:block.stop]
        for v in blocking.write_block(self.w, block, steps, [self.names(s) for s in members],
                                      last, self.var_avals, self.claim, self.indent):
            if v not in self.buffers.group:  # not written into a claimed input's buffer
                self.buffers.add_fresh(v)
        made = {v for s in members for v in s.outs}  # the others never exist
        self.delete({r[1] for s in members for r in s.ins if r[0] == "v"
                     and k <= last.get(r[1], -1) < block.stop} - made)
        return block.stop

    def write_step(self, k: int, step: Step) -> None:
        """One step's line(s): a construct's emitter, an inlined scalar operation, an
        effect, or a call (into a dead buffer where one fits)."""
        w, var_avals, indent = self.w, self.var_avals, self.indent
        ins = self.names(step)
        outs = [f"v{v}" for v in step.outs]
        emitter = EMITTERS.get(step.rec.prim.name) if programs_of(step.rec) else None
        inliner = INLINE.get(step.rec.prim.name)
        target = None
        if emitter is not None:
            emitter(w, step, ins, outs, indent)
        elif inliner is not None and var_avals[step.outs[0]][0]:  # 0-d: numpy scalars
            target = _inline_target(step, k, var_avals, self.last, self.buffers)
            inliner(w, step, ins, outs[0], var_avals, indent,
                    None if target is None else f"v{target}")
        elif not step.outs:  # a call for its effect alone (debug_callback)
            w.emit(indent, f"{w.impl(step.rec)}({', '.join(ins)})")
        else:
            target = _reuse_target(step, k, var_avals, self.last, self.buffers,
                                   self.returned)
            self.write_call(step, ins, outs, target)
        if target is None:
            self.buffers.add(step)
        else:
            self.buffers.take(target, step.outs[0])
        self.delete({r[1] for r in step.ins if r[0] == "v" and self.last.get(r[1]) == k}
                    - set(step.outs))

    def write_call(self, step: Step, ins: list, outs: list, target: int | None) -> None:
        w, indent = self.w, self.indent
        call = f"{w.impl(step.rec)}({', '.join(ins)}"
        if target is not None:
            call += f", out=v{target}"
        lhs = outs[0] if not step.rec.prim.multiple_results else (
            ", ".join(outs) + ("," if len(outs) == 1 else ""))
        w.emit(indent, f"{lhs} = {call})")
        for v in step.outs:
            if not self.var_avals[v][0]:  # 0-d: a numpy scalar becomes a 0-d array
                w.emit(indent, f"v{v} = {w.name_of(as_zero_d, 'as0d')}(v{v})")

    def delete(self, dead: set) -> None:
        """``del`` the values that die here (not the enclosing program's)."""
        dead = sorted(dead - self.outer)
        if dead:
            self.w.emit(self.indent, "del " + ", ".join(f"v{v}" for v in dead))


# Python's parser allows 100 levels of indentation: a sub-program nested deeper than this
# (100 nested conds) is written at the top level, the enclosing variables it reads bound
_HOIST_INDENT = 4 * 48


def write_function(w: Writer, sub: Tape, alias: dict, indent: str) -> str:
    """Write ``sub`` as a function nested in the program being written (it reads the
    enclosing program's variables it uses as closures); return its name."""
    name = w.local("program")
    inner = dict(alias)
    steps = simplify(sub.records, sub.var_avals, inner)
    outputs = [inner.get(v, ("v", v)) if v >= 0 else ("c", c)
               for v, c in zip(sub.out_vars, sub.out_consts)]
    steps = fold_transposed_products(live_steps(steps, outputs), outputs)
    own = defined_vars(sub)
    outer = ({r[1] for s in steps for r in s.ins if r[0] == "v"} | {
        r[1] for r in outputs if r[0] == "v"} | {v for s in steps for v in s.free}) - own
    params = [f"v{v}" for v in sub.in_vars]
    if len(indent) < _HOIST_INDENT:
        w.emit(indent, f"def {name}({', '.join(params)}):")
        with room():  # (one step of the recursion through nested programs)
            write_steps(w, steps, outputs, sub.var_avals, set(), outer, indent + "    ")
        return name
    bound = [f"v{v}" for v in sorted(outer)]
    enclosing, w.lines = w.lines, []
    w.emit("", f"def {name}_top({', '.join(bound + params)}):")
    with room():
        write_steps(w, steps, outputs, sub.var_avals, set(), outer, "    ")
    w.hoisted.extend(w.lines)
    w.lines = enclosing
    w.emit(indent, f"{name} = {w.name_of(functools.partial, 'partial')}({name}_top"
                   f"{''.join(', ' + v for v in bound)})")
    return name


def _moves_devices(tape: Tape) -> bool:
    """Whether the program (or a sub-program) puts values on a device: its values after
    that may not be host arrays, which blocks' scratch rows are."""
    return any(r.prim.name == "device_put" or any(_moves_devices(p) for p in programs_of(r))
               for r in tape.records)


def compile_tape(tape: Tape, weak_vars: set = frozenset(), donated: Sequence[int] = (),
                 blocks: bool = False) -> Program:
    """The tape as a compiled `Program` taking the raw values of its inputs (Python
    numbers for ``weak_vars``) and returning those of its outputs. Inputs at the positions
    ``donated`` may have their buffers reused. ``blocks``: the inputs are host (numpy)
    arrays, so that runs of elementwise calls on large arrays may run chunk by chunk
    (`compile_blocks`)."""
    alias: dict = {}
    steps = simplify(tape.records, tape.var_avals, alias)
    outputs = [alias.get(v, ("v", v)) if v >= 0 else ("c", c)
               for v, c in zip(tape.out_vars, tape.out_consts)]
    steps = fold_transposed_products(live_steps(steps, outputs), outputs)
    w = Writer(blocks and not _moves_devices(tape))
    params = [f"v{v}" for v in tape.in_vars]
    w.emit("", f"def program({', '.join(params)}):")
    donated_vars = {tape.in_vars[k] for k in donated} - set(weak_vars)
    write_steps(w, steps, outputs, tape.var_avals, donated_vars, set(), "    ")
    source = "\n".join(w.hoisted + w.lines) + "\n"
    namespace = dict(w.globals)
    exec(compile(source, f"<jit {tape.name}>", "exec"), namespace)
    read = {r[1] for s in steps for r in s.ins if r[0] == "v"} | {
        v for s in steps for v in s.free} | {r[1] for r in outputs if r[0] == "v"}
    unread = frozenset(k for k, v in enumerate(tape.in_vars) if v not in read)
    return Program(namespace["program"], source, len(steps), unread)
