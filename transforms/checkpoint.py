"""Rematerialisation: `checkpoint` (alias `remat`), its policies, `checkpoint_sequential`,
and `saved_residuals` to see what a VJP keeps alive.

Under reverse mode a checkpointed function is recorded on a sub-tape of its own. Once it
has run, the policy decides, record by record, which outputs may stay in memory; every
other residual is dropped. The backward pass replays the sub-tape from the checkpoint's
inputs (only the records whose values are needed and were not kept), restores the
residuals and runs the sub-tape's backward pass. Because the replay re-applies recorded
primitives instead of re-running Python, it sees exactly the values of the forward pass,
random draws included. Forward mode ignores checkpoints.
"""
from __future__ import annotations

import copy
import functools
import math
from typing import Any, Callable, Iterator, NamedTuple, Sequence

import numpy as np

import funcgrad.numpy as fnp
from funcgrad import tree_util
from funcgrad.array import Array, new_array
from funcgrad.core import Primitive, TraceCall, is_inexact, new_trace
from funcgrad.primitives import sampling
from funcgrad.primitives.linalg import parse_subscripts
from funcgrad.primitives.batching import passthrough
from . import argspec
from .grad import _as_array
from .tape import RevTrace, RevTracer, Record, Tape, backward_pass
from .tape_text import short_dtype
from . import vmap_calls

__all__ = ["checkpoint", "remat", "checkpoint_policies", "checkpoint_name",
           "checkpoint_sequential", "saved_residuals", "print_saved_residuals", "Residual",
           "ResidualReport", "Policy", "Aval"]


# ---------------------------------------------------------------------------------------
# Policies: which recorded values may be kept for the backward pass
# ---------------------------------------------------------------------------------------

name_p = Primitive("name", lambda x, name: x, params=("name",), doc=(
    "Identity that attaches a name to a value, for checkpoint policies."),
    sample=sampling.custom(lambda rng, draw: [sampling.Case(
        lambda x: name_p(x, name="sampled"), (sampling.values(rng, sampling.draw_shape(draw)),),
        "named")]))
name_p.defvjp(lambda g: g)
name_p.defjvp(lambda t: t)
passthrough(name_p)


def checkpoint_name(x: Any, name: str) -> Any:
    """``x``, tagged with ``name`` so that `save_only_these_names` /
    `save_anything_except_these_names` policies can refer to it."""
    return name_p(x, name=name)


class Aval(NamedTuple):
    """What a policy sees of an input: its shape and dtype (JAX hands policies abstract
    values with the same attributes)."""
    shape: tuple
    dtype: np.dtype

    @property
    def ndim(self) -> int:
        return len(self.shape)


class Policy:
    """A rule deciding which values computed inside a checkpoint may be kept for the
    backward pass. Called as JAX calls policies: ``decide(prim, *avals, **params) -> bool``
    for each primitive application (``prim`` a funcgrad `Primitive`, compare
    ``prim.name``; ``avals`` the inputs' `Aval`s; ``params`` the static parameters);
    ``True`` keeps its outputs.

    ``excluded_names``: values named so (by `checkpoint_name`) are never saved, not even as
    the output of the record that computed them before they were named."""

    def __init__(self, decide: Callable[..., bool], description: str,
                 excluded_names: frozenset = frozenset()):
        self.decide = decide
        self.description = description
        self.excluded_names = excluded_names

    def __call__(self, prim: Primitive, *avals: Any, **params: Any) -> bool:
        return self.decide(prim, *avals, **params)

    def saves(self, record: Record) -> bool:
        """The decision for one record of a checkpoint's sub-tape (which keeps its input
        avals, since the sub-tape is replayed)."""
        avals = [Aval(tuple(a[0]), a[1]) for a in record.in_avals]  # a layout may follow
        return bool(self.decide(record.prim, *avals, **record.params))

    def __repr__(self) -> str:
        return self.description


