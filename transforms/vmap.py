"""`vmap`: vectorise a function over an axis of its inputs (JAX's ``jax.vmap``).

A `BatchTrace` carries, for every value, the batched array and the axis of it that runs
over the examples. At each primitive it calls the primitive's batching rule (declared
beside its other rules, see `funcgrad.primitives.batching`), which computes the whole
batch with funcgrad ops and says where the result's batch axis is. Values the examples
share are not wrapped at all: a rule sees ``None`` as their batch axis. Because rules are
funcgrad ops on the values below, vmap composes with every transform in both orders
(``vmap(grad(f))`` is per-example gradients, ``grad(vmap(f))`` differentiates the batched
computation) and nests (a vmap inside a vmap maps over a second axis).

Python cannot branch on a batched value (it holds one value per example): ``bool`` of one
raises, and `funcgrad.lax` control flow batches instead (`cond` with a batched predicate
computes both branches and selects, `while_loop` runs until every example is done).
"""
from __future__ import annotations

import collections
import functools
import inspect
from typing import Any, Callable, Hashable, Sequence

import numpy as np

import funcgrad.numpy as fnp
from funcgrad import tree_util
from funcgrad.array import Array
from funcgrad.core import (ConcretizationTypeError, Primitive, Trace, Tracer, new_trace)
from funcgrad.primitives.batching import bind_axis_name, moveaxis
from funcgrad.primitives.reductions import reduce_any
from funcgrad.primitives.shape import broadcast_to, reshape
from .tape_text import aval_text

__all__ = ["vmap", "BatchTrace", "BatchTracer", "is_batched", "lanes_any", "flatten_axes"]


class BatchTracer(Tracer):
    """A value inside `vmap`: ``_primal`` is the batched array (one more axis than the
    tracer's ``shape``, at ``_bdim``)."""

    __slots__ = ("_bdim",)

    @property
    def size(self) -> int:
        return int(np.prod(self.shape, dtype=np.int64))

    @property
    def device(self) -> str:
        return self._primal.device

    def _value_error(self, what: str) -> ConcretizationTypeError:
        return ConcretizationTypeError(
            f"Attempted {what} of a traced array with shape "
            f"{aval_text(self.shape, self.dtype)} batched by `vmap` (it holds one value "
            f"per example, {self._trace.size} of them), so Python cannot use it as one "
            "value. Use funcgrad.numpy.where to select elementwise, or funcgrad.lax.cond / "
            "while_loop / fori_loop, which batch; read shapes rather than values.")

    def concrete(self) -> Array:
        raise self._value_error("a concrete-value read")

    def __bool__(self) -> bool:
        raise self._value_error("boolean conversion")

    def __int__(self) -> int:
        raise self._value_error("integer conversion")

    def __float__(self) -> float:
        raise self._value_error("float conversion")

    def __complex__(self) -> complex:
        raise self._value_error("complex conversion")

    def __index__(self) -> int:
        raise self._value_error("integer conversion (__index__)")

    def item(self, *args: Any) -> Any:
        raise self._value_error("item()")

    def tolist(self) -> Any:
        raise self._value_error("tolist()")

    def __array__(self, dtype: Any = None, copy: Any = None) -> np.ndarray:
        raise self._value_error("numpy conversion")

    def __repr__(self) -> str:
        return (f"BatchTracer<{aval_text(self.shape, self.dtype)}>with<vmap, "
                f"size={self._trace.size}, level={self._trace.level}>")

    __str__ = __repr__


