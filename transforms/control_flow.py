"""Structured control flow: `cond`, `switch`, `while_loop` (``funcgrad.lax``; the loops over
a range or an axis, `fori_loop`, `scan` and `map`, are in `transforms.scan`, on the staging
machinery here), usable eagerly, under every transform and under `jit`.

funcgrad's transforms are eager, so wherever the values that steer a construct are known
(outside `jit`, or inside it on values that do not depend on the arguments) it simply runs
in Python: the chosen branch, the loop, step by step. Every transform then sees ordinary
operations: derivatives of every order, batching, closures over any value, all for free;
a reverse-mode `scan` keeps each step's residuals (checkpoint its body for less memory).

Under `jit` the predicate, the index or the trip count are not known, and the construct is
*staged*: its functions are traced into sub-programs of the jit trace (`JitTrace.scoped`)
and the compiled program runs them with Python's own ``if``, ``while`` and ``for``. A
staged construct differentiates as JAX's do: `cond`/`switch` by the construct of its
branches' derivatives, `while_loop` in forward mode only (JAX's error in reverse mode),
`scan` and `fori_loop` with a static trip count by unrolling into the compiled program.
Inside `jit`, a staged construct's functions may read the jitted function's values freely,
and those of a vmap applied inside it (`vmap_within`: they hold the same examples); reading
values of grad or jvp applied inside the jitted function is refused with an error saying to
pass them as operands.
"""
from __future__ import annotations

from typing import Any, Callable, Sequence

import numpy as np

import funcgrad.numpy as fnp
from funcgrad import tree_util
from funcgrad._recursion import room
from funcgrad.array import Array, new_array
from funcgrad.core import Primitive, TraceCall, Tracer, is_inexact
from funcgrad.meta import is_meta
from funcgrad.primitives import sampling
from . import compile as compiler
from . import contracts
from .grad import vjp
from .jit import Jitted, JitTrace, JitTracer, StagedClosureError
from .jvp import JVPTrace, jvp
from .tape import Tape
from . import vmap_calls
from .vmap import is_batched

__all__ = ["cond", "switch", "while_loop", "is_abstract"]


def is_abstract(x: Any) -> bool:
    """Whether ``x``'s value is unknown to Python: it is traced by `jit` (at some level)."""
    while isinstance(x, Tracer):
        if isinstance(x, JitTracer):
            return True
        x = x._primal
    return False


def _flat_fn(fun: Callable, in_tree: Any, out_trees: list, spread: bool = True
             ) -> Callable:
    """``fun`` on flat leaves, returning flat leaves (its output trees in ``out_trees``):
    ``fun(*tree)`` when ``spread`` (the tree is a tuple of arguments), else ``fun(tree)``."""
    def flat(*leaves: Any) -> list:
        args = in_tree.unflatten(list(leaves))
        out_leaves, tree = tree_util.tree_flatten(fun(*args) if spread else fun(args))
        out_trees.append(tree)
        flat.out_tree = tree  # type: ignore[attr-defined]
        return _as_arrays(out_leaves)
    flat.__name__ = getattr(fun, "__name__", "fun")
    flat.fun = fun  # type: ignore[attr-defined]
    return flat


def _user_view(flat: Callable, leaves: Sequence) -> tuple:
    """(the user's function behind flat function ``flat``, its last output ``leaves`` as
    the tree it returned): what a contract's message names. A flat function of funcgrad's
    own (a derivative's branch) is its own user."""
    tree = getattr(flat, "out_tree", None)
    return getattr(flat, "fun", flat), (tree.unflatten(list(leaves)) if tree is not None
                                        else list(leaves))


def _as_arrays(xs: Sequence) -> list:
    return [x if isinstance(x, Array) else fnp.asarray(x) for x in xs]


def _raws(outs: Sequence) -> tuple:
    return tuple(o._value if type(o) is Array else np.asarray(o) for o in outs)


def _closure_error(what: str) -> StagedClosureError:
    return StagedClosureError(
        f"a function of {what} inside jit reads a value traced by a transform applied "
        "inside the jitted function (grad or jvp around the construct), which a "
        "staged construct cannot take from its closure. Pass that value as an operand "
        "(cond(pred, f, g, x, w) instead of closing over w).")


# ---------------------------------------------------------------------------------------
# Staging under jit: sub-programs and the calls that run them
# ---------------------------------------------------------------------------------------

