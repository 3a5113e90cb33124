"""Anomaly detection: remember where each node was created, and check for NaN gradients.

With `detect_anomaly()` (or ``set_detect_anomaly(True)``) every node records the Python
stack of the forward call that created it. When a backward function fails, the engine
warns with that stack before re-raising; when one returns NaN it raises
"Function 'XBackward0' returned nan values in its 0th output." — PyTorch's behaviour.
"""
from __future__ import annotations

import functools
import traceback
import warnings
from typing import Any

__all__ = ["detect_anomaly", "set_detect_anomaly", "is_anomaly_enabled",
           "is_anomaly_check_nan_enabled", "forward_trace", "warn_forward_trace"]

_mode = {"enabled": False, "check_nan": True}


def is_anomaly_enabled() -> bool:
    return _mode["enabled"]


def is_anomaly_check_nan_enabled() -> bool:
    return _mode["check_nan"]


def forward_trace() -> list | None:
    """The current stack (without funcgrad's own frames) when anomaly mode is on."""
    if not _mode["enabled"]:
        return None
    frames = traceback.extract_stack()
    keep = [f for f in frames if "/funcgrad/torch/" not in f.filename.replace("\\", "/")]
    return traceback.format_list(keep)


def warn_forward_trace(node: Any) -> None:
    """Warn with the forward traceback of ``node`` (called when its backward failed)."""
    trace = getattr(node, "_trace", None)
    if trace is None:  # made before anomaly mode was switched on
        warnings.warn(f"Error detected in {node.name()}. No forward pass information "
                      "available. Enable detect anomaly during forward pass for more "
                      "information.", stacklevel=2)
        return
    warnings.warn(f"Error detected in {node.name()}. Traceback of forward call that caused "
                  "the error:\n" + "".join(trace), stacklevel=2)


class detect_anomaly:
    """Context manager (and decorator) enabling anomaly detection inside it."""

    def __init__(self, check_nan: bool = True) -> None:
        self.check_nan = check_nan
        self.prev = (_mode["enabled"], _mode["check_nan"])
        warnings.warn("Anomaly Detection has been enabled. This mode will increase the "
                      "runtime and should only be enabled for debugging.", stacklevel=2)

    def __enter__(self) -> None:
        self.prev = (_mode["enabled"], _mode["check_nan"])
        _mode["enabled"], _mode["check_nan"] = True, self.check_nan

    def __exit__(self, *exc: Any) -> None:
        _mode["enabled"], _mode["check_nan"] = self.prev

    def __call__(self, func: Any) -> Any:

        @functools.wraps(func)
        def wrapper(*args: Any, **kwargs: Any) -> Any:
            with self:
                return func(*args, **kwargs)
        return wrapper


class set_detect_anomaly:
    """``set_detect_anomaly(mode)`` switches anomaly detection on or off at once; as a
    context manager it restores the previous setting on exit."""

    def __init__(self, mode: bool, check_nan: bool = True) -> None:
        self.prev = (_mode["enabled"], _mode["check_nan"])
        _mode["enabled"], _mode["check_nan"] = bool(mode), check_nan

    def __enter__(self) -> None:
        pass

    def __exit__(self, *exc: Any) -> None:
        _mode["enabled"], _mode["check_nan"] = self.prev
