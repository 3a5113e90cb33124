"""A scripted module's objects as plain data and back: the tree of modules with their
parameters, buffers, plain attributes and method graphs, and for the facade's own ``nn``
modules (run by their own forward, not compiled) their type name and constructor
arguments, rebuilt on load from a fixed allow-list of facade classes. `StoredProgram` is
what a loaded module's graphs run in: it finds methods by object and refuses anything
the file did not define (no method is looked up on a class by a name from the file,
apart from a facade module's ``forward``).
"""
from __future__ import annotations

import inspect
from typing import Any, Callable

from funcgrad.torch import nn
from funcgrad.torch._script import _is_builtin_module
from funcgrad.torch._script import stypes as T
from funcgrad.torch._script.archive import ArchiveError, TensorStore, decode_value, \
    encode_value, graph_to_data
from funcgrad.torch._script.interp import build
from funcgrad.torch._script.ir import Graph
from funcgrad.torch._tensor import Tensor
from funcgrad.torch.nn.module import Module
from funcgrad.torch.nn.parameter import Parameter

__all__ = ["StoredModule", "StoredProgram", "module_to_data", "ModuleBuilder",
           "BUILTIN_CLASSES"]

# the facade's nn classes a file may name (by class name)
BUILTIN_CLASSES = {name: cls for name, cls in vars(nn).items() if isinstance(cls, type)
                   and issubclass(cls, Module) and cls.__module__.startswith("funcgrad.torch.nn")}
_ARG_KINDS = (inspect.Parameter.POSITIONAL_OR_KEYWORD, inspect.Parameter.KEYWORD_ONLY)


def _plain(value: Any) -> bool:
    return T.of_value(value, lambda v: isinstance(v, Tensor)) is not None


def _attributes(obj: Module) -> dict:
    """A module's attributes that are data (not its tables, not Python objects)."""
    return {k: v for k, v in vars(obj).items() if not k.startswith("_") and k != "training"
            and not isinstance(v, Module) and _plain(v)}


class StoredModule(Module):
    """A loaded scripted module's object: tables and attributes only (its methods are the
    stored graphs); printed under the saved class's name."""

    def __init__(self, type_name: str):
        super().__init__()
        object.__setattr__(self, "_type_name", type_name)

    def _get_name(self) -> str:
        return self._type_name.rsplit(".", 1)[-1]


class StoredProgram:
    """The loaded (or frozen) graphs and their runners, in the interface the interpreter
    calls back (`_script._Context`'s): methods by (object, name), functions by name."""

    def __init__(self) -> None:
        self.methods: dict = {}
        self.graphs: dict = {}
        self.runners: dict = {}

    def add_method(self, obj: Module, name: str, graph: Graph) -> None:
        self.methods[(id(obj), name)] = graph
        self.runners[(id(obj), name)] = build(graph, self)

    def add_function(self, graph: Graph) -> None:
        self.graphs[graph.qualname] = graph
        self.runners[graph.qualname] = build(graph, self)

    def method(self, obj: Module, name: str) -> Graph | None:
        return self.methods.get((id(obj), name))

    def method_runner(self, obj: Module, name: str) -> Callable:
        runner = self.runners.get((id(obj), name))
        if runner is not None:
            return runner
        if _is_builtin_module(obj) and name == "forward":
            return type(obj).forward
        raise RuntimeError(f"Method '{name}' is not defined on the loaded module "
                           f"'{obj._get_name()}'")

    def function_runner(self, qualname: str) -> Callable:
        return lambda *args: self.runners[qualname](*args)

    def python_op(self, name: str, fn: Any) -> Callable:
        raise RuntimeError(f"Could not run the Python function '{name}' in a loaded "
                           "program")


# -- saving -----------------------------------------------------------------------------------
def _config(obj: Module, path: str) -> dict:
    """The constructor arguments of a facade module, read from its attributes of the same
    names (a ``bias``-like argument from whether that parameter exists)."""
    cfg = {}
    params = list(inspect.signature(type(obj).__init__).parameters.values())[1:]
    for p in params:
        if p.kind not in _ARG_KINDS or p.name in ("device", "dtype"):
            continue
        if p.name in obj._parameters or p.name in obj._buffers:
            cfg[p.name] = getattr(obj, p.name) is not None
        elif p.name in vars(obj) and _plain(vars(obj)[p.name]) and not isinstance(
                vars(obj)[p.name], Tensor):
            cfg[p.name] = vars(obj)[p.name]
        elif p.default is inspect.Parameter.empty:
            raise RuntimeError(f"torch.jit.save: cannot store nn.{type(obj).__name__} at "
                               f"'{path or 'self'}': its argument '{p.name}' is not an "
                               "attribute of plain data")
    return cfg


