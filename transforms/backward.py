"""The backward pass over tape records, and the phase records are made in.

`backward_pass` walks records (`funcgrad.transforms.tape.Record`, or anything with its
fields) in reverse and calls each primitive's VJP rules; `accumulate_input_cotangents` is
its step for one record, which a one-record tape (the facade's op nodes) runs alone. The
rules are funcgrad ops, so an outer transform traces them (double backward). Records made
while a pass runs are marked "backward" (`PhaseCell`). `funcgrad.transforms.tape` exports
all of this as part of the public tape API.
"""
from __future__ import annotations

import threading
from typing import TYPE_CHECKING, Any, Iterable

import numpy as np

from funcgrad.array import Array, as_array, zeros_on
from funcgrad.core import NO_PARAMS, ZERO, Primitive, bind
from funcgrad.dtypes import EXTENDED_FLOATS
from funcgrad.primitives.elementwise import real
from funcgrad.primitives.reductions import reduce_sum
from funcgrad.primitives.shape import reshape
from funcgrad.primitives.control import convert_element_type
from funcgrad.regions import Regions

if TYPE_CHECKING:  # for annotations only: the tape imports this module
    from .tape import Record

__all__ = ["backward_pass", "accumulate_input_cotangents", "fit_cotangent", "aval_of",
           "PhaseCell", "phase_cell", "current_phase", "backward_passes"]


class PhaseCell:
    """The phase of the records being made in one thread: "backward" while a backward pass
    runs there, else "forward". A trace holds its thread's cell, so that a record reads
    its phase from it (an attribute, where a ContextVar or a thread-local would cost ~300
    instructions per record); `backward_pass` switches it. Found through a thread-local
    (a ContextVar, once set, slows every numpy call: numpy reads its own from the same
    context); per thread is per asyncio task too, since a backward pass never awaits."""

    __slots__ = ("value",)

    def __init__(self) -> None:
        self.value = "forward"


class _ThreadPhase(threading.local):
    def __init__(self) -> None:
        self.cell = PhaseCell()


_thread_phase = _ThreadPhase()
# the backward passes running in all threads: while none is, every thread's phase is
# "forward" (`current_phase` need not read the thread-local cell)
backward_passes = Regions()


def phase_cell() -> PhaseCell:
    """This thread's `PhaseCell`."""
    return _thread_phase.cell


def current_phase() -> str:
    """This thread's phase ("forward" or "backward")."""
    return _thread_phase.cell.value if backward_passes.open else "forward"


_NUMBER_DTYPES = {bool: np.dtype(bool), int: np.asarray(0).dtype, float: np.dtype(float),
                  complex: np.dtype(complex)}


def aval_of(x: Any) -> tuple:
    """(shape, dtype) of an array-like; Python scalars get numpy's default dtype."""
    dtype = _NUMBER_DTYPES.get(type(x))
    if dtype is not None:
        return ((), dtype)
    try:
        return (tuple(x.shape), x.dtype)
    except AttributeError:
        return ((), np.asarray(x).dtype)


def fit_cotangent(g: Any, shape: tuple, dtype: Any) -> Array:
    """Sum a cotangent back over broadcast axes and cast it to the input's dtype (the real
    part for a real input), so that rules need not care about either. (It calls `bind`:
    a primitive object's ``__call__`` costs CPython an interpreter loop of its own.)"""
    g = as_array(g)
    g_shape = tuple(g.shape)
    if g_shape != shape:
        lead = len(g_shape) - len(shape)
        axes = tuple(range(lead)) + tuple(
            lead + i for i, n in enumerate(shape) if n == 1 and g_shape[lead + i] != 1)
        if axes:  # one sum over the broadcast axes, then put back the kept 1s
            g = bind(reduce_sum, (g,), {"axis": axes, "keepdims": False})
        if tuple(g.shape) != shape:
            g = bind(reshape, (g,), {"shape": shape})
    if g.dtype != dtype:
        if g.dtype.kind == "c" and np.dtype(dtype).kind != "c":
            g = bind(real, (g,), NO_PARAMS)
        if g.dtype != dtype:
            g = bind(convert_element_type, (g,), {"new_dtype": np.dtype(dtype)})
    return g


