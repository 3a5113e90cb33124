"""JAX's type promotion: the lattice of dtypes and weak types, and its least upper bound.

numpy's promotion (``np.result_type``) is not JAX's, even with x64 enabled: JAX promotes
int64 with float32 to float32 (numpy: float64), int32 with float16 to float16, uint64
with int64 to the default float, and never widens a float because an integer joined it.
Python numbers are *weakly typed* (JAX's ``int``, ``float``, ``complex`` nodes, written
i*, f*, c*): they take the dtype of the array they meet when it is of their kind or a
higher one, and the default dtype of their kind (canonical: 32 bits with x64 disabled)
when nothing stronger is there. The lattice, each type below the ones it points to::

    bool -> i*;  i* -> u8, i8;  u8 -> u16, i16;  u16 -> u32, i32;  u32 -> u64, i64
    (i32 with x64 disabled);  u64 -> f*;  i8 -> i16 -> i32 -> i64 -> f*
    f* -> bf16, f16, float8s, c*;  bf16 -> f32;  f16 -> f32;  f32 -> f64, c64
    f64 -> c128;  c* -> c64 -> c128

The promoted type of several operands is their least upper bound. This module is that
rule, in one place: `funcgrad.numpy.result_type` / `promote_types` answer with it, the
elementwise primitives (and concatenate, matmul, einsum) cast their inputs with it
(`funcgrad.primitives.promotion`), and funcgrad.numpy's composite functions (mean, polyval,
interp, linspace, select...) choose their dtypes with `computed_dtype`. It sits
below `funcgrad.core` (numpy, `_config` and `dtypes` only).
"""
from __future__ import annotations

import functools
from typing import Any, Union

import numpy as np

from funcgrad._config import canonical_dtype, config, default_complex, default_float, \
    default_int
from funcgrad.dtypes import EXTENDED_FLOATS, FLOAT8 as _FLOAT8, TypePromotionError

__all__ = ["TypePromotionError", "WEAK_INT", "WEAK_FLOAT", "WEAK_COMPLEX", "Node", "node_of",
           "join", "dtype_of", "promote_types", "result_type", "INEXACT", "NUMERIC",
           "SCALAR_NODES", "COMPLEX", "computed_dtype", "computed_type", "weak_node"]


class _Weak(str):
    """A weak type: the node of Python ``int``, ``float`` or ``complex`` (its str is the
    Python type's name, as in JAX's messages)."""


WEAK_INT, WEAK_FLOAT, WEAK_COMPLEX = _Weak("int"), _Weak("float"), _Weak("complex")
Node = Union[np.dtype, _Weak]
# the node of each Python number type (a Python bool is a strong bool, as in JAX)
SCALAR_NODES: dict = {int: WEAK_INT, float: WEAK_FLOAT, complex: WEAK_COMPLEX,
                      bool: np.dtype(np.bool_)}

_D = np.dtype
_B, _U8, _U16, _U32, _U64 = _D("bool"), _D("uint8"), _D("uint16"), _D("uint32"), _D("uint64")
_I8, _I16, _I32, _I64 = _D("int8"), _D("int16"), _D("int32"), _D("int64")
_F16, _F32, _F64, _C64, _C128 = (_D("float16"), _D("float32"), _D("float64"),
                                 _D("complex64"), _D("complex128"))
_BF16 = [d for d in EXTENDED_FLOATS if d.name == "bfloat16"]



