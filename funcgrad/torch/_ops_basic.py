"""The op table, part 1: how ops are declared, type promotion, arithmetic, conversion and
fills (unary ops, comparisons, clamp and where are part 1b, `_ops_elementwise`).

An op is declared by a *spec* function returning ``Spec(node_name, f, slots)``: ``f`` is the
funcgrad function (funcgrad.numpy / funcgrad.scipy names) and ``slots`` the operands that
occupy ``next_functions`` entries (input first). `op` turns a spec into the out-of-place op
and, with ``inplace=True``, into the ``name_`` in-place method as well. Specs own no
derivative: the rules of the funcgrad functions they call are the derivatives.

Type promotion follows PyTorch (dimensioned tensors > 0-dim tensors > Python numbers; a
lower group only wins with a higher category), and casts happen inside ``f`` so that they
are part of what is differentiated.
"""
from __future__ import annotations

import builtins
from typing import Any, Callable, NamedTuple, Sequence

import numpy as np

import funcgrad
import funcgrad.numpy as fnp
from funcgrad.array import new_array
from funcgrad.core import Tracer, is_inexact
import funcgrad.scipy.special as sps
from funcgrad.primitives.binary import floored_quotient, power
from funcgrad.torch import _conventions as conventions
from funcgrad.torch._runtime import dtypes as D
from funcgrad.torch._dispatch import PrimCall, apply
from funcgrad.torch._inplace import inplace as _inplace
from funcgrad.torch._out import accepting_out
from funcgrad.torch._runtime.layouts import dims_order
from funcgrad.torch._tensor import Tensor, _type_word, of_other_kind
from funcgrad.torch._autocast import autocast_op
from funcgrad.torch._factories import tensor
from funcgrad.torch._factories import _draws

__all__ = ["Spec", "op", "METHODS", "FUNCTIONS", "np_fn", "sp_fn", "operand", "result_type",
           "cast", "to", "FAST_OPERATORS", "operator_fast_path"]

METHODS: dict = {}    # Tensor method name -> function(self, ...)
FUNCTIONS: dict = {}  # torch.<name> -> function(input, ...)


class Spec(NamedTuple):
    name: str
    f: Callable
    slots: Sequence
    multi: bool = False
    differentiable: bool = True


_new_tuple = tuple.__new__  # ``_new_tuple(Spec, fields)``: a Spec, all five fields given


def op(*names: str, inplace: bool = False, method: bool = True, function: bool = True,
       broadcasts: bool = True) -> Callable:
    """Register a spec under ``names`` as a torch function, a Tensor method and, with
    ``inplace``, the ``<name>_`` in-place method (whose tensor operands must broadcast to
    the tensor's shape when ``broadcasts``). Returns the spec itself, so that specs can
    build on one another."""
    def deco(spec: Callable) -> Callable:
        def fn(*args: Any, **kwargs: Any) -> Any:
            other = of_other_kind(args)  # (before the spec reads their shapes)
            if other is not None:
                return other._kind_op(fn.__name__, args, kwargs)
            s = spec(*args, **kwargs)
            try:
                return apply(*s)  # (its fields are apply's positional parameters)
            except ValueError as e:  # numpy's broadcasting error, in PyTorch's words
                raise _size_mismatch(s.slots) or e from None
        # itself unless an autocast list has it
        fn = autocast_op(names[0] if names else spec.__name__, spec)(fn)
        fn.__name__ = fn.__qualname__ = names[0] if names else spec.__name__
        fn.__doc__ = spec.__doc__
        fn_out = accepting_out(fn)  # torch.<name>(..., out=t); methods take no out
        fn_out.takes_out = True
        for name in names or (spec.__name__,):
            if function:
                FUNCTIONS[name] = fn_out
            if method:
                METHODS[name] = fn
            if inplace:
                def fn_(self: Tensor, *args: Any, **kwargs: Any) -> Tensor:
                    other = of_other_kind((self, *args))
                    if other is not None:
                        return other._kind_op(fn_.__name__, (self, *args), kwargs)
                    if kwargs.get("dtype") not in (None, self.dtype):
                        raise RuntimeError(
                            f"Bad in-place call: input tensor dtype {D.c_type(self.dtype)} "
                            f"and output tensor dtype {D.c_type(kwargs['dtype'])} should "
                            "match")
                    s = spec(self, *args, **kwargs)
                    if broadcasts:
                        _check_inplace_shape(self, s.slots[1:])
                    return _inplace(self, INPLACE_NODES.get(s.name, s.name), s.f,
                                    s.slots[1:])
                fn_.__name__ = name + "_"
                METHODS[name + "_"] = fn_
                FUNCTIONS[name + "_"] = fn_
        return spec
    return deco


