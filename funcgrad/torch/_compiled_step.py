"""``torch.compile`` of a whole training step: one program for ``zero_grad``, the forward
pass, ``loss.backward()`` and ``optimizer.step()``.

A function that calls ``backward()`` or uses an optimizer (`is_training_step`) mutates
state: the ``.grad`` of the parameters, the parameters themselves, the optimizer's state
(momentum buffers...), the modules' buffers. Such a function is compiled as a pure
function of that state, the way JAX programs thread it: its program takes the values of
the parameters and buffers (of the modules and optimizers it reads from its closure, its
globals or its bound object), of their gradients and of the optimizers' state tensors,
with its own arguments, and returns its results and the new values of all of them.

Tracing runs the function itself, eagerly, on the very tensor objects it uses, their
values swapped for tracers (`_Swapped`): the facade's autograd records the forward pass
on the tracers, ``backward()`` runs the engine on them, the optimizer's in-place update
rebinds the traced values, so the whole step lands in one tape, which `funcgrad.jit`
compiles to straight-line numpy. Afterwards every tensor, gradient and state dict is put
back exactly as it was; each call of the program then writes its new values into the
tensors' memory (in place, moving each version counter as far as the traced step moved
it, as the eager step's in-place updates do; a tensor it only reads keeps its version)
or, where the step made a new tensor (a gradient after ``zero_grad()``, a first momentum
buffer), gives it a new tensor. After a call, the next one replays it (`_step_replay`)
while a guard finds nothing that call's state was found from changed: the program then
runs directly on the tensors' memory, without the search for the step's state.

The signature of a call (`_Layout.key`) holds what Python decided on while tracing: which
gradients exist, the optimizers' hyper-parameters (a scheduler's new learning rate
retraces), the state keys, the modules' training flags, grad mode. A step the program
cannot replay runs eagerly instead, as PyTorch's compiler falls back at a graph break, so
results are always eager's: one that reads a traced value in Python (``loss.item()``,
Adagrad's and Adamax's step counts; Adam's and AdamW's are computed with tensors when
traced), draws random numbers (dropout in training mode), keeps non-tensor optimizer
state that changes, or differentiates inputs that require grad.
"""
from __future__ import annotations

import dis
import functools
import types
from typing import Any, Callable

import numpy as np

import funcgrad
from funcgrad import tree_util
from funcgrad.array import buffer_of, new_array
from funcgrad.core import ConcretizationTypeError
from funcgrad.torch import func
from funcgrad.torch._runtime import storage as _storage
from funcgrad.torch._factories import get_rng_state, set_rng_state
from funcgrad.torch._captured import probe_tables
from funcgrad.torch._step_replay import MISS, Probes, Replay, owner_id
from funcgrad.torch._tensor import Tensor, array_of, grad_of
from funcgrad.torch._runtime import grad_mode
from funcgrad.torch.nn.module import Module
from funcgrad.torch.optim.optimizer import Optimizer

__all__ = ["is_training_step", "StepProgram"]


@functools.lru_cache(maxsize=256)
def _calls_backward(code: types.CodeType) -> bool:
    """Whether a code object (or one defined in it) reads an attribute ``backward``."""
    if any(i.argval == "backward" for i in dis.get_instructions(code)
           if i.opname in ("LOAD_ATTR", "LOAD_METHOD")):
        return True
    return any(_calls_backward(c) for c in code.co_consts if isinstance(c, types.CodeType))


def is_training_step(fn: Any, reachable: dict) -> bool:
    """Whether ``fn`` trains (calls ``backward`` or reads an optimizer): compiled as a
    `StepProgram`. ``reachable``: what it reads besides its arguments."""
    code = getattr(fn, "__code__", None) or getattr(
        getattr(fn, "__func__", None), "__code__", None)
    if code is not None and _calls_backward(code):
        return True
    return bool(_optimizers(reachable))


