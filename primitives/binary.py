"""Binary elementwise primitives (numpy broadcasting), `relu` (a select against zero),
comparisons and bit logic.

Rules return cotangents of the broadcast output shape; the tape sums them back to each
input's shape, so no rule unbroadcasts. As for unary functions, the elementwise VJP rules
are their own transposes and serve as JVP rules too. Only add, sub, mul, div and power
accept complex inputs (holomorphic, JAX's convention); the others are real functions.

Derivatives at the points where a function is not differentiable follow JAX: maximum and
minimum split the cotangent 0.5/0.5 at ties, power's x-derivative is 0 where y == 0 and its
y-derivative uses log(x) with x == 0 replaced by 1, floor_divide has the derivative 0, and
mod's y-derivative is minus numpy's floored quotient (the q of divmod, see
`floored_quotient`), whose limit is right at an infinite y.
Comparisons and logical/bitwise operations are not differentiable.
"""
from __future__ import annotations

from typing import Any, Callable

import numpy as np

from funcgrad.core import ZERO, Primitive
from . import sampling
from .elementwise import exp, exp2, log, predicate, trunc
from .kernels import elementwise as kernels
from .samplers import elementwise as samplers
from .select import nonzero_or_one, where
from .promotion import INEXACT_FIRST, INEXACT_OPS, NUMERIC_OPS, SAME, Promotion
from .batching import broadcasting


def binary(name: str, impl: Callable, rule_x: Any, rule_y: Any, *, jvp: tuple | None = None,
           domain: Any = (-2.0, 2.0), signed: bool = False, complex_: bool = True,
           sample: Callable | None = None, promote: Promotion = SAME,
           **kwargs: Any) -> Primitive:
    """Declare a broadcasting binary primitive with rules for x and y (VJP and JVP), its
    operands promoted by ``promote`` (`funcgrad.primitives.promotion`: by default to their
    common dtype; `INEXACT_OPS` for true division and the other float functions)."""
    p = Primitive(name, impl, ("x", "y"), promote=promote,
                  sample=sample or sampling.elementwise(2, domain, signed, complex_), **kwargs)
    p.defvjp(rule_x, rule_y)
    p.defjvp(*(jvp or (rule_x, rule_y)))
    return p


# -- rules that need more than one line --------------------------------------------------

def _static_nonzero(y: Any) -> bool:
    """Whether y is a Python number other than 0 (as in ``x ** 2``)."""
    return isinstance(y, (int, float, complex)) and not isinstance(y, bool) and y != 0


def _pow_dx(g: Any, x: Any, y: Any) -> Any:
    """y x**(y-1), and 0 where y == 0 (no 0 * inf at x = 0), as JAX."""
    d = y * power(x, y - 1)
    return g * (d if _static_nonzero(y) else where(y == 0, 0, d))


def _pow_dy(g: Any, x: Any, out: Any) -> Any:
    """x**y log(x), with log(0) read as log(1) so that 0**y has a finite derivative."""
    return g * out * log(nonzero_or_one(x))


def _max_share_impl(g: Any, a: Any, b: Any) -> Any:
    """The part of g that goes to ``a`` in maximum(a, b): all where a > b, half at ties
    (JAX's convention). A kernel may look at the data: ties are rare, and without them the
    share is one select."""
    ties = a == b  # an array (a numpy bool for 0-d operands)
    if ties.any():
        return np.where(a > b, g, np.where(ties, g * 0.5, 0 * g))
    return kernels.where(a > b, g, 0)


# the cotangent share of maximum's and minimum's inputs, as a primitive so that its kernel
# can skip the tie handling when there are none (a rule may not branch on data); linear in
# g, piecewise constant in a and b
max_share = Primitive("max_share", _max_share_impl, ("g", "a", "b"), fresh=True,
                      sample=samplers.triples(samplers.interleaved),
                      doc="g where a > b, g/2 where a == b, else 0.")
max_share.defvjp(lambda ct, a, b: max_share(ct, a, b), ZERO, ZERO)
max_share.defjvp(lambda t, a, b: max_share(t, a, b), ZERO, ZERO)


def _logaddexp_rule(g: Any, a: Any, out: Any, expf: Callable) -> Any:
    """g * exp(a - out), the softmax weight of a, with +inf read as 0 on both sides (JAX's
    rule: 1 where both are +inf). Where both are -inf no weight is defined: nan, as JAX
    and PyTorch give, not a weight of 1 that would pass a gradient through an empty sum."""
    return g * expf(where(a == np.inf, 0, a) - where(out == np.inf, 0, out))