def _stage(trace: JitTrace, fun: Callable, args: Sequence, what: str) -> tuple:
    """(sub-program, concrete outputs) of ``fun`` traced on ``args`` in ``trace`` (a step
    of the recursion through nested constructs: with `room` on the stack)."""
    closures = trace.closures
    trace.closures = False
    try:
        with room():
            sub, outs = trace.scoped(fun, args)
        if trace.closures or any(isinstance(o, Tracer) for o in outs):
            raise _closure_error(what)
    finally:
        trace.closures = trace.closures or closures
    return sub, _as_arrays(outs)


def _standalone(sub: Tape) -> tuple:
    """``sub`` compiled on its own: (program, the outer variables it reads, which the
    program takes as extra arguments after its own)."""
    free = sorted(_outer_reads(sub))
    tape = Tape(sub.records, sub.var_avals, list(sub.in_vars) + free, sub.out_vars,
                sub.out_consts, name=sub.name)
    return compiler.compile_tape(tape), free


def _outer_reads(sub: Any) -> set:
    own = compiler.defined_vars(sub)
    found = set()
    for r in sub.records:
        found.update(v for v in r.in_vars if v >= 0 and v not in own)
        for p in compiler.programs_of(r):
            found.update(_outer_reads(p) - own)
    found.update(v for v in sub.out_vars if v >= 0 and v not in own)
    return found


def _runner(trace: JitTrace, sub: Any) -> Callable:
    """Run a staged sub-program on concrete values (to give the trace its results): the
    program compiled on its own, with the outer values it reads taken from the trace."""
    program, free = _standalone(sub)
    env = [trace.value_of(v) for v in free]

    def run(*args: Any) -> list:
        outs = program.fn(*[a._value if type(a) is Array else a for a in args],
                          *[e._value if type(e) is Array else e for e in env])
        return [o if isinstance(o, Array) else new_array(np.asarray(o)) for o in outs]
    return run


class _Control(TraceCall):
    """Shared by the staged constructs: the primitive standing for them on a tape (its
    implementation runs the construct eagerly, its VJP asks the call)."""

    what = "a control-flow construct"

    def process_rev(self, trace: Any, leaves: Sequence) -> list:
        primals, in_vars, mask = trace.lower(leaves)
        before = len(trace.records)
        outs = _as_arrays(self.bind(primals))
        if len(trace.records) != before:  # the functions used this trace's own values
            raise _closure_error(self.what)
        return list(trace.record(control_p, {"call": self}, primals, in_vars, mask,
                                 tuple(outs)))

    def vjp(self, xs: Sequence, g: Sequence) -> list:
        raise NotImplementedError(f"{self.what} is not reverse-differentiable")


def _control_impl(*raws: Any, call: _Control, programs: tuple = ()) -> tuple:
    return _raws(call.fun(*[new_array(r) for r in raws]))


control_p = Primitive("control_flow", _control_impl, None, ("call",),
                      multiple_results=True,
                      doc="A staged lax control-flow construct (cond, switch).")
control_p.defvjp_all(lambda g, xs, call: call.vjp(xs, g))
control_p.defbatch(vmap_calls.call_rule)


def _sample_control(rng: Any, draw: Callable) -> list:
    """Registry test cases: a cond on a value jit does not know, differentiated inside
    the jitted function (a staged cond under grad is this primitive)."""
    shape = sampling.draw_shape(draw)

    def f(x: Any, y: Any) -> Any:
        return cond(fnp.sum(x) > 0, lambda a, b: fnp.sin(a) * b, lambda a, b: a * a - b,
                    x, y)

    def value_and_pullback(x: Any, y: Any) -> Any:
        out, f_vjp = vjp(f, x, y)  # the cond under vjp inside jit: a control_flow record
        return out, f_vjp(fnp.ones_like(out))
    args = (sampling.values(rng, shape), sampling.values(rng, shape))
    return [sampling.Case(Jitted(value_and_pullback), args, f"jit(vjp(cond)) {shape}")]


control_p.sample = sampling.custom(_sample_control)


# ---------------------------------------------------------------------------------------
# switch and cond
# ---------------------------------------------------------------------------------------

def _clamp(index: Any, n: int) -> int:
    return min(max(int(index), 0), n - 1)