# in-place forms PyTorch records under another node than the out-of-place op
INPLACE_NODES = {"AcoshBackward0": "AcoshBackward1", "AsinhBackward0": "AsinhBackward1",
                 "AtanhBackward0": "AtanhBackward1"}


def _size_mismatch(operands: Sequence) -> RuntimeError | None:
    """PyTorch's error for tensors that do not broadcast together (None if they do)."""
    shapes = [tuple(t.shape) for t in operands if isinstance(t, Tensor)]
    for i, a in enumerate(shapes):
        for b in shapes[i + 1:]:
            n = max(len(a), len(b))
            for d in range(n - 1, -1, -1):
                sa = a[d - n + len(a)] if d - n + len(a) >= 0 else 1
                sb = b[d - n + len(b)] if d - n + len(b) >= 0 else 1
                if sa != sb and 1 not in (sa, sb):
                    return RuntimeError(f"The size of tensor a ({sa}) must match the size of "
                                        f"tensor b ({sb}) at non-singleton dimension {d}")
    return None


def _check_inplace_shape(self: Tensor, others: Sequence) -> None:
    """An in-place op cannot grow ``self``: the operands must broadcast to its shape."""
    shapes = [tuple(t.shape) for t in others if isinstance(t, Tensor)]
    if not shapes:
        return
    mismatch = _size_mismatch([self, *others])
    if mismatch is not None:
        raise mismatch
    own = tuple(self.shape)
    target = np.broadcast_shapes(own, *shapes)
    if target != own:
        raise RuntimeError(f"output with shape {list(own)} doesn't match the broadcast "
                           f"shape {list(target)}")


def np_fn(name: str) -> Callable:
    """``funcgrad.numpy.<name>``, as a `PrimCall` when it is one primitive (so that ops
    using it unchanged are recorded without a trace)."""
    return _direct(getattr(fnp, name))


def sp_fn(name: str) -> Callable:
    """``funcgrad.scipy.special.<name>``, as a `PrimCall` when it is one primitive."""
    return _direct(getattr(sps, name))


_DIRECT: dict = {}  # function -> what `_direct` made of it (PrimCalls hold no state)


def _direct(fn: Callable) -> Callable:
    made = _DIRECT.get(fn)
    if made is None:
        made = _DIRECT[fn] = _make_direct(fn)
    return made


def _make_direct(fn: Callable) -> Callable:
    if isinstance(fn, funcgrad.primitives.Primitive) and not (fn.multiple_results or
                                                               fn.params):
        return PrimCall(fn)
    return fn


# -- operands and promotion -------------------------------------------------------------------

_NUMBERS = (builtins.int, builtins.float, builtins.complex, builtins.bool)


_OPERANDS = (Tensor,) + _NUMBERS


def operand(x: Any) -> Any:
    """A tensor or a Python number (numpy scalars become numbers, arrays tensors)."""
    if isinstance(x, _OPERANDS):
        return x
    if isinstance(x, np.generic):
        return x.item()
    if isinstance(x, (np.ndarray, list)):
        return tensor(x)
    raise TypeError(f"unsupported operand type {type(x).__name__!r} for a tensor op; use a "
                    "tensor or a Python number")


def _kind(x: Any) -> tuple:
    if isinstance(x, Tensor):
        return (x.dtype, 0 if x.ndim else 1)
    return (D._scalar_dtype(x), 2)


