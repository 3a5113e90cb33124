"""`fwd_and_bwd`: JAX's split of `vjp` into a forward and a backward function.

It sits above `jit` (it jits both halves), which itself sits above `grad`. The residuals
``fwd`` returns are the `VJPFunction` itself: a pytree of the values its tape keeps, so they
cross a `jit` boundary and ``bwd`` compiles once for all of them.
"""
from __future__ import annotations

from typing import Any, Callable, Sequence

from .grad import argnums_partial, vjp
from .jit import jit

__all__ = ["fwd_and_bwd"]


def fwd_and_bwd(fun: Callable, argnums: int | Sequence[int], has_aux: bool = False,
                jitted: bool = True) -> tuple[Callable, Callable]:
    """``(fwd, bwd)``: ``fwd(*args)`` is ``(fun(*args), residuals)`` (with ``has_aux``,
    ``(out, residuals, aux)``); ``bwd(residuals, ct)`` the cotangents of the arguments
    ``argnums`` (one for an int, a tuple for a sequence). Jitted by default, since jitting
    only the backward would retrace it for every new residual object."""
    if not callable(fun):
        raise TypeError(f"Expected a callable value, got {fun}")
    name = f"fwd_and_bwd({getattr(fun, '__name__', 'fun')})"

    def fwd(*args: Any) -> tuple:
        partial, dyn = argnums_partial(fun, argnums, args, {}, name)
        return vjp(partial, *dyn, has_aux=has_aux)

    def bwd(f_vjp: Any, outgrad: Any) -> Any:
        g = f_vjp(outgrad)
        return g[0] if isinstance(argnums, int) else g

    return (jit(fwd), jit(bwd)) if jitted else (fwd, bwd)