class _Switch(_Control):
    """``branches[index](*operands)`` with an index jit does not know."""

    what = "lax.switch/lax.cond"

    def __init__(self, branches: Sequence[Callable], name: str = "switch",
                 api: str = "switch"):
        self.branches = tuple(branches)
        self.api = api  # the construct whose contract the branches keep: cond or switch
        super().__init__(self._run, name)

    def _run(self, index: Any, *operands: Any) -> list:
        return self.branches[_clamp(index, len(self.branches))](*operands)

    def __repr__(self) -> str:
        return f"{self.name}[{len(self.branches)} branches]"

    def process_jit(self, trace: JitTrace, leaves: Sequence) -> list:
        index, ops = leaves[0], list(leaves[1:])
        staged = []
        for branch in self.branches:  # (a loop, not a comprehension: one frame less a level)
            staged.append(_stage(trace, branch, ops, self.what))
        funs, outs = zip(*[_user_view(b, o) for b, (_, o) in zip(self.branches, staged)])
        _check_branches(self.api, funs, outs)
        # the values: the taken branch's program run (its effects happen, as on later calls)
        taken_sub = staged[_clamp(trace.primal_of(index), len(staged))][0]
        taken = _runner(trace, taken_sub)(*[trace.primal_of(o) for o in ops])
        primals, in_vars, _ = trace.lower(leaves)
        return list(trace.record(switch_p, {"call": self, "programs": tuple(
            sub for sub, _ in staged)}, primals, in_vars, 0, tuple(taken)))

    def vjp(self, xs: Sequence, g: Sequence) -> list:
        """The construct of the branches' VJPs (in the float operands)."""
        index, ops = xs[0], list(xs[1:])
        floats = [i for i, o in enumerate(ops) if is_inexact(o.dtype)]

        def pullback(branch: Callable) -> Callable:
            def back(*args: Any) -> list:
                primals, cts = list(args[:len(ops)]), list(args[len(ops):])

                def of_floats(*fs: Any) -> list:
                    full = list(primals)
                    for i, f in zip(floats, fs):
                        full[i] = f
                    return branch(*full)
                _, f_vjp = vjp(of_floats, *[primals[i] for i in floats])
                return list(f_vjp(cts))
            return back
        cts = _Switch([pullback(b) for b in self.branches], "switch_vjp").bind(
            [index, *ops, *g])
        out: list = [None] * len(xs)
        for i, c in zip(floats, cts):
            out[1 + i] = c
        return out

    def process_batch(self, trace: Any, leaves: Sequence) -> list:
        return vmap_calls.batch_switch_call(lambda bs: _Switch(bs, self.name), self.branches,
                                            trace, leaves)

    def process_jvp(self, trace: JVPTrace, leaves: Sequence) -> list:
        primals, tangents = trace.split(leaves)
        index, ops, tans = primals[0], primals[1:], tangents[1:]
        floats = [i for i, o in enumerate(ops) if is_inexact(o.dtype)]
        ts = [fnp.zeros_like(ops[i]) if tans[i] is None else tans[i] for i in floats]

        def pushforward(branch: Callable) -> Callable:
            def push(*args: Any) -> list:
                full, t = list(args[:len(ops)]), list(args[len(ops):])

                def of_floats(*fs: Any) -> list:
                    xs = list(full)
                    for i, f in zip(floats, fs):
                        xs[i] = f
                    return branch(*xs)
                out, t_out = jvp(of_floats, tuple(full[i] for i in floats), tuple(t))
                return list(out) + list(t_out)
            return push
        both = _Switch([pushforward(b) for b in self.branches], "switch_jvp").bind(
            [index, *ops, *ts])
        if any(isinstance(o, Tracer) and o._trace is trace for o in both):
            raise _closure_error(self.what)
        k = len(both) // 2
        return [trace.wrap(o, t) for o, t in zip(both[:k], both[k:])]


# switch, while_loop and scan records live only in compiled programs (transforms meet the
# constructs before they are recorded): not differentiated there
switch_p = Primitive("switch", _control_impl, None, ("call", "programs"),
                     multiple_results=True, differentiable=False,
                     doc="branches[index](*operands), staged.")


def _emit_switch(w: Any, step: Any, ins: list, outs: list, indent: str) -> None:
    names = [compiler.write_function(w, sub, step.alias, indent)
             for sub in step.rec.params["programs"]]
    n = len(names)
    lhs = ", ".join(outs) + ("," if len(outs) == 1 else "")
    w.emit(indent, f"{lhs} = ({', '.join(names)},)[min(max(int({ins[0]}), 0), {n - 1})]("
                   f"{', '.join(ins[1:])})")


compiler.EMITTERS["switch"] = _emit_switch
switch_p.defbatch(vmap_calls.call_rule)


def _check_branches(api: str, funs: Sequence[Callable], outs: Sequence) -> None:
    """The branches' contract (`contracts.check_branches`), named as JAX names them:
    cond's ``branches`` are ``(false_fun, true_fun)``, JAX reports the true one first."""
    if api == "cond":
        contracts.check_branches(api, ("true_fun", "false_fun"), funs[::-1], outs[::-1])
    else:
        contracts.check_branches(api, [f"branch {i}" for i in range(len(funs))], funs, outs)


