"""Custom derivative rules: `custom_vjp` and `custom_jvp` (JAX's API and semantics).

The rule applies at the transform level that differentiates the call; transforms below it
see the forward function (and the rule's own operations) as ordinary funcgrad code, so
higher-order derivatives differentiate through the rule. Every combination works:

- reverse mode of a custom_vjp function: the user's ``bwd``;
- forward mode of a custom_jvp function: the user's ``jvp``;
- reverse mode of a custom_jvp function: the transpose of the (linear) tangent map of
  ``jvp``. As in JAX (whose grad is linearize-then-transpose) the rule runs once, in the
  forward pass, with traced tangents: its primal output is the call's output (the
  function itself is not run) and the tape of its tangent map is transposed in the
  backward pass. A tape that is replayed instead (a checkpoint's, `make_tape`'s) records
  the call and re-runs the rule at the replayed inputs in the backward pass;
- forward mode of a custom_vjp function (JAX refuses it): the transpose of ``bwd``, which
  is linear in the cotangent, obtained the same way.
"""
from __future__ import annotations

import copy
import functools
import weakref
from typing import Any, Callable, Iterator, Sequence

import numpy as np

import funcgrad.numpy as fnp
from funcgrad import tree_util
from funcgrad.array import Array
from funcgrad.array import new_array
from funcgrad.core import Primitive, TraceCall, find_top_trace, is_inexact
from funcgrad.meta import ShapeDtypeStruct
from funcgrad.primitives import sampling
from . import contracts
from .grad import vjp
from .tape import trace_flat
from . import vmap_calls

__all__ = ["custom_vjp", "custom_jvp"]


def _zeros_like(x: Any) -> Array:
    return fnp.zeros_like(x)


def _name(fun: Callable) -> str:
    """A rule's name as JAX's messages give it."""
    return getattr(fun, "__name__", type(fun).__name__)


def _split_args(args: tuple, nondiff_argnums: tuple) -> tuple[list, list]:
    nondiff = [args[i] for i in nondiff_argnums]
    dyn = [a for i, a in enumerate(args) if i not in nondiff_argnums]
    return nondiff, dyn


def _rule_call(prim_name: str, vjp_rule: Callable) -> Primitive:
    """The primitive that stands for a custom call on a tape: it re-runs the call when a
    tape is replayed, and its VJP asks the call object."""
    def impl(*raw: Any, call: Any) -> tuple:
        outs = call.fun(*[new_array(r) for r in raw])
        return tuple(o._value if isinstance(o, Array) else o for o in outs)
    p = Primitive(prim_name, impl, None, ("call",), multiple_results=True,
                  doc=f"A {prim_name} function applied at the level that differentiates it.")
    p.defvjp_all(vjp_rule)
    return p


custom_jvp_call = _rule_call("custom_jvp_call", lambda g, xs, call: call.vjp(xs, g))
# the call whose rule ran in the forward pass: the backward pass transposes its tangent map
custom_jvp_linearized = _rule_call("custom_jvp_linearized",
                                   lambda g, call: call.transpose_tangent_map(g))
custom_vjp_call = _rule_call("custom_vjp_call",
                             lambda g, shapes, dtypes, call: call.vjp(shapes, dtypes, g))
custom_jvp_call.defbatch(vmap_calls.call_rule)
custom_jvp_linearized.defbatch(vmap_calls.call_rule)
custom_vjp_call.defbatch(vmap_calls.call_rule)


def _sample_custom(rng: Any, draw: Callable) -> list:
    """Registry test cases: a custom_jvp and a custom_vjp function (x*sin(y) with its
    rules written out), so the rule machinery itself is checked against differences."""

    @custom_jvp
    def f_jvp(x: Any, y: Any) -> Any:
        return x * fnp.sin(y)
    f_jvp.defjvp(lambda p, t: (f_jvp(*p), t[0] * fnp.sin(p[1]) + p[0] * fnp.cos(p[1]) * t[1]))

    @custom_vjp
    def f_vjp(x: Any, y: Any) -> Any:
        return x * fnp.sin(y)
    f_vjp.defvjp(lambda x, y: (f_vjp(x, y), (x, y)),
                 lambda res, g: (g * fnp.sin(res[1]), g * res[0] * fnp.cos(res[1])))
    shape = sampling.draw_shape(draw)
    args = (sampling.values(rng, shape), sampling.values(rng, shape))
    return [sampling.Case(f_jvp, args, "custom_jvp"), sampling.Case(f_vjp, args, "custom_vjp")]