class BatchTrace(Trace):
    """One `vmap` activation: its axis ``size`` and (optional) ``axis_name``."""

    mode = "batch"
    name = "vmap"

    def __init__(self, size: int, axis_name: Hashable = None):
        super().__init__()
        self.size = size
        self.axis_name = axis_name

    def new(self, value: Any, bdim: int) -> BatchTracer:
        t = object.__new__(BatchTracer)
        t._trace = self
        t._primal = value
        t._bdim = bdim
        shape = tuple(value.shape)
        t.shape = shape[:bdim] + shape[bdim + 1:]
        t.dtype = value.dtype
        t.ndim = len(shape) - 1
        return t

    def lower(self, args: Sequence) -> tuple[list, list]:
        """(values, batch axes) of a call's arguments (None: not batched here)."""
        values, dims = [], []
        for a in args:
            if type(a) is BatchTracer and a._trace is self:
                values.append(a._primal)
                dims.append(a._bdim)
            else:
                values.append(a)
                dims.append(None)
        return values, dims

    def wrap(self, value: Any, dim: int | None) -> Any:
        return value if dim is None else self.new(value, dim)

    def process(self, prim: Primitive, args: Sequence, params: dict) -> Any:
        values, dims = self.lower(args)
        rule = prim.batch_rule
        if rule is None:
            raise NotImplementedError(
                f"Batching rule for '{prim.name}' not implemented: vmap cannot batch this "
                f"primitive. Declare one with {prim.name}.defbatch(rule), where "
                "rule(args, dims, **params) returns (batched output, its batch axis).")
        if getattr(rule, "wants_frame", False):
            out, out_dim = rule(values, dims, frame=self, **params)
        else:
            out, out_dim = rule(values, dims, **params)
        if prim.multiple_results:
            return tuple(self.wrap(o, d) for o, d in zip(out, out_dim))
        return self.wrap(out, out_dim)

    def to_axis(self, x: Any, dst: int | None, where: str) -> Any:
        """An output leaf with its batch axis at ``dst`` (a shared value broadcast)."""
        if type(x) is BatchTracer and x._trace is self:
            if dst is None:
                if self.axis_name is not None:
                    raise ValueError(f"vmap has mapped output (axis_name={self.axis_name}) "
                                     "but out_axes is None")
                raise ValueError(f"at vmap out_axes{where}, got axis spec None but output "
                                 f"was batched on axis {x._bdim}")
            value = x._primal
            return moveaxis(value, x._bdim, _canonical(dst, value.ndim, "out_axes"))
        if dst is None:
            return x
        x = x if isinstance(x, Array) else fnp.asarray(x)
        axis = _canonical(dst, x.ndim + 1, "out_axes")
        shape = tuple(x.shape)
        lifted = reshape(x, shape=shape[:axis] + (1,) + shape[axis:])
        return broadcast_to(lifted, shape=shape[:axis] + (self.size,) + shape[axis:])


class _LiftingBatchTrace(BatchTrace):
    """The trace of a construct's functions vectorised over the examples of ``outer``
    (`vmap_within`): a value of ``outer`` they read from their closure holds the same
    examples, so it is taken as this trace's own, batch axis kept, not as a value shared
    by every example. (A staged loop's body under jit(vmap(f)) reads the batched value as
    the jitted program's, which its sub-program may.)"""

    def __init__(self, outer: BatchTrace):
        super().__init__(outer.size, outer.axis_name)
        self.outer = outer

    def _own(self, args: Sequence) -> list:
        outer = self.outer
        return [self.new(a._primal, a._bdim) if type(a) is BatchTracer and a._trace is outer
                else a for a in args]

    def lower(self, args: Sequence) -> tuple[list, list]:
        return super().lower(self._own(args))

    def to_axis(self, x: Any, dst: int | None, where: str) -> Any:
        return super().to_axis(self._own([x])[0], dst, where)


def _canonical(axis: int, ndim: int, what: str) -> int:
    if not -ndim <= axis < ndim:
        raise ValueError(f"vmap {what}: axis {axis} is out of bounds for an array of rank "
                         f"{ndim}")
    return axis % ndim


# ---------------------------------------------------------------------------------------
# Axis specifications (pytree prefixes of the arguments)
# ---------------------------------------------------------------------------------------

def _is_none(x: Any) -> bool:
    return x is None


def _check_spec(spec: Any, what: str) -> None:
    leaves = tree_util.tree_leaves(spec, is_leaf=_is_none)
    if not all(type(a) is int or a is None for a in leaves):
        raise TypeError(f"vmap {what} must be an int, None, or (nested) container with those "
                        f"types as leaves, but got {spec}.")


def _prefix_errors(name: str, spec: Any, tree: Any, path: str) -> list:
    """Where ``spec`` fails to be a tree prefix of ``tree`` (JAX's mismatch details)."""
    if spec is None or type(spec) is int:
        return []
    t_kids = _children(tree)
    if t_kids is None or type(spec) is not type(tree):
        return [f"pytree structure error: different types at key path\n    {name}{path}\n"
                f"At that key path, the prefix pytree {name} has a subtree of type\n"
                f"    {type(spec)}\nbut at the same key path the full pytree has a subtree "
                f"of different type\n    {type(tree)}."]
    s_kids = _children(spec)
    if len(s_kids) != len(t_kids) or (isinstance(spec, dict) and
                                      sorted(spec) != sorted(tree)):
        return [f"pytree structure error: different numbers of pytree children at key path\n"
                f"    {name}{path}\nAt that key path, the prefix pytree {name} has "
                f"a subtree of type\n    {type(spec)}\nwith {len(s_kids)} children, but at "
                f"the same key path the full pytree has a subtree of the same type but with "
                f"{len(t_kids)} children."]
    errors = []
    for (k, s), (_, t) in zip(s_kids, t_kids):
        errors += _prefix_errors(name, s, t, f"{path}[{k!r}]")
    return errors


