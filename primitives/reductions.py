"""Reductions and scans.

``axis`` of a reduction is always a normalised tuple of non-negative axes and ``keepdims``
a bool (a scan takes one non-negative int axis); the numpy-signature wrappers in
`funcgrad.numpy` normalise them. ``_expand(g)`` below re-inserts reduced axes so that a
cotangent broadcasts against the input.

| primitive         | VJP                                           | JVP                        |
|-------------------|-----------------------------------------------|----------------------------|
| reduce_sum        | g broadcast to x                              | reduce_sum(t)              |
| reduce_max / min  | g * tie_weights (split equally among ties)    | reduce_sum(t * weights)    |
| reduce_prod       | g * product of the others (no division)       | reduce_sum(t * others)     |
| cumsum            | reversed cumsum of g                          | cumsum(t)                  |
| cumprod           | exclusive cumprod * transposed recurrence of g| recurrence of t * excl.    |
| linear_recurrence | h = a * h[k-1] + b, and its transpose          | itself                     |
| logsumexp         | g * exp(x - out) (the softmax)                | reduce_sum(t * softmax)    |
| log_softmax       | g - exp(out) * reduce_sum(g)                  | t - reduce_sum(t * exp(out))|
| nll_loss          | -g * weight [/ total] at the target classes   | nll_loss(t) (it is linear)  |

Products never divide by x: "the product of all the others" is an exclusive left times an
exclusive right cumulative product, and cumprod's derivative is the linear recurrence
``u[k] = g[k] + x[k+1] u[k+1]``, so every rule is exact with zeros among the inputs and
differentiable again (the recurrence's rules are recurrences).
argmax, argmin, all, any and tie_weights are not differentiable.

logsumexp and log_softmax are primitives rather than compositions (a shift by the max,
exp, sum, log) because they sit in every classifier's loss: one record instead of six, and
rules that never see the shift. Their implementations shift by the max (0 where it is not
finite), so no exp overflows; their rules only take exp of ``x - out`` or of ``out``, which
are <= 0. nll_loss, the other half of a classifier's loss, is one primitive for the same
reason (a gather, a weighting and a sum would be three records and a scatter).
"""
from __future__ import annotations

import math
from typing import Any, Callable

import numpy as np

from funcgrad.backend import wrap_on
from funcgrad.core import Primitive
from . import sampling
from .binary import equal
from .elementwise import exp
from .indexing import slice_axis
from .shape import broadcast_to, pad, reshape, transpose


# -- helpers used by the rules (all funcgrad ops) -------------------------------------------

def _expand(g: Any, axis: tuple, keepdims: bool) -> Any:
    """Re-insert reduced axes into a cotangent so that it broadcasts against the input."""
    if keepdims or not axis:
        return g
    shape = list(g.shape)
    for a in sorted(axis):
        shape.insert(a, 1)
    return reshape(g, shape=tuple(shape))


def shape_broadcast_to(g: Any, shape: tuple) -> Any:
    """g broadcast to ``shape`` (g itself when it has that shape)."""
    return g if g.shape == tuple(shape) else broadcast_to(g, shape=tuple(shape))


def _flip(x: Any, axis: int) -> Any:
    return slice_axis(x, axis, None, None, -1)


def _shift(x: Any, axis: int, fill: float) -> Any:
    """x moved one place up along ``axis``: [fill, x0, ..., x(n-2)]."""
    widths = tuple((1, 0) if i == axis else (0, 0) for i in range(x.ndim))
    return slice_axis(pad(x, pad_width=widths, constant_values=fill), axis, None, x.shape[axis])


def _exclusive_cumprod(x: Any, axis: int) -> Any:
    """[1, x0, x0 x1, ...]: the product of the elements before each one."""
    return cumprod(_shift(x, axis, 1), axis=axis)


def _recurrence_transpose(a: Any, g: Any, axis: int) -> Any:
    """u with u[k] = g[k] + a[k+1] u[k+1]: the transpose of b -> linear_recurrence(a, b)."""
    return _flip(linear_recurrence(_shift(_flip(a, axis), axis, 0), _flip(g, axis),
                                   axis=axis), axis)


def _permute(x: Any, axes: tuple) -> Any:
    return x if axes == tuple(range(x.ndim)) else transpose(x, axes=axes)


