"""Cyclic schedules: cosine annealing with warm restarts, the 1cycle policy and cyclical
learning rates, with PyTorch's formulas. 1cycle and CyclicLR also cycle the momentum
(``momentum``, or ``betas[0]`` for Adam-like optimizers) inversely to the rate.

    WarmRestarts  eta_min + (base_lr - eta_min) * (1 + cos(pi * T_cur / T_i)) / 2, T_cur
                  restarting at 0 after T_i epochs and T_i growing by T_mult
    OneCycleLR    phases (initial -> max -> min, or initial -> max -> initial -> min with
                  three_phase), each annealed by cos or linearly over its share of steps
    CyclicLR      base + (max - base) * triangle(x) * scale_fn(cycle or iteration)
"""
from __future__ import annotations

import math
import types
from typing import Any, Callable

from funcgrad.torch.optim.lr_scheduler._base import (LRScheduler, _Flag, check_optimizer,
                                                     per_group, set_group_value)
from funcgrad.torch.optim.optimizer import Optimizer

__all__ = ["CosineAnnealingWarmRestarts", "OneCycleLR", "CyclicLR"]


class CosineAnnealingWarmRestarts(LRScheduler):
    """SGDR: cosine annealing over ``T_i`` epochs, then a restart at the initial rate."""

    def __init__(self, optimizer: Optimizer, T_0: int, T_mult: int = 1,
                 eta_min: float = 0.0, last_epoch: int = -1) -> None:
        if T_0 <= 0 or not isinstance(T_0, int):
            raise ValueError(f"Expected positive integer T_0, but got {T_0}")
        if T_mult < 1 or not isinstance(T_mult, int):
            raise ValueError(f"Expected integer T_mult >= 1, but got {T_mult}")
        if not isinstance(eta_min, (float, int)):
            raise ValueError(f"Expected float or int eta_min, but got {eta_min} of type "
                             f"{type(eta_min)}")
        self.T_0 = T_0
        self.T_i = T_0
        self.T_mult = T_mult
        self.eta_min = eta_min
        self.T_cur = last_epoch
        super().__init__(optimizer, last_epoch)

    def get_lr(self) -> list:
        self._warn_if_outside_step()
        cosine = (1 + math.cos(math.pi * self.T_cur / self.T_i)) / 2
        return [self.eta_min + (base - self.eta_min) * cosine for base in self.base_lrs]

    def step(self, epoch: Any = None) -> None:
        """Advance one epoch, or jump to (possibly fractional) ``epoch``; may be called
        after every batch with ``epoch + batch / batches``."""
        if epoch is None and self.last_epoch < 0:
            epoch = 0
        if epoch is None:
            epoch = self.last_epoch + 1
            self.T_cur += 1
            if self.T_cur >= self.T_i:
                self.T_cur %= self.T_i
                self.T_i *= self.T_mult
        else:
            self._jump_to(epoch)
        self.last_epoch = math.floor(epoch)
        with _Flag(self, "_get_lr_called_within_step"):
            self._write_lrs(self.get_lr())

    def _jump_to(self, epoch: Any) -> None:
        if epoch < 0:
            raise ValueError(f"Expected non-negative epoch, but got {epoch}")
        if epoch < self.T_0:
            self.T_i, self.T_cur = self.T_0, epoch
        elif self.T_mult == 1:
            self.T_cur = epoch % self.T_0
        else:  # restarts so far: the n with T_0 * (T_mult^n - 1) / (T_mult - 1) <= epoch
            n = int(math.log(epoch / self.T_0 * (self.T_mult - 1) + 1, self.T_mult))
            self.T_cur = epoch - self.T_0 * (self.T_mult ** n - 1) / (self.T_mult - 1)
            self.T_i = self.T_0 * self.T_mult ** n


def _set_momentum(group: dict, use_beta1: bool, value: Any) -> None:
    if use_beta1:
        group["betas"] = (value, *group["betas"][1:])
    else:
        group["momentum"] = value


def _uses_beta1(optimizer: Optimizer) -> bool:
    if "momentum" not in optimizer.defaults and "betas" not in optimizer.defaults:
        raise ValueError("optimizer must support momentum or beta1 with `cycle_momentum` "
                         "option enabled")
    return "betas" in optimizer.defaults


def _anneal_cos(start: float, end: float, pct: float) -> float:
    return end + (start - end) / 2.0 * (math.cos(math.pi * pct) + 1)


def _anneal_linear(start: float, end: float, pct: float) -> float:
    return (end - start) * pct + start


_ANNEAL = {"cos": _anneal_cos, "linear": _anneal_linear}


