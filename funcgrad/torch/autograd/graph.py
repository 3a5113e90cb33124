"""torch.autograd.graph: saved-tensor hooks and a report of what live graphs hold.

`saved_tensors_hooks(pack, unpack)` (from `funcgrad.torch._saved_hooks`, where the op layer
packs and unpacks): while active, every value a new node saves for its backward is passed
to ``pack(tensor)`` and only the packed object is kept; backward calls ``unpack(packed)``.

`memory_summary()` is the CPU analogue of ``torch.cuda.memory_summary()`` for autograd: it
lists, per node type, how many live nodes there are and the bytes of the values they keep
for backward (each array counted once).
"""
from __future__ import annotations

import gc
from collections import defaultdict
from typing import Any

from funcgrad.torch._runtime import storage as _storage
from funcgrad.torch._runtime.node import Node
from funcgrad.torch._saved_hooks import (current_hooks, disable_saved_tensors_hooks,
                                         save_on_cpu, saved_tensors_hooks)
from funcgrad.torch._tensor import Tensor
from funcgrad.array import Array

__all__ = ["Node", "saved_tensors_hooks", "save_on_cpu", "disable_saved_tensors_hooks",
           "memory_summary", "saved_bytes", "current_hooks"]


def _live_nodes() -> list:
    """Every node alive in the process (a report's worth of work: creating a node costs
    nothing extra for it)."""
    # (the type itself: isinstance asks a weakref.proxy for its referent's class, and a
    # proxy whose referent is gone raises ReferenceError)
    return [o for o in gc.get_objects() if issubclass(type(o), Node)]


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
