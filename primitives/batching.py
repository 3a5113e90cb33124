"""Batching rules shared by the primitive families (`vmap`'s half of each rule table).

A batching rule ``rule(args, dims, **params) -> (out, out_dim)`` receives the arguments of
one primitive call, each holding its batch axis at ``dims[i]`` (``None``: the argument is
the same for every example), and computes the whole batch with funcgrad ops, by moving the
batch axis where the primitive treats axes independently: in front, where elementwise
functions broadcast it and matrix functions see it as one more leading dimension; inside
the static axis params of reductions and shape functions (shifted by one); folded into an
axis the primitive already maps over (matmul's batch, a convolution's batch or feature
groups, einsum's letters). Nothing loops over the examples in Python.

The families declare their rules with the factories below, beside their other rules:

- `broadcasting(prim, axes=..., same_shape=...)`: elementwise n-ary functions, reductions,
  scans and every primitive whose static axis params name axes of its (broadcast) inputs;
- `leading(prim, cores)`: matrix functions that broadcast leading dimensions;
- `passthrough(prim)`: unary functions that keep every axis where it is.

Collectives name an axis (``axis_name``); `NamedAxisPrimitive` sends a call to the `vmap`
that binds that name even when none of the call's arguments is batched by it (an
``axis_index``, a ``psum`` of a value shared by every example), see `bind_axis_name`. A
rule that needs to know which vmap runs it (its axis name and size) sets the attribute
``wants_frame = True`` and receives that vmap's trace as the keyword ``frame``.
"""
from __future__ import annotations

import contextlib
import threading
from typing import Any, Hashable, Iterator, Sequence

import numpy as np

from funcgrad.core import Primitive, bind, find_top_trace
from funcgrad.meta import def_elementwise

__all__ = ["moveaxis", "to_front", "materialize", "lift", "align", "shift_axes",
           "broadcasting", "leading", "leading_args", "passthrough", "not_batchable", "NamedAxisPrimitive",
           "bind_axis_name", "axis_frame", "axis_size_of", "ndim_of", "shape_of"]


def ndim_of(x: Any) -> int:
    """The rank of an Array, tracer, backend array or Python number (0)."""
    return x.ndim if hasattr(x, "ndim") else np.ndim(x)


def shape_of(x: Any) -> tuple:
    return tuple(x.shape) if hasattr(x, "shape") else np.shape(x)


def moveaxis(x: Any, src: int, dst: int) -> Any:
    """x with axis ``src`` moved to position ``dst`` (both non-negative), as a transpose."""
    if src == dst:
        return x
    order = [i for i in range(x.ndim) if i != src]
    order.insert(dst, src)
    return transpose(x, axes=tuple(order))


def to_front(x: Any, d: int) -> Any:
    return moveaxis(x, d, 0)


def materialize(x: Any, d: int | None, size: int) -> Any:
    """x with its batch axis in front; an unbatched x broadcast to ``size`` examples."""
    if d is not None:
        return to_front(x, d)
    shape = tuple(getattr(x, "shape", np.shape(x)))
    return broadcast_to(x, shape=(size,) + shape)


def lift(x: Any, rank: int) -> Any:
    """x (batch axis in front) with size-1 axes inserted after the batch axis until each
    example has ``rank`` dimensions, so that examples broadcast as numpy aligns them."""
    missing = rank - (x.ndim - 1)
    if missing <= 0:
        return x
    return reshape(x, shape=(x.shape[0],) + (1,) * missing + tuple(x.shape[1:]))


def _batch_size(args: Sequence, dims: Sequence) -> int:
    for a, d in zip(args, dims):
        if d is not None:
            return a.shape[d]
    raise ValueError("a batching rule was called without a batched argument")


def align(args: Sequence, dims: Sequence, same_shape: bool = False) -> list:
    """The arguments with their batch axes in front, each example lifted to the largest
    example rank (unbatched arguments broadcast by numpy as they are); ``same_shape``
    broadcasts every argument to one full shape (for kernels that do not broadcast)."""
    rank = max(ndim_of(a) - (d is not None) for a, d in zip(args, dims))
    out = [a if d is None else lift(to_front(a, d), rank) for a, d in zip(args, dims)]
    if not same_shape:
        return out
    example = np.broadcast_shapes(*(shape_of(a)[d is not None:] for a, d in zip(out, dims)))
    full = (_batch_size(args, dims),) + tuple(example)
    return [a if shape_of(a) == full else broadcast_to(a, shape=full) for a in out]


def shift_axes(value: Any) -> Any:
    """An axis param (an int, a tuple of ints, None) for arrays with one more leading
    axis: non-negative axes move up by one, negative ones count from the end as before."""
    if value is None:
        return None
    if isinstance(value, (tuple, list)):
        return type(value)(shift_axes(v) for v in value)
    return value + 1 if value >= 0 else value


def _results(prim: Primitive, out: Any, dim: int = 0) -> tuple:
    return out, ((dim,) * len(out) if prim.multiple_results else dim)


