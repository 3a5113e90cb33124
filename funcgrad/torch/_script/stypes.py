"""TorchScript's static types: what a scripted value is (``Tensor``, ``int``, ``List[int]``,
``Optional[Tensor]``...), read from annotations, unified where control flow joins, and
printed as TorchScript prints them (``int[]``, ``Tensor?``, ``(Tensor, int)``).

Types are plain immutable objects compared by value, so that the frontend can check a
program before it runs, and the serialized IR can store them as their printed strings
(`parse`): a loaded file never evaluates Python to learn a type.
"""
from __future__ import annotations

import ast
from dataclasses import dataclass
from typing import Any

__all__ = ["Type", "TENSOR", "INT", "FLOAT", "BOOL", "STR", "NONE", "NUMBER", "DEVICE",
           "ANY", "ListType", "TupleType", "OptionalType", "DictType", "ClassType",
           "FunctionType", "unify", "from_annotation", "of_value", "parse", "accepts"]


@dataclass(frozen=True)
class Type:
    """A named scalar type (``Tensor``, ``int``...)."""
    name: str

    def __str__(self) -> str:
        return self.name


TENSOR, INT, FLOAT, BOOL = Type("Tensor"), Type("int"), Type("float"), Type("bool")
STR, NONE, NUMBER = Type("str"), Type("NoneType"), Type("Scalar")
DEVICE, ANY = Type("Device"), Type("Any")
_NAMED = {t.name: t for t in (TENSOR, INT, FLOAT, BOOL, STR, NONE, NUMBER, DEVICE, ANY)}


@dataclass(frozen=True)
class ListType(Type):
    elem: Type = TENSOR

    def __str__(self) -> str:
        return f"{self.elem}[]"


@dataclass(frozen=True)
class TupleType(Type):
    elems: tuple = ()

    def __str__(self) -> str:
        return "(" + ", ".join(str(e) for e in self.elems) + ")"


@dataclass(frozen=True)
class OptionalType(Type):
    elem: Type = TENSOR

    def __str__(self) -> str:
        return f"{self.elem}?"


@dataclass(frozen=True)
class DictType(Type):
    key: Type = STR
    value: Type = TENSOR

    def __str__(self) -> str:
        return f"Dict({self.key}, {self.value})"


@dataclass(frozen=True)
class ClassType(Type):
    """A module's type (``__torch__.M``); values of it are not serialized as data."""

    def __str__(self) -> str:
        return f"__torch__.{self.name}"


@dataclass(frozen=True)
class FunctionType(Type):
    def __str__(self) -> str:
        return "Function"


def _list(elem: Type) -> ListType:
    return ListType("List", elem)


def _tuple(elems: tuple) -> TupleType:
    return TupleType("Tuple", tuple(elems))


def _optional(elem: Type) -> Type:
    return elem if elem == NONE or isinstance(elem, OptionalType) else OptionalType(
        "Optional", elem)


def unify(a: Type, b: Type) -> Type | None:
    """The type both ``a`` and ``b`` are (TorchScript's unifyTypes: None and T make
    Optional[T], int and float do not mix), or None."""
    if a == b:
        return a
    if a == NONE:
        return _optional(b)
    if b == NONE:
        return _optional(a)
    if isinstance(a, OptionalType) and accepts(a, b):
        return a
    if isinstance(b, OptionalType) and accepts(b, a):
        return b
    if isinstance(a, TupleType) and isinstance(b, TupleType) and len(a.elems) == len(b.elems):
        elems = [unify(x, y) for x, y in zip(a.elems, b.elems)]
        return None if None in elems else _tuple(tuple(elems))
    return None


def accepts(declared: Type, actual: Type) -> bool:
    """Whether a value of type ``actual`` may be passed where ``declared`` is expected."""
    if declared == actual or declared == ANY:
        return True
    if isinstance(declared, OptionalType):
        return actual == NONE or accepts(declared.elem, actual)
    if declared == FLOAT and actual == INT:  # TorchScript converts int arguments to float
        return True
    if declared == NUMBER:
        return actual in (INT, FLOAT, BOOL)
    if isinstance(declared, ListType) and isinstance(actual, ListType):
        return actual.elem == ANY or accepts(declared.elem, actual.elem)
    if isinstance(declared, TupleType) and isinstance(actual, TupleType):
        return len(declared.elems) == len(actual.elems) and all(
            accepts(d, a) for d, a in zip(declared.elems, actual.elems))
    return False


_GENERIC = {"List": 1, "list": 1, "Tuple": -1, "tuple": -1, "Optional": 1, "Dict": 2,
            "dict": 2}


