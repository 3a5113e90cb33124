"""What a compiled function uses besides its arguments: the values it reads (closure
cells, globals, a bound object, a partial's arguments) and, among them and inside the
containers and helper functions they lead to, the modules whose parameters and buffers
``torch.compile`` lifts as inputs of its program (`captured_modules`), the tensors and
optimizers of a training step. The search can record each read it makes as a probe
(`_step_replay.Probes`), so that a compiled step's next call can check cheaply that none
of them gives anything else now.
"""
from __future__ import annotations

import contextlib
import dis
import functools
import types
from itertools import chain
from typing import Any, Iterator

from funcgrad.torch import func
from funcgrad.torch._compile_state import is_constant
from funcgrad.torch._tensor import Tensor
from funcgrad.torch.nn.module import Module
from funcgrad.torch.optim.optimizer import Optimizer

__all__ = ["reachable", "captured_modules", "probe_tables", "code_names", "state_of",
           "named_tensors", "reparametrized"]


@functools.lru_cache(maxsize=256)
def code_names(code: types.CodeType) -> frozenset:
    """The global names a code object (and the functions, lambdas, comprehensions defined
    in it) reads."""
    names = {i.argval for i in dis.get_instructions(code)
             if i.opname in ("LOAD_GLOBAL", "LOAD_NAME")}
    for const in code.co_consts:
        if isinstance(const, types.CodeType):
            names |= code_names(const)
    return frozenset(names)


def reachable(fn: Any, probes: Any = None, at: str = "") -> dict:
    """name -> value of what ``fn`` reads besides its arguments: its closure cells, the
    globals its code names, the object of a bound method, a partial's bound arguments and
    the attributes of a callable object. With ``probes`` (`_step_replay.Probes`; ``at``:
    the expression ``fn`` is read by there), name -> (value, the expression reading it),
    and what decides which values there are (the code, a callable's class) is probed."""
    reads = _Reads(probes)
    fn, at = reads.unwrapped(fn, at)
    fn, at, code = reads.code_of(fn, at)
    if code is not None:
        reads.closure_and_globals(fn, code)
    return reads.found


class _Reads:
    """What `reachable` finds, as it finds it (with the expression reading each value
    when probing)."""

    def __init__(self, probes: Any):
        self.probes = probes
        self.found: dict = {}

    def put(self, name: str, value: Any, src: str) -> None:
        self.found[name] = value if self.probes is None else (value, src)

    def attrs(self, obj: Any, src: str) -> None:
        """The attributes of an object, read one by one."""
        table = getattr(obj, "__dict__", {})
        if self.probes is not None:
            self.probes.ids(f"getattr({src}, '__dict__', E)")
        for k, v in table.items():
            self.put(k, v, _item(self.probes, f"{src}.__dict__", k))

    def unwrapped(self, fn: Any, at: str) -> tuple:
        """The function under partials (their bound arguments read) and a bound method
        (its object read)."""
        probes = self.probes
        while isinstance(fn, functools.partial):
            for i, a in enumerate(fn.args):
                self.put(f"partial_arg{i}", a, f"{at}.args[{i}]")
            if probes is not None:
                probes.ids(f"{at}.keywords")
            for k, v in fn.keywords.items():
                self.put(k, v, _item(probes, f"{at}.keywords", k))
            fn, at = fn.func, f"{at}.func"
        if isinstance(fn, types.MethodType):
            self.put("self", fn.__self__, f"{at}.__self__")
            fn, at = fn.__func__, f"{at}.__func__"
        return fn, at

    def code_of(self, fn: Any, at: str) -> tuple:
        """(the function whose code runs, its expression, that code or None): a callable
        object's attributes are read and its class's ``__call__`` runs."""
        probes = self.probes
        if probes is not None:
            probes.same(f"getattr({at}, '__code__', M)")
        code = getattr(fn, "__code__", None)
        if code is not None:
            return fn, at, code
        self.attrs(fn, at)
        if probes is not None:
            probes.same(f"getattr(type({at}), '__call__', M)")
        call = getattr(type(fn), "__call__", None)
        code = getattr(call, "__code__", None)
        if code is not None and probes is not None:  # (a class attribute: fixed with it)
            at = probes.obj(call)
            probes.same(f"getattr({at}, '__code__', M)")
        return call, at, code

    def closure_and_globals(self, fn: Any, code: types.CodeType) -> None:
        probes = self.probes
        for name, cell in zip(code.co_freevars, fn.__closure__ or ()):
            try:
                self.put(name, cell.cell_contents, f"{probes.obj(cell)}.cell_contents"
                         if probes is not None else "")
            except ValueError:  # a cell not filled yet
                if probes is not None:
                    probes.same(f"C({probes.obj(cell)})")
        scope = getattr(fn, "__globals__", {})
        for n in code_names(code):
            if n in scope:
                self.put(n, scope[n], f"{probes.obj(scope)}.get({n!r}, M)"
                         if probes is not None else "")
            elif probes is not None:
                probes.same(f"{probes.obj(scope)}.get({n!r}, M)")


