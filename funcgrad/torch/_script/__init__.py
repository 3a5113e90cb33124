"""``torch.jit.script``: Python source compiled to TorchScript's IR and run by funcgrad.

A function, or an ``nn.Module`` with its submodules and the methods they call, is read
from its source (`inspect.getsource`, `ast`), type-checked with TorchScript's rules
(annotations; unannotated arguments are Tensors) and compiled into a graph of ``aten::``
and ``prim::`` nodes with structured control flow (`ir`), which ``.graph`` prints and
which runs through the facade's ops (`interp`): eager autograd sees the path taken; calls
that record no autograd run one compiled program per signature (`compiled`); and
under ``torch.compile`` / ``funcgrad.jit`` the control flow on traced values is staged as
``lax.cond`` / ``fori_loop`` / ``while_loop``. Modules of the facade's own ``nn`` are
called as they are (their forward is the facade's), as TorchScript calls its builtins.
"""
from __future__ import annotations

import functools
import types
from typing import Any, Callable, Generic, TypeVar

from funcgrad.torch._script import stypes as T
from funcgrad.torch._script.code import function_code
from funcgrad.torch._script.compiled import CompiledRunner
from funcgrad.torch._script.errors import (FrontendError, NotSupportedError,
                                           ScriptCompileError, UnsupportedNodeError)
from funcgrad.torch._script.frontend import FunctionCompiler
from funcgrad.torch._script.interp import build
from funcgrad.torch._script.ir import Graph
from funcgrad.torch._tensor import Tensor
from funcgrad.torch.nn.module import Module

__all__ = ["script", "ignore", "unused", "export", "Final", "annotate", "is_scripting",
           "ScriptFunction", "ScriptModule", "FrontendError", "NotSupportedError",
           "UnsupportedNodeError", "ScriptCompileError"]

_scripting = [0]
_V = TypeVar("_V")


class Final(Generic[_V]):
    """``torch.jit.Final[int]``: a module attribute that is a constant of the program."""


def is_scripting() -> bool:
    """True inside scripted code (a ``prim::Constant`` there), False in Python."""
    return _scripting[0] > 0


def annotate(the_type: Any, the_value: Any) -> Any:
    """``torch.jit.annotate(List[int], [])``: the value, typed for the compiler."""
    return the_value


def ignore(drop: Any = False, **kwargs: Any) -> Any:
    """A function the compiler leaves to Python (called as is from scripted code)."""
    if callable(drop):
        drop._torchscript_modifier = "ignore"
        return drop
    return functools.partial(_mark, "unused" if drop else "ignore")


def unused(fn: Callable) -> Callable:
    """A function or method the compiler replaces by an exception if called."""
    fn._torchscript_modifier = "unused"
    return fn


def export(fn: Callable) -> Callable:
    """A module method compiled besides ``forward`` (and callable on the scripted
    module)."""
    fn._torchscript_modifier = "export"
    return fn


def _mark(kind: str, fn: Callable) -> Callable:
    fn._torchscript_modifier = kind
    return fn


def _is_builtin_module(obj: Module) -> bool:
    """A module of the facade's ``nn`` (run by its own forward, not compiled)."""
    return type(obj).__module__.startswith("funcgrad.torch.nn")


class _Context:
    """One ``script`` call's compilation: the graphs made (by qualified name), module
    methods by (module, name), their runners."""

    def __init__(self) -> None:
        self.graphs: dict = {}
        self.methods: dict = {}
        self.runners: dict = {}
        self.busy: set = set()
        self.python: dict = {}

    def qualname(self, fn: Any, self_obj: Any) -> str:
        if self_obj is not None:
            return f"__torch__.{type(self_obj).__qualname__}.{fn.__name__}"
        return f"__torch__.{getattr(fn, '__qualname__', fn.__name__)}"

    def class_type(self, obj: Module) -> T.ClassType:
        cls = type(obj)
        prefix = "torch.nn.modules." if _is_builtin_module(obj) else ""
        return T.ClassType(prefix + cls.__qualname__)

    def is_sequential(self, obj: Module) -> bool:
        return type(obj).__name__ == "Sequential" and _is_builtin_module(obj)

    def special(self, obj: Any) -> str | None:
        return {annotate: "annotate", is_scripting: "is_scripting"}.get(obj) if \
            isinstance(obj, types.FunctionType) else None

    def function(self, fn: Any) -> tuple:
        kind = getattr(fn, "_torchscript_modifier", "script")
        if kind in ("ignore", "unused"):
            self.python[fn.__name__] = fn
            return kind, None
        return "script", self.compile(fn, None)

    def compile(self, fn: Any, self_obj: Any) -> Graph:
        key = (id(self_obj), fn.__name__) if self_obj is not None else fn
        table = self.methods if self_obj is not None else self.graphs
        if key in table:
            return table[key]
        if key in self.busy:
            raise RuntimeError(f"Recursion on function {fn.__name__} is not supported in "
                               "TorchScript")
        self.busy.add(key)
        try:
            graph = FunctionCompiler(fn, self, self_obj).compile()
        finally:
            self.busy.discard(key)
        table[key] = graph
        self.runners[graph.qualname if self_obj is None else key] = build(graph, self)
        return graph

    def method(self, obj: Module, name: str) -> Graph | None:
        if _is_builtin_module(obj):
            return None
        fn = getattr(type(obj), name)
        if getattr(fn, "_torchscript_modifier", "") == "ignore":
            return None
        return self.compile(fn, obj)

    def method_runner(self, obj: Module, name: str) -> Callable:
        runner = self.runners.get((id(obj), name))
        return runner if runner is not None else getattr(type(obj), name)

    def function_runner(self, qualname: str) -> Callable:
        return lambda *args: self.runners[qualname](*args)

    def python_op(self, name: str, fn: Any) -> Callable:
        return fn if fn is not None else self.python[name]


