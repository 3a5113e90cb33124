"""Order statistics and histograms: quantile, percentile, median (and their nan forms),
cov, corrcoef, histogram, histogram2d, histogramdd, histogram_bin_edges, bincount.

A quantile sorts (differentiably: a gather) and interpolates between the two order
statistics around numpy's virtual index, so it is differentiable in ``a`` and, for the
continuous methods, in ``q``. Which order statistics are picked depends only on the slice
length and q, never on the values, except that NaNs (sorted last) are skipped by the nan
forms. Histograms and bincount count with positions found on the values (not
differentiable in them) and are differentiable in their ``weights``; bin edges are
differentiable where they depend on the inputs (given edges are themselves, equal bins over
the data's own range a linspace of its min and max), and so is a density, through the
bin widths.
"""
from __future__ import annotations

import builtins
import operator
from typing import Any

import numpy as np

from funcgrad._config import default_int
from funcgrad._promotion import INEXACT, computed_dtype
from funcgrad.array import Array, new_array
from funcgrad.primitives.indexing import Index, Ref, scatter_add
from funcgrad.numpy._creation import asarray, astype, promote_dtypes
from funcgrad.numpy._elementwise import clip, conj, imag, isnan, less, real, sqrt, where
from funcgrad.numpy._indexing import getitem
from funcgrad.numpy._linalg import diagonal, matmul, outer
from funcgrad.numpy._ranges import linspace
from funcgrad.numpy._reductions import (any as _any, max as _max, mean, min as _min, no_out,
                                        normalize_axis, sum)
from funcgrad.numpy._shape import broadcast_to, moveaxis, ravel, reshape, stack, vstack
from funcgrad.numpy._sorting import argsort, sort

__all__ = ["quantile", "percentile", "median", "nanquantile", "nanpercentile", "nanmedian",
           "cov", "corrcoef", "histogram", "histogram2d", "histogramdd",
           "histogram_bin_edges", "bincount"]

# numpy's continuous methods: the virtual index n q + alpha + q (1 - alpha - beta) - 1
_CONTINUOUS = {"interpolated_inverted_cdf": (0.0, 1.0), "hazen": (0.5, 0.5),
               "weibull": (0.0, 0.0), "linear": (1.0, 1.0),
               "median_unbiased": (1 / 3, 1 / 3), "normal_unbiased": (3 / 8, 3 / 8)}
_DISCRETE = ("inverted_cdf", "averaged_inverted_cdf", "closest_observation", "lower",
             "higher", "midpoint", "nearest")


def _virtual_index(n: Any, q: Any, method: str) -> Any:
    """numpy's virtual index of quantile q among n sorted values (n may be an array, one
    count per slice); for the continuous methods q may be a (traced) Array."""
    if method == "linear":
        return (n - 1) * q
    alpha, beta = _CONTINUOUS[method]
    return n * q + (alpha + q * (1 - alpha - beta)) - 1


def _discrete_positions(n: np.ndarray, q: np.ndarray, method: str) -> tuple:
    """(lower position, upper position, weight of the upper) of the discrete methods."""
    def boundary(index: np.ndarray, take_lower: np.ndarray) -> np.ndarray:
        prev = np.floor(index)
        return np.maximum(np.where(take_lower, prev, prev + 1), 0).astype(np.intp)

    if method == "inverted_cdf":
        v = n * q - 1
        pos = boundary(v, v - np.floor(v) == 0)
        return pos, pos, np.zeros(pos.shape)
    if method == "closest_observation":
        v = n * q - 1.5
        pos = boundary(v, (v - np.floor(v) == 0) & (np.floor(v) % 2 == 1))
        return pos, pos, np.zeros(pos.shape)
    linear = (n - 1) * q
    if method in ("lower", "higher", "nearest"):
        pick = {"lower": np.floor, "higher": np.ceil, "nearest": np.around}[method]
        pos = pick(linear).astype(np.intp)
        return pos, pos, np.zeros(pos.shape)
    if method == "midpoint":
        v = 0.5 * (np.floor(linear) + np.ceil(linear))
        gamma = np.where(v % 1 == 0, 0.0, 0.5)
    else:  # averaged_inverted_cdf
        v = n * q - 1
        gamma = np.where(v - np.floor(v) == 0, 0.5, 1.0)
    lo = np.floor(v)
    return lo, lo + 1, gamma


