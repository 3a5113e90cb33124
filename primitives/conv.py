"""Convolution and sliding windows: XLA's ``conv_general_dilated`` and the window gather.

| primitive                 | VJP                                               | JVP          |
|---------------------------|---------------------------------------------------|--------------|
| conv_general_dilated      | lhs: conv of g with the flipped kernel, swapped    | conv(t, rhs) |
|                           | in/out features, stride and lhs dilation exchanged | + conv(lhs, t)|
|                           | rhs: conv of lhs with g as the kernel, batch and   |              |
|                           | features swapped, stride and rhs dilation exchanged|              |
| sliding_windows           | sliding_windows_transpose(g)                      | itself       |
| sliding_windows_transpose | sliding_windows(g)                                | itself       |
| window_gather             | x: window_scatter(g) at the chosen offsets        | itself       |
| window_scatter            | g: window_gather(g) at the chosen offsets         | itself       |

Both transposes of a convolution are convolutions again (so every order of derivative is
one more convolution); feature groups of the forward pass become batch groups of its
kernel gradient and the other way round, which is why the primitive carries both counts.
In one spatial axis, with input length H dilated by a, padding (lo, hi), kernel length K
dilated by d (span Kd = (K - 1) d + 1), stride s and output length O:

- input gradient: g dilated by s, padded by (Kd - 1 - lo, dil(H, a) + lo - dil(O, s)),
  convolved with stride a and kernel dilation d with the flipped kernel;
- kernel gradient: the input (dilated by a) padded by (lo, dil(O, s) + (K - 1) d -
  dil(H, a) - lo), convolved with stride d and kernel dilation s with g as the kernel;

where dil(n, r) = (n - 1) r + 1 (0 for n = 0). Either padding may be negative (a crop).

``sliding_windows`` is the gather behind pooling, ``unfold`` and ``reduce_window``: the
windows of a padded, dilated array, shaped (window positions..., window offsets...) over
every axis (numpy's ``sliding_window_view`` layout), with ``fill`` in the padding. It is
linear in x (the fill gets no derivative), and its transpose adds each window back where
it was read (col2im, ``fold``). Max pooling is three primitives that never copy the
windows: ``window_argmax`` (not differentiable) finds the offset of each window's first
maximum (or minimum), ``window_gather`` reads the element at a given offset of each
window (linear in x, the offsets are integer inputs), and ``window_scatter``, its
transpose, adds values back there; so the derivative of a max pool goes to the one chosen
element, as XLA's select-and-scatter and PyTorch's max pooling give it. The kernels
(`kernels.conv`) do the strided views, the im2col product and the scatters.
"""
from __future__ import annotations

from typing import Any, NamedTuple

import numpy as np

from funcgrad.core import ZERO, Primitive
from funcgrad.meta import ShapeDtypeStruct, def_meta_impl, stand_in
from .indexing import NO_INDEX, Index, Slice, getitem
from .kernels import conv as kernels
from .samplers import conv as samplers
from .shape import reshape, transpose

__all__ = ["ConvDimensionNumbers", "conv_general_dilated", "sliding_windows",
           "sliding_windows_transpose", "window_argmax", "window_gather", "window_scatter"]


class ConvDimensionNumbers(NamedTuple):
    """Which array axis holds each canonical axis: ``lhs_spec`` (batch, feature,
    spatial...), ``rhs_spec`` (out feature, in feature, spatial...), ``out_spec`` (batch,
    feature, spatial...). The spatial entries pair up in order."""
    lhs_spec: tuple
    rhs_spec: tuple
    out_spec: tuple


def dilate_dim(d: int, rate: int) -> int:
    return kernels.dilate_dim(d, rate)


# -- helpers of the rules (funcgrad ops) -----------------------------------------------------

def _swap_spec(spec: tuple) -> tuple:
    """The spec with its first two roles exchanged (batch <-> feature, out <-> in)."""
    return (spec[1], spec[0]) + tuple(spec[2:])