class _Scripted:
    """What a scripted function and a scripted module's methods share: running under
    ``is_scripting``, ``graph`` and ``code``."""

    def _enter(self, run: Callable, *args: Any) -> Any:
        _scripting[0] += 1
        try:
            return run(*args)
        finally:
            _scripting[0] -= 1


class ScriptFunction(_Scripted):
    """A compiled function: call it like the original; ``.graph``, ``.code``."""

    def __init__(self, fn: Callable, ctx: _Context):
        self.__wrapped__ = fn
        self.__name__ = fn.__name__
        self._ctx = ctx
        self.graph = ctx.compile(fn, None)
        self._run = CompiledRunner(self.graph, ctx.runners[self.graph.qualname])

    @classmethod
    def _from_graph(cls, graph: Graph, ctx: Any) -> "ScriptFunction":
        """A function whose graph was not compiled here (loaded by ``torch.jit.load``)."""
        self = cls.__new__(cls)
        self.__name__, self._ctx, self.graph = graph.name, ctx, graph
        self._run = CompiledRunner(graph, ctx.runners[graph.qualname])
        return self

    def __call__(self, *args: Any) -> Any:
        _check_call(self.graph, args, 0)
        return self._enter(self._run, *args)

    @property
    def code(self) -> str:
        return function_code(self.graph)

    @property
    def schema(self) -> str:
        params = ", ".join(f"{p.type} {p.base}" for p in self.graph.block.params)
        return f"{self.__name__}({params}) -> {self.graph.return_type}"


class ScriptModule(Module, _Scripted):
    """A compiled module: its parameters, buffers and submodules are the original's
    (so optimizers and ``state_dict`` see them); ``forward`` and the exported methods
    run their graphs."""

    def __init__(self, module: Module, ctx: _Context, methods: list):
        super().__init__()
        object.__setattr__(self, "_orig", module)
        for table in ("_parameters", "_buffers", "_modules"):
            object.__setattr__(self, table, getattr(module, table))
        object.__setattr__(self, "_ctx", ctx)
        object.__setattr__(self, "training", module.training)
        object.__setattr__(self, "_graphs", {m: ctx.method(module, m) for m in methods})

    @property
    def graph(self) -> Graph:
        return self._graphs["forward"]

    @property
    def code(self) -> str:
        return function_code(self.graph)

    def train(self, mode: bool = True) -> "ScriptModule":
        self._orig.train(mode)
        object.__setattr__(self, "training", mode)
        return self

    def forward(self, *args: Any) -> Any:
        return self._call_method("forward", args)

    def _call_method(self, name: str, args: tuple) -> Any:
        graph = self._graphs[name]
        _check_call(graph, args, 1)
        return self._enter(self._ctx.method_runner(self._orig, name), self._orig, *args)

    def __getattr__(self, name: str) -> Any:
        graphs = self.__dict__.get("_graphs", {})
        if name in graphs and name != "forward":
            return lambda *args: self._call_method(name, args)
        if name in ("_orig", "_ctx", "_graphs"):
            return self.__dict__[name]
        try:
            return super().__getattr__(name)
        except AttributeError:
            return getattr(self.__dict__["_orig"], name)


def _check_call(graph: Graph, args: tuple, skip: int) -> None:
    """TorchScript's argument checks on a call from Python."""
    params = graph.block.params[skip:]
    if len(args) > len(params) or len(args) + len(graph.defaults) < len(params):
        raise RuntimeError(f"{graph.name}() expected at most {len(params)} argument(s) but "
                           f"received {len(args)} argument(s).")
    for p, a in zip(params, args):
        ok = {T.TENSOR: lambda v: isinstance(v, Tensor),
              T.INT: lambda v: isinstance(v, int) and not isinstance(v, bool),
              T.FLOAT: lambda v: isinstance(v, (int, float)) and not isinstance(v, bool),
              T.BOOL: lambda v: isinstance(v, bool)}.get(p.type, lambda v: True)
        if not ok(a):
            raise RuntimeError(f"{graph.name}() Expected a value of type '{p.type}' for "
                               f"argument '{p.base}' but instead found type "
                               f"'{type(a).__name__}'.")


def script(obj: Any, optimize: Any = None, _frames_up: int = 0, _rcb: Any = None,
           example_inputs: Any = None) -> Any:
    """Compile a function or an ``nn.Module`` (its ``forward``, the methods it calls,
    ``@torch.jit.export``'ed ones, recursively its submodules) from its source."""
    if isinstance(obj, (ScriptModule, ScriptFunction)):
        return obj
    ctx = _Context()
    if isinstance(obj, Module):
        methods = ["forward"] + [n for n, f in vars(type(obj)).items()
                                 if getattr(f, "_torchscript_modifier", "") == "export"]
        return ScriptModule(obj, ctx, methods)
    if not isinstance(obj, types.FunctionType):
        raise RuntimeError(f"Type '{type(obj).__name__}' cannot be compiled since it "
                           "inherits from nn.Module, pass an instance instead" if isinstance(
                               obj, type) else f"cannot script {obj!r}")
    return ScriptFunction(obj, ctx)
