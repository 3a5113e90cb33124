"""The schema of a custom op (`funcgrad.torch.library.custom_op`): what its parameters and
results are, read from the function's type hints as PyTorch's ``infer_schema`` reads them,
and the conversion of a call's arguments into the op primitive's inputs and back.

A custom op is one funcgrad primitive. Its array inputs are the call's tensors in order
(a ``Tensor[]`` argument contributes each of its tensors, an absent ``Tensor?`` none); every
other argument is static and travels in the primitive's one parameter ``args``: the
argument values with each tensor replaced by its `Slot` (its position among the inputs),
lists turned into tuples so that the parameter is hashable. `Schema.unflatten` rebuilds
the call from new arrays (the kernel's tensors, the backward's tensors) and those params.

Schema types, as PyTorch writes them: ``Tensor``, ``Tensor?``, ``Tensor[]``, ``Tensor?[]``,
``SymInt`` (int), ``float``, ``bool`` (each with ``?``, ``[]`` and ``[]?`` forms), ``str``,
``Scalar`` (a Python number), ``ScalarType`` (a dtype), ``Device``.
"""
from __future__ import annotations

import collections.abc
import inspect
import numbers
import types
import typing
from typing import Any, Callable, NamedTuple, Sequence

from funcgrad.torch._runtime import dtypes as D
from funcgrad.torch._tensor import Tensor

__all__ = ["Schema", "Param", "Slot", "infer_schema"]


class Slot(NamedTuple):
    """A tensor argument's place among the primitive's array inputs."""
    index: int


class Param(NamedTuple):
    name: str
    type: str          # the schema type ("Tensor", "Tensor?", "SymInt[]", ...)
    default: Any       # inspect.Parameter.empty when there is none
    keyword_only: bool


_EMPTY = inspect.Parameter.empty
_SEQUENCES = (list, collections.abc.Sequence)
# Python type -> (schema type, with a [] form, with a ?[] form, with a []? form)
_BASE_TYPES = {Tensor: ("Tensor", True, True, False), int: ("SymInt", True, False, True),
               float: ("float", True, False, True), bool: ("bool", True, False, True),
               str: ("str", False, False, False),
               numbers.Number: ("Scalar", True, False, False),  # also Union[int, float, bool]
               D.dtype: ("ScalarType", False, False, False),
               D.device: ("Device", False, False, False)}
_VALID = ("Tensor, Optional[Tensor], Sequence[Tensor] (or list[Tensor]), "
          "Sequence[Optional[Tensor]], int, float, bool (each also Optional[...], "
          "Sequence[...] and Optional[Sequence[...]]), str, Optional[str], "
          "Union[int, float, bool] (a Scalar) and Sequence of it, torch.dtype, torch.device "
          "(and their Optional forms)")


def _union_args(hint: Any) -> tuple:
    """The members of a Union (typing.Union[...] or X | Y), () for anything else."""
    if typing.get_origin(hint) in (typing.Union, types.UnionType):
        return typing.get_args(hint)
    return ()


def _base(hint: Any) -> tuple | None:
    """The `_BASE_TYPES` entry of a type (Union[int, float, bool] in any spelling is a
    Scalar), None when it has none."""
    if set(_union_args(hint)) == {int, float, bool}:
        return _BASE_TYPES[numbers.Number]
    try:
        return _BASE_TYPES.get(hint)
    except TypeError:  # an unhashable annotation
        return None


def _optional_of(hint: Any) -> Any:
    """X for Optional[X] (X | None), else None."""
    args = _union_args(hint)
    if type(None) in args and len(args) > 1:
        rest = tuple(a for a in args if a is not type(None))
        return rest[0] if len(rest) == 1 else typing.Union[rest]
    return None


def _sequence_of(hint: Any) -> Any:
    """X for Sequence[X] / list[X] / typing.List[X], else None."""
    if typing.get_origin(hint) in _SEQUENCES and len(typing.get_args(hint)) == 1:
        return typing.get_args(hint)[0]
    return None


def _schema_type(hint: Any) -> str | None:
    """The schema type of a parameter annotation, None when unsupported."""
    base = _base(hint)
    if base is not None:
        return base[0]
    inner = _optional_of(hint)
    if inner is not None:
        base = _base(inner)
        if base is not None:
            return base[0] + "?"
        element = _base(_sequence_of(inner))
        return element[0] + "[]?" if element is not None and element[3] else None
    element = _sequence_of(hint)
    if element is None:
        return None
    base = _base(element)
    if base is not None:
        return base[0] + "[]" if base[1] else None
    optional = _base(_optional_of(element))
    return optional[0] + "?[]" if optional is not None and optional[2] else None


