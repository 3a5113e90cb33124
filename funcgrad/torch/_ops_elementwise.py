"""The op table, part 1b: unary elementwise ops, comparisons and logic, clamp and where.

Declared as part 1 (`funcgrad.torch._ops_basic`) declares ops: a spec per op names the
PyTorch node and the funcgrad function. Where PyTorch's derivative at a kink, a tie or NaN
differs from funcgrad's primitive (abs, sign, clamp), the function is a composition from
`funcgrad.torch._conventions`.
"""
from __future__ import annotations

import math
from typing import Any, Callable

import numpy as np

import funcgrad.numpy as fnp
from funcgrad.core import is_inexact
from funcgrad.primitives import binary as binary_prims, elementwise as elementwise_prims
from funcgrad.torch import _conventions as conventions
from funcgrad.torch._runtime import dtypes as D
from funcgrad.torch._autocast import listed
from funcgrad.torch._dispatch import PrimCall, apply
from funcgrad.torch._ops_basic import (FUNCTIONS, METHODS, Spec, _direct, _new_tuple, cast,
                                       np_fn, op, operand, result_type, sp_fn)
from funcgrad.torch._tensor import Tensor, _type_word
from funcgrad.torch._ops_reduce import nonzero

__all__ = ["UNARY", "where", "conj", "real", "imag", "view_as_real", "view_as_complex",
           "equal"]


# -- unary elementwise -----------------------------------------------------------------------

def _rsqrt(x: Any) -> Any:
    return fnp.true_divide(1, fnp.sqrt(x))


# torch name: (funcgrad function, PyTorch node name, integer inputs become float)
UNARY = {
    "exp": (np_fn("exp"), "ExpBackward0", True),
    "exp2": (np_fn("exp2"), "Exp2Backward0", True),
    "expm1": (np_fn("expm1"), "Expm1Backward0", True),
    "log": (np_fn("log"), "LogBackward0", True),
    "log2": (np_fn("log2"), "Log2Backward0", True),
    "log10": (np_fn("log10"), "Log10Backward0", True),
    "log1p": (np_fn("log1p"), "Log1PBackward0", True),
    "sqrt": (np_fn("sqrt"), "SqrtBackward0", True),
    "rsqrt": (_rsqrt, "RsqrtBackward0", True),
    "sin": (np_fn("sin"), "SinBackward0", True),
    "cos": (np_fn("cos"), "CosBackward0", True),
    "tan": (np_fn("tan"), "TanBackward0", True),
    "asin": (np_fn("arcsin"), "AsinBackward0", True),
    "acos": (np_fn("arccos"), "AcosBackward0", True),
    "atan": (np_fn("arctan"), "AtanBackward0", True),
    "sinh": (np_fn("sinh"), "SinhBackward0", True),
    "cosh": (np_fn("cosh"), "CoshBackward0", True),
    "tanh": (np_fn("tanh"), "TanhBackward0", True),
    "asinh": (np_fn("arcsinh"), "AsinhBackward0", True),
    "acosh": (np_fn("arccosh"), "AcoshBackward0", True),
    "atanh": (np_fn("arctanh"), "AtanhBackward0", True),
    "sigmoid": (sp_fn("expit"), "SigmoidBackward0", True),
    "erf": (sp_fn("erf"), "ErfBackward0", True),
    "erfc": (sp_fn("erfc"), "ErfcBackward0", True),
    "reciprocal": (lambda x: fnp.true_divide(1, x), "ReciprocalBackward0", True),
    "abs": (conventions.abs, "AbsBackward0", False),
    "neg": (np_fn("negative"), "NegBackward0", False),
    "sign": (conventions.sign, "SignBackward0", False),
    "floor": (np_fn("floor"), "FloorBackward0", False),
    "ceil": (np_fn("ceil"), "CeilBackward0", False),
    "trunc": (np_fn("trunc"), "TruncBackward0", False),
    "square": (lambda x: fnp.power(x, 2), "PowBackward0", False),
    "relu": (_direct(binary_prims.relu), "ReluBackward0", False),
    "angle": (conventions.angle, "AngleBackward0", True),
}
_ALIASES = {"absolute": "abs", "negative": "neg", "arcsin": "asin", "arccos": "acos",
            "arctan": "atan", "arcsinh": "asinh", "arccosh": "acosh", "arctanh": "atanh",
            "fix": "trunc"}


