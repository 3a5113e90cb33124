"""The step-wise schedules: each ``get_lr`` is PyTorch's chainable recursion (the next rate
from the group's current one), each ``_get_closed_form_lr`` its formula in ``last_epoch``
(used by the deprecated ``step(epoch)``).

    LambdaLR          lr = base_lr * lr_lambda(epoch)
    MultiplicativeLR  lr = lr * lr_lambda(epoch)                (from epoch 1)
    StepLR            lr = lr * gamma  every step_size epochs
    MultiStepLR       lr = lr * gamma^(times epoch is a milestone)
    ConstantLR        base_lr * factor until total_iters, then base_lr
    LinearLR          base_lr * (start + (end - start) * min(epoch, total_iters) / total_iters)
    ExponentialLR     lr = lr * gamma
    PolynomialLR      base_lr * (1 - min(epoch, total_iters) / total_iters)^power
    CosineAnnealingLR eta_min + (base_lr - eta_min) * (1 + cos(pi * epoch / T_max)) / 2
"""
from __future__ import annotations

import math
import types
from bisect import bisect_right
from collections import Counter
from typing import Any, Iterable

from funcgrad.torch.optim.lr_scheduler._base import LRScheduler, group_values
from funcgrad.torch.optim.optimizer import Optimizer

__all__ = ["LambdaLR", "MultiplicativeLR", "StepLR", "MultiStepLR", "ConstantLR",
           "LinearLR", "ExponentialLR", "PolynomialLR", "CosineAnnealingLR"]


def _current(s: LRScheduler) -> list:
    return group_values(s.optimizer, "lr")


def _scaled(s: LRScheduler, factor: float) -> list:
    return [g["lr"] * factor for g in s.optimizer.param_groups]


class _LambdaSchedule(LRScheduler):
    """A schedule driven by one function of the epoch per parameter group. The functions
    are not saved by ``state_dict`` (only callable objects' attributes are), as in
    PyTorch."""

    def __init__(self, optimizer: Optimizer, lr_lambda: Any, last_epoch: int = -1) -> None:
        self.optimizer = optimizer
        if isinstance(lr_lambda, (list, tuple)):
            if len(lr_lambda) != len(optimizer.param_groups):
                raise ValueError(f"Expected {len(optimizer.param_groups)} lr_lambdas, but got "
                                 f"{len(lr_lambda)}")
            self.lr_lambdas = list(lr_lambda)
        else:
            self.lr_lambdas = [lr_lambda] * len(optimizer.param_groups)
        self._check_lambdas()
        super().__init__(optimizer, last_epoch)

    def _check_lambdas(self) -> None:
        """LambdaLR takes any object; MultiplicativeLR checks that each is callable."""

    def state_dict(self) -> dict:
        out = {k: v for k, v in self.__dict__.items() if k not in ("optimizer", "lr_lambdas")}
        out["lr_lambdas"] = [None if isinstance(fn, types.FunctionType) else fn.__dict__.copy()
                             for fn in self.lr_lambdas]
        return out

    def load_state_dict(self, state_dict: dict) -> None:
        lambdas = state_dict.pop("lr_lambdas")
        self.__dict__.update(state_dict)
        state_dict["lr_lambdas"] = lambdas  # the caller's dict is left as it was
        for fn, saved in zip(self.lr_lambdas, lambdas):
            if saved is not None:
                fn.__dict__.update(saved)


class LambdaLR(_LambdaSchedule):
    """``lr = initial_lr * lr_lambda(epoch)``."""

    def get_lr(self) -> list:
        self._warn_if_outside_step()
        return [base * fn(self.last_epoch) for fn, base in zip(self.lr_lambdas, self.base_lrs)]


class MultiplicativeLR(_LambdaSchedule):
    """``lr = lr * lr_lambda(epoch)`` at each step after the first."""

    def _check_lambdas(self) -> None:
        for fn in self.lr_lambdas:
            if not callable(fn):
                raise TypeError(f"lr_lambda should be a function, but got {type(fn).__name__}")

    def get_lr(self) -> list:
        self._warn_if_outside_step()
        if self._is_initial:
            return _current(self)
        return [g["lr"] * fn(self.last_epoch)
                for fn, g in zip(self.lr_lambdas, self.optimizer.param_groups)]