def _return_types(hint: Any, error: Callable) -> tuple[str, tuple]:
    """('single' | 'tuple' | 'list', schema types) of a return annotation."""
    if hint is _EMPTY:
        error("No return type annotation was provided. Please add one.")
    if hint is None or hint is type(None):
        error("Return type None: custom ops that return nothing mutate their inputs, which "
              "funcgrad.torch.library does not support yet; return new tensors")
    if hint is Tensor:
        return "single", ("Tensor",)
    if _sequence_of(hint) is Tensor and typing.get_origin(hint) is list:
        return "list", ("Tensor[]",)
    args = typing.get_args(hint)
    if typing.get_origin(hint) is tuple and args and all(a is Tensor for a in args):
        return "tuple", ("Tensor",) * len(args)
    error(f"Return has unsupported type {hint}. The valid types are: Tensor, a tuple of "
          "Tensors (tuple[Tensor, Tensor]), list[Tensor] (funcgrad's custom ops return "
          "tensors only)")
    raise AssertionError  # error() raises


# PyTorch's ScalarType numbers, which its C++ schema printer writes for dtype defaults
_SCALAR_TYPE_NUMBERS = {"uint8": 0, "int8": 1, "int16": 2, "int32": 3, "int64": 4,
                        "float16": 5, "float32": 6, "float64": 7, "complex64": 9,
                        "complex128": 10, "bool": 11, "bfloat16": 15}


def _default_text(value: Any, cpp: bool) -> str:
    """A default as infer_schema writes it (``cpp``: as the op's printed schema does)."""
    if isinstance(value, D.dtype):
        return str(_SCALAR_TYPE_NUMBERS[value.name]) if cpp else repr(value)[len("torch."):]
    if isinstance(value, D.device):
        return str(value) if cpp else f'"{value}"'
    if isinstance(value, str):
        return f'"{value}"'
    if cpp and isinstance(value, float) and not isinstance(value, bool):
        text = f"{value:.17g}"
        return text if any(c in text for c in ".eni") else text + "."
    return str(value)


