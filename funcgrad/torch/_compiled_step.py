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
tensors' memory (in place, bumping their versions, as the eager step's in-place updates
do) or, where the step made a new tensor (a gradient after ``zero_grad()``, a first
momentum buffer), gives it a new tensor.

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
from funcgrad.array import new_array
from funcgrad.core import ConcretizationTypeError
from funcgrad.torch import _storage, func
from funcgrad.torch._factories import get_rng_state, set_rng_state
from funcgrad.torch._tensor import Tensor, make
from funcgrad.torch.autograd import grad_mode
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


def _module_state(roots: Any) -> tuple[list, tuple]:
    """(every parameter and buffer, every training flag) of the module trees ``roots``,
    in `Module.modules` order (each module once): read from their tables directly, as
    this runs on every call."""
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
    the optimizers' state tensors, and the signature ``key`` of all that Python reads."""

    def __init__(self, modules: dict, read: dict, optimizers: list):
        held, modes = _module_state(modules.values())
        tensors: list = []
        seen: set = set()
        for t in held + list(read.values()):
            if id(t) not in seen:
                seen.add(id(t))
                tensors.append(t)
        groups = []
        for opt in optimizers:
            for group in opt.param_groups:
                for p in group["params"]:
                    if id(p) not in seen:
                        seen.add(id(p))
                        tensors.append(p)
                groups.append(tuple((k, _static(v)) for k, v in group.items()
                                    if k not in ("params", "param_names")))
        self.tensors = tensors
        self.grads = [t._grad for t in tensors]
        self.optimizers = optimizers
        self.entries = []  # (state dict, key, tensor) of every optimizer state tensor
        state_key = []
        position = {id(t): k for k, t in enumerate(tensors)}
        for opt in optimizers:
            for p, d in opt.state.items():
                if not isinstance(p, Tensor) or id(p) not in position:
                    raise _Fallback("optimizer state of a tensor it does not optimize")
                for key, value in d.items():
                    if isinstance(value, Tensor):
                        self.entries.append((d, key, value))
                        state_key.append((position[id(p)], key, "tensor"))
                    else:
                        state_key.append((position[id(p)], key, _static(value)))
        held = [t._a for t in tensors] + [v._a for _, _, v in self.entries]
        owners = {id(_storage.owner(r)) for r in map(_storage.raw_of, held) if r is not None}
        if len(owners) < len(held):  # the trace would not see a write through the other
            raise _Fallback("two of the tensors it reads share memory (views of one "
                            "storage)")
        self.key = (modes, tuple(groups), tuple(state_key),
                    tuple((g is not None, t.requires_grad) for t, g in
                          zip(tensors, self.grads)), grad_mode.state.enabled)

    def arrays(self) -> list:
        return ([t._a for t in self.tensors] + [g._a for g in self.grads if g is not None]
                + [v._a for _, _, v in self.entries])


class _Swapped:
    """Within the block, the layout's tensors, gradients and state tensors hold the
    given traced values; afterwards everything is as it was (values, versions, ``.grad``
    objects, the optimizers' state dicts)."""

    def __init__(self, layout: _Layout, values: list):
        self.layout, self.values = layout, values

    def __enter__(self) -> None:
        lay = self.layout
        held = [t for t in lay.tensors] + [g for g in lay.grads if g is not None] + [
            v for _, _, v in lay.entries]
        self.saved = [(t, t._a, t._vc.v) for t in held]
        self.saved_grads = list(lay.grads)
        self.saved_state = [(opt, {p: (d, dict(d)) for p, d in opt.state.items()})
                            for opt in lay.optimizers]
        for t, v in zip(held, self.values):
            t._a = v

    def __exit__(self, *exc: Any) -> None:
        for t, a, v in self.saved:
            t._a, t._vc.v = a, v
        for t, g in zip(self.layout.tensors, self.saved_grads):
            t._grad = g
        for opt, state in self.saved_state:  # the same dicts, with what they held
            opt.state.clear()
            for p, (d, items) in state.items():
                d.clear()
                d.update(items)
                opt.state[p] = d