def _children(x: Any) -> list | None:
    if isinstance(x, dict):
        return sorted(x.items())
    if isinstance(x, (tuple, list)):
        return list(enumerate(x))
    return None


def _broadcast_prefix(spec: Any, tree: Any) -> list:
    """One axis per leaf of ``tree``: ``spec`` is a tree prefix whose leaves (ints or
    None) apply to whole subtrees."""
    if spec is None or type(spec) is int:
        return [spec] * len(tree_util.tree_leaves(tree))
    out = []
    if isinstance(spec, dict):
        for k in sorted(tree):
            out += _broadcast_prefix(spec[k], tree[k])
        return out
    for s, t in zip(spec, tree):
        out += _broadcast_prefix(s, t)
    return out


def flatten_axes(name: str, spec: Any, tree: Any) -> list:
    """The per-leaf axes of ``tree`` from the prefix ``spec``, or JAX's error."""
    errors = _prefix_errors(name, spec, tree, "")
    if errors:
        details = "\n  ".join(errors)
        raise ValueError(f"{name} specification must be a tree prefix of the corresponding "
                         f"value; \n  Mismatch details ({len(errors)} found):\n  {details}")
    leaves, _ = tree_util.tree_flatten(tree)
    axes = _broadcast_prefix(spec, tree)
    if len(axes) != len(leaves):  # a container type the prefix walk does not know
        raise ValueError(f"{name} specification must be a tree prefix of the corresponding "
                         f"value; got {spec} for a value with {len(leaves)} leaves")
    return axes


# ---------------------------------------------------------------------------------------
# The transform
# ---------------------------------------------------------------------------------------

def _short(x: Any) -> str:
    if isinstance(x, (Array, np.ndarray)):
        return f"{np.dtype(x.dtype).name}[{','.join(str(n) for n in x.shape)}]"
    return type(x).__name__


def _leaf_names(fun: Callable, args: tuple, kwargs: dict) -> list:
    """How JAX's size error names each leaf: argument name and key path, with its type."""
    try:
        names = list(inspect.signature(fun).parameters)
    except (TypeError, ValueError):
        names = []
    out = []
    for i, a in enumerate(args):
        base = f"argument {names[i]}" if i < len(names) else f"args[{i}]"
        for path, leaf in _paths(a, ""):
            out.append(f"{base}{path} of type {_short(leaf)}")
    for k in sorted(kwargs):
        for path, leaf in _paths(kwargs[k], ""):
            out.append(f"kwargs[{k!r}]{path} of type {_short(leaf)}")
    return out


def _paths(x: Any, path: str) -> list:
    kids = _children(x)
    if kids is None:
        return [] if x is None else [(path, x)]
    out = []
    for k, v in kids:
        out += _paths(v, f"{path}[{k!r}]")
    return out


def _mapped_size(fun: Callable, args: tuple, kwargs: dict, leaves: list, dims: list,
                 axis_size: int | None) -> int:
    sizes = [None if d is None else leaves[i].shape[d] for i, d in enumerate(dims)]
    found = {s for s in sizes if s is not None}
    if axis_size is not None:
        found.add(axis_size)
    if len(found) == 1:
        return found.pop()
    if not found:
        raise ValueError("vmap must have at least one non-None value in in_axes or "
                         "axis_size must be specified")
    names = _leaf_names(fun, args, kwargs)
    if len(names) != len(leaves):  # a registered pytree node type
        names = [f"leaf {i}" for i in range(len(leaves))]
    counts = collections.Counter(s for s in sizes if s is not None).most_common()
    msg = ["vmap got inconsistent sizes for array axes to be mapped:\n"]
    if axis_size is not None:
        msg.append(f"  * the `axis_size` argument was {axis_size};\n")
    for k, (sz, ct) in enumerate(counts):
        i = sizes.index(sz)
        if ct == 1:
            msg.append(f"  * one axis had size {sz}: axis {dims[i]} of {names[i]};\n")
        else:
            msg.append(f"  * {'most' if k == 0 else 'some'} axes ({ct} of them) had size "
                       f"{sz}, e.g. axis {dims[i]} of {names[i]};\n")
    raise ValueError("".join(msg)[:-2])


def _in_leaves(leaves: list, dims: list) -> tuple[list, list]:
    """Mapped leaves as arrays, their axes made non-negative (JAX's rank error)."""
    out, axes = [], []
    for x, d in zip(leaves, dims):
        if d is None:
            out.append(x)
            axes.append(None)
            continue
        x = x if isinstance(x, Array) else fnp.asarray(x)
        if not -x.ndim <= d < x.ndim:
            need = d + 1 if d >= 0 else -d
            raise ValueError(f"vmap was requested to map its argument along axis {d}, which "
                             f"implies that its rank should be at least {need}, but is only "
                             f"{x.ndim} (its shape is {tuple(x.shape)})")
        out.append(x)
        axes.append(d % x.ndim)
    return out, axes


