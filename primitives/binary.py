"""Binary elementwise primitives (numpy broadcasting).

Rules return cotangents of the broadcast output shape; the tape sums them back to each
input's shape, so no rule unbroadcasts. As for unary functions, the elementwise VJP rules
are their own transposes and serve as JVP rules too.
"""
from __future__ import annotations

from typing import Any, Callable

import numpy as np

from funcgrad.core import Primitive
from . import sampling


def binary(name: str, impl: Callable, rule_x: Any, rule_y: Any, *, jvp: tuple | None = None,
           domain: Any = (-2.0, 2.0), signed: bool = False, complex_: bool = True,
           **kwargs: Any) -> Primitive:
    """Declare a broadcasting binary primitive with rules for x and y (VJP and JVP)."""
    p = Primitive(name, impl, ("x", "y"),
                  sample=sampling.elementwise(2, domain, signed, complex_), **kwargs)
    p.defvjp(rule_x, rule_y)
    p.defjvp(*(jvp or (rule_x, rule_y)))
    return p


add = binary("add", np.add, lambda g: g, lambda g: g)
sub = binary("sub", np.subtract, lambda g: g, lambda g: -g)
mul = binary("mul", np.multiply, lambda g, y: g * y, lambda g, x: g * x)
div = binary("div", np.true_divide, lambda g, y: g / y, lambda g, out, y: -g * out / y,
             domain=[(-2.0, 2.0), (0.2, 2.0)], signed=True)
