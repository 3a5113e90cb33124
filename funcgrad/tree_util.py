"""Pytrees: nested containers whose leaves are arrays.

Tuples, lists, dicts (keys sorted, as in JAX), namedtuples, ``None`` (a tree with no leaves),
dataclasses (every field a child) and any type given to `register_pytree_node` are
containers; everything else is a leaf. Every transform accepts and returns pytrees.
"""
from __future__ import annotations

import dataclasses
from typing import Any, Callable, Hashable, Iterable, NamedTuple

__all__ = ["PyTreeDef", "register_pytree_node", "tree_flatten", "tree_unflatten",
           "tree_leaves", "tree_structure", "tree_map", "all_leaves"]


class _NodeType(NamedTuple):
    to_iterable: Callable[[Any], tuple[Iterable, Hashable]]
    from_iterable: Callable[[Hashable, Iterable], Any]


_registry: dict[type, _NodeType] = {}
# type -> _NodeType (namedtuples, dataclasses) or None (a leaf type): what `_node_type`
# derived for an unregistered type (registering a type removes it from here)
_derived: dict = {}


def register_pytree_node(nodetype: type, flatten_func: Callable[[Any], tuple[Iterable, Any]],
                         unflatten_func: Callable[[Any, Iterable], Any]) -> None:
    """Make ``nodetype`` a container: ``flatten_func(x) -> (children, aux_data)`` and
    ``unflatten_func(aux_data, children) -> x``. ``aux_data`` must be hashable."""
    if nodetype in _registry:
        raise ValueError(f"{nodetype.__name__} is already registered as a pytree node")
    _registry[nodetype] = _NodeType(flatten_func, unflatten_func)
    _derived.pop(nodetype, None)  # it may have been seen as a leaf before


register_pytree_node(tuple, lambda t: (t, None), lambda _, c: tuple(c))
register_pytree_node(list, lambda t: (t, None), lambda _, c: list(c))
register_pytree_node(type(None), lambda t: ((), None), lambda _, c: None)


def _dict_flatten(d: dict) -> tuple[list, tuple]:
    keys = tuple(sorted(d))
    return [d[k] for k in keys], keys


register_pytree_node(dict, _dict_flatten, lambda keys, c: dict(zip(keys, c)))


def _node_type(x: Any) -> _NodeType | None:
    t = type(x)
    node = _registry.get(t)
    if node is not None:
        return node
    try:  # what a type is does not change: derive it once (flattening is on the hot path)
        return _derived[t]
    except KeyError:
        node = _derived[t] = _derive_node_type(x, t)
        return node


def _derive_node_type(x: Any, t: type) -> _NodeType | None:
    if isinstance(x, tuple) and hasattr(t, "_fields"):  # namedtuple
        return _NodeType(lambda nt: (tuple(nt), None), lambda _, c, t=t: t(*c))
    if dataclasses.is_dataclass(x) and not isinstance(x, type):
        names = tuple(f.name for f in dataclasses.fields(x))
        return _NodeType(lambda d: ([getattr(d, n) for n in names], names),
                         lambda ns, c, t=t: t(**dict(zip(ns, c))))
    return None