def _edges(x64: bool, strict: bool) -> dict:
    """Each node's immediate upper neighbours; in strict mode
    (``jax_numpy_dtype_promotion=strict``) only the weak types lead anywhere: i* to every
    integer and f*, f* to every float and c*, c* to every complex type."""
    if strict:
        ints, floats = [_U8, _U16, _U32, _U64, _I8, _I16, _I32, _I64], [
            *_FLOAT8, *_BF16, _F16, _F32, _F64]
        return {WEAK_INT: [WEAK_FLOAT, *ints], WEAK_FLOAT: [WEAK_COMPLEX, *floats],
                WEAK_COMPLEX: [_C64, _C128],
                **{d: [] for d in [_B, *ints, *floats, _C64, _C128]}}
    return {
        _B: [WEAK_INT], WEAK_INT: [_U8, _I8], _U8: [_I16, _U16], _U16: [_I32, _U32],
        # with x64 disabled, two 32-bit inputs never make a 64-bit type
        _U32: [_I64, _U64] if x64 else [_I32, _U64], _U64: [WEAK_FLOAT],
        _I8: [_I16], _I16: [_I32], _I32: [_I64], _I64: [WEAK_FLOAT],
        WEAK_FLOAT: [*_BF16, _F16, *_FLOAT8, WEAK_COMPLEX], **{b: [_F32] for b in _BF16},
        **{f: [] for f in _FLOAT8},
        _F16: [_F32], _F32: [_F64, _C64], _F64: [_C128],
        WEAK_COMPLEX: [_C64], _C64: [_C128], _C128: [],
    }


@functools.lru_cache(maxsize=4)
def _upper_bounds(x64: bool, strict: bool) -> dict:
    """node -> every node at or above it (the transitive closure of `_edges`)."""
    edges = _edges(x64, strict)
    bounds: dict = {}
    for node in edges:
        seen, todo = {node}, [node]
        while todo:
            for up in edges[todo.pop()]:
                if up not in seen:
                    seen.add(up)
                    todo.append(up)
        bounds[node] = frozenset(seen)
    return bounds


@functools.lru_cache(maxsize=4096)
def _join(nodes: tuple, x64: bool, strict: bool) -> Node:
    """The least upper bound of the nodes (a tuple: the error names them in order)."""
    ub = _upper_bounds(x64, strict)
    common = frozenset.intersection(*(ub[n] for n in nodes))
    least = [c for c in common if common <= ub[c]]
    if len(least) != 1:
        names = tuple(str(n) for n in nodes)
        reason = (" when jax_numpy_dtype_promotion=strict. Try explicitly casting inputs to "
                  "the desired output type, or set jax_numpy_dtype_promotion=standard."
                  if strict else
                  ". To avoid unintended promotion, 8-bit floats do not support implicit "
                  "promotion. If you'd like your inputs to be promoted to another type, you "
                  "can do so explicitly using e.g. x.astype('float32')"
                  if _FLOAT8.intersection(nodes) else
                  ". Try explicitly casting inputs to the desired output type.")
        raise TypePromotionError(f"Input dtypes {names} have no available implicit dtype "
                                 f"promotion path{reason}")
    return least[0]


def join(*nodes: Node) -> Node:
    """The promoted node of ``nodes`` (dtypes and weak types): their least upper bound.
    TypePromotionError (JAX's text) where there is none; ValueError for a dtype that is not
    on the lattice (strings, objects, datetimes)."""
    x64, strict = config.x64_enabled, config.strict_promotion
    ub = _upper_bounds(x64, strict)
    for n in nodes:
        if n not in ub:
            raise ValueError(f"dtype={n!r} is not a valid dtype for JAX type promotion.")
    return _join(nodes, x64, strict)


def dtype_of(node: Node) -> np.dtype:
    """The dtype a node stands for: a weak type's is its kind's default (32-bit with x64
    disabled)."""
    if node is WEAK_INT:
        return default_int()
    if node is WEAK_FLOAT:
        return default_float()
    if node is WEAK_COMPLEX:
        return default_complex()
    return node


# a weakly typed dtype's node by kind (JAX's: a weak bool is a bool; weak bfloat16 a
# weak float)
_WEAK_KINDS = {"i": WEAK_INT, "u": WEAK_INT, "f": WEAK_FLOAT, "V": WEAK_FLOAT,
               "c": WEAK_COMPLEX}


