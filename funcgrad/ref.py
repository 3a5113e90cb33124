"""JAX's mutable array references (``jax.ref``; ``jax.new_ref``, ``jax.freeze``, ``jax.Ref``).

A `Ref` holds one array value that indexed writes replace. Where it is used decides how:

- in the scope that created it (no transform, or inside the same ``jit`` trace), a write
  is a functional update of the held value (``value.at[idx].set(v)``), so the value may be
  a tracer and a function that only uses refs internally is pure: ``grad``, ``vmap`` and
  ``jit`` see ordinary array operations;
- inside a ``jit`` trace newer than the ref (the ref closed over or passed as an argument),
  reads and writes are `io_callback` effects (`staged_io_callback`) of the compiled program: they happen each time
  it runs, in program order, on the ref object itself (JAX's in-place update).

A ref is a pytree leaf (as JAX's); ``jit`` holds a ref argument in its argument tree
(`flatten_holding_refs`): the compiled program is specialised to that ref (a new ref traces
again). Writing a value
of a newer ``grad``/``jvp``/``vmap`` trace into an older ref would leak its tracer; that is
JAX's error.
"""
from __future__ import annotations

import contextlib
import inspect
from typing import Any, Iterator

import numpy as np

from funcgrad import tree_util
from funcgrad.array import Array
from funcgrad.callbacks import staged_io_callback
from funcgrad.core import Tracer, active_traces
from funcgrad.meta import ShapeDtypeStruct, eval_shape
import funcgrad.numpy as fnp

__all__ = ["Ref", "new_ref", "freeze", "get", "set", "swap", "addupdate", "check_jit_args",
           "check_jit_result", "undone_on_error", "flatten_holding_refs"]

_LEAK_ERRORS = {  # (JAX's texts, by the mode of the trace whose value would leak)
    "rev": "performing a set/swap operation with a differentiated value on a "
           "non-differentiated array reference of type {ty}. Move the array reference to be "
           "an argument of the differentiated function?",
    "jvp": "performing a set/swap operation with a differentiated value on a "
           "non-differentiated array reference of type {ty}. Move the array reference to be "
           "an argument of the differentiated function?",
    "batch": "performing a set/swap operation with vmapped value on an unbatched array "
             "reference of type {ty}. Move the array reference to be an argument to the "
             "vmapped function?",
}


def _innermost_jit() -> Any:
    for trace in reversed(active_traces()):
        if trace.mode == "jit":
            return trace
    return None


class Ref:
    """A mutable array: read with ``ref[idx]`` (``ref[...]`` for all of it), write with
    ``ref[idx] = v`` and ``ref[idx] += v``. Not an array: do math on what it reads."""

    __slots__ = ("_value", "_scope", "_depth", "__weakref__")

    def __init__(self, value: Any):
        if isinstance(value, Ref):
            raise TypeError("new_ref: a Ref cannot hold a Ref (no higher-order refs)")
        self._value = value if isinstance(value, Array) else fnp.asarray(value)
        self._scope = _innermost_jit()  # (whose trace may update the value functionally)
        self._depth = len(active_traces())  # (traces from this level on are newer)

    shape = property(lambda self: tuple(self._value.shape))
    dtype = property(lambda self: self._value.dtype)
    ndim = property(lambda self: len(self._value.shape))
    size = property(lambda self: int(np.prod(self._value.shape, dtype=np.int64)))

    def __len__(self) -> int:
        if not self._value.shape:
            raise TypeError("len() of unsized object")
        return self._value.shape[0]

    def __getitem__(self, idx: Any) -> Array:
        return get(self, idx)

    def __setitem__(self, idx: Any, value: Any) -> None:
        set(self, idx, value)

    def type_text(self) -> str:
        """JAX's ``Ref{float32[3]}``, as its errors name a ref."""
        return f"Ref{{{self.dtype}[{','.join(str(d) for d in self.shape)}]}}"

    def __repr__(self) -> str:
        text = repr(self._value)
        return "Ref" + text[text.index("("):] if "(" in text else f"Ref({text})"

    def _local(self) -> bool:
        """Whether this trace may update the value functionally (else: effects)."""
        return self._scope is _innermost_jit()


