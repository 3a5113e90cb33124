"""Saved-tensor hooks: ``pack`` at save time, ``unpack`` when backward reads the value.

While a `saved_tensors_hooks(pack, unpack)` block is active, every value a new node saves for
its backward is passed to ``pack(tensor)`` and only the packed object is kept; backward calls
``unpack(packed)`` to get it back (offloading to disk or to another device, compression...).
The values packed are exactly the residuals the tape says the rules read. The op layer packs
(`pack_tape`) and unpacks (`unpacked`); ``torch.autograd.graph`` gives the public names.
"""
from __future__ import annotations

import contextlib
import threading
from typing import Any, Callable, Iterator, Sequence

from funcgrad.array import Array
from funcgrad.regions import Regions
from funcgrad.torch._tensor import make

__all__ = ["saved_tensors_hooks", "save_on_cpu", "disable_saved_tensors_hooks",
           "current_hooks", "open_hooks", "pack_tape", "pack_declared", "unpacked"]


class _HookState(threading.local):
    def __init__(self) -> None:
        self.stack: list = []
        self.disabled: str | None = None


_hooks = _HookState()


open_hooks = Regions()  # the saved_tensors_hooks blocks open in all threads


def current_hooks() -> tuple | None:
    if not open_hooks.open or not _hooks.stack:
        return None
    if _hooks.disabled is not None:
        raise RuntimeError(_hooks.disabled)
    return _hooks.stack[-1]


class saved_tensors_hooks:
    """Context manager: ``pack_hook(tensor) -> obj`` at save time, ``unpack_hook(obj) ->
    tensor`` when backward needs the value."""

    def __init__(self, pack_hook: Callable, unpack_hook: Callable):
        self.pack_hook = pack_hook
        self.unpack_hook = unpack_hook

    def __enter__(self) -> "saved_tensors_hooks":
        _hooks.stack.append((self.pack_hook, self.unpack_hook))
        open_hooks.enter()
        return self

    def __exit__(self, *exc: Any) -> None:
        _hooks.stack.pop()
        open_hooks.exit()


class save_on_cpu(saved_tensors_hooks):
    """Keep saved values on the CPU and move them back to their device for backward."""

    def __init__(self, pin_memory: bool = False, device_type: str = "cuda"):
        def pack(t: Any) -> tuple:
            return (t.device, t.cpu())

        def unpack(packed: tuple) -> Any:
            dev, t = packed
            return t.to(dev)
        super().__init__(pack, unpack)


@contextlib.contextmanager
def disable_saved_tensors_hooks(error_message: str) -> Iterator[None]:
    """Inside, registering or using saved-tensor hooks raises ``error_message``."""
    prev = _hooks.disabled
    _hooks.disabled = error_message
    try:
        yield
    finally:
        _hooks.disabled = prev


# -- packing a tape's residuals ---------------------------------------------------------------

class _Key(int):
    """A packed residual's key (other saved values, e.g. Python numbers, stay in place)."""


class _Slot(_Key):
    """The key of a declared saved tensor: its position among the node's (`pack_declared`;
    small numbers, where `pack_tape`'s keys are array ids)."""


def pack_tape(tape: Any, hooks: tuple, known: dict, only: int | None = None) -> tuple:
    """(the tape with every array residual (or only the array of id ``only``) replaced by a
    key, what `unpacked` needs). Each array goes through the pack hook once; ``known`` maps
    id(array) to the tensor the user knows it as (inputs, outputs), other arrays are
    wrapped in new tensors."""
    pack, unpack = hooks
    packed: dict = {}

    def key_of(r: Any) -> Any:
        a = r.value
        if not isinstance(a, Array) or (only is not None and id(a) != only):
            return a
        k = _Key(id(a))
        if k not in packed:
            t = known.get(k)
            packed[k] = pack(make(a) if t is None else t)
        return k

    return tape.with_residuals(key_of), (unpack, packed)


def pack_declared(tape: Any, hooks: tuple, tensors: Sequence) -> tuple:
    """`pack_tape` for a node whose saved tensors are PyTorch's (`_saved_variables`):
    each of ``tensors`` goes through the pack hook, in order and once per occurrence (as
    PyTorch packs per saved variable); a residual that is one of them is replaced by its
    key, any other residual (an intermediate of a composition) stays as it is."""
    pack, unpack = hooks
    packed: dict = {}
    key_by_array: dict = {}
    for position, t in enumerate(tensors):
        key = _Slot(position)
        packed[key] = pack(t)
        key_by_array.setdefault(id(t._a), key)

    def key_of(r: Any) -> Any:
        a = r.value
        return key_by_array.get(id(a), a) if isinstance(a, Array) else a

    return tape.with_residuals(key_of), (unpack, packed)


def unpacked(tape: Any, states: list) -> Any:
    """The tape with its packed residuals unpacked (for one backward); ``states`` are what
    each `pack_tape` on it returned."""
    values = {}
    for unpack, packed in states:
        values.update((k, unpack(p)._a) for k, p in packed.items())
    return tape.with_residuals(lambda r: values[r.value] if isinstance(r.value, _Key)
                               else r.value)
