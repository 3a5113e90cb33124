"""`OpNode`, the node that differentiates a facade op, and `PrimNode`, that of an op that
is one primitive call (`funcgrad.torch._dispatch` records both).

An `OpNode` keeps the op's `Tape`: backward is the tape's backward pass, so every
derivative comes from the primitive registry's rules. The tape says exactly which values
the rules read (`Tape.residuals`): those that are the op's tensor inputs or outputs become
the node's saved tensors, version-checked on use and freed after backward.

Double backward (``create_graph=True``) records the backward of a node as a new facade op
on tensors, so it gets a node of its own:
- "replay": when every traced residual is an input or output of the op, the backward op
  re-runs the tape's rules on the residual tensors and the incoming gradient;
- "recompute": when a rule reads an intermediate of a composite op (softmax, mean...),
  the node also holds the op's input arrays and the backward op is
  ``(inputs, grad) -> vjp(f, *inputs)[1](grad)``, traced afresh.
Either way the rules are funcgrad ops, differentiable again.
"""
from __future__ import annotations

from typing import Any, Callable, Sequence

import numpy as np

import funcgrad
import funcgrad.numpy as fnp
from funcgrad.array import Array, buffer_of, zeros_on
from funcgrad.core import is_inexact
from funcgrad.transforms.tape import Residual, Tape, trace_flat
from funcgrad.transforms.tape_call import CallTape, call_cotangents
from funcgrad.torch._runtime import storage as _storage
from funcgrad.torch._tensor import Tensor, as_array, make, proxy
from funcgrad.torch import _saved_hooks as graph, _saved_tensors as saved
from funcgrad.torch._saved_variables import declared
from funcgrad.torch._runtime.node import FREED_ERROR, Node, SavedRef

__all__ = ["OpNode", "PrimNode", "zeros_of", "pull_back", "trace_op",
           "INFERENCE_ERROR"]

INFERENCE_ERROR = ("Inference tensors cannot be saved for backward. To work around you can "
                   "make a clone to get a normal tensor and use it in autograd.")


def zeros_of(meta: tuple) -> Any:
    shape, dtype, device = meta
    z = fnp.zeros(shape, dtype)
    return z if device == "cpu" else funcgrad.device_put(z, device)


def pull_back(tape: Tape, cotangents: Sequence) -> list:
    """The cotangents of a tape's inputs, with zeros (on the cotangents' device) for the
    inputs the outputs do not depend on."""
    cts = tape.backward(cotangents)
    for c in cts:
        if c is None:
            return _with_zeros(tape, cts, cotangents)
    # (tested by identity: ``None in cts`` would call each array's __eq__)
    return cts


def _with_zeros(tape: Tape, cts: list, cotangents: Sequence) -> list:
    """`pull_back`'s input cotangents ``cts`` with zeros for the ``None`` ones."""
    device = next(c.device for c in cotangents if c is not None)
    return [zeros_on(*tape.var_avals[v], device) if c is None else c
            for c, v in zip(cts, tape.in_vars)]


def trace_op(fn: Callable, primals: Sequence) -> tuple[Tape, tuple]:
    """Run ``fn(*primals)`` under a reverse-mode trace: (its tape, its outputs)."""
    tape, values = trace_flat(lambda *xs: fn(*xs), primals, "funcgrad.torch")
    return tape, tuple(values)


def _conj(x: Any) -> Any:
    return fnp.conj(x) if np.issubdtype(x.dtype, np.complexfloating) else x


def _conj_cotangents(backward_op: Callable, n_residuals: int) -> Callable:
    def converted(*args: Any) -> tuple:
        cts = [_conj(c) for c in args[n_residuals:]]
        return tuple(_conj(r) for r in backward_op(*args[:n_residuals], *cts))
    return converted


