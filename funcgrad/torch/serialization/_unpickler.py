"""Unpickling a checkpoint: the weights-only allow-list, and the full unpickler.

A pickle runs code only through the globals it names (``GLOBAL``/``STACK_GLOBAL``, and the
extension registry, which the unpickler also resolves through ``find_class``) and through
``persistent_load``. `WeightsUnpickler.find_class` hands out only what PyTorch's
``weights_only`` unpickler allows by default (tensors, storages, dtypes, ``OrderedDict``,
containers, ``torch.Size``, ``torch.device``, the rebuild functions, whose arguments are
checked) plus what the user allows (`add_safe_globals`, `safe_globals`); anything else
raises PyTorch's error naming the global and both ways out. PyTorch's names resolve to the
facade's objects, so a checkpoint written by real PyTorch loads into facade tensors.

`FullUnpickler` (``weights_only=False``: the file is trusted) resolves any global, mapping
PyTorch's modules (``torch.nn.modules.linear``) onto the facade's where they exist.
"""
from __future__ import annotations

import _codecs
import _compat_pickle
import importlib
import pickle
import pickletools
from collections import Counter, OrderedDict
from functools import lru_cache
from typing import Any, Callable, Iterable

from funcgrad.torch._runtime import dtypes as D
from funcgrad.torch._tensor import Tensor
from funcgrad.torch.nn.parameter import Parameter
from funcgrad.torch.serialization import _rebuild as R
from funcgrad.torch.serialization._format import DTYPE_NAMES, FOREIGN_DTYPES, STORAGE_TYPES

__all__ = ["WeightsUnpickler", "FullUnpickler", "RefusedGlobal", "add_safe_globals",
           "get_safe_globals", "clear_safe_globals", "safe_globals", "unsafe_globals_in"]

_BLOCKED_MODULES = ("sys", "os", "posix", "nt")
_user_safe_globals: set = set()


class RefusedGlobal(pickle.UnpicklingError):
    """A global the weights-only unpickler does not allow (the caller words the error)."""


def add_safe_globals(safe_globals: list) -> None:
    """Allow these globals (classes, functions; or ``(obj, "module.name")`` pairs for an
    object pickled under another name) in ``weights_only`` loads, for this process."""
    for g in safe_globals:
        _checked_entry(g)
    _user_safe_globals.update(safe_globals)


def get_safe_globals() -> list:
    """The globals `add_safe_globals` allowed."""
    return list(_user_safe_globals)


def clear_safe_globals() -> None:
    """Forget every global `add_safe_globals` allowed."""
    _user_safe_globals.clear()


class safe_globals:
    """``with safe_globals([Cls, fn]):`` allows these globals inside the block only."""

    def __init__(self, safe_globals: list):
        self.safe_globals = list(safe_globals)

    def __enter__(self) -> None:
        add_safe_globals(self.safe_globals)

    def __exit__(self, *exc: Any) -> None:
        _user_safe_globals.difference_update(self.safe_globals)


def _checked_entry(g: Any) -> tuple[Any, str]:
    """A safe-globals entry as (object, pickled name); PyTorch's errors for a bad pair."""
    if isinstance(g, tuple):
        if len(g) != 2:
            raise ValueError("Expected tuple of length 2 (global, str of callable full path), "
                             f"but got tuple of length: {len(g)}")
        if type(g[1]) is not str:
            raise TypeError("Expected second item in tuple to be str of callable full path, "
                            f"but got: {type(g[1])}")
        return g
    return g, f"{g.__module__}.{g.__qualname__}"


def _user_allowed() -> dict[str, Any]:
    """The user's globals by pickled name; a facade object also under PyTorch's name
    (``funcgrad.torch.nn.X`` as ``torch.nn.X``), so PyTorch's files that name it load."""
    table = {}
    for g in _user_safe_globals:
        obj, name = _checked_entry(g)
        table[name] = obj
        if name.startswith("funcgrad.torch."):
            table[name[len("funcgrad."):]] = obj
    return table


