"""The distribution families: PyTorch's formulas for log densities, entropies, moments and
(reparameterized) samplers, written with facade ops so that gradients reach the
parameters. Draws come from the facade's generator (``torch.manual_seed``)."""
from __future__ import annotations

import math
from typing import Any

from funcgrad.torch import _factories, linalg
from funcgrad.torch._runtime import dtypes as D
from funcgrad.torch._numeric_info import finfo
from funcgrad.torch._ops_basic import FUNCTIONS
from funcgrad.torch._tensor import Tensor
from funcgrad.torch.distributions import constraints
from funcgrad.torch.distributions.distribution import (LOG_SQRT_2PI, Distribution,
                                                       broadcast_all, logits_to_probs,
                                                       probs_to_logits)
from funcgrad.torch.nn import functional as F

__all__ = ["Normal", "Uniform", "Laplace", "Exponential", "Bernoulli", "Categorical",
           "MultivariateNormal", "Independent"]


def _noise(kind: str, shape: Any, like: Tensor) -> Tensor:
    """Standard normal (``"normal"``) or uniform [0, 1) (``"uniform"``) draws."""
    draw = _factories.randn if kind == "normal" else _factories.rand
    return draw(*shape, dtype=like.dtype, device=like.device)


class _LocationScale(Distribution):
    """A family of a location and a (positive) scale on the real line."""

    arg_constraints = {"loc": constraints.real, "scale": constraints.positive}
    support = constraints.real
    has_rsample = True

    def __init__(self, loc: Any, scale: Any, validate_args: bool | None = None) -> None:
        self.loc, self.scale = broadcast_all(loc, scale)
        super().__init__(self.loc.size(), validate_args=validate_args)

    mean = mode = property(lambda self: self.loc)


class Normal(_LocationScale):
    stddev = property(lambda self: self.scale)
    variance = property(lambda self: self.scale.pow(2))

    def rsample(self, sample_shape: Any = ()) -> Tensor:
        return self.loc + _noise("normal", self._extended_shape(sample_shape),
                                 self.loc) * self.scale

    def log_prob(self, value: Tensor) -> Tensor:
        self._check(value)
        return -((value - self.loc) ** 2) / (2 * self.scale ** 2) - self.scale.log() - \
            LOG_SQRT_2PI

    def cdf(self, value: Tensor) -> Tensor:
        self._check(value)
        return 0.5 * (1 + FUNCTIONS["erf"]((value - self.loc) * self.scale.reciprocal() /
                                           math.sqrt(2)))

    def icdf(self, value: Tensor) -> Tensor:
        return self.loc + self.scale * FUNCTIONS["erfinv"](2 * value - 1) * math.sqrt(2)

    def entropy(self) -> Tensor:
        return 0.5 + 0.5 * math.log(2 * math.pi) + self.scale.log()

    def expand(self, batch_shape: Any) -> "Normal":
        return Normal(self.loc.expand(batch_shape), self.scale.expand(batch_shape),
                      validate_args=False)


class Uniform(Distribution):
    has_rsample = True

    def __init__(self, low: Any, high: Any, validate_args: bool | None = None) -> None:
        self.low, self.high = broadcast_all(low, high)
        super().__init__(self.low.size(), validate_args=validate_args)

    @property
    def arg_constraints(self) -> dict:
        return {"low": constraints.less_than(self.high),
                "high": constraints.greater_than(self.low)}

    @property
    def support(self) -> Any:
        return constraints.interval(self.low, self.high)

    mean = property(lambda self: (self.high + self.low) / 2)
    mode = property(lambda self: math.nan * self.high)
    stddev = property(lambda self: (self.high - self.low) / 12 ** 0.5)
    variance = property(lambda self: (self.high - self.low).pow(2) / 12)

    def rsample(self, sample_shape: Any = ()) -> Tensor:
        u = _noise("uniform", self._extended_shape(sample_shape), self.low)
        return self.low + u * (self.high - self.low)

    def log_prob(self, value: Tensor) -> Tensor:
        self._check(value)
        inside = self.low.le(value).type_as(self.low) * self.high.gt(value).type_as(self.low)
        return inside.log() - (self.high - self.low).log()

    def cdf(self, value: Tensor) -> Tensor:
        self._check(value)
        return ((value - self.low) / (self.high - self.low)).clamp(min=0, max=1)

    def icdf(self, value: Tensor) -> Tensor:
        return value * (self.high - self.low) + self.low

    def entropy(self) -> Tensor:
        return (self.high - self.low).log()