class _Held:
    """A ref in a jitted call's argument tree: a node without leaves whose node data is
    the ref, so the program is specialised to that ref (the tree is the cache key) and
    the traced function receives the ref itself (unflattening gives it back)."""

    __slots__ = ("ref",)

    def __init__(self, ref: Ref):
        self.ref = ref


tree_util.register_pytree_node(_Held, lambda h: ((), h.ref), lambda ref, children: ref)


def flatten_holding_refs(tree: Any) -> tuple[list, Any]:
    """``tree_flatten(tree)`` with each ref (a leaf, as JAX's) held in the structure
    instead (`_Held`): how jit flattens its arguments."""
    leaves, treedef = tree_util.tree_flatten(tree)
    if not any(type(x) is Ref for x in leaves):
        return leaves, treedef
    return tree_util.tree_flatten(treedef.unflatten(
        [_Held(x) if type(x) is Ref else x for x in leaves]))


def new_ref(init_val: Any) -> Ref:
    """A new reference holding ``init_val``."""
    return Ref(init_val)


def freeze(ref: Ref) -> Array:
    """The final value of ``ref``."""
    return get(ref, ...)


def _split_index(idx: Any) -> tuple[list, Any]:
    """(the index's array parts, a function rebuilding the index from them): the parts are
    what an effect passes to its callback, the rest stays in the rebuilding closure."""
    parts = idx if isinstance(idx, tuple) else (idx,)
    arrays = [p for p in parts if isinstance(p, (Array, np.ndarray))]

    def rebuild(values: Any) -> Any:
        it = iter(values)
        built = tuple(next(it) if isinstance(p, (Array, np.ndarray)) else p for p in parts)
        return built if isinstance(idx, tuple) else built[0]
    return arrays, rebuild


def get(ref: Ref, idx: Any = ...) -> Array:
    """``ref[idx]``."""
    if ref._local():
        return ref._value[idx]
    arrays, rebuild = _split_index(idx)
    held = ShapeDtypeStruct(ref.shape, ref.dtype)
    out = eval_shape(lambda v, *a: v[rebuild(a)], held, *arrays)
    return staged_io_callback(_innermost_jit(), lambda *a: np.asarray(ref._value[rebuild(a)]),
                              out, *arrays)


def swap(ref: Ref, idx: Any, value: Any) -> Array:
    """``ref[idx]`` before writing ``value`` there (JAX's ``ref_swap``)."""
    old = get(ref, idx)
    set(ref, idx, value)
    return old


def addupdate(ref: Ref, idx: Any, value: Any) -> None:
    """``ref[idx] += value``."""
    set(ref, idx, get(ref, idx) + value)


def set(ref: Ref, idx: Any, value: Any) -> None:  # noqa: A001 (JAX's name, jax.ref.set)
    """``ref[idx] = value`` (cast to the ref's dtype, broadcast to the indexed shape)."""
    value = value if isinstance(value, Array) else fnp.asarray(value)
    if ref._local():
        _check_no_leak(ref, value)
        _assign(ref, _written(ref._value, idx, value))
        return
    arrays, rebuild = _split_index(idx)

    def write(v: Any, *a: Any) -> None:
        _assign(ref, _written(ref._value, rebuild([fnp.asarray(x) for x in a]),
                              fnp.asarray(v)))
    staged_io_callback(_innermost_jit(), write, None, value, *arrays)


# one per jit trace in progress: id(ref) -> (ref, its value before the trace's first write)
_journals: list[dict] = []


@contextlib.contextmanager
def undone_on_error() -> Iterator[None]:
    """A jit trace is its function's first call, so writes to refs happen while it runs;
    a trace that fails is no call, and what it wrote to refs is undone (as JAX, which runs
    nothing of a program it could not trace). A trace that succeeds inside another leaves
    its writes to the outer one's journal."""
    journal: dict = {}
    _journals.append(journal)
    try:
        yield
    except BaseException:
        for ref, value in journal.values():
            ref._value = value
        raise
    finally:
        _journals.pop()
    if _journals:
        for key, entry in journal.items():
            _journals[-1].setdefault(key, entry)


def _assign(ref: Ref, value: Array) -> None:
    if _journals:
        _journals[-1].setdefault(id(ref), (ref, ref._value))
    ref._value = value


