"""Convolution and sliding-window kernels on numpy (or cupy) arrays.

Three computations, each on raw backend arrays:

- `sliding_windows`: the windows of a padded, dilated array as one strided view
  ``(out positions..., window offsets...)``; a zero-copy ``as_strided`` view of the input
  when there is no padding or base dilation, of one filled copy otherwise. Read-only, so a
  later in-place write cannot reach the overlapping elements.
- `sliding_windows_transpose`: its transpose (col2im): each window offset's slice of the
  cotangent added into a strided slice of a zero buffer; one vectorised add per offset.
- `window_argmax`, `window_gather`, `window_scatter`: max pooling without copying the
  windows: per window offset, one pass over the strided view of the input at that offset
  (compare and keep the first extreme; select the chosen element; add the cotangent
  back where it was chosen).
- `conv_general_dilated`: im2col and one matrix product per feature or batch group. The
  windows view of the padded input is copied once into a ``(group, rows, Cg * window)``
  matrix and multiplied by the kernel (BLAS). When the input is dilated (a transposed
  convolution, or the input-gradient of a strided one) and dilation makes the output
  larger than the input, it scatters instead (col2im): input rows times the kernel, then
  one strided add per kernel offset, which never multiplies the holes of the dilation.

Layouts: the kernel reads any dimension numbers by transposing (views) to the canonical
(N, C, spatial...) / (O, I, spatial...) order and writes the output C-contiguous in the
requested one.
"""
from __future__ import annotations

import functools
import math
from typing import Any, Sequence

import numpy as np

from funcgrad.backend import backend_of
from funcgrad.dtypes import LOW_FLOATS
from .linalg import in_float32

__all__ = ["padded_shape", "window_out_shape", "sliding_windows",
           "sliding_windows_transpose", "window_argmax", "window_gather", "window_scatter",
           "conv_general_dilated"]


def dilate_dim(d: int, rate: int) -> int:
    """The length of ``d`` elements with ``rate - 1`` holes between neighbours."""
    return 0 if d == 0 else (d - 1) * rate + 1


def padded_shape(shape: Sequence[int], padding: Sequence[tuple], dilation: Sequence[int]
                 ) -> tuple:
    """The shape after dilating by ``dilation`` and padding by ``(lo, hi)`` pairs."""
    return tuple(dilate_dim(d, a) + lo + hi for d, (lo, hi), a in
                 zip(shape, padding, dilation))


