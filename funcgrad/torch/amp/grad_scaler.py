"""``torch.amp.GradScaler``: loss scaling for float16 training, with PyTorch's semantics.

``scaler.scale(loss).backward()`` multiplies the loss (so the gradients) by the scale,
keeping small float16 gradients from flushing to zero; ``scaler.step(optimizer)``
unscales the gradients (``unscale_``, once per optimizer and iteration) and skips the step
if any is inf or NaN; ``scaler.update()`` then backs the scale off after a skipped step or
grows it after ``growth_interval`` good ones (`funcgrad.amp.update_scale`, the functional
form). The scale and the count of good steps are float32 and int32 tensors on the
gradients' device, made at the first ``scale`` call.

``GradScaler("cuda")`` without a GPU warns and disables itself (every method is then a
pass-through), as PyTorch does; ``GradScaler("cpu")`` always works.
"""
from __future__ import annotations

import enum
import warnings
from collections import defaultdict
from typing import Any, Iterable

import funcgrad.amp as functional_amp
from funcgrad.backend import cupy_available
from funcgrad.torch._runtime import dtypes as D
from funcgrad.torch._tensor import Tensor
from funcgrad.torch._runtime import grad_mode
from funcgrad.torch._factories import full

__all__ = ["GradScaler", "OptState"]


class OptState(enum.Enum):
    READY = 0
    UNSCALED = 1
    STEPPED = 2


def _fresh_state() -> dict:
    return {"stage": OptState.READY, "found_inf_per_device": {}}


