"""Forward-mode AD's dual levels: the state a `Tensor` needs for ``torch.autograd.forward_ad``.

Entering a level pushes a funcgrad forward-mode trace; a dual tensor holds a tracer of that
trace as its value, so every op on it carries the tangent by the registry's JVP rules.
Leaving the level turns the dual tensors made in it back into plain tensors (PyTorch drops
their tangents), so none holds a finished trace's tracer. The user-facing functions
(`make_dual`, `unpack_dual`) sit above the tensor, in `funcgrad.torch.autograd.forward_ad`.
"""
from __future__ import annotations

import weakref
from typing import Any

from funcgrad.core import new_trace
from funcgrad.transforms.jvp import JVPTrace
from funcgrad.torch._runtime import grad_mode

__all__ = ["current", "enter_dual_level", "exit_dual_level", "attach_tangent", "track"]

_NO_LEVEL = ("Trying to create a dual Tensor for forward AD but no level exists, make sure "
             "to enter_dual_level() first.")


class _Level:
    """An entered dual level: its forward-mode trace and the tensors that hold its
    tracers (weakly: they are cleared when the level is left)."""

    def __init__(self) -> None:
        self.trace = JVPTrace()
        self.context = new_trace(self.trace)
        self.context.__enter__()
        self.tensors: list = []
        self.tangents: dict = {}  # id(tangent array) -> the tangent tensor given for it

    def holds(self, tensor: Any) -> bool:
        return self.trace.split([tensor._data])[1][0] is not None

    def leave(self) -> None:
        """Retire the trace; the dual tensors still alive keep their primals."""
        for ref in self.tensors:
            t = ref()
            if t is not None and self.holds(t):
                t._a = self.trace.split([t._data])[0][0]
        self.context.__exit__(None, None, None)


def current(level: int | None) -> _Level:
    levels = grad_mode.state.dual_levels
    if not levels:
        raise RuntimeError(_NO_LEVEL)
    if level is not None and level != len(levels) - 1:
        raise RuntimeError(f"Trying to use forward AD level {level} but the current level "
                           f"is {len(levels) - 1}")
    return levels[-1]


def enter_dual_level() -> int:
    """Enter a new forward-AD level (PyTorch supports one at a time)."""
    state = grad_mode.state
    if state.dual_levels:
        raise RuntimeError("Nested forward mode AD is not supported at the moment")
    grad_mode.special.enter()
    state.dual_levels = [_Level()]
    return 0


def exit_dual_level(*, level: int | None = None) -> None:
    """Leave the current level; the tangents of its dual tensors are dropped."""
    current(level).leave()
    grad_mode.state.dual_levels = []
    grad_mode.special.exit()


def attach_tangent(tensor: Any, tangent: Any) -> None:
    """Make ``tensor`` dual at the current level with ``tangent``, keeping its graph."""
    lvl = current(None)
    value = tangent._data
    if value.dtype != tensor._data.dtype:
        value = value.astype(tensor._data.dtype)
    tensor._a = lvl.trace.new(tensor._data, value)
    lvl.tensors.append(weakref.ref(tensor))


def track(tensor: Any) -> None:
    """Remember an op result that holds the current level's tracer (cleared on leaving)."""
    levels = grad_mode.state.dual_levels
    if levels and levels[-1].holds(tensor):
        levels[-1].tensors.append(weakref.ref(tensor))
