"""A jitted function applied to tracers of other transforms: one `JitCall` (`TraceCall`).

Under ``grad`` the call is one record of `jit_call_p`, run by a compiled forward program
that also returns the residuals of its VJP; its backward is a compiled program of that VJP
on the saved residuals (nothing recomputed). Where the call is differentiated again,
replayed (make_tape, checkpoint) or its tape keeps values inside records (custom rules,
control flow), the backward is the jitted VJP of the function, which recomputes the forward
pass as a checkpoint would. Under ``jvp`` it runs the jitted JVP; under ``vmap`` a jitted
batched program; inside another jit it is traced inline. Each of those programs is a
`Jitted` function derived from the called one (`Jitted.derived`), cached like it.
"""
from __future__ import annotations

from typing import TYPE_CHECKING, Any, Callable, Sequence

import numpy as np

import funcgrad.numpy as fnp
from funcgrad.array import Array, new_array
from funcgrad.core import Primitive, TraceCall, Tracer, is_inexact
from .grad import float0, vjp
from .jit_trace import SCALAR_TYPES, ClosedOverTracer, JitTracer, StagedClosureError
from .jvp import jvp
from .tape import RevTrace, Tape, trace_flat
from . import vmap_calls

if TYPE_CHECKING:  # for annotations only: jit imports this module
    from .jit import Jitted

__all__ = ["JitCall", "jit_call_p"]


def _raw(x: Any) -> Any:
    """The backend value a compiled program takes for an argument leaf: a numpy scalar
    becomes the 0-d array the tracing run saw (numpy's scalar loops may round differently
    from its array loops: complex square, for one)."""
    if isinstance(x, Array):  # (not a tracer: a strong or weak concrete Array)
        return x._value
    return np.asarray(x) if isinstance(x, np.generic) else x


def _jit_call_impl(*raws: Any, call: "JitCall") -> tuple:
    """A recorded jitted call replayed without tracers: the compiled forward program."""
    return tuple(_raw(o) for o in call.forward(*[new_array(r) for r in raws]))


jit_call_p = Primitive("jit_call", _jit_call_impl, None, ("call",), multiple_results=True,
                       doc="A jitted function applied under other transforms.")
jit_call_p.defvjp_all(lambda g, xs, call: call.vjp(xs, g))
jit_call_p.defbatch(vmap_calls.call_rule)




class _Saved:
    """What a jitted call's forward program left for its backward: the inputs it ran on,
    the key of its tape, the residuals and the outputs' avals."""

    __slots__ = ("primals", "key", "residuals", "out_avals")

    def __init__(self, primals: list, key: tuple, residuals: list, out_avals: list):
        self.primals = primals
        self.key = key
        self.residuals = residuals
        self.out_avals = out_avals


def _inputs_key(leaves: Sequence) -> tuple:
    """What a traced call's tape depends on about its inputs, the same outside the program
    (values) as inside it (tracers): Python numbers by type, arrays by shape, dtype and
    device."""
    key = []
    for x in leaves:
        number = x.scalar_type if isinstance(x, JitTracer) else (
            type(x) if type(x) in SCALAR_TYPES else None)
        key.append(number if number is not None else (
            tuple(x.shape), x.dtype, x.device, getattr(x, "weak_type", False)))
    return tuple(key)


class _NestedResiduals(Exception):
    """Raised while tracing a jitted call's forward-saving program whose tape keeps values
    inside records (custom rules, control flow, nested tapes), which `Tape.residuals` does
    not list: such a call's backward recomputes instead."""


def _flat_tape(tape: Tape) -> bool:
    """Whether every value a tape's backward pass reads is one of its `residuals`: no
    record carries a nested tape or a call object with state of its own."""
    return all(rec.sub is None and not (rec.params and ("call" in rec.params
                                                        or "programs" in rec.params))
               for rec in tape.records)


def _traced(residual: Any) -> bool:
    """Whether a residual depends on the inputs (a traced value of the program), rather
    than a constant the tape keeps."""
    return isinstance(residual.value, Tracer)