@lru_cache(maxsize=1)
def _allowed() -> dict[str, Any]:
    """PyTorch's default weights-only globals, as the facade's objects."""
    table: dict[str, Any] = {
        "collections.OrderedDict": OrderedDict,
        "collections.Counter": Counter,
        "torch.nn.parameter.Parameter": Parameter,
        "torch.Size": D.Size,
        "torch.Tensor": Tensor,
        "torch.device": D.device,
        "_codecs.encode": _codecs.encode,  # (protocol 2 pickles bytes through it)
        "builtins.bytearray": bytearray,
        "builtins.set": set,
        "builtins.complex": complex,
        "torch._utils._rebuild_tensor": R.rebuild_tensor,
        "torch._utils._rebuild_tensor_v2": R.rebuild_tensor_v2,
        "torch._utils._rebuild_tensor_v3": R.rebuild_tensor_v3,
        "torch._utils._rebuild_parameter": R.rebuild_parameter,
        "torch._utils._rebuild_parameter_with_state": R.rebuild_parameter_with_state,
        "torch._utils._rebuild_meta_tensor_no_storage": R.rebuild_meta_tensor_no_storage,
        "torch._tensor._rebuild_from_type_v2": R.rebuild_from_type_v2,
    }
    for kind, names in (("sparse", ("_rebuild_sparse_tensor",)),
                        ("quantized", ("_rebuild_qtensor",)),
                        ("nested", ("_rebuild_nested_tensor",)),
                        ("wrapper subclass", ("_rebuild_wrapper_subclass",)),
                        ("device", ("_rebuild_device_tensor_from_numpy",
                                    "_rebuild_device_tensor_from_cpu_tensor"))):
        for name in names:
            table[f"torch._utils.{name}"] = R.unsupported_rebuild(kind)
    table.update(STORAGE_TYPES)
    for name in DTYPE_NAMES:
        table[f"torch.{name}"] = getattr(D, name)
    for name in FOREIGN_DTYPES:
        table[f"torch.{name}"] = R.ForeignDtype(name)
    return table


def _canonical(module: str, name: str) -> tuple[str, str]:
    """Python 2 names (``__builtin__.set``) as Python 3's, as pickle's own ``find_class``
    maps them for protocol 2 files."""
    if (module, name) in _compat_pickle.NAME_MAPPING:
        return _compat_pickle.NAME_MAPPING[(module, name)]
    return _compat_pickle.IMPORT_MAPPING.get(module, module), name


def _shown(full: str) -> str:
    """How PyTorch's message shows a global: builtins without their module."""
    return full[len("builtins."):] if full.startswith("builtins.") else full


def refusal(module: str, name: str) -> str:
    """PyTorch's text for a global the weights-only unpickler does not allow."""
    full = f"{module}.{name}"
    if module in _BLOCKED_MODULES:
        return f"Trying to load unsupported GLOBAL {full} whose module {module} is blocked."
    full = _shown(full)
    return (f"Unsupported global: GLOBAL {full} was not an allowed global by default. Please "
            f"use `torch.serialization.add_safe_globals([{full}])` or the "
            f"`torch.serialization.safe_globals([{full}])` context manager to allowlist this "
            "global if you trust this class/function.")


class WeightsUnpickler(pickle.Unpickler):
    """The allow-list unpickler of ``weights_only`` loads; ``persistent_load`` is the
    reader's (it turns a storage's persistent id into a `LoadedStorage`)."""

    def __init__(self, file: Any, persistent_load: Callable, encoding: str = "utf-8"):
        super().__init__(file, encoding=encoding)
        self.persistent_load = persistent_load

    def find_class(self, module: str, name: str) -> Any:
        module, name = _canonical(module, name)
        full = f"{module}.{name}"
        if module not in _BLOCKED_MODULES:
            found = _allowed().get(full)
            if found is None:
                found = _user_allowed().get(full)
            if found is not None:
                return found
        raise RefusedGlobal(refusal(module, name))


class FullUnpickler(pickle.Unpickler):
    """The unpickler of ``weights_only=False`` (a trusted file): any global; PyTorch's
    tensors and storages as the facade's, and ``torch.<module>`` names as the facade's
    ``funcgrad.torch.<module>`` where the facade has that object."""

    def __init__(self, file: Any, persistent_load: Callable, **load_args: Any):
        super().__init__(file, **load_args)
        self.persistent_load = persistent_load

    def find_class(self, module: str, name: str) -> Any:
        found = _allowed().get(f"{module}.{name}")
        if found is not None:
            return found
        if module == "torch" or module.startswith("torch."):
            try:
                return _attribute(importlib.import_module("funcgrad." + module), name)
            except (ImportError, AttributeError):
                pass
        return super().find_class(module, name)


def _attribute(obj: Any, dotted: str) -> Any:
    for part in dotted.split("."):
        obj = getattr(obj, part)
    return obj


def unsafe_globals_in(pickle_bytes: bytes) -> list[str]:
    """The globals a pickle names that a weights-only load would refuse (PyTorch's
    ``get_unsafe_globals_in_checkpoint``): read from its opcodes, nothing is run."""
    allowed = {**_allowed(), **_user_allowed()}
    return sorted({g for g in _globals_named(pickle_bytes) if g not in allowed})


def _globals_named(pickle_bytes: bytes) -> Iterable[str]:
    strings: list = []
    for op, arg, _ in pickletools.genops(pickle_bytes):
        if op.name == "GLOBAL":
            module, name = arg.split(" ", 1)
            yield ".".join(_canonical(module, name))
        elif op.name == "STACK_GLOBAL" and len(strings) >= 2:
            yield ".".join(_canonical(strings[-2], strings[-1]))
        elif isinstance(arg, str):
            strings.append(arg)