def _written(held: Array, idx: Any, value: Array) -> Array:
    value = value.astype(held.dtype) if value.dtype != held.dtype else value
    if idx is Ellipsis:
        return fnp.broadcast_to(value, held.shape)
    return held.at[idx].set(value)


def _check_no_leak(ref: Ref, value: Any) -> None:
    if isinstance(value, Tracer) and value._trace.level >= ref._depth:
        text = _LEAK_ERRORS.get(value._trace.mode)
        if text is not None:
            raise Exception(text.format(ty=ref.type_text()))


def check_jit_args(fun: Any, args: tuple, kwargs: dict) -> dict:
    """JAX's refusals of a jitted function's arguments (checked while tracing only, before
    the function runs): one ref passed as two arguments, or passed and also closed over
    (JAX's aliasing errors: two names for one mutable array). Returns id(ref) -> the
    argument's name, for `check_jit_result`."""
    closed = _closed_over_refs(fun)
    seen: dict = {}
    for name, value in _argument_names(fun, args, kwargs):
        for r in tree_util.tree_leaves(value):
            if type(r) is not Ref:
                continue
            if id(r) in seen:
                raise ValueError(
                    "only one reference to a mutable array may be passed as an argument to a "
                    f"function, but when tracing {_where(fun)} for jit the mutable array "
                    f"reference of type {r.type_text()} appeared at both {seen[id(r)]} and "
                    f"{name}.")
            if id(r) in closed:
                raise ValueError(f"when tracing {_where(fun)} for jit, a mutable array "
                                 f"reference of type {r.type_text()} was both closed over "
                                 f"and passed as the argument {name}")
            seen[id(r)] = name
    return seen


def check_jit_result(fun: Any, out: Any, passed: dict) -> None:
    """JAX's refusal of a ref among a jitted function's results (``passed``: what
    `check_jit_args` returned, naming the argument it came in as)."""
    for r in tree_util.tree_leaves(out):
        if type(r) is Ref:
            origin = (f"\n\nThe returned mutable array was passed in as the argument "
                      f"{passed[id(r)]}." if id(r) in passed else "")
            raise ValueError(f"function {_where(fun)} traced for jit returned a mutable array "
                             f"reference of type {r.type_text()}, but mutable array "
                             f"references cannot be returned.{origin}")


def _closed_over_refs(fun: Any) -> frozenset:
    """The ids of the refs ``fun`` closes over: in its closure cells, or globals its code
    (nested functions' code included) names. JAX sees the refs a trace uses; a Python
    function's free variables are the nearest view of them before it runs."""
    fun = getattr(fun, "__wrapped__", fun)
    code, found = getattr(fun, "__code__", None), []
    for cell in getattr(fun, "__closure__", None) or ():
        try:
            found.append(cell.cell_contents)
        except ValueError:  # a cell not yet filled
            continue
    names, codes = [], [code] if code is not None else []  # (`set` is this module's)
    while codes:
        c = codes.pop()
        names += c.co_names
        codes.extend(k for k in c.co_consts if inspect.iscode(k))
    glob = getattr(fun, "__globals__", {})
    found += [glob[n] for n in dict.fromkeys(names) if n in glob]
    refs: list = []
    for value in found:  # a ref, or refs in a container (not every global's leaves)
        try:
            leaves = tree_util.tree_leaves(value) if type(value) in (list, tuple, dict) \
                else [value]
        except RecursionError:  # a container holding itself
            continue
        refs += [id(r) for r in leaves if type(r) is Ref]
    return frozenset(refs)


def _where(fun: Any) -> str:
    code = getattr(fun, "__code__", None)
    name = getattr(fun, "__name__", "fun")
    return name if code is None else f"{name} at {code.co_filename}:{code.co_firstlineno}"


def _argument_names(fun: Any, args: tuple, kwargs: dict) -> list:
    """(JAX's name for each argument, the argument): parameter names where the signature
    gives them, else ``args[i]``."""
    try:
        params = list(inspect.signature(fun).parameters)
    except (TypeError, ValueError):
        params = []
    named = [(params[i] if i < len(params) else f"args[{i}]", a) for i, a in enumerate(args)]
    return named + list(kwargs.items())