def _bounded(lo: np.ndarray, hi: np.ndarray, v: np.ndarray, n: np.ndarray) -> tuple:
    """Positions clipped into the valid values, as numpy's _get_indexes does."""
    last = np.maximum(n - 1, 0)
    above, below = v >= n - 1, v < 0
    lo = np.where(above, last, np.where(below, 0, lo))
    hi = np.where(above, last, np.where(below, 0, hi))
    return lo.astype(np.intp), hi.astype(np.intp)


def _lerp(a: Array, b: Array, t: Any) -> Array:
    """numpy's interpolation a + (b - a) t, computed from b's side for t >= 0.5."""
    d = b - a
    return where(less(t, 0.5), a + d * t, b - d * (1 - t))


def _gather_rows(s: Array, pos: np.ndarray) -> Array:
    """s[pos[..., r], r] for each trailing position r of s (sorted along axis 0)."""
    rest = s.shape[1:]
    pos = np.broadcast_to(pos, pos.shape[:pos.ndim - len(rest)] + rest) if rest else pos
    grid = np.indices(rest, sparse=True) if rest else ()
    return getitem(s, (pos, *[np.broadcast_to(g, pos.shape) for g in grid]))


def _quantile_sorted(s: Array, q: Any, q_raw: np.ndarray, n: Any, method: str) -> Array:
    """Quantiles q of the columns of ``s`` (sorted along axis 0, n valid values each)."""
    qshape = q_raw.shape
    rest = s.shape[1:]
    n_b = np.broadcast_to(n, rest).reshape((1,) * len(qshape) + rest)
    q_b = q_raw.reshape(qshape + (1,) * len(rest))
    if method in _CONTINUOUS:
        v_raw = _virtual_index(n_b, q_b, method)
        lo = np.floor(v_raw)
        lo_i, hi_i = _bounded(lo, lo + 1, v_raw, n_b)
        q_arr = reshape(q, q_b.shape) if isinstance(q, Array) else q_b
        gamma = _virtual_index(n_b, q_arr, method) - new_array(lo)
    else:
        lo, hi, gamma_raw = _discrete_positions(n_b, q_b, method)
        v = lo + gamma_raw if method not in ("inverted_cdf", "closest_observation") \
            else lo
        lo_i, hi_i = _bounded(lo, hi, v, n_b)
        gamma = new_array(gamma_raw)
    full = qshape + rest
    lo_i, hi_i = np.broadcast_to(lo_i, full), np.broadcast_to(hi_i, full)
    below, above = _gather_rows(s, lo_i), _gather_rows(s, hi_i)
    return _lerp(below, above, astype(broadcast_to(gamma, full), s.dtype)
                 if gamma.dtype != s.dtype else gamma)


def _prepare(a: Any, axis: Any) -> tuple[Array, tuple]:
    """(a with the reduced axes flattened into axis 0, the reduced axes)."""
    a = asarray(a)
    if a.dtype.kind == "c":
        raise TypeError("a must be an array of real numbers")
    a, = promote_dtypes(a, rule=INEXACT)
    axes = normalize_axis(axis, a.ndim)
    moved = moveaxis(a, axes, tuple(range(len(axes)))) if axes else a
    n = int(np.prod([a.shape[i] for i in axes]))
    return reshape(moved, (n,) + moved.shape[len(axes):]), axes


def _kept(out: Array, a_shape: tuple, axes: tuple, qndim: int) -> Array:
    shape = out.shape[:qndim] + tuple(1 if i in axes else n for i, n in enumerate(a_shape))
    return reshape(out, shape)


def _q_of(q: Any) -> tuple[Any, np.ndarray]:
    raw = np.asarray(q.concrete().to_numpy() if isinstance(q, Array) else q,
                     dtype=np.float64)
    if raw.size and (raw.min() < 0 or raw.max() > 1):
        raise ValueError("Quantiles must be in the range [0, 1]")
    return q, raw