# -- the table ----------------------------------------------------------------------------

add = binary("add", np.add, lambda g: g, lambda g: g)
sub = binary("sub", np.subtract, lambda g: g, lambda g: -g)
mul = binary("mul", np.multiply, lambda g, y: g * y, lambda g, x: g * x)
div = binary("div", np.true_divide, lambda g, y: g / y, lambda g, out, y: -g * out / y,
             domain=[(-2.0, 2.0), (0.2, 2.0)], signed=True, promote=INEXACT_OPS)
power = binary("power", np.power, _pow_dx, _pow_dy, domain=[(0.2, 2.0), (-2.0, 2.0)],
               promote=NUMERIC_OPS)
floor_divide = binary("floor_divide", kernels.floor_divide, ZERO, ZERO,
                      sample=samplers.pairs(samplers.quotients), promote=NUMERIC_OPS)
# numpy's (Python's, PyTorch's) x // y: the quotient of divmod, x == q y + mod(x, y), whose
# values differ from floor_divide's (the standard's) where exactly one operand is infinite:
# -1 // inf is -1.0 (the standard: -0.0), inf // 2 is nan (the standard: inf); piecewise
# constant, so not differentiated
floored_quotient = predicate("floored_quotient", kernels.floored_quotient, ("x", "y"))
# d/dy is -q for the q of divmod: mod(-1, y) == y - 1 for every y > 1, slope 1 up to
# y = inf, where the standard's -1 // inf == -0.0 would give 0
mod = binary("mod", np.remainder, lambda g: g, lambda g, x, y: -g * floored_quotient(x, y),
             sample=samplers.pairs(samplers.quotients), promote=NUMERIC_OPS)
fmod = binary("fmod", np.fmod, lambda g: g, lambda g, x, y: -g * trunc(x / y),
              sample=samplers.pairs(samplers.quotients), promote=NUMERIC_OPS)
maximum = binary("maximum", np.maximum, lambda g, x, y: max_share.bind(g, x, y),
                 lambda g, x, y: max_share.bind(g, y, x),
                 sample=samplers.pairs(samplers.interleaved))
minimum = binary("minimum", np.minimum, lambda g, x, y: max_share.bind(g, y, x),
                 lambda g, x, y: max_share.bind(g, x, y),
                 sample=samplers.pairs(samplers.interleaved))
arctan2 = binary("arctan2", np.arctan2, lambda g, x, y: g * y / (x * x + y * y),
                 lambda g, x, y: -g * x / (x * x + y * y), domain=(0.2, 2.0), signed=True,
                 complex_=False, promote=INEXACT_OPS)
hypot = binary("hypot", np.hypot, lambda g, x, out: g * x / out,
               lambda g, y, out: g * y / out, domain=(0.2, 2.0), signed=True,
               complex_=False, promote=INEXACT_OPS)
logaddexp = binary("logaddexp", np.logaddexp,
                   lambda g, x, out: _logaddexp_rule(g, x, out, exp),
                   lambda g, y, out: _logaddexp_rule(g, y, out, exp), complex_=False,
                   promote=INEXACT_OPS)
logaddexp2 = binary("logaddexp2", np.logaddexp2,
                    lambda g, x, out: _logaddexp_rule(g, x, out, exp2),
                    lambda g, y, out: _logaddexp_rule(g, y, out, exp2), complex_=False,
                    promote=INEXACT_OPS)
copysign = binary("copysign", np.copysign,
                  lambda g, x, y: g * copysign(1, x) * copysign(1, y), ZERO,
                  domain=(0.2, 2.0), signed=True, complex_=False, promote=INEXACT_OPS)

# the next float after x towards y: x moved by less than an ulp, slope 1 in x
nextafter = binary("nextafter", np.nextafter, lambda g: g, ZERO, complex_=False,
                   promote=INEXACT_OPS)
# the step function, with the value y at x == 0 (derivative in x: 0 away from the jump)
heaviside = binary("heaviside", np.heaviside, ZERO, lambda g, x: where(x == 0, g, 0),
                   domain=[(0.2, 2.0), (-2.0, 2.0)], signed=True, complex_=False,
                   promote=INEXACT_OPS)