def weak_node(dtype: np.dtype) -> Node:
    """The lattice node of a weakly typed value of ``dtype`` (a weak Array's, a jit
    tracer's of a Python number)."""
    return _WEAK_KINDS.get(dtype.kind, dtype)


def node_of(x: Any) -> Node:
    """The lattice node of an operand or dtype specifier: a Python number (or the types
    ``int``, ``float``, ``complex``) is weak, and so is an Array with ``weak_type``;
    anything else with a dtype has it; other specifiers go through ``np.dtype``."""
    t = type(x)
    if t in SCALAR_NODES:
        return SCALAR_NODES[t]
    if isinstance(x, type):  # int, float, complex (weak), np.float32, ...
        return SCALAR_NODES[x] if x in (int, float, complex) else np.dtype(x)
    if getattr(x, "weak_type", False) is True:  # a weak Array, tracer or ShapedArray
        return weak_node(x.dtype)
    dtype = getattr(x, "dtype", None)
    return np.dtype(x if dtype is None else dtype)


def promote_types(a: Any, b: Any) -> np.dtype:
    """JAX's ``jnp.promote_types``: the promoted dtype of two dtypes, not canonicalized
    (``promote_types(int64, float32)`` is float32; numpy's is float64)."""
    return dtype_of(join(np.dtype(a), np.dtype(b)))


def result_type(*args: Any, return_weak_type_flag: bool = False) -> Any:
    """JAX's ``jnp.result_type``: the promoted dtype of arrays, dtypes and Python numbers,
    canonicalized (32-bit with x64 disabled); with ``return_weak_type_flag`` also whether
    it is weakly typed (only weak operands, Python numbers and weak Arrays, took part)."""
    if not args:
        raise ValueError("at least one array or dtype is required")
    node = join(*(node_of(a) for a in args))
    dtype = canonical_dtype(dtype_of(node))
    return (dtype, isinstance(node, _Weak)) if return_weak_type_flag else dtype


# the dtype an inexact function (sin, exp, true_divide...) computes in for a non-inexact
# one (JAX's `to_inexact_dtype`): 32-bit floats below 64-bit integers
INEXACT: dict = {**{d: _F32 for d in (_B, _U8, _I8, _U16, _I16, _U32, _I32)},
                 _U64: _F64, _I64: _F64}
# the dtype a numeric function (square, ...) computes booleans in (JAX's `to_numeric_dtype`)
NUMERIC: dict = {_B: _I32}
# the dtype a complex function (fft, roots...) computes in (JAX's `to_complex_dtype`):
# complex128 from 64-bit types, complex64 from the rest
COMPLEX: dict = {**{d: _C64 for d in (*INEXACT, _F16, _F32, _C64, *_BF16)},
                 _U64: _C128, _I64: _C128, _F64: _C128, _C128: _C128}


def computed_type(*operands: Any, rule: dict | None = None) -> tuple[np.dtype, bool]:
    """(the dtype a jax.numpy function that is not one primitive (concatenate's pieces,
    mean, polyval, interp, linspace...) computes ``operands`` in, whether it is weakly
    typed): their `result_type` (Python numbers and weak Arrays weak), sent through
    ``rule`` (`INEXACT`, `NUMERIC`, `COMPLEX`: JAX's ``promote_dtypes_inexact`` and its
    siblings), canonicalized. The one place where funcgrad.numpy's and the kernels'
    promotions are decided, so that they give jax.numpy's dtypes (int64 with float32 is
    float32, not numpy's float64)."""
    node = join(*(node_of(a if type(a) in SCALAR_NODES or hasattr(a, "dtype")
                          else np.asarray(a)) for a in operands))
    dtype = dtype_of(node)
    if rule is not None:
        dtype = rule.get(dtype, dtype)
    return canonical_dtype(dtype), isinstance(node, _Weak)


def computed_dtype(*operands: Any, rule: dict | None = None) -> np.dtype:
    """The dtype of `computed_type`."""
    return computed_type(*operands, rule=rule)[0]
