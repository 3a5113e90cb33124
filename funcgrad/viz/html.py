"""Rich HTML reprs for Jupyter: compact tables next to the text reprs.

`install` gives `Array`, `Tape` and the residual report of `saved_residuals` their
``_repr_html_`` (the facade's tensors call `tensor_html` themselves): the classes below
know nothing of this module. Only numpy and the standard library are used: no Graphviz needed.
"""
from __future__ import annotations

import html
import os
from typing import Any, Iterable, Sequence

import numpy as np

from funcgrad.array import Array
from funcgrad.core import Tracer
from funcgrad.transforms.checkpoint import ResidualReport
from funcgrad.transforms.tape import Tape
from funcgrad.transforms.tape_text import const_text, param_text, short_dtype, tape_var, var_name

__all__ = ["array_html", "tensor_html", "tape_html", "residuals_html", "table", "install"]

MAX_ROWS = 200          # records shown for a tape before "... more"
_PREVIEW = dict(threshold=24, edgeitems=3, precision=4, separator=", ", max_line_width=72)
_STYLE = "border-collapse:collapse;font-size:12px"
_BACKWARD = "background:#fdf0e8"
_SUB = "background:#fffde7"


class _Raw(str):
    """A cell already in HTML."""


def _cell(value: Any, tag: str = "td", raw: bool = False, style: str = "") -> str:
    text = str(value) if raw else html.escape(str(value))
    attr = f' style="{style}"' if style else ""
    return f"<{tag}{attr}>{text}</{tag}>"


def table(header: Sequence[str], rows: Iterable[Sequence[Any]], caption: str = "",
          row_styles: Sequence[str] | None = None, footer: str = "") -> str:
    """A compact HTML table (cells are escaped, except `_Raw` ones)."""
    rows = list(rows)
    styles = list(row_styles) if row_styles is not None else [""] * len(rows)
    head = "".join(_cell(h, "th") for h in header)
    body = "".join(
        f'<tr style="{s}">' + "".join(
            _cell(c, raw=isinstance(c, _Raw)) for c in row) + "</tr>"
        for row, s in zip(rows, styles))
    cap = f'<caption style="text-align:left">{caption}</caption>' if caption else ""
    foot = (f'<tfoot><tr><td colspan="{len(header)}" style="text-align:left">{footer}'
            "</td></tr></tfoot>") if footer else ""
    return (f'<table style="{_STYLE}">{cap}<thead><tr>{head}</tr></thead>'
            f"<tbody>{body}</tbody>{foot}</table>")


def _values(raw: np.ndarray) -> _Raw:
    text = np.array2string(np.asarray(raw), **_PREVIEW)
    return _Raw(f'<pre style="margin:0;text-align:left">{html.escape(text)}</pre>')


def array_html(a: Any) -> str:
    """An `Array` (or a tracer, shown with its current value) as a one-row table."""
    kind = type(a).__name__
    caption = f"<b>{kind}</b>" + (" (traced: a value inside a transform)"
                                  if isinstance(a, Tracer) else "")
    c = a.concrete()
    row = (str(tuple(c.shape)), str(c.dtype), c.device, _values(c.to_numpy()))
    return table(("shape", "dtype", "device", "values"), [row], caption)


def tensor_html(t: Any) -> str:
    """A facade tensor: shape, dtype, device, requires_grad, grad_fn, a few values."""
    fn = t.grad_fn
    grad = ("-" if not t.requires_grad else
            type(fn).__name__ if fn is not None else "leaf (AccumulateGrad)")
    row = (str(tuple(t.shape)), str(t.dtype), str(t.device), str(t.requires_grad), grad,
           _values(t.detach().cpu().numpy()))
    return table(("shape", "dtype", "device", "requires_grad", "grad_fn", "values"), [row],
                 f"<b>{html.escape(type(t).__name__)}</b>")


def tape_html(tape: Any) -> str:
    """A `Tape`: one row per record (sub-tapes indented below their record), backward-pass
    rows shaded."""
    rows: list = []
    styles: list = []

    def walk(t: Any, depth: int) -> None:
        for rec in t.records:
            if len(rows) >= MAX_ROWS:
                return
            outs = " ".join(tape_var(t, v) if v >= 0 else "_" for v in rec.out_vars)
            ins = " ".join(var_name(v) if v >= 0 else const_text(rec.saved[i])
                           for i, v in enumerate(rec.in_vars))
            params = " ".join(f"{k}={param_text(p)}" for k, p in rec.params.items())
            name = _Raw("&nbsp;" * 4 * depth + f"<b>{html.escape(rec.prim.name)}</b>")
            rows.append((len(rows), rec.phase, outs, name, params, ins))
            styles.append(_SUB if depth else (_BACKWARD if rec.phase == "backward" else ""))
            if rec.sub is not None:
                walk(rec.sub, depth + 1)

    walk(tape, 0)
    total = _count(tape)
    ins = " ".join(tape_var(tape, v) for v in tape.in_vars)
    outs = ", ".join(var_name(v) if v >= 0 else repr(c)
                     for v, c in zip(tape.out_vars, tape.out_consts))
    caption = (f"<b>Tape</b> <code>{html.escape(tape.name)}</code>: "
               f"inputs <code>{html.escape(ins)}</code>, outputs "
               f"<code>({html.escape(outs)})</code>; {len(tape.records)} records")
    footer = f"... {total - len(rows)} more records" if total > len(rows) else ""
    return table(("#", "phase", "outputs", "primitive", "params", "inputs"), rows, caption,
                 styles, footer)


def _count(tape: Any) -> int:
    return sum(1 + (_count(r.sub) if r.sub is not None else 0) for r in tape.records)


def residuals_html(report: Sequence) -> str:
    """The residuals a VJP keeps (`saved_residuals`) with their total size."""
    rows = [(str(r.shape), short_dtype(r.dtype), f"{r.nbytes:,}", r.primitive,
             _Raw(f'<span title="{html.escape(r.source)}">'
                  f"{html.escape(_short_source(r.source))}</span>")) for r in report]
    total = sum(r.nbytes for r in report)
    return table(("shape", "dtype", "bytes", "produced by", "source"), rows,
                 "<b>Saved residuals</b>", footer=f"{len(rows)} residuals, {total:,} bytes")


def _short_source(source: str) -> str:
    """``file:line`` with the file's directories dropped (the full path is the tooltip)."""
    path, sep, line = source.rpartition(":")
    return f"{os.path.basename(path)}{sep}{line}" if sep else source


def install() -> None:
    """Give Array, Tape and ResidualReport their notebook reprs (``_repr_html_``)."""
    Array._repr_html_ = array_html
    Tape._repr_html_ = tape_html
    ResidualReport._repr_html_ = residuals_html