def _quantile(a: Any, q: Any, axis: Any, method: str, keepdims: bool, weights: Any,
              ignore_nan: bool) -> Array:
    if method not in _CONTINUOUS and method not in _DISCRETE:
        raise ValueError(f"'{method}' is not a valid method. Use one of: "
                         f"{list(_CONTINUOUS) + list(_DISCRETE)}")
    a_in = asarray(a)
    flat, axes = _prepare(a_in, axis)
    q, q_raw = _q_of(q)
    dtype = flat.dtype  # (jax.numpy's: a's inexact dtype, whatever q's)
    if weights is not None:
        out = _weighted_quantile(flat, a_in, axes, q_raw, weights, method)
    elif flat.shape[0] == 0:
        out = new_array(np.full(q_raw.shape + flat.shape[1:], np.nan, flat.dtype))
    else:
        s = sort(flat, 0)
        n = flat.shape[0]
        if ignore_nan:
            n = np.asarray(flat.shape[0] - np.isnan(s.concrete().to_numpy()).sum(axis=0))
        out = _quantile_sorted(s, q, q_raw, n, method)
        if not ignore_nan:
            out = where(isnan(getitem(s, -1)), np.nan, out)
    out = out if out.dtype == dtype else astype(out, dtype)
    return _kept(out, a_in.shape, axes, q_raw.ndim) if keepdims else out


def _weighted_quantile(flat: Array, a: Array, axes: tuple, q_raw: np.ndarray, weights: Any,
                       method: str) -> Array:
    """inverted_cdf with weights: the first sorted value whose weight share reaches q."""
    if method != "inverted_cdf":
        raise ValueError("Only method 'inverted_cdf' supports weights")
    w = np.asarray(asarray(weights).concrete().to_numpy(), dtype=np.float64)
    if w.shape != a.shape:
        if len(axes) != 1 or w.shape != (a.shape[axes[0]],):
            raise ValueError("Shape of weights must be consistent with shape of a along "
                             "specified axis.")
        w = np.moveaxis(np.broadcast_to(w.reshape([-1 if i == axes[0] else 1 for i in
                                                   range(a.ndim)]), a.shape), axes[0], 0)
    else:
        w = np.moveaxis(w, axes, tuple(range(len(axes))))
    if (w < 0).any():
        raise ValueError("Weights must be non-negative.")
    w = w.reshape(flat.shape)
    order = argsort(flat, 0)
    order_raw = np.asarray(order.to_numpy())
    cdf = np.cumsum(np.take_along_axis(w, order_raw, 0), axis=0)
    cols = cdf.reshape(cdf.shape[0], -1)
    pos = np.stack([np.searchsorted(c, q_raw.ravel() * c[-1], side="left") for c in cols.T],
                   axis=-1).reshape(q_raw.shape + flat.shape[1:])
    pos = np.minimum(pos, flat.shape[0] - 1)
    return _gather_rows(sort(flat, 0), pos)


def quantile(a: Any, q: Any, axis: Any = None, out: Any = None,
             overwrite_input: bool = False, method: str = "linear",
             keepdims: bool = False, *, weights: Any = None,
             interpolation: Any = None) -> Array:
    """The q-th quantiles (q in [0, 1]) over ``axis``, by numpy's ``method``s; the
    result's leading axes are q's. A slice holding a NaN gives NaN."""
    no_out(out, "quantile")
    return _quantile(a, q, axis, interpolation or method, keepdims, weights, False)


def percentile(a: Any, q: Any, axis: Any = None, out: Any = None,
               overwrite_input: bool = False, method: str = "linear",
               keepdims: bool = False, *, weights: Any = None,
               interpolation: Any = None) -> Array:
    """The q-th percentiles (q in [0, 100]); see quantile."""
    no_out(out, "percentile")
    q = asarray(q) / 100 if isinstance(q, Array) else np.true_divide(q, 100)
    _check_percent(q)
    return _quantile(a, q, axis, interpolation or method, keepdims, weights, False)


def _check_percent(q: Any) -> None:
    raw = np.asarray(q.concrete().to_numpy() if isinstance(q, Array) else q)
    if raw.size and (raw.min() < 0 or raw.max() > 1):
        raise ValueError("Percentiles must be in the range [0, 100]")


