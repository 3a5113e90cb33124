"""`jax.lax`'s elementwise binary operations: strict about dtypes, unlike `funcgrad.numpy`.

``lax`` is JAX's layer without implicit promotion: ``lax.add(int32, float32)`` is a
TypeError there, and a program written against funcgrad.lax must not silently compute in a
promoted dtype that JAX would refuse. A Python number is weakly typed: it takes the other
operand's dtype when it is the same kind of number (``lax.add(x_f32, 1.0)``), as in JAX.
Every binary lax operation goes through the one check, `_same_dtypes`.
"""
from __future__ import annotations

from typing import Any, Callable

import numpy as np

import funcgrad.numpy as fnp
from funcgrad._config import canonical_dtype

__all__ = ["add", "mul", "max", "min", "sub", "strict"]

_WEAK = (bool, int, float, complex)


def _kind(dtype: np.dtype) -> str:
    return {"u": "i"}.get(dtype.kind, dtype.kind)


def _same_dtypes(name: str, numpy_name: str, x: Any, y: Any) -> tuple:
    """``x, y`` with a weakly typed one in the other's dtype; TypeError (JAX's text) where
    their dtypes differ."""
    weak = [type(v) in _WEAK for v in (x, y)]
    dtypes = [canonical_dtype(np.result_type(v)) if w else np.dtype(v.dtype)
              if hasattr(v, "dtype") else canonical_dtype(np.result_type(v))
              for v, w in zip((x, y), weak)]
    if dtypes[0] == dtypes[1]:
        return x, y
    if weak[0] != weak[1] and _kind(dtypes[0]) == _kind(dtypes[1]):
        typed = dtypes[1] if weak[0] else dtypes[0]
        return ((fnp.asarray(x, typed), y) if weak[0] else (x, fnp.asarray(y, typed)))
    raise TypeError(f"lax.{name} requires arguments to have the same dtypes, got "
                    f"{dtypes[0].name}, {dtypes[1].name}. (Tip: jnp.{numpy_name} is a similar "
                    "function that does automatic type promotion on inputs).")


def strict(fn: Callable, name: str, numpy_name: str) -> Callable:
    """``fn`` (funcgrad.numpy's ``numpy_name``) as lax's ``name``: dtypes checked."""
    def op(x: Any, y: Any) -> Any:
        return fn(*_same_dtypes(name, numpy_name, x, y))
    op.__name__ = op.__qualname__ = name
    op.__doc__ = f"``lax.{name}``: `funcgrad.numpy.{numpy_name}` on operands of one dtype."
    op.numpy = fn  # type: ignore[attr-defined]  (the promoting function it checks for)
    return op


add = strict(fnp.add, "add", "add")
mul = strict(fnp.multiply, "mul", "multiply")
sub = strict(fnp.subtract, "sub", "subtract")
max = strict(fnp.maximum, "max", "maximum")  # noqa: A001 (jax.lax's names)
min = strict(fnp.minimum, "min", "minimum")  # noqa: A001
