"""Functions over several trees or all leaves: `tree_map` (the first tree's structure a
prefix of the others'), with paths, `tree_broadcast`, reductions and `tree_transpose`.
A structure mismatch is explained as JAX explains it: the key path and what differs."""
from __future__ import annotations

import functools
from typing import Any, Callable

from ._keys import keystr
from ._registry import (PyTreeDef, keyed_children, node_type_of, tree_flatten,
                        tree_flatten_with_path, tree_leaves, tree_structure)

__all__ = ["tree_map", "tree_map_with_path", "tree_broadcast", "tree_reduce",
           "tree_reduce_associative", "tree_all", "tree_transpose"]


# ---------------------------------------------------------------------------------------
# Mapping over several trees: the first one's structure must be a prefix of the others'
# ---------------------------------------------------------------------------------------

def _prefix_error(path: tuple, prefix: Any, full: Any, is_leaf: Callable | None
                  ) -> Callable[[str], str] | None:
    """Where ``prefix`` first fails to be a prefix of ``full``, explained in JAX's words
    (a function of the tree's name, giving the message), or None if it is a prefix.
    ``is_leaf(path, x)`` says where the prefix tree stops."""
    if is_leaf is not None and is_leaf(path, prefix):
        return None
    node = node_type_of(prefix)
    if node is None:
        return None  # a leaf is a prefix of anything
    at = f"at key path\n    {_NAME}{keystr(path)}\n"
    if type(prefix) is not type(full):
        return _message(f"different types {at}At that key path, the prefix pytree {_NAME} "
                        f"has a subtree of type\n    {type(prefix)}\nbut at the same key "
                        f"path the full pytree has a subtree of different type\n    "
                        f"{type(full)}.")
    p_keyed, p_aux = keyed_children(node, prefix)
    f_keyed, f_aux = keyed_children(node, full)
    if isinstance(prefix, (list, tuple)) and len(prefix) != len(full):
        kind = type(prefix).__name__
        return _message(f"different lengths of {kind} {at}At that key path, the prefix "
                        f"pytree {_NAME} has a subtree of type {kind} of length "
                        f"{len(prefix)}, but the full pytree has a subtree of the same type "
                        f"but of length {len(full)}.")
    if len(p_keyed) != len(f_keyed):
        p_keys, f_keys = [k for k, _ in p_keyed], [k for k, _ in f_keyed]
        names = lambda keys: " ".join(keystr((k,), simple=True) for k in keys)  # noqa: E731
        diff = sorted(set(p_keys) ^ set(f_keys), key=str)
        return _message(f"different numbers of pytree children {at}At that key path, the "
                        f"prefix pytree {_NAME} has a subtree of type\n    {type(prefix)}\n"
                        f"with {len(p_keys)} child keys\n    {names(p_keys)}\nbut at the "
                        f"same key path the full pytree has a subtree of the same type but "
                        f"with {len(f_keys)} child keys\n    {names(f_keys)}\nso the "
                        f"symmetric difference on key sets is\n    {names(diff)}")
    if p_aux != f_aux:
        import difflib, textwrap  # noqa: E401  # only this error message needs them
        p_text, f_text = str(p_aux), str(f_aux)
        diff = textwrap.indent("\n".join(difflib.ndiff(p_text.splitlines(),
                                                       f_text.splitlines())), "    ")
        return _message(f"different pytree metadata {at}At that key path, the prefix "
                        f"pytree {_NAME} has a subtree of type\n    {type(prefix)}\nwith "
                        f"metadata\n    {p_text}\nbut at the same key path the full pytree "
                        f"has a subtree of the same type but with metadata\n    {f_text}\n"
                        f"so the diff in the metadata at these pytree nodes is\n{diff}")
    for (k, p), (_, f) in zip(p_keyed, f_keyed):
        found = _prefix_error(path + (k,), p, f, is_leaf)
        if found is not None:
            return found
    return None


_NAME = "\x00name\x00"  # where a message names the tree it is about


def _message(text: str) -> Callable[[str], str]:
    body = "pytree structure error: " + text
    return lambda name: body.replace(_NAME, name)


def _leaves_up_to(what: str, treedef: PyTreeDef, tree: Any, other: Any,
                  is_leaf: Callable | None) -> list:
    """``other``'s subtrees at the leaves of ``tree`` (structure ``treedef``); a mismatch
    raises JAX's explanation of where ``tree`` stops being a prefix of ``other``.
    ``is_leaf(path, x)``: where ``tree`` was cut when it was flattened."""
    try:
        return treedef.flatten_up_to(other)
    except ValueError as e:
        explain = _prefix_error((), tree, other, is_leaf)
        raise (ValueError(explain(f"{what} tree")) if explain else e) from None