def _others_product(x: Any, axis: tuple) -> Any:
    """For each element, the product of the other elements of its reduced group: the
    reduced axes are moved last and flattened, then exclusive products from both ends."""
    if x.size == 0:
        return x
    perm = tuple(i for i in range(x.ndim) if i not in axis) + tuple(axis)
    moved = _permute(x, perm)
    last = x.ndim - len(axis)
    flat = reshape(moved, shape=moved.shape[:last] + (_size(moved.shape[last:]),))
    others = (_exclusive_cumprod(flat, last)
              * _flip(_exclusive_cumprod(_flip(flat, last), last), last))
    return _permute(reshape(others, shape=moved.shape),
                    tuple(int(i) for i in np.argsort(perm)))


def _size(shape: tuple) -> int:
    return int(np.prod(shape, dtype=np.int64))


# -- implementations ----------------------------------------------------------------------

def _tie_weights(x: Any, out: Any, axis: tuple) -> Any:
    hit = x == out
    return (hit / np.sum(hit, axis=axis, keepdims=True)).astype(x.dtype, copy=False)


def _linear_recurrence(a: Any, b: Any, axis: int) -> Any:
    dtype = np.result_type(a.dtype, b.dtype)
    h = np.moveaxis(b, axis, 0).astype(dtype, copy=True)
    a = np.moveaxis(a, axis, 0)
    for k in range(1, h.shape[0]):
        h[k] += a[k] * h[k - 1]
    return np.moveaxis(h, 0, axis)


# -- samplers ------------------------------------------------------------------------------

def _distinct(rng: np.random.RandomState, shape: tuple) -> np.ndarray:
    """Values at least 0.08 apart (no ties within a finite-difference step)."""
    n = _size(shape)
    return (rng.permutation(n) * 0.1 - 0.1 * n / 2 + rng.uniform(0, 0.02, n)).reshape(shape)


def _with_zeros(rng: np.random.RandomState, shape: tuple) -> np.ndarray:
    """Values in ±(0.5, 1.5) with about a quarter of them exactly zero."""
    x = sampling.values(rng, shape, (0.5, 1.5), signed=True)
    return np.where(rng.uniform(size=shape) < 0.25, 0.0, x)


def _axes_case(prim: Primitive, values: Callable = sampling.values,
               nonempty: bool = False, keepdims: bool = True) -> Any:
    """Sampler: a random array, a random subset of its axes and, when the primitive takes
    one, keepdims (``nonempty``: only axes of non-zero length, for reductions without an
    identity)."""
    def cases(rng: np.random.RandomState, draw: Any) -> list:
        from hypothesis import strategies as st
        shape = sampling.draw_shape(draw)
        axes = tuple(i for i, n in enumerate(shape)
                     if (n or not nonempty) and draw(st.booleans()))
        params = {"axis": axes}
        if keepdims:
            params["keepdims"] = draw(st.booleans())
        return [sampling.Case(lambda x: prim(x, **params), (values(rng, shape),),
                              f"{shape} {params}")]
    return sampling.custom(cases)


def _scan_case(fun: Callable, values: Callable, nargs: int = 1) -> Any:
    """Sampler: arrays of one random shape (ndim >= 1) scanned along a random axis."""
    def cases(rng: np.random.RandomState, draw: Any) -> list:
        from hypothesis import strategies as st
        shape = sampling.draw_shape(draw, min_dims=1, max_side=4)
        axis = draw(st.integers(0, len(shape) - 1))
        return [sampling.Case(lambda *xs: fun(*xs, axis=axis),
                              tuple(values(rng, shape) for _ in range(nargs)),
                              f"{shape} axis={axis}")]
    return sampling.custom(cases)


# -- primitives ----------------------------------------------------------------------------

def _reduction(name: str, impl: Callable, values: Callable = sampling.values,
               nonempty: bool = False, differentiable: bool = True,
               ufunc: np.ufunc | None = None) -> Primitive:
    """A reduction over static axes. ``ufunc``, when given, reduces numpy arrays directly
    (``np.sum`` and its kin are Python wrappers around it: same result, less overhead);
    other arrays (cupy) go through ``impl``."""
    def reduce(x: Any, axis: Any, keepdims: bool) -> Any:
        if ufunc is not None and type(x) is np.ndarray:
            return ufunc.reduce(x, axis=axis, keepdims=keepdims)
        return impl(x, axis=axis, keepdims=keepdims)
    p = Primitive(name, reduce, params=("axis", "keepdims"), differentiable=differentiable)
    if differentiable:
        p.sample = _axes_case(p, values, nonempty)
    return p


