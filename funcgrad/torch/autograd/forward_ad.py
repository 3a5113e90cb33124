"""``torch.autograd.forward_ad``: forward-mode AD with dual tensors, on funcgrad's `jvp`.

Entering `dual_level` pushes a funcgrad forward-mode trace; `make_dual` gives a tensor a
tracer of that trace (its primal and tangent) as its value, so every op on it carries the
tangent by the registry's JVP rules, and `unpack_dual` reads both back. Leaving the level
turns the dual tensors made in it back into plain tensors (PyTorch drops their tangents),
so none holds a finished trace's tracer.
"""
from __future__ import annotations

import weakref
from typing import Any, NamedTuple

from funcgrad.torch._runtime import grad_mode
from funcgrad.torch._runtime.dual import current, enter_dual_level, exit_dual_level
from funcgrad.torch._tensor import Tensor, proxy

__all__ = ["dual_level", "make_dual", "unpack_dual", "UnpackedDualTensor",
           "enter_dual_level", "exit_dual_level"]


class UnpackedDualTensor(NamedTuple):
    primal: Any
    tangent: Any


class dual_level:
    """Context manager: ``with dual_level(): ...`` (the level number is its value)."""

    def __enter__(self) -> int:
        return enter_dual_level()

    def __exit__(self, *exc: Any) -> None:
        exit_dual_level()


def _check_float(what: str, t: Any) -> None:
    if not (t.is_floating_point() or t.is_complex()):
        raise ValueError(f"Expected {what} to be floating point or complex, but got: "
                         f"{t.dtype}")


def make_dual(tensor: Any, tangent: Any, *, level: int | None = None) -> Any:
    """A tensor with ``tensor``'s value and ``tangent`` as its forward gradient; it feeds
    backward gradients into ``tensor`` (a view of it, as in PyTorch)."""
    lvl = current(level)
    _check_float("primal", tensor)
    _check_float("tangent", tangent)
    if tuple(tensor.shape) != tuple(tangent.shape):
        raise RuntimeError(
            "Trying to set a forward gradient that has a different size than that of the "
            f"original Tensor, this is not supported. Tensor is of size {list(tensor.shape)} "
            f"while the given forward gradient is of size {list(tangent.shape)}.")
    t_value = tangent._data
    if t_value.dtype != tensor._data.dtype:
        t_value = t_value.astype(tensor._data.dtype)
    dual = tensor.view(tuple(tensor.shape))  # a view (ViewBackward0 when it requires grad)
    dual._a = lvl.trace.new(dual._data, t_value)  # its value, now with a tangent
    lvl.tensors.append(weakref.ref(dual))
    if t_value is tangent._data:  # unpack_dual gives this very tangent back, as PyTorch
        lvl.tangents[id(t_value)] = tangent
    return dual


def unpack_dual(tensor: Any, *, level: int | None = None) -> UnpackedDualTensor:
    """(primal, tangent) of ``tensor``; the tangent is None for a tensor that is not dual
    at this level (or outside any level)."""
    levels = grad_mode.state.dual_levels
    if not levels:
        return UnpackedDualTensor(tensor, None)
    trace = current(level).trace
    (primal,), (tangent,) = trace.split([tensor._data])
    if tangent is None:
        return UnpackedDualTensor(tensor, None)
    given = current(level).tangents.get(id(tangent))
    if given is None or given._data is not tangent:
        given = proxy(tangent, (None, 0))
    return UnpackedDualTensor(proxy(primal, tensor._edge()), given)


def dual_tangents(args: tuple) -> list | None:
    """The tangent tensors of ``args`` at the current level (zeros for a tensor without
    one, None for a non-tensor), or None when no argument is dual (custom Functions)."""
    levels = grad_mode.state.dual_levels
    if not levels:
        return None
    tangents = [unpack_dual(a).tangent if isinstance(a, Tensor) else None for a in args]
    if all(t is None for t in tangents):
        return None
    return [t if t is not None or not isinstance(a, Tensor) else a.detach() * 0
            for a, t in zip(args, tangents)]


def primal_of(x: Any) -> Any:
    """A dual tensor's primal (feeding its gradients where the dual does); else ``x``."""
    return unpack_dual(x).primal if isinstance(x, Tensor) else x


def tangent_of(tensor: Any) -> Any:
    """The tangent of a dual tensor of the current level as a tensor, or None (printing)."""
    levels = grad_mode.state.dual_levels
    return unpack_dual(tensor).tangent if levels else None


