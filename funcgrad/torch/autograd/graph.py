"""torch.autograd.graph: saved-tensor hooks and a report of what live graphs hold.

`saved_tensors_hooks(pack, unpack)`: while active, every value a new node saves for its
backward is passed to ``pack(tensor)`` and only the packed object is kept; backward calls
``unpack(packed)`` to get it back (offloading to disk or to another device, compression...).
The values packed are exactly the residuals the tape says the rules read.

`memory_summary()` is the CPU analogue of ``torch.cuda.memory_summary()`` for autograd: it
lists, per node type, how many live nodes there are and the bytes of the values they keep
for backward (each array counted once).
"""
from __future__ import annotations

import contextlib
import gc
import threading
from collections import defaultdict
from typing import Any, Callable, Iterator

from funcgrad.torch import _storage
from funcgrad.torch.autograd.node import Node
from funcgrad.regions import Regions
from funcgrad.torch._tensor import Tensor
from funcgrad.array import Array

__all__ = ["Node", "saved_tensors_hooks", "save_on_cpu", "disable_saved_tensors_hooks",
           "memory_summary", "saved_bytes", "current_hooks"]


class _HookState(threading.local):
    def __init__(self) -> None:
        self.stack: list = []
        self.disabled: str | None = None


_hooks = _HookState()


def _live_nodes() -> list:
    """Every node alive in the process (a report's worth of work: creating a node costs
    nothing extra for it)."""
    # (the type itself: isinstance asks a weakref.proxy for its referent's class, and a
    # proxy whose referent is gone raises ReferenceError)
    return [o for o in gc.get_objects() if issubclass(type(o), Node)]


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


def pack_tape(tape: Any, hooks: tuple, known: dict, only: int | None = None) -> tuple:
    """(the tape with every array residual (or only the array of id ``only``) replaced by a
    key, what `unpacked` needs). Each array goes through the pack hook once; ``known`` maps
    id(array) to the tensor the user knows it as (inputs, outputs), other arrays are
    wrapped in new tensors."""
    from funcgrad.torch._tensor import make  # the tensor module imports this one
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


def unpacked(tape: Any, states: list) -> Any:
    """The tape with its packed residuals unpacked (for one backward); ``states`` are what
    each `pack_tape` on it returned."""
    values = {}
    for unpack, packed in states:
        values.update((k, unpack(p)._a) for k, p in packed.items())
    return tape.with_residuals(lambda r: values[r.value] if isinstance(r.value, _Key)
                               else r.value)


# -- memory report -----------------------------------------------------------------------------

def _node_arrays(node: Node) -> list:
    """The memory a node keeps for its backward (residuals and held inputs): each array
    as the memory block it lives in, so that views of one block (a weight and its
    transpose) count once and a view keeps its whole block."""
    blocks = []
    for a in node.saved_arrays():
        raw = _storage.raw_of(a)
        blocks.append(a if raw is None else _storage.owner(raw))
    return blocks


def _walk(roots: Any) -> list:
    stack = [r.grad_fn if isinstance(r, Tensor) else r for r in roots]
    seen: dict = {}
    while stack:
        n = stack.pop()
        if n is None or id(n) in seen:
            continue
        seen[id(n)] = n
        stack.extend(nxt for nxt, _ in n.next_functions)
    return list(seen.values())


def saved_bytes(*roots: Any) -> int:
    """Bytes kept for backward by the graphs behind ``roots`` (all live graphs if none)."""
    nodes = _walk(roots) if roots else _live_nodes()
    arrays = {id(a): a for n in nodes for a in _node_arrays(n)}
    return sum(int(a.nbytes) for a in arrays.values())


def memory_summary(*roots: Any) -> str:
    """A table of what live autograd graphs keep for backward, per node type."""
    nodes = _walk(roots) if roots else _live_nodes()
    rows: dict = defaultdict(lambda: [0, {}])
    every: dict = {}
    for n in nodes:
        arrays = _node_arrays(n)
        row = rows[n.name()]
        row[0] += 1
        for a in arrays:
            row[1][id(a)] = a
            every[id(a)] = a
    width = 75
    lines = ["|" + "=" * width + "|",
             "|" + " funcgrad.torch autograd memory summary (values kept for backward)".ljust(
                 width) + "|",
             "|" + "-" * width + "|",
             "| " + f"{'node':<32}{'count':>10}{'arrays':>12}{'bytes':>19}" + " |",
             "|" + "-" * width + "|"]
    for name in sorted(rows, key=lambda k: -sum(a.nbytes for a in rows[k][1].values())):
        count, arrays = rows[name]
        nbytes = sum(int(a.nbytes) for a in arrays.values())
        lines.append("| " + f"{name:<32}{count:>10}{len(arrays):>12}{_fmt(nbytes):>19}" + " |")
    total = sum(int(a.nbytes) for a in every.values())
    lines += ["|" + "-" * width + "|",
              "| " + f"{'total':<32}{len(nodes):>10}{len(every):>12}{_fmt(total):>19}" + " |",
              "|" + "=" * width + "|"]
    return "\n".join(lines)


def _fmt(n: int) -> str:
    for unit in ("B", "KiB", "MiB", "GiB"):
        if n < 1024 or unit == "GiB":
            return f"{n} {unit}" if unit == "B" else f"{n:.2f} {unit}"
        n /= 1024
    return str(n)