def _batch_dims(prim: Primitive, avals: Sequence[Aval], params: dict) -> bool | None:
    """Whether a product has batch dimensions as JAX's dot_general counts them (axes that
    both operands have and the output keeps, paired), or None if ``prim`` is no product.
    JAX's ``jnp.matmul`` squeezes batch axes of size 1 away, its ``einsum`` squeezes an
    axis of size 1 that broadcasts against a longer one; the rules below follow both."""
    name = prim.name
    if name in ("addmm", "matmul_tn"):
        return False  # products of matrices
    if name == "matmul":
        x, y = avals[0].shape, avals[1].shape
        return any(a == b != 1 for a, b in zip(reversed(x[:-2]), reversed(y[:-2])))
    if name == "einsum" and len(avals) > 1:  # one operand: a transpose, trace or sum
        ins, out = parse_subscripts(params["subscripts"])
        for index in set(out):
            sizes = [a.shape[sub.index(index)] for sub, a in zip(ins, avals) if index in sub]
            if len(sizes) > 1 and sizes.count(max(sizes)) > 1:
                return True
        return False
    return None


def _saves_dots(prim: Primitive, *avals: Aval, **params: Any) -> bool:
    return prim.name == "conv_general_dilated" or _batch_dims(prim, avals, params) is not None


def _saves_dots_with_no_batch_dims(prim: Primitive, *avals: Aval, **params: Any) -> bool:
    return _batch_dims(prim, avals, params) is False


def _names_test(keep: Callable[[str], bool]) -> Callable[..., bool]:
    """A policy deciding on named values only (``keep(name)``); nothing else is saved."""
    return lambda prim, *_, **params: prim is name_p and keep(params["name"])


def _save_only_these_names(*names: str) -> Policy:
    wanted = frozenset(names)
    return Policy(_names_test(lambda n: n in wanted), f"save_only_these_names{tuple(names)}")


def _save_any_names_but_these(*names: str) -> Policy:
    unwanted = frozenset(names)
    return Policy(_names_test(lambda n: n not in unwanted),
                  f"save_any_names_but_these{tuple(names)}")


def _save_anything_except_these_names(*names: str) -> Policy:
    unwanted = frozenset(names)
    return Policy(lambda prim, *_, **params: not (prim is name_p
                                                   and params["name"] in unwanted),
                  f"save_anything_except_these_names{tuple(names)}", unwanted)


def _offload_dot_with_no_batch_dims(offload_src: str, offload_dst: str) -> Policy:
    return Policy(_saves_dots_with_no_batch_dims,
                  f"offload_dot_with_no_batch_dims({offload_src!r}, {offload_dst!r})")


def _save_and_offload_only_these_names(*, names_which_can_be_saved: Sequence[str],
                                       names_which_can_be_offloaded: Sequence[str],
                                       offload_src: str, offload_dst: str) -> Policy:
    saved, offloaded = set(names_which_can_be_saved), set(names_which_can_be_offloaded)
    if both := saved & offloaded:
        raise ValueError("The names should be exclusive and should not intersect in "
                         "`names_which_can_be_saved` and `names_which_can_be_offloaded`. Got "
                         f"names_which_can_be_saved={saved}, names_which_can_be_offloaded="
                         f"{offloaded} and the intersection={both}")
    kept = frozenset(saved | offloaded)
    return Policy(_names_test(lambda n: n in kept),
                  f"save_and_offload_only_these_names(saved={sorted(saved)}, "
                  f"offloaded={sorted(offloaded)}, {offload_src!r} -> {offload_dst!r})")