# PyTorch's type categories (bool < integer < floating < complex) by numpy dtype kind and
# by Python number type
_KIND_CATEGORY = {"b": 0, "u": 1, "i": 1, "f": 2, "c": 3,
                  "V": 2}  # "V": ml_dtypes' floats (bfloat16, float8), the facade's only "V"s
_NUMBER_CATEGORY = {builtins.bool: 0, builtins.int: 1, builtins.float: 2, builtins.complex: 3}


def _category(x: Any) -> int:
    """PyTorch's type category of a tensor or number: bool 0, integer 1, float 2, complex 3."""
    if isinstance(x, Tensor):
        return _KIND_CATEGORY[x.dtype.np.kind]
    return _NUMBER_CATEGORY.get(type(x), 4)


def result_type(*xs: Any) -> D.dtype:
    """PyTorch's result dtype of tensors and Python numbers. Tensors of one dtype with
    numbers of no higher category (the common case: ``x * 2``, ``p - lr * g``) keep it."""
    common = None
    category = 0
    for x in xs:
        if isinstance(x, Tensor):
            d = x._a.dtype
            if common is None:
                common = d
            elif d != common:
                break
        else:
            c = _NUMBER_CATEGORY.get(type(x), 4)
            category = c if c > category else category
    else:
        if common is not None and category <= _KIND_CATEGORY[common.kind]:
            return D.to_torch_dtype(common)
    return D.result_type_of(_kind(x) for x in xs)


def cast(a: Any, dtype: np.dtype) -> Any:
    """``a`` as ``dtype`` inside an op (Python numbers stay weakly typed)."""
    if isinstance(a, _NUMBERS):
        return a
    if a.dtype == dtype:
        return a
    bound = D.SATURATING_BOUND.get(dtype)
    if bound is not None:  # (PyTorch's float8 conversion saturates)
        a = fnp.clip(a, -bound, bound)
    return fnp.astype(a, dtype)


def _float_type(dt: D.dtype) -> D.dtype:
    return dt if dt.is_floating_point or dt.is_complex else D.get_default_dtype()


def _binary(name: str, fn: Callable, a: Any, b: Any, floating: bool = False) -> Spec:
    if isinstance(a, Tensor) and isinstance(b, Tensor):
        dtype = a._a.dtype
        if dtype == b._a.dtype and (not floating or is_inexact(dtype)):
            # the common case: one dtype, nothing to cast (the tuple made directly, without
            # the NamedTuple's Python __new__: this runs for every binary op)
            return _new_tuple(Spec, (name, fn, [a, b], False, True))
    a, b = operand(a), operand(b)
    dt = result_type(a, b)
    npdt = (_float_type(dt) if floating else dt).np
    if _of_dtype(a, npdt) and _of_dtype(b, npdt):
        return Spec(name, fn, [a, b])  # no cast to differentiate: fn itself
    return Spec(name, lambda x, y: fn(cast(x, npdt), cast(y, npdt)), [a, b])


def _of_dtype(a: Any, dtype: np.dtype) -> bool:
    """Whether `cast` leaves ``a`` as it is (a Python number, or a tensor of ``dtype``)."""
    return isinstance(a, _NUMBERS) or a._a.dtype == dtype


# -- arithmetic ----------------------------------------------------------------------------------

_ADD, _SUBTRACT, _MULTIPLY, _TRUE_DIVIDE = (np_fn(n) for n in ("add", "subtract", "multiply",
                                                              "true_divide"))

# the ops whose Python operator (``x + y``, ``x * y``) takes `operator_fast_path`: node, f
FAST_OPERATORS = {"add": ("AddBackward0", _ADD), "mul": ("MulBackward0", _MULTIPLY)}


