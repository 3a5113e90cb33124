"""The cached call of a compiled training step (`_compiled_step`): its guard and its
write-back.

Finding a step's state (the modules, tensors and optimizers its function reads, the
parameters, gradients and optimizer state they hold, the signature Python decided on)
walks objects and builds tables, which costs more than the program of a small step. As
PyTorch's compiler guards a compiled frame, a `Replay` keeps what the last call found and
only checks that nothing it was found from has changed: the walk records every read it
makes into `Probes` (an expression per read: a closure cell's contents, a global, an
attribute, the entries of a dict...), which become one generated function returning what
each read gives now (identities, a type where only the type mattered, hyper-parameter
values). The call is replayed when that list equals the one taken when the replay was made
(the objects behind the identities are kept alive, so an identity cannot be reused);
otherwise the step's state is found again, as on a first call.

A replayed call reads the arrays, runs the compiled program on them directly (the
parameters' memory donated where it may be written), and gives the new values back as
the first call did (`Replay.write_back`): in place, with each tensor's version counter
moved as far as the traced step moved it (the eager step's in-place updates). A gradient
the step discards unread (``zero_grad()`` first, then ``backward()`` makes a new one) is
dropped before the program runs, as the eager step's ``zero_grad()`` drops it: its memory
is free for the new gradients, instead of the old and the new ones both being held (at
the MLP benchmark's sizes, that costs a fresh allocation per gradient and ~4% of a step).
"""
from __future__ import annotations

import functools
import operator
from typing import Any, Callable

import numpy as np

from funcgrad import tree_util
from funcgrad.array import Array, buffer_of, new_array
from funcgrad.torch._runtime import storage as _storage
from funcgrad.torch._tensor import array_of, borrowing, grad_of, make
from funcgrad.torch._runtime import grad_mode

__all__ = ["Probes", "Replay", "MISS", "owner_id"]

MISS = object()  # a call the replay does not cover: the step's state is found again
_MISSING = object()  # what a probe reads where there is nothing


def _contents(cell: Any) -> Any:
    try:
        return cell.cell_contents
    except ValueError:  # an empty cell
        return _MISSING


_HELPERS = {"M": _MISSING, "E": {}, "C": _contents, "A": array_of, "G": grad_of,
            "GM": grad_mode.state, "NONE": functools.partial(operator.is_, None),
            "RG": operator.attrgetter("requires_grad")}


class Probes:
    """The reads a step's state was found from, as expressions over the objects read
    (`obj`): ``same`` (which object it gives), ``kind`` (only its type mattered),
    ``equal`` (its value), ``ids`` (which objects each of the expressions iterates over,
    in order: a list's elements, a dict's keys). Besides ``helpers``, the expressions
    may use ``M`` (what a missing entry reads as), ``E`` (an empty dict), ``C`` (a
    cell's contents, M if empty), ``A`` and ``G`` (a tensor's array and gradient),
    ``RG`` (whether it requires grad), ``NONE`` (is None), ``GM`` (grad mode)."""

    def __init__(self, **helpers: Any):
        self.objs: list = []
        self._names: dict = {}
        self._exprs: list = []
        self._helpers = dict(_HELPERS, **helpers)

    def obj(self, o: Any) -> str:
        """The name of object ``o`` in the expressions."""
        name = self._names.get(id(o))
        if name is None:
            name = self._names[id(o)] = f"o{len(self.objs)}"
            self.objs.append(o)
        return name

    def same(self, src: str) -> None:
        self._exprs.append((f"id({src})", src))

    def kind(self, src: str) -> None:
        self._exprs.append((f"id(type({src}))", f"type({src})"))

    def equal(self, src: str) -> None:
        self._exprs.append((src, None))

    def ids(self, *srcs: str) -> None:
        self._exprs.append(("(" + ", -1, ".join(f"*map(id, {s})" for s in srcs) + ",)",
                            "(" + ", ".join(f"*{s}" for s in srcs) + ",)"))

    def guard(self) -> Callable[[], bool]:
        """A function telling whether every read gives what it gives now: one generated
        function, the objects read its globals, comparing the list of what the reads give
        with the list they gave here (a read that fails, as of an emptied cell, is a
        change)."""
        reads = f"[{', '.join(e for e, _ in self._exprs)}]"
        source = (f"def snapshot():\n    return {reads}\n"
                  f"def kept():\n    return [{', '.join(k for _, k in self._exprs if k)}]\n"
                  f"def unchanged():\n    try:\n        return {reads} == EXPECTED\n"
                  f"    except Exception:\n        return False\n")
        namespace = dict(self._helpers, **dict(zip(self._names.values(), self.objs)))
        exec(compile(source, "<step guard>", "exec"), namespace)
        namespace["EXPECTED"] = namespace["snapshot"]()
        unchanged = namespace["unchanged"]
        unchanged.kept = namespace["kept"]()  # (the identities in EXPECTED stay theirs)
        return unchanged