class GradScaler:
    """PyTorch's GradScaler (``device``: "cuda" or "cpu")."""

    def __init__(self, device: str = "cuda", init_scale: float = 2.0 ** 16,
                 growth_factor: float = 2.0, backoff_factor: float = 0.5,
                 growth_interval: int = 2000, enabled: bool = True) -> None:
        self._device = device
        self._enabled = enabled
        if device == "cuda" and enabled and not cupy_available():
            warnings.warn("torch.cuda.amp.GradScaler is enabled, but CUDA is not available."
                          "  Disabling.", stacklevel=2)
            self._enabled = False
        if self._enabled:
            if growth_factor <= 1.0:
                raise AssertionError("The growth factor must be > 1.0.")
            if backoff_factor >= 1.0:
                raise AssertionError("The backoff factor must be < 1.0.")
            self._init_scale = init_scale
            self._scale: Tensor | None = None
            self._growth_factor = growth_factor
            self._backoff_factor = backoff_factor
            self._growth_interval = growth_interval
            self._init_growth_tracker = 0
            self._growth_tracker: Tensor | None = None
            self._per_optimizer_states: dict = defaultdict(_fresh_state)

    # -- scale and tracker --------------------------------------------------------------
    def _check_scale_growth_tracker(self, funcname: str) -> tuple:
        fix = ("This may indicate your script did not use scaler.scale(loss or outputs) "
               "earlier in the iteration.")
        if self._scale is None:
            raise AssertionError(f"Attempted {funcname} but _scale is None.  " + fix)
        if self._growth_tracker is None:
            raise AssertionError(f"Attempted {funcname} but _growth_tracker is None.  " + fix)
        return self._scale, self._growth_tracker

    def _lazy_init_scale_growth_tracker(self, dev: D.device) -> None:
        if self._growth_tracker is not None:
            raise AssertionError("_growth_tracker initialized before _scale")
        self._scale = full((), self._init_scale, dtype=D.float32, device=dev)
        self._growth_tracker = full((), self._init_growth_tracker, dtype=D.int32, device=dev)

    def scale(self, outputs: Any) -> Any:
        """``outputs`` (a tensor, or an iterable of them) times the scale."""
        if not self._enabled:
            return outputs
        if isinstance(outputs, Tensor):
            if self._scale is None:
                self._lazy_init_scale_growth_tracker(outputs.device)
            return outputs * self._scale.to(device=outputs.device, non_blocking=True)
        stash: list = []

        def apply_scale(val: Any) -> Any:
            if isinstance(val, Tensor):
                if not stash:
                    if self._scale is None:
                        self._lazy_init_scale_growth_tracker(val.device)
                    stash.append(self._scale)
                return val * stash[0].to(val.device)
            if isinstance(val, Iterable):
                iterable = map(apply_scale, val)
                return type(val)(iterable) if isinstance(val, (list, tuple)) else iterable
            raise ValueError("outputs must be a Tensor or an iterable of Tensors")
        return apply_scale(outputs)

    # -- unscaling and stepping ---------------------------------------------------------
    def _unscale_grads_(self, optimizer: Any, inv_scale: Tensor, found_inf: Tensor,
                        allow_fp16: bool) -> dict:
        """Multiply every gradient by ``inv_scale`` in place; per device, a float32 flag
        that is 1 where some gradient had an inf or NaN."""
        found: dict = {}
        with grad_mode.no_grad():
            for group in optimizer.param_groups:
                for param in group["params"]:
                    if not isinstance(param, Tensor):
                        raise AssertionError(f"expected param to be torch.Tensor, got "
                                             f"{type(param).__name__}")
                    grad = param.grad
                    if grad is None:
                        continue
                    if not allow_fp16 and grad.dtype is D.float16:
                        raise ValueError("Attempting to unscale FP16 gradients.")
                    dev = grad.device
                    bad = (~grad.isfinite()).any().to(D.float32)
                    found[dev] = found.get(dev, found_inf.to(dev)).maximum(bad)
                    grad.mul_(inv_scale.to(dev))
        return found

    def unscale_(self, optimizer: Any) -> None:
        """Divide ``optimizer``'s gradients by the scale (in place), once per iteration:
        call it before clipping gradients; ``step`` calls it if you did not."""
        if not self._enabled:
            return
        self._check_scale_growth_tracker("unscale_")
        optimizer_state = self._per_optimizer_states[id(optimizer)]
        if optimizer_state["stage"] is OptState.UNSCALED:
            raise RuntimeError("unscale_() has already been called on this optimizer since "
                               "the last update().")
        if optimizer_state["stage"] is OptState.STEPPED:
            raise RuntimeError("unscale_() is being called after step().")
        inv_scale = self._scale.double().reciprocal().float()  # FP32 division can round
        found_inf = full((), 0.0, dtype=D.float32, device=self._scale.device)
        optimizer_state["found_inf_per_device"] = self._unscale_grads_(optimizer, inv_scale,
                                                                       found_inf, False)
        optimizer_state["stage"] = OptState.UNSCALED

    def step(self, optimizer: Any, *args: Any, **kwargs: Any) -> Any:
        """``optimizer.step(*args, **kwargs)`` unless the unscaled gradients have an inf
        or NaN (then the step is skipped and None returned)."""
        if not self._enabled:
            return optimizer.step(*args, **kwargs)
        if "closure" in kwargs:
            raise RuntimeError("Closure use is not currently supported if GradScaler is "
                               "enabled.")
        self._check_scale_growth_tracker("step")
        optimizer_state = self._per_optimizer_states[id(optimizer)]
        if optimizer_state["stage"] is OptState.STEPPED:
            raise RuntimeError("step() has already been called since the last update().")
        if optimizer_state["stage"] is OptState.READY:
            self.unscale_(optimizer)
        if len(optimizer_state["found_inf_per_device"]) == 0:
            raise AssertionError("No inf checks were recorded for this optimizer.")
        retval = None
        if not sum(v.item() for v in optimizer_state["found_inf_per_device"].values()):
            retval = optimizer.step(*args, **kwargs)
        optimizer_state["stage"] = OptState.STEPPED
        return retval

    def update(self, new_scale: float | Tensor | None = None) -> None:
        """Back the scale off if a step was skipped this iteration, else count a good
        step (growing the scale every ``growth_interval``); or set it to ``new_scale``."""
        if not self._enabled:
            return
        _scale, _growth_tracker = self._check_scale_growth_tracker("update")
        if new_scale is not None:
            self._set_scale(new_scale)
        else:
            found_infs = [found_inf.to(device=_scale.device)
                          for state in self._per_optimizer_states.values()
                          for found_inf in state["found_inf_per_device"].values()]
            if len(found_infs) == 0:
                raise AssertionError("No inf checks were recorded prior to update.")
            found = sum(float(f.item()) for f in found_infs)
            scale, tracker = functional_amp.update_scale(
                _scale.item(), _growth_tracker.item(), found, self._growth_factor,
                self._backoff_factor, self._growth_interval)
            _scale.fill_(float(scale))
            _growth_tracker.fill_(int(tracker))
        self._per_optimizer_states = defaultdict(_fresh_state)

    def _set_scale(self, new_scale: Any) -> None:
        if isinstance(new_scale, float):
            self._scale.fill_(new_scale)
            return
        reason = ("new_scale should be a float or a 1-element torch.cuda.FloatTensor or "
                  "torch.FloatTensor with requires_grad=False.")
        if new_scale.device.type != self._device:
            raise AssertionError(reason)
        if new_scale.numel() != 1:
            raise AssertionError(reason)
        if new_scale.requires_grad is True:
            raise AssertionError(reason)
        self._scale.copy_(new_scale)

    # -- reading and setting -----------------------------------------------------------
    def get_scale(self) -> float:
        """The current scale as a Python float (1.0 when disabled)."""
        if self._enabled:
            return self._init_scale if self._scale is None else float(self._scale.item())
        return 1.0

    def get_growth_factor(self) -> float:
        return self._growth_factor

    def set_growth_factor(self, new_factor: float) -> None:
        self._growth_factor = new_factor

    def get_backoff_factor(self) -> float:
        return self._backoff_factor

    def set_backoff_factor(self, new_factor: float) -> None:
        self._backoff_factor = new_factor

    def get_growth_interval(self) -> int:
        return self._growth_interval

    def set_growth_interval(self, new_interval: int) -> None:
        self._growth_interval = new_interval

    def _get_growth_tracker(self) -> int:
        if self._enabled:
            return (self._init_growth_tracker if self._growth_tracker is None
                    else int(self._growth_tracker.item()))
        return 0

    def is_enabled(self) -> bool:
        return self._enabled

    def state_dict(self) -> dict:
        """scale, growth_factor, backoff_factor, growth_interval and _growth_tracker
        (empty when disabled); save it after ``update``."""
        if self._enabled:
            return {"scale": self.get_scale(), "growth_factor": self._growth_factor,
                    "backoff_factor": self._backoff_factor,
                    "growth_interval": self._growth_interval,
                    "_growth_tracker": self._get_growth_tracker()}
        return {}

    def load_state_dict(self, state_dict: dict) -> None:
        if not self._enabled:
            return
        if len(state_dict) == 0:
            raise RuntimeError("The source state dict is empty, possibly because it was "
                               "saved from a disabled instance of GradScaler.")
        self._init_scale = state_dict["scale"]
        if self._scale is not None:
            self._scale.fill_(state_dict["scale"])
        self._growth_factor = state_dict["growth_factor"]
        self._backoff_factor = state_dict["backoff_factor"]
        self._growth_interval = state_dict["growth_interval"]
        self._init_growth_tracker = state_dict["_growth_tracker"]
        if self._growth_tracker is not None:
            self._growth_tracker.fill_(state_dict["_growth_tracker"])

    def __getstate__(self) -> dict:
        state = self.__dict__.copy()
        if self._enabled:
            if len(self._per_optimizer_states) != 0:
                raise AssertionError("A GradScaler instance may only be pickled at the "
                                     "beginning of an iteration, or at the end after "
                                     "scaler.update().")
            state["_init_scale"] = self.get_scale()
            state["_init_growth_tracker"] = self._get_growth_tracker()
            state["_scale"] = None
            state["_growth_tracker"] = None
        return state

    def __setstate__(self, state: dict) -> None:
        self.__dict__.update(state)
