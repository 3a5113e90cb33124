"""`LRScheduler`: the base of the learning-rate schedules, with PyTorch 2.13's protocol.

Construction records ``initial_lr`` in each parameter group (``base_lrs``) and takes the
initial step (``last_epoch`` -1 -> 0). Each ``step()`` then advances ``last_epoch`` and
writes ``get_lr()`` into the groups; ``get_last_lr()`` is what the last step wrote.
Schedules are *chainable*: ``get_lr`` computes the next rate from the group's current one,
so schedules stack; the deprecated ``step(epoch)`` uses a closed form where a schedule has
one. ``state_dict()`` is every attribute but the optimizer, named and ordered as PyTorch's
(attributes are assigned in PyTorch's order for that reason).

PyTorch's warnings are kept: stepping the scheduler before ``optimizer.step()`` ever ran,
replacing ``optimizer.step`` after the scheduler was made, passing ``epoch`` to ``step``,
and calling ``get_lr()`` from outside ``step``.
"""
from __future__ import annotations

import warnings
import weakref
from typing import Any

from funcgrad.torch._tensor import Tensor
from funcgrad.torch.optim.optimizer import Optimizer, to_scalar

__all__ = ["LRScheduler", "EPOCH_DEPRECATION_WARNING"]

EPOCH_DEPRECATION_WARNING = (
    "The epoch parameter in `scheduler.step()` was not necessary and is being deprecated "
    "where possible. Please use `scheduler.step()` to step the scheduler. During the "
    "deprecation, if epoch is different from None, the closed form is used instead of the "
    "new chainable form, where available. Please open an issue if you are unable to "
    "replicate your use case: https://github.com/pytorch/pytorch/issues/new/choose.")

_BEFORE_OPTIMIZER = (
    "Detected call of `lr_scheduler.step()` before `optimizer.step()`. In PyTorch 1.1.0 and "
    "later, you should call them in the opposite order: `optimizer.step()` before "
    "`lr_scheduler.step()`.  Failure to do this will result in PyTorch skipping the first "
    "value of the learning rate schedule. See more details at "
    "https://pytorch.org/docs/stable/optim.html#how-to-adjust-learning-rate")

_OVERRIDDEN = (
    "Seems like `optimizer.step()` has been overridden after learning rate scheduler "
    "initialization. Please, make sure to call `optimizer.step()` before "
    "`lr_scheduler.step()`. See more details at "
    "https://pytorch.org/docs/stable/optim.html#how-to-adjust-learning-rate")


def check_optimizer(optimizer: Any) -> None:
    if not isinstance(optimizer, Optimizer):
        raise TypeError(f"{type(optimizer).__name__} is not an Optimizer")


def group_values(optimizer: Optimizer, key: str) -> list:
    """``group[key]`` of every group (tensors copied, so that callers cannot alias)."""
    return [g[key].clone() if isinstance(g[key], Tensor) else g[key]
            for g in optimizer.param_groups]


def set_group_value(group: dict, key: str, value: Any) -> None:
    """Set ``group[key]``; a tensor-valued option is filled in place, not replaced."""
    if isinstance(group[key], Tensor):
        group[key].fill_(to_scalar(value))
    else:
        group[key] = value


def per_group(name: str, optimizer: Optimizer, value: Any) -> list:
    """``value`` for each parameter group: a list/tuple of one per group, or one value."""
    if isinstance(value, (list, tuple)):
        if len(value) != len(optimizer.param_groups):
            raise ValueError(f"{name} must have the same length as optimizer.param_groups. "
                             f"{name} has {len(value)} values, param_groups has "
                             f"{len(optimizer.param_groups)}.")
        values = list(value)
    else:
        values = [value] * len(optimizer.param_groups)
    return [v.clone() if isinstance(v, Tensor) else v for v in values]


def _mark_instance_step(optimizer: Optimizer) -> None:
    """An ``optimizer.step`` replaced on the instance (not an Optimizer method, whose
    wrapper records each call itself) is wrapped so that its calls are recorded too."""
    own_step = vars(optimizer).get("step")
    if own_step is None or getattr(own_step, "_wrapped_by_lr_sched", False):
        return

    owner = weakref.ref(optimizer)  # the optimizer holds this wrapper: no cycle

    def recording_step(*args: Any, **kwargs: Any) -> Any:
        owner()._opt_called = True
        return own_step(*args, **kwargs)
    recording_step._wrapped_by_lr_sched = True
    optimizer.step = recording_step


