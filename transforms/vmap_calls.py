"""How `vmap` batches the constructs that transforms see whole (`TraceCall`s) and
`funcgrad.lax` control flow.

A construct batches by binding itself again, one level down, with its functions replaced by
their vectorised versions: a checkpoint of the batched function, a jitted program of the
batched function (compiled and cached like any other), a custom_vjp whose fwd and bwd are
vectorised (cotangents of inputs the examples share summed over the examples). So an outer
transform still meets the construct: ``grad(vmap(custom_vjp_f))`` uses the user's bwd,
``grad(vmap(checkpoint(f)))`` recomputes.

Control flow with a batched predicate or index cannot take one branch for all examples:
`cond` and `switch` compute every branch and select per example; `while_loop` runs while
any example's condition holds, each example's carry frozen once its condition fails (JAX's
semantics). A predicate the examples share takes the construct's ordinary path.
"""
from __future__ import annotations

from typing import Any, Callable, Sequence

from funcgrad import tree_util
from funcgrad.primitives.batching import moveaxis
from funcgrad.primitives.binary import equal
from funcgrad.primitives.reductions import reduce_any, reduce_sum
from funcgrad.primitives.select import where
from funcgrad.primitives.shape import reshape
from .vmap import BatchTrace, BatchTracer, lanes_any, vmap, vmap_within

__all__ = ["call_rule", "batch_construct", "batched_select", "batched_while",
           "batch_while_call", "batch_switch_call", "batch_custom_vjp", "batch_custom_jvp",
           "batch_jit_call"]


def _front(trace: BatchTrace, leaves: Sequence) -> tuple[list, tuple]:
    """The values below ``trace`` of a construct's arguments, batch axes moved to the
    front, and their axes (0, or None for values the examples share)."""
    values, dims = trace.lower(leaves)
    return ([v if d is None else moveaxis(v, d, 0) for v, d in zip(values, dims)],
            tuple(None if d is None else 0 for d in dims))


def _rewrap(trace: BatchTrace, outs: Sequence) -> list:
    return [trace.new(o, 0) for o in outs]


def _vectorised(fun: Callable, trace: BatchTrace, axes: Any) -> Callable:
    """``fun`` (flat in, list out) over the examples of ``trace``, outputs batched at 0
    (reading ``trace``'s values from its closure as the examples' own)."""
    return vmap_within(trace, lambda *xs: list(fun(*xs)), axes)


def call_rule(args: Sequence, dims: Sequence, call: Any, **params: Any) -> tuple:
    """The batching rule of the primitives that stand for a construct on a tape (a
    replayed custom, checkpointed, jitted or staged call): the construct bound again on
    batch tracers, which batches it as its own `process_batch` says."""
    outs = vmap(lambda *xs: list(call.bind(list(xs))), in_axes=tuple(dims), out_axes=0)(*args)
    return tuple(outs), (0,) * len(outs)


def batch_construct(make: Callable, fun: Callable, trace: BatchTrace, leaves: Sequence
                    ) -> list:
    """Bind ``make(vectorised fun)`` (a construct of the same kind) on the values."""
    values, axes = _front(trace, leaves)
    return _rewrap(trace, make(_vectorised(fun, trace, axes)).bind(values))


# ---------------------------------------------------------------------------------------
# Control flow with batched predicates
# ---------------------------------------------------------------------------------------

def batched_select(index: Any, branches: Sequence[Callable], operands: tuple) -> Any:
    """``branches[index](*operands)`` per example, for a batched (clamped) index: every
    branch runs, and each example takes its own branch's outputs."""
    outs = [b(*operands) for b in branches]
    trees = [tree_util.tree_structure(o) for o in outs]
    if any(t != trees[0] for t in trees):
        raise TypeError("branch outputs must have the same type structure, got "
                        f"{' and '.join(str(t) for t in trees)}.")
    leaves = [tree_util.tree_leaves(o) for o in outs]
    chosen = leaves[-1]
    for k in range(len(branches) - 2, -1, -1):
        hit = equal(index, k) if k > 0 else index <= 0
        chosen = [where(hit, a, b) for a, b in zip(leaves[k], chosen)]
    return trees[0].unflatten(chosen)


def batched_while(cond_fun: Callable, body_fun: Callable, val: Any, pred: BatchTracer) -> Any:
    """``while_loop`` whose condition differs per example: steps run while any example's
    condition holds, and an example whose condition fails keeps its carry."""
    while _any(pred):
        new = body_fun(val)
        val = tree_util.tree_map(lambda n, o: where(pred, n, o), new, val)
        pred = cond_fun(val)
    return val


def _any(pred: Any) -> bool:
    """Whether any example (of every enclosing vmap) has a true ``pred``."""
    while isinstance(pred, BatchTracer):
        pred = lanes_any(pred)
    return bool(pred)