def _one_cycle_phases(total_steps: int, pct_start: float, three_phase: bool) -> list:
    """PyTorch's phase table: each phase ends at ``end_step`` and goes between the named
    group entries."""
    def phase(end_step: Any, lrs: tuple, momenta: tuple) -> dict:
        return {"end_step": end_step, "start_lr": lrs[0], "end_lr": lrs[1],
                "start_momentum": momenta[0], "end_momentum": momenta[1]}
    up = phase(float(pct_start * total_steps) - 1, ("initial_lr", "max_lr"),
               ("max_momentum", "base_momentum"))
    if not three_phase:
        return [up, phase(total_steps - 1, ("max_lr", "min_lr"),
                          ("base_momentum", "max_momentum"))]
    return [up, phase(float(2 * pct_start * total_steps) - 2, ("max_lr", "initial_lr"),
                      ("base_momentum", "max_momentum")),
            phase(total_steps - 1, ("initial_lr", "min_lr"), ("max_momentum", "max_momentum"))]


class OneCycleLR(LRScheduler):
    """The 1cycle policy (step it after every batch): rates from ``max_lr / div_factor``
    up to ``max_lr`` over ``pct_start`` of the steps, then down to ``initial_lr /
    final_div_factor``."""

    def __init__(self, optimizer: Optimizer, max_lr: Any, total_steps: int | None = None,
                 epochs: int | None = None, steps_per_epoch: int | None = None,
                 pct_start: float = 0.3, anneal_strategy: str = "cos",
                 cycle_momentum: bool = True, base_momentum: Any = 0.85,
                 max_momentum: Any = 0.95, div_factor: float = 25.0,
                 final_div_factor: float = 1e4, three_phase: bool = False,
                 last_epoch: int = -1) -> None:
        check_optimizer(optimizer)
        self.optimizer = optimizer
        self.total_steps = _total_steps(total_steps, epochs, steps_per_epoch)
        self._schedule_phases = _one_cycle_phases(self.total_steps, pct_start, three_phase)
        if pct_start < 0 or pct_start > 1 or not isinstance(pct_start, float):
            raise ValueError(f"Expected float between 0 and 1 pct_start, but got {pct_start}")
        if anneal_strategy not in _ANNEAL:
            raise ValueError("anneal_strategy must be one of 'cos' or 'linear', instead got "
                             f"{anneal_strategy}")
        self._anneal_func_type = anneal_strategy
        max_lrs = per_group("max_lr", optimizer, max_lr)
        if last_epoch == -1:
            for group, top in zip(optimizer.param_groups, max_lrs):
                group["initial_lr"] = top / div_factor
                group["max_lr"] = top
                group["min_lr"] = group["initial_lr"] / final_div_factor
        self.cycle_momentum = cycle_momentum
        if cycle_momentum:
            self.use_beta1 = _uses_beta1(optimizer)
            tops = per_group("max_momentum", optimizer, max_momentum)
            bottoms = per_group("base_momentum", optimizer, base_momentum)
            if last_epoch == -1:
                for group, top, bottom in zip(optimizer.param_groups, tops, bottoms):
                    _set_momentum(group, self.use_beta1, top)
                    group["max_momentum"] = top
                    group["base_momentum"] = bottom
        super().__init__(optimizer, last_epoch)

    def get_lr(self) -> list:
        """The rate of the current phase at this step (and, with ``cycle_momentum``, the
        momentum is set as a side effect, as in PyTorch)."""
        self._warn_if_outside_step()
        step = self.last_epoch
        if step > self.total_steps:
            raise ValueError(f"Tried to step {step} times. The specified number of total "
                             f"steps is {self.total_steps}")
        anneal = _ANNEAL[self._anneal_func_type]
        lrs = []
        for group in self.optimizer.param_groups:
            start = 0.0
            for i, phase in enumerate(self._schedule_phases):
                end = phase["end_step"]
                if step <= end or i == len(self._schedule_phases) - 1:
                    pct = (step - start) / (end - start)
                    lrs.append(anneal(group[phase["start_lr"]], group[phase["end_lr"]], pct))
                    if self.cycle_momentum:
                        _set_momentum(group, self.use_beta1,
                                      anneal(group[phase["start_momentum"]],
                                             group[phase["end_momentum"]], pct))
                    break
                start = end
        return lrs


def _total_steps(total_steps: Any, epochs: Any, steps_per_epoch: Any) -> int:
    if total_steps is not None:
        if total_steps <= 0 or not isinstance(total_steps, int):
            raise ValueError(f"Expected positive integer total_steps, but got {total_steps}")
        return total_steps
    if epochs is not None and steps_per_epoch is not None:
        if not isinstance(epochs, int) or epochs <= 0:
            raise ValueError(f"Expected positive integer epochs, but got {epochs}")
        if not isinstance(steps_per_epoch, int) or steps_per_epoch <= 0:
            raise ValueError("Expected positive integer steps_per_epoch, but got "
                             f"{steps_per_epoch}")
        return epochs * steps_per_epoch
    raise ValueError("You must define either total_steps OR (epochs AND steps_per_epoch)")


