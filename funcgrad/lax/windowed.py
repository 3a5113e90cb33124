"""`jax.lax.reduce_window` and the window reductions behind pooling.

Every window reduction is the `sliding_windows` gather (a strided view, no copy when
nothing is padded) followed by an ordinary reduction over the window axes, so its
derivatives come from the gather's transpose and the reduction's rules:

- ``add`` / ``mul`` with their identity as init: `reduce_sum` / `reduce_prod` of the
  windows;
- ``max`` / ``min`` with ``-inf`` / ``+inf`` (or the dtype's extreme) as init: the first
  extreme of each window in row-major window order, gathered from the operand by index
  (`reduce_window_max_with_indices`), so that the whole derivative goes to that element
  as XLA's select-and-scatter and PyTorch's max pooling give it (not split among ties);
- any other computation (or a tree of operands): a left fold of ``computation`` over the
  window offsets, differentiable through whatever the computation calls.

As in XLA, ``init_value`` pads the operand and is reduced once into every window.
"""
from __future__ import annotations

import math
import operator
from typing import Any, Callable, Sequence

import numpy as np

import funcgrad.numpy as fnp
from funcgrad import tree_util
from funcgrad.array import Array
from funcgrad.backend import device_put
from funcgrad.core import Tracer
from funcgrad.primitives import conv as P
from funcgrad.lax.convolution import padtype_to_pads

__all__ = ["add", "mul", "max", "min", "reduce_window", "reduce_window_max_with_indices"]

add = fnp.add
mul = fnp.multiply
max = fnp.maximum  # noqa: A001 (jax.lax's names)
min = fnp.minimum  # noqa: A001

_MONOIDS = {id(fnp.add): "sum", id(fnp.multiply): "prod", id(fnp.maximum): "max",
            id(fnp.minimum): "min"}


def _identity(kind: str, dtype: np.dtype) -> Any:
    """The init value that leaves a reduction unchanged, for ``dtype``."""
    if kind == "sum":
        return 0
    if kind == "prod":
        return 1
    if dtype.kind == "b":
        return kind == "min"
    if dtype.kind in "iu":
        info = np.iinfo(dtype)
        return info.min if kind == "max" else info.max
    return -np.inf if kind == "max" else np.inf


def _ints(name: str, values: Any, n: int) -> tuple:
    values = (1,) * n if values is None else tuple(values)
    if len(values) != n:
        raise ValueError(f"reduce_window: {name} must have one entry per operand dimension "
                         f"({n}), got {values}")
    out = tuple(operator.index(v) for v in values)
    if any(v < 1 for v in out):
        raise ValueError(f"reduce_window: {name} must be positive, got {out}")
    return out


def _geometry(shape: tuple, window_dimensions: Sequence[int], window_strides: Any,
              padding: Any, base_dilation: Any, window_dilation: Any) -> dict:
    """The sliding_windows params, normalised and checked (string padding resolved on
    the undilated operand shape and the dilated window, as JAX does)."""
    n = len(shape)
    window = tuple(operator.index(w) for w in window_dimensions)
    if len(window) != n:
        raise ValueError(f"reduce_window: window_dimensions {window} must have one entry per "
                         f"operand dimension ({n})")
    if any(w < 0 for w in window):
        raise ValueError(f"reduce_window: window_dimensions must be >= 0, got {window}")
    strides = _ints("window_strides", window_strides, n)
    base = _ints("base_dilation", base_dilation, n)
    rates = _ints("window_dilation", window_dilation, n)
    if isinstance(padding, str):
        spans = [P.dilate_dim(w, r) for w, r in zip(window, rates)]
        pads = tuple(tuple(p) for p in padtype_to_pads(shape, spans, strides, padding))
    else:
        pads = tuple((operator.index(lo), operator.index(hi)) for lo, hi in padding)
        if len(pads) != n:
            raise ValueError(f"reduce_window: padding {pads} must have one (low, high) pair "
                             f"per operand dimension ({n})")
    for d, a, (lo, hi) in zip(shape, base, pads):
        if P.dilate_dim(d, a) + lo + hi < 0:
            raise ValueError(f"reduce_window: negative padding {pads} is larger than the "
                             f"operand shape {shape}")
    return dict(window_dimensions=window, window_strides=strides, padding=pads,
                base_dilation=base, window_dilation=rates)


def _windows(x: Any, geometry: dict, fill: Any) -> Any:
    return P.sliding_windows(x, fill=fill, **geometry)


def _flat_windows(x: Any, geometry: dict, fill: Any) -> Any:
    """The windows with their offsets flattened into one last axis (out..., window)."""
    w = _windows(x, geometry, fill)
    n = x.ndim
    return fnp.reshape(w, w.shape[:n] + (math.prod(w.shape[n:]),))


def _window_extreme(x: Any, geometry: dict, kind: str, fill: Any) -> tuple:
    """(values, flat indices into x) of each window's first maximum (or minimum) in
    row-major window order, as a gather from x. Among equal candidates a real element
    beats the padding (an all -inf window of a max still indexes its first element, as
    PyTorch's does); a window whose extreme is padding only takes ``fill`` and index -1.
    A NaN is the extreme of its window (its first NaN)."""
    flat = _flat_windows(x, geometry, fill)
    iota = fnp.reshape(fnp.arange(math.prod(x.shape), dtype=np.int64), x.shape)
    if x.device != "cpu":
        iota = device_put(iota, x.device)
    where_from = _flat_windows(iota, geometry, -1)
    best = fnp.max(flat, axis=-1, keepdims=True) if kind == "max" else fnp.min(
        flat, axis=-1, keepdims=True)
    hits = flat == best
    if x.dtype.kind in "fc":
        hits = hits | (fnp.isnan(flat) & fnp.isnan(best))
    real_hits = hits & (where_from >= 0)
    choice = fnp.where(fnp.any(real_hits, axis=-1), fnp.argmax(real_hits, axis=-1),
                       fnp.argmax(hits, axis=-1))
    index = fnp.take_along_axis(where_from, fnp.expand_dims(choice, -1), -1)[..., 0]
    valid = index >= 0
    if not x.size:
        return fnp.full(index.shape, fill, dtype=x.dtype), index
    gathered = fnp.take(fnp.ravel(x), fnp.where(valid, index, 0))
    return fnp.where(valid, gathered, fnp.asarray(fill, dtype=x.dtype)), index