def tree_map(f: Callable[..., Any], tree: Any, *rest: Any,
             is_leaf: Callable[[Any], bool] | None = None) -> Any:
    """``f`` applied leafwise: ``f(x, *ys)`` with ``x`` a leaf of ``tree`` and ``ys`` the
    subtrees of ``rest`` at the same place (their structures must have ``tree``'s as a
    prefix)."""
    leaves, treedef = tree_flatten(tree, is_leaf)
    if not rest:
        return treedef.unflatten([f(x) for x in leaves])
    stop = None if is_leaf is None else lambda _, x: is_leaf(x)
    others = [_leaves_up_to("tree_map", treedef, tree, r, stop) for r in rest]
    return treedef.unflatten(f(*xs) for xs in zip(leaves, *others))


def tree_map_with_path(f: Callable[..., Any], tree: Any, *rest: Any,
                       is_leaf: Callable[..., bool] | None = None,
                       is_leaf_takes_path: bool = False) -> Any:
    """`tree_map` with each leaf's key path: ``f(path, x, *ys)``."""
    keyed, treedef = tree_flatten_with_path(tree, is_leaf, is_leaf_takes_path)
    stop = (None if is_leaf is None else is_leaf if is_leaf_takes_path
            else lambda _, x: is_leaf(x))
    others = [_leaves_up_to("tree_map_with_path", treedef, tree, r, stop) for r in rest]
    return treedef.unflatten(f(path, x, *ys) for (path, x), *ys in zip(keyed, *others))


def tree_broadcast(prefix_tree: Any, full_tree: Any,
                   is_leaf: Callable[[Any], bool] | None = None) -> Any:
    """``full_tree``'s structure with each of its leaves replaced by the leaf of
    ``prefix_tree`` above it (``is_leaf`` applies to ``prefix_tree``)."""
    prefix_leaves, prefix_def = tree_flatten(prefix_tree, is_leaf)
    stop = None if is_leaf is None else lambda _, x: is_leaf(x)
    subtrees = _leaves_up_to("tree_broadcast", prefix_def, prefix_tree, full_tree, stop)
    leaves = [leaf for leaf, sub in zip(prefix_leaves, subtrees)
              for _ in range(tree_structure(sub).num_leaves)]
    return tree_structure(full_tree).unflatten(leaves)


# ---------------------------------------------------------------------------------------
# Reductions and transposition
# ---------------------------------------------------------------------------------------

class _Unspecified:
    def __repr__(self) -> str:
        return "<unspecified>"


_UNSPECIFIED: Any = _Unspecified()


def tree_reduce(function: Callable[[Any, Any], Any], tree: Any,
                initializer: Any = _UNSPECIFIED,
                is_leaf: Callable[[Any], bool] | None = None) -> Any:
    """``functools.reduce(function, leaves[, initializer])``."""
    leaves = tree_leaves(tree, is_leaf)
    if initializer is _UNSPECIFIED:
        return functools.reduce(function, leaves)
    return functools.reduce(function, leaves, initializer)


def tree_reduce_associative(operation: Callable[[Any, Any], Any], tree: Any, *,
                            identity: Any = _UNSPECIFIED,
                            is_leaf: Callable[[Any], bool] | None = None) -> Any:
    """Reduce the leaves with an associative ``operation`` pairwise (a balanced tree of
    calls, log-depth), ``identity`` being the result for no leaves."""
    items = tree_leaves(tree, is_leaf)
    if not items:
        if identity is _UNSPECIFIED:
            raise TypeError("Must specify identity for parallel reduction of empty "
                            "sequence.")
        return identity
    while len(items) > 1:
        paired = [operation(a, b) for a, b in zip(items[::2], items[1::2])]
        items = paired + ([items[-1]] if len(items) % 2 else [])
    return items[0]


def tree_all(tree: Any, *, is_leaf: Callable[[Any], bool] | None = None) -> bool:
    """``all(leaves)``."""
    return all(tree_leaves(tree, is_leaf))


def tree_transpose(outer_treedef: PyTreeDef, inner_treedef: PyTreeDef | None,
                   pytree_to_transpose: Any) -> Any:
    """Turn a tree of structure outer-of-inner into one of structure inner-of-outer
    (``inner_treedef=None``: inferred from the first outer leaf)."""
    flat, treedef = tree_flatten(pytree_to_transpose)
    if inner_treedef is None:
        inner_treedef = tree_structure(outer_treedef.flatten_up_to(pytree_to_transpose)[0])
    n_in, n_out = inner_treedef.num_leaves, outer_treedef.num_leaves
    if treedef.num_leaves != n_in * n_out:
        raise TypeError(f"Mismatch\n{treedef}\n != \n{outer_treedef.compose(inner_treedef)}")
    rows = [flat[i * n_in:(i + 1) * n_in] for i in range(n_out)]
    return inner_treedef.unflatten([outer_treedef.unflatten(col) for col in zip(*rows)])

