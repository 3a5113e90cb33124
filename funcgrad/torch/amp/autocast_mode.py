"""``torch.autocast`` / ``torch.amp.autocast``: regions where ops run in lower precision.

Inside ``with torch.autocast("cpu"):`` (bfloat16 by default; float16 on "cuda") each op
that PyTorch's list for that device type names casts its floating inputs: matrix products,
linear layers and convolutions to the low dtype, losses and a few reductions to float32
(`funcgrad.torch._autocast_lists`), and runs; every other op runs in its inputs' dtypes.
The casts are ordinary differentiable ops (``ToCopyBackward0``), so gradients flow back
to float32 parameters in float32. Regions nest (an inner ``enabled=False`` region turns
autocast off; an inner region may change the dtype) and the state is per thread, as in
PyTorch. ``custom_fwd``/``custom_bwd`` make an ``autograd.Function`` autocast-aware.
"""
from __future__ import annotations

import functools
import warnings
from typing import Any, Callable

from funcgrad.backend import cupy_available
from funcgrad.torch import _autocast as state
from funcgrad.torch._runtime import dtypes as D

__all__ = ["autocast", "is_autocast_available", "custom_fwd", "custom_bwd"]

_SUPPORTED = (D.bfloat16, D.float16)


def is_autocast_available(device_type: str) -> bool:
    """Whether autocast works on ``device_type`` ('cpu' and 'cuda' in funcgrad)."""
    return device_type in state.DEVICE_TYPES


def _check_device_type_str(device_type: Any) -> None:
    if not isinstance(device_type, str):
        raise ValueError(f"Expected `device_type` of type `str`, got: `{type(device_type)}`")


class autocast:
    """``autocast(device_type, dtype=None, enabled=True, cache_enabled=None)``: a context
    manager (or decorator) running the ops of ``device_type`` tensors under autocast.
    ``dtype`` None: the device type's current autocast dtype (bfloat16 on the CPU,
    float16 on CUDA, unless changed); ``cache_enabled``: reuse the casts of parameters
    within the region (None: the current setting)."""

    def __init__(self, device_type: str, dtype: Any = None, enabled: bool = True,
                 cache_enabled: bool | None = None):
        _check_device_type_str(device_type)
        D.device(device_type)  # PyTorch's error for a string that names no device type
        if not is_autocast_available(device_type):
            raise RuntimeError(f"User specified an unsupported autocast device_type "
                               f"'{device_type}'")
        self.device = device_type
        self.fast_dtype = D.to_torch_dtype(state.get_dtype(device_type) if dtype is None
                                           else dtype)
        self._cache_enabled = (state.state.cache_enabled if cache_enabled is None
                               else bool(cache_enabled))
        if enabled:
            enabled = self._check_dtype()
        self._enabled = bool(enabled)

    def _check_dtype(self) -> bool:
        """Whether the region can be enabled (PyTorch's warnings and errors otherwise)."""
        if self.device == "cuda":
            if not cupy_available():
                warnings.warn("CUDA is not available or torch_xla is imported. Disabling "
                              "autocast.", stacklevel=3)
                return False
            if self.fast_dtype is D.bfloat16:  # cupy has no bfloat16 arrays
                raise RuntimeError("Current CUDA Device does not support bfloat16. Please "
                                   "switch dtype to float16.")
            return True
        if self.fast_dtype not in _SUPPORTED:
            name = self.device.upper()
            warnings.warn(f"In {name} autocast, but the target dtype is not supported. "
                          f"Disabling autocast.\n{name} Autocast only supports dtypes of "
                          f"{', '.join(map(str, _SUPPORTED))} currently.", stacklevel=3)
            return False
        return True

    def __enter__(self) -> "autocast":
        s = state.state
        self.prev_cache_enabled = s.cache_enabled
        self.prev = s.enabled[self.device]
        self.prev_fastdtype = s.dtype[self.device]
        state.set_enabled(self.device, self._enabled)
        state.set_dtype(self.device, self.fast_dtype)
        s.nesting += 1
        s.cache_enabled = self._cache_enabled
        return self

    def __exit__(self, *exc: Any) -> bool:
        s = state.state
        s.nesting -= 1
        if s.nesting == 0:
            s.cache.clear()  # the casts of parameters live as long as the outermost region
        state.set_enabled(self.device, self.prev)
        state.set_dtype(self.device, self.prev_fastdtype)
        s.cache_enabled = self.prev_cache_enabled
        return False

    def __call__(self, func: Callable) -> Callable:
        if not callable(func):
            raise TypeError(f"autocast()(func) requires a callable, but got "
                            f"{type(func).__name__}. Did you mean to use autocast as a "
                            "context manager? For example:\n    with torch.autocast("
                            "device_type=...):\n        output = model(input)")

        @functools.wraps(func)
        def decorate_autocast(*args: Any, **kwargs: Any) -> Any:
            with autocast(self.device, self.fast_dtype, self._enabled, self._cache_enabled):
                return func(*args, **kwargs)
        return decorate_autocast

    def __repr__(self) -> str:
        return (f"autocast(device_type={self.device!r}, dtype={self.fast_dtype}, "
                f"enabled={self._enabled})")


def custom_fwd(fwd: Callable | None = None, *, device_type: str,
               cast_inputs: Any = None) -> Callable:
    """Decorator for an ``autograd.Function``'s ``forward``: with ``cast_inputs`` (a dtype),
    inside an autocast region of ``device_type`` the floating tensor inputs are cast to it
    and ``forward`` runs with autocast off; without, ``forward`` runs in the current
    state. Either way ``custom_bwd`` gives ``backward`` the state ``forward`` had."""
    _check_device_type_str(device_type)
    if fwd is None:
        return functools.partial(custom_fwd, device_type=device_type, cast_inputs=cast_inputs)

    @functools.wraps(fwd)
    def decorate_fwd(*args: Any, **kwargs: Any) -> Any:
        ctx = args[0]
        ctx._dtype = state.get_dtype(device_type)
        on = state.is_enabled(device_type)
        if cast_inputs is None:
            ctx._fwd_used_autocast = on
            return fwd(*args, **kwargs)
        ctx._fwd_used_autocast = False
        if not on:
            return fwd(*args, **kwargs)
        dtype = D.to_torch_dtype(cast_inputs)
        with autocast(device_type=device_type, enabled=False):
            return fwd(*state.cast_tree(args, device_type, dtype),
                       **state.cast_tree(kwargs, device_type, dtype))
    return decorate_fwd


def custom_bwd(bwd: Callable | None = None, *, device_type: str) -> Callable:
    """Decorator for an ``autograd.Function``'s ``backward``: it runs with the autocast
    state its ``forward`` ran with (see `custom_fwd`)."""
    _check_device_type_str(device_type)
    if bwd is None:
        return functools.partial(custom_bwd, device_type=device_type)

    @functools.wraps(bwd)
    def decorate_bwd(*args: Any, **kwargs: Any) -> Any:
        ctx = args[0]
        with autocast(device_type=device_type, enabled=ctx._fwd_used_autocast,
                      dtype=ctx._dtype):
            return bwd(*args, **kwargs)
    return decorate_bwd