def operator_fast_path(name: str, generic: Callable) -> Callable:
    """The Python operator of op ``name`` (of `FAST_OPERATORS`), whose spec is `_binary`:
    two tensors of one dtype go straight to `apply`, as `_binary`'s common case would send
    them, without the calls of the op function and its spec (this runs for most arithmetic
    in a model); anything else goes to ``generic``, the operator through the op."""
    node, f = FAST_OPERATORS[name]

    def fast(self: Tensor, other: Any) -> Any:
        if isinstance(other, Tensor) and (other._a.dtype is self._a.dtype
                                          or other._a.dtype == self._a.dtype):
            slots = [self, other]
            try:
                return apply(node, f, slots)
            except ValueError as e:  # as the op function turns it (`op`)
                raise _size_mismatch(slots) or e from None
        return generic(self, other)
    fast.__name__ = fast.__qualname__ = getattr(generic, "__name__", name)
    return fast


@op("add", inplace=True)
def _add(input: Any, other: Any, *, alpha: Any = 1) -> Spec:
    if alpha == 1:
        return _binary(*FAST_OPERATORS["add"], input, other)
    return _binary("AddBackward0", lambda x, y: fnp.add(x, fnp.multiply(y, alpha)),
                   input, other)


def _no_bool_subtraction(*xs: Any) -> None:
    bools = [x for x in xs if (isinstance(x, Tensor) and x.dtype is D.bool)
             or isinstance(x, builtins.bool)]
    if len(bools) == 2 and all(isinstance(x, Tensor) for x in xs):
        raise RuntimeError("Subtraction, the `-` operator, with two bool tensors is not "
                           "supported. Use the `^` or `logical_xor()` operator instead.")
    if bools:
        raise RuntimeError("Subtraction, the `-` operator, with a bool tensor is not "
                           "supported. If you are trying to invert a mask, use the `~` or "
                           "`logical_not()` operator instead.")


def _no_integer_zero_division(input: Any, other: Any) -> None:
    """Integer division and remainders by zero raise (PyTorch's error)."""
    if _category(input) > 1 or _category(other) > 1:
        return
    values = other.detach().numpy(force=True) if isinstance(other, Tensor) else other
    if np.any(np.equal(values, 0)):
        raise RuntimeError("ZeroDivisionError")


@op("sub", "subtract", inplace=True)
def _sub(input: Any, other: Any, *, alpha: Any = 1) -> Spec:
    _no_bool_subtraction(input, other)
    if alpha == 1:
        return _binary("SubBackward0", _SUBTRACT, input, other)
    return _binary("SubBackward0", lambda x, y: fnp.subtract(x, fnp.multiply(y, alpha)),
                   input, other)


@op("rsub", method=False)
def _rsub(input: Any, other: Any, *, alpha: Any = 1) -> Spec:
    """``other - alpha * input``."""
    _no_bool_subtraction(input, other)
    if isinstance(other, Tensor):
        return _binary("RsubBackward0", lambda x, y: fnp.subtract(y, fnp.multiply(x, alpha)),
                       input, other)
    dt = result_type(input, other).np
    return Spec("RsubBackward1", lambda x: fnp.subtract(other, fnp.multiply(cast(x, dt), alpha)),
                [input])


@op("mul", "multiply", inplace=True)
def _mul(input: Any, other: Any) -> Spec:
    return _binary(*FAST_OPERATORS["mul"], input, other)


@op("div", "divide", "true_divide", inplace=True)
def _div(input: Any, other: Any, *, rounding_mode: str | None = None) -> Spec:
    if rounding_mode is None:
        return _binary("DivBackward0", _TRUE_DIVIDE, input, other, floating=True)
    if rounding_mode not in ("trunc", "floor"):
        raise ValueError("div expected rounding_mode to be one of None, 'trunc', or 'floor' "
                         f"but found '{rounding_mode}'")
    _no_integer_zero_division(input, other)
    fn = {"trunc": lambda x, y: fnp.trunc(fnp.true_divide(x, y)) if _floating(x, y) else
          _truncated_quotient(x, y), "floor": _direct(floored_quotient)}[rounding_mode]
    # a rounded quotient has the derivative 0, which PyTorch records (DivBackward2/3)
    return _binary("DivBackward3" if isinstance(other, _NUMBERS) else "DivBackward2", fn,
                   input, other)