class JitCall(TraceCall):
    """A jitted function called with tracers of outer transforms: each transform gets a
    jitted program of its own (the function's VJP, JVP...), compiled and cached by the
    same machinery as the function itself."""

    def __init__(self, jitted: Jitted, flat: Callable, static: tuple, tree: Any):
        super().__init__(flat, f"jit({getattr(jitted, '__name__', 'fun')})")
        self.jitted = jitted
        self.static = static
        self.tree = tree

    def _jitted(self, kind: str, fun: Callable) -> Callable:
        """The jitted ``fun`` (the function's VJP, JVP...); or ``fun`` itself, run as
        traced, when its staged control flow closes over values of the transform it
        applies (``jvp`` of a ``while_loop`` whose body reads the differentiated value),
        which cannot be compiled."""
        jitted = self.jitted.derived(self.static, self.tree, kind, fun)
        if jitted in self.jitted.uncompilable:
            return fun

        def call(*args: Any) -> Any:
            try:
                return jitted(*args)
            except StagedClosureError:
                self.jitted.uncompilable.add(jitted)
                return fun(*args)
        return call

    def __repr__(self) -> str:
        return self.name

    def forward(self, *leaves: Any) -> list:
        """The flat outputs, through a compiled program of the flat function."""
        return list(self._jitted("forward", self.fun)(*leaves))

    def process_rev(self, trace: RevTrace, leaves: Sequence) -> list:
        primals, in_vars, mask = trace.lower(leaves)
        if mask and not trace.keep_consts and not any(isinstance(p, Tracer) for p in primals):
            outs = self._forward_saving(primals, mask)
        else:  # replayed (make_tape, checkpoint) or seen by outer transforms: no residuals
            n_records = len(trace.records)
            outs = self.forward(*primals)
            if len(trace.records) > n_records:  # it read values of this trace from its
                del trace.records[n_records:]   # closure: run it as traced, op by op
                raise ClosedOverTracer(self.name)
        outs = [o if isinstance(o, Array) else fnp.asarray(o) for o in outs]
        return list(trace.record(jit_call_p, {"call": self}, primals, in_vars, mask,
                                 tuple(outs)))

    def _forward_saving(self, primals: list, mask: int) -> list:
        """The outputs, by a compiled program that also returns the residuals of their VJP
        with respect to the inputs in ``mask`` (kept on this call for `vjp`)."""
        wanted = tuple(i for i in range(len(primals)) if mask >> i & 1)
        kind = f"forward_saving{list(wanted)}"
        unsaving = self.jitted._unsaving
        if (self.static, self.tree, kind) in unsaving:
            return self.forward(*primals)
        fun, tapes = self.fun, self.jitted._vjp_tapes
        prefix = (self.static, self.tree)

        def saving(*flat: Any) -> list:
            def of_wanted(*xs: Any) -> Any:
                full = list(flat)
                for i, x in zip(wanted, xs):
                    full[i] = x
                return fun(*full)
            tape, outs = trace_flat(of_wanted, [flat[i] for i in wanted], "jit_vjp")
            if not _flat_tape(tape):
                raise _NestedResiduals
            tapes[(*prefix, wanted, _inputs_key(flat))] = tape
            return list(outs) + [r.value for r in tape.residuals() if _traced(r)]

        try:
            both = self._jitted(kind, saving)(*primals)
        except _NestedResiduals:
            unsaving.add((self.static, self.tree, kind))
            return self.forward(*primals)
        n_out = self.fun.out_trees[-1].num_leaves
        self.saved = _Saved(primals, (*prefix, wanted, _inputs_key(primals)),
                            both[n_out:], [(o.shape, o.dtype) for o in both[:n_out]])
        return both[:n_out]

    def _vjp_saved(self, g: Sequence) -> list:
        """The inputs' cotangents by a compiled program of the recorded VJP on the saved
        residuals."""
        saved = self.saved
        key = saved.key
        tapes = self.jitted._vjp_tapes

        def backward(*flat: Any) -> list:
            tape = tapes[key]
            values = iter(flat[:len(saved.residuals)])
            with_values = tape.with_residuals(
                lambda r: next(values) if _traced(r) else r.value)
            return with_values.backward(list(flat[len(saved.residuals):]))
        kind = f"vjp_saved{self.jitted._backward_index(key)}"
        cts = [fnp.zeros(*aval) if c is None else c for c, aval in zip(g, saved.out_avals)]
        got = self._jitted(kind, backward)(*saved.residuals, *cts)
        out: list = [None] * len(saved.primals)
        for i, c in zip(key[2], got):
            out[i] = c
        return out

    def vjp(self, xs: Sequence, g: Sequence) -> list:
        """The inputs' cotangents: from the residuals the forward program saved, when the
        record's inputs are still those it ran on and nothing differentiates this
        backward pass; else a jitted program computing the function's VJP."""
        saved = getattr(self, "saved", None)
        if (saved is not None and len(xs) == len(saved.primals)
                and all(a is b for a, b in zip(xs, saved.primals))
                and not any(isinstance(c, Tracer) for c in g)):
            return self._vjp_saved(g)
        fun = self.fun
        n = len(xs)

        def pullback(*flat: Any) -> list:
            _, f_vjp = vjp(lambda *ins: fun(*ins), *flat[:n])
            return list(f_vjp(list(flat[n:])))
        return list(self._jitted("vjp", pullback)(*xs, *g))

    def process_jvp(self, trace: Any, leaves: Sequence) -> list:
        primals, tangents = trace.split(leaves)
        floats = [i for i, p in enumerate(primals) if is_inexact(np.result_type(p))]
        tangents = [fnp.zeros_like(primals[i]) if tangents[i] is None else tangents[i]
                    for i in floats]
        fun = self.fun
        n = len(primals)

        def pushforward(*flat: Any) -> list:
            """Outputs, then the tangents of the float outputs (integer inputs and
            outputs have float0 tangents, which stay outside the program)."""
            ins = list(flat[:n])
            ts = [np.zeros(np.shape(x), float0) for x in ins]
            for i, t in zip(floats, flat[n:]):
                ts[i] = t
            out, t_out = jvp(lambda *xs: fun(*xs), tuple(ins), tuple(ts))
            return list(out) + [t for o, t in zip(out, t_out) if is_inexact(o.dtype)]
        both = self._jitted("jvp", pushforward)(*primals, *tangents)
        k = self.fun.out_trees[-1].num_leaves
        t_out = iter(both[k:])
        return [trace.wrap(o, next(t_out) if is_inexact(o.dtype) else None)
                for o in both[:k]]

    def process_batch(self, trace: Any, leaves: Sequence) -> list:
        """Under vmap: a jitted program of the batched function (cached per batching)."""
        return vmap_calls.batch_jit_call(self, trace, leaves)
