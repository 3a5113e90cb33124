"""`scan`, `map` and `fori_loop` (``funcgrad.lax``): loops over the leading axis of arrays
or over a range, carrying a state, usable eagerly, under every transform and under `jit`.

Eagerly and under grad or jvp a scan runs step by step in Python (every step's residuals on
the tape: reverse-differentiable; checkpoint the body for less memory). Under `jit`, where
the carry or the inputs are traced, the body is staged once as a sub-program
(`control_flow._stage`) and the compiled program runs it in a Python ``for`` loop
(`_emit_scan`). A `fori_loop` is a scan over its range when the bounds are known, else a
`while_loop`. The shared staging machinery is in `transforms.control_flow`.
"""
from __future__ import annotations

from typing import Any, Callable, Sequence

import numpy as np

import funcgrad.numpy as fnp
from funcgrad import tree_util
from funcgrad.core import Primitive
from . import compile as compiler
from . import vmap_calls
from . import contracts
from .control_flow import (_Control, _as_arrays, _control_impl, _runner, _stage, is_abstract,
                           while_loop)
from .jit import JitTrace
from .vmap import is_batched

__all__ = ["scan", "map", "fori_loop"]


def _slice_leading(xs: list, i: int) -> list:
    return [x[i] for x in xs]


def _stack(ys: list) -> list:
    """The per-step outputs (a list per step, at least one step) stacked along a new
    leading axis."""
    return [fnp.stack([step[k] for step in ys]) for k in range(len(ys[0]))]


class _Scan(_Control):
    """A scan whose carry or inputs jit does not know: a loop in the compiled program."""

    what = "lax.scan"

    def __init__(self, body: Callable, n_carry: int, length: int, reverse: bool):
        self.body, self.n_carry, self.length, self.reverse = body, n_carry, length, reverse
        super().__init__(self._run, "scan")

    def _run(self, *leaves: Any) -> list:
        carry, xs = list(leaves[:self.n_carry]), list(leaves[self.n_carry:])
        steps = range(self.length - 1, -1, -1) if self.reverse else range(self.length)
        ys: list = [None] * self.length
        for i in steps:
            out = list(self.body(*carry, *_slice_leading(xs, i)))
            carry, ys[i] = out[:self.n_carry], out[self.n_carry:]
        return carry + _stack(ys)

    def process_jit(self, trace: JitTrace, leaves: Sequence) -> list:
        carry, xs = list(leaves[:self.n_carry]), list(leaves[self.n_carry:])
        example = [trace.primal_of(x)[0] for x in xs]  # the first step's inputs
        sub, _ = _stage(trace, self.body, carry + example, self.what)  # (`scan`'s body
        run = _runner(trace, sub)  # checks its contract as it is staged, as at every step)
        values = [trace.primal_of(c) for c in carry]
        xs_values = [trace.primal_of(x) for x in xs]
        steps = range(self.length - 1, -1, -1) if self.reverse else range(self.length)
        ys: list = [None] * self.length
        for i in steps:
            out = run(*values, *_slice_leading(xs_values, i))
            values, ys[i] = out[:self.n_carry], out[self.n_carry:]
        results = values + _stack(ys)
        primals, in_vars, _ = trace.lower(leaves)
        return list(trace.record(scan_p, {"call": self, "programs": (sub,)}, primals,
                                 in_vars, 0, tuple(_as_arrays(results))))

    def process_rev(self, trace: Any, leaves: Sequence) -> list:
        return self._run(*leaves)  # unrolled: every step's residuals on the tape

    def process_jvp(self, trace: Any, leaves: Sequence) -> list:
        return self._run(*leaves)  # unrolled: every step's tangents computed as it runs


scan_p = Primitive("scan", _control_impl, None, ("call", "programs"), multiple_results=True,
                   differentiable=False,
                   doc="carry, ys = scan of body over the leading axis of xs.")


def _emit_scan(w: Any, step: Any, ins: list, outs: list, indent: str) -> None:
    call = step.rec.params["call"]
    (sub,) = step.rec.params["programs"]
    body = compiler.write_function(w, sub, step.alias, indent)
    nc, n = call.n_carry, call.length
    carry, i, ys, out = (w.local(k) for k in ("carry", "i", "ys", "out"))
    stack = w.name_of(_stack_raw, "stack")
    steps = f"range({n - 1}, -1, -1)" if call.reverse else f"range({n})"
    w.emit(indent, f"{carry} = [{', '.join(ins[:nc])}]")
    w.emit(indent, f"{ys} = [None] * {n}")
    w.emit(indent, f"for {i} in {steps}:")
    xs = "".join(f"{x}[{i}], " for x in ins[nc:])
    w.emit(indent + "    ", f"{out} = {body}(*{carry}, {xs})")
    w.emit(indent + "    ", f"{carry}, {ys}[{i}] = list({out}[:{nc}]), {out}[{nc}:]")
    lhs = ", ".join(outs) + ("," if len(outs) == 1 else "")
    w.emit(indent, f"{lhs} = (*{carry}, *{stack}({ys}, {len(outs) - nc}))")