custom_jvp_call.sample = custom_vjp_call.sample = sampling.custom(_sample_custom)
custom_jvp_linearized.sample = custom_jvp_call.sample


def _transpose(linear: Callable, zeros_in: list, cts: Sequence) -> list:
    """Apply the transpose of a linear funcgrad map (given its input shapes) to ``cts``."""
    _, f = vjp(linear, *zeros_in)
    return list(f(list(cts)))


def _weak_flat_fun(call: "_Call") -> Callable:
    """``call._flat_fun`` through a weak reference: a bound method would tie the call, and
    the residuals and tangent tapes it holds, in a reference cycle."""
    ref = weakref.ref(call)
    return lambda *leaves: ref()._flat_fun(*leaves)


class _Call(TraceCall):
    """Shared plumbing: the flat view of a call of a custom function."""

    def __init__(self, owner: Any, nondiff: list, in_tree: Any):
        super().__init__(_weak_flat_fun(self), owner.__name__)
        self.owner = owner
        self.nondiff = nondiff
        self.in_tree = in_tree
        self.out_tree = None

    def __repr__(self) -> str:
        return self.name

    @property
    def __name__(self) -> str:
        return self.name

    def args(self, leaves: Sequence) -> list:
        """Rebuild the user's positional arguments from dynamic leaves."""
        dyn = self.in_tree.unflatten(leaves)
        full, k = [], 0
        for i in range(len(self.nondiff) + len(dyn)):
            if i in self.owner.nondiff_argnums:
                full.append(self.nondiff[self.owner.nondiff_argnums.index(i)])
            else:
                full.append(dyn[k])
                k += 1
        return full

    @property
    def expected_output(self) -> Any:
        """The types of the function's output where it has run for this call (staged
        under jit, replayed from a tape), to check the rules' primal outputs against, as
        JAX does where it has traced the function; None where it has not run (evaluating
        it only to check would run the user's function more often than JAX does)."""
        return getattr(self, "_ran", None)

    def _flat_fun(self, *leaves: Any) -> list:
        out = self.owner.fun(*self.args(leaves))
        out_leaves, self.out_tree = tree_util.tree_flatten(out)
        self._ran = self.out_tree.unflatten([ShapeDtypeStruct.like(o) for o in out_leaves])
        return out_leaves

    def _copy(self) -> "_Call":
        """A shallow copy whose ``fun`` is its own."""
        new = copy.copy(self)
        new.fun = _weak_flat_fun(new)
        return new

    def record(self, trace: Any, leaves: Sequence, prim: Primitive, primals: list,
               outs: list) -> list:
        _, in_vars, mask = trace.lower(leaves)
        outs = [o if isinstance(o, Array) else fnp.asarray(o) for o in outs]
        return list(trace.record(prim, {"call": self}, primals, in_vars, mask, tuple(outs)))


class _CustomFunction:
    """What custom_jvp and custom_vjp share: wrapping ``fun`` and calling it through a
    `TraceCall` of class ``call_class`` once its rule is defined."""

    call_class: type
    rule_name: str

    def __init__(self, fun: Callable, nondiff_argnums: Sequence[int] = ()):
        functools.update_wrapper(self, fun)
        self.fun = fun
        self.nondiff_argnums = tuple(nondiff_argnums)

    def __call__(self, *args: Any) -> Any:
        if not self.has_rule():
            raise AttributeError(f"No {self.rule_name.upper()} defined for custom_"
                                 f"{self.rule_name} function {self.__name__} using "
                                 f"`def{self.rule_name}`.")
        nondiff, dyn = _split_args(args, self.nondiff_argnums)
        leaves, in_tree = tree_util.tree_flatten(tuple(dyn))
        call = self.call_class(self, nondiff, in_tree)
        out = call.bind(leaves)
        return call.out_tree.unflatten(out)