def batch_while_call(make: Callable, cond_fun: Callable, body_fun: Callable,
                     trace: BatchTrace, leaves: Sequence) -> list:
    """A staged while_loop (its condition unknown to Python) over batched carries: every
    carry batched, the condition the any-reduction of the examples', the body keeping
    the carry of examples whose condition fails."""
    values, dims = trace.lower(leaves)
    size = trace.size
    carry = [vmap(lambda x: x, in_axes=d, out_axes=0, axis_size=size)(v)
             for v, d in zip(values, dims)]
    every = (0,) * len(carry)
    conds = vmap_within(trace, lambda *c: cond_fun(*c)[0], every)
    bodies = _vectorised(body_fun, trace, every)

    def cond(*c: Any) -> list:
        return [reduce_any(conds(*c), axis=(0,), keepdims=False)]

    def body(*c: Any) -> list:
        pred = conds(*c)
        return [where(reshape(pred, shape=(size,) + (1,) * (n.ndim - 1)), n, o)
                for n, o in zip(bodies(*c), c)]
    # the transform below this vmap that stages the loop may show only in the condition
    # (a closed-over value): its value with this vmap's batch axis taken off
    below, _ = trace.lower(cond(*carry))
    return _rewrap(trace, make(cond, body).bind(carry, closure=below))


def batch_switch_call(make: Callable, branches: Sequence[Callable], trace: BatchTrace,
                      leaves: Sequence) -> list:
    """A staged switch over batched operands: a switch of the vectorised branches, or,
    when the index itself is batched, every branch vectorised and selected per example."""
    values, axes = _front(trace, leaves)
    index, index_axis = values[0], axes[0]
    op_axes = axes[1:]
    vectorised = [_vectorised(b, trace, op_axes) for b in branches]
    if index_axis is None:
        return _rewrap(trace, make(vectorised).bind(values))
    outs = [v(*values[1:]) for v in vectorised]
    n = len(branches)
    chosen = outs[-1]
    for k in range(n - 2, -1, -1):
        hits = [reshape(equal(index, k) if k > 0 else index <= 0,
                        shape=(trace.size,) + (1,) * (o.ndim - 1)) for o in outs[k]]
        chosen = [where(h, a, b) for h, a, b in zip(hits, outs[k], chosen)]
    return _rewrap(trace, chosen)


# ---------------------------------------------------------------------------------------
# Custom rules and jit
# ---------------------------------------------------------------------------------------

def _sum_shared(cts: Sequence, axes: Sequence) -> list:
    """Cotangents of a vectorised bwd (batched at 0): summed over the examples for inputs
    they share."""
    return [c if c is None or a is not None else reduce_sum(c, axis=(0,), keepdims=False)
            for c, a in zip(cts, axes)]


def batch_custom_vjp(custom_vjp: type, call: Any, trace: BatchTrace, leaves: Sequence
                     ) -> list:
    """A custom_vjp call over batched arguments: a custom_vjp of the vectorised function,
    with vectorised fwd (residuals batched at 0) and bwd."""
    values, axes = _front(trace, leaves)
    shapes = [tuple(v.shape)[a is not None:] for v, a in zip(values, axes)]
    dtypes = [v.dtype for v in values]

    def fwd_flat(*xs: Any) -> tuple:
        outs = call.run_fwd(list(xs))
        return outs, call.residuals

    def bwd_flat(res: Any, g: Any) -> list:
        call.residuals = res  # run_bwd hands the user's bwd the call's residuals
        return call.run_bwd(shapes, dtypes, g)

    batched = custom_vjp(_vectorised(call._flat_fun, trace, axes))
    v_fwd = vmap(fwd_flat, in_axes=axes, out_axes=0, axis_name=trace.axis_name,
                 axis_size=trace.size)
    v_bwd = vmap(bwd_flat, in_axes=(0, 0), out_axes=0, axis_name=trace.axis_name,
                 axis_size=trace.size)
    batched.defvjp(lambda *xs: v_fwd(*xs),
                   lambda res, g: tuple(_sum_shared(v_bwd(res, list(g)), axes)))
    return _rewrap(trace, batched(*values))


def batch_custom_jvp(custom_jvp: type, call: Any, trace: BatchTrace, leaves: Sequence
                     ) -> list:
    """A custom_jvp call over batched arguments: a custom_jvp of the vectorised function
    whose rule is the vectorised rule (tangents batched as their primals are)."""
    values, axes = _front(trace, leaves)

    def rule_flat(primals: list, tangents: list) -> tuple:
        return tuple(call.run_rule(list(primals), list(tangents)))

    batched = custom_jvp(_vectorised(call._flat_fun, trace, axes))
    v_rule = vmap(rule_flat, in_axes=(list(axes), list(axes)), out_axes=0,
                  axis_name=trace.axis_name, axis_size=trace.size)
    batched.defjvp(lambda primals, tangents: v_rule(list(primals), list(tangents)))
    return _rewrap(trace, batched(*values))


def batch_jit_call(call: Any, trace: BatchTrace, leaves: Sequence) -> list:
    """A jitted function over batched arguments: a jitted program of the vectorised
    function, compiled once per batching signature and cached with the function's."""
    values, axes = _front(trace, leaves)
    kind = f"vmap{axes}:{trace.size}:{trace.axis_name!r}"
    program = call._jitted(kind, _vectorised(call.fun, trace, axes))
    return _rewrap(trace, program(*values))
