"""``Distribution``: batch and event shapes, argument and sample validation with PyTorch's
texts, ``sample`` as ``rsample`` without a graph, and the helpers the families share."""
from __future__ import annotations

import math
from typing import Any

from funcgrad.torch import _factories
from funcgrad.torch._runtime import dtypes as D
from funcgrad.torch._numeric_info import finfo
from funcgrad.torch._ops_basic import FUNCTIONS
from funcgrad.torch._tensor import Tensor
from funcgrad.torch._runtime import grad_mode
from funcgrad.torch.distributions import constraints

__all__ = ["Distribution", "broadcast_all", "logits_to_probs", "probs_to_logits",
           "clamp_probs"]


def broadcast_all(*values: Any) -> tuple:
    """The values as tensors of one broadcast shape (numbers take the tensors' dtype, or
    the default float dtype)."""
    tensors = [v for v in values if isinstance(v, Tensor)]
    dtype = tensors[0].dtype if tensors else D.get_default_dtype()
    as_tensors = [v if isinstance(v, Tensor) else _factories.tensor(float(v), dtype=dtype)
                  for v in values]
    return tuple(FUNCTIONS["broadcast_tensors"](*as_tensors))


def clamp_probs(probs: Tensor) -> Tensor:
    """``probs`` in the open interval (0, 1): clamped to [eps, 1 - eps] of their dtype."""
    eps = finfo(probs.dtype).eps
    return probs.clamp(min=eps, max=1 - eps)


def probs_to_logits(probs: Tensor, is_binary: bool = False) -> Tensor:
    clamped = clamp_probs(probs)
    return clamped.log() - (-clamped).log1p() if is_binary else clamped.log()


def logits_to_probs(logits: Tensor, is_binary: bool = False) -> Tensor:
    return logits.sigmoid() if is_binary else logits.softmax(-1)


class Distribution:
    """The base of the families: ``batch_shape`` (independent distributions) and
    ``event_shape`` (the shape of one draw)."""

    has_rsample = False
    has_enumerate_support = False
    _validate_args = True
    arg_constraints: dict = {}
    support: Any = None

    @staticmethod
    def set_default_validate_args(value: bool) -> None:
        if value not in (True, False):
            raise ValueError
        Distribution._validate_args = value

    def __init__(self, batch_shape: Any = (), event_shape: Any = (),
                 validate_args: bool | None = None) -> None:
        self._batch_shape, self._event_shape = D.Size(batch_shape), D.Size(event_shape)
        if validate_args is not None:
            self._validate_args = validate_args
        if self._validate_args:
            for param, constraint in self.arg_constraints.items():
                if constraints.is_dependent(constraint) or param not in vars(self):
                    continue
                value = getattr(self, param)
                if not bool(constraint.check(value).all()):
                    raise ValueError(
                        f"Expected parameter {param} ({type(value).__name__} of shape "
                        f"{tuple(value.shape)}) of distribution {self!r} to satisfy the "
                        f"constraint {constraint!r}, but found invalid values:\n{value}")

    @property
    def batch_shape(self) -> D.Size:
        return self._batch_shape

    @property
    def event_shape(self) -> D.Size:
        return self._event_shape

    def _extended_shape(self, sample_shape: Any = ()) -> D.Size:
        return D.Size(tuple(sample_shape) + tuple(self._batch_shape) +
                      tuple(self._event_shape))

    def sample(self, sample_shape: Any = ()) -> Tensor:
        with grad_mode.no_grad():
            return self.rsample(sample_shape)

    def rsample(self, sample_shape: Any = ()) -> Tensor:
        raise NotImplementedError(f"{type(self).__name__} has no reparameterized sampler "
                                  "(rsample)")

    def sample_n(self, n: int) -> Tensor:
        return self.sample((n,))

    @property
    def stddev(self) -> Tensor:
        return self.variance.sqrt()

    def perplexity(self) -> Tensor:
        return self.entropy().exp()

    def _validate_sample(self, value: Any) -> None:
        if not isinstance(value, Tensor):
            raise ValueError("The value argument to log_prob must be a Tensor")
        start = value.ndim - len(self._event_shape)
        if tuple(value.shape[start:]) != tuple(self._event_shape):
            raise ValueError(f"The right-most size of value must match event_shape: "
                             f"{value.size()} vs {self._event_shape}.")
        expected = D.Size(tuple(self._batch_shape) + tuple(self._event_shape))
        for i, j in zip(reversed(tuple(value.shape)), reversed(tuple(expected))):
            if i != 1 and j != 1 and i != j:
                raise ValueError(f"Value is not broadcastable with batch_shape+event_shape: "
                                 f"{value.size()} vs {expected}.")
        if not bool(self.support.check(value).all()):
            raise ValueError(
                f"Expected value argument ({type(value).__name__} of shape "
                f"{tuple(value.shape)}) to be within the support ({self.support!r}) of the "
                f"distribution {self!r}, but found invalid values:\n{value}")

    def _check(self, value: Any) -> None:
        if self._validate_args:
            self._validate_sample(value)

    def __repr__(self) -> str:
        shown = [(k, vars(self)[k]) for k in self.arg_constraints if k in vars(self)]
        args = ", ".join(f"{k}: {v if v.numel() == 1 else v.size()}" for k, v in shown)
        return f"{type(self).__name__}({args})"


LOG_SQRT_2PI = math.log(math.sqrt(2 * math.pi))
