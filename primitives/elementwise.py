"""Unary elementwise primitives.

For an elementwise function the VJP rule ``g * f'(x)`` is its own transpose, so one rule
serves reverse and forward mode (``unary`` declares it as both). On complex inputs the
holomorphic functions use the same rule (JAX's convention: the VJP is the transpose
``g * f'(z)``, not the adjoint); the ones that are not holomorphic (abs, real, imag, conj)
declare their JVP apart. Rules read ``x`` or ``out``, whichever is cheaper to keep (tanh
keeps only its output).

Piecewise-constant functions (floor, ceil, trunc, rint, round, sign) have the derivative
`ZERO`, as in JAX; their samplers draw values away from the jumps so that the finite
differences agree. Predicates (isnan, ...) are not differentiable at all.
"""
from __future__ import annotations

import math
from typing import Any, Callable

import numpy as np

from funcgrad.core import ZERO, Primitive
from . import sampling
from .kernels import elementwise as kernels
from .samplers import elementwise as samplers
from .select import nonzero_or_one
from .promotion import DEFAULT_FLOAT, INEXACT_OPS, NUMERIC_OPS, SAME, Promotion
from . import batching as B
from .batching import broadcasting

LN2, LN10 = math.log(2.0), math.log(10.0)


def unary(name: str, impl: Callable, rule: Any, *, jvp: Any = None,
          domain: tuple = (-2.0, 2.0), signed: bool = False, complex_: bool = True,
          sample: Callable | None = None, params: dict | None = None,
          promote: Promotion | None = INEXACT_OPS, **kwargs: Any) -> Primitive:
    """Declare an elementwise primitive whose rule serves as VJP and (by default) JVP.

    The sampler draws values in ``domain`` (mirrored to ±domain when ``signed``), and a
    complex case when ``complex_``; ``params`` are the static params the sampler binds.
    ``promote``: the dtype x computes in (`funcgrad.primitives.promotion`; by default a
    float for integers, as JAX's sin and exp)."""
    sample = sample or sampling.elementwise(1, domain, signed, complex_, params)
    p = Primitive(name, impl, params=tuple(params or ()), sample=sample, promote=promote,
                  **kwargs)
    p.defvjp(rule)
    p.defjvp(rule if jvp is None else jvp)
    return p


def predicate(name: str, impl: Callable, inputs: tuple = ("x",),
              promote: Promotion | None = SAME) -> Primitive:
    """Declare a non-differentiable elementwise function (a predicate or a bit operation),
    its operands promoted to their common dtype (``promote``)."""
    return Primitive(name, impl, inputs, differentiable=False, promote=promote)


def is_complex(x: Any) -> bool:
    return np.iscomplexobj(x)


# -- abs, whose complex derivative is not holomorphic -----------------------------------

def _abs_vjp(g: Any, x: Any) -> Any:
    """Real: g sign(x) (0 at 0, the mean of the one-sided slopes, as maximum(x, -x) gives).
    Complex: g conj(z)/|z|, 0 at z = 0 (JAX)."""
    if is_complex(x):
        return g * conj(x) / nonzero_or_one(abs(x))
    return g * sign(x)


def _abs_jvp(t: Any, x: Any) -> Any:
    return real(_abs_vjp(t, x)) if is_complex(x) else _abs_vjp(t, x)


# the derivative of tanh, declared as a primitive so that tanh's VJP computes it in one
# fused call (a kernel); its own rules (in funcgrad ops, like every rule) make it
# differentiable again
tanh_backward = Primitive("tanh_backward", kernels.tanh_backward, ("g", "out"), fresh=True,
                          sample=sampling.elementwise(2, (-1.2, 1.2), complex_=True),
                          doc="g * (1 - out**2): the cotangent of tanh's input.")
tanh_backward.defvjp(lambda ct, out: tanh_backward(ct, out),
                     lambda ct, g, out: -2 * ct * g * out)
tanh_backward.defjvp(lambda t, out: tanh_backward(t, out),
                     lambda t, g, out: -2 * t * g * out)


# -- the table ----------------------------------------------------------------------------

neg = unary("neg", np.negative, lambda g: -g, promote=SAME)
sin = unary("sin", np.sin, lambda g, x: g * cos(x))
cos = unary("cos", np.cos, lambda g, x: -g * sin(x))
tan = unary("tan", np.tan, lambda g, out: g * (1 + out * out), domain=(-1.2, 1.2))
arcsin = unary("arcsin", np.arcsin, lambda g, x: g / sqrt(1 - x * x), domain=(-0.9, 0.9))
arccos = unary("arccos", np.arccos, lambda g, x: -g / sqrt(1 - x * x), domain=(-0.9, 0.9))
arctan = unary("arctan", np.arctan, lambda g, x: g / (1 + x * x), domain=(0.3, 2.0),
               signed=True)
sinh = unary("sinh", np.sinh, lambda g, x: g * cosh(x))
cosh = unary("cosh", np.cosh, lambda g, x: g * sinh(x))
tanh = unary("tanh", np.tanh, lambda g, out: tanh_backward.bind(g, out),
             domain=(-1.2, 1.2))
arcsinh = unary("arcsinh", np.arcsinh, lambda g, x: g / sqrt(x * x + 1), domain=(0.3, 2.0),
                signed=True)
arccosh = unary("arccosh", np.arccosh, lambda g, x: g / (sqrt(x - 1) * sqrt(x + 1)),
                domain=(1.1, 3.0))
