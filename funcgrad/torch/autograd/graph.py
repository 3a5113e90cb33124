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

from funcgrad.torch.autograd.node import Node

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
    return [o for o in gc.get_objects() if isinstance(o, Node)]


def current_hooks() -> tuple | None:
    if not _hooks.stack:
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
        return self

    def __exit__(self, *exc: Any) -> None:
        _hooks.stack.pop()


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


def pack_records(records: list, hooks: tuple, known: dict) -> tuple:
    """Replace every array residual in ``records`` by a key; return what `unpacked` needs.
    ``known`` maps id(array) to the tensor the user knows it as (inputs, outputs)."""
    from funcgrad.array import Array
    from funcgrad.torch._tensor import make
    pack, unpack = hooks
    packed: dict = {}
    layout = []

    def key_of(a: Any) -> Any:
        if not isinstance(a, Array):
            return a
        k = _Key(id(a))
        if k not in packed:
            t = known.get(k)
            packed[k] = pack(make(a) if t is None else t)
        return k

    for rec in records:
        saved = tuple(key_of(s) for s in rec.saved)
        out = rec.out
        if out is not None:
            out = tuple(key_of(o) for o in out) if rec.prim.multiple_results else key_of(out)
        layout.append((rec, saved, out))
        rec.saved = tuple(None if isinstance(k, _Key) else k for k in saved)
        rec.out = None
    return (unpack, packed, layout)


@contextlib.contextmanager
def unpacked(state: tuple | None) -> Iterator[None]:
    """Put unpacked residuals back into the records for the duration of a backward."""
    if state is None:
        yield
        return
    unpack, packed, layout = state
    values = {k: unpack(p)._st.a for k, p in packed.items()}

    def value(k: Any) -> Any:
        return values[k] if isinstance(k, _Key) else k

    for rec, saved, out in layout:
        rec.saved = tuple(value(k) for k in saved)
        if out is not None:
            rec.out = tuple(value(k) for k in out) if isinstance(out, tuple) else value(out)
    try:
        yield
    finally:
        for rec, saved, _ in layout:
            rec.saved = tuple(None if isinstance(k, _Key) else k for k in saved)
            rec.out = None


# -- memory report -----------------------------------------------------------------------------

def _node_arrays(node: Node) -> list:
    """The arrays a node keeps for its backward (residuals and held inputs)."""
    out = []
    vjp = getattr(node, "_vjp", None)
    if vjp is not None:
        for rec in vjp.records:
            out.extend(s for s in rec.saved if s is not None and hasattr(s, "nbytes"))
            if rec.out is not None:
                out.extend(rec.out if isinstance(rec.out, tuple) else (rec.out,))
    datas = getattr(node, "_datas", None)
    if datas:
        out.extend(d for d in datas if hasattr(d, "nbytes"))
    saved = getattr(node, "_ctx_saved", None)
    if saved:
        out.extend(s for s in saved if hasattr(s, "nbytes"))
    return out


def _walk(roots: Any) -> list:
    from funcgrad.torch._tensor import Tensor
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