def _move_groups(x: Any, src: int, dst: int, groups: int) -> Any:
    """Axis ``src`` (size G * m) split into (G, m), and G merged into axis ``dst`` as its
    major part (dst's size d becomes G * d)."""
    shape = x.shape
    split = shape[:src] + (groups, shape[src] // groups) + shape[src + 1:]
    y = reshape(x, shape=split)
    g_axis = src
    d_axis = dst + 1 if dst > src else dst  # where dst sits after the split
    order = [i for i in range(y.ndim) if i != g_axis]
    order.insert(order.index(d_axis), g_axis)
    y = transpose(y, axes=tuple(order))
    merged = list(shape)
    merged[src] //= groups
    merged[dst] *= groups
    return reshape(y, shape=tuple(merged))


def _flip(x: Any, axes: tuple) -> Any:
    """x reversed along ``axes``."""
    index = [Slice(None, None, None)] * x.ndim
    for a in axes:
        index[a] = Slice(None, None, -1)
    return getitem(x, NO_INDEX, index=Index(index))


def _conv_lhs_vjp(g: Any, rhs: Any, lhs_shape: tuple, window_strides: tuple, padding: tuple,
                  lhs_dilation: tuple, rhs_dilation: tuple,
                  dimension_numbers: ConvDimensionNumbers, feature_group_count: int,
                  batch_group_count: int) -> Any:
    lhs_spec, rhs_spec, out_spec = dimension_numbers
    groups = max(feature_group_count, batch_group_count)
    kernel = rhs
    if groups > 1:  # the group factor of the out features moves into the in features
        kernel = _move_groups(kernel, rhs_spec[0], rhs_spec[1], groups)
    k_sizes = [rhs.shape[a] for a in rhs_spec[2:]]
    pads = []
    for h, o, k, (lo, _), s, a, d in zip([lhs_shape[i] for i in lhs_spec[2:]],
                                         [g.shape[i] for i in out_spec[2:]], k_sizes,
                                         padding, window_strides, lhs_dilation, rhs_dilation):
        span = dilate_dim(k, d)
        pads.append((span - 1 - lo, dilate_dim(h, a) + lo - dilate_dim(o, s)))
    out = conv_general_dilated(
        g, _flip(kernel, tuple(rhs_spec[2:])), window_strides=lhs_dilation,
        padding=tuple(pads), lhs_dilation=window_strides, rhs_dilation=rhs_dilation,
        dimension_numbers=ConvDimensionNumbers(out_spec, _swap_spec(rhs_spec), lhs_spec),
        feature_group_count=groups, batch_group_count=1, preferred_element_type=None)
    if batch_group_count > 1:  # the batch groups came out as feature groups
        out = _move_groups(out, lhs_spec[1], lhs_spec[0], batch_group_count)
    return out


def _conv_rhs_vjp(g: Any, lhs: Any, rhs_shape: tuple, window_strides: tuple, padding: tuple,
                  lhs_dilation: tuple, rhs_dilation: tuple,
                  dimension_numbers: ConvDimensionNumbers, feature_group_count: int,
                  batch_group_count: int) -> Any:
    lhs_spec, rhs_spec, out_spec = dimension_numbers
    pads = []
    for h, o, k, (lo, _), s, a, d in zip([lhs.shape[i] for i in lhs_spec[2:]],
                                         [g.shape[i] for i in out_spec[2:]],
                                         [rhs_shape[i] for i in rhs_spec[2:]],
                                         padding, window_strides, lhs_dilation, rhs_dilation):
        pads.append((lo, dilate_dim(o, s) + (k - 1) * d - dilate_dim(h, a) - lo))
    return conv_general_dilated(
        lhs, g, window_strides=rhs_dilation, padding=tuple(pads), lhs_dilation=lhs_dilation,
        rhs_dilation=window_strides,
        dimension_numbers=ConvDimensionNumbers(_swap_spec(lhs_spec), _swap_spec(out_spec),
                                               _swap_spec(rhs_spec)),
        feature_group_count=batch_group_count, batch_group_count=feature_group_count,
        preferred_element_type=None)


def _conv_impl(lhs: Any, rhs: Any, window_strides: tuple, padding: tuple,
               lhs_dilation: tuple, rhs_dilation: tuple,
               dimension_numbers: ConvDimensionNumbers, feature_group_count: int,
               batch_group_count: int, preferred_element_type: Any) -> Any:
    return kernels.conv_general_dilated(lhs, rhs, window_strides, padding, lhs_dilation,
                                        rhs_dilation, dimension_numbers, feature_group_count,
                                        batch_group_count, preferred_element_type)


_CONV_PARAMS = ("window_strides", "padding", "lhs_dilation", "rhs_dilation",
                "dimension_numbers", "feature_group_count", "batch_group_count",
                "preferred_element_type")

conv_general_dilated = Primitive(
    "conv_general_dilated", _conv_impl, ("lhs", "rhs"), _CONV_PARAMS,
    sample=samplers.conv_cases(lambda *a, **k: conv_general_dilated(*a, **k)),
    doc="XLA's convolution: params already normalised (`funcgrad.lax` does that).")
conv_general_dilated.defvjp(_conv_lhs_vjp, _conv_rhs_vjp)
conv_general_dilated.defjvp(
    lambda t, rhs, window_strides, padding, lhs_dilation, rhs_dilation, dimension_numbers,
    feature_group_count, batch_group_count, preferred_element_type: conv_general_dilated(
        t, rhs, window_strides=window_strides, padding=padding, lhs_dilation=lhs_dilation,
        rhs_dilation=rhs_dilation, dimension_numbers=dimension_numbers,
        feature_group_count=feature_group_count, batch_group_count=batch_group_count,
        preferred_element_type=preferred_element_type),
    lambda t, lhs, window_strides, padding, lhs_dilation, rhs_dilation, dimension_numbers,
    feature_group_count, batch_group_count, preferred_element_type: conv_general_dilated(
        lhs, t, window_strides=window_strides, padding=padding, lhs_dilation=lhs_dilation,
        rhs_dilation=rhs_dilation, dimension_numbers=dimension_numbers,
        feature_group_count=feature_group_count, batch_group_count=batch_group_count,
        preferred_element_type=preferred_element_type))


def _conv_on_meta(lhs: Any, rhs: Any, window_strides: tuple, padding: tuple,
                  lhs_dilation: tuple, rhs_dilation: tuple,
                  dimension_numbers: ConvDimensionNumbers, feature_group_count: int,
                  batch_group_count: int, preferred_element_type: Any) -> ShapeDtypeStruct:
    """The convolution's result on meta arrays from the shapes alone: on stand-ins the
    im2col product would cost a real convolution. Operands whose features do not fit raise
    the kernel's own error."""
    lhs_spec, rhs_spec, out_spec = dimension_numbers
    xs = tuple(lhs.shape[i] for i in lhs_spec)
    ws = tuple(rhs.shape[i] for i in rhs_spec)
    if xs[1] != ws[1] * feature_group_count or xs[0] % batch_group_count:
        return _conv_impl(stand_in(lhs), stand_in(rhs), window_strides, padding, lhs_dilation,
                          rhs_dilation, dimension_numbers, feature_group_count,
                          batch_group_count, preferred_element_type)
    spatial = kernels.window_out_shape(kernels.padded_shape(xs[2:], padding, lhs_dilation),
                                       ws[2:], window_strides, rhs_dilation)
    canonical = (xs[0] // batch_group_count, ws[0]) + spatial
    shape = [0] * len(canonical)
    for role, axis in enumerate(out_spec):
        shape[axis] = canonical[role]
    dtype = (np.dtype(preferred_element_type) if preferred_element_type is not None
             else np.result_type(lhs.dtype, rhs.dtype))
    return ShapeDtypeStruct(tuple(shape), dtype)


def_meta_impl(conv_general_dilated, _conv_on_meta)


# -- sliding windows ---------------------------------------------------------------------------

_WINDOW_PARAMS = ("window_dimensions", "window_strides", "padding", "base_dilation",
                  "window_dilation")

sliding_windows = Primitive(
    "sliding_windows", kernels.sliding_windows, ("x",), _WINDOW_PARAMS + ("fill",),
    view=True, sample=samplers.windows_cases(lambda *a, **k: sliding_windows(*a, **k)),
    doc="The windows of x dilated by base_dilation and padded with fill: shape "
        "(positions per axis..., window offsets per axis...).")
sliding_windows_transpose = Primitive(
    "sliding_windows_transpose", kernels.sliding_windows_transpose, ("g",),
    _WINDOW_PARAMS + ("shape",),
    sample=samplers.windows_transpose_cases(
        lambda *a, **k: sliding_windows_transpose(*a, **k)),
    doc="The transpose of sliding_windows (col2im): windows added back into an array of "
        "shape, padding and dilation holes dropped.")


def _windows_of(g: Any, window_dimensions: tuple, window_strides: tuple, padding: tuple,
                base_dilation: tuple, window_dilation: tuple) -> Any:
    return sliding_windows(g, window_dimensions=window_dimensions,
                           window_strides=window_strides, padding=padding,
                           base_dilation=base_dilation, window_dilation=window_dilation,
                           fill=0.0)


def _windows_back(g: Any, shape: tuple, window_dimensions: tuple, window_strides: tuple,
                  padding: tuple, base_dilation: tuple, window_dilation: tuple) -> Any:
    return sliding_windows_transpose(
        g, window_dimensions=window_dimensions, window_strides=window_strides,
        padding=padding, base_dilation=base_dilation, window_dilation=window_dilation,
        shape=shape)


sliding_windows.defvjp(
    lambda g, x_shape, window_dimensions, window_strides, padding, base_dilation,
    window_dilation: _windows_back(g, x_shape, window_dimensions, window_strides, padding,
                                   base_dilation, window_dilation))
sliding_windows.defjvp(_windows_of)
sliding_windows_transpose.defvjp(_windows_of)
sliding_windows_transpose.defjvp(_windows_back)


# -- selecting one element per window (max pooling) -----------------------------------------

window_argmax = Primitive(
    "window_argmax", kernels.window_argmax, ("x",), _WINDOW_PARAMS + ("fill", "kind"),
    differentiable=False,
    doc="The flat offset of each window's first maximum (kind 'max') or minimum ('min').")
window_gather = Primitive(
    "window_gather", kernels.window_gather, ("x", "choice"), _WINDOW_PARAMS + ("fill",),
    sample=samplers.window_gather_cases(lambda *a, **k: window_gather(*a, **k)),
    doc="The element at the flat offset ``choice`` of each window (fill in the padding).")
window_scatter = Primitive(
    "window_scatter", kernels.window_scatter, ("g", "choice"), _WINDOW_PARAMS + ("shape",),
    sample=samplers.window_scatter_cases(lambda *a, **k: window_scatter(*a, **k)),
    doc="The transpose of window_gather: g added at each window's chosen offset.")


def _gather_at(g: Any, choice: Any, window_dimensions: tuple, window_strides: tuple,
               padding: tuple, base_dilation: tuple, window_dilation: tuple) -> Any:
    return window_gather(g, choice, window_dimensions=window_dimensions,
                         window_strides=window_strides, padding=padding,
                         base_dilation=base_dilation, window_dilation=window_dilation,
                         fill=0.0)


def _scatter_at(g: Any, choice: Any, shape: tuple, window_dimensions: tuple,
                window_strides: tuple, padding: tuple, base_dilation: tuple,
                window_dilation: tuple) -> Any:
    return window_scatter(g, choice, window_dimensions=window_dimensions,
                          window_strides=window_strides, padding=padding,
                          base_dilation=base_dilation, window_dilation=window_dilation,
                          shape=shape)


window_gather.defvjp(
    lambda g, choice, x_shape, window_dimensions, window_strides, padding, base_dilation,
    window_dilation: _scatter_at(g, choice, x_shape, window_dimensions, window_strides,
                                 padding, base_dilation, window_dilation), ZERO)
window_gather.defjvp(_gather_at, ZERO)
window_scatter.defvjp(_gather_at, ZERO)
window_scatter.defjvp(_scatter_at, ZERO)


# -- batching rules (vmap) ------------------------------------------------------------------
# A convolution already maps over its batch axis and, with groups, over blocks of features:
# the vmapped axis is folded into one of those (lhs batch; rhs out features; both: feature
# groups, or batch groups), inside each existing group so the grouping is kept, and split
# out of the result again. Window primitives get one more axis with a window of one.
# (imported here: funcgrad.primitives.batching builds on the shape primitives)
from . import batching as B  # noqa: E402


def _fold(x: Any, d: int, axis: int, groups: int, major: bool) -> Any:
    """The batch axis ``d`` of x merged into ``axis``: inside each of the ``groups``
    blocks of that axis (the batch is the block's major part), or ``major`` (ahead of
    the groups: the batch becomes groups)."""
    x = B.moveaxis(x, d, 0)
    size, shape = x.shape[0], tuple(x.shape[1:])
    n = shape[axis]
    if major:
        x = B.moveaxis(x, 0, axis)
    else:
        x = reshape(x, shape=(size,) + shape[:axis] + (groups, n // groups) + shape[axis + 1:])
        x = B.moveaxis(x, 0, axis + 1)  # (..., groups, batch, n / groups, ...)
    return reshape(x, shape=shape[:axis] + (size * n,) + shape[axis + 1:])


def _unfold(out: Any, axis: int, groups: int, size: int, major: bool) -> tuple:
    """The inverse of `_fold` on a result: (out with the batch split out of ``axis``,
    where the batch axis is)."""
    shape = tuple(out.shape)
    n = shape[axis] // size
    if major:
        return reshape(out, shape=shape[:axis] + (size, n) + shape[axis + 1:]), axis
    split = reshape(out, shape=shape[:axis] + (groups, size, n // groups) + shape[axis + 1:])
    moved = B.moveaxis(split, axis + 1, axis)  # (..., batch, groups, n / groups, ...)
    return reshape(moved, shape=shape[:axis] + (size, n) + shape[axis + 1:]), axis


def _batch_conv(args: tuple, dims: tuple, **params: Any) -> tuple:
    (lhs, rhs), (dl, dr) = args, dims
    lhs_spec, rhs_spec, out_spec = params["dimension_numbers"]
    fgc, bgc = params["feature_group_count"], params["batch_group_count"]
    size = lhs.shape[dl] if dl is not None else rhs.shape[dr]
    if dr is None:  # the batch joins the lhs batch (inside each batch group)
        lhs = _fold(lhs, dl, lhs_spec[0], bgc, bgc == 1)
        out = conv_general_dilated(lhs, rhs, **params)
        return _unfold(out, out_spec[0], bgc, size, True)
    if dl is None:  # the batch joins the kernel's out features (inside each group)
        groups = max(fgc, bgc)
        rhs = _fold(rhs, dr, rhs_spec[0], groups, groups == 1)
        out = conv_general_dilated(lhs, rhs, **params)
        return _unfold(out, out_spec[1], groups, size, groups == 1)
    if bgc == 1:  # both: each example a block of feature groups
        lhs = _fold(lhs, dl, lhs_spec[1], fgc, True)
        rhs = _fold(rhs, dr, rhs_spec[0], fgc, True)
        out = conv_general_dilated(lhs, rhs, **dict(params, feature_group_count=fgc * size))
        return _unfold(out, out_spec[1], fgc, size, True)
    lhs = _fold(lhs, dl, lhs_spec[0], bgc, True)  # both: each example a block of batch groups
    rhs = _fold(rhs, dr, rhs_spec[0], bgc, True)
    out = conv_general_dilated(lhs, rhs, **dict(params, batch_group_count=bgc * size))
    return _unfold(out, out_spec[1], bgc, size, True)


def _one_more(params: dict) -> dict:
    """Window params with a window of one over a new leading axis."""
    out = dict(params)
    for k, unit in (("window_dimensions", 1), ("window_strides", 1), ("padding", (0, 0)),
                    ("base_dilation", 1), ("window_dilation", 1)):
        out[k] = (unit,) + tuple(params[k])
    return out


def _batch_windows(args: tuple, dims: tuple, **params: Any) -> tuple:
    """(batch, positions..., 1, offsets...): the new axis's one window offset dropped."""
    x = B.to_front(args[0], dims[0])
    out = sliding_windows(x, **_one_more(params))
    n = x.ndim
    return reshape(out, shape=tuple(out.shape[:n]) + tuple(out.shape[n + 1:])), 0


def _batch_windows_transpose(args: tuple, dims: tuple, shape: tuple, **params: Any) -> tuple:
    g = B.to_front(args[0], dims[0])
    n = len(shape) + 1
    g = reshape(g, shape=tuple(g.shape[:n]) + (1,) + tuple(g.shape[n:]))
    return sliding_windows_transpose(g, shape=(g.shape[0],) + tuple(shape),
                                     **_one_more(params)), 0


def _batch_window_pick(p: Primitive) -> Any:
    """window_argmax / window_gather / window_scatter: every input with the batch in
    front; a flat offset within a window is the same with a window of one in front."""
    def rule(args: tuple, dims: tuple, **params: Any) -> tuple:
        size = next(a.shape[d] for a, d in zip(args, dims) if d is not None)
        new = [B.materialize(a, d, size) for a, d in zip(args, dims)]
        if "shape" in params:
            params = dict(params, shape=(size,) + tuple(params["shape"]))
        return p(*new, **_one_more(params)), 0
    return rule


conv_general_dilated.defbatch(_batch_conv)
sliding_windows.defbatch(_batch_windows)
sliding_windows_transpose.defbatch(_batch_windows_transpose)
for _p in (window_argmax, window_gather, window_scatter):
    _p.defbatch(_batch_window_pick(_p))