def _save_from_both_policies(policy_1: Callable[..., bool],
                             policy_2: Callable[..., bool]) -> Policy:
    def either(prim: Primitive, *avals: Any, **params: Any) -> bool:
        out1, out2 = policy_1(prim, *avals, **params), policy_2(prim, *avals, **params)
        if not (isinstance(out1, bool) and isinstance(out2, bool)):
            raise ValueError("The return value of the policies should be a boolean. Got: "
                             f"{out1} and {out2}. Please write a custom policy function "
                             "directly, rather than using this helper function.")
        return out1 or out2

    def saves_name(n: str) -> bool:
        return either(name_p, Aval((), np.dtype(float)), name=n)
    excluded = frozenset(n for p in (policy_1, policy_2)
                         for n in getattr(p, "excluded_names", ()) if not saves_name(n))
    return Policy(either, f"save_from_both_policies({policy_1!r}, {policy_2!r})", excluded)


class checkpoint_policies:
    """The built-in policies, with JAX's names and decisions. "Dots" are funcgrad's
    products (matmul, addmm, einsum of two or more operands; conv_general_dilated for
    `dots_saveable` only, as in JAX); "no batch dims" is JAX's dot_general notion.

    Offloading is not implemented: the ``offload`` policies keep the values they would
    move to host memory where they are (saving them, as `dots_with_no_batch_dims_saveable`
    and `save_only_these_names` do), so they give the same recomputation savings but no
    device-memory savings."""

    everything_saveable = Policy(lambda *_, **__: True, "everything_saveable")
    nothing_saveable = Policy(lambda *_, **__: False, "nothing_saveable")
    dots_saveable = Policy(_saves_dots, "dots_saveable")
    checkpoint_dots = dots_saveable
    dots_with_no_batch_dims_saveable = Policy(_saves_dots_with_no_batch_dims,
                                              "dots_with_no_batch_dims_saveable")
    checkpoint_dots_with_no_batch_dims = dots_with_no_batch_dims_saveable
    offload_dot_with_no_batch_dims = staticmethod(_offload_dot_with_no_batch_dims)
    save_only_these_names = staticmethod(_save_only_these_names)
    save_any_names_but_these = staticmethod(_save_any_names_but_these)
    save_anything_except_these_names = staticmethod(_save_anything_except_these_names)
    save_and_offload_only_these_names = staticmethod(_save_and_offload_only_these_names)
    save_from_both_policies = staticmethod(_save_from_both_policies)


def _as_policy(policy: Any) -> Policy:
    if policy is None:
        return checkpoint_policies.nothing_saveable
    if isinstance(policy, Policy):
        return policy
    if callable(policy):
        return Policy(policy, getattr(policy, "__name__", repr(policy)))
    raise TypeError("checkpoint policy must be callable as policy(prim, *avals, **params) "
                    f"-> bool, got {policy!r}")


# ---------------------------------------------------------------------------------------
# The checkpoint call
# ---------------------------------------------------------------------------------------

def _impl(*raw: Any, call: "_CheckpointCall") -> tuple:
    args = [new_array(r) for r in raw]
    if len(args) == call.n_args:
        outs = call.fun(*args)
    else:  # closed-over values were lifted into inputs: the function would read its own
        outs = call.sub.replay([a for a, v in zip(args, call.in_vars) if v >= 0])
    return tuple(o._value if isinstance(o, Array) else o for o in outs)


checkpoint_call = Primitive("checkpoint", _impl, None, ("call",), multiple_results=True,
                            doc="A checkpointed function (sub-tape recomputed on backward).")
checkpoint_call.defvjp_all(lambda g, xs, call: call.vjp(xs, g))
checkpoint_call.defbatch(vmap_calls.call_rule)


def _sample_checkpoint(rng: Any, draw: Callable) -> list:
    """Registry test cases: a checkpointed function under each kind of policy."""

    def body(x: Any, y: Any) -> Any:
        return fnp.sin(checkpoint_name(x * y, "xy")) * fnp.exp(y)
    shape = sampling.draw_shape(draw)
    args = (sampling.values(rng, shape), sampling.values(rng, shape))
    return [sampling.Case(checkpoint(body, policy=p), args, repr(p)) for p in (
        None, checkpoint_policies.everything_saveable,
        checkpoint_policies.save_only_these_names("xy"))]


