"""``torch.testing``: `assert_close` with PyTorch's default tolerances per dtype and its
messages, for tensors, numpy arrays, Python numbers and sequences and mappings of them;
and `make_tensor`, random test tensors of a shape, dtype and range."""
from __future__ import annotations

import math
from typing import Any, Callable, Mapping, Sequence

import numpy as np

from funcgrad.torch._runtime import dtypes as D
from funcgrad.torch._factories import finish
from funcgrad.torch._tensor import Tensor

__all__ = ["assert_close", "assert_allclose", "make_tensor"]

# (rtol, atol) by dtype name: PyTorch's defaults; exact for the others
_TOLERANCES = {"float16": (1e-3, 1e-5), "bfloat16": (1.6e-2, 1e-5),
               "float32": (1.3e-6, 1e-5), "float64": (1e-7, 1e-7),
               "complex64": (1.3e-6, 1e-5), "complex128": (1e-7, 1e-7)}


class _Mismatch(AssertionError):
    """A difference found at ``path`` (the items leading to it)."""


def _tolerances(dtype_name: str, rtol: Any, atol: Any) -> tuple:
    if (rtol is None) != (atol is None):
        missing = "atol" if atol is None else "rtol"
        raise ValueError(f"Both 'rtol' and 'atol' must be either specified or omitted, but "
                         f"got no {missing}.")
    if rtol is not None:
        return rtol, atol
    return _TOLERANCES.get(dtype_name, (0.0, 0.0))


def _as_array(value: Any) -> tuple:
    """(numpy values, torch dtype, device name) of a tensor-like."""
    if isinstance(value, Tensor):
        return value.detach().resolve_conj().numpy(force=True), value.dtype, str(value.device)
    array = np.asarray(value)
    return array, D.to_torch_dtype(array.dtype), "cpu"


def _check_attributes(actual: Any, expected: Any, check_dtype: bool,
                      check_device: bool, check_stride: bool) -> None:
    a_values, a_dtype, a_device = _as_array(actual)
    e_values, e_dtype, e_device = _as_array(expected)
    checks = [("shape", D.Size(a_values.shape), D.Size(e_values.shape))]
    if check_device:
        checks.append(("device", a_device, e_device))
    if check_dtype:
        checks.append(("dtype", a_dtype, e_dtype))
    if check_stride and isinstance(actual, Tensor) and isinstance(expected, Tensor):
        checks.append(("stride()", actual.stride(), expected.stride()))
    for name, a, e in checks:
        if a != e:
            raise AssertionError(f"The values for attribute '{name}' do not match: {a} != "
                                 f"{e}.")


def _differences(a: np.ndarray, e: np.ndarray, floating: bool) -> tuple:
    """|a - e| and |a - e| / |e|, in the values' precision (integers: the default float)."""
    work = np.result_type(a.dtype, e.dtype) if floating else D.get_default_dtype().np
    a, e = a.astype(work), e.astype(work)
    with np.errstate(all="ignore"):
        absolute = np.abs(a - e)
        absolute = np.where(a == e, 0, absolute)  # (equal infinities differ by nothing)
        relative = absolute / np.abs(e)
    return absolute, relative


def _where_greatest(diff: np.ndarray) -> tuple:
    """(greatest difference, its index); a NaN is the greatest, as PyTorch's max."""
    flat = diff.reshape(-1)
    nans = np.flatnonzero(np.isnan(flat))
    k = int(nans[0]) if nans.size else int(np.argmax(flat))
    return flat[k].item(), np.unravel_index(k, diff.shape)


def _compare_tensors(actual: Any, expected: Any, rtol: Any, atol: Any, equal_nan: bool,
                     options: dict) -> None:
    _check_attributes(actual, expected, **options)
    a, dtype, _ = _as_array(actual)
    e, _, _ = _as_array(expected)
    floating = dtype.is_floating_point or dtype.is_complex
    rtol, atol = _tolerances(dtype.name, rtol, atol)
    if a.size == 0:
        return
    absolute, relative = _differences(a, e, floating)
    with np.errstate(all="ignore"):
        close = (absolute <= atol + rtol * np.abs(e.astype(absolute.dtype))) | (a == e)
    if equal_nan:
        close |= np.isnan(a) & np.isnan(e)
    if close.all():
        return
    if a.ndim == 0:
        raise _Mismatch(_scalar_text(a.item(), e.item(), rtol, atol))
    bad = int(close.size - close.sum())
    exact = rtol == 0 and atol == 0
    lines = [f"Tensor-likes are not {'equal' if exact else 'close'}!", "",
             f"Mismatched elements: {bad} / {close.size} ({100 * bad / close.size:.1f}%)"]
    for name, diff, tol in (("absolute", absolute, atol), ("relative", relative, rtol)):
        value, index = _where_greatest(diff)
        if name == "absolute" and not floating:
            value = int(value)
        lines.append(f"Greatest {name} difference: {value} at index {tuple(int(i) for i in index)}"
                     + ("" if exact else f" (up to {tol} allowed)"))
    raise _Mismatch("\n".join(lines))


def _scalar_text(actual: Any, expected: Any, rtol: float, atol: float) -> str:
    exact = rtol == 0 and atol == 0
    absolute = abs(actual - expected) if actual != expected else 0
    relative = absolute / abs(expected) if expected else math.inf if absolute else 0.0
    if isinstance(actual, float) and math.isnan(actual) or isinstance(
            expected, float) and math.isnan(expected):
        absolute = relative = math.nan
    tail = ("", "") if exact else (f" (up to {atol} allowed)", f" (up to {rtol} allowed)")
    return (f"Scalars are not {'equal' if exact else 'close'}!\n\nExpected {expected} but got "
            f"{actual}.\nAbsolute difference: {absolute}{tail[0]}\nRelative difference: "
            f"{relative}{tail[1]}")