def _optimizers(reachable: dict) -> list:
    found: list = []
    for value in reachable.values():
        candidates = value if isinstance(value, (list, tuple)) else [value]
        candidates = list(candidates) + (list(vars(value).values()) if hasattr(
            value, "__dict__") and not isinstance(value, (type, types.ModuleType,
                                                          types.FunctionType, Module,
                                                          Optimizer)) else [])
        for c in candidates:
            if isinstance(c, Optimizer) and all(c is not o for o in found):
                found.append(c)
    return found


def _module_state(roots: Any, probes: Probes) -> tuple[list, tuple]:
    """(every parameter and buffer, every training flag) of the module trees ``roots``,
    in `Module.modules` order (each module once), read from their tables directly (each
    read probed)."""
    tensors: list = []
    modes = []
    seen: set = set()
    stack = list(roots)[::-1]
    while stack:
        m = stack.pop()
        if id(m) in seen:
            continue
        seen.add(id(m))
        modes.append(m.training)
        probe_tables(m, probes, names=False)
        tensors += [t for t in m._parameters.values() if t is not None]
        tensors += [t for t in m._buffers.values() if t is not None]
        stack += [c for c in reversed(m._modules.values()) if c is not None]
    return tensors, tuple(modes)


class _Fallback(Exception):
    """The step cannot be compiled (the reason is the message): it runs eagerly."""


def _static(value: Any) -> Any:
    """A hyper-parameter or non-tensor state value as a part of the signature."""
    if isinstance(value, Tensor):
        if value.numel() != 1:
            raise _Fallback("a tensor hyper-parameter with several elements")
        return ("tensor", value.item())
    try:
        hash(value)
    except TypeError:
        raise _Fallback(f"an unhashable option {value!r}") from None
    return value


class _Layout:
    """The mutable state of one call: the tensors (parameters, buffers), their gradients,
    the optimizers' state tensors, and the signature ``key`` of all that Python reads;
    every read probed into ``probes``."""

    def __init__(self, modules: dict, read: dict, optimizers: list, probes: Probes):
        held, modes = _module_state(modules.values(), probes)
        tensors: list = []
        seen: set = set()
        for t in held + list(read.values()):
            if id(t) not in seen:
                seen.add(id(t))
                tensors.append(t)
        groups = []
        for opt in optimizers:
            probes.ids(f"{probes.obj(opt)}.param_groups")
            for group in opt.param_groups:
                for p in group["params"]:
                    if id(p) not in seen:
                        seen.add(id(p))
                        tensors.append(p)
                groups.append(tuple((k, _static(v)) for k, v in group.items()
                                    if k not in ("params", "param_names")))
                _probe_group(group, probes)
        self.tensors = tensors
        self.grads = [grad_of(t) for t in tensors]
        self.optimizers = optimizers
        self.entries = []  # (state dict, key, tensor) of every optimizer state tensor
        self.state_key = self._state(optimizers, probes)
        at = probes.obj(tuple(tensors))
        probes.ids(f"map(A, {at})")
        probes.equal(f"tuple(map(NONE, map(G, {at})))")
        probes.equal(f"tuple(map(RG, {at}))")
        probes.ids(f"map(A, {probes.obj(tuple(v for _, _, v in self.entries))})")
        probes.equal("GM.enabled")
        held = [array_of(t) for t in tensors] + [array_of(v) for _, _, v in self.entries]
        owners = {id(_storage.owner(r)) for r in map(_storage.raw_of, held) if r is not None}
        if len(owners) < len(held):  # the trace would not see a write through the other
            raise _Fallback("two of the tensors it reads share memory (views of one "
                            "storage)")
        self.key = (modes, tuple(groups), self.state_key,
                    tuple((g is not None, t.requires_grad) for t, g in
                          zip(tensors, self.grads)), grad_mode.state.enabled)

    def _state(self, optimizers: list, probes: Probes) -> tuple:
        """The optimizers' state: its tensors into ``entries``, the rest as a signature."""
        state_key = []
        position = {id(t): k for k, t in enumerate(self.tensors)}
        for opt in optimizers:
            at = probes.obj(opt)
            probes.ids(f"{at}.state", f"{at}.state.values()")
            for p, d in opt.state.items():
                if not isinstance(p, Tensor) or id(p) not in position:
                    raise _Fallback("optimizer state of a tensor it does not optimize")
                table = probes.obj(d)
                probes.ids(table)
                for key, value in d.items():
                    src = f"{table}[{probes.obj(key)}]"
                    if isinstance(value, Tensor):
                        probes.same(src)
                        self.entries.append((d, key, value))
                        state_key.append((position[id(p)], key, "tensor"))
                    else:
                        probes.equal(f"S({src})")
                        state_key.append((position[id(p)], key, _static(value)))
        return tuple(state_key)

    def arrays(self) -> list:
        return ([array_of(t) for t in self.tensors]
                + [array_of(g) for g in self.grads if g is not None]
                + [array_of(v) for _, _, v in self.entries])


