"""Unary elementwise primitives.

For an elementwise function the VJP rule ``g * f'(x)`` is its own transpose, so one rule
serves reverse and forward mode (``unary`` declares it as both); functions that are not
holomorphic on complex inputs (abs, angle, real, imag, conj) declare their JVP apart.
Rules read ``x`` or ``out``, whichever is cheaper to keep (tanh keeps only its output).
"""
from __future__ import annotations

from typing import Any, Callable

import numpy as np

from funcgrad.core import ZERO, Primitive
from . import sampling


def unary(name: str, impl: Callable, rule: Any, *, jvp: Any = None,
          domain: tuple = (-2.0, 2.0), signed: bool = False, complex_: bool = True,
          **kwargs: Any) -> Primitive:
    """Declare an elementwise primitive whose rule serves as VJP and (by default) JVP."""
    p = Primitive(name, impl, sample=sampling.elementwise(1, domain, signed, complex_),
                  **kwargs)
    p.defvjp(rule)
    p.defjvp(rule if jvp is None else jvp)
    return p


neg = unary("neg", np.negative, lambda g: -g)
sin = unary("sin", np.sin, lambda g, x: g * cos(x))
cos = unary("cos", np.cos, lambda g, x: -g * sin(x))
exp = unary("exp", np.exp, lambda g, out: g * out)
log = unary("log", np.log, lambda g, x: g / x, domain=(0.1, 2.0))
tanh = unary("tanh", np.tanh, lambda g, out: g * (1 - out * out))
sqrt = unary("sqrt", np.sqrt, lambda g, out: g / (2 * out), domain=(0.1, 2.0))
floor = unary("floor", np.floor, ZERO, complex_=False)