def _floating(*xs: Any) -> bool:
    return any(np.issubdtype(fnp.asarray(x).dtype, np.inexact) for x in xs)


def _truncated_quotient(x: Any, y: Any) -> Any:
    """x / y rounded toward zero, for integers (exact: no float division)."""
    q = fnp.floor_divide(x, y)
    inexact = fnp.logical_and(fnp.not_equal(fnp.remainder(x, y), 0),
                              fnp.less(fnp.multiply(x, y), 0))
    return fnp.where(inexact, fnp.add(q, 1), q)


@op("floor_divide", inplace=True)
def _floor_divide(input: Any, other: Any) -> Spec:
    """``input // other`` with PyTorch's (numpy's) values where one operand is infinite:
    ``inf // 2`` is nan and ``-1 // inf`` is -1.0 (funcgrad.numpy.floor_divide follows
    the Array API standard there: inf and -0.0)."""
    _no_integer_zero_division(input, other)
    return _binary("FloorDivideBackward0", _direct(floored_quotient), input,
                   other)._replace(differentiable=False)


def _overload(node: str, other: Any) -> str:
    """PyTorch's node name for the Scalar (``0``) or the Tensor (``1``) overload."""
    return node + ("1" if isinstance(other, Tensor) else "0")


@op("remainder", inplace=True)
def _remainder(input: Any, other: Any) -> Spec:
    """The remainder with the sign of ``other`` (Python's ``%``)."""
    _no_integer_zero_division(input, other)
    return _binary(_overload("RemainderBackward", other), conventions.remainder, input,
                   other)


@op("fmod", inplace=True)
def _fmod(input: Any, other: Any) -> Spec:
    """The remainder with the sign of ``input`` (C's fmod)."""
    _no_integer_zero_division(input, other)
    return _binary(_overload("FmodBackward", other), np_fn("fmod"), input, other)


def _integer_power(x: Any, e: Any) -> Any:
    """x ** e for integers with PyTorch's values at negative exponents (1 ** e = 1,
    (-1) ** e = ±1, 0 otherwise) where numpy raises."""
    negative = fnp.less(e, 0)
    odd = fnp.not_equal(fnp.remainder(e, 2), 0)
    at_negative = fnp.where(fnp.equal(x, 1), 1, fnp.where(fnp.equal(x, -1), fnp.where(
        odd, -1, 1), 0))
    return fnp.where(negative, at_negative, fnp.power(x, fnp.where(negative, 0, e)))


@op("pow", inplace=True)
def _pow(input: Any, exponent: Any) -> Spec:
    integral = all(_category(v) <= 1 for v in (input, exponent))
    if integral and isinstance(exponent, _NUMBERS) and exponent < 0:
        raise RuntimeError("Integers to negative integer powers are not allowed.")
    if integral and isinstance(exponent, Tensor):
        return _binary("PowBackward1", _integer_power, input, exponent)
    if not isinstance(input, Tensor):
        dt = result_type(input, exponent).np
        return Spec("PowBackward2", lambda e: fnp.power(input, cast(e, dt)), [exponent])
    if isinstance(exponent, Tensor):
        return _binary("PowBackward1", np_fn("power"), input, exponent)
    dt = result_type(input, exponent).np
    if input._a.dtype == dt:  # one primitive: recorded without a trace
        return Spec("PowBackward0", PrimCall(power, consts=(exponent,)), [input])
    return Spec("PowBackward0", lambda x: fnp.power(cast(x, dt), exponent), [input])


@op("float_power", inplace=True)
def _float_power(input: Any, exponent: Any) -> Spec:
    f64 = np.dtype(np.float64)
    if isinstance(exponent, Tensor):
        return Spec("PowBackward1", lambda x, e: fnp.power(cast(x, f64), cast(e, f64)),
                    [input, exponent])
    return Spec("PowBackward0", lambda x: fnp.power(cast(x, f64), exponent), [input])


