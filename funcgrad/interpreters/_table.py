"""`RuleTable`: JAX's rule dictionaries (``ad.primitive_jvps``, ``batching.
primitive_batchers``...) as views of the rules each primitive holds, so a rule has one
place (its primitive) whatever path declared it."""
from __future__ import annotations

from collections.abc import MutableMapping
from typing import Any, Callable, Iterator

from funcgrad.core import Primitive, registry

__all__ = ["RuleTable"]


class RuleTable(MutableMapping):
    """``table[p] = rule`` declares ``p``'s rule with ``put(p, rule)``; ``table[p]`` reads
    it with ``get(p)`` (None: none). ``what`` names the rule in errors."""

    def __init__(self, what: str, get: Callable[[Primitive], Any],
                 put: Callable[[Primitive, Any], None]):
        self.what = what
        self._get = get
        self._put = put

    def __getitem__(self, prim: Primitive) -> Any:
        rule = self._get(prim) if isinstance(prim, Primitive) else None
        if rule is None:
            raise KeyError(prim)
        return rule

    def __setitem__(self, prim: Primitive, rule: Any) -> None:
        if not isinstance(prim, Primitive):
            raise TypeError(f"{self.what} are declared for primitives, got "
                            f"{type(prim).__name__}")
        self._put(prim, rule)

    def __delitem__(self, prim: Primitive) -> None:
        self[prim]  # noqa: B018  (a KeyError where there is no rule, as a dict's)
        self._put(prim, None)

    def __iter__(self) -> Iterator[Primitive]:
        return (p for p in registry().values() if self._get(p) is not None)

    def __len__(self) -> int:
        return sum(1 for _ in self)