arctanh = unary("arctanh", np.arctanh, lambda g, x: g / (1 - x * x), domain=(-0.9, 0.9))
exp = unary("exp", np.exp, lambda g, out: g * out)
exp2 = unary("exp2", np.exp2, lambda g, out: g * out * LN2)
expm1 = unary("expm1", kernels.expm1, lambda g, out: g * (out + 1))
log = unary("log", np.log, lambda g, x: g / x, domain=(0.1, 2.0))
log2 = unary("log2", np.log2, lambda g, x: g / (x * LN2), domain=(0.1, 2.0))
log10 = unary("log10", np.log10, lambda g, x: g / (x * LN10), domain=(0.1, 2.0))
log1p = unary("log1p", np.log1p, lambda g, x: g / (x + 1), domain=(-0.5, 2.0))
sqrt = unary("sqrt", np.sqrt, lambda g, out: g / (2 * out), domain=(0.1, 2.0))
cbrt = unary("cbrt", np.cbrt, lambda g, out: g / (3 * out * out), domain=(0.2, 2.0),
             signed=True, complex_=False)
square = unary("square", np.square, lambda g, x: g * (2 * x), promote=NUMERIC_OPS)
reciprocal = unary("reciprocal", np.reciprocal, lambda g, out: -g * out * out,
                   domain=(0.3, 2.0), signed=True)
sinc = unary("sinc", kernels.sinc_derivative,
             lambda g, x, order: g * sinc(x, order=order + 1), domain=(-1.0, 1.0),
             params={"order": 0})
abs = unary("abs", np.abs, _abs_vjp, jvp=_abs_jvp, domain=(0.2, 2.0), signed=True,
            promote=SAME)
real = unary("real", np.real, lambda g: g, jvp=lambda t: real(t), view=True,
             promote=SAME)
imag = unary("imag", np.imag, lambda g: g * -1j, jvp=lambda t: imag(t), view=True,
             promote=SAME)
conj = unary("conj", np.conjugate, lambda g: conj(g), promote=SAME)
# complex numbers as pairs of reals (a last axis of 2) and back, sharing memory (PyTorch's
# view_as_real / view_as_complex): each is the other's transpose, up to a conjugation
view_as_real = Primitive("view_as_real", kernels.view_as_real, view=True,
                         sample=samplers.complex_values,
                         doc="A complex array as (..., 2) reals: real and imaginary parts.")
view_as_complex = Primitive("view_as_complex", kernels.view_as_complex, view=True,
                            sample=samplers.real_pairs,
                            doc="(..., 2) reals as the complex array x[..., 0] + i x[..., 1].")
view_as_real.defvjp(lambda g: conj(view_as_complex(g)))
view_as_real.defjvp(lambda t: view_as_real(t))
view_as_complex.defvjp(lambda g: view_as_real(conj(g)))
view_as_complex.defjvp(lambda t: view_as_complex(t))
view_as_real.defbatch(lambda args, dims: (view_as_real(args[0]), dims[0]))
view_as_complex.defbatch(lambda args, dims: (view_as_complex(B.to_front(args[0], dims[0])),
                                             0))

# the identity into new memory: what the PyTorch facade's clone() and contiguous() need,
# now that views (transpose, slices) share their input's memory
copy = unary("copy", lambda x, order: np.copy(x, order=order), lambda g: g, fresh=True,
             params={"order": "K"}, promote=SAME)

sign = unary("sign", np.sign, ZERO, domain=(0.2, 2.0), signed=True, complex_=False,
            promote=SAME)
floor = unary("floor", np.floor, ZERO, sample=samplers.steps(), promote=SAME)
ceil = unary("ceil", np.ceil, ZERO, sample=samplers.steps(), promote=SAME)
trunc = unary("trunc", np.trunc, ZERO, sample=samplers.steps(), promote=SAME)
rint = unary("rint", np.rint, ZERO, sample=samplers.steps(), promote=DEFAULT_FLOAT)
round = unary("round", lambda x, decimals: np.round(x, decimals), ZERO,
              params={"decimals": 1}, sample=samplers.steps({"decimals": 1}, 0.1),
              promote=SAME)
# the gap to the next float: constant between powers of two (drawn away from them)
spacing = unary("spacing", np.spacing, ZERO, domain=(1.1, 1.9), signed=True, complex_=False)


# modf: (x - trunc(x), trunc(x)), numpy's values (modf(inf) is (0, inf)); the fractional
# part has slope 1, the integral part 0
modf = Primitive("modf", lambda x: tuple(np.modf(x)), multiple_results=True,
                 promote=INEXACT_OPS,
                 sample=samplers.steps(), doc="(fractional part, integral part) of x.")
modf.defvjp(lambda g: g[0])
modf.defjvp(lambda t: (t, t * 0))
frexp_exponent = Primitive("frexp_exponent", lambda x: np.frexp(x)[1], differentiable=False,
                           doc="the exponent e of x = m 2**e, 0.5 <= |m| < 1 (numpy's frexp).")

isfinite = predicate("isfinite", np.isfinite)
isnan = predicate("isnan", np.isnan)
isinf = predicate("isinf", np.isinf)
signbit = predicate("signbit", np.signbit)
logical_not = predicate("logical_not", np.logical_not)
invert = predicate("invert", np.invert)
bitwise_count = predicate("bitwise_count", np.bitwise_count)


# -- batching rules (vmap): see funcgrad.primitives.batching ------------------------------
for _p in (tanh_backward, neg, sin, cos, tan, arcsin, arccos, arctan, sinh, cosh, tanh, arcsinh,
           arccosh, arctanh, exp, exp2, expm1, log, log2, log10, log1p, sqrt, cbrt, square,
           reciprocal, sinc, abs, real, imag, conj, copy, sign, floor, ceil, trunc, rint, round,
           spacing, modf, frexp_exponent, isfinite, isnan, isinf, signbit, logical_not, invert,
           bitwise_count):
    broadcasting(_p)