class OpNode(Node):
    """The node of a facade op: its backward is the vjp of the op's funcgrad function."""

    __slots__ = ("_tape", "_fn", "_datas", "_diff", "_multi", "_held_refs", "_has_saved",
                 "_replay", "_packed", "_complex")

    def __init__(self, edges: tuple, meta: list, is_complex: bool, tape: Tape,
                 f: Callable | None, datas: list | None, diff: list, multi: bool):
        Node.__init__(self, edges, None, meta)
        self._tape = tape
        self._fn = f
        self._datas = datas
        self._diff = diff
        self._multi = multi
        self._held_refs: tuple = ()
        self._packed = None
        # PyTorch's gradients differ from funcgrad's cotangents where a differentiated input
        # or an output is complex
        self._complex = is_complex
        self._replay = True  # until the tape shows a residual that is not an input/output

    def _source(self, v: int) -> tuple | None:
        """("in", input position) or ("out", output number) of a tape variable (None: an
        intermediate of a composite op). The tape's variables 0..n-1 are the
        differentiated inputs, in order."""
        diff = self._diff
        if v < len(diff):
            return ("in", diff[v])
        k = self._output_nr(v)
        return None if k is None else ("out", k)

    def _traced_slots(self, inputs: Sequence, outs: list) -> tuple:
        """Read the tape's residuals: which tensors the rules will read (input positions
        and output numbers, to version-check them: the op's inputs and outputs, and the
        tensors whose memory a saved intermediate views, as ``w.t()`` inside ``linear``),
        whether the rules read anything, and whether every traced residual is an op
        input or output (replay) or not."""
        sources = None  # array or memory owner -> ("in", i) / ("out", k)
        saved: dict = {"in": set(), "out": set()}
        has_saved = False
        for r in self._tape.residuals():
            has_saved = True
            source = self._source(r.var) if r.var >= 0 else None
            if source is None:
                if r.var >= 0:
                    self._replay = False
                if sources is None:
                    sources = _sources(inputs, outs)
                source = sources.get(id(r.value))
                raw = _storage.raw_of(r.value)
                if source is None and raw is not None:
                    source = sources.get(id(_storage.owner(raw)))
            if source is not None:
                saved[source[0]].add(source[1])
        return sorted(saved["in"]), sorted(saved["out"]), has_saved

    def _keep_saved(self, inputs: Sequence, outs: list, target: Tensor | None,
                    saved_in: Sequence, saved_out: Sequence, has_saved: bool) -> None:
        """Hold what the rules read: version-checked refs of the saved input and output
        tensors (and packed copies under saved-tensor hooks)."""
        self._has_saved = has_saved
        if self._replay:
            self._datas = self._fn = None  # the residuals are all the backward needs
        if target is not None and has_saved:
            self._snapshot_old_value(target, outs[0])
        refs = []
        for i in saved_in:
            if target is not None and i == 0:
                continue  # the in-place target's old value: snapshotted above
            if inputs[i]._inference:
                raise RuntimeError(INFERENCE_ERROR)
            # no cycle: inputs never point back
            refs.append(SavedRef(inputs[i], position=i))
        for k in saved_out:
            if target is not None:
                refs.append(SavedRef(target, is_output=True, output_nr=k,
                                     version=target._vc.v + 1, keep=False))
            else:
                refs.append(SavedRef(outs[k], is_output=True, output_nr=k, keep=False))
        # tuples, not lists: the garbage collector stops tracking a tuple of untracked
        # values, and stops visiting the graph's small containers, which live until backward
        self._held_refs = tuple(refs)
        if graph.open_hooks.open and graph.current_hooks() is not None:
            self._pack_under_hooks(inputs, outs, saved_in, target)

    def _pack_under_hooks(self, inputs: Sequence, outs: list, saved_in: Sequence,
                          target: Tensor | None = None) -> None:
        """Pack, with the saved-tensor hooks in force, the tensors PyTorch's formula for
        this node saves (`funcgrad.torch._saved_variables`), or where it has no row (and
        for in-place ops) the tape's residuals."""
        hooks = graph.current_hooks()
        saved = None if target is not None else declared(self.name(), inputs, outs[0],
                                                           self._diff)
        if saved is not None:
            self._tape, packed = graph.pack_declared(self._tape, hooks, saved)
        elif self._has_saved:
            known = {id(inputs[i]._a): inputs[i] for i in saved_in
                     if i < len(inputs) and isinstance(inputs[i], Tensor)}
            known.update({id(t._a): t for t in outs})
            self._tape, packed = graph.pack_tape(self._tape, hooks, known)
        else:
            return
        self._packed = [packed]

    def _snapshot_old_value(self, target: Tensor, result: Tensor) -> None:
        """The rules of an in-place op read the target's old value (or views of it),
        which the write into its memory is about to replace: they get copies. The new
        value they read is the target's memory after the write (version-checked)."""
        old = target._a
        if type(old) is not Array:
            return  # a traced value: nothing will be written
        memory = _storage.owner(buffer_of(old))
        new = result._a
        copies: dict = {}

        def replace(r: Residual) -> Any:
            v = r.value
            if v is new:
                return old
            raw = _storage.raw_of(v)
            if raw is None or _storage.owner(raw) is not memory:
                return v
            if id(v) not in copies:
                copies[id(v)] = _storage.snapshot(v)
            return copies[id(v)]
        self._tape = self._tape.with_residuals(replace)
        if self._datas is not None:
            self._datas = [_storage.snapshot(d) if d is old else d for d in self._datas]

    def _output_nr(self, v: int) -> int | None:
        """Which output of the op tape variable ``v`` is (the last, if it is several)."""
        out_vars = self._tape.out_vars
        for k in range(len(out_vars) - 1, -1, -1):
            if out_vars[k] == v:
                return k
        return None

    def saved_refs(self) -> list:
        return list(self._held_refs)

    def unpacked_tape(self) -> Tape:
        """The tape, its residuals packed by saved-tensor hooks unpacked."""
        return self._tape if self._packed is None else graph.unpacked(self._tape,
                                                                        self._packed)

    def is_released(self) -> bool:
        return self._tape is None

    def pack_saved(self, array: Any, tensor: Tensor, hooks: tuple) -> bool:
        """Pack the residual ``array`` (the value of ``tensor``) with ``hooks`` (a saved
        tensor's ``register_hooks``); False if it is packed already."""
        tape, packed = graph.pack_tape(self._tape, hooks, {id(array): tensor}, only=id(array))
        if not packed[1]:
            return False
        self._tape = tape
        self._packed = (self._packed or []) + [packed]
        return True

    def unpack_saved(self, array: Any) -> Tensor | None:
        """The unpack hook's tensor for residual ``array``, if hooks packed it."""
        for unpack, packed in self._packed or ():
            for key, value in packed.items():
                if key == id(array):
                    return unpack(value)
        return None

    def __dir__(self) -> list:
        own = [n for n in super().__dir__() if not n.startswith(("_saved_", "_raw_saved_"))]
        return sorted(set(own) | set(saved.attribute_names(self)))

    def saved_arrays(self) -> list:
        """The arrays this node keeps for its backward (for memory reports)."""
        found = [] if self._tape is None else [
            r.value for r in self._tape.residuals() if hasattr(r.value, "nbytes")]
        return found + [d for d in self._datas or () if hasattr(d, "nbytes")]

    def release(self) -> None:
        if self._has_saved:
            self._tape = None
            self._datas = None
            self._packed = None
            self._held_refs = ()  # the saved input tensors go now, as PyTorch frees them

    takes_arrays = True

    def apply(self, grads: list, create_graph: bool) -> list:
        if not create_graph:
            return [None if r is None else make(r) for r in self.apply_arrays(grads)]
        self._check_saved()
        out: list = [None] * len(self._next)
        if any(g is not None for g in grads):
            for i, r in zip(self._diff, self._apply_graph(grads)):
                out[i] = r
        return out

    def _check_saved(self) -> None:
        """PyTorch's errors for saved values that were freed or written in place since."""
        if self._tape is None:
            raise RuntimeError(FREED_ERROR)
        for s in self._held_refs:
            if s.vc.v != s.version:
                s.check(self)  # raises PyTorch's in-place error

    def apply_arrays(self, grads: list) -> list:
        """The tape's rules on the saved values, from the gradients as funcgrad arrays of
        the outputs' dtypes."""
        self._check_saved()
        out: list = [None] * len(self._next)
        cts = []
        given = missing = False
        for g, meta in zip(grads, self._meta):
            if g is None:
                cts.append(None)
                missing = True
            else:
                given = True
                c = as_array(g)
                dtype = meta[1]
                cts.append(c if c.dtype is dtype or c.dtype == dtype else fnp.astype(c, dtype))
        if not given:
            return out
        if missing:
            cts = [zeros_of(m) if c is None else c for c, m in zip(cts, self._meta)]
        tape = self._tape if self._packed is None else self.unpacked_tape()
        if self._complex:  # PyTorch's gradients are the conjugates of funcgrad's cotangents
            for i, r in zip(self._diff, pull_back(tape, [_conj(c) for c in cts])):
                out[i] = _conj(r)
        else:
            for i, r in zip(self._diff, pull_back(tape, cts)):
                out[i] = r
        return out

    def _apply_graph(self, grads: list) -> Sequence:
        """The backward of this node as a recorded facade op (for create_graph)."""
        grads = [g if g is not None else make(zeros_of(m)) for g, m in zip(grads, self._meta)]
        name = self.name() + "Backward"
        tape = self.unpacked_tape()
        if self._replay:
            slots = sorted({self._source(r.var) for r in tape.residuals() if r.var >= 0})
            args = [proxy(_residual_value(tape, self._source, key),
                          self._next[key[1]] if key[0] == "in" else (self, key[1]))
                    for key in slots] + grads
            fn, n = _replay_fn(tape, self._source, slots), len(slots)
        else:
            args = [proxy(self._datas[i], self._next[i]) for i in self._diff] + grads
            fn, n = self._recompute_fn(), len(self._diff)
        if self._complex:
            fn = _conj_cotangents(fn, n)
        from funcgrad.torch._dispatch import apply  # the dispatcher imports this module
        return apply(name, fn, args, multi=True)

    def _recompute_fn(self) -> Callable:
        """(inputs, grads) -> input cotangents, differentiating the op again from its
        inputs: the backward of a composite op whose rules read intermediates."""
        f, datas, diff, multi = self._fn, list(self._datas), self._diff, self._multi
        n = len(diff)

        def g(*d: Any) -> Any:
            full = list(datas)
            for i, v in zip(diff, d):
                full[i] = v
            out = f(*full)
            return tuple([o for o in out if is_inexact(o.dtype)]) if multi else out

        def backward_op(*args: Any) -> tuple:
            tape, _ = trace_op(g, args[:n])
            return tuple(pull_back(tape, list(args[n:])))
        return backward_op


