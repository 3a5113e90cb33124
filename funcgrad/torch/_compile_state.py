"""What ``torch.compile`` keeps besides its programs, so that compiling never changes what a
program does: graph breaks, the Python state a trace may touch, dynamo's knobs.

A trace runs the function's Python once, on traced values. Whatever that Python does besides
computing tensors would happen once instead of on every call: appending to a list,
setting an attribute, writing into a tensor it closes over, drawing random numbers, printing.
`PythonState` snapshots what the function can reach before a trace and compares after; a
change (or a value the trace cannot know, as ``if x.sum() > 0``) is a `GraphBreak`: the
snapshot is put back, as if the trace had never run, and the function runs split into
compiled segments and eager statements (`funcgrad.torch._graph_split`), or eagerly, exactly
as without ``torch.compile`` (``fullgraph=True`` raises `Unsupported` instead). Python
values the program was traced with (closure and global numbers, module attributes) are
guarded by the caller (`funcgrad.torch.jit`): a change retraces, up to
``config.recompile_limit`` programs per function.
"""
from __future__ import annotations

import enum
import os
import traceback
import types
import weakref
from typing import Any, Callable, Iterable, NamedTuple

from funcgrad.torch._tensor import Tensor

__all__ = ["GraphBreak", "Unsupported", "Options", "StaticTree", "Specialization", "report", "config", "register", "reset", "PythonState",
           "is_constant", "where_in_user_code", "SIDE_EFFECT_CALLS"]

# builtins whose call in a compiled function is a side effect a trace cannot replay
SIDE_EFFECT_CALLS = frozenset({"print", "input", "open", "breakpoint", "exec", "eval"})
_MAX_ITEMS = 64  # containers are compared in full but searched only this far
_MAX_DEPTH = 3
_FUNDAMENTALS = (type, types.ModuleType, types.BuiltinFunctionType, weakref.ref)


class GraphBreak(Exception):
    """A trace met what a compiled program cannot do (the reason, and where in the user's
    code): the function runs split, or eagerly, instead."""

    def __init__(self, reason: str, where: str = ""):
        super().__init__(reason + (f" (at {where})" if where else ""))
        self.reason, self.where = reason, where


class Options(NamedTuple):
    """torch.compile's arguments that change how a function is compiled: ``fullgraph``
    (a graph break raises `Unsupported`), ``dynamic`` (None, True, False:
    `funcgrad.torch._compiled_shapes`), ``backend`` (a callable one is called with each
    graph traced and its example inputs, as PyTorch calls it; funcgrad compiles the
    program itself)."""

    fullgraph: bool = False
    dynamic: bool | None = None
    backend: Any = "inductor"


class Unsupported(RuntimeError):
    """``torch._dynamo.exc.Unsupported``: a graph break under ``fullgraph=True``."""


class _Config:
    """``torch._dynamo.config``: ``recompile_limit`` (``cache_size_limit``, its old name)
    programs per compiled function before it runs eagerly for new guards."""

    recompile_limit = 8
    suppress_errors = False

    @property
    def cache_size_limit(self) -> int:
        return self.recompile_limit

    @cache_size_limit.setter
    def cache_size_limit(self, value: int) -> None:
        self.recompile_limit = value


config = _Config()
_PROGRAMS: weakref.WeakSet = weakref.WeakSet()


def report(options: Options, lower: Callable[[], Any], inputs: list) -> None:
    """Call a callable backend with a graph just traced (``lower()``: its IR) and the
    call's example inputs, as PyTorch calls its backends once per graph compiled."""
    if callable(options.backend):
        options.backend(lower(), inputs)


class StaticTree:
    """A call's input tree with its static leaves (Python ints, bools, strings: the
    values a program specializes on) in it; `unflatten` takes the other leaves."""

    __slots__ = ("tree", "statics", "_hash")

    def __init__(self, tree: Any, statics: tuple):
        self.tree, self.statics = tree, statics  # (None at the places of the others)
        self._hash = hash((tree, statics))

    def unflatten(self, inputs: list) -> Any:
        given = iter(inputs)
        return self.tree.unflatten([next(given) if s is None else s[1] for s in self.statics])

    def __eq__(self, other: Any) -> bool:
        return isinstance(other, StaticTree) and self.tree == other.tree and \
            self.statics == other.statics

    def __hash__(self) -> int:
        return self._hash

    def __repr__(self) -> str:
        return f"StaticTree({self.tree}, {[s and s[1] for s in self.statics]})"


_STATIC = (int, bool, str)


class Specialization:
    """Which Python int, bool and str arguments of a compiled function its programs
    specialize on (`StaticTree`), as PyTorch's: every one at first; an int whose value
    changes becomes an input from then on (automatic dynamic; not with
    ``dynamic=False``), unless a trace needed it static (it used it as a size: `pin`)."""

    def __init__(self, dynamic: bool | None):
        self.automatic = dynamic is not False
        self.first: dict = {}  # input tree -> its static leaves' first values
        self.inputs: dict = {}  # input tree -> positions of ints that are inputs
        self.pinned: dict = {}  # input tree -> positions of ints kept static

    def split(self, tree: Any, leaves: list) -> tuple[Any, list]:
        """(the tree with the static leaves in it, the leaves that are inputs); ``tree``
        itself if no leaf is static."""
        found = [(i, (type(x), x)) for i, x in enumerate(leaves) if type(x) in _STATIC]
        if not found:
            return tree, leaves
        first = self.first.setdefault(tree, found)
        if self.automatic and first != found:
            changed = {i for (i, a), (_, b) in zip(first, found)
                       if a != b and a[0] is int and b[0] is int}
            self.inputs[tree] = (self.inputs.get(tree, frozenset()) | changed) - \
                self.pinned.get(tree, frozenset())
        dynamic = self.inputs.get(tree, frozenset())
        statics = [None] * len(leaves)
        for i, value in found:
            if i not in dynamic:
                statics[i] = value
        return StaticTree(tree, tuple(statics)), [x for x, s in zip(leaves, statics)
                                                  if s is None]

    def pin(self, in_tree: Any) -> bool:
        """After a trace with int inputs broke (one was used as a size): keep them
        static; whether there were any."""
        tree = getattr(in_tree, "tree", None)
        if not self.inputs.get(tree):
            return False
        self.pinned[tree] = self.pinned.get(tree, frozenset()) | self.inputs.pop(tree)
        return True