checkpoint_call.sample = sampling.custom(_sample_checkpoint)


class _ClosureLiftingTrace(RevTrace):
    """A checkpoint's sub-trace. A value of the enclosing reverse trace that the function
    reads from its closure becomes an input of the sub-tape where an operation first reads
    it (closure conversion, as JAX's checkpoint does): its derivative flows through the
    checkpoint's VJP, and the sub-tape, replayed in the enclosing backward pass after that
    trace has ended, holds no tracer of it. In nested checkpoints a value of a trace further
    out is lifted through each one between."""

    def __init__(self, outer: RevTrace, **options: Any):
        super().__init__("checkpoint", **options)
        self.outer = outer
        self.lifts_from = {id(outer)} | getattr(outer, "lifts_from", set())
        self.lifted: dict[int, tuple[RevTracer, RevTracer]] = {}  # id: (outer, inner)

    def process(self, prim: Primitive, args: Sequence, params: dict) -> Any:
        lifts_from = self.lifts_from
        if any(type(a) is RevTracer and id(a._trace) in lifts_from for a in args):
            args = [self._lifted(a) if type(a) is RevTracer and id(a._trace) in lifts_from
                    else a for a in args]
        return super().process(prim, args, params)

    def _lifted(self, x: RevTracer) -> RevTracer:
        if x._trace is not self.outer:  # a value of a trace further out: the outer lifts it
            x = self.outer._lifted(x)
        got = self.lifted.get(id(x))
        if got is None:
            got = self.lifted[id(x)] = (x, self.new_var(x._primal, x._diff))
            self.kept_vars.add(got[1]._var)
        return got[1]


class _CheckpointCall(TraceCall):
    def __init__(self, fun: Callable, policy: Policy, name: str):
        super().__init__(fun, name)
        self.policy = policy
        self.sub: Tape | None = None
        self.in_vars: list[int] = []
        self.n_args = 0  # the arguments, before the lifted closed-over values

    def __repr__(self) -> str:
        return f"{self.name}, policy={self.policy!r}"

    def process_jvp(self, trace: Any, leaves: Sequence) -> list:
        return self.fun(*leaves)  # forward mode stores nothing: nothing to rematerialise

    def held_values(self) -> list:
        return [] if self.sub is None else self.sub.held_values()

    def with_held_values(self, values: Iterator, sub: Any) -> tuple[TraceCall, Any]:
        if self.sub is None:
            return self, sub
        new = copy.copy(self)
        new.sub = self.sub.with_held_values(values)
        return new, new.sub

    def process_batch(self, trace: Any, leaves: Sequence) -> list:
        """A checkpoint of the batched function (an outer grad still recomputes)."""
        return vmap_calls.batch_construct(
            lambda fun: _CheckpointCall(fun, self.policy, self.name), self.fun, trace, leaves)

    def process_rev(self, trace: RevTrace, leaves: Sequence) -> list:
        sub, sub_in, outs, out_vars = self._trace_sub(trace, leaves)
        # the closed-over values read inside become inputs after the arguments
        self.n_args = len(leaves)
        leaves = [*leaves, *[outer for outer, _ in sub.lifted.values()]]
        sub_in += [inner for _, inner in sub.lifted.values()]
        primals, in_vars, mask = trace.lower(leaves)
        primals = [p if isinstance(p, Array) else fnp.asarray(p) for p in primals]
        self.in_vars = [sub.var_of(x) for x in sub_in]
        _keep_only_residuals(sub.records, self.policy, self.in_vars)
        self.sub = Tape(sub.records, sub.var_avals, [v for v in self.in_vars if v >= 0],
                        out_vars, [None if v >= 0 else o for v, o in zip(out_vars, outs)],
                        name=self.name)
        outs = [o if isinstance(o, Array) else fnp.asarray(o) for o in outs]
        result = trace.record(checkpoint_call, {"call": self}, primals, in_vars, mask,
                              tuple(outs))
        trace.records[-1].sub = self.sub
        return list(result)

    def _trace_sub(self, trace: RevTrace, leaves: Sequence) -> tuple:
        """The function run on its own sub-trace: (the trace, its input tracers, the
        outputs' primals, their variables)."""
        sub = _ClosureLiftingTrace(trace, sources=trace.sources, policy=self.policy.saves)
        primals = [p if isinstance(p, Array) else fnp.asarray(p)
                   for p in trace.lower(leaves)[0]]
        with new_trace(sub):
            sub_in = [sub.new_var(p) if is_inexact(p.dtype) else p for p in primals]
            sub.kept_vars.update(t._var for t in sub_in if isinstance(t, RevTracer))
            outs = self.fun(*sub_in)
            out_vars = [sub.var_of(o) for o in outs]
            outs = [o._primal if v >= 0 else o for o, v in zip(outs, out_vars)]
        return sub, sub_in, outs, out_vars

    def vjp(self, xs: Sequence, g: Sequence) -> list:
        """Replay the sub-tape from the inputs, then run its backward pass."""
        tape = self.sub
        env: list = [None] * len(tape.var_avals)
        for v, x in zip(self.in_vars, xs):
            if v >= 0:
                env[v] = x
        records = _replayed_records(tape, env)
        env = None  # nothing but the residuals may outlive the replay
        seeds = [(v, gi) for v, gi in zip(tape.out_vars, g) if v >= 0]
        if isinstance(g, list):
            g.clear()  # the backward pass below frees each cotangent once it is used
        cts = backward_pass(records, tape.var_avals, seeds, consume=True)
        return [cts[v] if v >= 0 else None for v in self.in_vars]