def _compare_numbers(actual: Any, expected: Any, rtol: Any, atol: Any, equal_nan: bool,
                     check_dtype: bool) -> None:
    if check_dtype and type(actual) is not type(expected):
        raise AssertionError(f"The (d)types do not match: {type(actual)} != {type(expected)}.")
    kind = "float64" if isinstance(actual, float) or isinstance(expected, float) else (
        "complex128" if isinstance(actual, complex) else "int64")
    rtol, atol = _tolerances(kind, rtol, atol)
    if actual == expected or (equal_nan and actual != actual and expected != expected):
        return
    if abs(actual - expected) <= atol + rtol * abs(expected):
        return
    raise _Mismatch(_scalar_text(actual, expected, rtol, atol))


def _is_tensor_like(x: Any) -> bool:
    return isinstance(x, (Tensor, np.ndarray, np.generic))


def _compare(actual: Any, expected: Any, path: str, compare: Callable) -> None:
    """Walk the sequences and mappings of both; compare each pair of leaves."""
    try:
        if isinstance(actual, Mapping) and isinstance(expected, Mapping):
            if set(actual) != set(expected):
                raise AssertionError(f"The keys of the mappings do not match:\nMissing keys "
                                     f"in the actual mapping: {sorted(set(expected) - set(actual))}"
                                     f"\nAdditional keys in the actual mapping: "
                                     f"{sorted(set(actual) - set(expected))}")
            for key in expected:
                _compare(actual[key], expected[key], f"{path}[{key!r}]", compare)
            return
        if isinstance(actual, Sequence) and isinstance(expected, Sequence) and not isinstance(
                actual, str):
            if len(actual) != len(expected):
                raise AssertionError(f"The length of the sequences mismatch: {len(actual)} != "
                                     f"{len(expected)}")
            for k, (a, e) in enumerate(zip(actual, expected)):
                _compare(a, e, f"{path}[{k}]", compare)
            return
        compare(actual, expected)
    except _Mismatch as e:
        if path and "The failure occurred for item" not in str(e):
            raise _Mismatch(f"{e}\n\nThe failure occurred for item {path}") from None
        raise


def assert_close(actual: Any, expected: Any, *, allow_subclasses: bool = True,
                 rtol: float | None = None, atol: float | None = None,
                 equal_nan: bool = False, check_device: bool = True, check_dtype: bool = True,
                 check_layout: bool = True, check_stride: bool = False,
                 msg: Any = None) -> None:
    """Raise AssertionError unless ``actual`` and ``expected`` are close: elementwise
    ``|actual - expected| <= atol + rtol * |expected|`` with PyTorch's per-dtype defaults,
    after their shapes, dtypes and devices match."""
    options = dict(check_dtype=check_dtype, check_device=check_device,
                   check_stride=check_stride)

    def compare(a: Any, e: Any) -> None:
        if _is_tensor_like(a) and _is_tensor_like(e):
            _compare_tensors(a, e, rtol, atol, equal_nan, options)
        elif isinstance(a, (int, float, complex)) and isinstance(e, (int, float, complex)):
            _compare_numbers(a, e, rtol, atol, equal_nan, check_dtype)
        else:
            raise TypeError(f"No comparison pair was able to handle inputs of type "
                            f"{_torch_type(a)} and {_torch_type(e)}.")
    try:
        _compare(actual, expected, "", compare)
    except AssertionError as e:
        if msg is None:
            raise AssertionError(str(e)) from None
        raise AssertionError(msg(str(e)) if callable(msg) else msg) from None


def _torch_type(x: Any) -> str:
    return "<class 'torch.Tensor'>" if isinstance(x, Tensor) else str(type(x))


def assert_allclose(actual: Any, expected: Any, rtol: float | None = None,
                    atol: float | None = None, equal_nan: bool = True, msg: str = "") -> None:
    """The deprecated form: no dtype check, NaNs equal by default."""
    assert_close(actual, expected, rtol=rtol, atol=atol, equal_nan=equal_nan,
                 check_dtype=False, msg=msg or None)


def make_tensor(*shape: Any, dtype: Any, device: Any, low: float | None = None,
                high: float | None = None, requires_grad: bool = False,
                noncontiguous: bool = False, exclude_zero: bool = False,
                memory_format: Any = None) -> Tensor:
    """Uniform random values in ``[low, high)`` (PyTorch's default ranges: [-9, 9) for
    floats, [-9, 10) for signed integers, [0, 10) for unsigned, {False, True} for bool)."""
    if len(shape) == 1 and isinstance(shape[0], (tuple, list)):
        shape = tuple(shape[0])
    dtype = D.to_torch_dtype(dtype)
    rng = np.random.default_rng()
    if dtype is D.bool:
        values = rng.integers(0, 2, shape).astype(bool)
    elif dtype.is_floating_point or dtype.is_complex:
        lo, hi = (-9.0 if low is None else low), (9.0 if high is None else high)
        values = rng.uniform(lo, hi, shape)
        if dtype.is_complex:
            values = values + 1j * rng.uniform(lo, hi, shape)
    else:
        signed = dtype.np.kind == "i"
        lo = (-9 if signed else 0) if low is None else math.ceil(low)
        hi = 10 if high is None else math.ceil(high)
        values = rng.integers(lo, hi, shape)
    if exclude_zero:
        values = np.where(values == 0, 1, values)
    return finish(values, dtype, device, requires_grad and (dtype.is_floating_point or
                                                            dtype.is_complex))