reduce_sum = _reduction("reduce_sum", np.sum, ufunc=np.add)
reduce_max = _reduction("reduce_max", np.max, _distinct, nonempty=True, ufunc=np.maximum)
reduce_min = _reduction("reduce_min", np.min, _distinct, nonempty=True, ufunc=np.minimum)
reduce_prod = _reduction("reduce_prod", np.prod, _with_zeros, ufunc=np.multiply)
cumsum = Primitive("cumsum", lambda x, axis: np.cumsum(x, axis=axis), params=("axis",))
cumsum.sample = _scan_case(cumsum, sampling.values)
cumprod = Primitive("cumprod", lambda x, axis: np.cumprod(x, axis=axis), params=("axis",))
cumprod.sample = _scan_case(cumprod, _with_zeros)
linear_recurrence = Primitive(
    "linear_recurrence", _linear_recurrence, ("a", "b"), ("axis",),
    doc="h with h[k] = a[k] h[k-1] + b[k] along axis (h[-1] = 0; a[0] is not used); "
    "a and b have one shape.")
linear_recurrence.sample = _scan_case(linear_recurrence, _with_zeros, nargs=2)

tie_weights = Primitive("tie_weights", _tie_weights, ("x", "out"), ("axis",),
                        differentiable=False,
                        doc="(x == out) / count over axis: where a max or min is attained.")
argmax = _reduction("argmax", np.argmax, differentiable=False)  # axis: None or one int
argmin = _reduction("argmin", np.argmin, differentiable=False)
reduce_all = _reduction("reduce_all", np.all, differentiable=False, ufunc=np.logical_and)
reduce_any = _reduction("reduce_any", np.any, differentiable=False, ufunc=np.logical_or)


def _logsumexp_impl(x: Any, axis: tuple, keepdims: bool) -> Any:
    if x.size:  # the reductions' own implementations (ufunc.reduce on numpy arrays)
        peak = reduce_max.impl(x, axis, True)
        peak = np.where(np.isfinite(peak), peak, 0)  # all -inf: log(0) + 0 = -inf
        terms = x - peak
        # exp in place on the fresh difference (a 0-d one comes back as a numpy scalar)
        in_place = type(terms) is np.ndarray and terms.dtype.kind in "fc"
        terms = np.exp(terms, out=terms) if in_place else np.exp(terms)
    else:
        peak, terms = 0, np.exp(x)  # an empty sum is 0 whatever the shift
    out = np.log(reduce_sum.impl(terms, axis, True)) + peak
    return out if keepdims else np.squeeze(out, axis)


def _log_softmax_impl(x: Any, axis: tuple) -> Any:
    return x - _logsumexp_impl(x, axis, True)


logsumexp = Primitive("logsumexp", _logsumexp_impl, params=("axis", "keepdims"),
                      doc="log(sum(exp(x))) over axis, without overflow.")
logsumexp.sample = _axes_case(logsumexp, nonempty=True)  # an empty sum: -inf, no derivative
log_softmax = Primitive("log_softmax", _log_softmax_impl, params=("axis",),
                        doc="x - logsumexp(x) over axis (keeping its dimensions).")
log_softmax.sample = _axes_case(log_softmax, keepdims=False)


def _softmax_of(x: Any, out: Any, axis: tuple, keepdims: bool) -> Any:
    return exp(x - _expand(out, axis, keepdims))


def _weighted(p: Primitive, weights: Callable) -> None:
    """Rules of a reduction whose derivative is ``weights(x, out, axis, keepdims)`` (shaped
    like x): VJP ``g * weights``, JVP ``reduce_sum(t * weights)``."""
    p.defvjp(lambda g, x, out, axis, keepdims: _expand(g, axis, keepdims) * weights(
        x, out, axis, keepdims))
    p.defjvp(lambda t, x, out, axis, keepdims: reduce_sum(
        t * weights(x, out, axis, keepdims), axis=axis, keepdims=keepdims))


def _ties(x: Any, out: Any, axis: tuple, keepdims: bool) -> Any:
    return tie_weights(x, _expand(out, axis, keepdims), axis=axis)


reduce_sum.defvjp(lambda g, x_shape, axis, keepdims: shape_broadcast_to(
    _expand(g, axis, keepdims), x_shape))
reduce_sum.defjvp(lambda t, axis, keepdims: reduce_sum(t, axis=axis, keepdims=keepdims))
_weighted(reduce_max, _ties)
_weighted(reduce_min, _ties)
_weighted(reduce_prod, lambda x, out, axis, keepdims: _others_product(x, axis))
_weighted(logsumexp, _softmax_of)
log_softmax.defvjp(lambda g, out, axis: g - exp(out) * reduce_sum(g, axis=axis,
                                                                       keepdims=True))
log_softmax.defjvp(lambda t, out, axis: t - reduce_sum(t * exp(out), axis=axis,
                                                       keepdims=True))