_SCALE_FNS = {"triangular": (lambda gamma, x: 1.0, "cycle"),
              "triangular2": (lambda gamma, x: 1 / (2.0 ** (x - 1)), "cycle"),
              "exp_range": (lambda gamma, x: gamma ** x, "iterations")}


class CyclicLR(LRScheduler):
    """Cyclical learning rates (step it after every batch): a triangle between
    ``base_lr`` and ``max_lr`` (``step_size_up`` steps up, ``step_size_down`` down),
    scaled per ``mode`` or by ``scale_fn``."""

    def __init__(self, optimizer: Optimizer, base_lr: Any, max_lr: Any,
                 step_size_up: int = 2000, step_size_down: int | None = None,
                 mode: str = "triangular", gamma: float = 1.0,
                 scale_fn: Callable | None = None, scale_mode: str = "cycle",
                 cycle_momentum: bool = True, base_momentum: Any = 0.8,
                 max_momentum: Any = 0.9, last_epoch: int = -1) -> None:
        check_optimizer(optimizer)
        self.optimizer = optimizer
        base_lrs = per_group("base_lr", optimizer, base_lr)
        if last_epoch == -1:
            for lr, group in zip(base_lrs, optimizer.param_groups):
                set_group_value(group, "lr", lr)
        self.max_lrs = per_group("max_lr", optimizer, max_lr)
        up = float(step_size_up)
        down = float(step_size_down) if step_size_down is not None else up
        self.total_size = up + down
        self.step_ratio = up / self.total_size
        if mode not in _SCALE_FNS and scale_fn is None:
            raise ValueError("mode is invalid and scale_fn is None")
        self.mode = mode
        self.gamma = gamma
        self._scale_fn_custom = scale_fn
        self.scale_mode = scale_mode if scale_fn is not None else _SCALE_FNS[mode][1]
        self.cycle_momentum = cycle_momentum
        if cycle_momentum:
            self.use_beta1 = _uses_beta1(optimizer)
            self.base_momentums = per_group("base_momentum", optimizer, base_momentum)
            self.max_momentums = per_group("max_momentum", optimizer, max_momentum)
            if last_epoch == -1:
                for top, bottom, group in zip(self.max_momentums, self.base_momentums,
                                              optimizer.param_groups):
                    _set_momentum(group, self.use_beta1, top)
                    group["max_momentum"] = top
                    group["base_momentum"] = bottom
        super().__init__(optimizer, last_epoch)
        self.base_lrs = base_lrs

    def scale_fn(self, x: float) -> float:
        if self._scale_fn_custom is not None:
            return self._scale_fn_custom(x)
        return _SCALE_FNS[self.mode][0](self.gamma, x)

    def get_lr(self) -> list:
        """The rates at this step (and, with ``cycle_momentum``, the momentum is set as a
        side effect, as in PyTorch)."""
        self._warn_if_outside_step()
        cycle = math.floor(1 + self.last_epoch / self.total_size)
        x = 1.0 + self.last_epoch / self.total_size - cycle
        height = x / self.step_ratio if x <= self.step_ratio else \
            (x - 1) / (self.step_ratio - 1)
        scale = self.scale_fn(cycle if self.scale_mode == "cycle" else self.last_epoch)
        lrs = [base + (top - base) * height * scale
               for base, top in zip(self.base_lrs, self.max_lrs)]
        if self.cycle_momentum:
            for group, bottom, top in zip(self.optimizer.param_groups, self.base_momentums,
                                          self.max_momentums):
                _set_momentum(group, self.use_beta1, top - (top - bottom) * height * scale)
        return lrs

    def state_dict(self) -> dict:
        """As the base's, with a custom ``scale_fn`` saved only as its attributes (a plain
        function is not saved), as in PyTorch."""
        state = super().state_dict()
        fn = state.pop("_scale_fn_custom")
        state["_scale_fn_custom"] = (None if fn is None or isinstance(fn, types.FunctionType)
                                     else fn.__dict__.copy())
        return state

    def load_state_dict(self, state_dict: dict) -> None:
        saved = state_dict.pop("_scale_fn_custom")
        super().load_state_dict(state_dict)
        state_dict["_scale_fn_custom"] = saved
        if saved is not None:
            self._scale_fn_custom.__dict__.update(saved)
