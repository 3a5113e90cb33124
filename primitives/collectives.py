"""Collectives: primitives that communicate along a named axis of SPMD program instances.

Each instance (a process of an MPI job, later a device) runs the same program on its own
values; ``axis_name`` names the group. The implementations ask the axis environment
(`funcgrad.primitives.kernels.collectives`) for the transport bound to that name, so the
same primitive serves process groups now and ``vmap(..., axis_name=)`` later, and an axis
nobody bound raises JAX's "unbound axis name" error. Validation (shapes, ranks, axes) is
done by the wrappers in `funcgrad.distributed`, which are what users call.

What a derivative means here (JAX's pmap convention)
----------------------------------------------------
Every rank differentiates its own program, seeding its own cotangent, so the function being
differentiated is the *sum over ranks* of each rank's output paired with its cotangent, and
every value is treated as per-rank ("device-varying"), also when it happens to be equal on
all ranks. Under that pairing each collective below is linear and its VJP is its transpose:
psum's is psum (JAX: "we treat psum as psum + pbroadcast, which is why the transpose
reduces over the named axes again"), pmean's is pmean, all_gather's is psum_scatter and
back, ppermute's is the inverse permutation. So ``grad(lambda x: psum(x, 'i'))`` is the
axis size on every rank, exactly as ``jax.pmap(grad(...))`` gives, and the per-rank tests
compare against jax.pmap over simulated devices. For data-parallel training this means
what it means in JAX's pmap: ``grad`` of ``pmean(local_loss)`` on a rank is that rank's
share of the gradient with respect to its own copy of the parameters; average the
gradients over the ranks (`funcgrad.distributed.allreduce_gradients`), or differentiate
a `shard_map`, whose boundary counts replicated values once (below).

The other convention, where a replicated ("device-invariant") value counts once, needs to
know which values are replicated. JAX's shard_map tracks that in types (JEP 17111:
psum is varying -> invariant and transposes to the no-op pbroadcast). We track it only at
the boundary of `funcgrad.distributed.shard_map`, with JAX's earlier recipe: its inputs and
outputs are whole (invariant) arrays; a mapped input enters through `pscatter` (this rank's
block; transpose: `all_gather_invariant`), a replicated one through ``pcast(to="varying")``
(identity; transpose: psum, because every rank used it); a mapped output leaves through
`all_gather_invariant` (transpose: this rank's block), a replicated one through
``pcast(to="invariant")`` (identity; transpose: divide by the axis size, since each of the
N equal copies is one N-th of the value counted once). A cotangent crossing the boundary
crosses it the other way, so the VJPs re-type it with pcast too, and the JVPs apply the
boundary primitive to the tangent: that keeps derivatives of derivatives right. The
numbers come out right (grad of a shard_map equals grad of the same computation on one
process, to any order); the price is a psum of a cotangent that is already replicated,
which JAX's typed version avoids.

| primitive            | output on rank r                      | VJP (transpose)          | JVP       |
|----------------------|---------------------------------------|--------------------------|-----------|
| psum                 | sum over ranks of x                   | psum(g)                  | psum(t)   |
| pmean                | mean over ranks of x                  | pmean(g)                 | pmean(t)  |
| pmax / pmin          | max / min over ranks                  | psum(g) * tie share      | psum(t*share) |
| all_gather           | the ranks' x stacked (tiled: joined)  | psum_scatter(g)          | all_gather(t) |
| psum_scatter         | block r of the sum over ranks         | all_gather(g)            | psum_scatter(t) |
| pbroadcast           | x of rank ``source``                  | psum(g) on source, else 0| pbroadcast(t) |
| ppermute             | x of the rank that sends to r (or 0)  | ppermute(g, inverse)     | ppermute(t) |
| axis_index           | r (int32; not differentiable)         |                          |           |
| pscatter             | block r of an invariant x             | all_gather_invariant(g)  | pscatter(t) |
| all_gather_invariant | the ranks' x joined, as invariant     | block r of g             | itself(t) |
| pcast                | x (to="varying" / "invariant")        | pcast(psum(g)) / pcast(g / size) | pcast(t) |

pmax and pmin are not differentiable in JAX; here, as `reduce_max` does, the cotangent is
shared equally among the ranks (and elements) that attain the extremum.
"""
from __future__ import annotations

