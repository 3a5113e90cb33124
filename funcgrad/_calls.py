"""How a concrete primitive call is carried out beside `funcgrad.core.bind`: which
backend's implementation runs (`by_backend`), and whether the result is weakly typed
(`weak_result`, JAX's ``exp(2.0)`` being a weak float)."""
from __future__ import annotations

from typing import Any, Callable, Sequence

from funcgrad.array import WEAK_TYPES

__all__ = ["by_backend", "weak_result"]


def by_backend(name: str, impls: dict) -> Callable:
    """An implementation that calls the one of the backend its array inputs live on."""
    cpu = impls.get("cpu")

    def impl(*raws: Any, **params: Any) -> Any:
        on_gpu = any(hasattr(r, "__cuda_array_interface__") for r in raws)
        fn = impls.get("gpu") if on_gpu else cpu
        if fn is None:
            where = "gpu" if on_gpu else "cpu"
            raise NotImplementedError(
                f"primitive {name!r} has no implementation for the {where} backend (it has: "
                f"{', '.join(sorted(impls)) or 'none'}); register one with "
                f"{name}.def_impl({where!r}, fn), or move the inputs with "
                "funcgrad.device_put")
        return fn(*raws, **params)
    impl.__name__ = name
    return impl


# weak operands, and None: an absent one (getitem's index array)
_WEAK_OPERANDS = WEAK_TYPES | {type(None)}


def weak_result(prim: Any, args: Sequence) -> bool:
    """Whether ``prim``'s result on concrete operands ``args`` is weakly typed: it keeps
    weak types and every deciding operand is weak (a Python number or a weak Array; JAX:
    ``exp(2.0)`` is a weak float)."""
    if not prim.keeps_weak:
        return False
    which = prim.weak_operands
    for a in args if which is None else args[which]:
        if type(a) not in _WEAK_OPERANDS:
            return False
    return True
