"""PyTorch's global switches that concern determinism, warnings and denormals.

funcgrad's CPU kernels are numpy's, which are deterministic, so
``use_deterministic_algorithms`` has nothing to switch: its setting is kept and read back
as PyTorch's is, with PyTorch's checks. Flushing denormals to zero is not available from
numpy, so ``set_flush_denormal(True)`` answers False (unsupported), as PyTorch does on a CPU
without the feature.
"""
from __future__ import annotations

from typing import Any

from funcgrad.torch._runtime import anomaly

__all__ = ["use_deterministic_algorithms", "are_deterministic_algorithms_enabled",
           "is_deterministic_algorithms_warn_only_enabled", "set_deterministic_debug_mode",
           "get_deterministic_debug_mode", "set_warn_always", "is_warn_always_enabled",
           "set_flush_denormal", "init_num_threads", "is_anomaly_enabled",
           "is_anomaly_check_nan_enabled", "set_anomaly_enabled"]

_state = {"deterministic": False, "warn_only": False, "warn_always": False}
_DEBUG_MODES = ("default", "warn", "error")


def use_deterministic_algorithms(mode: bool, *, warn_only: bool = False) -> None:
    if not isinstance(mode, bool):
        raise TypeError("_set_deterministic_algorithms(): argument 'mode' (position 1) must "
                        f"be bool, not {type(mode).__name__}")
    _state["deterministic"], _state["warn_only"] = mode, bool(warn_only)


def are_deterministic_algorithms_enabled() -> bool:
    return _state["deterministic"]


def is_deterministic_algorithms_warn_only_enabled() -> bool:
    return _state["warn_only"]


def set_deterministic_debug_mode(debug_mode: Any) -> None:
    """0 / "default": off; 1 / "warn": on, warning only; 2 / "error": on."""
    if isinstance(debug_mode, str):
        if debug_mode not in _DEBUG_MODES:
            raise RuntimeError("invalid value of debug_mode, expected one of `default`, "
                               f"`warn`, `error`, but got {debug_mode}")
        debug_mode = _DEBUG_MODES.index(debug_mode)
    if debug_mode not in (0, 1, 2):
        raise RuntimeError("invalid value of debug_mode, expected 0, 1, or 2, but got "
                           f"{debug_mode}")
    _state["deterministic"], _state["warn_only"] = debug_mode > 0, debug_mode == 1


def get_deterministic_debug_mode() -> int:
    if not _state["deterministic"]:
        return 0
    return 1 if _state["warn_only"] else 2


def set_warn_always(b: bool) -> None:
    _state["warn_always"] = bool(b)


def is_warn_always_enabled() -> bool:
    return _state["warn_always"]


def set_flush_denormal(mode: bool) -> bool:
    """Whether the requested mode is in effect: numpy keeps denormals, so only ``False``."""
    return not mode


def init_num_threads() -> None:
    """Nothing to initialise: numpy's threads are its BLAS library's."""


is_anomaly_enabled = anomaly.is_anomaly_enabled
is_anomaly_check_nan_enabled = anomaly.is_anomaly_check_nan_enabled


def set_anomaly_enabled(enabled: bool, check_nan: bool = True) -> None:
    anomaly.set_detect_anomaly(enabled, check_nan)
