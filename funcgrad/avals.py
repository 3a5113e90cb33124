"""Abstract values: what an abstract evaluation rule sees of an array and returns.

JAX's ``core.ShapedArray`` (a shape, a dtype and whether the dtype is weak, as a Python
number's is) is what a JAX-style primitive's ``def_abstract_eval`` rule is handed for each
input and returns for its result. It lives below `funcgrad.core` (which re-exports it, as
``jax.core`` does) so that every layer can name it.
"""
from __future__ import annotations

from typing import Any, Sequence

import numpy as np

__all__ = ["Shaped", "ShapedArray", "shaped_array_of"]


class Shaped:
    """What every stand-in for an array derives from its ``shape``: ``ndim`` and ``size``
    (ShapedArray here, ShapeDtypeStruct in `funcgrad.meta`)."""

    __slots__ = ()
    shape: tuple

    @property
    def ndim(self) -> int:
        return len(self.shape)

    @property
    def size(self) -> int:
        return int(np.prod(self.shape, dtype=np.int64))


class ShapedArray(Shaped):
    """An array known by its shape and dtype only (JAX's name and text)."""

    __slots__ = ("shape", "dtype", "weak_type")

    def __init__(self, shape: Sequence[int], dtype: Any, weak_type: bool = False):
        self.shape = tuple(int(s) for s in shape)
        self.dtype = np.dtype(dtype)
        self.weak_type = bool(weak_type)

    def update(self, shape: Sequence[int] | None = None, dtype: Any = None,
               weak_type: bool | None = None) -> "ShapedArray":
        """A copy with the given fields changed (JAX's ``aval.update``)."""
        return ShapedArray(self.shape if shape is None else shape,
                           self.dtype if dtype is None else dtype,
                           self.weak_type if weak_type is None else weak_type)

    def str_short(self) -> str:
        return f"{self.dtype.name}[{','.join(map(str, self.shape))}]"

    def __eq__(self, other: Any) -> bool:
        return (isinstance(other, ShapedArray) and (self.shape, self.dtype, self.weak_type)
                == (other.shape, other.dtype, other.weak_type))

    def __hash__(self) -> int:
        return hash((self.shape, self.dtype, self.weak_type))

    def __repr__(self) -> str:
        return f"ShapedArray({self.str_short()}{', weak_type=True' if self.weak_type else ''})"

    __str__ = str_short


def shaped_array_of(x: Any) -> ShapedArray:
    """The abstract value of ``x``: weakly typed for a Python number, as JAX's."""
    if type(x) in (bool, int, float, complex):
        return ShapedArray((), np.asarray(x).dtype, weak_type=True)
    if hasattr(x, "shape") and hasattr(x, "dtype"):
        return ShapedArray(x.shape, x.dtype)
    return ShapedArray(np.shape(x), np.asarray(x).dtype)