def _probe_group(group: dict, probes: Probes) -> None:
    """Probe what a call reads of a parameter group: its keys, parameters, the types of
    its values, then (so that the comparison never reaches a tensor's ``==``) the
    hyper-parameters' values."""
    g = probes.obj(group)
    probes.ids(g, f"{g}['params']")
    probes.equal(f"tuple(map(type, {g}.values()))")
    names = [k for k in group if k not in ("params", "param_names")]
    plain = [probes.obj(k) for k in names if not isinstance(group[k], Tensor)]
    probes.equal("(" + "".join(f"{g}[{k}], " for k in plain) + ")")
    for k in names:
        if isinstance(group[k], Tensor):
            probes.equal(f"S({g}[{probes.obj(k)}])")


class _Swapped:
    """Within the block, the layout's tensors, gradients and state tensors hold the
    given traced values; afterwards everything is as it was (values, versions, ``.grad``
    objects, the optimizers' state dicts). ``given``: tensor id -> (the traced value it
    was given, its version then), for `_collect`."""

    def __init__(self, layout: _Layout, values: list):
        self.layout, self.values = layout, values

    def __enter__(self) -> None:
        lay = self.layout
        held = [t for t in lay.tensors] + [g for g in lay.grads if g is not None] + [
            v for _, _, v in lay.entries]
        self.saved = [(t, array_of(t), t._version) for t in held]
        self.saved_grads = list(lay.grads)
        self.saved_state = [(opt, {p: (d, dict(d)) for p, d in opt.state.items()})
                            for opt in lay.optimizers]
        self.given = {id(t): (v, version) for (t, _, version), v in zip(self.saved,
                                                                          self.values)}
        for t, v in zip(held, self.values):
            t._hold(v)

    def __exit__(self, *exc: Any) -> None:
        for t, a, v in self.saved:
            t._hold(a, v)
        for t, g in zip(self.layout.tensors, self.saved_grads):
            t._set_grad(g)
        for opt, state in self.saved_state:  # the same dicts, with what they held
            opt.state.clear()
            for p, (d, items) in state.items():
                d.clear()
                d.update(items)
                opt.state[p] = d

    def change(self, t: Tensor) -> tuple[bool, int]:
        """(whether ``t`` holds another value than it was given, how far its version
        moved since)."""
        value, version = self.given[id(t)]
        return array_of(t) is not value, t._version - version


