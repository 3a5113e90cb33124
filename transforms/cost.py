"""An estimate of what a traced program costs, as JAX's ``cost_analysis()`` reports it:
``flops`` (arithmetic on floating and integer values, a multiply-add counting two),
``transcendentals`` (exp, log, tanh... one per element), ``bytes accessed`` (each
operation's inputs and outputs, summed). Counted from the tape's shapes alone: nothing
runs. Data movement (reshape, transpose, indexing, concatenation, casts) costs no flops.
"""
from __future__ import annotations

import math
from typing import Any

import numpy as np

__all__ = ["cost_analysis"]

TRANSCENDENTAL = frozenset(
    "exp exp2 expm1 log log1p log2 log10 tanh sin cos tan sinh cosh arcsin arccos arctan "
    "arcsinh arccosh arctanh arctan2 expit erf erfc erfinv power logaddexp logsumexp "
    "log_softmax gammaln digamma".split())
FREE = frozenset(
    "reshape transpose broadcast_to getitem concatenate convert_element_type copy "
    "stop_gradient device_put squeeze expand_dims pad diagonal".split())


def _size(shape: Any) -> int:
    return math.prod(shape) if shape else 1


def _nbytes(aval: tuple) -> int:
    return _size(aval[0]) * np.dtype(aval[1]).itemsize


def _record_flops(rec: Any, ins: list, outs: list) -> tuple[int, int]:
    """(flops, transcendentals) of one record."""
    name = rec.prim.name
    out_size = sum(_size(shape) for shape, _ in outs)
    if name in ("matmul", "addmm"):
        a, b = (ins[1], ins[2]) if name == "addmm" else (ins[0], ins[1])
        k = a[0][-1] if a[0] else 1
        return 2 * out_size * k + (out_size if name == "addmm" else 0), 0
    if name == "conv_general_dilated":  # (padded positions counted: an upper bound)
        w = ins[1][0]
        return 2 * out_size * (_size(w[1:]) if len(w) > 1 else 1), 0  # (Cin/groups x window)
    if name.startswith("reduce_") or name in ("argmax", "argmin", "cumsum", "cumprod"):
        return max(_size(ins[0][0]) - out_size, 0), 0
    if name in TRANSCENDENTAL:
        return 0, out_size
    if name in FREE:
        return 0, 0
    return out_size, 0


def cost_analysis(tape: Any) -> dict:
    """``{"flops", "transcendentals", "bytes accessed"}`` of ``tape`` (its sub-programs
    counted once each: a loop's trip count is not known from the shapes)."""
    flops = transcendentals = accessed = 0
    for rec in tape.records:
        ins = [tape.var_avals[v] if v >= 0 else (np.shape(s), np.asarray(s).dtype)
               for v, s in zip(rec.in_vars, rec.saved or [None] * len(rec.in_vars))
               if v >= 0 or s is not None]
        outs = [tape.var_avals[v] for v in rec.out_vars if v >= 0]
        f, t = _record_flops(rec, ins, outs)
        flops, transcendentals = flops + f, transcendentals + t
        accessed += sum(map(_nbytes, ins)) + sum(map(_nbytes, outs))
        if rec.sub is not None:
            inner = cost_analysis(rec.sub)
            flops += inner["flops"]
            transcendentals += inner["transcendentals"]
            accessed += inner["bytes accessed"]
    return {"flops": float(flops), "transcendentals": float(transcendentals),
            "bytes accessed": float(accessed)}