class StepLR(LRScheduler):
    """Multiply the rates by ``gamma`` every ``step_size`` epochs."""

    def __init__(self, optimizer: Optimizer, step_size: int, gamma: float = 0.1,
                 last_epoch: int = -1) -> None:
        self.step_size = step_size
        self.gamma = gamma
        super().__init__(optimizer, last_epoch)

    def get_lr(self) -> list:
        self._warn_if_outside_step()
        if self.last_epoch == 0 or self.last_epoch % self.step_size != 0:
            return _current(self)
        return _scaled(self, self.gamma)

    def _get_closed_form_lr(self) -> list:
        return [base * self.gamma ** (self.last_epoch // self.step_size)
                for base in self.base_lrs]


class MultiStepLR(LRScheduler):
    """Multiply the rates by ``gamma`` at each milestone epoch (by gamma^n for a
    milestone listed n times)."""

    def __init__(self, optimizer: Optimizer, milestones: Iterable[int], gamma: float = 0.1,
                 last_epoch: int = -1) -> None:
        self.milestones = Counter(milestones)
        self.gamma = gamma
        super().__init__(optimizer, last_epoch)

    def get_lr(self) -> list:
        self._warn_if_outside_step()
        if self.last_epoch not in self.milestones:
            return _current(self)
        return _scaled(self, self.gamma ** self.milestones[self.last_epoch])

    def _get_closed_form_lr(self) -> list:
        passed = bisect_right(sorted(self.milestones.elements()), self.last_epoch)
        return [base * self.gamma ** passed for base in self.base_lrs]


class ConstantLR(LRScheduler):
    """Rates times ``factor`` for the first ``total_iters`` epochs, then as before."""

    def __init__(self, optimizer: Optimizer, factor: float = 1.0 / 3, total_iters: int = 5,
                 last_epoch: int = -1) -> None:
        if factor > 1.0 or factor < 0:
            raise ValueError("Constant multiplicative factor expected to be between 0 and 1.")
        self.factor = factor
        self.total_iters = total_iters
        super().__init__(optimizer, last_epoch)

    def get_lr(self) -> list:
        self._warn_if_outside_step()
        if self.last_epoch == 0:
            return _scaled(self, self.factor)
        if self.last_epoch != self.total_iters:
            return _current(self)
        return _scaled(self, 1.0 / self.factor)

    def _get_closed_form_lr(self) -> list:
        done = self.last_epoch >= self.total_iters
        return [base * (self.factor + done * (1 - self.factor)) for base in self.base_lrs]


class LinearLR(LRScheduler):
    """Rates times a factor going linearly from ``start_factor`` to ``end_factor`` over
    ``total_iters`` epochs."""

    def __init__(self, optimizer: Optimizer, start_factor: float = 1.0 / 3,
                 end_factor: float = 1.0, total_iters: int = 5, last_epoch: int = -1) -> None:
        if start_factor > 1.0 or start_factor <= 0:
            raise ValueError("Starting multiplicative factor expected to be greater than 0 "
                             "and less or equal to 1.")
        if end_factor > 1.0 or end_factor < 0:
            raise ValueError("Ending multiplicative factor expected to be between 0 and 1.")
        self.start_factor = start_factor
        self.end_factor = end_factor
        self.total_iters = total_iters
        super().__init__(optimizer, last_epoch)

    def get_lr(self) -> list:
        self._warn_if_outside_step()
        if self.last_epoch == 0:
            return _scaled(self, self.start_factor)
        if self._is_initial or self.last_epoch > self.total_iters:
            return _current(self)
        change = self.end_factor - self.start_factor
        ratio = 1.0 + change / (self.total_iters * self.start_factor
                                + (self.last_epoch - 1) * change)
        return _scaled(self, ratio)

    def _get_closed_form_lr(self) -> list:
        progress = min(self.total_iters, self.last_epoch) / self.total_iters
        return [base * (self.start_factor + (self.end_factor - self.start_factor) * progress)
                for base in self.base_lrs]


class ExponentialLR(LRScheduler):
    """Multiply the rates by ``gamma`` every epoch."""

    def __init__(self, optimizer: Optimizer, gamma: float, last_epoch: int = -1) -> None:
        self.gamma = gamma
        super().__init__(optimizer, last_epoch)

    def get_lr(self) -> list:
        self._warn_if_outside_step()
        if self._is_initial:
            return _current(self)
        return _scaled(self, self.gamma)

    def _get_closed_form_lr(self) -> list:
        return [base * self.gamma ** self.last_epoch for base in self.base_lrs]


class PolynomialLR(LRScheduler):
    """``base_lr * (1 - epoch / total_iters)^power`` until ``total_iters``, then 0."""

    def __init__(self, optimizer: Optimizer, total_iters: int = 5, power: float = 1.0,
                 last_epoch: int = -1) -> None:
        self.total_iters = total_iters
        self.power = power
        super().__init__(optimizer, last_epoch)

    def get_lr(self) -> list:
        self._warn_if_outside_step()
        if self._is_initial or self.last_epoch > self.total_iters:
            return _current(self)
        t, n = self.last_epoch, self.total_iters
        return _scaled(self, ((1.0 - t / n) / (1.0 - (t - 1) / n)) ** self.power)

    def _get_closed_form_lr(self) -> list:
        progress = min(self.total_iters, self.last_epoch) / self.total_iters
        return [base * (1.0 - progress) ** self.power for base in self.base_lrs]


class CosineAnnealingLR(LRScheduler):
    """Cosine annealing from the initial rates to ``eta_min`` over ``T_max`` epochs (and
    back up over the next ``T_max``, periodically), by PyTorch's recursion."""

    def __init__(self, optimizer: Optimizer, T_max: int, eta_min: float = 0.0,
                 last_epoch: int = -1) -> None:
        self.T_max = T_max
        self.eta_min = eta_min
        super().__init__(optimizer, last_epoch)

    def get_lr(self) -> list:
        self._warn_if_outside_step()
        t, n, low = self.last_epoch, self.T_max, self.eta_min
        groups = self.optimizer.param_groups
        if self._is_initial:
            return _current(self)
        if self._step_count == 1 and t > 0:  # resumed: start from the closed form
            return [low + (base - low) * (1 + math.cos(t * math.pi / n)) / 2
                    for base in self.base_lrs]
        if (t - 1 - n) % (2 * n) == 0:  # leaving the minimum: the recursion would divide by 0
            return [g["lr"] + (base - low) * (1 - math.cos(math.pi / n)) / 2
                    for base, g in zip(self.base_lrs, groups)]
        ratio = (1 + math.cos(math.pi * t / n)) / (1 + math.cos(math.pi * (t - 1) / n))
        return [ratio * (g["lr"] - low) + low for g in groups]

    def _get_closed_form_lr(self) -> list:
        t, n, low = self.last_epoch, self.T_max, self.eta_min
        return [low + (base - low) * (1 + math.cos(math.pi * t / n)) / 2
                for base in self.base_lrs]