cumsum.defvjp(lambda g, axis: _flip(cumsum(_flip(g, axis), axis=axis), axis))
cumsum.defjvp(lambda t, axis: cumsum(t, axis=axis))
cumprod.defvjp(lambda g, x, axis: _exclusive_cumprod(x, axis) * _recurrence_transpose(
    x, g, axis))
cumprod.defjvp(lambda t, x, axis: linear_recurrence(x, t * _exclusive_cumprod(x, axis),
                                                    axis=axis))
linear_recurrence.defvjp(
    lambda g, a, out, axis: _recurrence_transpose(a, g, axis) * _shift(out, axis, 0),
    lambda g, a, axis: _recurrence_transpose(a, g, axis))
linear_recurrence.defjvp(
    lambda t, a, out, axis: linear_recurrence(a, t * _shift(out, axis, 0), axis=axis),
    lambda t, a, axis: linear_recurrence(a, t, axis=axis))


# -- the negative log-likelihood of class labels ----------------------------------------------

def _nll_loss_impl(logp: Any, target: Any, weight: Any, axis: int, reduction: str) -> Any:
    if type(logp) is np.ndarray and logp.ndim <= 2:  # (C,) or (N, C): one fancy index
        picked = logp[target] if logp.ndim == 1 else logp[np.arange(len(target)), target]
    else:
        picked = np.squeeze(np.take_along_axis(logp, np.expand_dims(target, axis), axis),
                            axis)
    if not _unweighted(weight):
        picked = picked * weight
    if reduction == "none":
        return -picked
    total = -picked.sum()
    return total if reduction == "sum" else total / _total_weight(target, weight, np)


def _unweighted(weight: Any) -> bool:
    return type(weight) in (int, float) and weight == 1


def _total_weight(target: Any, weight: Any, xp: Any) -> Any:
    """What a mean divides by: the sum of the weights of all targets."""
    size = math.prod(target.shape)
    return weight * size if type(weight) in (int, float) else xp.sum(weight)


def _nll_loss_vjp(g: Any, target: Any, weight: Any, logp_shape: tuple, axis: int,
                  reduction: str) -> Any:
    """-g (times the weight, over the total for a mean) at each target's class, 0 at the
    other classes: g, shaped like the target, times the one-hot of the target along axis."""
    import funcgrad.numpy as fnp
    coeff = -g if reduction != "mean" else -g / _total_weight(target, weight, fnp)
    if not _unweighted(weight):
        coeff = coeff * weight
    if coeff.ndim:  # shaped like the target: re-insert the class axis
        coeff = reshape(coeff, shape=coeff.shape[:axis] + (1,) + coeff.shape[axis:])
    classes = np.arange(logp_shape[axis]).reshape((-1,) + (1,) * (len(logp_shape) - axis - 1))
    target = reshape(target, shape=target.shape[:axis] + (1,) + target.shape[axis:])
    return coeff * equal(target, wrap_on(classes, target.concrete()._value))


def _nll_loss_cases(rng: np.random.RandomState, draw: Callable) -> list:
    from hypothesis import strategies as st
    lead = sampling.draw_shape(draw, max_dims=2)  # (N, d...) around the class axis, or ()
    n_cls = draw(st.integers(1, 4))
    shape = lead[:1] + (n_cls,) + lead[1:]
    axis = 1 if lead else 0
    target = rng.randint(n_cls, size=lead)
    weight = 1.0 if draw(st.booleans()) else rng.uniform(0.5, 2.0, lead)
    reduction = draw(st.sampled_from(["none", "sum", "mean"] if np.prod(lead) else ["none", "sum"]))
    return [sampling.Case(lambda x: nll_loss(x, target, weight, axis=axis, reduction=reduction),
                          (sampling.values(rng, shape, (-3.0, -0.1)),),
                          f"{shape} target {lead} axis {axis} {reduction}")]


# -logp[target] along the class axis, times per-target weights (a Python 1.0 for none, or an
# array shaped like the target); "mean" divides by the total weight, as PyTorch's nll_loss
nll_loss = Primitive("nll_loss", _nll_loss_impl, ("logp", "target", "weight"),
                     params=("axis", "reduction"), sample=sampling.custom(_nll_loss_cases),
                     doc="negative log-likelihood of class labels (PyTorch's nll_loss).")
nll_loss.defvjp(_nll_loss_vjp)
nll_loss.defjvp(lambda t, target, weight, axis, reduction: nll_loss(
    t, target, weight, axis=axis, reduction=reduction))
