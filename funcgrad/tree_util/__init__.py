"""Pytrees: nested containers whose leaves are arrays (JAX's `jax.tree_util`).

Tuples, lists, dicts (keys sorted, as in JAX), `collections.OrderedDict` (insertion order),
`collections.defaultdict`, namedtuples, ``None`` (a tree with no leaves), dataclasses and
any type registered here (`register_pytree_node`, its class, keyed and dataclass variants,
`register_static`) are containers; everything else is a leaf. Every transform accepts and
returns pytrees.

One difference from JAX: an unregistered dataclass is a container of all its fields (JAX
treats it as a leaf until `register_dataclass` is called); `register_dataclass` gives it
JAX's data/meta split.

Each child of a node has a key (`SequenceKey`, `DictKey`, `GetAttrKey`, or
`FlattenedIndexKey` for a type registered without keys); the ``*_with_path`` functions pair
every leaf with the tuple of keys leading to it, and `keystr` prints such a path the way
Python would index it (``['params'][0].w``).
"""
from ._keys import (DictKey, FlattenedIndexKey, GetAttrKey, KeyEntry, KeyPath, SequenceKey,
                    keystr)
from ._registry import (PyTreeDef, all_leaves, flatten_one_level, flatten_one_level_with_keys,
                        register_dataclass, register_pytree_node, register_pytree_node_class,
                        register_pytree_with_keys, register_pytree_with_keys_class,
                        register_static, tree_flatten, tree_flatten_with_path, tree_leaves,
                        tree_leaves_with_path, tree_structure, tree_unflatten,
                        treedef_children, treedef_is_leaf, treedef_tuple)
from ._mapping import (tree_all, tree_broadcast, tree_map, tree_map_with_path, tree_reduce,
                       tree_reduce_associative, tree_transpose)
from ._partial import Partial

__all__ = ["PyTreeDef", "register_pytree_node", "register_pytree_with_keys",
           "register_pytree_node_class", "register_pytree_with_keys_class",
           "register_dataclass", "register_static", "tree_flatten", "tree_unflatten",
           "tree_leaves", "tree_structure", "tree_map", "all_leaves", "tree_flatten_with_path",
           "tree_leaves_with_path", "tree_map_with_path", "keystr", "KeyEntry", "KeyPath",
           "GetAttrKey", "DictKey", "SequenceKey", "FlattenedIndexKey", "Partial",
           "tree_reduce", "tree_reduce_associative", "tree_all", "tree_transpose",
           "tree_broadcast", "treedef_children", "treedef_is_leaf", "treedef_tuple",
           "flatten_one_level", "flatten_one_level_with_keys"]
