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

from funcgrad.core import Primitive
from . import sampling
from .binary import equal
from .constants import constant
from .kernels import reductions as kernels
from .samplers import reductions as samplers
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
    return reshape.bind(g, shape=tuple(shape))


def shape_broadcast_to(g: Any, shape: tuple) -> Any:
    """g broadcast to ``shape`` (g itself when it has that shape)."""
    return g if g.shape == tuple(shape) else broadcast_to.bind(g, shape=tuple(shape))


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


# -- primitives ----------------------------------------------------------------------------

def _reduction(name: str, impl: Callable, values: Callable = sampling.values,
               nonempty: bool = False, differentiable: bool = True,
               ufunc: np.ufunc | None = None) -> Primitive:
    """A reduction over static axes (see `kernels.reductions.reduce_with`)."""
    return Primitive(name, kernels.reduce_with(impl, ufunc), params=("axis", "keepdims"),
                     differentiable=differentiable,
                     sample=samplers.axes(values, nonempty) if differentiable else None)


reduce_sum = _reduction("reduce_sum", np.sum, ufunc=np.add)
reduce_max = _reduction("reduce_max", np.max, samplers.distinct, nonempty=True, ufunc=np.maximum)
reduce_min = _reduction("reduce_min", np.min, samplers.distinct, nonempty=True, ufunc=np.minimum)
reduce_prod = _reduction("reduce_prod", np.prod, samplers.with_zeros, ufunc=np.multiply)
cumsum = Primitive("cumsum", lambda x, axis: np.cumsum(x, axis=axis), params=("axis",),
                   sample=samplers.scan(sampling.values))
cumprod = Primitive("cumprod", lambda x, axis: np.cumprod(x, axis=axis), params=("axis",),
                    sample=samplers.scan(samplers.with_zeros))
linear_recurrence = Primitive(
    "linear_recurrence", kernels.linear_recurrence, ("a", "b"), ("axis",),
    sample=samplers.scan(samplers.with_zeros, nargs=2),
    doc="h with h[k] = a[k] h[k-1] + b[k] along axis (h[-1] = 0; a[0] is not used); "
    "a and b have one shape.")

tie_weights = Primitive("tie_weights", kernels.tie_weights, ("x", "out"), ("axis",),
                        differentiable=False,
                        doc="(x == out) / count over axis: where a max or min is attained.")
argmax = _reduction("argmax", np.argmax, differentiable=False)  # axis: None or one int
argmin = _reduction("argmin", np.argmin, differentiable=False)
reduce_all = _reduction("reduce_all", np.all, differentiable=False, ufunc=np.logical_and)
reduce_any = _reduction("reduce_any", np.any, differentiable=False, ufunc=np.logical_or)


# an empty sum is -inf, without a derivative: the sampler draws non-empty axes
logsumexp = Primitive("logsumexp", kernels.logsumexp, params=("axis", "keepdims"),
                      sample=samplers.axes(nonempty=True),
                      doc="log(sum(exp(x))) over axis, without overflow.")
log_softmax = Primitive("log_softmax", kernels.log_softmax, params=("axis",),
                        sample=samplers.axes(keepdims=False),
                        doc="x - logsumexp(x) over axis (keeping its dimensions).")


def _softmax_of(x: Any, out: Any, axis: tuple, keepdims: bool) -> Any:
    return exp.bind(x - _expand(out, axis, keepdims))


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

def _total_weight(target: Any, weight: Any) -> Any:
    """What a mean divides by: the sum of the weights of all targets."""
    if type(weight) in (int, float):
        return weight * math.prod(target.shape)
    return reduce_sum(weight, axis=tuple(range(weight.ndim)), keepdims=False)


def _nll_loss_vjp(g: Any, target: Any, weight: Any, logp_shape: tuple, axis: int,
                  reduction: str) -> Any:
    """-g (times the weight, over the total for a mean) at each target's class, 0 at the
    other classes: g, shaped like the target, times the one-hot of the target along axis."""
    coeff = -g if reduction != "mean" else -g / _total_weight(target, weight)
    if not kernels.unweighted(weight):
        coeff = coeff * weight
    if coeff.ndim:  # shaped like the target: re-insert the class axis
        coeff = reshape(coeff, shape=coeff.shape[:axis] + (1,) + coeff.shape[axis:])
    classes = np.arange(logp_shape[axis]).reshape((-1,) + (1,) * (len(logp_shape) - axis - 1))
    target = reshape(target, shape=target.shape[:axis] + (1,) + target.shape[axis:])
    return coeff * equal(target, constant(target, classes))


# -logp[target] along the class axis, times per-target weights (a Python 1.0 for none, or an
# array shaped like the target); "mean" divides by the total weight, as PyTorch's nll_loss
nll_loss = Primitive("nll_loss", kernels.nll_loss, ("logp", "target", "weight"),
                     params=("axis", "reduction"), sample=samplers.nll_loss,
                     doc="negative log-likelihood of class labels (PyTorch's nll_loss).")
nll_loss.defvjp(_nll_loss_vjp)
nll_loss.defjvp(lambda t, target, weight, axis, reduction: nll_loss(
    t, target, weight, axis=axis, reduction=reduction))


# -- batching rules (vmap): the batch axis in front, the axis params shifted past it ------------
# (imported here: funcgrad.primitives.batching builds on the shape primitives)
from .batching import broadcasting, materialize, to_front  # noqa: E402

for _p in (reduce_sum, reduce_max, reduce_min, reduce_prod, reduce_all, reduce_any, logsumexp,
           cumsum, cumprod, log_softmax, tie_weights):
    broadcasting(_p, axes=("axis",))
broadcasting(linear_recurrence, axes=("axis",), same_shape=True)


def _batch_arg_reduction(p: Primitive) -> Callable:
    """argmax/argmin: ``axis=None`` (the flattened array) becomes the flattened example."""
    def rule(args: tuple, dims: tuple, axis: Any, keepdims: bool) -> tuple:
        x = to_front(args[0], dims[0])
        if axis is not None:
            return p(x, axis=axis + 1 if axis >= 0 else axis, keepdims=keepdims), 0
        flat = p(reshape(x, shape=(x.shape[0], -1)), axis=1, keepdims=False)
        return (reshape(flat, shape=(x.shape[0],) + (1,) * (x.ndim - 1)) if keepdims
                else flat), 0
    return rule


argmax.defbatch(_batch_arg_reduction(argmax))
argmin.defbatch(_batch_arg_reduction(argmin))


def _batch_nll_loss(args: tuple, dims: tuple, axis: int, reduction: str) -> tuple:
    """Per-element losses of every example at once (reduction 'none'), then each
    example's sum or weighted mean."""
    size = next(a.shape[d] for a, d in zip(args, dims) if d is not None)
    logp, target, weight = args
    logp, target = (materialize(a, d, size) for a, d in zip((logp, target), dims))
    if dims[2] is not None or not (type(weight) in (int, float)):
        weight = materialize(weight, dims[2], size)
    losses = nll_loss(logp, target, weight, axis=axis + 1, reduction="none")
    if reduction == "none":
        return losses, 0
    every = tuple(range(1, losses.ndim))
    total = reduce_sum(losses, axis=every, keepdims=False)
    if reduction == "sum":
        return total, 0
    if type(weight) in (int, float):
        return total / (weight * math.prod(target.shape[1:])), 0
    return total / reduce_sum(weight, axis=every, keepdims=False), 0


nll_loss.defbatch(_batch_nll_loss)
