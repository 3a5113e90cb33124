"""`funcgrad.config`: global options, set the way JAX's are (``config.update(name, value)``).

``jax_debug_nans`` and ``jax_debug_infs`` (off by default; also the blocks
``with funcgrad.debug_nans(True):`` and `debug_infs`) make every primitive that produces a
NaN (an infinity) raise FloatingPointError naming it; a jitted call whose results hold one
runs again without jit, op by op, to find it, as JAX does. `float_checks` is what
`funcgrad.core` reads on each operation.

``jax_enable_x64`` (alias ``funcgrad_enable_x64``) says whether the
dtypes funcgrad *chooses* are 64-bit. It is on by default (funcgrad follows numpy, whose
default float is float64); the shell variable ``FUNCGRAD_ENABLE_X64`` (or JAX's
``JAX_ENABLE_X64``) set to 0/false turns it off at import.

With x64 disabled, as in JAX:

- creation functions (``asarray``, ``array``, ``zeros``, ``full``, ``arange``,
  ``linspace``, ``eye``, ...) canonicalise 64-bit inputs and defaults to 32 bits: Python
  floats, float64 lists and numpy arrays become float32, int64 int32, uint64 uint32 and
  complex128 complex64;
- the defaults funcgrad picks elsewhere (``__array_namespace_info__().default_dtypes()``,
  the mean of int64) are 32-bit; the mean of 32-bit and narrower integers is float32 in
  either mode, as in JAX (`funcgrad._promotion.computed_dtype`).

``jax_numpy_dtype_promotion`` ("standard" or "strict"; also the block
``with funcgrad.numpy_dtype_promotion("strict"):``) chooses JAX's lattice: in strict mode
operands of different dtypes have no common type (Python numbers still take the array's).

Operations promote by JAX's lattice (`funcgrad._promotion`), in either mode: Python
numbers are weakly typed (``x32 * 2.0`` is float32), and with x64 disabled a lone Python
number, a numpy array or a numpy scalar handed to an elementwise operation becomes 32-bit
(``log(exp(100.0))`` is inf, as in JAX). A 64-bit dtype requested explicitly
(``zeros(3, dtype=float64)``, ``array(1, dtype=int64)``, ``x.astype(float64)``,
``arange``/``linspace``/``full``/``*_like``/``sum``/``mean``... with ``dtype=``) is
truncated to 32 bits with JAX's UserWarning, as in JAX (`requested_dtype`); ``dtype=int``,
``float`` or ``complex`` asks silently for the default. Where funcgrad differs from JAX, on
purpose: Arrays made before the flag changed keep their dtype, and so do the requests
funcgrad's own code makes in their dtypes (the transforms' cotangents and tangents, the
torch facade), so that their gradients stay 64-bit; an operation on them stays 64-bit.
Results are weakly typed as JAX's (`funcgrad.array.WeakArray`, ``x.weak_type``):
``asarray(2.0)``, ``full(3, 1.0)``, an operation whose operands are all weak
(``exp(2.0)``: a weak float64 with x64, which float32 Arrays then absorb, so
``x32 * exp(2.0)`` is float32) or whose promoted type is weak (``int32 * 2.0``), and shape
operations on weak operands; reductions, ``astype`` and explicit dtypes are strong. It holds
under every transform (a tracer's weak type is its primal's; jit's compiled outputs keep
the traced ones'), and ``eval_shape`` reports it. The PyTorch facade's tensors hold
strong Arrays (PyTorch has no weak types). ``grad`` of a weak input is weak, as JAX's.
"""
from __future__ import annotations

import contextlib
import os
import sys
import warnings
from typing import Any, Iterator

import numpy as np

__all__ = ["config", "canonical_dtype", "requested_dtype", "default_float", "default_int",
           "default_complex", "float_checks", "debug_nans", "debug_infs",
           "numpy_dtype_promotion"]

_ALIASES = {"jax_enable_x64": "jax_enable_x64", "funcgrad_enable_x64": "jax_enable_x64",
            "jax_debug_nans": "jax_debug_nans", "funcgrad_debug_nans": "jax_debug_nans",
            "jax_debug_infs": "jax_debug_infs", "funcgrad_debug_infs": "jax_debug_infs",
            "jax_numpy_dtype_promotion": "jax_numpy_dtype_promotion",
            "jax_explain_cache_misses": "jax_explain_cache_misses"}
# the options that take one of a few strings (the others are flags)
_CHOICES = {"jax_numpy_dtype_promotion": ("standard", "strict")}


class FloatChecks:
    """Whether results are checked for NaNs and infinities (``on``: either)."""

    __slots__ = ("nans", "infs", "on")

    def __init__(self) -> None:
        self.nans = self.infs = self.on = False


float_checks = FloatChecks()
_NARROW = {np.dtype(np.float64): np.dtype(np.float32),
           np.dtype(np.int64): np.dtype(np.int32),
           np.dtype(np.uint64): np.dtype(np.uint32),
           np.dtype(np.complex128): np.dtype(np.complex64)}


def _env_flag(default: bool) -> bool:
    for name in ("FUNCGRAD_ENABLE_X64", "JAX_ENABLE_X64"):
        raw = os.environ.get(name)
        if raw is not None:
            return raw.strip().lower() not in ("0", "false", "no", "off", "")
    return default


