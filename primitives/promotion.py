"""The input handling of elementwise primitives: their operands cast to one dtype by JAX's
promotion (`funcgrad._promotion`), before the call reaches a backend or a transform.

numpy's ufuncs would promote mixed operands themselves, by numpy's rules (int64 with
float32 is float64, ``exp(100.0)`` is float64 with x64 disabled); JAX's lax primitives
take operands of one dtype, which jax.numpy makes with its lattice. funcgrad's numpy
functions *are* its primitives, so the cast happens here, in `Promotion.__call__`, which
`funcgrad.core.bind` runs first for every primitive that has one: the casts are
`convert_element_type` calls, so jit records them, vmap batches them and the tape casts
each cotangent back to its input's dtype. Where the operands already agree (nearly every
call) nothing happens.

Operands: an Array (or tracer) keeps its dtype, even one with x64 disabled that was
created 64-bit on request; a Python number is weakly typed and stays a number where an
array of the promoted dtype is beside it (numpy then converts it as JAX does), else it
becomes a 0-d array of the promoted dtype (``exp(100.0)`` is float32 with x64 disabled,
so ``log(exp(100.0))`` is inf, as in JAX); a numpy array, numpy scalar or list is made an
array as `asarray` does, canonicalized (32 bits with x64 disabled).
"""
from __future__ import annotations

from typing import Any, Sequence

import numpy as np

from funcgrad._config import canonical_dtype, config
from funcgrad._promotion import INEXACT, NUMERIC, SCALAR_NODES, TypePromotionError, \
    Node, dtype_of, join, weak_node
from funcgrad.array import Array, new_array, weakened
from funcgrad.core import Tracer
from .control import convert_element_type
from .shape import concatenate

__all__ = ["Promotion", "SAME", "INEXACT_OPS", "NUMERIC_OPS", "AFTER_CONDITION",
           "DEFAULT_FLOAT", "INEXACT_FIRST"]


def _scalar_behind(a: Tracer) -> type | None:
    """The Python number type a tracer stands for (a weakly typed jit argument), else
    None."""
    while isinstance(a, Tracer):
        a = a._primal
    t = type(a)
    return t if t in SCALAR_NODES else None


# Python number types by rank, and the dtype kinds an array of which absorbs a number of
# that rank (keeps its dtype: the number is weak); "V" is bfloat16's kind
_RANK = {bool: 0, int: 1, float: 2, complex: 3}
_ABSORBS = ("biufcV", "iufcV", "fcV", "c")


class Promotion:
    """How an elementwise primitive brings its operands (``args[first:stop]``: a select's
    condition and ldexp's exponent are not promoted) to one dtype: their least upper bound
    on JAX's lattice, then ``compute`` (dtype -> dtype, e.g. integers -> float32 for sin,
    JAX's `to_inexact_dtype`) for the dtype the function computes in."""

    __slots__ = ("compute", "first", "stop")

    def __init__(self, compute: dict, first: int = 0, stop: int | None = None):
        self.compute = compute
        self.first = first
        self.stop = stop

    def __call__(self, args: Sequence) -> Sequence:
        """``args`` with the promoted operands cast; ``args`` itself where nothing needs
        a cast (the fast path: Arrays or tracers of one dtype the function computes in,
        beside Python numbers that take that dtype, as in ``x * 2.0``). A tracer standing
        for a Python number is weak only where its dtype differs from the others', which
        sends the call to `_promote` anyway."""
        dtype = None
        rank = -1  # of the highest Python number type among the operands
        for a in args[self.first:self.stop] if self.first or self.stop else args:
            t = type(a)
            if t is Array or (t not in _RANK and isinstance(a, Array)):  # (tracers too)
                if dtype is None:
                    dtype = a.dtype
                elif a.dtype is not dtype and a.dtype != dtype:
                    return self._promote(args)
            elif t in _RANK:
                rank = max(rank, _RANK[t])
            else:
                return self._promote(args)
        if dtype is None or dtype in self.compute or (rank >= 0 and (
                dtype.kind not in _ABSORBS[rank] or rank == 0 and config.strict_promotion)):
            return self._promote(args)  # (a Python bool is a strong bool: strict refuses it)
        return args

    def _promote(self, args: Sequence) -> Sequence:
        first, stop = self.first, self.stop
        operands = args[first:stop]
        nodes, numbers = [], []
        for a in operands:
            node, number = _node(a)
            nodes.append(node)
            numbers.append(number)
        try:
            node = join(*nodes)
        except TypePromotionError:  # (a ValueError too: no common type is JAX's error)
            raise
        except ValueError:  # not a numeric dtype (strings, objects...): the kernel decides
            return args
        dtype = dtype_of(node)
        chosen = self.compute.get(dtype)
        if chosen is not None:
            dtype = canonical_dtype(chosen)
        weak = node in _WEAK_NODES  # (JAX: int32 * 2.0 is a weak float)
        beside_array = not all(numbers)
        return [*args[:first], *(_cast(a, dtype, weak, number, beside_array)
                                 for a, number in zip(operands, numbers)),
                *(args[stop:] if stop is not None else ())]