# containers longer than this are not searched for modules (this runs on every call: a
# function reading a list of a dataset's tensors must not pay for walking it)
_MAX_SCANNED = 64


def captured_modules(fn: Any, tensors: dict | None = None, optimizers: list | None = None,
                     probes: Any = None, constants: list | None = None) -> dict:
    """name -> Module of the modules ``fn`` uses without taking them as arguments (also
    those in a list, tuple or dict it reads, or the attributes of an object it reads):
    their parameters and buffers become inputs of its compiled program, as torch.compile
    lifts them. A tensor read directly goes into ``tensors`` (name -> tensor) when that is
    given (a training step's state, whose search also enters the functions it reads, as
    the loss function it calls, and puts the optimizers it meets into ``optimizers``);
    otherwise one that requires grad is refused (the compiled program would take it as a
    constant, and no gradient would reach it). ``probes``: what the search reads is
    probed (`reachable`). ``constants`` (with ``probes``) collects (name, value) of the
    Python numbers, strings and the like read (a trace bakes them in), each probed for
    its value."""
    search = _ModuleSearch(fn, tensors, optimizers, probes, constants)
    for name, value in reachable(fn, probes, probes.obj(fn) if probes is not None
                                 else "").items():
        search.visit(name, *_split(value, probes), 0)
    return search.modules


class _ModuleSearch:
    """`captured_modules`' walk: each value read (``src``: the expression reading it, for
    the probes), down to depth 2, each object once."""

    def __init__(self, fn: Any, tensors: dict | None, optimizers: list | None, probes: Any,
                 constants: list | None):
        self.fn, self.tensors, self.optimizers, self.probes = fn, tensors, optimizers, probes
        self.constants = constants
        self.modules: dict = {}
        self.seen: set = set()

    def visit(self, name: str, value: Any, src: str, depth: int) -> None:
        if depth > 2:
            return
        probes = self.probes
        if id(value) in self.seen:
            if probes is not None:
                probes.same(src)
            return
        self.seen.add(id(value))
        if self.constants is not None and is_constant(value):  # (baked into a trace)
            probes.equal(src)
            self.constants.append((name, value))
            return
        if probes is not None:  # its identity decides below, except for a leftover
            if _scanned(value, depth, self.tensors is not None):
                probes.same(src)
            else:
                probes.kind(src)
        if isinstance(value, Module):
            self.modules[name] = value
        elif isinstance(value, Tensor):
            self.tensor(name, value, src)
        elif isinstance(value, Optimizer):
            if self.optimizers is not None:
                self.optimizers.append(value)
        else:
            self.container(name, value, src, depth)

    def tensor(self, name: str, value: Tensor, src: str) -> None:
        if self.tensors is not None:
            self.tensors[name] = value
        elif self.probes is not None and not value.requires_grad:
            self.probes.equal(f"{src}.requires_grad")
        elif value.requires_grad:
            raise RuntimeError(
                f"{_name_of(self.fn)} reads the tensor {name!r}, which requires grad, from "
                "its closure or globals: a compiled program would take it as a constant and "
                "no gradient would reach it. Pass it as an argument of the compiled "
                "function, or hold it in an nn.Module (as an nn.Parameter) that the "
                "function uses.")

    def container(self, name: str, value: Any, src: str, depth: int) -> None:
        """The values inside a list, tuple, dict, helper function (a step's search only)
        or an object holding state (at the top)."""
        probes = self.probes
        if isinstance(value, (list, tuple)):
            if probes is not None:
                probes.equal(f"len({src})")
            if len(value) <= _MAX_SCANNED:
                for i, v in enumerate(value):
                    self.visit(f"{name}.{i}", v, f"{src}[{i}]", depth + 1)
        elif isinstance(value, dict):
            if probes is not None:
                probes.ids(src)
            if len(value) <= _MAX_SCANNED:
                for k, v in value.items():
                    self.visit(f"{name}.{k}", v, _item(probes, src, k), depth + 1)
        elif self.tensors is not None and isinstance(value, _FUNCTIONS):
            for k, v in reachable(value, probes, src).items():  # a helper (the loss)
                self.visit(f"{name}.{k}", *_split(v, probes), depth + 1)
        elif depth == 0 and _holds_state(value):
            if probes is not None:
                probes.ids(f"{src}.__dict__")
            for k, v in vars(value).items():  # an object holding a model (self.model)
                self.visit(f"{name}.{k}", v, _item(probes, f"{src}.__dict__", k), depth + 1)