class _Flag:
    """Set attribute ``name`` of a scheduler to True inside a ``with`` block."""

    def __init__(self, scheduler: "LRScheduler", name: str):
        self.scheduler, self.name = scheduler, name

    def __enter__(self) -> None:
        setattr(self.scheduler, self.name, True)

    def __exit__(self, *exc: Any) -> None:
        setattr(self.scheduler, self.name, False)


class LRScheduler:
    """Base class: subclasses define ``get_lr()`` (and may define ``_get_closed_form_lr``).
    Making a scheduler overwrites its optimizer's ``lr``s, so when resuming, make it
    before ``optimizer.load_state_dict``."""

    _get_lr_called_within_step: bool = False
    _is_initial: bool = False

    def __init__(self, optimizer: Optimizer, last_epoch: int = -1) -> None:
        check_optimizer(optimizer)
        self.optimizer = optimizer
        if last_epoch == -1:
            for group in optimizer.param_groups:
                lr = group["lr"]
                group.setdefault("initial_lr", lr.clone() if isinstance(lr, Tensor) else lr)
        else:
            for i, group in enumerate(optimizer.param_groups):
                if "initial_lr" not in group:
                    raise KeyError(
                        f"param 'initial_lr' is not specified in param_groups[{i}] when "
                        "resuming scheduler with last_epoch >= 0.\nThis typically happens "
                        "when:\n1. You're trying to resume training from a checkpoint but "
                        "haven't properly loaded the optimizer state\n2. You're using "
                        "last_epoch >= 0 for a fresh training run (not recommended)")
        self.base_lrs = group_values(optimizer, "initial_lr")
        self.last_epoch = last_epoch
        _mark_instance_step(optimizer)
        self._initial_step()

    def _initial_step(self) -> None:
        self._step_count = 0
        with _Flag(self, "_is_initial"):
            self.step()

    def state_dict(self) -> dict:
        """Every attribute but the optimizer."""
        return {k: v for k, v in self.__dict__.items() if k != "optimizer"}

    def load_state_dict(self, state_dict: dict) -> None:
        self.__dict__.update(state_dict)

    def get_last_lr(self) -> list:
        """The learning rates the last step set, one per parameter group."""
        return self._last_lr

    def get_lr(self) -> list:
        """The next learning rate of each group (use `get_last_lr` to read the current)."""
        raise NotImplementedError

    def step(self, epoch: int | None = None) -> None:
        """Advance the schedule; call it after ``optimizer.step()``."""
        if self._step_count == 1:
            own_step = vars(self.optimizer).get("step")
            if own_step is not None and not getattr(own_step, "_wrapped_by_lr_sched", False):
                warnings.warn(_OVERRIDDEN, UserWarning, stacklevel=2)
            elif not getattr(self.optimizer, "_opt_called", False):
                warnings.warn(_BEFORE_OPTIMIZER, UserWarning, stacklevel=2)
        self._step_count += 1
        if epoch is not None:
            warnings.warn(EPOCH_DEPRECATION_WARNING, UserWarning, stacklevel=2)
        self._update_lr(epoch)

    def _update_lr(self, epoch: int | None = None) -> None:
        with _Flag(self, "_get_lr_called_within_step"):
            if epoch is None:
                self.last_epoch += 1
                values = self.get_lr()
            else:
                self.last_epoch = epoch
                closed_form = getattr(self, "_get_closed_form_lr", None)
                values = closed_form() if closed_form is not None else self.get_lr()
        self._write_lrs(values)

    def _write_lrs(self, values: list) -> None:
        groups = self.optimizer.param_groups
        if len(values) != len(groups):
            raise ValueError(f"{type(self).__name__} computed {len(values)} learning rates "
                             f"for {len(groups)} parameter groups")
        for group, lr in zip(groups, values):
            set_group_value(group, "lr", lr)
        self._last_lr = group_values(self.optimizer, "lr")

    def _warn_if_outside_step(self) -> None:
        if not self._get_lr_called_within_step:
            warnings.warn("To get the last learning rate computed by the scheduler, please "
                          "use `get_last_lr()`.", UserWarning, stacklevel=3)


class _LRScheduler(LRScheduler):
    """The old name of `LRScheduler`, kept for code that subclasses it."""