def float_power_(self: Tensor, exponent: Any) -> Tensor:
    """In-place ``float_power``: only a float64 (complex128) tensor can hold its result."""
    wanted = D.complex128 if self.is_complex() or (isinstance(exponent, Tensor) and
                                                   exponent.is_complex()) else D.float64
    if self.dtype is not wanted:
        raise RuntimeError(f"the base given to float_power_ has dtype {_type_word(self.dtype)}"
                           f" but the operation's result requires dtype "
                           f"{_type_word(wanted)}")
    return _float_power_any(self, exponent)


_float_power_any = METHODS["float_power_"]
METHODS["float_power_"] = FUNCTIONS["float_power_"] = float_power_


@op("atan2", "arctan2", inplace=True)
def _atan2(input: Any, other: Any) -> Spec:
    return _binary("Atan2Backward0", conventions.atan2, input, other, floating=True)


@op("maximum", inplace=False)
def _maximum(input: Tensor, other: Tensor) -> Spec:
    return _binary("MaximumBackward0", conventions.maximum, input, other)


@op("minimum", inplace=False)
def _minimum(input: Tensor, other: Tensor) -> Spec:
    return _binary("MinimumBackward0", conventions.minimum, input, other)


@op("lerp", inplace=True)
def _lerp(input: Tensor, end: Tensor, weight: Any) -> Spec:
    """``input + weight * (end - input)``."""
    if isinstance(weight, Tensor):
        return Spec("LerpBackward1", lambda x, e, w: fnp.add(x, fnp.multiply(
            w, fnp.subtract(e, x))), [input, end, weight])
    return Spec("LerpBackward0", lambda x, e: fnp.add(x, fnp.multiply(
        fnp.subtract(e, x), weight)), [input, end])


@op("addcmul", inplace=True)
def _addcmul(input: Tensor, tensor1: Tensor, tensor2: Tensor, *, value: Any = 1) -> Spec:
    return Spec("AddcmulBackward0", lambda x, a, b: fnp.add(
        x, fnp.multiply(fnp.multiply(a, b), value)), [input, tensor1, tensor2])


@op("addcdiv", inplace=True)
def _addcdiv(input: Tensor, tensor1: Tensor, tensor2: Tensor, *, value: Any = 1) -> Spec:
    return Spec("AddcdivBackward0", lambda x, a, b: fnp.add(
        x, fnp.multiply(fnp.true_divide(a, b), value)), [input, tensor1, tensor2])


# -- conversion -----------------------------------------------------------------------------------

def to(self: Tensor, *args: Any, **kwargs: Any) -> Tensor:
    """``.to(dtype)``, ``.to(device)``, ``.to(device, dtype)``, ``.to(other)``; a differentiable
    copy (ToCopyBackward0), or ``self`` when nothing changes."""
    dtype, device = kwargs.get("dtype"), kwargs.get("device")
    for a in args:
        if isinstance(a, str) and a.startswith("torch."):
            dtype, device = _legacy_type(a)  # x.type("torch.cuda.FloatTensor")
        elif isinstance(a, Tensor):
            dtype, device = a.dtype, a.device
        elif isinstance(a, D.dtype) or (isinstance(a, type) and a in (float, int, bool)):
            dtype = a
        elif a is not None:
            device = a
    dtype = self.dtype if dtype is None else D.to_torch_dtype(dtype)
    device = self.device if device is None else D.device(device)
    layout = kwargs.get("memory_format")
    if layout is not None and dims_order(layout, self.ndim) is not None:
        return METHODS["contiguous"](to(self, dtype, device, copy=kwargs.get("copy", False)),
                                     layout)
    if dtype is self.dtype and device == self.device and not kwargs.get("copy", False):
        return self
    if device.type == "cuda" and not funcgrad.backend.cupy_available():
        raise AssertionError("Torch not compiled with CUDA enabled")
    npdt, target = dtype.np, device.funcgrad

    def f(a: Any) -> Any:
        a = cast(a, npdt)
        return a if a.device == target else funcgrad.device_put(a, target)
    return apply("ToCopyBackward0", f, [self])


