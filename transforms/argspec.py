"""The checks of a transform's argument numbers and names against the function's
signature (JAX's ``api_util._validate_argnums`` / ``_validate_argnames``): a
``static_argnums=3`` or a ``static_argnames="zz"`` naming no parameter would otherwise be
ignored silently, and the argument the user meant to be static would be traced."""
from __future__ import annotations

import inspect
from typing import Callable, Sequence

__all__ = ["validate_argnums", "validate_argnames", "validate_call_argnums"]

_POSITIONAL = (inspect.Parameter.POSITIONAL_ONLY, inspect.Parameter.POSITIONAL_OR_KEYWORD)
_KEYWORD = (inspect.Parameter.POSITIONAL_OR_KEYWORD, inspect.Parameter.KEYWORD_ONLY)


def _signature(fun: Callable) -> inspect.Signature | None:
    try:
        return inspect.signature(fun)
    except (TypeError, ValueError):  # a builtin without one: nothing to check against
        return None


def validate_argnums(fun: Callable, argnums: Sequence[int], what: str) -> None:
    """ValueError (JAX's text) if ``argnums`` (the option called ``what``) name positions
    ``fun`` does not take; a function with ``*args`` takes any."""
    sig = _signature(fun)
    if sig is None or not argnums:
        return
    params = sig.parameters.values()
    if any(p.kind is p.VAR_POSITIONAL for p in params):
        return
    n = sum(p.kind in _POSITIONAL for p in params)
    if -min(argnums) > n or max(argnums) >= n:
        raise ValueError(f"Jitted function has {what}={tuple(argnums)}, "
                         f"but only accepts {n} positional arguments.")


def validate_argnames(fun: Callable, argnames: Sequence[str], what: str) -> None:
    """ValueError (JAX's text) if ``argnames`` (the option called ``what``) name no
    keyword parameter of ``fun``; a function with ``**kwargs`` takes any but its
    positional-only ones."""
    sig = _signature(fun)
    if sig is None or not argnames:
        return
    params = sig.parameters
    positional_only = {n for n, p in params.items()
                       if p.kind in (p.POSITIONAL_ONLY, p.VAR_POSITIONAL)}
    if bad := positional_only & set(argnames):
        raise ValueError(f"Jitted function has invalid argnames {bad} in {what}. These are "
                         "positional-only")
    if any(p.kind is p.VAR_KEYWORD for p in params.values()):
        return
    if bad := set(argnames) - {n for n, p in params.items() if p.kind in _KEYWORD}:
        raise ValueError(f"Jitted function has invalid argnames {bad} in {what}. Function "
                         "does not take these args.")


def validate_call_argnums(argnums: Sequence[int], args: tuple, api: str, what: str) -> None:
    """ValueError (JAX's text for ``jax.checkpoint``) if ``argnums`` fall outside the
    positional arguments of a call (checked per call: the function may take ``*args``)."""
    n = len(args)
    if any(not isinstance(i, int) or not -n <= i < n for i in argnums):
        raise ValueError(f"the `{what}` argument to `{api}` can only take integer values "
                         f"greater than or equal to `-len(args)` and less than `len(args)`, "
                         f"but got {tuple(argnums)}, while `len(args)` = {n}")