def _keep_only_residuals(records: list[Record], policy: Policy, in_vars: list) -> None:
    """Trim a checkpoint's sub-tape to what its replay needs: no value the policy excludes
    by name, no input (the replay takes them from the call's own record), no output that
    the policy could save but no rule reads."""
    _forget_excluded(records, policy.excluded_names, set(in_vars))
    inputs = {v for v in in_vars if v >= 0}
    for rec in records:
        rec.saved = tuple(None if v in inputs else s for s, v in zip(rec.saved, rec.in_vars))
    needed, _ = _needed_vars(records)
    for rec in records:
        if rec.out is not None and not any(v in needed for v in rec.out_vars):
            rec.out = None


def _replayed_records(tape: Tape, env: list) -> list:
    """The sub-tape's records with their residuals, recomputing the values it did not keep
    from the inputs in ``env`` (which the replay fills, and empties of every value as soon
    as nothing later reads it)."""
    needed, residual_vars = _needed_vars(tape.records)
    last_use = {v: k for k, rec in enumerate(tape.records) for v in rec.in_vars}
    records = []
    for k, rec in enumerate(tape.records):
        outs = rec.out
        if outs is None and any(v in needed for v in rec.out_vars):
            args = [env[v] if v >= 0 else rec.saved[i] for i, v in enumerate(rec.in_vars)]
            outs = rec.prim(*args, **rec.params)
        if outs is not None:
            for v, o in zip(rec.out_vars, outs if rec.prim.multiple_results else (outs,)):
                if v >= 0 and v in needed:
                    env[v] = o
        records.append(_with_residuals(rec, env, outs))
        for v in rec.in_vars:  # free replayed values as soon as nothing reads them
            if v >= 0 and last_use[v] == k and v not in residual_vars:
                env[v] = None
    return records


def _reads(rec: Record) -> tuple[tuple, bool]:
    mask = sum(1 << i for i, v in enumerate(rec.in_vars) if v >= 0)
    return rec.prim.needs(mask, len(rec.in_vars))