def _legacy_type(name: str) -> tuple:
    """``(dtype, device)`` of a legacy type string such as ``torch.cuda.DoubleTensor``."""
    dev = "cuda" if name.startswith("torch.cuda.") else "cpu"
    for dt in D.ALL_DTYPES:
        if D.tensor_type_name(dt, dev) == name:
            return dt, D.device(dev)
    raise ValueError(f"invalid type: '{name}'")


# -- in-place fills -----------------------------------------------------------------------------

def _fill(self: Tensor, name: str, values: Any, overlap_ok: bool = False) -> Tensor:
    """Overwrite ``self`` with constant ``values`` (an array of its shape), in place
    (``overlap_ok``: one value everywhere, so an expanded tensor may be filled)."""
    if self.is_meta:  # no values to fill: the shape and dtype are the result
        return _inplace(self, name, lambda x: x, overlap_ok=overlap_ok)
    if isinstance(values, Tracer):  # a compiled program's draw (`_compiled_random`)
        drawn = fnp.broadcast_to(values.astype(self._a.dtype), tuple(self.shape))
        return _inplace(self, name, lambda x: drawn, overlap_ok=overlap_ok)
    raw = np.asarray(values, dtype=self._a.dtype)
    const = new_array(np.array(np.broadcast_to(raw, tuple(self.shape)), order="C"))
    if self.device.type != "cpu":
        const = funcgrad.device_put(const, self._a.device)
    return _inplace(self, name, lambda x: const, overlap_ok=overlap_ok)


def zero_(self: Tensor) -> Tensor:
    return _fill(self, "ZeroBackward0", 0, overlap_ok=True)


def fill_(self: Tensor, value: Any) -> Tensor:
    if isinstance(value, Tensor):
        return _inplace(self, "FillBackward3", lambda x, v: fnp.broadcast_to(
            cast(v, x.dtype), x.shape), [value], overlap_ok=True)
    return _fill(self, "FillBackward2", value, overlap_ok=True)


def copy_(self: Tensor, src: Any, non_blocking: bool = False) -> Tensor:
    """Copy ``src`` (broadcast, cast, moved to self's device) into ``self``."""
    src = operand(src)
    if not isinstance(src, Tensor):
        return fill_(self, src)
    dev = self._a.device

    def f(x: Any, s: Any) -> Any:
        s = fnp.broadcast_to(cast(s, x.dtype), x.shape)
        return s if s.device == dev else funcgrad.device_put(s, dev)
    return _inplace(self, "CopyBackwards", f, [src])


def _random_fill(name: str, draw: Callable) -> Callable:
    def method(self: Tensor, *args: Any, generator: Any = None, **kwargs: Any) -> Tensor:
        return _fill(self, name, draw(_draws(generator, self.device), tuple(self.shape),
                                      *args, **kwargs))
    method.__name__ = name
    return method


uniform_ = _random_fill("UniformBackward0", lambda r, s, a=0.0, b=1.0: r.uniform(a, b, s))
normal_ = _random_fill("NormalBackward0", lambda r, s, mean=0.0, std=1.0: r.normal(mean,
                                                                                   std, s))
bernoulli_ = _random_fill("BernoulliBackward0", lambda r, s, p=0.5: r.random(s) < p)
exponential_ = _random_fill("ExponentialBackward0", lambda r, s, lambd=1.0: r.exponential(
    1.0 / lambd, s))
random_ = _random_fill("RandomBackward0", lambda r, s, a=None, b=None: r.integers(
    0, 2 ** 24, s) if a is None else r.integers(0, a, s) if b is None else r.integers(a, b, s))

for _f, _n in [(zero_, "zero_"), (fill_, "fill_"), (copy_, "copy_"), (uniform_, "uniform_"),
               (normal_, "normal_"), (bernoulli_, "bernoulli_"),
               (exponential_, "exponential_"), (random_, "random_")]:
    METHODS[_n] = _f