def _ldexp_cases(rng: np.random.RandomState, draw: Any) -> list:
    shape = sampling.draw_shape(draw)
    i = rng.randint(-3, 4, shape)
    return [sampling.Case(lambda x: ldexp(x, i), (sampling.values(rng, shape),),
                          f"{shape}")]


# x * 2**i for integer i, exact (a change of exponent)
ldexp = Primitive("ldexp", np.ldexp, ("x", "i"), sample=sampling.custom(_ldexp_cases),
                  promote=INEXACT_FIRST,
                  doc="x * 2**i for integer i.")
ldexp.defvjp(lambda g, i: ldexp(g, i), None)
ldexp.defjvp(lambda t, i: ldexp(t, i), None)

equal = predicate("equal", np.equal, ("x", "y"))
not_equal = predicate("not_equal", np.not_equal, ("x", "y"))
less = predicate("less", np.less, ("x", "y"))
less_equal = predicate("less_equal", np.less_equal, ("x", "y"))
greater = predicate("greater", np.greater, ("x", "y"))
greater_equal = predicate("greater_equal", np.greater_equal, ("x", "y"))
logical_and = predicate("logical_and", np.logical_and, ("x", "y"), promote=None)
logical_or = predicate("logical_or", np.logical_or, ("x", "y"), promote=None)
logical_xor = predicate("logical_xor", np.logical_xor, ("x", "y"), promote=None)
bitwise_and = predicate("bitwise_and", np.bitwise_and, ("x", "y"))
bitwise_or = predicate("bitwise_or", np.bitwise_or, ("x", "y"))
bitwise_xor = predicate("bitwise_xor", np.bitwise_xor, ("x", "y"))
left_shift = predicate("left_shift", np.left_shift, ("x", "y"), NUMERIC_OPS)
right_shift = predicate("right_shift", np.right_shift, ("x", "y"), NUMERIC_OPS)
gcd = predicate("gcd", np.gcd, ("x", "y"))
lcm = predicate("lcm", np.lcm, ("x", "y"))


# ReLU, the select against zero above as one primitive (PyTorch's relu and threshold_backward
# semantics: the gradient is g where the result is not <= 0, so 0 at 0 and g at NaN); the
# torch facade records it without a trace
relu = Primitive("relu", kernels.relu, promote=SAME,
                 sample=sampling.elementwise(1, (0.2, 2.0), signed=True),
                 doc="max(x, 0), with NaN kept.")
relu.defvjp(lambda g, out: where(out <= 0, 0, g))
relu.defjvp(lambda t, out: where(out <= 0, 0, t))


def _inside(x: Any, lo: Any, hi: Any) -> Any:
    """Where ``lo <= x <= hi`` (a None bound left out; False at NaN); None for no bound."""
    inside = None if lo is None else greater_equal(x, lo)
    if hi is not None:
        below = less_equal(x, hi)
        inside = below if inside is None else logical_and(inside, below)
    return inside


def _clamp_rule(g: Any, x: Any, lo: Any, hi: Any) -> Any:
    inside = _inside(x, lo, hi)
    return g if inside is None else where(inside, g, 0)


# clamp to number bounds (PyTorch's clamp with scalar bounds, either may be None): the
# gradient is g where lo <= x <= hi, the bounds included, and 0 outside and at NaN
# (PyTorch's clamp_backward); one record instead of the dozen of its composition
clamp = Primitive("clamp", kernels.clamp, params=("lo", "hi"), fresh=True, keeps_weak=True,
                  sample=sampling.elementwise(1, (-2.0, 2.0), params={"lo": -0.5, "hi": 1.0}),
                  doc="min(max(x, lo), hi) for number bounds (None: no bound), NaN kept.")
clamp.defvjp(_clamp_rule)
clamp.defjvp(_clamp_rule)


# -- batching rules (vmap): see funcgrad.primitives.batching ------------------------------
for _p in (max_share, add, sub, mul, div, power, floor_divide, mod, fmod, maximum, minimum,
           arctan2, hypot, logaddexp, logaddexp2, copysign, nextafter, heaviside, ldexp, equal,
           not_equal, less, less_equal, greater, greater_equal, logical_and, logical_or,
           logical_xor, bitwise_and, bitwise_or, bitwise_xor, left_shift, right_shift, gcd, lcm,
           relu, clamp, floored_quotient):
    broadcasting(_p)
