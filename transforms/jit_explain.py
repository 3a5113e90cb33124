"""``jax_explain_cache_misses``: why a `jit` call traced again, in JAX's words.

`Jitted` asks for an explanation only on a cache miss and only while the option is on, so
a cache hit never pays for it. The explanation compares the new signature with the closest
one already compiled: a new function, a different input pytree, a changed static argument,
or different input types, and logs it as a WARNING (JAX logs on its partial_eval logger;
funcgrad on this module's).
"""
from __future__ import annotations

import logging
import os
import sys
from typing import Any

from funcgrad import tree_util
from funcgrad._config import config

__all__ = ["explain_cache_miss", "internal"]

logger = logging.getLogger(__name__)
_seen_callsites: set = set()
# funcgrad's own files (the package and the transforms mapped into it), skipped by _callsite
_INTERNAL = (os.path.dirname(os.path.abspath(__file__)) + os.sep,
             os.path.dirname(os.path.dirname(os.path.abspath(tree_util.__file__))) + os.sep)


def internal(filename: str) -> bool:
    """Whether ``filename`` is one of funcgrad's own files (the frames a user's traceback,
    call site or debugger skips)."""
    return filename.startswith(_INTERNAL)


def explain_cache_miss(jitted: Any, key: tuple, params: dict) -> None:
    """Log why ``key`` (static, tree, signature, donated) missed ``jitted``'s cache (a no-op
    unless ``jax_explain_cache_misses`` is on)."""
    if not config.read("jax_explain_cache_misses"):
        return
    fun = jitted.fun
    code = getattr(fun, "__code__", None)
    src = "" if code is None else f" defined at {code.co_filename}:{code.co_firstlineno}"
    callsite = _callsite()
    msg = [f"TRACING CACHE MISS at {callsite}:"]
    if not jitted._cache:
        msg.append(f"  never seen function:\n    {jitted.__name__} id={id(fun)}{src}")
        if callsite in _seen_callsites:
            msg.append("  but seen another function defined on the same line; maybe the "
                       "function is\n  being re-defined repeatedly, preventing caching?")
        _seen_callsites.add(callsite)
    else:
        msg.append(f"  for {jitted.__name__}{src}")
        msg.append("  all previously seen cache keys differ. For the closest previous key:")
        msg.append("  " + min(_difference(key, old, params) for old in jitted._cache)[1])
    logger.warning("\n".join(msg))


def _callsite() -> str:
    """The first frame outside funcgrad: the user's call (JAX's summarised source info)."""
    frame = sys._getframe(1)
    while frame is not None and internal(frame.f_code.co_filename):
        frame = frame.f_back
    if frame is None:
        return "<unknown>"
    return f"{frame.f_code.co_filename}:{frame.f_lineno} ({frame.f_code.co_name})"


def _difference(new: tuple, old: tuple, params: dict) -> tuple[int, str]:
    """(severity, JAX's explanation) of how signature ``new`` differs from ``old``."""
    (new_static, new_tree, new_sig, _), (old_static, old_tree, old_sig, _) = new, old
    if new_tree != old_tree:
        return 1, (f"different input pytree:\n  * now {new_tree} and before {old_tree}, so "
                   "the pytree structures differ")
    if new_static != old_static:
        diffs = [f"  * static argument {_name(k, params)} differs: now {a!r} and before {b!r}"
                 for (k, a), (_, b) in zip(new_static, old_static) if a != b]
        return 2, "different static arguments:\n" + "\n".join(diffs)
    names = _leaf_names(new_tree, params, new_static)
    diffs = [f"  * at {name}, now {_type(a)} and before {_type(b)}"
             for name, a, b in zip(names, new_sig, old_sig) if a != b]
    if diffs:
        return 3, "different input types:\n" + "\n".join(diffs)
    return 4, "cache miss explanation unavailable"


def _name(k: Any, params: dict) -> str:
    return params.get(k, f"args[{k}]") if isinstance(k, int) else k


def _leaf_names(tree: Any, params: dict, static: tuple) -> list:
    """Each dynamic leaf's name as JAX writes it: the parameter, then the path inside."""
    static_positions = {k for k, _ in static if isinstance(k, int)}
    positions = [i for i in range(len(params) + len(static_positions) + tree.num_leaves)
                 if i not in static_positions]
    names = []
    for path, _ in tree_util.tree_leaves_with_path(tree.unflatten([0] * tree.num_leaves)):
        first, rest = path[1], tree_util.keystr(tuple(path[2:]))
        key = getattr(first, "idx", getattr(first, "key", first))
        head = _name(positions[key], params) if path[0].idx == 0 else str(key)
        names.append(head + rest)
    return names


def _type(sig: tuple) -> str:
    """JAX's short type text (``f32[3]``) of one leaf's signature."""
    if len(sig) == 1:
        return f"{sig[0].__name__}{{weak_type=True}}"
    shape, dtype = sig[0], sig[1]
    short = {"f": "f", "i": "i", "u": "u", "c": "c", "b": "bool"}[dtype.kind]
    bits = "" if dtype.kind == "b" else str(dtype.itemsize * 8)
    return f"{short}{bits}[{','.join(map(str, shape))}]"
