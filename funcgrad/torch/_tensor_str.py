"""Printing tensors exactly as PyTorch prints them (``torch/_tensor_str.py``'s rules).

Floats print with 4 decimals (``0.6667``), integer-valued floats as ``1.``, scientific
notation when the magnitudes span more than 1e3 or pass 1e8 (or fall below 1e-4); elements
share one width; lines wrap at 80 columns; tensors over 1000 elements are summarised with
``...``. Suffixes follow: ``device=``, ``dtype=`` (for non-default dtypes), ``grad_fn=<...>``
or ``requires_grad=True``.
"""
from __future__ import annotations

import math
from typing import Any

import numpy as np

from funcgrad.torch._runtime import dtypes as D
from funcgrad.torch.autograd import forward_ad
from funcgrad.core import Tracer

__all__ = ["tensor_repr", "tensor_str", "add_suffixes", "set_printoptions", "PRINT_OPTS"]


class _PrinterOptions:
    precision: int = 4
    threshold: float = 1000
    edgeitems: int = 3
    linewidth: int = 80
    sci_mode: bool | None = None


PRINT_OPTS = _PrinterOptions()


def set_printoptions(precision: int | None = None, threshold: float | None = None,
                     edgeitems: int | None = None, linewidth: int | None = None,
                     profile: str | None = None, sci_mode: bool | None = None) -> None:
    """torch.set_printoptions."""
    if profile is not None:
        presets = {"default": (4, 1000, 3, 80), "short": (2, 1000, 2, 80),
                   "full": (4, math.inf, 3, 80)}
        (PRINT_OPTS.precision, PRINT_OPTS.threshold, PRINT_OPTS.edgeitems,
         PRINT_OPTS.linewidth) = presets[profile]
    if precision is not None:
        PRINT_OPTS.precision = precision
    if threshold is not None:
        PRINT_OPTS.threshold = threshold
    if edgeitems is not None:
        PRINT_OPTS.edgeitems = edgeitems
    if linewidth is not None:
        PRINT_OPTS.linewidth = linewidth
    PRINT_OPTS.sci_mode = sci_mode


class _Formatter:
    def __init__(self, values: np.ndarray, floating: bool):
        self.floating = floating
        self.int_mode = True
        self.sci_mode = False
        self.max_width = 1
        flat = values.reshape(-1)
        p = PRINT_OPTS.precision
        if not floating:
            for v in flat.tolist():
                self.max_width = max(self.max_width, len(str(v)))
        else:
            finite = flat[np.isfinite(flat) & (flat != 0)].astype(np.float64)
            if finite.size == 0:
                return
            absv = np.abs(finite)
            lo, hi = float(absv.min()), float(absv.max())
            self.int_mode = bool(np.all(finite == np.ceil(finite)))
            vals = finite.tolist()
            if self.int_mode:
                if hi / lo > 1000.0 or hi > 1.0e8:
                    self.sci_mode = True
                    self.max_width = max(len(f"{v:.{p}e}") for v in vals)
                else:
                    self.max_width = max(len(f"{v:.0f}") + 1 for v in vals)
            elif hi / lo > 1000.0 or hi > 1.0e8 or lo < 1.0e-4:
                self.sci_mode = True
                self.max_width = max(len(f"{v:.{p}e}") for v in vals)
            else:
                self.max_width = max(len(f"{v:.{p}f}") for v in vals)
        if PRINT_OPTS.sci_mode is not None:
            self.sci_mode = PRINT_OPTS.sci_mode

    def format(self, value: Any) -> str:
        p = PRINT_OPTS.precision
        if self.floating:
            if self.sci_mode:
                ret = f"{value:{self.max_width}.{p}e}"
            elif self.int_mode:
                ret = f"{value:.0f}"
                if not (math.isinf(value) or math.isnan(value)):
                    ret += "."
            else:
                ret = f"{value:.{p}f}"
        else:
            ret = str(value)
        return (self.max_width - len(ret)) * " " + ret


def _summarized(a: np.ndarray) -> np.ndarray:
    e = PRINT_OPTS.edgeitems
    if a.ndim == 0:
        return a
    if a.ndim == 1:
        return np.concatenate([a[:e], a[-e:]]) if a.shape[0] > 2 * e else a
    rows = list(range(e)) + list(range(a.shape[0] - e, a.shape[0])) \
        if a.shape[0] > 2 * e else range(a.shape[0])
    return np.stack([_summarized(a[i]) for i in rows])


def _val(v: Any, f1: _Formatter, f2: _Formatter | None) -> str:
    if f2 is None:
        return f1.format(v)
    real = f1.format(v.real)
    imag = (f2.format(v.imag) + "j").lstrip()
    return real + imag if imag[0] in "+-" else real + "+" + imag


