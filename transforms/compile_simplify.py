"""The simplification passes of `compile` (the tape's records as steps, before any
source is written): no-ops dropped, transposes undoing transposes dropped, common
subexpressions merged, dead code dropped, and a matrix product's column-major layout
undone by a transpose computed row-major directly (`fold_transposed_products`)."""
from __future__ import annotations

from collections import Counter
from typing import Any, Sequence

from .tape import Record, Tape

__all__ = ["Step", "simplify", "live_steps", "fold_transposed_products",
           "programs_of", "defined_vars"]


def _noop(rec: Record, in_avals: list, out_aval: tuple) -> bool:
    """Whether a one-output record returns its first input unchanged (given the avals)."""
    name = rec.prim.name
    if name in ("stop_gradient", "name"):
        return True
    if not in_avals or in_avals[0] is None or in_avals[0] != out_aval:
        return False
    # (not device_put: an aval says nothing of the device, and a transfer is no no-op)
    if name in ("reshape", "broadcast_to", "convert_element_type"):
        return True
    if name == "transpose":
        return tuple(rec.params["axes"]) == tuple(range(len(out_aval[0])))
    if name in ("reduce_sum", "reduce_max", "reduce_min", "reduce_prod"):
        return rec.params["axis"] == ()
    return False


def _undone_transpose(rec: Record, x: tuple, transposed: dict) -> tuple | None:
    """The reference a transpose of a transpose gives back where the two cancel (as a
    backward pass makes: the VJP of ``w.T``'s use transposes its cotangent, and matmul's
    VJP transposes ``w.T`` again), else None."""
    inner = transposed.get(x[1]) if x[0] == "v" else None
    if inner is None:
        return None
    axes = tuple(rec.params["axes"])
    return inner[0] if tuple(inner[1][a] for a in axes) == tuple(range(len(axes))) else None


def _param_key(params: dict) -> Any:
    try:
        key = tuple(sorted(params.items()))
        hash(key)
        return key
    except TypeError:
        return None


def _const_key(x: Any) -> tuple:
    if type(x) in (bool, int, float, complex):
        return ("s", type(x), x)
    return ("c", id(x))


class Step:
    """A kept record with its inputs resolved: ("v", var) or ("c", constant); ``free``:
    the variables of this program its sub-programs read (resolved too)."""

    __slots__ = ("rec", "ins", "outs", "free", "alias")

    def __init__(self, rec: Record, ins: list, outs: list, free: set, alias: dict):
        self.rec = rec
        self.ins = ins
        self.outs = outs
        self.free = free
        self.alias = alias  # the renamings in force here (for the sub-programs)


def simplify(records: Sequence[Record], var_avals: list, alias: dict) -> list[Step]:
    """The records as steps, after no-op and common-subexpression removal; ``alias`` maps
    every dropped output to the reference that replaces it."""
    seen: dict = {}
    transposed: dict = {}  # var -> (input ref, axes) of the transposes kept
    steps = []
    for rec in records:
        ins = [alias.get(v, ("v", v)) if v >= 0 else ("c", s)
               for v, s in zip(rec.in_vars, rec.saved)]
        outs = list(rec.out_vars)
        if _passes_through(rec, ins, outs, var_avals, alias, transposed):
            continue
        key = _cse_key(rec, ins)
        earlier = None if key is None else seen.get(key)
        if earlier is not None:  # the same call on the same inputs: its outputs serve
            for v, e in zip(outs, earlier.outs):
                alias[v] = ("v", e)
            continue
        free = {alias.get(v, ("v", v))[1] for v in _free_vars(rec)}
        step = Step(rec, ins, outs, {v for v in free if isinstance(v, int)}, dict(alias))
        if key is not None:
            seen[key] = step
        steps.append(step)
    return steps


