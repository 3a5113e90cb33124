"""Key paths: how a pytree node names its children (JAX's key classes and `keystr`)."""
from __future__ import annotations

from typing import Any

__all__ = ["GetAttrKey", "DictKey", "SequenceKey", "FlattenedIndexKey", "KeyEntry", "KeyPath",
           "keystr"]


class _Key:
    """One entry of a key path: an immutable wrapper of one value, compared and hashed by
    its class and that value (so ``DictKey(0) != SequenceKey(0)``)."""

    __slots__ = ()
    _field = ""

    def __init__(self, value: Any):
        object.__setattr__(self, self._field, value)

    def __setattr__(self, name: str, value: Any) -> None:
        raise AttributeError(f"{type(self).__name__} is immutable")

    @property
    def _value(self) -> Any:
        return getattr(self, self._field)

    def __eq__(self, other: object) -> bool:
        return type(other) is type(self) and other._value == self._value

    def __hash__(self) -> int:
        return hash((type(self).__name__, self._value))

    def __repr__(self) -> str:
        return f"{type(self).__name__}({self._field}={self._value!r})"

    def __reduce__(self) -> tuple:
        return (type(self), (self._value,))


class GetAttrKey(_Key):
    """An attribute: the child is ``node.name`` (namedtuples, dataclasses)."""

    __slots__ = ("name",)
    __match_args__ = ("name",)
    _field = "name"

    def __str__(self) -> str:
        return f".{self.name}"


class DictKey(_Key):
    """A mapping key: the child is ``node[key]``."""

    __slots__ = ("key",)
    __match_args__ = ("key",)
    _field = "key"

    def __str__(self) -> str:
        return f"[{self.key!r}]"


class SequenceKey(_Key):
    """A position in a list or tuple: the child is ``node[idx]``."""

    __slots__ = ("idx",)
    __match_args__ = ("idx",)
    _field = "idx"

    def __str__(self) -> str:
        return f"[{self.idx}]"


class FlattenedIndexKey(_Key):
    """A position among the flattened children of a type registered without keys."""

    __slots__ = ("key",)
    __match_args__ = ("key",)
    _field = "key"

    def __str__(self) -> str:
        return f"[<flat index {self.key}>]"


KeyEntry = Any  # one of the key classes above, or a user's own hashable key
KeyPath = tuple  # a tuple of KeyEntry, from the root down to one leaf


def keystr(keys: KeyPath, *, simple: bool = False, separator: str = "") -> str:
    """A key path as text: ``['a'][0].x`` (``simple=True``: the bare names, ``a0x``, best
    with a ``separator`` such as ``'/'``)."""
    if simple:
        return separator.join(str(k._value) if isinstance(k, _Key) else str(k) for k in keys)
    return separator.join(str(k) for k in keys)