def _unary_spec(name: str) -> Callable:
    fn, node, floating = UNARY[name]

    def spec(input: Tensor) -> Spec:
        if floating and input._a.dtype.kind not in "fc" and not is_inexact(input._a.dtype):
            npdt = D.get_default_dtype().np
            return Spec(node, lambda x: fn(cast(x, npdt)), [input])
        return _new_tuple(Spec, (node, fn, [input], False, True))
    spec.__name__ = name
    spec.__doc__ = f"Elementwise {name} (funcgrad's {getattr(fn, '__name__', name)})."
    return spec


def _fast_unary(name: str, generic: Callable) -> Callable:
    """Op ``name`` of `UNARY` (its torch function or method ``generic``) with the common
    call, on one tensor that needs no cast, going straight to `apply` as its spec would
    send it (this runs for every activation of a model); any other call to ``generic``."""
    fn, node, floating = UNARY[name]

    def fast(input: Any, *args: Any, **kwargs: Any) -> Any:
        if not args and not kwargs and isinstance(input, Tensor) and (
                not floating or input._a.dtype.kind in "fc"):
            try:
                return apply(node, fn, [input])
            except NotImplementedError:
                if input._refuses:  # a sparse tensor: the op's layouts decide (`op`)
                    return generic(input)
                raise
        return generic(input, *args, **kwargs)
    fast.__name__, fast.__qualname__, fast.__doc__ = name, name, generic.__doc__
    fast.takes_out = getattr(generic, "takes_out", False)
    return fast


for _name in UNARY:
    _names = (_name, *[a for a, b in _ALIASES.items() if b == _name])
    op(*_names, inplace=_name != "angle")(_unary_spec(_name))
    if not listed(_name):  # (an op under an autocast policy keeps its wrapper)
        for _n in _names:
            FUNCTIONS[_n] = _fast_unary(_name, FUNCTIONS[_n])
            METHODS[_n] = _fast_unary(_name, METHODS[_n])


def _real_abs_(plain: Callable) -> Callable:
    def abs_(self: Tensor) -> Tensor:
        """|x| in place (not for complex tensors: the result is real)."""
        if _is_complex(self):
            raise RuntimeError("In-place abs is not supported for complex tensors.")
        return plain(self)
    return abs_


for _name in ("abs_", "absolute_"):
    METHODS[_name] = FUNCTIONS[_name] = _real_abs_(METHODS[_name])


@op("round", inplace=True)
def _round(input: Tensor, *, decimals: int = 0) -> Spec:
    """Round half to even, to ``decimals`` decimals (derivative 0)."""
    return Spec("RoundBackward" + ("1" if decimals else "0"),
                lambda x: fnp.round(x, decimals), [input])


@op("logit", inplace=True)
def _logit(input: Tensor, eps: float | None = None) -> Spec:
    """log(p / (1 - p)); with ``eps``, p clamped to [eps, 1 - eps] first (gradient 0
    outside, as PyTorch's)."""
    npdt = input.dtype.np if input.dtype.is_floating_point else D.get_default_dtype().np
    logit = sp_fn("logit")
    if eps is None:
        return Spec("LogitBackward0", lambda x: logit(cast(x, npdt)), [input])
    return Spec("LogitBackward0", lambda x: logit(conventions.clamp_inside(
        cast(x, npdt), eps, 1 - eps)), [input])


def _is_complex(t: Tensor) -> bool:
    return t.dtype.is_complex


def conj(input: Tensor) -> Tensor:
    """The complex conjugate; a real tensor is its own conjugate (returned as it is)."""
    if not _is_complex(input):
        return input
    return apply("ConjBackward0", np_fn("conj"), [input])


def real(input: Tensor) -> Tensor:
    """The real part (a real tensor itself); PyTorch's node is the select of
    ``view_as_real``."""
    if not _is_complex(input):
        return input
    return apply("SelectBackward0", np_fn("real"), [input])


def imag(input: Tensor) -> Tensor:
    """The imaginary part of a complex tensor."""
    if not _is_complex(input):
        raise RuntimeError("imag is not implemented for tensors with non-complex dtypes.")
    return apply("SelectBackward0", np_fn("imag"), [input])