def register(program: Any) -> None:
    """Count ``program`` (anything with ``reset()``) among those `reset` clears."""
    _PROGRAMS.add(program)


def reset() -> None:
    """``torch._dynamo.reset()``: forget every compiled program and guard; the next calls
    trace again."""
    for program in list(_PROGRAMS):
        program.reset()


def is_constant(value: Any) -> bool:
    """Whether a trace reading ``value`` bakes it into the program (a Python number,
    string, bool, None, enum member or a tuple of them): such reads are guarded."""
    if isinstance(value, tuple):
        return len(value) <= _MAX_ITEMS and all(map(is_constant, value))
    return value is None or isinstance(value, (bool, int, float, complex, str, bytes,
                                               enum.Enum))


def where_in_user_code(error: BaseException) -> str:
    """``file:line`` of the innermost frame of ``error``'s traceback outside funcgrad."""
    package = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
    root = os.path.dirname(package)
    found = ""
    for frame in traceback.extract_tb(error.__traceback__):
        path = os.path.abspath(frame.filename)
        if not (path.startswith(package) or path.startswith(os.path.join(root, "transforms"))
                or path.startswith(os.path.join(root, "primitives"))):
            found = f"{frame.filename}:{frame.lineno}"
    return found


class PythonState:
    """A shallow snapshot of the mutable Python state reachable from ``roots`` (name ->
    value): lists, dicts, sets, objects' attributes (modules' too), tensors (their memory
    and version), to ``_MAX_DEPTH`` levels. `changes` says what differs now; `restore`
    puts the snapshot back."""

    def __init__(self, roots: dict):
        self.lists: list = []  # (name, list, its items)
        self.dicts: list = []  # (name, dict, its items)
        self.sets: list = []  # (name, set, a copy)
        self.tensors: list = []  # (name, tensor, its array, its version)
        self._seen: set = set()
        for name, value in roots.items():
            self._take(name, value, 0)

    def _take(self, name: str, value: Any, depth: int) -> None:
        if depth > _MAX_DEPTH or id(value) in self._seen or is_constant(value) or \
                isinstance(value, _FUNDAMENTALS):
            return
        self._seen.add(id(value))
        if isinstance(value, Tensor):
            self.tensors.append((name, value, value._data, value._version))
        elif isinstance(value, list):
            self.lists.append((name, value, list(value)))
            self._inner(name, enumerate(value), depth)
        elif isinstance(value, dict):
            self.dicts.append((name, value, list(value.items())))
            self._inner(name, value.items(), depth)
        elif isinstance(value, (set, bytearray)):
            self.sets.append((name, value, value.copy()))
        elif isinstance(value, tuple):
            self._inner(name, enumerate(value), depth)
        elif isinstance(value, types.FunctionType):
            for k, cell in zip(value.__code__.co_freevars, value.__closure__ or ()):
                try:
                    self._take(f"{name}.{k}", cell.cell_contents, depth + 1)
                except ValueError:  # an empty cell
                    pass
        elif hasattr(value, "__dict__") and not isinstance(value, types.MethodType):
            self._take(f"{name}.__dict__", vars(value), depth)

    def _inner(self, name: str, items: Iterable, depth: int) -> None:
        for i, (k, v) in enumerate(items):
            if i >= _MAX_ITEMS:
                break
            self._take(f"{name}[{k!r}]", v, depth + 1)

    def changes(self) -> list[str]:
        """What differs from the snapshot, by name."""
        out = [f"the list {n}" for n, obj, items in self.lists if not _same_items(obj, items)]
        out += [_dict_name(n) for n, obj, items in self.dicts if not _same_entries(obj, items)]
        out += [f"the set {n}" for n, obj, copy in self.sets if obj != copy]
        out += [f"the tensor {n} (written in place)" for n, t, a, v in self.tensors
                if t._data is not a or t._version != v]
        return out

    def restore(self) -> None:
        """Put every snapshot value back (tensors: their memory and version)."""
        for _, obj, items in self.lists:
            obj[:] = items
        for _, obj, items in self.dicts:
            if not _same_entries(obj, items):
                obj.clear()
                obj.update(items)
        for _, obj, copy in self.sets:
            obj.clear()
            if isinstance(obj, set):
                obj.update(copy)
            else:
                obj.extend(copy)
        for _, t, a, v in self.tensors:
            if t._data is not a or t._version != v:
                t._hold(a, v)


def _same_items(now: list, then: list) -> bool:
    """Whether a list holds the same objects as before."""
    return len(now) == len(then) and all(a is b for a, b in zip(now, then))


def _same_entries(now: dict, then: list) -> bool:
    """Whether a dict maps the same keys to the same objects as before."""
    return len(now) == len(then) and all(k in now and now[k] is v for k, v in then)


def _dict_name(name: str) -> str:
    if name.endswith(".__dict__"):
        return f"the attributes of {name[:-len('.__dict__')]}"
    return f"the dict {name}"