def from_annotation(node: ast.expr | None, resolve: Any) -> Type | None:
    """The type an annotation's AST spells (``List[int]``, ``list[int]``, ``int | None``,
    ``torch.Tensor``, ``Optional[Tensor]``...), None if there is none. ``resolve(name)``
    gives a name's value in the function's scope (for ``torch.Tensor`` spelled through
    an import); unknown spellings raise ValueError."""
    if node is None:
        return None
    if isinstance(node, ast.Constant):
        if node.value is None:
            return NONE
        if isinstance(node.value, str):
            return from_annotation(ast.parse(node.value, mode="eval").body, resolve)
    if isinstance(node, ast.BinOp) and isinstance(node.op, ast.BitOr):
        left, right = from_annotation(node.left, resolve), from_annotation(node.right, resolve)
        both = unify(left, right)
        if both is None:
            raise ValueError(f"Union[{left}, {right}] is not supported")
        return both
    if isinstance(node, ast.Subscript):
        return _generic(node, resolve)
    name = _dotted(node)
    last = name.rsplit(".", 1)[-1]
    if last in ("Tensor", "Parameter"):
        return TENSOR
    simple = {"int": INT, "float": FLOAT, "bool": BOOL, "str": STR, "None": NONE,
              "Number": NUMBER, "device": DEVICE, "Any": ANY}
    if last in simple:
        return simple[last]
    raise ValueError(f"Unknown type annotation: '{name}'")


def _generic(node: ast.Subscript, resolve: Any) -> Type:
    base = _dotted(node.value).rsplit(".", 1)[-1]
    if base == "Final":
        return from_annotation(node.slice, resolve)
    args = node.slice.elts if isinstance(node.slice, ast.Tuple) else [node.slice]
    types = [from_annotation(a, resolve) for a in args]
    if base not in _GENERIC or _GENERIC[base] not in (-1, len(types)):
        raise ValueError(f"Unknown type annotation: '{ast.unparse(node)}'")
    if base in ("List", "list"):
        return _list(types[0])
    if base in ("Tuple", "tuple"):
        return _tuple(tuple(types))
    if base == "Optional":
        return _optional(types[0])
    return DictType("Dict", types[0], types[1])


def _dotted(node: ast.expr) -> str:
    if isinstance(node, ast.Name):
        return node.id
    if isinstance(node, ast.Attribute):
        return _dotted(node.value) + "." + node.attr
    raise ValueError(f"Unknown type annotation: '{ast.unparse(node)}'")


def of_value(value: Any, is_tensor: Any) -> Type | None:
    """The type of a Python value a scripted program reads (a module attribute, a
    constant), None if TorchScript has none for it."""
    if is_tensor(value):
        return TENSOR
    for py, t in ((bool, BOOL), (int, INT), (float, FLOAT), (str, STR)):
        if isinstance(value, py):
            return t
    if value is None:
        return NONE
    if isinstance(value, (list, tuple)):
        elems = [of_value(v, is_tensor) for v in value]
        if None in elems:
            return None
        if isinstance(value, tuple):
            return _tuple(tuple(elems))
        return _list(elems[0] if elems and all(e == elems[0] for e in elems) else ANY) \
            if elems else _list(TENSOR)
    return None


def parse(text: str) -> Type:
    """The type printed as ``text`` (the inverse of ``str``), for loading saved IR."""
    text = text.strip()
    if text.endswith("[]"):
        return _list(parse(text[:-2]))
    if text.endswith("?"):
        return _optional(parse(text[:-1]))
    if text.startswith("(") and text.endswith(")"):
        inner = text[1:-1]
        return _tuple(tuple(parse(p) for p in _split_top(inner)) if inner else ())
    if text.startswith("Dict(") and text.endswith(")"):
        k, v = _split_top(text[5:-1])
        return DictType("Dict", parse(k), parse(v))
    if text.startswith("__torch__."):
        return ClassType(text[len("__torch__."):])
    if text == "Function":
        return FunctionType("Function")
    if text in _NAMED:
        return _NAMED[text]
    raise ValueError(f"unknown type {text!r} in a saved program")


def _split_top(text: str) -> list:
    """``text`` split at the commas outside brackets."""
    parts, depth, start = [], 0, 0
    for i, ch in enumerate(text):
        depth += ch in "([" and 1 or (-1 if ch in ")]" else 0)
        if ch == "," and depth == 0:
            parts.append(text[start:i])
            start = i + 1
    parts.append(text[start:])
    return [p.strip() for p in parts]