class Replay:
    """A compiled step's call for one state (its `_Layout`, the signature's program):
    ``run`` checks the guard and the arguments, runs the program, writes back.

    ``plan``: what the trace found the step does (`_compiled_step._collect`);
    ``program``: the compiled function of the raw arrays; ``donated``: whether it may
    write into the tensors' memory (the call's arrays were `_donatable`)."""

    owners: set  # the ids of the owners of the tensors' and state tensors' memory

    def __init__(self, guard: Callable[[], bool], layout: Any, plan: tuple,
                 program: Any, donated: bool, args: tuple):
        self.guard, self.layout, self.plan = guard, layout, plan
        self.program = None if program is None else program.fn
        self.donated = donated
        self.arg_types = tuple(map(type, args))
        self.arg_avals = tuple((a.shape, a.dtype) for a in map(array_of, args))
        self.raws = [buffer_of(a) for a in map(array_of, layout.tensors)]
        self.with_grad = [t for t, g in zip(layout.tensors, layout.grads) if g is not None]
        positions = iter(range(len(self.with_grad)))  # tensor -> its gradient's, in those
        self.grad_at = [None if g is None else next(positions) for g in layout.grads]
        self.grad_avals = [(a.shape, a.dtype) for a in
                           (array_of(g) for g in layout.grads if g is not None)]
        self.entry_raws = [buffer_of(array_of(v)) for _, _, v in layout.entries]
        self.owners = {id(_storage.owner(r)) for r in self.raws + self.entry_raws}
        # the gradients the program never reads and the step does not keep: dropped
        # before it runs (None passed in their place; the guard checked that they exist,
        # which is all the signature says of them); the others are read and checked
        n = len(self.raws)
        kinds = [kind for (kind, _, _), g in zip(plan[2], layout.grads) if g is not None]
        unread = frozenset() if program is None else program.unread
        dropped = [n + k in unread and kind != "same" for k, kind in enumerate(kinds)]
        self.dropped = [t for t, d in zip(self.with_grad, dropped) if d]
        self.read_grads = [(k, t, aval) for k, (t, aval, d) in enumerate(zip(
            self.with_grad, self.grad_avals, dropped)) if not d]
        self._plan_writes()

    def run(self, args: tuple, kwargs: dict) -> Any:
        """The call's results, or `MISS` where this replay does not cover the call."""
        if kwargs or len(args) != len(self.arg_types) or not self.guard():
            return MISS
        leaves = []
        for a, kind, aval in zip(args, self.arg_types, self.arg_avals):
            if type(a) is not kind or a.requires_grad:
                return MISS
            leaves.append(_raw_of_aval(array_of(a), aval))
        grads: list = [None] * len(self.with_grad)
        others = []
        for k, t, aval in self.read_grads:
            grads[k] = raw = _raw_of_aval(array_of(grad_of(t)), aval)
            others.append(raw)
        others += leaves
        taken = set(self.owners)  # (the guard has seen these: only their write flag can
        if others:  # change; `_donatable` for the others)
            if any(r is None for r in others):
                return MISS
            taken.update(map(owner_id, others))
        if self.donated and (len(taken) != len(self.owners) + len(others)
                             or not all(map(_WRITEABLE, self.raws))):
            return MISS
        for t in self.dropped:  # (write_back gives them their new values)
            t._set_grad(None)
        outs = self.program(*self.raws, *grads, *self.entry_raws, *leaves)
        return self.write_back(list(outs), grads, taken)

    def _plan_writes(self) -> None:
        """What `write_back` does, by output position: the memory each output is meant
        for (the target, where the program may have written it already), which outputs
        are "same" gradients (their memory is the call's), what each output goes to."""
        out_tree, tensor_plan, grad_plan, entry_plan = self.plan
        self.n_out = out_tree.num_leaves
        self.single = tree_util.treedef_is_leaf(out_tree) and self.n_out == 1
        targets = [None] * self.n_out + list(self.raws)
        self.same_grads = []  # (output position, the gradient's position in the call's)
        self.tensor_writes = []  # (output position, tensor, its memory, changed, moved)
        for k, (t, raw, (changed, moved)) in enumerate(zip(self.layout.tensors, self.raws,
                                                            tensor_plan)):
            if changed or moved:
                self.tensor_writes.append((self.n_out + k, t, raw, changed, moved))
        self.grad_writes = []  # (output position or None, tensor, kind, changed, moved)
        for t, (kind, changed, moved), at in zip(self.layout.tensors, grad_plan,
                                                 self.grad_at):
            if kind is None:
                if at is not None:  # (it had one before the call; else it stays None)
                    self.grad_writes.append((None, t, None, False, 0))
                continue
            if kind == "same":
                self.same_grads.append((len(targets), at))
            self.grad_writes.append((len(targets), t, kind, changed, moved))
            targets.append(None)
        self.entry_writes = []  # (output position, optimizer, param position, key, k...)
        for (i, p, key, k, changed, moved) in entry_plan:
            self.entry_writes.append((len(targets), i, p, key, k, changed, moved))
            targets.append(self.entry_raws[k] if k is not None else None)
        self.targets = targets

    def write_back(self, outs: list, grads: list, taken: set) -> Any:
        """Give the call's new values (raw arrays: the results', the tensors', the
        gradients', the state tensors') to the step's results, tensors, gradients and
        optimizer state; first each value that shares memory with an input or another
        value gets a copy (a tensor left unchanged comes back as its own memory, and a
        donated parameter's buffer may hold its new value). ``grads``: the raw arrays of
        the gradients the call read; ``taken``: the ids of the owners of all its inputs'
        memory (`owner_id`), which this takes."""
        targets = self.targets
        if self.same_grads:
            targets = list(targets)
            for k, at in self.same_grads:
                targets[k] = grads[at]
        owner_of = _storage.owner
        for k, (value, target) in enumerate(zip(outs, targets)):
            if value is target or not isinstance(value, np.ndarray):
                continue
            owner = id(value) if value.base is None else id(owner_of(value))  # (owner_id)
            if owner in taken:
                outs[k] = buffer_of(_storage.snapshot(new_array(value)))
            else:
                taken.add(owner)
        donated = self.donated
        for k, t, raw, changed, moved in self.tensor_writes:
            if outs[k] is raw:  # (the program wrote it there: only the version moves)
                t._bump_version(moved)
            else:
                _give(t, raw, outs[k], changed, moved, donated)
        for k, t, kind, changed, moved in self.grad_writes:
            if kind == "new":
                t._set_grad(borrowing(new_array(outs[k])))
            elif kind is None:
                t._set_grad(None)
            else:
                g = grad_of(t)
                _give(g, buffer_of(array_of(g)), outs[k], changed, moved, False)
        for k, i, p, key, j, changed, moved in self.entry_writes:
            if j is not None:  # (the state dict still holds it)
                _give(self.layout.entries[j][2], self.entry_raws[j], outs[k], changed,
                      moved, False)
            else:  # optimizer.state[param][key]
                self.layout.optimizers[i].state[self.layout.tensors[p]][key] = make(
                    new_array(outs[k]))
        if self.single:
            return make(new_array(outs[0]))
        return self.plan[0].unflatten([make(new_array(v)) for v in outs[:self.n_out]])