def view_as_real(input: Tensor) -> Tensor:
    """A complex tensor's memory as (..., 2) reals (a view: writes reach the tensor)."""
    if not _is_complex(input):
        raise RuntimeError("view_as_real is only supported for complex tensors")
    return apply("ViewAsRealBackward0", PrimCall(elementwise_prims.view_as_real), [input])


def view_as_complex(input: Tensor) -> Tensor:
    """(..., 2) reals as a complex tensor viewing their memory."""
    if input.dtype not in (D.float16, D.float32, D.float64):
        raise RuntimeError("view_as_complex is only supported for half, float and double "
                           "tensors, but got a tensor of scalar type: "
                           f"{_type_word(input.dtype)}")
    if not input.ndim or input.shape[-1] != 2:
        raise RuntimeError("Tensor must have a last dimension of size 2")
    if input.stride(-1) != 1:
        raise RuntimeError("Tensor must have a last dimension with stride 1")
    return apply("ViewAsComplexBackward0", PrimCall(elementwise_prims.view_as_complex),
                 [input])


for _f in (conj, real, imag):
    FUNCTIONS[_f.__name__] = METHODS[_f.__name__] = _f
FUNCTIONS["view_as_real"], FUNCTIONS["view_as_complex"] = view_as_real, view_as_complex


# -- comparisons and logic (no gradient) -----------------------------------------------------

def _check_integral(name: str, *xs: Any) -> None:
    """Bit operations are defined on integers and bools only (PyTorch's error)."""
    for x in xs:
        if isinstance(x, Tensor) and x.dtype.np.kind not in "biu":
            raise NotImplementedError(f'"{name}_cpu" not implemented for '
                                      f"'{_type_word(x.dtype)}'")


def _compare(name: str, fn_name: str) -> None:
    # the node PyTorch records when the op runs in place on a tensor that requires grad
    # (its gradient is zero): EqBackward0 / EqBackward1 for a number / tensor other;
    # the logical ops multiply
    node = ("MulBackward" if name.startswith("logical") else
            "".join(w.capitalize() for w in name.split("_")) + "Backward")

    def spec(input: Any, other: Any) -> Spec:
        if name.startswith("bitwise"):
            _check_integral(name, input, other)
        overload = "0" if node == "MulBackward" or not isinstance(other, Tensor) else "1"
        return Spec(node + overload, np_fn(fn_name), [operand(input), operand(other)],
                    differentiable=False)
    spec.__name__ = name
    op(name, inplace=True)(spec)


for _n, _f in [("eq", "equal"), ("ne", "not_equal"), ("lt", "less"), ("le", "less_equal"),
               ("gt", "greater"), ("ge", "greater_equal"), ("logical_and", "logical_and"),
               ("logical_or", "logical_or"), ("logical_xor", "logical_xor"),
               ("bitwise_and", "bitwise_and"), ("bitwise_or", "bitwise_or"),
               ("bitwise_xor", "bitwise_xor")]:
    _compare(_n, _f)
for _alias, _n in [("greater", "gt"), ("less", "lt"), ("greater_equal", "ge"),
                   ("less_equal", "le"), ("not_equal", "ne")]:
    FUNCTIONS[_alias] = METHODS[_alias] = FUNCTIONS[_n]
    METHODS[_alias + "_"] = METHODS[_n + "_"]


def _predicate(name: str, fn_name: str) -> None:
    def spec(input: Tensor) -> Spec:
        if name == "bitwise_not":
            _check_integral(name, input)
        return Spec(name, np_fn(fn_name), [input], differentiable=False)
    spec.__name__ = name
    op(name, inplace=name in ("logical_not", "bitwise_not"))(spec)


for _n, _f in [("isnan", "isnan"), ("isinf", "isinf"), ("isfinite", "isfinite"),
               ("logical_not", "logical_not"), ("bitwise_not", "invert"),
               ("signbit", "signbit")]:
    _predicate(_n, _f)


