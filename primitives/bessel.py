"""Bessel functions: modified (i0, i1, iv and their exponentially scaled forms i0e, i1e,
ive) and of the first and second kinds (j0, j1, jv, y0, y1, yv), from scipy.special (i0
and i1 also without scipy: numpy's i0 and a power series, `kernels.special`).

Their x-derivatives are Bessel functions of the neighbouring orders, so every order of
derivative is available:

| primitive | d/dx                                                  |
|-----------|-------------------------------------------------------|
| i0        | i1(x)                                                 |
| i1        | i0(x) - i1(x) / x (1/2 at 0)                          |
| iv(v, x)  | (iv(v - 1, x) + iv(v + 1, x)) / 2                     |
| i0e, i1e, | the same for e^-|x| iv(v, x), minus sign(x) times     |
| ive       | the function itself                                   |
| j0        | -j1(x)                                                |
| j1        | (j0(x) - jv(2, x)) / 2                                |
| jv(v, x)  | (jv(v - 1, x) - jv(v + 1, x)) / 2                     |
| y0, y1, yv| as j0, j1, jv                                         |

The derivative in the order v is not implemented (no closed form; JAX has none either).
"""
from __future__ import annotations

from typing import Any, Callable

from funcgrad.core import Primitive
from . import sampling
from .binary import where
from .elementwise import sign, unary
from .samplers import special as samples
from .special import _impl, not_implemented
from .promotion import INEXACT_OPS
from .batching import broadcasting

_ORDER_NOTE = " (the order of a Bessel function is a parameter: there is no closed form)"


def _with_order(name: str, x_rule: Callable, positive: bool) -> Primitive:
    p = Primitive(name, _impl(name), ("v", "x"), promote=INEXACT_OPS,
                  sample=sampling.custom(samples.bessel_order_cases(name, positive)),
                  doc=f"scipy.special.{name}(v, x): a Bessel function of real order v.")
    rules = (not_implemented(name, "v", _ORDER_NOTE), x_rule)
    p.defvjp(*rules)
    p.defjvp(*rules)
    return p


def _bessel(name: str, rule: Any, domain: tuple = (0.3, 3.0),
            signed: bool = True) -> Primitive:
    return unary(name, _impl(name), rule, domain=domain, signed=signed, complex_=False)


def _i1_rule(g: Any, x: Any, out: Any) -> Any:
    """I_1'(x) = I_0(x) - I_1(x) / x, 1/2 at x = 0 (no scipy needed, like the values)."""
    zero = x == 0
    return g * where(zero, 0.5, i0(x) - out / where(zero, 1.0, x))


def _i1e_rule(g: Any, x: Any, out: Any) -> Any:
    """i1e'(x) = i0e(x) - i1e(x) / x - sign(x) i1e(x), 1/2 at x = 0: 0 at +-inf (the
    neighbouring-order form needs ive(2, +-inf), which scipy gives as NaN)."""
    zero = x == 0
    return g * where(zero, 0.5, i0e(x) - out / where(zero, 1.0, x) - sign(x) * out)


def _iv_rule(g: Any, v: Any, x: Any) -> Any:
    return g * (iv(v - 1, x) + iv(v + 1, x)) * 0.5


def _ive_rule(g: Any, v: Any, x: Any, out: Any) -> Any:
    return g * ((ive(v - 1, x) + ive(v + 1, x)) * 0.5 - sign(x) * out)


i0 = _bessel("i0", lambda g, x: g * i1(x))
i1 = _bessel("i1", _i1_rule)
i0e = _bessel("i0e", lambda g, x, out: g * (i1e(x) - sign(x) * out))
i1e = _bessel("i1e", lambda g, x, out: _i1e_rule(g, x, out))
iv = _with_order("iv", _iv_rule, positive=False)
ive = _with_order("ive", _ive_rule, positive=False)

j0 = _bessel("j0", lambda g, x: -g * j1(x))
j1 = _bessel("j1", lambda g, x: g * (j0(x) - jv(2.0, x)) * 0.5)
jv = _with_order("jv", lambda g, v, x: g * (jv(v - 1, x) - jv(v + 1, x)) * 0.5,
                 positive=False)

y0 = _bessel("y0", lambda g, x: -g * y1(x), domain=(0.5, 4.0), signed=False)
y1 = _bessel("y1", lambda g, x: g * (y0(x) - yv(2.0, x)) * 0.5, domain=(0.5, 4.0),
             signed=False)
yv = _with_order("yv", lambda g, v, x: g * (yv(v - 1, x) - yv(v + 1, x)) * 0.5,
                 positive=True)

__all__ = ["i0", "i1", "i0e", "i1e", "iv", "ive", "j0", "j1", "jv", "y0", "y1", "yv"]


# -- batching rules (vmap): see funcgrad.primitives.batching ------------------------------
for _p in (i0, i1, i0e, i1e, iv, ive, j0, j1, jv, y0, y1, yv):
    broadcasting(_p)