class custom_jvp(_CustomFunction):
    """A function with a custom JVP rule: ``f.defjvp(jvp)`` with
    ``jvp(*nondiff_args, primals, tangents) -> (primal_out, tangent_out)``, or
    ``f.defjvps(*per_arg)`` with ``per_arg_i(t_i, primal_out, *primals)``."""

    rule_name = "jvp"
    jvp: Callable | None = None

    def has_rule(self) -> bool:
        return self.jvp is not None

    def defjvp(self, jvp: Callable) -> Callable:
        self.jvp = jvp
        return jvp

    def defjvps(self, *jvps: Callable | None) -> None:
        def jvp(primals: tuple, tangents: tuple) -> tuple:
            out = self.fun(*primals)
            total = None
            for rule, t in zip(jvps, tangents):
                if rule is None:
                    continue
                ti = rule(t, out, *primals)
                total = ti if total is None else tree_util.tree_map(
                    lambda a, b: a + b, total, ti)
            return out, (tree_util.tree_map(_zeros_like, out) if total is None else total)
        self.jvp = jvp


class _CustomJVPCall(_Call):
    def run_rule(self, primals: list, tangents: list) -> tuple[list, list]:
        dyn_p = self.in_tree.unflatten(primals)
        dyn_t = self.in_tree.unflatten(tangents)
        res = self.owner.jvp(*self.nondiff, tuple(dyn_p), tuple(dyn_t))
        out_leaves, self.out_tree, t_leaves = contracts.split_jvp_rule_output(
            _name(self.owner.jvp), self.name, res, self.expected_output)
        return out_leaves, [(_zeros_like(o) if t is None else t)
                            for t, o in zip(t_leaves, out_leaves)]

    def process_jvp(self, trace: Any, leaves: Sequence) -> list:
        primals, tangents = trace.split(leaves)
        tangents = [_zeros_like(p) if t is None else t for p, t in zip(primals, tangents)]
        out, t_out = self.run_rule(primals, tangents)
        return [trace.wrap(o, t) for o, t in zip(out, t_out)]

    def process_rev(self, trace: Any, leaves: Sequence) -> list:
        primals = trace.lower(leaves)[0]
        if trace.keep_consts:  # a tape to be replayed: the rule runs at its inputs later
            outs = self._flat_fun(*primals)
            return self.record(trace, leaves, custom_jvp_call, primals, outs)
        outs = self.linearize(primals)
        result = self.record(trace, leaves, custom_jvp_linearized, primals, outs)
        trace.records[-1].sub = self.tangent_map
        return result

    def linearize(self, primals: list) -> list:
        """Run the rule once with traced tangents; keep the tape of its tangent map (linear
        in the tangents) and return its primal output."""
        zeros = [_zeros_like(p) for p in primals]
        self.n_inputs = len(primals)
        self.traced = [k for k, z in enumerate(zeros) if is_inexact(z.dtype)]
        primals_out: list = []

        def tangent_map(*ts: Any) -> list:
            tangents = list(zeros)
            for k, t in zip(self.traced, ts):
                tangents[k] = t
            out, t_out = self.run_rule(primals, tangents)
            primals_out.extend(out)
            return t_out
        self.tangent_map, _ = trace_flat(tangent_map, [zeros[k] for k in self.traced],
                                         f"custom_jvp {self.name}")
        top = find_top_trace(primals_out)
        if top is not None and not top.alive:
            raise TypeError(f"custom_jvp rule of {self.name!r} returned a primal output that "
                            "depends on the tangents; compute it from the primals alone")
        return primals_out

    def held_values(self) -> list:
        tangent_map = getattr(self, "tangent_map", None)  # (set once linearised)
        return [] if tangent_map is None else tangent_map.held_values()

    def with_held_values(self, values: Iterator, sub: Any) -> tuple[TraceCall, Any]:
        if getattr(self, "tangent_map", None) is None:
            return self, sub
        new = self._copy()
        new.tangent_map = self.tangent_map.with_held_values(values)
        return new, new.tangent_map

    def transpose_tangent_map(self, g: Sequence) -> list:
        """Cotangents of the inputs: the recorded tangent map, transposed."""
        out: list = [None] * self.n_inputs
        for k, ct in zip(self.traced, self.tangent_map.backward(list(g))):
            out[k] = ct
        return out

    def process_batch(self, trace: Any, leaves: Sequence) -> list:
        return vmap_calls.batch_custom_jvp(custom_jvp, self, trace, leaves)

    def vjp(self, xs: Sequence, g: Sequence) -> list:
        """Cotangents of the inputs: the transpose of the rule's tangent map at ``xs``."""
        xs = list(xs)
        return _transpose(lambda *ts: self.run_rule(xs, list(ts))[1],
                          [_zeros_like(x) for x in xs], g)


