"""Forward mode: `jvp` and `linearize`.

A `JVPTrace` carries a tangent next to every primal. At each primitive it calls the
primitive's JVP rules, or, for a primitive that declares only VJP rules, derives the JVP
from them: a VJP rule is linear in the cotangent, so the JVP is its transpose, and the
transpose of a linear funcgrad function is its VJP. Forward mode therefore covers every
primitive in the registry (``Primitive.jvp_source`` says which way each one goes).

`linearize` runs the JVP once with the input tangents recorded on a tape: only tangent
operations touch tape variables, so replaying the tape is a cheap linear map.
"""
from __future__ import annotations

from typing import Any, Callable, Sequence

import numpy as np

import funcgrad.numpy as fnp
from funcgrad import tree_util
from funcgrad.array import Array
from funcgrad.core import ZERO, Primitive, Trace, Tracer, is_inexact, new_trace
from .grad import float0, vjp
from .tape import Tape, avals_of, fit_cotangent, trace_flat
from .tape_text import short_dtype

__all__ = ["jvp", "linearize", "JVPTrace", "JVPTracer", "fit_tangent", "primitive_jvp"]


class JVPTracer(Tracer):
    """A primal with its tangent (both may be tracers of lower levels)."""

    __slots__ = ("_tangent",)


def fit_tangent(t: Any, shape: tuple, dtype: Any) -> Array:
    """Broadcast a tangent contribution to the output's shape and cast it to its dtype."""
    if not isinstance(t, Array):
        t = fnp.asarray(t)
    if t.shape != tuple(shape):
        t = fnp.broadcast_to(t, shape)
    if t.dtype != dtype:
        if t.dtype.kind == "c" and np.dtype(dtype).kind != "c":
            t = fnp.real(t)
        t = t.astype(dtype) if t.dtype != dtype else t
    return t


def _derived_jvp(prim: Primitive, primals: list, tangents: list, out: Any,
                 avals: list, params: dict) -> Any:
    """J t for a primitive with VJP rules only: the VJP of the (linear) VJP map."""
    traced = [i for i, t in enumerate(tangents) if t is not None]

    def vjp_map(g: Any) -> list:
        cts = []
        every = (prim.vjp_all.apply(g, -1, primals, out, avals, params)
                 if prim.vjp_all is not None else None)
        for i in traced:
            shape, dtype = avals[i][:2]
            rule = prim.vjp_rule(i)
            if every is not None:
                ct = every[i]
            elif rule is None:
                raise NotImplementedError(
                    f"primitive {prim.name!r} has neither a JVP nor a VJP rule for argument "
                    f"{i}, so it cannot be differentiated in forward mode")
            elif rule is ZERO:
                ct = None
            else:
                ct = rule.apply(g, i, primals, out, avals, params)
            cts.append(fnp.zeros_like(primals[i], dtype=dtype) if ct is None else
                       fit_cotangent(ct, shape, dtype))
        return cts

    zeros = (tuple(fnp.zeros_like(o) for o in out) if prim.multiple_results
             else fnp.zeros_like(out))
    _, transpose = vjp(vjp_map, zeros)
    return transpose([tangents[i] for i in traced])[0]


def primitive_jvp(prim: Primitive, primals: list, tangents: list, out: Any,
                  params: dict) -> Any:
    """The output tangent(s) of ``prim`` (None where zero)."""
    avals = avals_of(prim, primals)
    if not prim.jvp_rules:
        return _derived_jvp(prim, primals, tangents, out, avals, params)
    total = None
    for i, t in enumerate(tangents):
        if t is None:
            continue
        rule = prim.jvp_rule(i)
        if rule is ZERO:
            continue
        if rule is None:
            raise NotImplementedError(
                f"JVP rule for primitive {prim.name!r} is not implemented for argument {i}. "
                "Declare one with defjvp (or remove the JVP rules so forward mode is "
                "derived from the VJP rules).")
        ti = rule.apply(t, i, primals, out, avals, params)
        if prim.multiple_results:
            total = ti if total is None else tuple(a + b for a, b in zip(total, ti))
        else:
            total = ti if total is None else total + ti
    return total


class JVPTrace(Trace):
    mode = "jvp"
    name = "jvp"

    def new(self, primal: Any, tangent: Any) -> JVPTracer:
        t = object.__new__(JVPTracer)
        t._trace = self
        t._primal = primal
        t.shape = shape = primal.shape
        t.dtype = primal.dtype
        t.ndim = len(shape)
        t._tangent = tangent
        return t

    def split(self, args: Sequence) -> tuple[list, list]:
        """(primals, tangents) of ``args``; ``None`` tangents for non-tracers."""
        primals, tangents = [], []
        for a in args:
            if isinstance(a, JVPTracer) and a._trace is self:
                primals.append(a._primal)
                tangents.append(a._tangent)
            else:
                primals.append(a)
                tangents.append(None)
        return primals, tangents

    def wrap(self, out: Any, tangent: Any) -> Any:
        """A tracer for an output with a tangent; non-float outputs stay plain."""
        if tangent is None or not is_inexact(out.dtype):
            return out
        return self.new(out, fit_tangent(tangent, out.shape, out.dtype))

    def process(self, prim: Primitive, args: Sequence, params: dict) -> Any:
        primals, tangents = self.split(args)
        if prim.jvp_full is not None:  # a rule computing the primal with the tangent
            out, t_out = prim.jvp_full(primals, tangents, params)
        else:
            out = prim(*primals, **params)
            if not prim.differentiable:
                return out
            t_out = primitive_jvp(prim, primals, tangents, out, params)
        if prim.multiple_results:
            t_out = t_out if t_out is not None else (None,) * len(out)
            return tuple(self.wrap(o, t) for o, t in zip(out, t_out))
        return self.wrap(out, t_out)