class Config:
    """funcgrad's options: read them as attributes (``config.jax_enable_x64``) or with
    `read`, change them with `update` (or, for a block of code, `enable_x64`)."""

    def __init__(self) -> None:
        self._values = {"jax_enable_x64": _env_flag(True), "jax_debug_nans": False,
                        "jax_debug_infs": False, "jax_numpy_dtype_promotion": "standard",
                        "jax_explain_cache_misses": False}
        # read by every promotion that is not the fast path (`funcgrad._promotion`)
        self.strict_promotion = False

    def _key(self, name: str) -> str:
        key = _ALIASES.get(name)
        if key is None:
            raise AttributeError(f"Unrecognized config option: {name}")
        return key

    def update(self, name: str, value: Any) -> None:
        """Set option ``name`` (e.g. ``config.update("jax_enable_x64", False)``)."""
        key = self._key(name)
        choices = _CHOICES.get(key)
        if choices is not None:
            if value not in choices:
                raise ValueError(f"{value!r} is not a valid value of {name}: one of "
                                 f"{', '.join(map(repr, choices))}")
            self._values[key] = value
            self.strict_promotion = self._values["jax_numpy_dtype_promotion"] == "strict"
            return
        if not isinstance(value, (bool, np.bool_, int)):
            raise TypeError(f"config option {name} takes a bool, got {value!r}")
        self._values[key] = bool(value)
        float_checks.nans = self._values["jax_debug_nans"]
        float_checks.infs = self._values["jax_debug_infs"]
        float_checks.on = float_checks.nans or float_checks.infs

    def read(self, name: str) -> Any:
        """The value of option ``name``."""
        return self._values[self._key(name)]

    def __getattr__(self, name: str) -> Any:
        if name.startswith("_"):
            raise AttributeError(name)
        return self.read(name)

    @property
    def x64_enabled(self) -> bool:
        return self._values["jax_enable_x64"]

    @contextlib.contextmanager
    def enable_x64(self, value: bool = True) -> Iterator[None]:
        """``with config.enable_x64(False): ...`` sets the flag for the block only."""
        old = self._values["jax_enable_x64"]
        self.update("jax_enable_x64", value)
        try:
            yield
        finally:
            self._values["jax_enable_x64"] = old

    def __repr__(self) -> str:
        return f"funcgrad.config({self._values})"


config = Config()


@contextlib.contextmanager
def _option(name: str, value: Any) -> Iterator[None]:
    old = config.read(name)
    config.update(name, value)
    try:
        yield
    finally:
        config.update(name, old)


def debug_nans(value: bool = True) -> contextlib.AbstractContextManager:
    """``with debug_nans(True): ...``: ``jax_debug_nans`` for the block only."""
    return _option("jax_debug_nans", value)


def debug_infs(value: bool = True) -> contextlib.AbstractContextManager:
    """``with debug_infs(True): ...``: ``jax_debug_infs`` for the block only."""
    return _option("jax_debug_infs", value)


def numpy_dtype_promotion(value: str) -> contextlib.AbstractContextManager:
    """``with numpy_dtype_promotion("strict"): ...``: ``jax_numpy_dtype_promotion`` for the
    block only (JAX's context manager): in strict mode operands of different dtypes do not
    promote (Python numbers still do), so a silent widening becomes an error."""
    return _option("jax_numpy_dtype_promotion", value)


def canonical_dtype(dtype: Any) -> np.dtype | None:
    """An inferred or default ``dtype`` as funcgrad stores it: itself with x64 enabled,
    else its 32-bit form (None stays None)."""
    if dtype is None:
        return None
    dtype = np.dtype(dtype)
    if config.x64_enabled:
        return dtype
    return _NARROW.get(dtype, dtype)


# modules whose functions only pass a call on (Array's methods): `requested_dtype` looks
# past them for the code that asked
_FORWARDERS = frozenset({"funcgrad.numpy._methods"})


def requested_dtype(dtype: Any, fun_name: str) -> np.dtype | None:
    """An explicitly requested ``dtype`` (None stays None), as the public function
    ``fun_name`` that calls this directly makes it (the Python types ``int``, ``float``,
    ``complex`` ask for their kind's default, as in JAX). With x64 disabled a 64-bit request
    from user code is truncated to 32 bits with JAX's UserWarning (pointing at that
    code); a request from funcgrad's own code is honoured, because the transforms make
    cotangents and tangents in the dtypes of existing Arrays, which may be 64-bit when
    they were made before the flag changed (the torch facade's dtypes are PyTorch's,
    which has no such flag)."""
    if dtype is None:
        return None
    if dtype is int or dtype is float or dtype is complex:  # their default, silently
        return canonical_dtype(dtype)
    dtype = np.dtype(dtype)
    narrow = None if config.x64_enabled else _NARROW.get(dtype)
    if narrow is None:
        return dtype
    frame, level = sys._getframe(2), 3  # the caller of `fun_name`
    while frame.f_globals.get("__name__") in _FORWARDERS:
        frame, level = frame.f_back, level + 1
    module = frame.f_globals.get("__name__", "")
    if module == "funcgrad" or module.startswith("funcgrad."):
        return dtype
    warnings.warn(f"Explicitly requested dtype {dtype} requested in {fun_name} is not "
                  f"available, and will be truncated to dtype {narrow.name}. To enable "
                  "more dtypes, set the jax_enable_x64 configuration option or the "
                  "JAX_ENABLE_X64 shell environment variable. See "
                  "https://github.com/jax-ml/jax#current-gotchas for more.",
                  stacklevel=level)
    return narrow


def default_float() -> np.dtype:
    """float64, or float32 with x64 disabled."""
    return np.dtype(np.float64 if config.x64_enabled else np.float32)


def default_int() -> np.dtype:
    """int64, or int32 with x64 disabled."""
    return np.dtype(np.int64 if config.x64_enabled else np.int32)


def default_complex() -> np.dtype:
    """complex128, or complex64 with x64 disabled."""
    return np.dtype(np.complex128 if config.x64_enabled else np.complex64)