def equal(input: Tensor, other: Tensor) -> bool:
    """Whether both tensors have the same size and the same elements, as a Python bool
    (dtypes may differ; NaN equals nothing), like ``torch.equal``."""
    for position, (name, value) in enumerate((("input", input), ("other", other)), 1):
        if not isinstance(value, Tensor):
            raise TypeError(f"equal(): argument '{name}' (position {position}) must be "
                            f"Tensor, not {type(value).__name__}")
    return tuple(input.shape) == tuple(other.shape) and bool(np.array_equal(
        input.detach().numpy(force=True), other.detach().numpy(force=True)))


FUNCTIONS["equal"] = METHODS["equal"] = equal


# -- clamp, where --------------------------------------------------------------------------------

def _bound(b: Any) -> Any:
    return None if b is None else operand(b)


def _plain_bound(b: Any) -> bool:
    """A bound the clamp primitive takes as PyTorch does: None, or a Python int or finite float
    (a NaN bound, and the rest, take `conventions.clamp`)."""
    return b is None or type(b) is int or (type(b) is float and math.isfinite(b))


def _clamp_spec(node: str, input: Tensor, lo: Any, hi: Any) -> Spec:
    """``clamp`` with PyTorch's gradients (`conventions.clamp`): ``<node>0`` for number
    bounds, ``<node>1`` when a bound is a tensor (then the bounds get gradients too)."""
    lo, hi = _bound(lo), _bound(hi)
    dt = result_type(*[b for b in (input, lo, hi) if b is not None]).np
    tensors = [b for b in (lo, hi) if isinstance(b, Tensor)]
    if not tensors:
        if input._a.dtype == dt and dt.kind == "f" and all(_plain_bound(b) for b in (lo, hi)):
            # one primitive (PyTorch's gradient is its rule), recorded without a trace
            return Spec(node + "0", PrimCall(binary_prims.clamp, {"lo": lo, "hi": hi}), [input])
        return Spec(node + "0", lambda x: conventions.clamp(cast(x, dt), lo, hi), [input])
    lo_at = 1 if isinstance(lo, Tensor) else None
    hi_at = 1 + (lo_at or 0) if isinstance(hi, Tensor) else None

    def f(x: Any, *bounds: Any) -> Any:
        a = cast(bounds[lo_at - 1], dt) if lo_at else lo
        b = cast(bounds[hi_at - 1], dt) if hi_at else hi
        return conventions.clamp(cast(x, dt), a, b)
    return Spec(node + "1", f, [input, *tensors])


@op("clamp", "clip", inplace=True)
def _clamp(input: Tensor, min: Any = None, max: Any = None) -> Spec:  # noqa: A002
    if min is None and max is None:
        raise RuntimeError("torch.clamp: At least one of 'min' or 'max' must not be None")
    s = _clamp_spec("ClampBackward", input, min, max)
    # PyTorch numbers clamp's overloads the other way round: Tensor bounds are 0
    return s._replace(name="ClampBackward" + ("0" if s.name.endswith("1") else "1"))


@op("clamp_min", inplace=True)
def _clamp_min(input: Tensor, min: Any) -> Spec:  # noqa: A002
    return _clamp_spec("ClampMinBackward", input, min, None)


@op("clamp_max", inplace=True)
def _clamp_max(input: Tensor, max: Any) -> Spec:  # noqa: A002
    return _clamp_spec("ClampMaxBackward", input, None, max)


def where(condition: Tensor, input: Any = None, other: Any = None) -> Any:
    """``torch.where(condition, input, other)``; ``torch.where(condition)`` is
    ``nonzero(condition, as_tuple=True)``."""
    if input is None and other is None:
        return nonzero(condition, as_tuple=True)
    return apply(*_where_spec(input, condition, other)[:3])


FUNCTIONS["where"] = where


def _where_spec(input: Any, condition: Tensor, other: Any) -> Spec:
    a, b = operand(input), operand(other)
    dt = result_type(a, b).np
    cond = condition._a

    def f(x: Any, y: Any) -> Any:  # two Python numbers give the default dtype, not numpy's
        r = fnp.where(cond, cast(x, dt), cast(y, dt))
        return r if r.dtype == dt else fnp.astype(r, dt)
    return Spec("WhereBackward0", f, [a, b])


METHODS["where"] = lambda self, condition, other: apply(*_where_spec(self, condition,
                                                                     other)[:3])