def _missing_rule(prim: Primitive, i: int) -> NotImplementedError:
    return NotImplementedError(
        f"Differentiation rule for primitive {prim.name!r} is not implemented for argument "
        f"{i}" + (f" ({prim.inputs[i]!r})" if prim.inputs else "") + ". Declare one with "
        "defvjp, or wrap the value in funcgrad.stop_gradient if no derivative is needed.")


def _several_cotangents(rec: Record, cts: list, var_avals: list, consume: bool) -> Any:
    """The cotangents flowing into a record of several outputs (a list, zeros filled in),
    or None when all are zero and the record can be skipped."""
    gs = [cts[v] if v >= 0 else None for v in rec.out_vars]
    given = next((gi for gi in gs if gi is not None), None)
    if given is None:
        return None
    device = given.device
    g = [gi if gi is not None else
         zeros_on(*var_avals[v], device) if v >= 0 else zeros_on(*aval_of(rec.out[k]), device)
         for k, (gi, v) in enumerate(zip(gs, rec.out_vars))]
    if consume:
        for v in rec.out_vars:
            if v >= 0:
                cts[v] = None
    return g  # a list: a rule that takes all cotangents over (checkpoint) may empty it


def accumulate_input_cotangents(rec: Record, g: Any, cts: list, var_avals: list) -> None:
    """Add to ``cts`` the cotangent of each traced float input of ``rec``, from its VJP
    rules, summed back and cast to the input's shape and dtype."""
    prim = rec.prim
    rules = prim.vjp_rules
    if not rules:
        raise _missing_rule(prim, 0)
    saved = rec.saved
    out = rec.out
    in_avals = rec.in_avals
    params = rec.params
    every = (None if prim.vjp_all is None else
             prim.vjp_all.apply(g, -1, saved, out, in_avals, params))
    variadic = prim.inputs is None  # one rule for every input
    i = -1
    for v in rec.in_vars:
        i += 1
        if v < 0:
            continue
        shape, dtype = var_avals[v]
        if dtype.kind not in "fc" and dtype not in EXTENDED_FLOATS:
            continue
        if every is not None:
            gi = every[i]
            if gi is None:
                continue
        else:
            rule = rules[0] if variadic else rules[i]
            if rule is ZERO:
                continue
            if rule is None:
                raise _missing_rule(prim, i)
            gi = rule.apply(g, i, saved, out, in_avals, params)
        if not isinstance(gi, Array) or gi.shape != shape or (gi.dtype is not dtype
                                                              and gi.dtype != dtype):
            gi = fit_cotangent(gi, shape, dtype)
        old = cts[v]
        cts[v] = gi if old is None else old + gi


def backward_pass(records: list[Record], var_avals: list[tuple], seeds: Iterable[tuple],
                  consume: bool = False) -> list:
    """Propagate cotangents from ``seeds`` [(var, cotangent)] back through ``records``.

    Returns the cotangent of every variable (``None`` for zero). With ``consume`` each
    record's residuals are dropped as soon as it has been processed, and a ``seeds`` list
    is emptied, which lowers the peak memory of a one-shot gradient."""
    cts: list = [None] * len(var_avals)
    for var, ct in seeds:
        if var >= 0:
            cts[var] = ct if cts[var] is None else cts[var] + ct
    if consume and isinstance(seeds, list):
        seeds.clear()  # consumed: each cotangent can go once the pass is done with it
    cell = _thread_phase.cell
    outer = cell.value  # "backward" in a backward pass's own rules (double backward)
    cell.value = "backward"
    backward_passes.enter()
    try:
        for rec in reversed(records):
            if rec.prim.multiple_results:
                g = _several_cotangents(rec, cts, var_avals, consume)
            else:  # one output: its cotangent, if any (written out: once per record)
                v = rec.out_vars[0]
                g = cts[v] if v >= 0 else None
                if consume and g is not None:
                    cts[v] = None
            if g is None:
                continue
            accumulate_input_cotangents(rec, g, cts, var_avals)
            if consume:
                rec.saved = rec.out = None
    finally:
        cell.value = outer
        backward_passes.exit()
    return cts