class Laplace(_LocationScale):
    variance = property(lambda self: 2 * self.scale.pow(2))
    stddev = property(lambda self: 2 ** 0.5 * self.scale)

    def rsample(self, sample_shape: Any = ()) -> Tensor:
        eps = finfo(self.loc.dtype).eps
        u = _noise("uniform", self._extended_shape(sample_shape), self.loc) * (2 - eps) + (
            eps - 1)
        return self.loc - self.scale * u.sign() * (-u.abs()).log1p()

    def log_prob(self, value: Tensor) -> Tensor:
        self._check(value)
        return -(2 * self.scale).log() - (value - self.loc).abs() / self.scale

    def cdf(self, value: Tensor) -> Tensor:
        self._check(value)
        return 0.5 - 0.5 * (value - self.loc).sign() * FUNCTIONS["expm1"](
            -(value - self.loc).abs() / self.scale)

    def icdf(self, value: Tensor) -> Tensor:
        term = value - 0.5
        return self.loc - self.scale * term.sign() * (-2 * term.abs()).log1p()

    def entropy(self) -> Tensor:
        return 1 + (2 * self.scale).log()


class Exponential(Distribution):
    arg_constraints = {"rate": constraints.positive}
    support = constraints.nonnegative
    has_rsample = True

    def __init__(self, rate: Any, validate_args: bool | None = None) -> None:
        (self.rate,) = broadcast_all(rate)
        super().__init__(self.rate.size(), validate_args=validate_args)

    mean = property(lambda self: self.rate.reciprocal())
    mode = property(lambda self: _factories.zeros_like(self.rate))
    stddev = property(lambda self: self.rate.reciprocal())
    variance = property(lambda self: self.rate.pow(-2))

    def rsample(self, sample_shape: Any = ()) -> Tensor:
        u = _noise("uniform", self._extended_shape(sample_shape), self.rate)
        return -(-u).log1p() / self.rate

    def log_prob(self, value: Tensor) -> Tensor:
        self._check(value)
        return self.rate.log() - self.rate * value

    def cdf(self, value: Tensor) -> Tensor:
        self._check(value)
        return 1 - (-self.rate * value).exp()

    def icdf(self, value: Tensor) -> Tensor:
        return -(-value).log1p() / self.rate

    def entropy(self) -> Tensor:
        return 1.0 - self.rate.log()


class _ProbsOrLogits(Distribution):
    """A discrete family given by ``probs`` or by ``logits`` (exactly one); the other is
    derived when first read (``_binary``: the sigmoid's pair, else the softmax's)."""

    _binary = False

    def _one_of(self, probs: Any, logits: Any) -> None:
        if (probs is None) == (logits is None):
            raise ValueError("Either `probs` or `logits` must be specified, but not both.")

    def __getattr__(self, name: str) -> Any:
        if name == "probs":
            self.probs = logits_to_probs(self.logits, is_binary=self._binary)
            return self.probs
        if name == "logits":
            self.logits = probs_to_logits(self.probs, is_binary=self._binary)
            return self.logits
        raise AttributeError(name)


class Bernoulli(_ProbsOrLogits):
    arg_constraints = {"probs": constraints.unit_interval, "logits": constraints.real}
    support = constraints.boolean
    has_enumerate_support = True
    _binary = True

    def __init__(self, probs: Any = None, logits: Any = None,
                 validate_args: bool | None = None) -> None:
        self._one_of(probs, logits)
        if probs is not None:
            (self.probs,) = broadcast_all(probs)
            shape = self.probs.size()
        else:
            (self.logits,) = broadcast_all(logits)
            shape = self.logits.size()
        super().__init__(shape, validate_args=validate_args)

    mean = property(lambda self: self.probs)
    variance = property(lambda self: self.probs * (1 - self.probs))

    @property
    def mode(self) -> Tensor:
        mode = (self.probs >= 0.5).to(self.probs.dtype)
        return mode.masked_fill(self.probs == 0.5, math.nan)

    def sample(self, sample_shape: Any = ()) -> Tensor:
        shape = self._extended_shape(sample_shape)
        return _factories.bernoulli(self.probs.detach().expand(shape))

    def log_prob(self, value: Tensor) -> Tensor:
        self._check(value)
        logits, value = broadcast_all(self.logits, value)
        return -F.binary_cross_entropy_with_logits(logits, value, reduction="none")

    def entropy(self) -> Tensor:
        return F.binary_cross_entropy_with_logits(self.logits, self.probs, reduction="none")

    def enumerate_support(self, expand: bool = True) -> Tensor:
        values = _factories.arange(2, dtype=self._param().dtype).view(
            (-1,) + (1,) * len(self._batch_shape))
        return values.expand((-1,) + tuple(self._batch_shape)) if expand else values

    def _param(self) -> Tensor:
        return vars(self).get("probs", vars(self).get("logits"))