def broadcasting(prim: Primitive, axes: Sequence[str] = (), same_shape: bool = False
                 ) -> Primitive:
    """Declare the rule of a primitive that broadcasts its inputs (an elementwise
    function) and whose params ``axes`` name axes of them (a reduction, a scan, a
    diagonal): the batch axes go in front, the named axes move up by one."""
    axes = tuple(axes)

    def rule(args: Sequence, dims: Sequence, **params: Any) -> tuple:
        batched = [d for d in dims if d is not None]
        if (not axes and not same_shape and len(batched) == len(args)
                and len(set(batched)) == 1 and len({a.ndim for a in args}) == 1):
            return _results(prim, prim(*args, **params), batched[0])  # already aligned
        new = align(args, dims, same_shape)
        for k in axes:
            params[k] = shift_axes(params[k])
        return _results(prim, prim(*new, **params))

    rule.__name__ = f"batch_{prim.name}"
    if not axes and not same_shape:  # elementwise: on meta arrays, the broadcast shape
        def_elementwise(prim)
    return prim.defbatch(rule)


def passthrough(prim: Primitive) -> Primitive:
    """Declare the rule of a unary function that keeps every axis (x's batch axis is the
    output's)."""
    def rule(args: Sequence, dims: Sequence, **params: Any) -> tuple:
        return _results(prim, prim(*args, **params), dims[0])
    rule.__name__ = f"batch_{prim.name}"
    return prim.defbatch(rule)


def leading_args(args: Sequence, dims: Sequence, cores: Sequence[int]) -> list:
    """The arguments of a matrix function with ``cores[i]`` core (trailing) dimensions
    each, batch axis in front and broadcast to one common leading shape (custom kernels
    need not broadcast)."""
    size = _batch_size(args, dims)
    args = [a if d is None else to_front(a, d) for a, d in zip(args, dims)]
    leads = [shape_of(a)[(d is not None):ndim_of(a) - c] for a, d, c in zip(args, dims, cores)]
    lead = (size,) + tuple(np.broadcast_shapes(*leads))
    out = []
    for a, d, c in zip(args, dims, cores):
        target = lead + shape_of(a)[ndim_of(a) - c:]
        if shape_of(a) != target:
            if d is not None:
                a = lift(a, len(target) - 1)
            a = broadcast_to(a, shape=target)
        out.append(a)
    return out


def leading(prim: Primitive, cores: Sequence[int] | None = None) -> Primitive:
    """Declare the rule of a matrix function that maps over leading dimensions: input
    ``i`` has ``cores[i]`` core (trailing) dimensions (2 for each input by default). The
    batch axis goes in front (`leading_args`)."""
    def rule(args: Sequence, dims: Sequence, **params: Any) -> tuple:
        if len(args) == 1:
            return _results(prim, prim(to_front(args[0], dims[0]), **params))
        core = list(cores) if cores is not None else [2] * len(args)
        return _results(prim, prim(*leading_args(args, dims, core), **params))
    rule.__name__ = f"batch_{prim.name}"
    return prim.defbatch(rule)


def not_batchable(prim: Primitive, why: str) -> Primitive:
    """Declare that ``prim`` cannot be batched, and why: vmap raises this explanation
    (rather than a generic "no rule") when it meets the primitive."""
    def rule(args: Sequence, dims: Sequence, **params: Any) -> tuple:
        raise NotImplementedError(f"vmap cannot batch primitive {prim.name!r}: {why}")
    rule.__name__ = f"batch_{prim.name}"
    rule.unbatchable = why  # type: ignore[attr-defined]
    return prim.defbatch(rule)


# ---------------------------------------------------------------------------------------
# Named axes: which vmap binds an axis name
# ---------------------------------------------------------------------------------------

class _Frames(threading.local):
    def __init__(self) -> None:
        self.stack: list = []  # (axis name, trace), innermost last


# the vmaps binding axis names on this thread: ``frames.stack``, (name, trace) pairs,
# innermost last; empty outside every vmap (an eager collective's first question)
frames = _Frames()


@contextlib.contextmanager
def bind_axis_name(name: Hashable, trace: Any) -> Iterator[None]:
    """While active, collectives naming ``name`` are handled by ``trace`` (a vmap's
    batch trace, whose ``size`` is the axis size)."""
    frames.stack.append((name, trace))
    try:
        yield
    finally:
        frames.stack.remove((name, trace))


def axis_size_of(name: Hashable) -> int:
    """The size of a named axis: a vmap's, else the process group's bound to it."""
    trace = axis_frame(name)
    if trace is not None:
        return trace.size
    from .kernels.collectives import axis_size  # the transports, looked up only here
    return axis_size(name)


def axis_frame(name: Hashable) -> Any:
    """The innermost live batch trace that binds ``name`` (None: no vmap does)."""
    for n, trace in reversed(frames.stack):
        if n == name and trace.alive:
            return trace
    return None


class NamedAxisPrimitive(Primitive):
    """A primitive with an ``axis_name`` param (a collective). A call goes to the `vmap`
    binding that name when that vmap is inside every transform whose tracers the call
    holds, even if no argument is batched by it: the collective then acts on values the
    examples share (``psum`` of a shared x is size * x, ``axis_index`` is each example's
    index). Otherwise it binds as any primitive (a process group's transport)."""

    def bind(self, *args: Any, **params: Any) -> Any:
        if frames.stack:
            trace = axis_frame(params.get("axis_name"))
            if trace is not None:
                top = find_top_trace(args)
                if top is None or top.level < trace.level:
                    return trace.process(self, args, params)
        return bind(self, args, params)

    __call__ = bind  # one call less: a collective's per-call cost is its latency's rival


# the shape primitives the helpers above call, imported last: the rule tables of shape and
# indexing (which this import runs) declare their rules with the factories above
from .shape import broadcast_to, reshape, transpose  # noqa: E402