def reduce_window_max_with_indices(operand: Any, window_dimensions: Sequence[int],
                                   window_strides: Sequence[int] | None = None,
                                   padding: Any = "VALID",
                                   base_dilation: Sequence[int] | None = None,
                                   window_dilation: Sequence[int] | None = None) -> tuple:
    """(max of each window, flat row-major index into ``operand`` of the first maximum).

    A funcgrad extension (JAX has no such function): max pooling with PyTorch's
    ``return_indices``. The padding is ``-inf``; the derivative goes to the indexed
    element. The index is -1 for a window of padding only."""
    x = fnp.asarray(operand)
    geometry = _geometry(x.shape, window_dimensions, window_strides, padding,
                         base_dilation, window_dilation)
    fill = _identity("max", x.dtype)
    return _window_extreme(x, geometry, "max", fill)


def reduce_window(operand: Any, init_value: Any, computation: Callable,
                  window_dimensions: Sequence[int], window_strides: Sequence[int] | None = None,
                  padding: Any = "VALID", base_dilation: Sequence[int] | None = None,
                  window_dilation: Sequence[int] | None = None) -> Any:
    """Reduce every window of ``operand`` (padded with ``init_value``, dilated by
    ``base_dilation``) with ``computation``, as `jax.lax.reduce_window`. ``operand`` and
    ``init_value`` may be matching trees (``computation`` then maps pairs of trees)."""
    leaves, tree = tree_util.tree_flatten(operand)
    inits, init_tree = tree_util.tree_flatten(init_value)
    if tree != init_tree:
        raise ValueError("Operands must have the same tree structure as init_values: "
                         f"{tree} vs. {init_tree}")
    if not leaves:
        raise ValueError("reduce_window must have at least one operand.")
    leaves = [fnp.asarray(x) for x in leaves]
    shape = leaves[0].shape
    if any(x.shape != shape for x in leaves):
        raise ValueError("reduce_window: operands must have one shape, got "
                         f"{[x.shape for x in leaves]}")
    geometry = _geometry(shape, window_dimensions, window_strides, padding, base_dilation,
                         window_dilation)
    kind = _MONOIDS.get(id(computation))
    if len(leaves) == 1 and kind is not None:
        return tree_util.tree_unflatten(tree, [_monoid(leaves[0], inits[0], kind, geometry,
                                                       computation)])
    return _fold(leaves, inits, tree, computation, geometry)


def _scalar(v: Any) -> Any:
    """An init value as a Python scalar (it pads the operand, so it must be constant)."""
    if isinstance(v, Tracer):
        raise TypeError("reduce_window: init_value must be a constant scalar, not a traced "
                        "value (its derivative is not supported, as in JAX)")
    raw = v.to_numpy() if isinstance(v, Array) else np.asarray(v)
    if raw.ndim:
        raise TypeError(f"reduce_window: init_value must be a scalar, got shape {raw.shape}")
    return raw.item()


def _monoid(x: Any, init: Any, kind: str, geometry: dict, computation: Callable) -> Any:
    """A sum, product, max or min: the windows padded with the identity, reduced, and
    ``init`` reduced in once if it is not the identity."""
    n = x.ndim
    identity = _identity(kind, x.dtype)
    if kind in ("max", "min"):
        out, _ = _window_extreme(x, geometry, kind, identity)
    else:
        reduce = fnp.sum if kind == "sum" else fnp.prod
        out = fnp.astype(reduce(_windows(x, geometry, identity), axis=tuple(range(n, 2 * n))),
                         x.dtype)
    if _scalar(init) != identity:
        out = computation(fnp.asarray(init, dtype=x.dtype), out)
    return out


def _fold(leaves: list, inits: list, tree: Any, computation: Callable, geometry: dict) -> Any:
    """``computation`` applied across the window offsets, starting from the init values;
    padding and dilation holes are skipped (a mask keeps the carry there), as XLA does."""
    n = leaves[0].ndim
    windows = [_windows(x, geometry, _scalar(v)) for x, v in zip(leaves, inits)]
    out_shape = windows[0].shape[:n]
    padded = any(lo or hi for lo, hi in geometry["padding"]) or any(
        a > 1 for a in geometry["base_dilation"])
    real = _windows(fnp.ones(leaves[0].shape, bool), geometry, False) if padded else None
    acc = [fnp.broadcast_to(fnp.asarray(v, dtype=x.dtype), out_shape)
           for v, x in zip(inits, leaves)]
    for k in np.ndindex(*geometry["window_dimensions"]):
        at = (Ellipsis,) + k
        new = tree_util.tree_leaves(computation(tree_util.tree_unflatten(tree, acc),
                                                tree_util.tree_unflatten(
                                                    tree, [w[at] for w in windows])))
        acc = new if real is None else [fnp.where(real[at], a_new, a)
                                        for a_new, a in zip(new, acc)]
    return tree_util.tree_unflatten(tree, acc)