def _forget_excluded(records: list[Record], names: frozenset, inputs: set) -> None:
    """Drop every stored copy of a value named in ``names``: the named output and the value
    it names (the output of the record that computed it), unless it is an input."""
    if not names:
        return
    gone = set()
    for rec in records:
        if rec.prim is name_p and rec.params["name"] in names:
            gone.update(v for v in rec.in_vars + rec.out_vars if v >= 0 and v not in inputs)
    for rec in records:
        if any(v in gone for v in rec.out_vars):
            rec.out = None
        rec.saved = tuple(None if v in gone else s for s, v in zip(rec.saved, rec.in_vars))


def _needed_vars(records: list[Record]) -> tuple[set, set]:
    """(variables the replay must produce, those among them that rules read as residuals):
    the residuals, and transitively the inputs of the records recomputed to produce them."""
    residual: set = set()
    for rec in records:
        ins, reads_out = _reads(rec)
        residual.update(rec.in_vars[i] for i in ins if rec.in_vars[i] >= 0)
        if reads_out:
            residual.update(v for v in rec.out_vars if v >= 0)
    needed = set(residual)
    for rec in reversed(records):
        if rec.out is None and any(v in needed for v in rec.out_vars):
            needed.update(v for v in rec.in_vars if v >= 0)
    return needed, residual


def _with_residuals(rec: Record, env: list, outs: Any) -> Record:
    """A copy of ``rec`` with its residuals filled in from the replayed values."""
    ins, reads_out = _reads(rec)
    new = rec.copy()
    new.saved = tuple(env[v] if (v >= 0 and i in ins) else (s if v < 0 else None)
                      for i, (s, v) in enumerate(zip(rec.saved, rec.in_vars)))
    keeps_out = reads_out or (rec.prim.multiple_results and -1 in rec.out_vars)
    new.out = outs if keeps_out else None
    return new


def checkpoint(fun: Callable | None = None, *, policy: Any = None,
               static_argnums: int | Sequence[int] = (), prevent_cse: bool = True) -> Callable:
    """Make ``fun`` recompute its intermediates in the backward pass instead of storing them.

    ``policy(prim, *avals, **params) -> bool`` says which intermediates may be stored
    anyway (JAX's signature; see `checkpoint_policies`). ``static_argnums`` are passed through untraced.
    ``prevent_cse`` exists for JAX compatibility (funcgrad has no compiler to merge the
    recomputation away). Usable as ``@checkpoint`` or ``@checkpoint(policy=...)``."""
    if fun is None:
        return functools.partial(checkpoint, policy=policy, static_argnums=static_argnums,
                                 prevent_cse=prevent_cse)
    policy = _as_policy(policy)
    statics = (static_argnums,) if isinstance(static_argnums, int) else tuple(static_argnums)
    name = getattr(fun, "__name__", "fun")

    @functools.wraps(fun)
    def checkpointed(*args: Any, **kwargs: Any) -> Any:
        argspec.validate_call_argnums(statics, args, "jax.checkpoint` / `jax.remat",
                                      "static_argnums")
        statics_here = {i % len(args) for i in statics}
        dyn_idx = [i for i in range(len(args)) if i not in statics_here]
        leaves, in_tree = tree_util.tree_flatten(tuple(args[i] for i in dyn_idx))
        # flat_fun (kept by the call, which a tape record keeps) holds neither the call nor
        # the traced arguments: either would make a reference cycle through the tape
        out_tree: list = []
        statics_only = [None if i in dyn_idx else a for i, a in enumerate(args)]

        def flat_fun(*flat: Any) -> list:
            full = list(statics_only)
            for i, a in zip(dyn_idx, in_tree.unflatten(flat)):
                full[i] = a
            out_leaves, tree = tree_util.tree_flatten(fun(*full, **kwargs))
            out_tree.append(tree)
            return out_leaves
        out = _CheckpointCall(flat_fun, policy, name).bind(leaves)
        return out_tree[-1].unflatten(out)

    checkpointed.policy = policy
    return checkpointed


