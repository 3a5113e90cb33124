"""``kl_divergence(p, q)`` and ``register_kl``: KL(p || q) by the most specific registered
pair of families, PyTorch's closed forms."""
from __future__ import annotations

import math
from typing import Callable

from funcgrad.torch import linalg
from funcgrad.torch._tensor import Tensor
from funcgrad.torch.distributions.distribution import Distribution
from funcgrad.torch.distributions.families import (Bernoulli, Categorical, Exponential,
                                                   Independent, Laplace,
                                                   MultivariateNormal, Normal, Uniform)
from funcgrad.torch.nn import functional as F

__all__ = ["kl_divergence", "register_kl"]

_KL: dict = {}


def register_kl(type_p: type, type_q: type) -> Callable:
    """Register ``fn(p, q)`` as KL(p || q) for instances of these types."""
    def deco(fn: Callable) -> Callable:
        _KL[type_p, type_q] = fn
        return fn
    return deco


def _lookup(type_p: type, type_q: type) -> Callable | None:
    """The registered pair closest to (type_p, type_q) in both method resolution orders."""
    matches = [(type_p.__mro__.index(p) + type_q.__mro__.index(q), fn)
               for (p, q), fn in _KL.items()
               if issubclass(type_p, p) and issubclass(type_q, q)]
    return min(matches, key=lambda m: m[0])[1] if matches else None


def kl_divergence(p: Distribution, q: Distribution) -> Tensor:
    fn = _lookup(type(p), type(q))
    if fn is None:
        raise NotImplementedError(f"No KL(p || q) is implemented for p type "
                                  f"{type(p).__name__} and q type {type(q).__name__}")
    return fn(p, q)


@register_kl(Normal, Normal)
def _normal_normal(p: Normal, q: Normal) -> Tensor:
    var_ratio = (p.scale / q.scale).pow(2)
    t1 = ((p.loc - q.loc) / q.scale).pow(2)
    return 0.5 * (var_ratio + t1 - 1 - var_ratio.log())


@register_kl(Bernoulli, Bernoulli)
def _bernoulli_bernoulli(p: Bernoulli, q: Bernoulli) -> Tensor:
    t1 = p.probs * (F.softplus(-q.logits) - F.softplus(-p.logits))
    t1 = t1.masked_fill(q.probs == 0, math.inf).masked_fill(p.probs == 0, 0)
    t2 = (1 - p.probs) * (F.softplus(q.logits) - F.softplus(p.logits))
    t2 = t2.masked_fill(q.probs == 1, math.inf).masked_fill(p.probs == 1, 0)
    return t1 + t2


@register_kl(Categorical, Categorical)
def _categorical_categorical(p: Categorical, q: Categorical) -> Tensor:
    t = p.probs * (p.logits - q.logits)
    t = t.masked_fill((q.probs == 0).expand_as(t), math.inf)
    t = t.masked_fill((p.probs == 0).expand_as(t), 0)
    return t.sum(-1)


@register_kl(Uniform, Uniform)
def _uniform_uniform(p: Uniform, q: Uniform) -> Tensor:
    result = ((q.high - q.low) / (p.high - p.low)).log()
    return result.masked_fill((q.low > p.low) | (q.high < p.high), math.inf)


@register_kl(Exponential, Exponential)
def _exponential_exponential(p: Exponential, q: Exponential) -> Tensor:
    rate_ratio = q.rate / p.rate
    return rate_ratio - 1 - rate_ratio.log()


@register_kl(Laplace, Laplace)
def _laplace_laplace(p: Laplace, q: Laplace) -> Tensor:
    scale_ratio = p.scale / q.scale
    loc_abs_diff = (p.loc - q.loc).abs()
    t1 = -scale_ratio.log()
    t2 = loc_abs_diff / q.scale
    t3 = scale_ratio * (-loc_abs_diff / p.scale).exp()
    return t1 + t2 + t3 - 1


@register_kl(MultivariateNormal, MultivariateNormal)
def _mvn_mvn(p: MultivariateNormal, q: MultivariateNormal) -> Tensor:

    n = p.event_shape[0]
    half_term1 = q._tril.diagonal(dim1=-2, dim2=-1).log().sum(-1) - \
        p._tril.diagonal(dim1=-2, dim2=-1).log().sum(-1)
    term2 = linalg.solve_triangular(q._tril, p._tril, upper=False).pow(2).sum((-2, -1))
    diff = (q.loc - p.loc).unsqueeze(-1)
    term3 = linalg.solve_triangular(q._tril, diff, upper=False).pow(2).sum((-2, -1))
    return half_term1 + 0.5 * (term2 + term3 - n)


@register_kl(Independent, Independent)
def _independent_independent(p: Independent, q: Independent) -> Tensor:
    if p.reinterpreted_batch_ndims != q.reinterpreted_batch_ndims:
        raise NotImplementedError
    result = kl_divergence(p.base_dist, q.base_dist)
    for _ in range(p.reinterpreted_batch_ndims):
        result = result.sum(-1)
    return result