class Schema:
    """The parameters and results of a custom op, and the checks and conversions of its
    calls."""

    def __init__(self, fn: Callable, mutates_args: Any):
        sig = inspect.signature(fn)

        def error(what: str) -> None:
            raise ValueError(f"infer_schema(func): {what} Got func with signature {sig})")

        try:
            hints = typing.get_type_hints(fn)
        except Exception as e:  # a hint that does not resolve (a name defined too late)
            error(f"Unsupported type annotation. It is not a type. ({type(e).__name__}: {e})")
        params = []
        for name, p in sig.parameters.items():
            if p.kind not in (p.POSITIONAL_OR_KEYWORD, p.KEYWORD_ONLY):
                error("We do not support positional-only args, varargs, or varkwargs.")
            if p.annotation is _EMPTY:
                error(f"Parameter {name} must have a type annotation.")
            kind = _schema_type(hints[name])
            if kind is None:
                error(f"Parameter {name} has unsupported type {p.annotation}. The valid "
                      f"types are: {_VALID}.")
            params.append(Param(name, kind, p.default, p.kind is p.KEYWORD_ONLY))
        if mutates_args != "unknown":
            unseen = set(mutates_args) - set(sig.parameters)
            if unseen:
                error(f"{unseen} in mutates_args were not found in the custom op's "
                      "signature. mutates_args should contain the names of all args that "
                      "the custom op mutates, or just the string 'unknown' if you don't "
                      "know.")
        self.params: tuple = tuple(params)
        self.signature = sig
        returns = hints.get("return", _EMPTY) if sig.return_annotation is not _EMPTY else _EMPTY
        self.returns, self.return_types = _return_types(returns, error)

    # -- text ------------------------------------------------------------------------------
    def text(self, name: str = "", cpp: bool = False) -> str:
        """PyTorch's schema string: ``mylib::op(Tensor x, *, float alpha=1.0) -> Tensor``
        as infer_schema writes it, or with ``cpp`` as the op's ``_schema`` prints
        (``alpha=1.``, dtypes as their ScalarType numbers)."""
        parts, star = [], False
        for p in self.params:
            if p.keyword_only and not star:
                parts.append("*")
                star = True
            default = "" if p.default is _EMPTY else "=" + _default_text(p.default, cpp)
            parts.append(f"{p.type} {p.name}{default}")
        rets = self.return_types
        ret = rets[0] if self.returns != "tuple" else "(" + ", ".join(rets) + ")"
        return f"{name}({', '.join(parts)}) -> {ret}"

    # -- calls -----------------------------------------------------------------------------
    def bind(self, opname: str, args: tuple, kwargs: dict) -> list:
        """The value of every parameter for a call (defaults filled in), type-checked."""
        try:
            bound = self.signature.bind(*args, **kwargs)
        except TypeError as e:
            raise TypeError(f"{opname}() {e}. Declaration: {self.text(opname)}") from None
        bound.apply_defaults()
        values = list(bound.arguments.values())
        for position, (p, v) in enumerate(zip(self.params, values)):
            _check(opname, p, v, position, self)
        return values

    def flatten(self, values: Sequence) -> tuple[list, tuple]:
        """(the tensors of a call, in order; the static ``args`` parameter)."""
        tensors: list = []

        def slot(t: Any) -> Any:
            if t is None:
                return None
            tensors.append(t)
            return Slot(len(tensors) - 1)

        static = []
        for p, v in zip(self.params, values):
            if p.type.startswith("Tensor"):
                static.append(tuple(slot(t) for t in v) if p.type.endswith("[]")
                              else slot(v))
            else:
                static.append(tuple(v) if isinstance(v, list) else v)
        return tensors, tuple(static)

    def unflatten(self, static: tuple, tensors: Sequence) -> list:
        """The argument values with each `Slot` replaced by its tensor (lists restored)."""
        def fill(v: Any) -> Any:
            return tensors[v.index] if isinstance(v, Slot) else v
        values = []
        for p, v in zip(self.params, static):
            if isinstance(v, tuple) and "[]" in p.type:
                values.append([fill(x) for x in v])
            else:
                values.append(fill(v))
        return values

    def call(self, fn: Callable, values: Sequence) -> Any:
        """``fn`` called with these parameter values (keyword-only ones by name)."""
        pos = [v for p, v in zip(self.params, values) if not p.keyword_only]
        kw = {p.name: v for p, v in zip(self.params, values) if p.keyword_only}
        return fn(*pos, **kw)


_PY_TYPES = {"SymInt": (int,), "float": (float, int), "bool": (bool,), "str": (str,),
             "Scalar": (int, float, bool, complex), "ScalarType": (D.dtype,),
             "Device": (D.device, str)}


def _check(opname: str, p: Param, v: Any, position: int, schema: Schema) -> None:
    """PyTorch's error for an argument of the wrong type."""
    base = p.type.rstrip("?[]")
    optional = p.type.endswith("?")
    if v is None and optional:
        return
    if p.type.endswith("[]") or p.type.endswith("[]?"):
        ok = isinstance(v, (list, tuple)) and all(
            _is_a(base, x) or (x is None and p.type.startswith("Tensor?")) for x in v)
    else:
        ok = _is_a(base, v)
    if not ok:
        wanted = {"SymInt": "int", "Tensor": "Tensor"}.get(base, base)
        if "[]" in p.type:
            wanted = f"List[{wanted}]"
        if optional:
            wanted = f"Optional[{wanted}]"
        raise RuntimeError(f"{opname}() Expected a value of type '{wanted}' for argument "
                           f"'{p.name}' but instead found type '{type(v).__name__}'.\n"
                           f"Position: {position}\nValue: {v!r}\n"
                           f"Declaration: {schema.text(opname)}")


def _is_a(base: str, v: Any) -> bool:
    if base == "Tensor":
        return isinstance(v, Tensor)
    if base in ("SymInt", "float") and isinstance(v, bool):
        return False  # a bool is not an int or a float to a schema
    return isinstance(v, _PY_TYPES[base])


def infer_schema(prototype_function: Callable, /, *, mutates_args: Any,
                 op_name: str | None = None) -> str:
    """torch.library.infer_schema: the schema string of a function from its type hints."""
    return Schema(prototype_function, mutates_args).text(op_name or "")