class StepProgram:
    """A training step compiled as one program (see the module's docstring)."""

    def __init__(self, fn: Callable, reads: Callable):
        self.fn = fn
        self._reads = reads
        # the parameters' buffers are donated: the update is written into their memory,
        # as the eager step's in-place update (`_donatable` says when that is safe)
        self.jitted = funcgrad.jit(self._traced, static_argnums=(0,), donate_argnums=(1,))
        self.jitted_undonated = funcgrad.jit(self._traced, static_argnums=(0,))
        self.outputs: dict = {}  # signature -> what the step does (`_collect`)
        self.eager_reason: str | None = None  # why it runs eagerly (None: compiled)
        self._live: tuple | None = None  # the call being traced: (layout, input tree)
        self._replay: Replay | None = None  # the last call's, for the next (`Replay`)

    def _signature(self, args: tuple, kwargs: dict) -> tuple:
        """(layout, input leaves, input tree, signature, guard) of a call."""
        probes = Probes(S=_static)
        modules, tensors, optimizers = self._reads(probes)
        layout = _Layout(modules, tensors, optimizers, probes)
        leaves, in_tree = tree_util.tree_flatten((args, kwargs))
        if any(isinstance(x, Tensor) and x.requires_grad for x in leaves):
            raise _Fallback("an input requires grad")
        return layout, leaves, in_tree, (layout.key, in_tree), probes.guard()

    def lowered(self, args: tuple, kwargs: dict) -> Any:
        """The step's program for these inputs, lowered (its IR and code)."""
        layout, leaves, in_tree, key, _ = self._signature(args, kwargs)
        self._live = (layout, in_tree)
        n = len(layout.tensors)
        arrays = layout.arrays() + func.to_array(leaves)
        try:
            return self.jitted_undonated.lower(key, arrays[:n], arrays[n:])
        finally:
            self._live = None

    def __call__(self, args: tuple, kwargs: dict) -> Any:
        if self.eager_reason is not None:
            return self.fn(*args, **kwargs)
        if self._replay is not None:
            out = self._replay.run(args, kwargs)
            if out is not MISS:
                return out
        try:
            return self._call(args, kwargs)
        except (_Fallback, ConcretizationTypeError) as why:
            self.eager_reason = str(why)
            self._replay = None
            return self.fn(*args, **kwargs)

    def _call(self, args: tuple, kwargs: dict) -> Any:
        """A call whose state is found (and its program traced, for a new signature);
        it leaves a `Replay` for the next calls."""
        self._replay = None
        layout, leaves, in_tree, key, guard = self._signature(args, kwargs)
        n = len(layout.tensors)
        arrays = layout.arrays() + func.to_array(leaves)
        donated = _donatable(arrays, layout.tensors)
        jitted = self.jitted if donated else self.jitted_undonated
        replayable = not kwargs and len(leaves) == len(args) and all(
            isinstance(a, Tensor) and a is x for a, x in zip(args, leaves))
        program = jitted.executable(key, arrays[:n], arrays[n:])
        grads = [buffer_of(a) for a in arrays[n:n + sum(g is not None for g in layout.grads)]]
        if program is not None:
            outs = list(program(*map(buffer_of, arrays)))
        else:
            self._live = (layout, in_tree)
            try:
                # (fresh handles of the donated memory: the tensors keep theirs)
                handles = [new_array(buffer_of(a)) for a in arrays[:n]] if donated else (
                    arrays[:n])
                given = {id(h): buffer_of(a) for h, a in zip(handles, arrays)}
                outs = [given.get(id(o), o) for o in jitted(key, handles, arrays[n:])]
                outs = [buffer_of(o) if isinstance(o, funcgrad.Array) else o for o in outs]
            finally:
                self._live = None
            program = jitted.executable(key, arrays[:n], arrays[n:])
        replay = Replay(guard, layout, self.outputs[key], program, donated,
                        args if replayable else ())
        if program is not None and replayable:
            self._replay = replay
        taken = {owner_id(buffer_of(a)) for a in arrays if type(a) is funcgrad.Array}
        return replay.write_back(outs, grads, taken)

    # -- tracing -------------------------------------------------------------------------
    def _traced(self, key: tuple, values: list, rest: list) -> list:
        """The step on traced values: the tensors' (``values``), then the gradients', the
        state tensors' and the inputs' (``rest``)."""
        layout, in_tree = self._live
        n = len(layout.arrays()) - len(values)
        rng = get_rng_state()
        try:
            swapped = _Swapped(layout, list(values) + list(rest[:n]))
            with swapped:
                inputs = in_tree.unflatten(func.from_array(list(rest[n:])))
                out = self.fn(*inputs[0], **inputs[1])
                if not bool((get_rng_state() == rng).all()):
                    raise _Fallback("it draws random numbers")
                results, self.outputs[key] = _collect(layout, out, swapped)
        except BaseException:
            set_rng_state(rng)  # the eager run draws what it would have drawn
            raise
        return results


