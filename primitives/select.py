"""`where`: the selection every piecewise rule is written with (abs, relu, maximum, power's
special cases...), in a module of its own so that every family can import it.

where is linear in x and y: its rules select the cotangent (or tangent) the same way, and
the condition gets no derivative. Its kernel selects with a bit mask where that is faster
(`kernels.elementwise.where`).
"""
from __future__ import annotations

from typing import Any

from funcgrad.core import ZERO, Primitive
from .kernels import elementwise as kernels
from .samplers import elementwise as samplers
from .batching import broadcasting
from .promotion import AFTER_CONDITION

__all__ = ["where", "nonzero_or_one"]

where = Primitive("where", kernels.where, ("condition", "x", "y"), sample=samplers.where,
                  fresh=True, promote=AFTER_CONDITION, keeps_weak=slice(1, None),
                  doc="x where condition holds, else y (broadcast together, promoted to "
                      "one dtype).")
where.defvjp(ZERO, lambda g, condition: where(condition, g, 0),
             lambda g, condition: where(condition, 0, g))
where.defjvp(ZERO, lambda t, condition: where(condition, t, 0),
             lambda t, condition: where(condition, 0, t))


def nonzero_or_one(a: Any) -> Any:
    """``a`` with its zeros replaced by ones (a safe divisor; JAX's ``_replace_zero``)."""
    return where(a == 0, 1, a)


# -- batching rules (vmap): see funcgrad.primitives.batching ------------------------------
broadcasting(where)
