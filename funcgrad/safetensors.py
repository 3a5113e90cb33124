"""safetensors files for funcgrad: named arrays, and whole parameter pytrees.

safetensors is the format model hubs publish weights in: a JSON header naming each
tensor's dtype, shape and byte range, then the raw bytes. Loading one runs no code,
whatever the file holds. `save_file` / `load_file` (and `save` / `load` on bytes) keep
``safetensors.numpy``'s names for a dict of funcgrad Arrays; `save_tree` / `load_tree` save
a pytree of Arrays (a `funcgrad.nn` or stax parameter tree) under its key paths
(``['layers'][0]['w']``, `funcgrad.tree_util.keystr`) and rebuild it: exactly, given the
tree it should look like (``like=``), or as nested dicts and lists from the names alone.

Built on the ``safetensors`` package (``pip install 'funcgrad[safetensors]'``); bfloat16
and float8 arrays (ml_dtypes) are read here, since the package's numpy reader has no type for them.
"""
from __future__ import annotations

import os
import re
from typing import Any

import numpy as np

from funcgrad import tree_util
from funcgrad._host import device_get
from funcgrad.array import Array
from funcgrad.dtypes import require_ml_dtype
from funcgrad.numpy import asarray

__all__ = ["save_file", "load_file", "save", "load", "save_tree", "load_tree",
           "SafetensorsError", "read_arrays", "read_file"]

_MISSING = ("funcgrad.safetensors needs the safetensors package: pip install "
            "'funcgrad[safetensors]' (or pip install safetensors)")

# the format's dtype names (its header's "dtype" field) as numpy dtypes
_DTYPES = {"F64": np.float64, "F32": np.float32, "F16": np.float16, "I64": np.int64,
           "U64": np.uint64, "I32": np.int32, "U32": np.uint32, "I16": np.int16,
           "U16": np.uint16, "I8": np.int8, "U8": np.uint8, "BOOL": np.bool_,
           "C64": np.complex64}
_ML_DTYPES = {"BF16": "bfloat16", "F8_E4M3": "float8_e4m3fn", "F8_E5M2": "float8_e5m2"}


class SafetensorsError(ValueError):
    """A safetensors file that cannot be read (damaged, truncated, or not safetensors)."""


def _package() -> Any:
    try:
        import safetensors  # (an optional dependency: imported on first use)
        import safetensors.numpy  # noqa: F401
    except ImportError:
        raise ImportError(_MISSING) from None
    return safetensors


def _host(name: Any, value: Any) -> np.ndarray:
    if not isinstance(name, str):
        raise ValueError(f"Key `{name}` is invalid, expected str but received {type(name)}")
    if not isinstance(value, (Array, np.ndarray)) and not hasattr(value, "__array__"):
        raise ValueError(f"Key `{name}` is invalid, expected an array but received "
                         f"{type(value)}")
    arr = np.asarray(device_get(value))
    if arr.dtype == object:
        raise ValueError(f"Key `{name}` holds an object array, which safetensors cannot "
                         "store")
    return arr if arr.flags.c_contiguous else arr.copy(order="C")  # (0-d stays 0-d)


def _host_dict(arrays: Any) -> dict[str, np.ndarray]:
    if not isinstance(arrays, dict):
        raise ValueError(f"Expected a dict of [str, array] but received {type(arrays)}")
    return {k: _host(k, v) for k, v in arrays.items()}


def save(arrays: dict[str, Any], metadata: dict[str, str] | None = None) -> bytes:
    """The safetensors bytes of ``arrays`` (a dict of names to Arrays or numpy arrays)."""
    return bytes(_package().numpy.save(_host_dict(arrays), metadata=metadata))


def save_file(arrays: dict[str, Any], filename: str | os.PathLike,
              metadata: dict[str, str] | None = None) -> None:
    """Write ``arrays`` (a dict of names to Arrays or numpy arrays) to ``filename``."""
    _package().numpy.save_file(_host_dict(arrays), filename, metadata=metadata)


def read_arrays(data: bytes, source: str = "the bytes") -> dict[str, np.ndarray]:
    """The arrays of safetensors ``data``, as writable numpy arrays of their own."""
    package = _package()
    try:
        views = package.deserialize(data)
    except Exception as e:  # (the package's SafetensorError is not importable by name)
        raise SafetensorsError(f"{source} is not a readable safetensors file: {e}") from None
    out = {}
    for name, view in views:
        dtype = _dtype(view["dtype"], name, source)
        buffer = bytearray(view["data"])
        shape = tuple(view["shape"])
        if len(buffer) != int(np.prod(shape, dtype=np.int64)) * dtype.itemsize:
            raise SafetensorsError(f"{source}: {name!r} has {len(buffer)} bytes for shape "
                                   f"{shape} of {dtype}")
        out[name] = np.frombuffer(buffer, dtype).reshape(shape)
    return out