saved.install(OpNode)


def _sources(inputs: Sequence, outs: list) -> dict:
    """The tensor inputs' and outputs' arrays, and the owners of their memory, by id ->
    ("in", position) or ("out", output number): which tensor a saved value is or views
    (inputs first: an output viewing an input shares its version counter anyway)."""
    found: dict = {}
    tensors = [(("in", i), x) for i, x in enumerate(inputs) if isinstance(x, Tensor)]
    for source, t in tensors + [(("out", k), t) for k, t in enumerate(outs)]:
        found.setdefault(id(t._a), source)
        raw = _storage.raw_of(t._a)
        if raw is not None:
            found.setdefault(id(_storage.owner(raw)), source)
    return found


def _residual_value(tape: Tape, source: Callable, key: tuple) -> Any:
    """The value the tape keeps for op input or output ``key`` (("in", i) or ("out", k))."""
    return next(r.value for r in tape.residuals() if r.var >= 0 and source(r.var) == key)


def _replay_fn(tape: Tape, source: Callable, slots: list) -> Callable:
    """(residual tensors' arrays..., grads...) -> input cotangents: the tape's rules on new
    residual values, so that an outer trace records the backward (double backward)."""
    n_res = len(slots)

    def backward_op(*args: Any) -> tuple:
        values = dict(zip(slots, args[:n_res]))

        def replace(r: Residual) -> Any:
            return r.value if r.var < 0 else values[source(r.var)]
        return tuple(pull_back(tape.with_residuals(replace), list(args[n_res:])))
    return backward_op