remat = checkpoint


def checkpoint_sequential(functions: Sequence[Callable], segments: int | None, input: Any,
                          policy: Any = None) -> Any:
    """Apply ``functions`` in order to ``input``, checkpointing every ``ceil(n/segments)``
    of them (``segments=None``: about sqrt(n) segments, the memory-optimal split)."""
    n = len(functions)
    if n == 0:
        return input
    segments = max(1, round(math.sqrt(n))) if segments is None else int(segments)
    size = math.ceil(n / segments)

    x = input
    for start in range(0, n, size):
        x = checkpoint(compose(functions[start:start + size]), policy=policy)(x)
    return x


def compose(functions: Sequence[Callable]) -> Callable:
    """The function applying ``functions`` in order (one segment of a sequence)."""
    def segment(x: Any) -> Any:
        for f in functions:
            x = f(x)
        return x
    return segment


# ---------------------------------------------------------------------------------------
# What a VJP keeps alive
# ---------------------------------------------------------------------------------------

class Residual(NamedTuple):
    shape: tuple
    dtype: np.dtype
    nbytes: int
    primitive: str  # what produced it: a primitive name, "argument" or "constant"
    source: str     # file:line of the user code that produced it


class ResidualReport(list):
    """What `saved_residuals` returns: a list of `Residual`s that prints as a table with a
    total (``str``) and shows as an HTML table in Jupyter."""

    @property
    def nbytes(self) -> int:
        return sum(r.nbytes for r in self)

    def table(self) -> str:
        lines = [f"{'shape':<16} {'dtype':<6} {'bytes':>12}  {'produced by':<20} source"]
        lines += [f"{str(r.shape):<16} {short_dtype(r.dtype):<6} {r.nbytes:>12,}  "
                  f"{r.primitive:<20} {r.source}" for r in self]
        lines.append(f"{len(self)} residuals, {self.nbytes:,} bytes")
        return "\n".join(lines)

    def __str__(self) -> str:
        return self.table()


def _collect(tape_records: list[Record], producers: dict, seen: set, out: list) -> None:
    for rec in tape_records:
        values = [(s, v) for s, v in zip(rec.saved, rec.in_vars) if s is not None]
        if rec.out is not None and rec.prim is not checkpoint_call:
            outs = rec.out if rec.prim.multiple_results else (rec.out,)
            values += [(o, v) for o, v in zip(outs, rec.out_vars)]
        for value, var in values:
            if not hasattr(value, "shape") or id(value) in seen:
                continue
            seen.add(id(value))
            prim, source = producers.get(var, ("argument" if var >= 0 else "constant", "?"))
            out.append(Residual(tuple(value.shape), value.dtype,
                                int(np.prod(value.shape)) * value.dtype.itemsize, prim, source))
        if rec.sub is not None:
            sub_producers = {v: (r.prim.name, r.source or "?")
                             for r in rec.sub.records for v in r.out_vars}
            _collect(rec.sub.records, sub_producers, seen, out)


def saved_residuals(fun: Callable, *args: Any) -> ResidualReport:
    """What ``vjp(fun, *args)`` keeps alive for its backward pass: one `Residual` per
    distinct array (checkpoint sub-tapes included), with the primitive and the source
    line that produced it. Constants captured from outside are listed as 'constant'."""
    leaves, in_tree = tree_util.tree_flatten(args)
    trace = RevTrace("saved_residuals", sources=True)
    with new_trace(trace):
        tracers = [trace.new_var(_as_array(x)) for x in leaves]
        fun(*in_tree.unflatten(tracers))
    producers = {v: (r.prim.name, r.source or "?") for r in trace.records for v in r.out_vars}
    out = ResidualReport()
    _collect(trace.records, producers, set(), out)
    return out


def print_saved_residuals(fun: Callable, *args: Any) -> None:
    """Print `saved_residuals` as a table with a total."""
    print(saved_residuals(fun, *args).table())