class PyTreeDef:
    """The structure of a pytree with its leaves taken out."""

    __slots__ = ("node_type", "aux", "children", "num_leaves")

    def __init__(self, node_type: type | None, aux: Any, children: tuple["PyTreeDef", ...]):
        self.node_type = node_type
        self.aux = aux
        self.children = children
        if node_type is None:
            self.num_leaves = 1
        else:
            n = 0
            for c in children:
                n += c.num_leaves
            self.num_leaves = n

    def unflatten(self, leaves: Iterable) -> Any:
        leaves = list(leaves)
        if len(leaves) != self.num_leaves:
            raise ValueError(f"tree structure {self} expects {self.num_leaves} leaves, "
                             f"got {len(leaves)}")
        it = iter(leaves)
        return self._build(it)

    def _build(self, it: Iterable) -> Any:
        if self.node_type is None:
            return next(it)
        children = [next(it) if c is _LEAF else c._build(it) for c in self.children]
        probe = _registry.get(self.node_type)
        if probe is not None:
            return probe.from_iterable(self.aux, children)
        if hasattr(self.node_type, "_fields"):
            return self.node_type(*children)
        return self.node_type(**dict(zip(self.aux, children)))

    @property
    def num_nodes(self) -> int:
        return 1 + sum(c.num_nodes for c in self.children)

    def __eq__(self, other: object) -> bool:
        return (isinstance(other, PyTreeDef) and self.node_type == other.node_type
                and self.aux == other.aux and self.children == other.children)

    def __hash__(self) -> int:
        # not recursive (equal trees have equal hashes; __eq__ tells the rest apart): jit
        # hashes its arguments' tree on every call
        return hash((self.node_type, self.aux, self.num_leaves))

    def __repr__(self) -> str:
        return f"PyTreeDef({self._show()})"

    def _show(self) -> str:
        if self.node_type is None:
            return "*"
        kids = [c._show() for c in self.children]
        if self.node_type is tuple:
            return "(" + ", ".join(kids) + ("," if len(kids) == 1 else "") + ")"
        if self.node_type is list:
            return "[" + ", ".join(kids) + "]"
        if self.node_type is dict:
            return "{" + ", ".join(f"{k!r}: {v}" for k, v in zip(self.aux, kids)) + "}"
        if self.node_type is type(None):
            return "None"
        return f"{self.node_type.__name__}(" + ", ".join(kids) + ")"


_LEAF = PyTreeDef(None, None, ())


def _flatten(x: Any, leaves: list, is_leaf: Callable[[Any], bool] | None) -> PyTreeDef:
    if is_leaf is not None and is_leaf(x):
        leaves.append(x)
        return _LEAF
    node = _node_type(x)
    if node is None:
        leaves.append(x)
        return _LEAF
    children, aux = node.to_iterable(x)
    kids = []
    for c in children:  # a child of a type known to be a leaf needs no recursive call
        if is_leaf is None and _derived.get(type(c), _flatten) is None:
            leaves.append(c)
            kids.append(_LEAF)
        else:
            kids.append(_flatten(c, leaves, is_leaf))
    return PyTreeDef(type(x), aux, tuple(kids))


def tree_flatten(tree: Any, is_leaf: Callable[[Any], bool] | None = None
                 ) -> tuple[list, PyTreeDef]:
    """(leaves in order, structure). ``is_leaf`` may stop the descent early."""
    leaves: list = []
    treedef = _flatten(tree, leaves, is_leaf)
    return leaves, treedef


def tree_unflatten(treedef: PyTreeDef, leaves: Iterable) -> Any:
    return treedef.unflatten(leaves)


def tree_leaves(tree: Any, is_leaf: Callable[[Any], bool] | None = None) -> list:
    return tree_flatten(tree, is_leaf)[0]


def tree_structure(tree: Any, is_leaf: Callable[[Any], bool] | None = None) -> PyTreeDef:
    return tree_flatten(tree, is_leaf)[1]


def all_leaves(iterable: Iterable) -> bool:
    """Whether every element is a leaf (not a container)."""
    return all(_node_type(x) is None for x in iterable)


def tree_map(f: Callable[..., Any], tree: Any, *rest: Any,
             is_leaf: Callable[[Any], bool] | None = None) -> Any:
    """Apply ``f`` leafwise; ``rest`` must have ``tree``'s structure (or a prefix-free match)."""
    leaves, treedef = tree_flatten(tree, is_leaf)
    others = []
    for r in rest:
        r_leaves, r_def = tree_flatten(r, is_leaf)
        if r_def != treedef:
            raise ValueError(f"tree_map: structures differ: {treedef} and {r_def}")
        others.append(r_leaves)
    return treedef.unflatten(f(*xs) for xs in zip(leaves, *others))