def _check_axes_args(in_axes: Any, out_axes: Any) -> Any:
    if isinstance(in_axes, list):
        in_axes = tuple(in_axes)  # lists and tuples interchangeably, as JAX does
    if not (in_axes is None or type(in_axes) in (int, tuple)):
        raise TypeError("vmap in_axes must be an int, None, or a tuple of entries "
                        "corresponding to the positional arguments passed to the function, "
                        f"but got {in_axes}.")
    _check_spec(in_axes, "in_axes")
    _check_spec(out_axes, "out_axes")
    return in_axes


def vmap(fun: Callable, in_axes: Any = 0, out_axes: Any = 0, axis_name: Hashable = None,
         axis_size: int | None = None) -> Callable:
    """Vectorise ``fun`` over an axis of its arguments (JAX's ``jax.vmap``).

    ``in_axes``: an int, None, or a tuple with one entry per positional argument, each a
    pytree prefix of that argument with ints (the mapped axis, negative from the end) or
    None (not mapped) at its leaves. Keyword arguments are always mapped over axis 0.
    ``out_axes``: where the outputs get the mapped axis (a prefix of the output tree;
    None only for outputs that do not depend on mapped inputs). ``axis_name`` names the
    axis for collectives inside (``psum(x, axis_name)``...); ``axis_size`` gives the size
    when no argument is mapped."""
    return _vmap(fun, in_axes, out_axes, axis_name, axis_size, BatchTrace)


def vmap_within(outer: BatchTrace, fun: Callable, in_axes: Any, out_axes: Any = 0
                ) -> Callable:
    """``vmap(fun)`` over the examples of ``outer``, for a construct that ``outer``
    batches (a staged loop's body, a switch's branches): values of ``outer`` that ``fun``
    reads from its closure hold the same examples (`_LiftingBatchTrace`)."""
    return _vmap(fun, in_axes, out_axes, outer.axis_name, outer.size,
                 lambda size, axis_name: _LiftingBatchTrace(outer))


def _vmap(fun: Callable, in_axes: Any, out_axes: Any, axis_name: Hashable,
          axis_size: int | None, new_batch_trace: Callable) -> Callable:
    if not callable(fun):
        raise TypeError(f"vmap requires a callable as its first argument, got {fun!r}")
    in_axes = _check_axes_args(in_axes, out_axes)

    @functools.wraps(fun)
    def vmap_f(*args: Any, **kwargs: Any) -> Any:
        if isinstance(in_axes, tuple) and len(in_axes) != len(args):
            raise ValueError("vmap in_axes must be an int, None, or a tuple of entries "
                             "corresponding to the positional arguments passed to the "
                             f"function, but got len(in_axes)={len(in_axes)}, "
                             f"len(args)={len(args)}")
        dims = flatten_axes("vmap in_axes", in_axes, args) + [0] * len(
            tree_util.tree_leaves(kwargs))
        leaves, tree = tree_util.tree_flatten((args, kwargs))
        leaves, dims = _in_leaves(leaves, dims)
        size = _mapped_size(fun, args, kwargs, leaves, dims, axis_size)
        trace = new_batch_trace(size, axis_name)
        with new_trace(trace), bind_axis_name(axis_name, trace):
            ins = [x if d is None else trace.new(x, d) for x, d in zip(leaves, dims)]
            a, k = tree.unflatten(ins)
            out = fun(*a, **k)
            out_leaves, out_tree = tree_util.tree_flatten(out)
            spec = out_axes if not isinstance(out_axes, list) else tuple(out_axes)
            o_dims = flatten_axes("vmap out_axes", spec, out)
            paths = [p for p, _ in _paths(out, "")]
            if len(paths) != len(out_leaves):  # a registered pytree node type
                paths = [""] * len(out_leaves)
            results = [trace.to_axis(o, d, p) for o, d, p in zip(out_leaves, o_dims, paths)]
        return out_tree.unflatten(results)

    return vmap_f


# ---------------------------------------------------------------------------------------
# Helpers for the constructs that batch themselves (control flow, custom rules, jit)
# ---------------------------------------------------------------------------------------

def is_batched(x: Any) -> bool:
    """Whether ``x`` is batched by the innermost transform that traces it."""
    return type(x) is BatchTracer


def lanes_any(pred: BatchTracer) -> Any:
    """Whether any example's (scalar) ``pred`` holds: a value shared by the examples."""
    return reduce_any(pred._primal, axis=(pred._bdim,), keepdims=False)