def _taken(api: str, branches: tuple, i: int, operands: tuple) -> Any:
    """Branch ``i``'s output, run eagerly, checked against the other branches' outputs
    evaluated abstractly: the contract JAX checks by tracing them all."""
    out = branches[i](*operands)
    outs = [out if j == i else contracts.abstract_outputs(b, operands)
            for j, b in enumerate(branches)]
    known = [j for j, o in enumerate(outs) if j == i or o is not None]
    _check_branches(api, [branches[j] for j in known], [outs[j] for j in known])
    return out


def _switch(index: Array, branches: tuple, operands: tuple, api: str) -> Any:
    if is_batched(index):  # one index per example (vmap): every branch, selected
        return vmap_calls.batched_select(index, branches, operands)
    if is_meta(index):  # no value picks a branch: each runs on the operands, the first's
        outs = [b(*operands) for b in branches]  # result is the construct's
        _check_branches(api, branches, outs)
        return outs[0]
    if not is_abstract(index):
        return _taken(api, branches, _clamp(index, len(branches)), operands)
    leaves, in_tree = tree_util.tree_flatten(operands)
    out_trees: list = []
    flats = [_flat_fn(b, in_tree, out_trees) for b in branches]
    outs = _Switch(flats, api=api).bind([index, *leaves])
    return out_trees[-1].unflatten(list(outs))


def switch(index: Any, branches: Sequence[Callable], *operands: Any) -> Any:
    """``branches[index](*operands)``, the index clamped to the branches (JAX's
    ``lax.switch``). Under jit every branch is compiled and the one chosen at run time
    runs; the branches must return the same types, checked on every path (JAX traces
    them all)."""
    if not isinstance(branches, Sequence) or not all(callable(b) for b in branches):
        raise TypeError("lax.switch: branches argument should be a sequence of callables.")
    if not branches:
        raise ValueError("Empty branch sequence")
    index = fnp.asarray(index) if not isinstance(index, Array) else index
    if index.shape != () or index.dtype.kind not in "iub":
        raise TypeError(f"Branch index must be scalar integer, got {index!r} of dtype "
                        f"{index.dtype} and shape {tuple(index.shape)}.")
    return _switch(index, tuple(branches), operands, "switch")


def cond(pred: Any, true_fun: Callable, false_fun: Callable, *operands: Any) -> Any:
    """``true_fun(*operands) if pred else false_fun(*operands)`` (JAX's ``lax.cond``),
    with a scalar boolean or number ``pred``."""
    if not (callable(true_fun) and callable(false_fun)):
        raise TypeError("lax.cond: true_fun and false_fun arguments should be callable.")
    if pred is None:
        raise TypeError("cond predicate is None")
    pred = fnp.asarray(pred) if not isinstance(pred, Array) else pred
    if pred.shape != ():
        raise TypeError(f"Pred must be a scalar, got {pred!r} of shape {tuple(pred.shape)}.")
    if pred.dtype.kind not in "biuf":
        raise TypeError(f"Pred type must be either boolean or number, got {pred.dtype}.")
    index = fnp.astype(fnp.not_equal(pred, 0), np.int32)
    return _switch(index, (false_fun, true_fun), operands, "cond")


# ---------------------------------------------------------------------------------------
# while_loop
# ---------------------------------------------------------------------------------------