def window_out_shape(padded: Sequence[int], window: Sequence[int], strides: Sequence[int],
                     window_dilation: Sequence[int]) -> tuple:
    """How many windows fit along each axis (0 where none does)."""
    return tuple(max(0, (p - dilate_dim(w, r)) // s + 1)
                 for p, w, s, r in zip(padded, window, strides, window_dilation))


def _placement(d: int, lo: int, rate: int, total: int) -> tuple:
    """Where elements 0..d-1 of an axis, placed at ``lo + i * rate``, fall inside [0,
    total): (first kept element, one past the last kept, the first one's position).
    Negative padding crops elements at the start, a short ``total`` at the end."""
    first = max(0, -(lo // rate))
    last = max(first, min(d, -((lo - total) // rate)))
    return first, last, lo + first * rate


def _placed_slices(d: int, lo: int, rate: int, total: int) -> tuple:
    """(slice of the kept elements, slice of their positions, whether any was dropped)."""
    first, last, start = _placement(d, lo, rate, total)
    stop = start + (last - first - 1) * rate + 1 if last > first else start
    return slice(first, last), slice(start, stop, rate), first > 0 or last < d


def pad_and_dilate(x: Any, padding: Sequence[tuple], dilation: Sequence[int], fill: Any,
                   axes: Sequence[int] | None = None,
                   memory_order: Sequence[int] | None = None) -> Any:
    """x dilated (holes of ``fill``) and padded (``fill``; negative pads crop) along
    ``axes`` (all by default), in one new buffer whose memory holds the axes in
    ``memory_order`` (x's axis order by default; the result is a view with x's axes).
    Returns x itself when there is nothing to pad and no layout asked for."""
    axes = tuple(range(x.ndim)) if axes is None else tuple(axes)
    if memory_order is None and all(lo == 0 and hi == 0 for lo, hi in padding) and all(
            a == 1 for a in dilation):
        return x
    xp = backend_of(x).xp
    shape = list(x.shape)
    src, dst = [slice(None)] * x.ndim, [slice(None)] * x.ndim
    for ax, (lo, hi), a in zip(axes, padding, dilation):
        total = dilate_dim(x.shape[ax], a) + lo + hi
        if total < 0:
            raise ValueError(f"negative padding {(lo, hi)} is larger than the dilated axis "
                             f"{ax} of size {dilate_dim(x.shape[ax], a)}")
        shape[ax] = total
        src[ax], dst[ax], _ = _placed_slices(x.shape[ax], lo, a, total)
    order = tuple(range(x.ndim)) if memory_order is None else tuple(memory_order)
    buf = xp.full(tuple(shape[i] for i in order), fill, dtype=x.dtype)
    out = buf.transpose(_inverse(order))
    part = x[tuple(src)]
    if part.size:
        out[tuple(dst)] = part
    return out


def _strided_view(x: Any, out_shape: tuple, window: tuple, strides: tuple,
                  window_dilation: tuple, axes: tuple) -> Any:
    """The (leading axes..., out positions..., window offsets...) view of ``x``: axes not
    in ``axes`` come first, unchanged."""
    xp = backend_of(x).xp
    rest = [i for i in range(x.ndim) if i not in axes]
    st = x.strides
    shape = tuple(x.shape[i] for i in rest) + out_shape + window
    strides_ = (tuple(st[i] for i in rest) + tuple(st[a] * s for a, s in zip(axes, strides))
                + tuple(st[a] * r for a, r in zip(axes, window_dilation)))
    if 0 in shape:
        return xp.empty(shape, x.dtype)
    return xp.lib.stride_tricks.as_strided(x, shape, strides_, writeable=False) \
        if xp is np else xp.lib.stride_tricks.as_strided(x, shape, strides_)


def sliding_windows(x: Any, window_dimensions: tuple, window_strides: tuple,
                    padding: tuple, base_dilation: tuple, window_dilation: tuple,
                    fill: Any) -> Any:
    """out[o..., k...] = xp[o * stride + k * window_dilation] of the dilated, padded x."""
    xp_ = pad_and_dilate(x, padding, base_dilation, fill)
    out_shape = window_out_shape(xp_.shape, window_dimensions, window_strides,
                                 window_dilation)
    return _strided_view(xp_, out_shape, tuple(window_dimensions), tuple(window_strides),
                         tuple(window_dilation), tuple(range(x.ndim)))


def _scatter_windows(buf: Any, g: Any, window: tuple, strides: tuple, rates: tuple,
                     axes: tuple, lead: int) -> None:
    """buf[..., o * stride + k * rate] += g[..., o..., k...] over ``axes`` of ``buf``: one
    strided add per window offset k (``lead`` leading axes of g are buf's other axes)."""
    n = len(axes)
    out_shape = g.shape[lead:lead + n]
    for k in np.ndindex(*window):
        where = [slice(None)] * buf.ndim
        for ax, ki, o, s, r in zip(axes, k, out_shape, strides, rates):
            start = ki * r
            where[ax] = slice(start, start + (o - 1) * s + 1 if o else start, s)
        buf[tuple(where)] += g[(Ellipsis,) + k] if n else g


def sliding_windows_transpose(g: Any, window_dimensions: tuple, window_strides: tuple,
                              padding: tuple, base_dilation: tuple, window_dilation: tuple,
                              shape: tuple) -> Any:
    """The transpose of `sliding_windows`: every window's values added back where they
    were read, then the padding and dilation holes dropped."""
    xp = backend_of(g).xp
    n = len(shape)
    padded = padded_shape(shape, padding, base_dilation)
    buf = xp.zeros(padded, dtype=g.dtype)
    if g.size:
        _scatter_windows(buf, g, tuple(window_dimensions), tuple(window_strides),
                         tuple(window_dilation), tuple(range(n)), 0)
    return _undilate(buf, shape, padding, base_dilation, range(n))


def _undilate(buf: Any, shape: Sequence[int], padding: Sequence[tuple],
              dilation: Sequence[int], axes: Any) -> Any:
    """The elements of a dilated, padded buffer that came from an array of ``shape`` (the
    inverse of `pad_and_dilate`; cropped elements get zeros)."""
    axes = tuple(axes)
    if all(lo == 0 and hi == 0 for lo, hi in padding) and all(a == 1 for a in dilation):
        return buf
    xp = backend_of(buf).xp
    src, dst = [slice(None)] * buf.ndim, [slice(None)] * buf.ndim
    full = list(buf.shape)
    cropped = False
    for ax, d, (lo, _), a in zip(axes, shape, padding, dilation):
        full[ax] = d
        dst[ax], src[ax], dropped = _placed_slices(d, lo, a, buf.shape[ax])
        cropped = cropped or dropped
    part = buf[tuple(src)]
    if not cropped:
        return xp.ascontiguousarray(part)
    out = xp.zeros(tuple(full), dtype=buf.dtype)
    out[tuple(dst)] = part
    return out


def _offset_views(xp_: Any, out_shape: tuple, window: tuple, strides: tuple,
                  rates: tuple) -> Any:
    """(flat offset, view of xp_ at that window offset for every window) for each offset
    of the window, row-major: strided slices, no copies."""
    for flat, k in enumerate(np.ndindex(*window)):
        where = tuple(slice(ki * r, ki * r + (o - 1) * s + 1 if o else ki * r, s)
                      for ki, o, s, r in zip(k, out_shape, strides, rates))
        yield flat, xp_[where]


def _offset_dtype(size: int) -> Any:
    return np.uint8 if size <= 255 else np.int64


def _argmax_fast(padded: Any, geometry: tuple, kind: str) -> tuple:
    """(choice, best) of each window's first extreme, by elementwise maximum (minimum)
    and choice += better * (k - choice): no masked copies (numbers without NaN)."""
    xp = backend_of(padded).xp
    extreme = xp.maximum if kind == "max" else xp.minimum
    better_than = xp.greater if kind == "max" else xp.less
    dtype = _offset_dtype(int(np.prod(geometry[1])))
    best = choice = None
    for flat, view in _offset_views(padded, *geometry):
        if best is None:
            best, choice = view.copy(), xp.zeros(view.shape, dtype)
            continue
        better = better_than(view, best)
        extreme(best, view, out=best)
        choice += better * (dtype(flat) - choice)  # choice <= previous offsets < flat
    return choice, best


def _argmax_general(x: Any, padded: Any, geometry: tuple, padding: tuple,
                    base_dilation: tuple, kind: str, holes: bool) -> Any:
    """`_argmax_fast` with the NaN rule (a NaN wins, the first) and, where there are
    padding or dilation holes, real elements winning ties with them."""
    xp = backend_of(x).xp
    real_views = (iter(_offset_views(pad_and_dilate(xp.ones(x.shape, bool), padding,
                                                    base_dilation, False), *geometry))
                  if holes else None)
    better_than = xp.greater if kind == "max" else xp.less
    floating = x.dtype.kind in "fc"
    best = best_nan = best_real = choice = None
    for flat, view in _offset_views(padded, *geometry):
        real = next(real_views)[1] if holes else None
        if best is None:
            best, choice = view.copy(), xp.zeros(view.shape, np.int64)
            best_nan = xp.isnan(best) if floating else None
            best_real = real.copy() if holes else None
            continue
        better = better_than(view, best)
        if floating:
            nan = xp.isnan(view)
            better = (better | nan) & ~best_nan
            best_nan |= better & nan
        if holes:
            better |= (view == best) & real & ~best_real
            xp.copyto(best_real, real, where=better)
        xp.copyto(best, view, where=better)
        xp.copyto(choice, flat, where=better)
    return choice


def window_argmax(x: Any, window_dimensions: tuple, window_strides: tuple, padding: tuple,
                  base_dilation: tuple, window_dilation: tuple, fill: Any, kind: str) -> Any:
    """The flat (row-major) window offset of each window's first maximum ('max') or minimum
    ('min'), one pass per window offset over strided views. A NaN wins (the first one);
    on a tie between padding and a real element the real one wins. The fast pass serves
    inputs without NaN; windows whose extreme equals the padding value, or NaNs, are
    decided by the general pass."""
    xp = backend_of(x).xp
    padded = pad_and_dilate(x, padding, base_dilation, fill)
    out_shape = window_out_shape(padded.shape, window_dimensions, window_strides,
                                 window_dilation)
    if 0 in out_shape or 0 in window_dimensions:
        return xp.zeros(out_shape, np.int64)
    geometry = (out_shape, tuple(window_dimensions), tuple(window_strides),
                tuple(window_dilation))
    holes = any(lo or hi for lo, hi in padding) or any(a > 1 for a in base_dilation)
    if not (x.dtype.kind in "fc" and bool(xp.isnan(x).any())):
        choice, best = _argmax_fast(padded, geometry, kind)
        if not (holes and bool((best == fill).any())):
            return choice
    return _argmax_general(x, padded, geometry, padding, base_dilation, kind, holes)


@functools.lru_cache(maxsize=32)
def _position_tables(out_shape: tuple, padded: tuple, window: tuple, strides: tuple,
                     rates: tuple) -> tuple:
    """(flat index of each window's origin, flat offset of each window offset) in a
    C-contiguous array of shape ``padded``: constants of the geometry, cached."""
    n = len(padded)
    steps = [int(np.prod(padded[i + 1:])) for i in range(n)]
    origin: Any = np.zeros((), np.int64)
    for axis, (o, s) in enumerate(zip(out_shape, strides)):
        origin = origin + (np.arange(o) * s * steps[axis]).reshape(
            (-1,) + (1,) * (n - 1 - axis))
    table = sum(k * r * st for k, r, st in zip(np.indices(window).reshape(n, -1), rates,
                                               steps))
    return origin, np.asarray(table, np.int64)


def _window_positions(choice: Any, padded: tuple, window: tuple, strides: tuple,
                      rates: tuple) -> Any:
    """The flat index into the (C-contiguous) padded array of each window's chosen
    element: the window origin's index plus a table lookup of the offset's."""
    xp = backend_of(choice).xp
    origin, table = _position_tables(tuple(choice.shape), tuple(padded), window, strides,
                                     rates)
    return xp.asarray(origin) + xp.asarray(table)[choice]


def window_gather(x: Any, choice: Any, window_dimensions: tuple, window_strides: tuple,
                  padding: tuple, base_dilation: tuple, window_dilation: tuple,
                  fill: Any) -> Any:
    """The element at offset ``choice`` of each window (``fill`` where it is padding): one
    gather from the flattened padded array."""
    xp = backend_of(x).xp
    padded = pad_and_dilate(x, padding, base_dilation, fill)
    if choice.size == 0 or padded.size == 0:
        return xp.full(choice.shape, fill, dtype=x.dtype)
    where = _window_positions(choice, padded.shape, tuple(window_dimensions),
                              tuple(window_strides), tuple(window_dilation))
    return xp.ravel(padded)[where]


def _overlapping(window: tuple, strides: tuple, rates: tuple) -> bool:
    """Whether two windows can share an element (a scatter must then accumulate)."""
    return any(s < (w - 1) * r + 1 for w, s, r in zip(window, strides, rates) if w > 1)


def window_scatter(g: Any, choice: Any, window_dimensions: tuple, window_strides: tuple,
                   padding: tuple, base_dilation: tuple, window_dilation: tuple,
                   shape: tuple) -> Any:
    """The transpose of `window_gather`: each g added where its window's choice was read;
    a plain assignment when no two windows overlap (every position is chosen once at
    most), else one masked add per window offset."""
    xp = backend_of(g).xp
    padded = padded_shape(shape, padding, base_dilation)
    buf = xp.zeros(padded, dtype=g.dtype)
    window, strides, rates = (tuple(window_dimensions), tuple(window_strides),
                              tuple(window_dilation))
    if g.size and buf.size:
        if _overlapping(window, strides, rates):
            for flat, view in _offset_views(buf, choice.shape, window, strides, rates):
                view += xp.where(choice == flat, g, 0)
        else:
            buf.reshape(-1)[_window_positions(choice, padded, window, strides, rates)] = g
    return _undilate(buf, shape, padding, base_dilation, range(len(shape)))


# ---------------------------------------------------------------------------------------
# conv_general_dilated
# ---------------------------------------------------------------------------------------

def _inverse(perm: Sequence[int]) -> tuple:
    inv = [0] * len(perm)
    for i, p in enumerate(perm):
        inv[p] = i
    return tuple(inv)


def conv_general_dilated(lhs: Any, rhs: Any, window_strides: tuple, padding: tuple,
                         lhs_dilation: tuple, rhs_dilation: tuple, dimension_numbers: Any,
                         feature_group_count: int, batch_group_count: int,
                         preferred_element_type: Any) -> Any:
    """XLA's convolution on numpy/cupy arrays (see the module docstring)."""
    lhs_spec, rhs_spec, out_spec = dimension_numbers
    dtype = (np.dtype(preferred_element_type) if preferred_element_type is not None
             else np.result_type(lhs.dtype, rhs.dtype))
    if dtype in LOW_FLOATS and type(lhs) is np.ndarray:  # 16-bit: accumulate in float32
        return in_float32(conv_general_dilated, dtype, lhs, rhs, window_strides=window_strides,
                          padding=padding, lhs_dilation=lhs_dilation,
                          rhs_dilation=rhs_dilation, dimension_numbers=dimension_numbers,
                          feature_group_count=feature_group_count,
                          batch_group_count=batch_group_count, preferred_element_type=None)
    x = lhs.transpose(lhs_spec).astype(dtype, copy=False)   # (N, C, S...)
    w = rhs.transpose(rhs_spec).astype(dtype, copy=False)   # (O, I, K...)
    padded = padded_shape(x.shape[2:], padding, lhs_dilation)
    out_sp = window_out_shape(padded, w.shape[2:], window_strides, rhs_dilation)
    xp = backend_of(x).xp
    canonical_shape = (x.shape[0] // batch_group_count, w.shape[0]) + out_sp
    if 0 in canonical_shape or x.shape[1] == 0 or 0 in w.shape[2:]:
        out = xp.zeros(canonical_shape, dtype)
    elif any(a > 1 for a in lhs_dilation) and (
            math.prod(x.shape[2:]) * w.shape[0] < math.prod(out_sp) * x.shape[1]):
        out = _conv_by_scatter(x, w, window_strides, padding, lhs_dilation, rhs_dilation,
                               feature_group_count, batch_group_count, out_sp)
    else:
        out = _conv_by_im2col(x, w, window_strides, padding, lhs_dilation, rhs_dilation,
                              feature_group_count, batch_group_count, out_sp)
    return xp.ascontiguousarray(out.transpose(_inverse(out_spec)))


def _group_views(x: Any, w: Any, groups: int, by_batch: bool) -> tuple:
    """x (N, C, ...) as (G, M, Cg, ...) and w (O, I, ...) as (G, Og, I, ...), the group axis
    taken from the batch (batch groups) or the feature axis (feature groups)."""
    n, c = x.shape[:2]
    if by_batch:
        xg = x.reshape((groups, n // groups, c) + x.shape[2:])
    else:
        xg = x.reshape((n, groups, c // groups) + x.shape[2:])
        xg = xg.transpose((1, 0) + tuple(range(2, xg.ndim)))
    wg = w.reshape((groups, w.shape[0] // groups) + w.shape[1:])
    return xg, wg


def _conv_by_im2col(x: Any, w: Any, window_strides: tuple, padding: tuple,
                    lhs_dilation: tuple, rhs_dilation: tuple, feature_group_count: int,
                    batch_group_count: int, out_sp: tuple) -> Any:
    """im2col and one BLAS product per group. The windows are copied into a matrix once;
    numpy copies fastest along a long innermost run, so the matrix is laid out with the
    group's features innermost (rows: batch and positions) when there are more of them
    than output columns, else with the output columns innermost (its transpose)."""
    xp = backend_of(x).xp
    groups = max(feature_group_count, batch_group_count)
    xg, wg = _group_views(x, w, groups, batch_group_count > 1)  # (G, M, Cg, S), (G, Og, Cg, K)
    g_, m, cg = xg.shape[:3]
    n_sp = x.ndim - 2
    sp = tuple(range(3, 3 + n_sp))
    ksp = w.shape[2:]
    features_inner = cg >= out_sp[-1]
    memory = (0, 1) + sp + (2,) if features_inner else None   # channels last
    buf = pad_and_dilate(xg, padding, lhs_dilation, 0, sp, memory)
    view = _strided_view(buf, out_sp, ksp, tuple(window_strides), tuple(rhs_dilation),
                         sp)                                   # (G, M, Cg, OS..., K...)
    pos = tuple(range(3, 3 + n_sp))
    offs = tuple(range(3 + n_sp, 3 + 2 * n_sp))
    og = wg.shape[1]
    if features_inner:   # (G, M * OS, K * Cg) @ (G, K * Cg, Og)
        cols = xp.ascontiguousarray(view.transpose((0, 1) + pos + offs + (2,)))
        cols = cols.reshape(g_, -1, cg * math.prod(ksp))
        kern = wg.transpose((0, 1) + tuple(range(3, 3 + n_sp)) + (2,)).reshape(g_, og, -1)
        prod = xp.matmul(cols, kern.transpose(0, 2, 1))       # (G, M * OS, Og)
        return _join_groups(prod.reshape((g_, m) + out_sp + (og,)), n_sp)
    cols = xp.ascontiguousarray(view.transpose((0, 2) + offs + (1,) + pos))
    cols = cols.reshape(g_, cg * math.prod(ksp), -1)          # (G, Cg * K, M * OS)
    prod = xp.matmul(wg.reshape(g_, og, -1), cols)             # (G, Og, M * OS)
    prod = prod.reshape((g_, og, m) + out_sp)
    return prod.transpose((2, 0, 1) + tuple(range(3, 3 + n_sp))).reshape(
        (m, g_ * og) + out_sp)


def _join_groups(prod: Any, n_sp: int) -> Any:
    """(G, M, OS..., Og) -> (M, G * Og, OS...): the output features are group-major, for
    feature groups and batch groups alike."""
    g_, m = prod.shape[:2]
    og = prod.shape[-1]
    out_sp = prod.shape[2:2 + n_sp]
    prod = prod.transpose((1, 0, 2 + n_sp) + tuple(range(2, 2 + n_sp)))
    return prod.reshape((m, g_ * og) + out_sp)


def _conv_by_scatter(x: Any, w: Any, window_strides: tuple, padding: tuple,
                     lhs_dilation: tuple, rhs_dilation: tuple, feature_group_count: int,
                     batch_group_count: int, out_sp: tuple) -> Any:
    """A convolution of a dilated input without forming it: out[u] with u = o * stride
    receives x[i] . w[k] at u = lo + i * a - k * r, so input rows times the kernel give
    every contribution, and one strided add per kernel offset k places them."""
    xp = backend_of(x).xp
    groups = max(feature_group_count, batch_group_count)
    xg, wg = _group_views(x, w, groups, batch_group_count > 1)  # (G, M, Cg, S), (G, Og, Cg, K)
    g_, m, cg = xg.shape[:3]
    n_sp = x.ndim - 2
    in_sp, ksp = x.shape[2:], w.shape[2:]
    og = wg.shape[1]
    rows = xp.ascontiguousarray(xg.transpose((0, 1) + tuple(range(3, 3 + n_sp)) + (2,)))
    rows = rows.reshape(g_, -1, cg)                          # (G, M * S, Cg)
    kern = xp.ascontiguousarray(wg.transpose(0, 2, 1, *range(3, 3 + n_sp))).reshape(
        g_, cg, -1)                                          # (G, Cg, Og * K)
    contrib = xp.matmul(rows, kern).reshape((g_, m) + in_sp + (og,) + ksp)
    # u-space buffer: positions o * stride, o < out size
    span = tuple((o - 1) * s + 1 if o else 0 for o, s in zip(out_sp, window_strides))
    buf = xp.zeros((g_, m) + span + (og,), x.dtype)
    for k in np.ndindex(*ksp):
        src, dst = [slice(None)] * 2, [slice(None)] * 2
        for d, ki, (lo, _), a, r, u_len in zip(in_sp, k, padding, lhs_dilation, rhs_dilation,
                                               span):
            # x[i] lands at u = lo - ki * r + i * a, kept where 0 <= u < u_len
            kept, placed, _ = _placed_slices(d, lo - ki * r, a, u_len)
            src.append(kept)
            dst.append(placed)
        part = contrib[tuple(src) + (slice(None),) + k]     # (G, M, S', Og)
        if part.size:
            buf[tuple(dst)] += part
    out = buf[(slice(None),) * 2 + tuple(slice(None, None, s) for s in window_strides)]
    return _join_groups(out, n_sp)