_WEAK_NODES = frozenset(SCALAR_NODES[t] for t in (int, float, complex))


def _node(a: Any) -> tuple[Node, bool]:
    """(the lattice node of operand ``a``, whether it is a Python number or a jit tracer
    of one). Weak Arrays and tracers of them have their kind's weak node; numpy's arrays
    and scalars and lists are made arrays, canonicalized."""
    scalar = type(a) if type(a) in SCALAR_NODES else (
        _scalar_behind(a) if isinstance(a, Tracer) else None)
    if scalar is not None:
        return SCALAR_NODES[scalar], True
    if isinstance(a, Array):
        return (weak_node(a.dtype) if a.weak_type else a.dtype), False
    raw = a if hasattr(a, "dtype") else np.asarray(a)
    return canonical_dtype(raw.dtype), False


def _cast(a: Any, dtype: np.dtype, weak: bool, number: bool, beside_array: bool) -> Any:
    """Operand ``a`` as ``dtype``, weakly typed if the promoted type is (``weak``). A
    Python number (``number``; or a tracer of one) stays as it is ``beside_array``: numpy
    converts it to that array's dtype, as JAX does."""
    if number and beside_array:
        return a
    if isinstance(a, Array):  # tracers too
        if a.dtype == dtype and (a.weak_type or not weak):
            return a
        return (convert_element_type.bind(a, new_dtype=dtype, weak_type=True) if weak
                else convert_element_type.bind(a, new_dtype=dtype))
    own = getattr(a, "dtype", None)
    if own is not None and own == dtype:  # (np.dtype compares None as float64)
        return a
    raw = np.asarray(a, dtype) if number else np.asarray(a).astype(dtype)
    return weakened(new_array(raw)) if weak else raw


# the dtype rules of the elementwise primitives (JAX's jax.numpy functions):
# the promoted dtype as it is (add, maximum, comparisons, floor...)
SAME = Promotion({})
# booleans as int32 (square)
NUMERIC_OPS = Promotion(NUMERIC)
# integers and booleans as floats (sin, exp, true_divide, arctan2...)
INEXACT_OPS = Promotion(INEXACT)
# integers as the default float (rint), canonicalized in `_promote`
DEFAULT_FLOAT = Promotion({d: np.dtype(np.float64) for d in INEXACT})
# a select: x and y promoted, the condition left as it is
AFTER_CONDITION = Promotion({}, first=1)
# ldexp: x as a float, the integer exponent left as it is
INEXACT_FIRST = Promotion(INEXACT, stop=1)
# concatenate's pieces are promoted to one dtype as jax.numpy's concatenate does (declared
# here: shape.py sits below this module, under `control`'s batching rules)
concatenate.promote = SAME