from typing import Any, Callable, Hashable

import numpy as np

from funcgrad.array import Array
from funcgrad._results import wrap_raw
from funcgrad.core import Primitive
from .batching import NamedAxisPrimitive, axis_size_of, frames
from .binary import equal, where
from .control import convert_element_type
from .kernels.collectives import axis_transport
from .samplers import collectives as samplers

__all__ = ["AxisReduction", "psum", "pmean", "pmax", "pmin", "all_gather", "psum_scatter", "pbroadcast",
           "ppermute", "axis_index", "pscatter", "all_gather_invariant", "pcast",
           "inverse_permutation"]


# -- implementations (raw backend arrays) --------------------------------------------------

def _as_array(x: Any) -> Any:
    """Python and numpy scalars as 0-d arrays (backend arrays pass through)."""
    if isinstance(x, np.ndarray) or hasattr(x, "__cuda_array_interface__"):
        return x
    return np.asarray(x)


def _reduction(op: str) -> Callable:
    def impl(x: Any, axis_name: Hashable) -> Any:
        return axis_transport(axis_name).allreduce(
            x if type(x) is np.ndarray else _as_array(x), op)
    return impl


class AxisReduction(NamedAxisPrimitive):
    """psum, pmax and pmin: the transport's all-reduce ``op`` over the ranks of an axis,
    with `reduce`, the call the `funcgrad.distributed` wrappers make."""

    def __init__(self, name: str, op: str, doc: str):
        super().__init__(name, _reduction(op), params=("axis_name",), effectful=True,
                         doc=doc)
        self.op = op
        self.kernel = self.impl  # `reduce` goes to the transport only while this is impl

    def reduce(self, x: Any, axis_name: Hashable) -> Any:
        """``bind(x, axis_name=axis_name)``. An Array (no tracer) outside every vmap is
        what `core.bind` hands to the implementation and wraps; here it goes straight to
        what the implementation calls, the transport's all-reducer for its shape and
        dtype (`Transport.allreducer`, remembered: agreement and errors included), and
        is wrapped, without bind's general steps (an eager psum's Python rivals its
        message latency). Anything else binds."""
        if type(x) is Array and not frames.stack and self.impl is self.kernel:
            raw = x._value
            if type(raw) is np.ndarray:
                transport = axis_transport(axis_name)
                run = (transport.allreducers.get((raw.shape, raw.dtype, self.op))
                       or transport.allreducer(raw.shape, raw.dtype, self.op))
                return wrap_raw(run(raw))
        return self.bind(x, axis_name=axis_name)


def _pmean(x: Any, axis_name: Hashable) -> Any:
    transport = axis_transport(axis_name)
    return transport.allreduce(_as_array(x), "sum") / transport.size


def _joined(stacked: Any, axis: int, tiled: bool) -> Any:
    """(size, *s) -> the pieces stacked at ``axis``, or (tiled) joined along it."""
    moved = np.moveaxis(stacked, 0, axis)
    if not tiled:
        return moved
    shape = moved.shape
    return moved.reshape(shape[:axis] + (shape[axis] * shape[axis + 1],) + shape[axis + 2:])


def _all_gather(x: Any, axis_name: Hashable, axis: int, tiled: bool) -> Any:
    return _joined(axis_transport(axis_name).allgather(_as_array(x)), axis, tiled)


