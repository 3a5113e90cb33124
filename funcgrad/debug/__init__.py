"""JAX's ``jax.debug``: `print` and `callback` see the values of arrays wherever they are
called, inside `jit` (each time the compiled program runs, not only while it is traced),
`vmap` (once per example, in order), `grad` and `jvp` (the primal values; nothing is
differentiated through them). Calls always run in program order, so ``ordered`` is accepted
and changes nothing.
"""
from __future__ import annotations

import builtins
import string
from typing import Any, Callable

from funcgrad import tree_util
from funcgrad.array import Array, new_array
from funcgrad.core import bind
from funcgrad.primitives.debugging import debug_callback
import funcgrad.numpy as fnp

__all__ = ["print", "callback"]


def callback(callback: Callable[..., Any], *args: Any, ordered: bool = False,
             **kwargs: Any) -> None:
    """Call ``callback(*args, **kwargs)`` for its effect, with every array leaf of the
    arguments as a concrete funcgrad Array (its value at that point of the program)."""
    del ordered  # (every call runs in program order)
    leaves, tree = tree_util.tree_flatten((args, kwargs))
    arrays = [x if isinstance(x, Array) else fnp.asarray(x) for x in leaves]

    def flat_callback(*raws: Any) -> None:
        a, k = tree.unflatten([new_array(r) for r in raws])
        callback(*a, **k)
    bind(debug_callback, arrays, {"callback": flat_callback})


def print(fmt: str, *args: Any, ordered: bool = False, **kwargs: Any) -> None:  # noqa: A001
    """Print ``fmt.format(*args, **kwargs)`` with the arrays' values, as `callback` sees
    them. ``fmt`` must name its fields (``{x}``, ``{}``, ``{0}``); an f-string would have
    formatted the tracers while tracing, once."""
    _check_fields(fmt, args, kwargs)
    callback(lambda *a, **k: builtins.print(fmt.format(*a, **k)), *args, ordered=ordered,
             **kwargs)


def _check_fields(fmt: str, args: tuple, kwargs: dict) -> None:
    """A clear error for a format string whose fields the arguments do not fill (at the
    call, rather than from inside the compiled program)."""
    automatic = 0
    for _, field, _, _ in string.Formatter().parse(fmt):
        if field is None:
            continue
        name = field.split(".")[0].split("[")[0]
        if name == "":
            name, automatic = str(automatic), automatic + 1
        if name.isdigit() and int(name) >= len(args) or not name.isdigit() and name not in kwargs:
            raise ValueError(f"funcgrad.debug.print: the format string {fmt!r} has the field "
                             f"{{{field}}}, which no argument fills; pass it as "
                             f"{'a positional argument' if name.isdigit() else name + '=...'}")
