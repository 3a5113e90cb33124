"""`Partial`: a function with bound arguments that is a pytree of those arguments."""
from __future__ import annotations

import functools
from typing import Any, Callable

from ._registry import register_pytree_node

__all__ = ["Partial"]


class _HashableCallableShim:
    """Holds a `functools.partial` given to `Partial`, so that functools does not merge its
    bound arguments into the new Partial's: only the outer arguments are the tree's
    children, the inner ones stay part of the (static) function."""

    __slots__ = ("fun",)

    def __init__(self, fun: functools.partial):
        self.fun = fun

    def __call__(self, *args: Any, **kwargs: Any) -> Any:
        return self.fun(*args, **kwargs)

    def __getattr__(self, name: str) -> Any:  # func, args, keywords: the partial's
        return getattr(self.fun, name)

    def __eq__(self, other: object) -> bool:
        if isinstance(other, _HashableCallableShim):
            return self.fun == other.fun
        return self.fun == other

    def __hash__(self) -> int:
        return hash(self.fun)

    def __repr__(self) -> str:
        return f"_HashableCallableShim({self.fun!r})"


class Partial(functools.partial):
    """`functools.partial` as a pytree: the bound positional and keyword arguments are its
    children, the function is static. ``Partial(f)`` makes any function a valid transform
    argument."""

    def __new__(cls, func: Callable, *args: Any, **kwargs: Any) -> "Partial":
        if isinstance(func, functools.partial):
            func = _HashableCallableShim(func)
        return super().__new__(cls, func, *args, **kwargs)


register_pytree_node(Partial, lambda p: ((p.args, p.keywords), p.func),
                     lambda func, xs: Partial(func, *xs[0], **xs[1]))