_WRITEABLE = operator.attrgetter("flags.writeable")


def owner_id(raw: Any) -> int:
    """The id of what owns ``raw``'s memory (`_storage.owner`; most arrays own theirs)."""
    return id(raw) if raw.base is None else id(_storage.owner(raw))


def _raw_of_aval(a: Any, aval: tuple) -> Any:
    """The numpy array of funcgrad Array ``a`` if it has the shape and dtype ``aval``
    (what the program was compiled for), else None."""
    if type(a) is not Array:
        return None
    raw = buffer_of(a)
    return raw if type(raw) is np.ndarray and (raw.shape, raw.dtype) == aval else None


def _give(t: Any, raw: Any, value: Any, changed: bool, moved: int, plain: bool) -> None:
    """Tensor ``t`` (memory ``raw``) takes its new value (written into its memory, where
    the program did not write it there already); its version counter moves as the traced
    step moved it. ``plain``: ``raw`` is memory of ``t``'s own that may be written (a
    donated call's tensors), so a value of its dtype is copied in directly."""
    if changed and value is not raw:
        if plain and value.dtype == raw.dtype:
            raw[...] = value  # (np.copyto's dispatch costs more, for the same copy)
        else:
            t._assign_array(new_array(value))  # (counts one write)
            moved -= 1
    if moved:
        t._bump_version(moved)