class Categorical(_ProbsOrLogits):
    arg_constraints = {"probs": constraints.simplex, "logits": constraints.real_vector}
    has_enumerate_support = True

    def __init__(self, probs: Any = None, logits: Any = None,
                 validate_args: bool | None = None) -> None:
        self._one_of(probs, logits)
        if probs is not None:
            if probs.dim() < 1:
                raise ValueError("`probs` parameter must be at least one-dimensional.")
            self.probs = probs / probs.sum(-1, keepdim=True)
            param = self.probs
        else:
            if logits.dim() < 1:
                raise ValueError("`logits` parameter must be at least one-dimensional.")
            self.logits = logits - logits.logsumexp(dim=-1, keepdim=True)
            param = self.logits
        self._num_events = param.size()[-1]
        super().__init__(param.size()[:-1], validate_args=validate_args)

    @property
    def support(self) -> Any:
        return constraints.integer_interval(0, self._num_events - 1)

    param_shape = property(lambda self: self.probs.size())
    mean = property(lambda self: _factories.full(self._extended_shape(), math.nan,
                                                  dtype=self.probs.dtype))
    variance = mean
    mode = property(lambda self: self.probs.argmax(-1))

    def sample(self, sample_shape: Any = ()) -> Tensor:
        sample_shape = D.Size(sample_shape)
        probs_2d = self.probs.detach().reshape(-1, self._num_events)
        n = max(math.prod(sample_shape), 1)
        drawn = _factories.multinomial(probs_2d, n, True).T
        return drawn.reshape(self._extended_shape(sample_shape))

    def log_prob(self, value: Tensor) -> Tensor:
        self._check(value)
        value = value.long().unsqueeze(-1)
        value, log_pmf = FUNCTIONS["broadcast_tensors"](value, self.logits)
        return log_pmf.gather(-1, value[..., :1]).squeeze(-1)

    def entropy(self) -> Tensor:
        logits = self.logits.clamp(min=finfo(self.logits.dtype).min)
        return -(logits * self.probs).sum(-1)

    def enumerate_support(self, expand: bool = True) -> Tensor:
        values = _factories.arange(self._num_events, dtype=D.int64).view(
            (-1,) + (1,) * len(self._batch_shape))
        return values.expand((-1,) + tuple(self._batch_shape)) if expand else values


