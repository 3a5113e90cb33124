"""A tape as text, in the style of a jaxpr: one record a line, typed variables, params in
brackets, sub-tapes (checkpoint, custom rules, control flow) indented below their record::

    { lambda a:f64[3]. let
        b:f64[3] = sin a
        c:f64[] = reduce_sum[axis=(0,) keepdims=False] b
      in (c) }
"""
from __future__ import annotations

from typing import Any

import numpy as np

from funcgrad.array import Array

__all__ = ["short_dtype", "var_name", "param_text", "aval_text", "const_text", "tape_var", "tape_text",
           "record_lines"]

_SHORT = {"float64": "f64", "float32": "f32", "float16": "f16", "bfloat16": "bf16",
          "complex128": "c128", "complex64": "c64", "int64": "i64", "int32": "i32",
          "int16": "i16", "int8": "i8", "uint64": "u64", "uint32": "u32", "uint16": "u16",
          "uint8": "u8", "bool": "bool"}


def short_dtype(dtype: Any) -> str:
    return _SHORT.get(str(dtype), str(dtype))


def var_name(n: int) -> str:
    """a, b, ..., z, aa, ab, ...: the name of tape variable ``n``."""
    s = ""
    n += 1
    while n:
        n, r = divmod(n - 1, 26)
        s = chr(ord("a") + r) + s
    return s


def param_text(v: Any) -> str:
    if isinstance(v, np.dtype) or isinstance(v, type):
        return short_dtype(np.dtype(v))
    if callable(v) and hasattr(v, "__name__"):
        return v.__name__
    return repr(v)


def aval_text(shape: tuple, dtype: Any) -> str:
    return f"{short_dtype(dtype)}{list(shape)}".replace(" ", "")


def const_text(x: Any) -> str:
    """A constant input: its value if it is a scalar, else its type."""
    shape = tuple(getattr(x, "shape", ()))
    dtype = getattr(x, "dtype", None) or np.asarray(x).dtype
    if shape:
        return f"const:{aval_text(shape, dtype)}"
    value = x.concrete().item() if isinstance(x, Array) else np.asarray(x).item()
    return f"{value!r}:{short_dtype(dtype)}"


def tape_var(tape: Any, v: int) -> str:
    return f"{var_name(v)}:{aval_text(*tape.var_avals[v])}"


def record_lines(tape: Any, indent: str = "    ") -> list[str]:
    """One line per record of ``tape``, sub-tapes indented, phase changes marked."""
    lines = []
    phase = "forward"
    for rec in tape.records:
        if rec.phase != phase:
            phase = rec.phase
            lines.append(f"{indent}# --- {phase} pass ---")
        outs = " ".join(tape_var(tape, v) if v >= 0 else "_" for v in rec.out_vars)
        ins = " ".join(var_name(v) if v >= 0 else const_text(rec.saved[i])
                       for i, v in enumerate(rec.in_vars))
        params = " ".join(f"{k}={param_text(p)}" for k, p in rec.params.items())
        params = f"[{params}]" if params else ""
        lhs = f"{outs} = " if outs else ""  # (none: a call for its effect)
        lines.append(f"{indent}{lhs}{rec.prim.name}{params} {ins}".rstrip())
        if rec.sub is not None:
            lines.extend(record_lines(rec.sub, indent + "    "))
    return lines


def tape_text(tape: Any) -> str:
    ins = " ".join(tape_var(tape, v) for v in tape.in_vars)
    outs = ", ".join(var_name(v) if v >= 0 else repr(c)
                     for v, c in zip(tape.out_vars, tape.out_consts))
    body = "\n".join(record_lines(tape))
    return f"{{ lambda {ins}. let\n{body}\n  in ({outs}) }}"