def _check_rebuilt(obj: Module, fresh: Module, path: str) -> None:
    """Refuse a facade module that its stored configuration would not rebuild: other
    submodules or parameter shapes, or a Python attribute (not stored) that differs."""
    def refuse(what: str) -> None:
        raise RuntimeError(f"torch.jit.save: cannot store nn.{type(obj).__name__} at "
                           f"'{path or 'self'}': {what} is not rebuilt from its "
                           "constructor arguments")
    for table in ("_parameters", "_buffers"):
        mine, theirs = getattr(obj, table), getattr(fresh, table)
        for k in set(mine) | set(theirs):
            shape = lambda t: None if t is None else tuple(t.shape)  # noqa: E731
            if shape(mine.get(k)) != shape(theirs.get(k)):
                refuse(f"the shape of '{k}'")
    for k, v in vars(obj).items():
        if not k.startswith("_") and not isinstance(v, Module) and not _plain(v):
            same = vars(fresh).get(k, None)
            if same is not v and not _equal(same, v):
                refuse(f"its attribute '{k}'")
    for k, child in obj._modules.items():
        other = fresh._modules.get(k)
        if child is not None and _is_builtin_module(child) and type(other) is type(child):
            _check_rebuilt(child, other, f"{path}.{k}" if path else k)


def _equal(a: Any, b: Any) -> bool:
    try:
        return bool(a == b)
    except Exception:  # noqa: BLE001 (objects whose == is not a bool are not equal here)
        return False


def module_to_data(obj: Module, ctx: Any, store: TensorStore, path: str = "") -> dict:
    """``obj`` and its submodules as data; ``ctx.methods`` holds their graphs by
    (id(module), method name)."""
    builtin = _is_builtin_module(obj)
    d: dict = {"type": type(obj).__name__ if builtin else getattr(
        obj, "_type_name", type(obj).__qualname__), "builtin": builtin,
        "training": obj.training,
        "params": {k: None if p is None else [store.add(p), p.requires_grad]
                   for k, p in obj._parameters.items()},
        "buffers": {k: None if b is None else store.add(b) for k, b in obj._buffers.items()},
        "attrs": {k: encode_value(v, store) for k, v in _attributes(obj).items()},
        "children": {k: module_to_data(c, ctx, store, f"{path}.{k}" if path else k)
                     for k, c in obj._modules.items() if c is not None}}
    if builtin:
        if type(obj).__name__ not in BUILTIN_CLASSES:
            raise RuntimeError(f"torch.jit.save: nn.{type(obj).__name__} is not a module "
                               "class of the facade that can be stored")
        d["config"] = {k: encode_value(v, store) for k, v in _config(obj, path).items()}
        _check_rebuilt(obj, _construct(type(obj).__name__, _config(obj, path)), path)
    else:
        d["methods"] = {name: graph_to_data(g, store) for (oid, name), g in
                        ctx.methods.items() if oid == id(obj) and g is not None}
    return d


def _construct(type_name: str, cfg: dict) -> Module:
    cls = BUILTIN_CLASSES.get(type_name)
    if cls is None:
        raise ArchiveError(f"'{type_name}' is not a facade nn module class")
    try:
        return cls(**cfg)
    except (TypeError, ValueError, RuntimeError) as e:
        raise ArchiveError(f"nn.{type_name}(**{cfg!r}) failed: {e}") from None


# -- loading ----------------------------------------------------------------------------------
class ModuleBuilder:
    """Rebuilds a module tree from data; ``methods`` collects (module, name, graph data)
    for the graphs to read once every module (and so every attribute name) exists."""

    def __init__(self, store: TensorStore):
        self.store = store
        self.methods: list = []
        self._params: dict = {}

    def build(self, d: Any, existing: Module | None = None) -> Module:
        if not isinstance(d, dict) or not isinstance(d.get("type"), str):
            raise ArchiveError(f"malformed module record {str(d)[:80]!r}")
        if d.get("builtin"):
            obj = existing if existing is not None and type(
                existing).__name__ == d["type"] else _construct(
                d["type"], self.mapping(d.get("config", {}), "config"))
        else:
            obj = StoredModule(d["type"])
            for name, g in self.mapping(d.get("methods", {}), "methods").items():
                self.methods.append((obj, name, g))
        object.__setattr__(obj, "training", bool(d.get("training", True)))
        for k, v in self.mapping(d.get("attrs", {}), "attrs").items():
            obj.__dict__[k] = decode_value(v, self.store)
        for k, v in self.mapping(d.get("params", {}), "params").items():
            obj._parameters[k] = None if v is None else self.parameter(v)
        for k, v in self.mapping(d.get("buffers", {}), "buffers").items():
            obj._buffers[k] = None if v is None else self.store.get(v)
        for k, c in self.mapping(d.get("children", {}), "children").items():
            obj._modules[k] = self.build(c, obj._modules.get(k))
        return obj

    def mapping(self, d: Any, what: str) -> dict:
        if not isinstance(d, dict):
            raise ArchiveError(f"a module's {what} is not an object")
        return d

    def parameter(self, v: Any) -> Parameter:
        if not isinstance(v, list) or len(v) != 2:
            raise ArchiveError(f"malformed parameter record {v!r}")
        k = v[0]
        if k not in self._params:  # tied parameters stay one object
            self._params[k] = Parameter(self.store.get(k), requires_grad=bool(v[1]))
        return self._params[k]


def attribute_names(root: Module) -> set:
    """What ``prim::GetAttr`` may read in a rebuilt tree: submodules, parameters,
    buffers, data attributes and ``training``."""
    names = {"training"}
    for m in root.modules():
        names.update(m._parameters, m._buffers, m._modules, _attributes(m))
    return names