def _passes_through(rec: Record, ins: list, outs: list, var_avals: list, alias: dict,
                    transposed: dict) -> bool:
    """Whether ``rec`` is dropped for an input that stands for its output (a no-op, or a
    transpose undoing a kept one), which ``alias`` then records; a kept transpose is
    noted in ``transposed``."""
    if rec.prim.multiple_results or rec.sub is not None or not ins or ins[0][0] != "v":
        return False
    avals = [var_avals[r[1]] if r[0] == "v" else None for r in ins]
    if _noop(rec, avals, var_avals[outs[0]]):
        alias[outs[0]] = ins[0]
        return True
    if rec.prim.name == "transpose":
        undone = _undone_transpose(rec, ins[0], transposed)
        if undone is not None:
            alias[outs[0]] = undone
            return True
        transposed[outs[0]] = (ins[0], tuple(rec.params["axes"]))
    return False


def _cse_key(rec: Record, ins: list) -> tuple | None:
    """What identifies the call for common-subexpression removal (None: never merged, an
    effect or a construct with sub-programs)."""
    if rec.prim.effectful or programs_of(rec):
        return None
    pkey = _param_key(rec.params)
    if pkey is None:
        return None
    return (rec.prim, pkey, rec.phase,
            tuple(r if r[0] == "v" else _const_key(r[1]) for r in ins))


def live_steps(steps: list[Step], outputs: list) -> list[Step]:
    """The steps the outputs depend on (and every effectful one), in order."""
    needed = {r[1] for r in outputs if r[0] == "v"}
    kept = []
    for step in reversed(steps):
        if step.rec.prim.effectful or any(v in needed for v in step.outs):
            kept.append(step)
            needed.update(r[1] for r in step.ins if r[0] == "v")
            needed.update(step.free)
    kept.reverse()
    return kept


def fold_transposed_products(steps: list[Step], outputs: list) -> list[Step]:
    """The steps, each 2-D ``transpose(matmul_tn(a, b, layout="F"))`` whose product
    nothing else reads made ``matmul_tn(b, a)``: the same numpy call (``matmul(b^T, a)``,
    row-major) without the transposes there and back. Matmul's VJP asks for the
    column-major product where the layer read ``w.T``; the transpose's VJP then hands ``w``
    its row-major gradient (a linear layer's weight, in every backward pass)."""
    uses = Counter(r[1] for s in steps for r in s.ins if r[0] == "v")
    uses.update(v for s in steps for v in s.free)
    uses.update(r[1] for r in outputs if r[0] == "v")
    products = {s.outs[0]: s for s in steps if s.rec.prim.name == "matmul_tn"
                and (s.rec.params or {}).get("layout") == "F" and len(s.ins) == 2}
    folded = set()  # the ids of the product steps folded into their transposes
    kept = []
    for s in steps:
        product = None
        if (s.rec.prim.name == "transpose" and s.ins and s.ins[0][0] == "v"
                and tuple(s.rec.params["axes"]) == (1, 0) and uses[s.ins[0][1]] == 1):
            product = products.get(s.ins[0][1])
        if product is None:
            kept.append(s)
            continue
        rec = product.rec.copy()
        rec.params = dict(rec.params, layout="C")
        rec.in_vars, rec.saved = rec.in_vars[::-1], rec.saved[::-1]
        rec.in_avals = rec.in_avals[::-1] if rec.in_avals else rec.in_avals
        rec.out_vars = s.rec.out_vars
        kept.append(Step(rec, product.ins[::-1], list(s.outs), product.free, product.alias))
        folded.add(id(product))
    return [s for s in kept if id(s) not in folded]


def programs_of(rec: Record) -> tuple:
    """The sub-programs (Tapes) of a control-flow record: its ``programs`` param."""
    return rec.params.get("programs", ()) if rec.params else ()


def defined_vars(sub: Tape) -> set:
    own = set(sub.in_vars)
    for r in sub.records:
        own.update(r.out_vars)
    return own


def _free_vars(rec: Record) -> set:
    """Variables of the enclosing program that a record's sub-programs read."""
    found: set = set()
    for sub in programs_of(rec):
        own = defined_vars(sub)
        for r in sub.records:
            found.update(v for v in r.in_vars if v >= 0 and v not in own)
            found.update(_free_vars(r) - own)
        found.update(v for v in sub.out_vars if v >= 0 and v not in own)
    return found
