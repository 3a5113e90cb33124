"""``torch.distributions.constraints``: the sets a distribution's parameters and values
live in, each with ``check(value)`` (a boolean tensor) and PyTorch's repr (which its
validation errors print)."""
from __future__ import annotations

from typing import Any

from funcgrad.torch import linalg
from funcgrad.torch._tensor import Tensor

__all__ = ["Constraint", "real", "positive", "nonnegative", "unit_interval", "boolean",
           "simplex", "real_vector", "positive_definite", "lower_cholesky",
           "nonnegative_integer", "integer_interval", "interval", "greater_than",
           "greater_than_eq", "less_than", "half_open_interval", "independent", "dependent",
           "is_dependent"]


class Constraint:
    """A set of values: ``check`` says which elements (events) belong to it."""

    is_discrete = False
    event_dim = 0

    def check(self, value: Any) -> Tensor:
        raise NotImplementedError

    def __repr__(self) -> str:
        fields = ", ".join(f"{k}={v}" for k, v in vars(self).items())
        return f"{type(self).__name__[1:]}({fields})"


class _Dependent(Constraint):
    """A constraint that depends on other parameters: not checked."""

    def check(self, value: Any) -> Tensor:
        raise ValueError("Cannot determine validity of dependent constraint")


class _Real(Constraint):
    def check(self, value: Any) -> Tensor:
        return value == value  # (NaN is not real)


class _GreaterThan(Constraint):
    def __init__(self, lower_bound: Any) -> None:
        self.lower_bound = lower_bound

    def check(self, value: Any) -> Tensor:
        return self.lower_bound < value


class _LessThan(Constraint):
    def __init__(self, upper_bound: Any) -> None:
        self.upper_bound = upper_bound

    def check(self, value: Any) -> Tensor:
        return value < self.upper_bound


class _GreaterThanEq(_GreaterThan):
    def check(self, value: Any) -> Tensor:
        return self.lower_bound <= value


class _Interval(Constraint):
    def __init__(self, lower_bound: Any, upper_bound: Any) -> None:
        self.lower_bound, self.upper_bound = lower_bound, upper_bound

    def check(self, value: Any) -> Tensor:
        return (self.lower_bound <= value) & (value <= self.upper_bound)


class _HalfOpenInterval(_Interval):
    def check(self, value: Any) -> Tensor:
        return (self.lower_bound <= value) & (value < self.upper_bound)


class _Boolean(Constraint):
    is_discrete = True

    def check(self, value: Any) -> Tensor:
        return (value == 0) | (value == 1)


class _IntegerInterval(_Interval):
    is_discrete = True

    def check(self, value: Any) -> Tensor:
        return (value % 1 == 0) & super().check(value)


class _IntegerGreaterThan(_GreaterThan):
    is_discrete = True

    def check(self, value: Any) -> Tensor:
        return (value % 1 == 0) & (value >= self.lower_bound)


class _Simplex(Constraint):
    event_dim = 1

    def check(self, value: Any) -> Tensor:
        return (value >= 0).all(-1) & ((value.sum(-1) - 1).abs() < 1e-6)


class _IndependentConstraint(Constraint):
    def __init__(self, base: Constraint, reinterpreted_batch_ndims: int) -> None:
        self.base, self.reinterpreted_batch_ndims = base, reinterpreted_batch_ndims
        self.event_dim = base.event_dim + reinterpreted_batch_ndims

    def check(self, value: Any) -> Tensor:
        result = self.base.check(value)
        for _ in range(self.reinterpreted_batch_ndims):
            result = result.all(-1)
        return result

    def __repr__(self) -> str:
        return f"IndependentConstraint({self.base!r}, {self.reinterpreted_batch_ndims})"


class _PositiveDefinite(Constraint):
    event_dim = 2

    def check(self, value: Any) -> Tensor:
        symmetric = (value - value.mT).abs().amax((-2, -1)) < 1e-6
        return symmetric & (linalg.eigh(value)[0].amin(-1) > 0)


class _LowerCholesky(Constraint):
    event_dim = 2

    def check(self, value: Any) -> Tensor:
        lower = (value.tril() == value).all(-1).all(-1)
        return lower & (value.diagonal(dim1=-2, dim2=-1) > 0).all(-1)


def is_dependent(constraint: Any) -> bool:
    return isinstance(constraint, _Dependent)


dependent = _Dependent()
real = _Real()
positive = _GreaterThan(0.0)
nonnegative = _GreaterThanEq(0.0)
unit_interval = _Interval(0.0, 1.0)
boolean = _Boolean()
simplex = _Simplex()
real_vector = _IndependentConstraint(real, 1)
positive_definite = _PositiveDefinite()
lower_cholesky = _LowerCholesky()
nonnegative_integer = _IntegerGreaterThan(0)
interval = _Interval
half_open_interval = _HalfOpenInterval
integer_interval = _IntegerInterval
greater_than = _GreaterThan
greater_than_eq = _GreaterThanEq
less_than = _LessThan
independent = _IndependentConstraint