class custom_vjp(_CustomFunction):
    """A function with a custom VJP rule: ``f.defvjp(fwd, bwd)`` with
    ``fwd(*args) -> (out, residuals)`` and ``bwd(*nondiff_args, residuals, g) -> tuple``
    of one cotangent per differentiable argument (``None`` for zero)."""

    rule_name = "vjp"
    fwd: Callable | None = None
    bwd: Callable | None = None

    def has_rule(self) -> bool:
        return self.fwd is not None

    def defvjp(self, fwd: Callable, bwd: Callable) -> None:
        self.fwd = fwd
        self.bwd = bwd


class _CustomVJPCall(_Call):
    residuals: Any = None

    def run_fwd(self, primals: list) -> list:
        res = self.owner.fwd(*self.args(primals))
        out, self.residuals = contracts.split_fwd_output(
            _name(self.owner.fwd), self.name, res, self.expected_output)
        out_leaves, self.out_tree = tree_util.tree_flatten(out)
        return out_leaves

    def run_bwd(self, shapes: Sequence[tuple], dtypes: Sequence, g: Sequence) -> list:
        """The user's bwd on output cotangents ``g`` (flat), checked against the inputs'
        ``shapes`` and ``dtypes``, as flat input cotangents (``None`` for zero)."""
        g_tree = self.out_tree.unflatten(list(g))
        cts = self.owner.bwd(*self.nondiff, self.residuals, g_tree)
        return contracts.check_bwd_output(
            cts, self.in_tree, [ShapeDtypeStruct(s, d) for s, d in zip(shapes, dtypes)])

    def process_rev(self, trace: Any, leaves: Sequence) -> list:
        primals = trace.lower(leaves)[0]
        outs = self.run_fwd(primals)
        return self.record(trace, leaves, custom_vjp_call, primals, outs)

    def vjp(self, shapes: Sequence[tuple], dtypes: Sequence, g: Sequence) -> list:
        return self.run_bwd(shapes, dtypes, g)

    def held_values(self) -> list:
        return tree_util.tree_leaves(self.residuals)

    def with_held_values(self, values: Iterator, sub: Any) -> tuple[TraceCall, Any]:
        tree = tree_util.tree_structure(self.residuals)
        new = self._copy()
        new.residuals = tree.unflatten([next(values) for _ in range(tree.num_leaves)])
        return new, sub

    def process_batch(self, trace: Any, leaves: Sequence) -> list:
        return vmap_calls.batch_custom_vjp(custom_vjp, self, trace, leaves)

    def process_jvp(self, trace: Any, leaves: Sequence) -> list:
        primals, tangents = trace.split(leaves)
        outs = self.run_fwd(primals)
        tangents = [_zeros_like(p) if t is None else t for p, t in zip(primals, tangents)]

        def bwd_map(*g: Any) -> list:
            cts = self.run_bwd([np.shape(p) for p in primals],
                               [ShapeDtypeStruct.like(p).dtype for p in primals], g)
            return [_zeros_like(p) if c is None else c for c, p in zip(cts, primals)]
        t_out = _transpose(bwd_map, [_zeros_like(o) for o in outs], tangents)
        return [trace.wrap(o, t) for o, t in zip(outs, t_out)]


custom_jvp.call_class = _CustomJVPCall
custom_vjp.call_class = _CustomVJPCall