class PrimNode(OpNode):
    """The node of an op that is one primitive call on the op's own arrays (a `PrimCall`):
    its tape is that call's one record (``_rec``, from `record_call`, with ``_avals``,
    the (shape, dtype) of its differentiated inputs), whose `CallTape` is made only when
    something asks for the node's tape (hooks, double backward, ``_saved_*``): most nodes
    only run the record's rules once. The record's residuals are the op's input and output
    tensors (or constants), so it replays them for double backward and says directly which
    tensors to version-check. Its nodes are made by `_record_primitive` (`setup`, fields
    filled in there), not by calling the class; ``_avals`` is None once released."""

    __slots__ = ("_rec", "_avals")

    @property
    def _tape(self) -> Tape | None:
        try:
            tape = _TAPE_SLOT.__get__(self)
        except AttributeError:  # not made yet
            tape = None
        if tape is None and self._avals is not None:
            rec = self._rec
            shape, dtype, _ = self._meta[0]
            tape = CallTape.of(rec, self._avals, (shape, dtype), self._diff, self._complex,
                               self.name() if rec is None else rec.prim.name)
            _TAPE_SLOT.__set__(self, tape)
        return tape

    @_tape.setter
    def _tape(self, tape: Tape | None) -> None:
        _TAPE_SLOT.__set__(self, tape)
        if tape is None:  # released
            self._rec = self._avals = None

    def is_released(self) -> bool:
        return self._avals is None

    def release(self) -> None:
        if self._has_saved:  # (`OpNode.release` without the tape's setter: once per node)
            _TAPE_SLOT.__set__(self, None)
            self._rec = self._avals = self._packed = None
            self._held_refs = ()

    # ``_held_refs``: per saved tensor, flat, (the tensor or a weak reference to the saved
    # output, its version counter, its version, its position (-1: the output), its array)
    # (`_record_primitive`), rather than one `SavedRef` made per op

    def saved_refs(self) -> list:
        held = self._held_refs
        return [SavedRef.restored(*held[k:k + 5]) for k in range(0, len(held), 5)]

    def _check_saved(self) -> None:
        if self._avals is None:
            raise RuntimeError(FREED_ERROR)
        held = self._held_refs
        for k in range(1, len(held), 5):
            if held[k].v != held[k + 1]:
                SavedRef.restored(*held[k - 1:k + 4]).check(self)

    def apply_arrays(self, grads: list) -> list:
        """`OpNode.apply_arrays` for the one output of a primitive call, written out for
        the common case (a real gradient of the output's dtype, nothing packed)."""
        avals = self._avals
        g = grads[0]
        if self._complex or self._packed is not None or avals is None or g is None:
            return OpNode.apply_arrays(self, grads)
        held = self._held_refs
        if held:  # (`_check_saved`'s loop, written out: once per node)
            for k in range(1, len(held), 5):
                if held[k].v != held[k + 1]:
                    self._check_saved()  # raises PyTorch's in-place error
        if type(g) is not Array:
            g = as_array(g)
        dtype = self._meta[0][1]
        if g.dtype is not dtype and g.dtype != dtype:
            g = fnp.astype(g, dtype)
        rec = self._rec
        if rec is None:  # a primitive without derivative rules: nothing flows back
            return OpNode.apply_arrays(self, grads)
        cts = call_cotangents(rec, g, avals)  # (`pull_back`, written out: once per node)
        for c in cts:
            if c is None:
                cts = _with_zeros(self._tape, cts, (g,))
                break
        if len(cts) == len(self._next):  # every argument differentiated, in order
            return cts
        out: list = [None] * len(self._next)
        for i, r in zip(self._diff, cts):
            out[i] = r
        return out


_TAPE_SLOT = OpNode._tape  # the slot holding a `PrimNode`'s tape once made
