"""Shape primitives: the few operations every other shape function is composed from.

| primitive    | VJP                                         | JVP                       |
|--------------|---------------------------------------------|---------------------------|
| reshape      | reshape(g, x_shape)                         | reshape(t, shape)         |
| broadcast_to | g (the tape sums it back over broadcast axes)| broadcast_to(t, shape)   |
| transpose    | transpose(g, inverse permutation)           | transpose(t, axes)        |
| concatenate  | the slice of g that came from input argnum  | t padded with zeros       |
| pad          | the slice of g that holds x                 | pad(t) with zeros         |

Slicing and padding with zeros are each other's transposes. flip, roll, tile, repeat,
split, stack, squeeze, the non-constant pad modes... are compositions of these and of
`getitem` (funcgrad.numpy._shape), so they are differentiable to any order for free.
"""
from __future__ import annotations

from typing import Any

import numpy as np

from funcgrad.core import Primitive
from .indexing import NO_INDEX, Index, Slice, getitem
from .samplers import shape as samplers


def _slice(x: Any, starts: tuple, stops: tuple) -> Any:
    """x[starts[0]:stops[0], starts[1]:stops[1], ...] (basic slicing, via getitem)."""
    return getitem(x, NO_INDEX, index=Index(Slice(a, b, None) for a, b in zip(starts, stops)))


# -- primitives ----------------------------------------------------------------------------

def _reshape(x: Any, shape: tuple) -> Any:
    # the method on numpy arrays: np.reshape is a Python wrapper around it
    return x.reshape(shape) if type(x) is np.ndarray else np.reshape(x, shape)


def _transpose(x: Any, axes: tuple) -> Any:
    return x.transpose(axes) if type(x) is np.ndarray else np.transpose(x, axes)


reshape = Primitive("reshape", _reshape, params=("shape",),
                    view=True, keeps_weak=True, sample=samplers.reshape_flat)
reshape.defvjp(lambda g, x_shape: reshape(g, shape=x_shape))
reshape.defjvp(lambda t, shape: reshape(t, shape=shape))

broadcast_to = Primitive("broadcast_to", lambda x, shape: np.broadcast_to(x, shape),
                         params=("shape",), view=True, keeps_weak=True,
                         sample=samplers.broadcast_lead)
broadcast_to.defvjp(lambda g: g)
broadcast_to.defjvp(lambda t, shape: broadcast_to(t, shape=shape))


def _inverse_permutation(axes: tuple) -> tuple:
    inverse = [0] * len(axes)
    for i, a in enumerate(axes):
        inverse[a] = i
    return tuple(inverse)


transpose = Primitive("transpose", _transpose, params=("axes",),
                      view=True, keeps_weak=True, sample=samplers.permutation)
transpose.defvjp(lambda g, axes: transpose(g, axes=_inverse_permutation(axes)))
transpose.defjvp(lambda t, axes: transpose(t, axes=axes))


def _offsets(shapes: tuple, argnum: int, axis: int) -> tuple[int, int, int]:
    """(start, stop, total) of input ``argnum`` along the concatenation axis."""
    start = sum(s[axis] for s in shapes[:argnum])
    return start, start + shapes[argnum][axis], sum(s[axis] for s in shapes)


def _concat_vjp(g: Any, argnum: int, shapes: tuple, axis: int) -> Any:
    start, stop, _ = _offsets(shapes, argnum, axis)
    return _slice(g, (None,) * axis + (start,), (None,) * axis + (stop,))


def _concat_jvp(t: Any, argnum: int, shapes: tuple, axis: int) -> Any:
    start, stop, total = _offsets(shapes, argnum, axis)
    widths = ((0, 0),) * axis + ((start, total - stop),) + ((0, 0),) * (t.ndim - axis - 1)
    return pad(t, pad_width=widths, constant_values=0)


concatenate = Primitive("concatenate", lambda *xs, axis: np.concatenate(xs, axis=axis),
                        inputs=None, params=("axis",), sample=samplers.concatenate,
                        keeps_weak=True)
concatenate.defvjp(_concat_vjp)
concatenate.defjvp(_concat_jvp)

def _pad(x: Any, pad_width: tuple, constant_values: Any) -> Any:
    return np.pad(x, pad_width or 0, mode="constant", constant_values=constant_values)


pad = Primitive(
    "pad", _pad, params=("pad_width", "constant_values"), sample=samplers.pad, keeps_weak=True,
    doc="x with pad_width=((before, after), ...) entries of constant_values added per axis.")
pad.defvjp(lambda g, x_shape, pad_width: _slice(
    g, tuple(b for b, _ in pad_width), tuple(b + n for (b, _), n in zip(pad_width, x_shape))))
pad.defjvp(lambda t, pad_width: pad(t, pad_width=pad_width, constant_values=0))


# -- batching rules (vmap): the batch axis in front, the shape params one axis longer ----------
# (the module, imported here and read at call time: funcgrad.primitives.batching builds on
# the primitives above, and may be the module importing this one)
from . import batching as B  # noqa: E402


def _batch_broadcast_to(args: tuple, dims: tuple, shape: tuple) -> tuple:
    x = B.lift(B.to_front(args[0], dims[0]), len(shape))
    return broadcast_to(x, shape=(x.shape[0],) + tuple(shape)), 0


def _batch_concatenate(args: tuple, dims: tuple, axis: int) -> tuple:
    size = next(a.shape[d] for a, d in zip(args, dims) if d is not None)
    return concatenate(*(B.materialize(a, d, size) for a, d in zip(args, dims)),
                       axis=B.shift_axes(axis)), 0


reshape.defbatch(lambda args, dims, shape: (reshape(
    B.to_front(args[0], dims[0]), shape=(args[0].shape[dims[0]],) + tuple(shape)), 0))
broadcast_to.defbatch(_batch_broadcast_to)
transpose.defbatch(lambda args, dims, axes: (transpose(
    B.to_front(args[0], dims[0]), axes=(0,) + tuple(a + 1 for a in axes)), 0))
concatenate.defbatch(_batch_concatenate)
pad.defbatch(lambda args, dims, pad_width, constant_values: (pad(
    B.to_front(args[0], dims[0]), pad_width=((0, 0),) + tuple(pad_width) if pad_width else (),
    constant_values=constant_values), 0))