def _psum_scatter(x: Any, axis_name: Hashable, scatter_dimension: int, tiled: bool) -> Any:
    transport = axis_transport(axis_name)
    moved = np.moveaxis(x, scatter_dimension, 0)
    if tiled:
        moved = moved.reshape((transport.size, moved.shape[0] // transport.size)
                              + moved.shape[1:])
    out = transport.reduce_scatter(moved, "sum")
    return np.moveaxis(out, 0, scatter_dimension) if tiled else out


def _pbroadcast(x: Any, axis_name: Hashable, source: int) -> Any:
    return axis_transport(axis_name).broadcast(_as_array(x), source)


def _ppermute(x: Any, axis_name: Hashable, perm: tuple) -> Any:
    transport = axis_transport(axis_name)
    x = _as_array(x)
    dest = next((d for s, d in perm if s == transport.rank), None)
    source = next((s for s, d in perm if d == transport.rank), None)
    got = transport.sendrecv(x, dest, source)
    return np.zeros_like(x) if got is None else got


def _axis_index(axis_name: Hashable) -> Any:
    return np.asarray(axis_transport(axis_name).rank, dtype=np.int32)


def _pscatter(x: Any, axis_name: Hashable, axis: int, tiled: bool) -> Any:
    transport = axis_transport(axis_name)
    r = transport.rank
    if tiled:
        k = x.shape[axis] // transport.size
        return x[(slice(None),) * axis + (slice(r * k, (r + 1) * k),)]
    return x[(slice(None),) * axis + (r,)]


def _identity(x: Any, axis_name: Hashable, to: str) -> Any:
    return x


# -- primitives -------------------------------------------------------------------------------

psum = AxisReduction("psum", "sum", doc="The sum of x over the ranks of axis_name.")
pmean = NamedAxisPrimitive("pmean", _pmean, params=("axis_name",),
                  effectful=True, doc="The mean of x over the ranks of axis_name.")
pmax = AxisReduction("pmax", "max",
                     doc="The elementwise maximum of x over the ranks of axis_name.")
pmin = AxisReduction("pmin", "min",
                     doc="The elementwise minimum of x over the ranks of axis_name.")
all_gather = NamedAxisPrimitive(
    "all_gather", _all_gather, params=("axis_name", "axis", "tiled"),
    effectful=True, doc="Every rank's x, stacked along a new axis (tiled: joined along axis).")
all_gather_invariant = NamedAxisPrimitive(
    "all_gather_invariant", _all_gather, params=("axis_name", "axis", "tiled"),
    effectful=True,
    doc="all_gather whose result is one replicated value (shard_map's output boundary).")
psum_scatter = NamedAxisPrimitive(
    "psum_scatter", _psum_scatter, params=("axis_name", "scatter_dimension", "tiled"),
    effectful=True,
    doc="Block r (along scatter_dimension) of the sum over ranks (reduce-scatter).")
pbroadcast = NamedAxisPrimitive("pbroadcast", _pbroadcast, params=("axis_name", "source"),
                       effectful=True, doc="The x of rank source, on every rank.")
ppermute = NamedAxisPrimitive(
    "ppermute", _ppermute, params=("axis_name", "perm"),
    effectful=True,
    doc="x sent along perm ((source, destination) pairs); zeros where nothing arrives.")
axis_index = NamedAxisPrimitive("axis_index", _axis_index, inputs=(), params=("axis_name",),
                       differentiable=False, doc="This rank's index along axis_name.")
pscatter = NamedAxisPrimitive(
    "pscatter", _pscatter, params=("axis_name", "axis", "tiled"), view=True,
    doc="This rank's block of a replicated x (shard_map's input boundary).")
pcast = NamedAxisPrimitive("pcast", _identity, params=("axis_name", "to"), view=True,
                  doc="x, re-typed as per-rank (to='varying') or replicated "
                  "(to='invariant'); only the derivative changes.")


def inverse_permutation(perm: tuple) -> tuple:
    return tuple((d, s) for s, d in perm)


def _tie_share(x: Any, out: Any, axis_name: Hashable) -> Any:
    """Where x attains the extremum ``out``: 1 / (how many ranks attain it), else 0."""
    hit = convert_element_type(equal(x, out), new_dtype=np.dtype(x.dtype))
    return hit / psum(hit, axis_name=axis_name)


def _extremum_rules(p: Primitive) -> None:
    p.defvjp(lambda g, x, out, axis_name: psum(g, axis_name=axis_name) * _tie_share(
        x, out, axis_name))
    p.defjvp(lambda t, x, out, axis_name: psum(t * _tie_share(x, out, axis_name),
                                               axis_name=axis_name))


def _to_source(g: Any, axis_name: Hashable, source: int) -> Any:
    """psum(g) on rank ``source``, zeros elsewhere: the transpose of a broadcast."""
    return where(equal(axis_index(axis_name=axis_name), source),
                 psum(g, axis_name=axis_name), 0)


_PCAST_VJP = {
    "varying": lambda g, axis_name: pcast(psum(g, axis_name=axis_name), axis_name=axis_name,
                                          to="invariant"),
    "invariant": lambda g, axis_name: pcast(g * (1.0 / axis_size_of(axis_name)),
                                            axis_name=axis_name, to="varying")}

psum.defvjp(lambda g, axis_name: psum(g, axis_name=axis_name))
psum.defjvp(lambda t, axis_name: psum(t, axis_name=axis_name))
pmean.defvjp(lambda g, axis_name: pmean(g, axis_name=axis_name))
pmean.defjvp(lambda t, axis_name: pmean(t, axis_name=axis_name))
_extremum_rules(pmax)
_extremum_rules(pmin)
all_gather.defvjp(lambda g, axis_name, axis, tiled: psum_scatter(
    g, axis_name=axis_name, scatter_dimension=axis, tiled=tiled))
all_gather.defjvp(lambda t, axis_name, axis, tiled: all_gather(
    t, axis_name=axis_name, axis=axis, tiled=tiled))
psum_scatter.defvjp(lambda g, axis_name, scatter_dimension, tiled: all_gather(
    g, axis_name=axis_name, axis=scatter_dimension, tiled=tiled))
psum_scatter.defjvp(lambda t, axis_name, scatter_dimension, tiled: psum_scatter(
    t, axis_name=axis_name, scatter_dimension=scatter_dimension, tiled=tiled))
pbroadcast.defvjp(_to_source)
pbroadcast.defjvp(lambda t, axis_name, source: pbroadcast(t, axis_name=axis_name,
                                                          source=source))
ppermute.defvjp(lambda g, axis_name, perm: ppermute(g, axis_name=axis_name,
                                                    perm=inverse_permutation(perm)))
ppermute.defjvp(lambda t, axis_name, perm: ppermute(t, axis_name=axis_name, perm=perm))
pscatter.defvjp(lambda g, axis_name, axis, tiled: all_gather_invariant(
    g, axis_name=axis_name, axis=axis, tiled=tiled))
pscatter.defjvp(lambda t, axis_name, axis, tiled: pscatter(t, axis_name=axis_name, axis=axis,
                                                           tiled=tiled))
all_gather_invariant.defvjp(lambda g, axis_name, axis, tiled: pscatter(
    g, axis_name=axis_name, axis=axis, tiled=tiled))
all_gather_invariant.defjvp(lambda t, axis_name, axis, tiled: all_gather_invariant(
    t, axis_name=axis_name, axis=axis, tiled=tiled))
pcast.defvjp(lambda g, axis_name, to: _PCAST_VJP[to](g, axis_name))
pcast.defjvp(lambda t, axis_name, to: pcast(t, axis_name=axis_name, to=to))

samplers.declare(psum, pmean, pmax, pmin, all_gather, all_gather_invariant, psum_scatter,
                 pbroadcast, ppermute, pscatter, pcast)


# -- batching rules (vmap) ------------------------------------------------------------------
# Over the axis a vmap names, a collective combines the examples: the reductions reduce the
# batch axis (a value the examples share, size * x for a psum of a shared x), all_gather
# moves it into place, psum_scatter leaves each example its block, axis_index is each
# example's number. Over another name the collective is the same on every example (it
# binds again on the batched value, axis params shifted past the batch axis).
from . import batching as B  # noqa: E402
from .indexing import NO_INDEX, Index, Ref, getitem  # noqa: E402
from .reductions import reduce_max, reduce_min, reduce_sum  # noqa: E402
from .shape import broadcast_to, reshape  # noqa: E402
from .constants import constant  # noqa: E402

_AXIS_PARAM = {"all_gather": "axis", "all_gather_invariant": "axis", "pscatter": "axis",
               "psum_scatter": "scatter_dimension"}


def _collective_rule(p: Primitive, over: Callable) -> Callable:
    """The rule of collective ``p``: ``over(x, d, size, **params) -> (out, out_dim)`` on
    its own axis; on another axis the call binds again, per example."""
    def rule(args: tuple, dims: tuple, frame: Any, **params: Any) -> tuple:
        if params["axis_name"] == frame.axis_name:
            return over(*args, *dims, frame.size, **{k: v for k, v in params.items()
                                                       if k != "axis_name"})
        (x,), (d,) = args, dims
        key = _AXIS_PARAM.get(p.name)
        if key is None:
            return p(x, **params), d
        return p(B.to_front(x, d), **dict(params, **{key: params[key] + 1})), 0
    rule.__name__ = f"batch_{p.name}"
    rule.wants_frame = True  # type: ignore[attr-defined]
    return rule


def _reduce(reduce: Callable, shared: Callable) -> Callable:
    def over(x: Any, d: Any, size: int) -> tuple:
        if d is None:
            return shared(x, size), None
        return reduce(x, axis=(d,), keepdims=False), None
    return over


def _stacked(x: Any, d: Any, size: int, axis: int, tiled: bool) -> Any:
    """The examples' x stacked at ``axis`` (joined along it when tiled)."""
    if d is None:
        shape = tuple(x.shape)
        x = broadcast_to(reshape(x, shape=(1,) + shape), shape=(size,) + shape)
        d = 0
    moved = B.moveaxis(x, d, axis)
    if not tiled:
        return moved
    shape = tuple(moved.shape)
    return reshape(moved, shape=shape[:axis] + (shape[axis] * shape[axis + 1],)
                   + shape[axis + 2:])


def _gather_over(x: Any, d: Any, size: int, axis: int, tiled: bool) -> tuple:
    return _stacked(x, d, size, axis, tiled), None


def _blocks(total: Any, size: int, axis: int, tiled: bool) -> tuple:
    """Example r's block r of ``total`` along axis: the batch axis is that axis."""
    if not tiled:
        return total, axis
    shape = tuple(total.shape)
    return reshape(total, shape=shape[:axis] + (size, shape[axis] // size)
                   + shape[axis + 1:]), axis


def _scatter_over(x: Any, d: Any, size: int, scatter_dimension: int, tiled: bool) -> tuple:
    total = x * size if d is None else reduce_sum(x, axis=(d,), keepdims=False)
    return _blocks(total, size, scatter_dimension, tiled)


def _pscatter_over(x: Any, d: Any, size: int, axis: int, tiled: bool) -> tuple:
    if d is not None:
        raise ValueError("pscatter takes a value shared by the examples (a replicated "
                         "input of shard_map); this one differs per example")
    return _blocks(x, size, axis, tiled)


def _broadcast_over(x: Any, d: Any, size: int, source: int) -> tuple:
    if d is None:
        return x, None
    return getitem(B.to_front(x, d), NO_INDEX, index=Index((source,))), None


def _permute_over(x: Any, d: Any, size: int, perm: tuple) -> tuple:
    """Example dst gets the x of the example sending to it, zeros if none does."""
    sources = np.zeros(size, np.intp)
    receives = np.zeros(size, bool)
    for s, t in perm:
        sources[t], receives[t] = s, True
    x = B.materialize(x, d, size)
    moved = getitem(x, constant(x, sources[None]), index=Index((Ref(0),)))
    mask = constant(x, receives.reshape((size,) + (1,) * (x.ndim - 1)))
    return where(mask, moved, 0), 0


def _index_over(size: int) -> tuple:
    return constant(np.zeros(()), np.arange(size, dtype=np.int32)), 0


psum.defbatch(_collective_rule(psum, _reduce(reduce_sum, lambda x, n: x * n)))
pmean.defbatch(_collective_rule(pmean, _reduce(
    lambda x, axis, keepdims: reduce_sum(x, axis=axis, keepdims=keepdims) / x.shape[axis[0]],
    lambda x, n: x)))
pmax.defbatch(_collective_rule(pmax, _reduce(reduce_max, lambda x, n: x)))
pmin.defbatch(_collective_rule(pmin, _reduce(reduce_min, lambda x, n: x)))
all_gather.defbatch(_collective_rule(all_gather, _gather_over))
all_gather_invariant.defbatch(_collective_rule(all_gather_invariant, _gather_over))
psum_scatter.defbatch(_collective_rule(psum_scatter, _scatter_over))
pscatter.defbatch(_collective_rule(pscatter, _pscatter_over))
pbroadcast.defbatch(_collective_rule(pbroadcast, _broadcast_over))
ppermute.defbatch(_collective_rule(ppermute, _permute_over))
pcast.defbatch(_collective_rule(pcast, lambda x, d, size, to: (x, d)))
axis_index.defbatch(_collective_rule(axis_index, _index_over))