def _donatable(arrays: list, tensors: list) -> bool:
    """Whether the first arrays, those of ``tensors``, may be donated to the program:
    each writable memory of its own (not borrowed from a gradient), which no other array
    of the call shares (no two views of one storage, no gradient or input viewing a
    parameter)."""
    n = len(tensors)
    owners = set()
    for k, a in enumerate(arrays):
        raw = _storage.raw_of(a)
        if raw is None:
            return False
        owner = id(_storage.owner(raw))
        if owner in owners:
            return False
        owners.add(owner)
        if k < n and (type(raw) is not np.ndarray or not raw.flags.writeable
                      or _storage.overlapping(a) or tensors[k]._is_borrowed()):
            return False
    return True


def _collect(layout: _Layout, out: Any, swapped: _Swapped) -> tuple:
    """(the traced values a step ends with: its results, the tensors', the gradients',
    the optimizers' state tensors; what the step does, `Replay`'s plan: the results'
    tree, whether each tensor changed and how far its version moved, each tensor's
    gradient ("same" object, a "new" one, or None) and each state tensor (the index of
    the same one in the layout's entries, or None for a new one), with their changes)."""
    out_leaves, out_tree = tree_util.tree_flatten(out)
    if not all(isinstance(o, Tensor) for o in out_leaves):
        raise TypeError(f"a compiled training step returned {out_tree} with non-tensor "
                        "leaves; return tensors (or tuples, lists, dicts of them)")
    values = [array_of(o) for o in out_leaves] + [array_of(t) for t in layout.tensors]
    tensors = [swapped.change(t) for t in layout.tensors]
    grads = []
    for t, old in zip(layout.tensors, layout.grads):
        g = grad_of(t)
        if g is None:
            grads.append((None, False, 0))
            continue
        grads.append(("same", *swapped.change(g)) if g is old else ("new", True, 0))
        values.append(array_of(g))
    entries = _state_entries(layout, swapped, values)
    return values, (out_tree, tensors, grads, entries)


def _state_entries(layout: _Layout, swapped: _Swapped, values: list) -> list:
    """`_collect`'s plan of the optimizers' state tensors (their values appended to
    ``values``): (optimizer, parameter position, key, the index of the same tensor among
    the layout's entries or None for a new one, whether it changed, its version move)."""
    before = {(id(d), key): v for _, state in swapped.saved_state
              for d, items in state.values() for key, v in items.items()}
    index = {(id(d), key): k for k, (d, key, _) in enumerate(layout.entries)}
    position = {id(t): k for k, t in enumerate(layout.tensors)}
    entries = []
    for i, opt in enumerate(layout.optimizers):
        for p, d in opt.state.items():
            for key, value in d.items():
                old = before.get((id(d), key), _NONE)
                if not isinstance(value, Tensor):
                    if old is _NONE or isinstance(old, Tensor) or old != value:
                        raise _Fallback("non-tensor optimizer state that changes")
                    continue
                if value is old:
                    entries.append((i, position[id(p)], key, index[(id(d), key)],
                                    *swapped.change(value)))
                else:
                    entries.append((i, position[id(p)], key, None, True, 0))
                values.append(array_of(value))
    return entries


_NONE = object()  # (no such state entry before the step)