def _check_jvp_args(primals: Any, tangents: Any) -> tuple[list, list, Any]:
    if not isinstance(primals, (tuple, list)) or not isinstance(tangents, (tuple, list)):
        raise TypeError("jvp: primal and tangent arguments must be tuples or lists; found "
                        f"{type(primals).__name__} and {type(tangents).__name__}.")
    p_leaves, p_tree = tree_util.tree_flatten(tuple(primals))
    t_leaves, t_tree = tree_util.tree_flatten(tuple(tangents))
    if p_tree != t_tree:
        raise TypeError("jvp: primal and tangent arguments must have the same tree structure;"
                        f" primals have tree structure {p_tree} whereas tangents have tree "
                        f"structure {t_tree}.")
    ps, ts = [], []
    for p, t in zip(p_leaves, t_leaves):
        p = p if isinstance(p, Array) else fnp.asarray(p)
        t_dtype = t.dtype if hasattr(t, "dtype") else np.asarray(t).dtype
        if not is_inexact(p.dtype):
            if t_dtype != float0:
                raise TypeError(f"jvp: primal and tangent arguments do not match; dtypes must"
                                f" be equal, or in case of int/bool primal dtype the tangent "
                                f"dtype must be float0. Got primal dtype {p.dtype} and so "
                                f"expected tangent dtype float0, but got tangent dtype "
                                f"{t_dtype} instead.")
            ps.append(p)
            ts.append(None)
            continue
        t = t if isinstance(t, Array) else fnp.asarray(t)
        if tuple(t.shape) != tuple(p.shape):
            raise ValueError(f"jvp called with different primal and tangent shapes; Got "
                             f"primal shape {tuple(p.shape)} and tangent shape as "
                             f"{tuple(t.shape)}")
        if t.dtype != p.dtype:
            raise TypeError(f"jvp: primal and tangent arguments must have equal types; got "
                            f"primal {short_dtype(p.dtype)} and tangent {short_dtype(t.dtype)}"
                            ". Cast the tangent with .astype(primal.dtype).")
        ps.append(p)
        ts.append(t)
    return ps, ts, p_tree


def _run_jvp(fun: Callable, ps: list, ts: list, tree: Any, has_aux: bool) -> tuple:
    trace = JVPTrace()
    with new_trace(trace):
        ins = [p if t is None else trace.new(p, t) for p, t in zip(ps, ts)]
        out = fun(*tree.unflatten(ins))
        aux = None
        if has_aux:
            if not (isinstance(out, (tuple, list)) and len(out) == 2):
                raise TypeError("jvp with has_aux=True expects the function to return a pair "
                                f"(output, auxiliary data); it returned {type(out)}")
            out, aux = out
            aux = tree_util.tree_map(lambda x: trace.split([x])[0][0], aux)
        out_leaves, out_tree = tree_util.tree_flatten(out)
        (primals_out, tangents_out) = trace.split(out_leaves)
    primals_out = [p if isinstance(p, Array) else fnp.asarray(p) for p in primals_out]
    tangents_out = [fnp.zeros_like(p) if t is None else t
                    for p, t in zip(primals_out, tangents_out)]
    return out_tree.unflatten(primals_out), out_tree.unflatten(tangents_out), aux


def jvp(fun: Callable, primals: Sequence, tangents: Sequence, has_aux: bool = False) -> tuple:
    """``(fun(*primals), J tangents)`` — the Jacobian-vector product in one forward pass.

    ``primals`` and ``tangents`` are tuples (or lists) with the same tree structure, shapes
    and dtypes (float0 tangents for integer primals). With ``has_aux`` the function returns
    ``(out, aux)`` and jvp returns ``(out, tangent_out, aux)``."""
    ps, ts, tree = _check_jvp_args(primals, tangents)
    out, t_out, aux = _run_jvp(fun, ps, ts, tree, has_aux)
    return (out, t_out, aux) if has_aux else (out, t_out)


def linearize(fun: Callable, *primals: Any) -> tuple[Any, Callable]:
    """``(fun(*primals), f_jvp)`` where ``f_jvp(*tangents)`` is the JVP at ``primals``.

    The primal computation runs once; ``f_jvp`` replays only the recorded tangent
    operations, so repeated JVPs at the same point are cheap."""
    p_leaves, p_tree = tree_util.tree_flatten(tuple(primals))
    ps = [p if isinstance(p, Array) else fnp.asarray(p) for p in p_leaves]
    inexact = [is_inexact(p.dtype) for p in ps]
    result: list = []

    def tangent_map(*t_vars: Any) -> list:
        ts = iter(t_vars)
        out, t_out, _ = _run_jvp(fun, ps, [next(ts) if i else None for i in inexact],
                                 p_tree, False)
        t_leaves, t_tree = tree_util.tree_flatten(t_out)
        result.append((out, t_tree))
        return t_leaves

    tape, _ = trace_flat(tangent_map, [fnp.zeros_like(p) for p, i in zip(ps, inexact) if i],
                         "linearized", keep_all=True)
    out, tape.out_tree = result[0]

    def f_jvp(*tangents: Any) -> Any:
        t_in, tree = tree_util.tree_flatten(tuple(tangents))
        if tree != p_tree:
            raise TypeError(f"f_jvp expects tangents with the structure {p_tree} of the "
                            f"primals, got {tree}")
        return tape(*[t for t, i in zip(t_in, inexact) if i])

    f_jvp.tape = tape
    return out, f_jvp