def _dtype(code: str, name: str, source: str) -> np.dtype:
    if code in _ML_DTYPES:
        return require_ml_dtype(_ML_DTYPES[code])
    if code not in _DTYPES:
        raise SafetensorsError(f"{source}: {name!r} has dtype {code}, which funcgrad cannot "
                               "hold")
    return np.dtype(_DTYPES[code])


def read_file(filename: str | os.PathLike) -> dict[str, np.ndarray]:
    """The arrays of safetensors file ``filename``, as writable numpy arrays."""
    with open(filename, "rb") as fh:
        return read_arrays(fh.read(), repr(os.fspath(filename)))


def load(data: bytes) -> dict[str, Array]:
    """The arrays of safetensors bytes, as funcgrad Arrays."""
    return {k: asarray(v) for k, v in read_arrays(data).items()}


def load_file(filename: str | os.PathLike) -> dict[str, Array]:
    """The arrays of safetensors file ``filename``, as funcgrad Arrays."""
    return {k: asarray(v) for k, v in read_file(filename).items()}


def save_tree(tree: Any, filename: str | os.PathLike,
              metadata: dict[str, str] | None = None) -> None:
    """Write the array leaves of pytree ``tree`` to ``filename``, each named by its key
    path (``tree_util.keystr``)."""
    leaves = tree_util.tree_leaves_with_path(tree)
    named = {tree_util.keystr(path): leaf for path, leaf in leaves}
    if len(named) != len(leaves):
        raise ValueError("save_tree: two leaves of the tree have the same key path text")
    save_file(named, filename, metadata)


def load_tree(filename: str | os.PathLike, like: Any = None) -> Any:
    """The pytree `save_tree` wrote. With ``like`` (a tree of the same structure, e.g. a
    freshly initialised one), that structure exactly, every name and shape checked;
    without, nested dicts (``['key']``) and lists (``[0]``) rebuilt from the names."""
    arrays = load_file(filename)
    if like is None:
        return _from_names(arrays, repr(os.fspath(filename)))
    paths = tree_util.tree_leaves_with_path(like)
    treedef = tree_util.tree_structure(like)
    names = [tree_util.keystr(path) for path, _ in paths]
    missing = [n for n in names if n not in arrays]
    unexpected = sorted(set(arrays) - set(names))
    errors = [f"missing {missing}" if missing else "",
              f"unexpected {unexpected}" if unexpected else ""]
    for name, (_, leaf) in zip(names, paths):
        if name in arrays and np.shape(leaf) != arrays[name].shape:
            errors.append(f"{name} has shape {arrays[name].shape} in the file, "
                          f"{np.shape(leaf)} in the tree")
    errors = [e for e in errors if e]
    if errors:
        raise ValueError(f"load_tree: {os.fspath(filename)!r} does not match the tree: "
                         + "; ".join(errors))
    return tree_util.tree_unflatten(treedef, [arrays[n] for n in names])


_STEP = re.compile(r"\[(?:'((?:[^'\\]|\\.)*)'|\"((?:[^\"\\]|\\.)*)\"|(\d+))\]")


def _from_names(arrays: dict[str, Array], source: str) -> Any:
    """Nested dicts and lists from key-path names (``['a'][0]``); a bare name is a key."""
    root: dict = {}
    for name, value in arrays.items():
        steps = _steps(name) if name.startswith("[") else [name]
        if steps is None:
            raise ValueError(f"load_tree: {source} names {name!r}, which is not a key path of "
                             "dict keys and list indices: pass like= (a tree of the saved "
                             "structure)")
        node = root
        for step in steps[:-1]:
            node = node.setdefault(step, {})
        node[steps[-1]] = value
    return _lists(root)


def _steps(name: str) -> list | None:
    steps, end = [], 0
    for m in _STEP.finditer(name):
        if m.start() != end:
            return None
        key, dquoted, index = m.groups()
        steps.append(int(index) if index is not None else
                     (key if key is not None else dquoted).encode().decode("unicode_escape"))
        end = m.end()
    return steps if end == len(name) and steps else None


def _lists(node: Any) -> Any:
    """Dicts whose keys are 0..n-1 (from ``[i]`` steps) as lists."""
    if not isinstance(node, dict):
        return node
    node = {k: _lists(v) for k, v in node.items()}
    if node and all(type(k) is int for k in node) and sorted(node) == list(range(len(node))):
        return [node[i] for i in range(len(node))]
    return node