_FUNCTIONS = (types.FunctionType, types.MethodType, functools.partial)


def _holds_state(value: Any) -> bool:
    """Whether a value the step reads directly is an object whose attributes are searched
    (``self.model`` of a trainer object)."""
    return hasattr(value, "__dict__") and not isinstance(
        value, (type, types.ModuleType, types.FunctionType, Optimizer))


def _scanned(value: Any, depth: int, entering: bool) -> bool:
    """Whether `captured_modules` does anything with ``value`` other than skip it: else
    its type alone (not which object it is) decides that it is skipped."""
    return isinstance(value, (Module, Tensor, Optimizer, list, tuple, dict)) or (
        entering and isinstance(value, _FUNCTIONS)) or (depth == 0 and _holds_state(value))


def _item(probes: Any, src: str, key: Any) -> str:
    """The expression reading ``src[key]`` (with probes; else nothing)."""
    return f"{src}[{probes.obj(key)}]" if probes is not None else ""


def _split(value: Any, probes: Any) -> tuple:
    """(value, expression) of a `reachable` entry (the expression only with probes)."""
    return value if probes is not None else (value, "")


def _name_of(fn: Any) -> str:
    return getattr(fn, "__name__", type(fn).__name__)


def probe_tables(module: Module, probes: Any, names: bool) -> None:
    """Probe what a search of ``module``'s tree reads of one module: its training flag
    and the parameters, buffers and submodules in its tables (with their names, if the
    search reads ``names``)."""
    at = probes.obj(module)
    probes.equal(f"{at}.training")
    tables = {f"{at}.{name}": getattr(module, name)
              for name in ("_parameters", "_buffers", "_modules")}
    held = [t for t, table in tables.items() if table]
    if held:
        probes.ids(*[f"{t}.values()" for t in held], *(held if names else ()))
    empty = [t for t in tables if t not in held]
    if empty:  # (that they are still empty is cheaper to check than what they hold)
        probes.equal(f"not ({' or '.join(empty)})")


def state_of(modules: dict) -> tuple[dict, tuple]:
    """(name -> parameter or buffer, training flags) of ``modules`` (name -> Module), the
    names prefixed by the module's (a tensor shared by two of them listed once)."""
    state: dict = {}
    seen: set = set()
    modes = []
    for prefix, module in modules.items():
        dot = prefix + "." if prefix else ""
        for name, t in named_tensors(module):
            if id(t) not in seen:
                seen.add(id(t))
                state[dot + name] = t
        modes += [m.training for m in module.modules()]
    return state, tuple(modes)


def named_tensors(module: Module) -> Iterator[tuple[str, Tensor]]:
    """Every parameter and buffer of ``module`` under every name it has (tied weights
    under each)."""
    return chain(module.named_parameters(remove_duplicate=False),
                 module.named_buffers(remove_duplicate=False))


@contextlib.contextmanager
def reparametrized(modules: dict, state: dict) -> Iterator[None]:
    """Within the block, the parameters and buffers of ``modules`` are the tensors of
    ``state`` (named as `_state_of` names them), under all their names."""
    names = {id(t): n for n, t in state_of(modules)[0].items()}
    swaps = [(module, {name: state[names[id(t)]] for name, t in named_tensors(module)})
             for module in modules.values()]  # all read before any is swapped
    with contextlib.ExitStack() as stack:
        for module, swap in swaps:
            stack.enter_context(func.reparametrized(module, swap))
        yield
