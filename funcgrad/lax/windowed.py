"""`jax.lax.reduce_window` and the window reductions behind pooling.

Every window reduction is a gather of windows followed by a reduction, so its derivatives
come from the primitives' rules:

- ``add`` / ``mul``: the `sliding_windows` view (no copy when nothing is padded) reduced
  over its window axes;
- ``max`` / ``min`` with ``-inf`` / ``+inf`` (or the dtype's extreme) as init: the first
  extreme of each window in row-major window order (`window_argmax`), read by
  `window_gather`, so that the whole derivative goes to that element as XLA's
  select-and-scatter and PyTorch's max pooling give it (not split among ties);
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
from funcgrad.primitives.control import device_put
from funcgrad.core import Tracer
from funcgrad.primitives import conv as P
from funcgrad.primitives.kernels.conv import dilate_dim as kernels_dilate
from funcgrad.lax.convolution import padtype_to_pads
from funcgrad.lax._binary import add, max, min, mul  # noqa: A004 (jax.lax's names)

__all__ = ["add", "mul", "max", "min", "reduce_window", "reduce_window_max_with_indices"]

_MONOIDS = {id(f): kind for fs, kind in (((fnp.add, add), "sum"), ((fnp.multiply, mul), "prod"),
                                          ((fnp.maximum, max), "max"),
                                          ((fnp.minimum, min), "min")) for f in fs}


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


def _on(raw: Any, device: str) -> Any:
    """A numpy constant as an Array on ``device``."""
    a = fnp.asarray(raw)
    return a if device == "cpu" else device_put(a, device)


def _source_index(choice: Any, shape: tuple, geometry: dict, want_index: bool) -> tuple:
    """(flat index into the operand of each window's chosen offset or None, whether it is
    a real element rather than padding or a dilation hole or None when every element is
    real), by index arithmetic: the window offset's per-axis parts come from small tables
    indexed by ``choice``, axes without a window add a broadcast term only."""
    window = geometry["window_dimensions"]
    n = len(shape)
    offsets = np.indices(window).reshape(n, -1)          # (axis, flat window offset)
    index = None
    real = None
    for axis in range(n):
        lo, hi = geometry["padding"][axis]
        a = geometry["base_dilation"][axis]
        o = np.arange(choice.shape[axis]).reshape((-1,) + (1,) * (n - axis - 1))
        start = o * geometry["window_strides"][axis] - lo    # small, broadcasts
        step = int(math.prod(shape[axis + 1:]))
        if window[axis] == 1 and not (lo or hi or a > 1):
            if want_index:
                index = _plus(index, _on(start * step, choice.device))
            continue
        k = fnp.take(_on(offsets[axis] * geometry["window_dilation"][axis], choice.device),
                     choice)
        pos = fnp.add(k, _on(start, choice.device))
        if lo or hi or a > 1:
            ok = (pos >= 0) & (pos < kernels_dilate(shape[axis], a))
            if a > 1:
                ok = ok & (fnp.remainder(pos, a) == 0)
                pos = fnp.floor_divide(pos, a)
            real = ok if real is None else real & ok
            pos = fnp.where(ok, pos, 0)
        if want_index:
            index = _plus(index, pos * step if step != 1 else pos)
    return index, real


def _plus(total: Any, part: Any) -> Any:
    return part if total is None else fnp.add(total, part)


def _window_extreme(x: Any, geometry: dict, kind: str, fill: Any,
                    want_index: bool = True) -> tuple:
    """(values, flat indices into x or None) of each window's first maximum (or minimum)
    in row-major window order: `window_argmax` chooses (a real element beats the padding
    on a tie, as PyTorch's all -inf windows show; a NaN is the extreme of its window) and
    `window_gather` reads the chosen element, so the derivative goes to it alone. A window
    whose extreme is padding only takes ``fill`` and index -1."""
    choice = P.window_argmax(x, fill=fill, kind=kind, **geometry)
    values = P.window_gather(x, choice, fill=fill, **geometry)
    if not want_index:
        return values, None
    index, real = _source_index(choice, x.shape, geometry, True)
    index = index if real is None else fnp.where(real, index, -1)
    return values, fnp.broadcast_to(fnp.astype(index, np.int64), values.shape)


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
        out, _ = _window_extreme(x, geometry, kind, identity, want_index=False)
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