class StepProgram:
    """A training step compiled as one program (see the module's docstring)."""

    def __init__(self, fn: Callable, reads: Callable):
        self.fn = fn
        self._reads = reads
        # the parameters' buffers are donated: the update is written into their memory,
        # as the eager step's in-place update (`_donatable` says when that is safe)
        self.jitted = funcgrad.jit(self._traced, static_argnums=(0,), donate_argnums=(1,))
        self.jitted_undonated = funcgrad.jit(self._traced, static_argnums=(0,))
        self.outputs: dict = {}  # signature -> what the step's results are (`_collect`)
        self.eager_reason: str | None = None  # why it runs eagerly (None: compiled)
        self._live: tuple | None = None  # the call being traced: (layout, input tree)

    def _signature(self, args: tuple, kwargs: dict) -> tuple:
        """(layout, input leaves, input tree, signature) of a call."""
        modules, tensors, reachable = self._reads()
        layout = _Layout(modules, tensors, _optimizers(reachable))
        leaves, in_tree = tree_util.tree_flatten((args, kwargs))
        if any(isinstance(x, Tensor) and x.requires_grad for x in leaves):
            raise _Fallback("an input requires grad")
        return layout, leaves, in_tree, (layout.key, in_tree)

    def lowered(self, args: tuple, kwargs: dict) -> Any:
        """The step's program for these inputs, lowered (its IR and code)."""
        layout, leaves, in_tree, key = self._signature(args, kwargs)
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
        try:
            layout, leaves, in_tree, key = self._signature(args, kwargs)
            self._live = (layout, in_tree)
            n = len(layout.tensors)
            arrays = layout.arrays() + func.to_array(leaves)
            try:
                if _donatable(arrays, n):  # (fresh handles: the tensors keep theirs)
                    raws = [_storage.raw_of(a) for a in arrays[:n]]
                    handles = [new_array(r) for r in raws]
                    outs = self.jitted(key, handles, arrays[n:])
                    # a value the step leaves as it is may come back as its handle
                    # (deleted by the donation): it is the tensor's memory
                    given = {id(h): r for h, r in zip(handles, raws)}
                    outs = [new_array(given[id(o)]) if id(o) in given else o
                            for o in outs]
                else:
                    outs = self.jitted_undonated(key, arrays[:n], arrays[n:])
            finally:
                self._live = None
        except (_Fallback, ConcretizationTypeError) as why:
            self.eager_reason = str(why)
            return self.fn(*args, **kwargs)
        return self._write_back(layout, self.outputs[key], outs)

    # -- tracing -------------------------------------------------------------------------
    def _traced(self, key: tuple, values: list, rest: list) -> list:
        """The step on traced values: the tensors' (``values``), then the gradients', the
        state tensors' and the inputs' (``rest``)."""
        layout, in_tree = self._live
        n = len(layout.arrays()) - len(values)
        rng = get_rng_state()
        try:
            with _Swapped(layout, list(values) + list(rest[:n])):
                inputs = in_tree.unflatten(func.from_array(list(rest[n:])))
                out = self.fn(*inputs[0], **inputs[1])
                if not bool((get_rng_state() == rng).all()):
                    raise _Fallback("it draws random numbers")
                results, self.outputs[key] = _collect(layout, out)
        except BaseException:
            set_rng_state(rng)  # the eager run draws what it would have drawn
            raise
        return results

    # -- a call's new state --------------------------------------------------------------
    def _write_back(self, layout: _Layout, described: tuple, outs: list) -> Any:
        """Give the call's new values to the step's results, tensors, gradients and
        optimizer state; first each value that shares memory with an input or another
        value gets a copy (a tensor left unchanged comes back as its own memory, and a
        donated parameter's buffer may hold its new value)."""
        out_tree, grads, entries = described
        targets = ([None] * out_tree.num_leaves + list(layout.tensors)
                   + [old if kind == "same" else None
                      for old, kind in zip(layout.grads, grads) if kind is not None]
                   + [kind[1] if kind[0] == "same" else None for _, _, kind in entries])
        taken = {id(_storage.owner(r)) for r in map(_storage.raw_of, layout.arrays())
                 if r is not None}
        values = []
        for value, target in zip(outs, targets):
            raw = _storage.raw_of(value)
            if raw is not None and not (target is not None and raw is _storage.raw_of(
                    target._a)):
                owner = id(_storage.owner(raw))
                if owner in taken:
                    value = _storage.snapshot(value)
                else:
                    taken.add(owner)
            values.append(value)
        it = iter(values)
        results = [make(next(it)) for _ in range(out_tree.num_leaves)]
        for t in layout.tensors:
            _write(t, next(it))
        for t, old, kind in zip(layout.tensors, layout.grads, grads):
            if kind == "same":
                _write(old, next(it))
            elif kind == "new":
                t._grad = make(next(it))._borrowing()
            else:
                t._grad = None
        for slot, key, kind in entries:
            if kind[0] == "same":
                _write(kind[1], next(it))
                slot.state()[key] = kind[1]
            else:
                slot.state()[key] = make(next(it))
        return out_tree.unflatten(results)


def _donatable(arrays: list, n: int) -> bool:
    """Whether the first ``n`` arrays (the tensors') may be donated to the program: each
    writable memory of its own, which no other array of the call shares (no two views of
    one storage, no gradient or input viewing a parameter)."""
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
                      or _storage.overlapping(a)):
            return False
    return True


def _write(t: Tensor, value: Any) -> None:
    """``value`` into ``t``'s memory and a version bump (the program may have written it
    there already: a donated buffer)."""
    raw, new = _storage.raw_of(t._a), _storage.raw_of(value)
    if raw is not None and new is raw:
        t._vc.v += 1  # (what `_assign_array` bumps)
        return
    t._assign_array(value)


def _collect(layout: _Layout, out: Any) -> tuple:
    """(the traced values a step ends with: its results, the tensors', the gradients',
    the optimizers' state tensors; how to give them back)."""
    out_leaves, out_tree = tree_util.tree_flatten(out)
    if not all(isinstance(o, Tensor) for o in out_leaves):
        raise TypeError(f"a compiled training step returned {out_tree} with non-tensor "
                        "leaves; return tensors (or tuples, lists, dicts of them)")
    values = [o._a for o in out_leaves] + [t._a for t in layout.tensors]
    grads = []
    for t, old in zip(layout.tensors, layout.grads):
        g = t._grad
        if g is None:
            grads.append(None)
            continue
        grads.append("same" if g is old else "new")
        values.append(g._a)
    before = {(id(d), key): v for d, key, v in layout.entries}
    entries = []
    for opt in layout.optimizers:
        for p, d in opt.state.items():
            for key, value in d.items():
                if not isinstance(value, Tensor):
                    if before.get((id(d), key), value) != value:
                        raise _Fallback("non-tensor optimizer state that changes")
                    continue
                old = before.get((id(d), key))
                entries.append((_StateSlot(opt, p), key,
                                ("same", old) if value is old else ("new", None)))
                values.append(value._a)
    return values, (out_tree, grads, entries)


class _StateSlot:
    """Where a state tensor goes back: ``optimizer.state[param]``."""

    __slots__ = ("opt", "param")

    def __init__(self, opt: Optimizer, param: Tensor):
        self.opt, self.param = opt, param

    def state(self) -> dict:
        return self.opt.state[self.param]