def median(a: Any, axis: Any = None, out: Any = None, overwrite_input: bool = False,
           keepdims: bool = False) -> Array:
    """The median over ``axis``: the middle value, or the mean of the two middle ones."""
    no_out(out, "median")
    return _median(a, axis, keepdims, False)


def _median(a: Any, axis: Any, keepdims: bool, ignore_nan: bool) -> Array:
    if ignore_nan:
        return _quantile(a, 0.5, axis, "linear", keepdims, None, True)
    a_in = asarray(a)
    flat, axes = _prepare(a_in, axis)
    n = flat.shape[0]
    if n == 0:
        out = new_array(np.full(flat.shape[1:], np.nan, flat.dtype))
    else:
        s = sort(flat, 0)
        mid = getitem(s, n // 2)
        out = mid if n % 2 else (getitem(s, n // 2 - 1) + mid) / 2
        out = where(isnan(getitem(s, -1)), np.nan, out)
    return _kept(out, a_in.shape, axes, 0) if keepdims else out


def nanquantile(a: Any, q: Any, axis: Any = None, out: Any = None,
                overwrite_input: bool = False, method: str = "linear",
                keepdims: bool = False, *, weights: Any = None,
                interpolation: Any = None) -> Array:
    """quantile ignoring NaNs (an all-NaN slice gives NaN)."""
    no_out(out, "nanquantile")
    if weights is not None:
        raise NotImplementedError("nanquantile: weights are not supported; drop the NaNs "
                                  "and use quantile(..., weights=)")
    return _quantile(a, q, axis, interpolation or method, keepdims, None, True)


def nanpercentile(a: Any, q: Any, axis: Any = None, out: Any = None,
                  overwrite_input: bool = False, method: str = "linear",
                  keepdims: bool = False, *, weights: Any = None,
                  interpolation: Any = None) -> Array:
    """percentile ignoring NaNs."""
    q = asarray(q) / 100 if isinstance(q, Array) else np.true_divide(q, 100)
    _check_percent(q)
    return nanquantile(a, q, axis, out, overwrite_input, method, keepdims,
                       weights=weights, interpolation=interpolation)


def nanmedian(a: Any, axis: Any = None, out: Any = None, overwrite_input: bool = False,
              keepdims: bool = False) -> Array:
    """median ignoring NaNs."""
    no_out(out, "nanmedian")
    return _median(a, axis, keepdims, True)


# -- covariance -----------------------------------------------------------------------------

def cov(m: Any, y: Any = None, rowvar: bool = True, bias: bool = False, ddof: Any = None,
        fweights: Any = None, aweights: Any = None, *, dtype: Any = None) -> Array:
    """The covariance matrix of the variables (rows, or columns with rowvar=False), with
    numpy's frequency and analytic weights."""
    x = asarray(m)
    if x.ndim > 2:
        raise ValueError("m has more than 2 dimensions")
    x = reshape(x, (1, -1)) if x.ndim < 2 else x
    x = x if rowvar or x.shape[0] == 1 and asarray(m).ndim < 2 else x.T
    if y is not None:
        yy = asarray(y)
        yy = reshape(yy, (1, -1)) if yy.ndim < 2 else (yy if rowvar else yy.T)
        x = vstack([x, yy])
    dt = np.dtype(dtype) if dtype is not None else computed_dtype(x, rule=INEXACT)
    x = astype(x, dt)
    ddof = (0 if bias else 1) if ddof is None else operator.index(ddof)
    w = _cov_weights(x.shape[1], fweights, aweights)
    if w is None:
        avg = mean(x, axis=1)
        fact = x.shape[1] - ddof
    else:
        w_sum = sum(w)
        avg = sum(x * w, axis=1) / w_sum
        fact = w_sum - ddof if aweights is None else \
            w_sum - ddof * sum(w * asarray(aweights)) / w_sum
    xc = x - reshape(avg, (-1, 1))
    xw = xc if w is None else xc * w
    c = matmul(xw, conj(xc).T) / fact
    return reshape(c, ()) if c.shape == (1, 1) else c


def _cov_weights(n: int, fweights: Any, aweights: Any) -> Any:
    w = None
    if fweights is not None:
        f = asarray(fweights)
        if f.ndim > 1 or f.shape[0] != n:
            raise RuntimeError("incompatible numbers of samples and fweights")
        if bool(_any(less(f, 0))):
            raise ValueError("fweights cannot be negative")
        w = astype(f, np.float64)
    if aweights is not None:
        a = asarray(aweights)
        if a.ndim > 1 or a.shape[0] != n:
            raise RuntimeError("incompatible numbers of samples and aweights")
        if bool(_any(less(a, 0))):
            raise ValueError("aweights cannot be negative")
        w = a if w is None else w * a
    return w


def corrcoef(x: Any, y: Any = None, rowvar: bool = True, *, dtype: Any = None) -> Array:
    """Pearson correlation coefficients: cov normalised by the standard deviations (real
    parts clipped to [-1, 1] as numpy does)."""
    c = cov(x, y, rowvar, dtype=dtype)
    if c.ndim == 0:
        return c / c
    d = diagonal(c)
    c = c / sqrt(real(outer(d, d)) if c.dtype.kind == "c" else outer(d, d))
    if c.dtype.kind == "c":
        return clip(real(c), -1, 1) + 1j * clip(imag(c), -1, 1)
    return clip(c, -1, 1)


# -- histograms and counts ----------------------------------------------------------------------

def bincount(x: Any, weights: Any = None, minlength: Any = 0, *,
             length: Any = None) -> Array:
    """How often each non-negative integer occurs in x (or the sum of its ``weights``,
    differentiably); at least ``minlength`` bins (exactly ``length`` if given)."""
    x = asarray(x)
    raw = np.asarray(x.concrete().to_numpy())
    if raw.ndim != 1:
        raise ValueError("object too deep for desired array" if raw.ndim > 1 else
                         "object of too small depth for desired array")
    if raw.dtype.kind not in "iub" and raw.size:
        raise TypeError("Cannot cast array data from dtype('float64') to dtype('int64') "
                        "according to the rule 'safe'")
    if raw.size and raw.min() < 0:
        raise ValueError("'list' argument must have no negative elements")
    size = max(int(raw.max()) + 1 if raw.size else 0, operator.index(minlength))
    size = operator.index(length) if length is not None else size
    keep = raw < size
    idx = new_array(raw[keep].astype(np.intp)[None])
    if weights is None:
        counts = np.bincount(raw[keep], minlength=size)[:size]
        return new_array(counts.astype(default_int()))
    w = asarray(weights)
    if w.shape != x.shape:
        raise ValueError("The weights and list don't have the same length.")
    w = astype(w, np.result_type(w.dtype, np.float64) if w.dtype.kind != "c" else w.dtype)
    picked = getitem(w, np.flatnonzero(keep)) if not keep.all() else w
    return scatter_add(picked, idx, index=Index((Ref(0),)), shape=(size,))


def histogram_bin_edges(a: Any, bins: Any = 10, range: Any = None,
                        weights: Any = None) -> Array:
    """numpy's bin edges for a histogram of a (see `_edges` for their derivatives)."""
    a = ravel(asarray(a))
    raw = np.asarray(a.concrete().to_numpy())
    w = None if weights is None else np.asarray(asarray(weights).concrete().to_numpy())
    return _edges(a, raw, bins, range, w)[0]


def _edges(column: Array, raw: np.ndarray, bins: Any, range_: Any,
           weights: Any = None) -> tuple[Array, np.ndarray]:
    """(the bin edges of one sample column as numpy picks them, their values). Given edges
    are the Array given (differentiable); ``bins`` equal bins over the data's own range are
    a linspace from its min to its max (differentiable in those two elements); a given
    range, an estimator's ('auto', 'fd', ...) edges and an empty or constant column give
    constants."""
    if isinstance(bins, Array) or (not isinstance(bins, str) and np.ndim(bins) == 1):
        edges = asarray(bins)
        return edges, np.asarray(edges.concrete().to_numpy())
    values = np.histogram_bin_edges(raw, bins, range_, weights)
    if isinstance(bins, str) or range_ is not None or not raw.size or raw.min() == raw.max():
        return new_array(values), values
    return linspace(_min(column), _max(column), len(values), dtype=values.dtype), values


def histogram(a: Any, bins: Any = 10, range: Any = None, density: Any = None,
              weights: Any = None) -> tuple:
    """(counts, or weight sums, per bin; bin edges); differentiable in ``weights``.
    ``density`` divides by the total and the bin widths."""
    a = ravel(asarray(a))
    hist, edges = _binned(reshape(a, (-1, 1)), [bins], None if range is None else [range],
                          density, weights)
    inexact = computed_dtype(a, rule=INEXACT)  # jax.numpy's dtype of counts and edges
    if weights is None and not density:
        hist = astype(hist, inexact)
    return hist, astype(edges[0], inexact)


def histogram2d(x: Any, y: Any, bins: Any = 10, range: Any = None, density: Any = None,
                weights: Any = None) -> tuple:
    """(counts per 2-D bin, x edges, y edges); differentiable in ``weights``."""
    nb = bins if isinstance(bins, (list, tuple)) and len(bins) == 2 else [bins, bins]
    hist, edges = _binned(stack([ravel(asarray(x)), ravel(asarray(y))], 1), nb, range,
                          density, weights)
    return hist, edges[0], edges[1]


def histogramdd(sample: Any, bins: Any = 10, range: Any = None, density: Any = None,
                weights: Any = None) -> tuple:
    """(counts per D-dimensional bin, [edges per dimension]); samples are rows (N, D).
    Bins follow numpy (the last one closed); differentiable in ``weights``."""
    s = asarray(sample)
    return _binned(reshape(s, (-1, 1)) if s.ndim == 1 else s, bins, range, density,
                   weights)


def _bin_of(raw: np.ndarray, edges: list) -> tuple[np.ndarray, np.ndarray]:
    """(flat bin index of each sample inside the edges, which samples are inside)."""
    coords = []
    for i, e in enumerate(edges):
        k = np.searchsorted(e, raw[:, i], side="right")
        k[raw[:, i] == e[-1]] -= 1  # the last bin is closed on the right
        coords.append(k)
    coords = np.stack(coords) if coords else np.zeros((0, raw.shape[0]), np.intp)
    upper = np.array([len(e) - 1 for e in edges])[:, None]
    inside = np.all((coords >= 1) & (coords <= upper), axis=0)
    shape = tuple(len(e) - 1 for e in edges)
    flat = np.ravel_multi_index(tuple(c[inside] - 1 for c in coords), shape)
    return flat.astype(np.intp), inside


def _binned(s: Array, bins: Any, ranges: Any, density: Any, weights: Any) -> tuple:
    raw = np.asarray(s.concrete().to_numpy(), dtype=np.float64)
    d = raw.shape[1]
    one = isinstance(bins, (str, int, np.integer)) or (isinstance(bins, Array) and bins.ndim == 0)
    bins = [bins] * d if one else list(bins)
    ranges = [None] * d if ranges is None else list(ranges)
    if len(bins) != d:
        raise ValueError("The dimension of bins must be equal to the dimension of the "
                         "sample x.")
    found = [_edges(s[:, i], raw[:, i], b, r) for i, (b, r) in enumerate(zip(bins, ranges))]
    edges = [values for _, values in found]
    shape = tuple(len(e) - 1 for e in edges)
    flat, inside = _bin_of(raw, edges)
    size = int(np.prod(shape))
    if weights is None:
        hist = new_array(np.bincount(flat, minlength=size).astype(np.float64).reshape(shape))
    else:
        w = ravel(asarray(weights))
        w = w if w.dtype.kind in "fc" else astype(w, np.float64)
        picked = getitem(w, np.flatnonzero(inside)) if not inside.all() else w
        hist = reshape(scatter_add(picked, new_array(flat[None]), index=Index((Ref(0),)),
                                   shape=(size,)), shape)
    if density:
        total = sum(hist)
        for i, (e, _) in enumerate(found):
            width = e[1:] - e[:-1]
            hist = hist / reshape(width, [-1 if j == i else 1 for j in builtins.range(d)])
        hist = hist / total
    return hist, [e for e, _ in found]