def _vector(a: np.ndarray, indent: int, summarize: bool, f1: _Formatter,
            f2: _Formatter | None) -> str:
    width = f1.max_width + 2 + (f2.max_width + 1 if f2 is not None else 0)
    per_line = max(1, int(math.floor((PRINT_OPTS.linewidth - indent) / width)))
    e = PRINT_OPTS.edgeitems
    if summarize and a.shape[0] > 2 * e:
        data = ([_val(v, f1, f2) for v in a[:e].tolist()] + [" ..."]
                + [_val(v, f1, f2) for v in a[-e:].tolist()])
    else:
        data = [_val(v, f1, f2) for v in a.tolist()]
    lines = [", ".join(data[i:i + per_line]) for i in range(0, len(data), per_line)]
    return "[" + ("," + "\n" + " " * (indent + 1)).join(lines) + "]"


def _nested(a: np.ndarray, indent: int, summarize: bool, f1: _Formatter,
            f2: _Formatter | None) -> str:
    if a.ndim == 0:
        return _val(a.item(), f1, f2)
    if a.ndim == 1:
        return _vector(a, indent, summarize, f1, f2)
    e = PRINT_OPTS.edgeitems
    if summarize and a.shape[0] > 2 * e:
        slices = ([_nested(a[i], indent + 1, summarize, f1, f2) for i in range(e)] + ["..."]
                  + [_nested(a[i], indent + 1, summarize, f1, f2)
                     for i in range(a.shape[0] - e, a.shape[0])])
    else:
        slices = [_nested(a[i], indent + 1, summarize, f1, f2) for i in range(a.shape[0])]
    return "[" + ("," + "\n" * (a.ndim - 1) + " " * (indent + 1)).join(slices) + "]"


def tensor_str(values: np.ndarray, dtype: D.dtype, indent: int) -> str:
    if values.size == 0:
        return "[]"
    summarize = values.size > PRINT_OPTS.threshold
    if dtype is D.float16:
        values = values.astype(np.float32)
    if dtype.is_complex:
        sample = _summarized(values) if summarize else values
        f1 = _Formatter(sample.real, True)
        f2 = _Formatter(sample.imag, True)
        return _nested(values, indent, summarize, f1, f2)
    f1 = _Formatter(_summarized(values) if summarize else values, dtype.is_floating_point)
    return _nested(values, indent, summarize, f1, None)


def add_suffixes(text: str, suffixes: list, indent: int, force_newline: bool = False
                 ) -> str:
    """``text`` and its suffixes (``dtype=...``), wrapped at the line width; the first on
    a new line with ``force_newline`` (a COO tensor's, as PyTorch prints them)."""
    parts = [text]
    last_line_len = len(text) - text.rfind("\n") + 1
    for suffix in suffixes:
        if force_newline or last_line_len + len(suffix) + 2 > PRINT_OPTS.linewidth:
            parts.append(",\n" + " " * indent + suffix)
            last_line_len = indent + len(suffix)
            force_newline = False
        else:
            parts.append(", " + suffix)
            last_line_len += len(suffix) + 2
    parts.append(")")
    return "".join(parts)


def tensor_repr(t: Any) -> str:
    """PyTorch's ``repr`` of a tensor: values, then device, dtype, grad_fn and tangent."""
    data = t._a
    tangent = forward_ad.tangent_of(t) if isinstance(data, Tracer) else None
    meta = t.is_meta
    if isinstance(data, Tracer) and tangent is None and not meta:
        return (f"tensor(<traced {data.trace_name}: {D.Size(data.shape)}, "
                f"dtype={t.dtype}>)")
    prefix = "tensor("
    indent = len(prefix)
    suffixes = []
    dev = t.device
    if dev.type != "cpu":
        suffixes.append(f"device='{dev}'")
    dtype = t.dtype
    default = D.get_default_dtype()
    values = None if meta else t._host()
    if values is None:  # no values: PyTorch prints the size, and a dtype but the default
        suffixes.append(f"size={tuple(t.shape)}")
        if dtype is not default:
            suffixes.append(f"dtype={dtype}")
        body = "..."
    elif values.size == 0:
        if values.ndim != 1:
            suffixes.append(f"size={tuple(values.shape)}")
        if dtype is not default:
            suffixes.append(f"dtype={dtype}")
        body = "[]"
    else:
        if dtype not in (default, default.to_complex(), D.int64, D.bool):
            suffixes.append(f"dtype={dtype}")
        body = tensor_str(values, dtype, indent)
    if t._grad_fn is not None:
        suffixes.append(f"grad_fn=<{t._grad_fn.name()}>")
    elif t.requires_grad:
        suffixes.append("requires_grad=True")
    if tangent is not None:
        suffixes.append(f"tangent={tensor_repr(tangent)}")
    return add_suffixes(prefix + body, suffixes, indent)


def _repr(self: Any, *, tensor_contents: Any = None) -> str:
    return tensor_repr(self)


def install(cls: type) -> None:
    """Give the tensor class its ``repr`` (and so its ``str``). Printing sits above the
    tensor (a dual tensor prints its tangent, which forward AD's layer unpacks), so it is
    attached from here."""
    cls.__repr__ = _repr