class MultivariateNormal(Distribution):
    arg_constraints = {"loc": constraints.real_vector,
                       "covariance_matrix": constraints.positive_definite,
                       "precision_matrix": constraints.positive_definite,
                       "scale_tril": constraints.lower_cholesky}
    support = constraints.real_vector
    has_rsample = True

    def __init__(self, loc: Tensor, covariance_matrix: Tensor | None = None,
                 precision_matrix: Tensor | None = None, scale_tril: Tensor | None = None,
                 validate_args: bool | None = None) -> None:
        if loc.dim() < 1:
            raise ValueError("loc must be at least one-dimensional.")
        given = [m for m in (covariance_matrix, precision_matrix, scale_tril) if m is not None]
        if len(given) != 1:
            raise ValueError("Exactly one of covariance_matrix or precision_matrix or "
                             "scale_tril may be specified.")
        matrix = given[0]
        if matrix.dim() < 2:
            raise ValueError("scale_tril matrix must be at least two-dimensional, with "
                             "optional leading batch dimensions")
        batch = FUNCTIONS["broadcast_shapes"](matrix.shape[:-2], loc.shape[:-1])
        n = loc.shape[-1]
        self.loc = loc.expand(tuple(batch) + (n,))
        if scale_tril is not None:
            self.scale_tril = scale_tril.expand(tuple(batch) + (n, n))
            self._tril = self.scale_tril
        elif covariance_matrix is not None:
            self.covariance_matrix = covariance_matrix.expand(tuple(batch) + (n, n))
            self._tril = linalg.cholesky(covariance_matrix)
        else:
            self.precision_matrix = precision_matrix.expand(tuple(batch) + (n, n))
            self._tril = _precision_to_scale_tril(precision_matrix)
        super().__init__(batch, (n,), validate_args=validate_args)

    mean = mode = property(lambda self: self.loc)
    variance = property(lambda self: self._tril.pow(2).sum(-1).expand(
        self._batch_shape + self._event_shape))

    def rsample(self, sample_shape: Any = ()) -> Tensor:
        eps = _noise("normal", self._extended_shape(sample_shape), self.loc)
        return self.loc + (self._tril @ eps.unsqueeze(-1)).squeeze(-1)

    def log_prob(self, value: Tensor) -> Tensor:
        self._check(value)
        diff = value - self.loc
        n = self._event_shape[0]
        solved = linalg.solve_triangular(self._tril.expand(diff.shape + (n,)),
                                         diff.unsqueeze(-1), upper=False).squeeze(-1)
        half_log_det = self._tril.diagonal(dim1=-2, dim2=-1).log().sum(-1)
        return -0.5 * (n * math.log(2 * math.pi) + solved.pow(2).sum(-1)) - half_log_det

    def entropy(self) -> Tensor:
        n = self._event_shape[0]
        half_log_det = self._tril.diagonal(dim1=-2, dim2=-1).log().sum(-1)
        h = 0.5 * n * (1.0 + math.log(2 * math.pi)) + half_log_det
        return h.expand(self._batch_shape) if len(self._batch_shape) else h


def _precision_to_scale_tril(precision: Tensor) -> Tensor:
    flipped = linalg.cholesky(precision.flip((-2, -1)))
    eye = _factories.eye(precision.shape[-1], dtype=precision.dtype)
    inverse = linalg.solve_triangular(flipped.flip((-2, -1)).mT, eye, upper=False)
    return inverse


class Independent(Distribution):
    """``base_distribution`` with its last ``reinterpreted_batch_ndims`` batch dims read as
    event dims: log densities and entropies summed over them."""

    arg_constraints: dict = {}

    def __init__(self, base_distribution: Distribution, reinterpreted_batch_ndims: int,
                 validate_args: bool | None = None) -> None:
        batch = tuple(base_distribution.batch_shape)
        if reinterpreted_batch_ndims > len(batch):
            raise ValueError("Expected reinterpreted_batch_ndims <= len(base_distribution."
                             f"batch_shape), actual {reinterpreted_batch_ndims} vs "
                             f"{len(batch)}")
        cut = len(batch) - reinterpreted_batch_ndims
        self.base_dist, self.reinterpreted_batch_ndims = base_distribution, \
            reinterpreted_batch_ndims
        super().__init__(batch[:cut], batch[cut:] + tuple(base_distribution.event_shape),
                         validate_args=validate_args)

    has_rsample = property(lambda self: self.base_dist.has_rsample)
    support = property(lambda self: constraints.independent(self.base_dist.support,
                                                            self.reinterpreted_batch_ndims))
    mean = property(lambda self: self.base_dist.mean)
    mode = property(lambda self: self.base_dist.mode)
    variance = property(lambda self: self.base_dist.variance)

    def sample(self, sample_shape: Any = ()) -> Tensor:
        return self.base_dist.sample(sample_shape)

    def rsample(self, sample_shape: Any = ()) -> Tensor:
        return self.base_dist.rsample(sample_shape)

    def _summed(self, value: Tensor) -> Tensor:
        for _ in range(self.reinterpreted_batch_ndims):
            value = value.sum(-1)
        return value

    def log_prob(self, value: Tensor) -> Tensor:
        return self._summed(self.base_dist.log_prob(value))

    def entropy(self) -> Tensor:
        return self._summed(self.base_dist.entropy())

    def __repr__(self) -> str:
        return f"Independent({self.base_dist!r}, {self.reinterpreted_batch_ndims})"