def _stack_raw(ys: list, n_out: int) -> list:
    return [np.stack([step[k] for step in ys]) for k in range(n_out)]


compiler.EMITTERS["scan"] = _emit_scan
scan_p.defbatch(vmap_calls.call_rule)


def scan(f: Callable, init: Any, xs: Any = None, length: int | None = None,
         reverse: bool = False, unroll: int = 1) -> tuple:
    """``carry, ys`` with ``carry, y_i = f(carry, x_i)`` over the leading axis of ``xs``
    (JAX's ``lax.scan``; ``xs=None`` with ``length`` scans over nothing). Reverse-mode
    differentiable, one step's residuals per step."""
    x_leaves, x_tree = tree_util.tree_flatten(xs)
    x_leaves = _as_arrays(x_leaves)
    lengths = {int(x.shape[0]) for x in x_leaves if x.ndim}
    if any(x.ndim == 0 for x in x_leaves):
        raise ValueError("scan got value with no leading axis to scan over")
    if length is not None:
        lengths.add(int(length))
    if len(lengths) != 1:
        raise ValueError("scan got inconsistent lengths for its inputs: "
                         f"{sorted(lengths) or 'none (pass length=)'}")
    n = lengths.pop()
    if n == 0:  # no steps: the outputs' structure and types from one call of f
        _, y = _step(f, init, init, x_tree.unflatten([
            fnp.zeros(tuple(x.shape[1:]), x.dtype) for x in x_leaves]))
        return init, tree_util.tree_map(lambda a: fnp.zeros((0,) + tuple(
            fnp.asarray(a).shape), fnp.asarray(a).dtype), y)
    c_leaves, c_tree = tree_util.tree_flatten(init)
    c_leaves = _as_arrays(c_leaves)
    y_trees: list = []
    y_first: list = []  # the first step's y leaves: every step's must have their types

    def body(*leaves: Any) -> list:
        carry = c_tree.unflatten(list(leaves[:len(c_leaves)]))
        x = x_tree.unflatten(list(leaves[len(c_leaves):]))
        new_carry, y = _step(f, init, carry, x)
        y_leaves, y_tree = tree_util.tree_flatten(y)
        if y_trees:  # (JAX traces the body once: its ys cannot differ from step to step)
            if y_tree != y_trees[0]:
                raise TypeError("scan body output y must have the same pytree structure at "
                                f"every step, got {y_trees[0]} and {y_tree}.")
            contracts.check_same_leaves("scan body output y at every step", y_first,
                                        y_leaves)
        else:
            y_first.extend(y_leaves)
        y_trees.append(y_tree)
        return _as_arrays(tree_util.tree_leaves(new_carry)) + _as_arrays(y_leaves)
    outs = _Scan(body, len(c_leaves), n, reverse).bind([*c_leaves, *x_leaves])
    carry = c_tree.unflatten(list(outs[:len(c_leaves)]))
    return carry, y_trees[-1].unflatten(list(outs[len(c_leaves):]))


def _step(f: Callable, init: Any, carry: Any, x: Any) -> tuple:
    """``f(carry, x)``, checked to be a pair whose carry has ``init``'s structure and
    types (its weakly typed numbers promote, as JAX's): on each eager step and where the
    body is staged, the one contract."""
    new_carry, y = contracts.split_pair(f(carry, x))
    contracts.check_carry("scan body", f, init, new_carry)
    return new_carry, y


def map(f: Callable, xs: Any) -> Any:
    """``stack([f(x) for x in xs])`` over the leading axis (JAX's ``lax.map``)."""
    _, ys = scan(lambda carry, x: (carry, f(x)), (), xs)
    return ys


def fori_loop(lower: Any, upper: Any, body_fun: Callable, init_val: Any) -> Any:
    """``val = body_fun(i, val)`` for i in [lower, upper) (JAX's ``lax.fori_loop``): a
    `scan` when the bounds are known (reverse-differentiable), else a `while_loop`."""
    per_example = is_batched(lower) or is_batched(upper)  # bounds differing under vmap
    if not (is_abstract(lower) or is_abstract(upper) or per_example):
        lo, hi = int(lower), int(upper)
        carry, _ = scan(lambda c, i: (body_fun(i, c), None), init_val,
                        fnp.arange(lo, max(lo, hi)))
        return carry

    def cond_fun(state: tuple) -> Any:
        return fnp.less(state[0], upper)

    def body(state: tuple) -> tuple:
        i, val = state
        return i + 1, body_fun(i, val)
    return while_loop(cond_fun, body, (fnp.asarray(lower), init_val))[1]