class _While(_Control):
    """The loop with a condition jit does not know."""

    what = "lax.while_loop"

    def __init__(self, cond_fun: Callable, body_fun: Callable):
        self.cond_fun, self.body_fun = cond_fun, body_fun
        super().__init__(self._run, "while_loop")

    def _run(self, *carry: Any) -> list:
        carry = list(carry)
        while bool(self.cond_fun(*carry)[0]):
            carry = list(self.body_fun(*carry))
        return carry

    def process_jit(self, trace: JitTrace, leaves: Sequence) -> list:
        carry = list(leaves)
        cond_sub, _ = _stage(trace, self.cond_fun, carry, self.what)
        body_sub, outs = _stage(trace, self.body_fun, carry, self.what)
        body, out_tree = _user_view(self.body_fun, outs)
        _, in_tree = _user_view(self.body_fun, [trace.primal_of(c) for c in carry])
        contracts.check_carry("while_loop body", body, in_tree, out_tree)
        run_cond, run_body = _runner(trace, cond_sub), _runner(trace, body_sub)
        values = [trace.primal_of(c) for c in carry]
        while bool(run_cond(*values)[0]):
            values = run_body(*values)
        primals, in_vars, _ = trace.lower(leaves)
        return list(trace.record(while_p, {"call": self, "programs": (cond_sub, body_sub)},
                                 primals, in_vars, 0, tuple(_as_arrays(values))))

    def process_batch(self, trace: Any, leaves: Sequence) -> list:
        return vmap_calls.batch_while_call(_While, self.cond_fun, self.body_fun, trace, leaves)

    def process_rev(self, trace: Any, leaves: Sequence) -> list:
        raise ValueError("Reverse-mode differentiation does not work for lax.while_loop or "
                         "lax.fori_loop with dynamic start/stop values. Try using "
                         "lax.scan, or using fori_loop with static start/stop.")

    def process_jvp(self, trace: JVPTrace, leaves: Sequence) -> list:
        primals, tangents = trace.split(leaves)
        floats = [i for i, p in enumerate(primals) if is_inexact(p.dtype)]
        ts = [fnp.zeros_like(primals[i]) if tangents[i] is None else tangents[i]
              for i in floats]
        n = len(primals)
        cond_fun, body_fun = self.cond_fun, self.body_fun

        def body(*both: Any) -> list:
            carry, t = list(both[:n]), list(both[n:])

            def of_floats(*fs: Any) -> list:
                xs = list(carry)
                for i, f in zip(floats, fs):
                    xs[i] = f
                return body_fun(*xs)
            out, t_out = jvp(of_floats, tuple(carry[i] for i in floats), tuple(t))
            return list(out) + [t_out[i] for i in floats]
        both = _While(lambda *b: cond_fun(*b[:n]), body).bind([*primals, *ts])
        if any(isinstance(o, Tracer) and o._trace is trace for o in both):
            raise _closure_error(self.what)
        out, tans = list(both[:n]), dict(zip(floats, both[n:]))
        return [trace.wrap(o, tans.get(i)) for i, o in enumerate(out)]


while_p = Primitive("while_loop", _control_impl, None, ("call", "programs"),
                    multiple_results=True, differentiable=False,
                    doc="while cond(carry): carry = body(carry).")


def _emit_while(w: Any, step: Any, ins: list, outs: list, indent: str) -> None:
    cond_sub, body_sub = step.rec.params["programs"]
    c = compiler.write_function(w, cond_sub, step.alias, indent)
    b = compiler.write_function(w, body_sub, step.alias, indent)
    carry = w.local("carry")
    w.emit(indent, f"{carry} = ({''.join(i + ', ' for i in ins)})")
    w.emit(indent, f"while {c}(*{carry})[0]:")
    w.emit(indent + "    ", f"{carry} = {b}(*{carry})")
    lhs = ", ".join(outs) + ("," if len(outs) == 1 else "")
    w.emit(indent, f"{lhs} = {carry}")


compiler.EMITTERS["while_loop"] = _emit_while
while_p.defbatch(vmap_calls.call_rule)


def while_loop(cond_fun: Callable, body_fun: Callable, init_val: Any) -> Any:
    """``while cond_fun(val): val = body_fun(val)``; return val (JAX's ``lax.while_loop``).
    Forward-mode differentiable; reverse mode raises JAX's error (use scan or a fori_loop
    with static bounds)."""
    leaves, tree = tree_util.tree_flatten(init_val)
    val = tree.unflatten(_as_arrays(leaves))
    first = contracts.check_pred(cond_fun(val))
    before = init_val  # the carry as given: a Python number in it is weakly typed
    # known values: a Python loop, seen op by op by transforms, until the condition is
    # known only abstractly (the body made the carry traced under jit): the iterations
    # run so far are peeled off, the rest is staged. Each step keeps the contract the
    # staged loop checks once (JAX traces the body once).
    while not (is_abstract(first) or is_batched(first)):
        if is_meta(first):  # no value decides: the body's shapes are the loop's
            contracts.check_carry("while_loop body", body_fun, before, body_fun(val))
            return val
        if not bool(first):
            return val
        new = body_fun(val)
        contracts.check_carry("while_loop body", body_fun, before, new)
        before = val = new
        first = contracts.check_pred(cond_fun(val))
    if not is_abstract(first):  # a condition per example (vmap)
        return vmap_calls.batched_while(cond_fun, body_fun, val, first)
    leaves, tree = tree_util.tree_flatten(val)
    leaves = _as_arrays(leaves)
    out_trees: list = []

    def flat_cond(*xs: Any) -> list:
        return [contracts.check_pred(cond_fun(tree.unflatten(list(xs))))]
    flat_body = _flat_fn(body_fun, tree, out_trees, spread=False)
    # the condition is abstract: if no carry is traced, a closed-over value made it so
    outs = _While(flat_cond, flat_body).bind(leaves, closure=[first])
    return tree.unflatten(list(outs))
