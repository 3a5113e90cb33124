"""JAX's ``jax.debug``: `print` and `callback` see the values of arrays wherever they are
called, inside `jit` (each time the compiled program runs, not only while it is traced),
`vmap` (once per example, in order), `grad` and `jvp` (the primal values; nothing is
differentiated through them). Calls always run in program order, so ``ordered`` is accepted
and changes nothing. `breakpoint`: funcgrad/debug/_debugger.py.
"""
from __future__ import annotations

import builtins
import string
from typing import Any

from funcgrad.debug._callback import callback
from funcgrad.debug._debugger import (CliDebugger, DebuggerFrame, breakpoint, get_debugger,
                                      register_debugger)

__all__ = ["print", "callback", "breakpoint", "DebuggerFrame", "CliDebugger",
           "register_debugger", "get_debugger"]


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
