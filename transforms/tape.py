"""The tape: reverse mode's record of what a function did.

`RevTrace` records one `Record` per primitive call on its tracers: the primitive, which
variables went in and came out, the static params, and only the residuals that the
primitive's VJP rules read (each rule names them). The backward pass walks the records in
reverse and calls the rules, which are funcgrad ops and so are themselves traced by any
outer transform. `make_tape` keeps everything (constants too) so that a `Tape` can be
printed like a jaxpr and re-evaluated on new inputs.
"""
from __future__ import annotations

import sys
import threading
from typing import Any, Callable, Iterable, Sequence

import numpy as np

from funcgrad.array import Array, to_raw
from funcgrad.core import ZERO, Primitive, Trace, Tracer, wrap_raw, new_trace
from funcgrad import tree_util
from funcgrad.primitives.elementwise import real
from funcgrad.primitives.reductions import reduce_sum
from funcgrad.primitives.shape import reshape

__all__ = ["RevTrace", "RevTracer", "Record", "Tape", "make_tape", "backward_pass",
           "fit_cotangent", "one_output_record", "short_dtype"]


_new = object.__new__


class _Phase(threading.local):
    def __init__(self) -> None:
        self.backward_depth = 0


_phase = _Phase()


class RevTracer(Tracer):
    """A value recorded on a tape: its primal and its variable number on that tape."""

    __slots__ = ("_var", "_diff")


class Record:
    """One primitive application on the tape.

    ``in_vars``/``out_vars`` are variable numbers (-1 for a constant input or an output
    that is not traced); ``saved`` holds, per input, the value kept for the backward pass
    (``None`` where no rule reads it) and ``out`` the output if a rule reads it.
    """

    __slots__ = ("prim", "params", "in_vars", "in_avals", "out_vars", "saved", "out",
                 "phase", "source", "sub")

    def __init__(self, prim: Primitive, params: dict, in_vars: tuple, in_avals: tuple,
                 out_vars: tuple, saved: tuple, out: Any, phase: str, source: str | None):
        self.prim = prim
        self.params = params
        self.in_vars = in_vars
        self.in_avals = in_avals
        self.out_vars = out_vars
        self.saved = saved
        self.out = out
        self.phase = phase
        self.source = source
        self.sub = None  # a nested Tape (checkpoint, custom rules) when there is one

    def __repr__(self) -> str:
        return f"Record({self.prim.name}, in={self.in_vars}, out={self.out_vars})"


_NUMBER_DTYPES = {bool: np.dtype(bool), int: np.asarray(0).dtype, float: np.dtype(float),
                  complex: np.dtype(complex)}


def aval_of(x: Any) -> tuple:
    """(shape, dtype) of an array-like; Python scalars get numpy's default dtype."""
    if type(x) is Array:
        raw = x._value  # C attributes: faster than the Array's properties
        return (raw.shape, raw.dtype)
    dtype = _NUMBER_DTYPES.get(type(x))
    if dtype is not None:
        return ((), dtype)
    try:
        return (x.shape, x.dtype)
    except AttributeError:
        return ((), np.asarray(x).dtype)


def _user_source() -> str:
    """file:line of the innermost caller outside funcgrad (for residual reports)."""
    f = sys._getframe(2)
    while f is not None:
        name = f.f_code.co_filename
        if "funcgrad" not in name and "/transforms/" not in name and "/primitives/" not in name:
            return f"{name}:{f.f_lineno}"
        f = f.f_back
    return "?"


class RevTrace(Trace):
    """Reverse-mode trace. ``keep_all`` keeps every constant and non-float value (for
    `make_tape`); otherwise only values that can carry a derivative are traced."""

    mode = "rev"

    def __init__(self, name: str = "vjp", keep_all: bool = False, sources: bool = False,
                 policy: Callable[[Record], bool] | None = None):
        super().__init__()
        self.name = name
        self.keep_all = keep_all
        self.sources = sources
        # A checkpoint's sub-tape: constants are kept (to replay the records), and of the
        # values computed inside only those the policy allows (plus the inputs) are kept.
        self.policy = policy
        self.keep_consts = keep_all or policy is not None
        self.kept_vars: set = set()
        self.records: list[Record] = []
        self.var_avals: list[tuple] = []
        self.plain = not (keep_all or sources or policy is not None)

    def new_var(self, primal: Any) -> RevTracer:
        t = _new(RevTracer)
        t._trace = self
        t._primal = primal
        t._var = len(self.var_avals)
        raw = primal._value if type(primal) is Array else primal  # C attributes: faster
        t.dtype = dtype = raw.dtype
        t.shape = shape = raw.shape
        t.ndim = len(shape)
        t._diff = dtype.kind in "fc"
        self.var_avals.append((shape, dtype))
        return t

    def var_of(self, x: Any) -> int:
        """The variable number of ``x`` on this tape, or -1 if it is not traced here."""
        return x._var if isinstance(x, RevTracer) and x._trace is self else -1

    def lower(self, args: Sequence) -> tuple[list, list, int]:
        """(primals, variable numbers (-1 for constants), bit mask of the inputs that carry
        a derivative) of a call's arguments."""
        primals, in_vars, mask = [], [], 0
        for i, a in enumerate(args):
            if isinstance(a, RevTracer) and a._trace is self:
                primals.append(a._primal)
                in_vars.append(a._var)
                if a._diff:
                    mask |= 1 << i
            else:
                primals.append(a)
                in_vars.append(-1)
        return primals, in_vars, mask

    def process(self, prim: Primitive, args: Sequence, params: dict) -> Any:
        # `lower` and `Primitive.apply`, inlined: this runs once per traced primitive call
        primals = []
        raws = []
        in_vars = []
        mask = 0
        bit = 1
        nested = False
        for a in args:
            if type(a) is RevTracer and a._trace is self:
                p = a._primal
                in_vars.append(a._var)
                if a._diff:
                    mask |= bit
            else:
                p = a
                in_vars.append(-1)
            if type(p) is Array:
                raws.append(p._value)
            elif isinstance(p, Tracer):
                nested = True
            else:
                raws.append(to_raw(p))
            primals.append(p)
            bit <<= 1
        if nested:
            out = prim(*primals, **params)
        elif prim.simple:  # with no lower level to hand the call to, go to the backend
            try:
                out = wrap_raw(prim.impl(*raws, **params) if params else prim.impl(*raws))
            except Exception:
                out = prim.apply(primals, params)  # raises the general path's clear error
        else:
            out = prim.apply(primals, params)
        if not self.keep_all and (mask == 0 or not prim.differentiable):
            return out
        if self.plain and not prim.multiple_results:
            return self._record_plain(prim, params, primals, in_vars, mask, out)
        return self.record(prim, params, primals, in_vars, mask, out)

    def _record_plain(self, prim: Primitive, params: dict, primals: list, in_vars: list,
                      mask: int, out: Any) -> Any:
        """`record` for the common case, written for speed: a one-output primitive on a
        trace that keeps no constants, no policy and no sources (what grad and vjp use)."""
        raw = out._value if type(out) is Array else out  # C attributes: faster
        dtype = raw.dtype
        if dtype.kind in "fc":
            result = _new(RevTracer)
            result._trace = self
            result._primal = out
            result.dtype = dtype
            result.shape = shape = raw.shape
            result.ndim = len(shape)
            var_avals = self.var_avals
            var = result._var = len(var_avals)
            result._diff = True
            var_avals.append((shape, dtype))
        else:
            result, var = out, -1
        self.records.append(one_output_record(prim, params, primals, in_vars, mask, var,
                                               out))
        return result

    def record(self, prim: Primitive, params: dict, primals: list, in_vars: list, mask: int,
               out: Any) -> Any:
        """Append a record of ``prim`` having produced ``out`` and return its tracers.
        Only the residuals the rules read are kept, and input avals only if a rule reads
        them (or constants are kept)."""
        keep_all = self.keep_all
        if prim.multiple_results:
            tracers, out_vars = [], []
            for o in out:
                if keep_all or o.dtype.kind in "fc":
                    t = self.new_var(o)
                    tracers.append(t)
                    out_vars.append(t._var)
                else:
                    tracers.append(o)
                    out_vars.append(-1)
            result: Any = tuple(tracers)
            out_vars = tuple(out_vars)
        elif keep_all or (out._value if type(out) is Array else out).dtype.kind in "fc":
            result = self.new_var(out)
            out_vars = (result._var,)
        else:
            result, out_vars = out, (-1,)
        n = len(primals)
        ins, reads_out = prim.needs(mask, n)
        keep_consts = self.keep_consts
        saved = [None] * n
        for i in (range(n) if keep_consts else ins):
            if i in ins or in_vars[i] < 0:
                p = primals[i]
                saved[i] = np.array(p) if type(p) is np.ndarray else p  # an owned copy
        rec = Record(prim, params, tuple(in_vars),
                     tuple(aval_of(p) for p in primals) if (prim.reads_avals or keep_consts)
                     else None,
                     out_vars, tuple(saved),
                     out if reads_out or (prim.multiple_results and -1 in out_vars) else None,
                     "backward" if _phase.backward_depth else "forward",
                     _user_source() if self.sources else None)
        if self.policy is not None:
            self._apply_policy(rec, out)
        self.records.append(rec)
        return result

    def _apply_policy(self, rec: Record, out: Any) -> None:
        """Keep the outputs of a record the policy allows; drop every residual that is
        neither such an output, nor an input of the sub-tape, nor a constant."""
        kept = self.kept_vars
        if self.policy(rec):
            kept.update(rec.out_vars)
            rec.out = out
        else:
            rec.out = None
        rec.saved = tuple(s if (v < 0 or v in kept) else None
                          for s, v in zip(rec.saved, rec.in_vars))


def one_output_record(prim: Primitive, params: dict, primals: Sequence, in_vars: list,
                       mask: int, var: int, out: Any) -> Record:
    """The record of a one-output primitive (output variable ``var``) keeping just what the
    rules of the inputs in ``mask`` read, filled in directly: the tracer's plain path
    (`RevTrace._record_plain`) and the torch facade's one-primitive ops make one per call."""
    n = len(primals)
    ins, reads_out = prim._needs.get((mask, n)) or prim.needs(mask, n)
    if ins:
        saved = [None] * n
        for i in ins:
            p = primals[i]
            saved[i] = np.array(p) if type(p) is np.ndarray else p  # an owned copy
        saved = tuple(saved)
    else:
        saved = (None,) * n
    rec = _new(Record)
    rec.prim = prim
    rec.params = params
    rec.in_vars = tuple(in_vars)
    rec.in_avals = tuple([aval_of(p) for p in primals]) if prim.reads_avals else None
    rec.out_vars = (var,)
    rec.saved = saved
    rec.out = out if reads_out else None
    rec.phase = "backward" if _phase.backward_depth else "forward"
    rec.source = rec.sub = None
    return rec


# ---------------------------------------------------------------------------------------
# The backward pass
# ---------------------------------------------------------------------------------------

def keeps_out(prim: Primitive, reads_out: bool, out_vars: tuple) -> bool:
    """Whether a record keeps its output: when a rule reads it, or when a multi-output
    primitive has an untraced output (whose zero cotangent is then shaped after it).
    (`RevTrace.record` inlines this test.)"""
    return reads_out or (prim.multiple_results and -1 in out_vars)


def fit_cotangent(g: Any, shape: tuple, dtype: Any) -> Array:
    """Sum a cotangent back over broadcast axes and cast it to the input's dtype (the real
    part for a real input), so that rules need not care about either."""
    if not isinstance(g, Array):
        import funcgrad.numpy as fnp
        g = fnp.asarray(g)
    g_shape = g.shape
    if g_shape != shape:
        lead = len(g_shape) - len(shape)
        axes = tuple(range(lead)) + tuple(
            lead + i for i, n in enumerate(shape) if n == 1 and g_shape[lead + i] != 1)
        if axes:  # one sum over the broadcast axes, then put back the kept 1s
            g = reduce_sum(g, axis=axes, keepdims=False)
        if g.shape != shape:
            g = reshape(g, shape=shape)
    if g.dtype != dtype:
        if g.dtype.kind == "c" and np.dtype(dtype).kind != "c":
            g = real(g)
        if g.dtype != dtype:
            g = g.astype(dtype)
    return g


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
    _phase.backward_depth += 1
    try:
        for rec in reversed(records):
            prim = rec.prim
            if prim.multiple_results:
                import funcgrad.numpy as fnp
                gs = [cts[v] if v >= 0 else None for v in rec.out_vars]
                given = next((gi for gi in gs if gi is not None), None)
                if given is None:
                    continue
                # a list: a rule that takes all cotangents over (a checkpoint) may empty it
                # to let them go as soon as it is done with them
                g = [gi if gi is not None else
                     fnp.zeros(*var_avals[v], device=given.device) if v >= 0 else
                     fnp.zeros_like(rec.out[k]) for k, (gi, v) in enumerate(zip(gs, rec.out_vars))]
                gs = given = None
                if consume:
                    for v in rec.out_vars:
                        if v >= 0:
                            cts[v] = None
            else:
                v = rec.out_vars[0]
                if v < 0:
                    continue
                g = cts[v]
                if g is None:
                    continue
                if consume:
                    cts[v] = None
            rules = prim.vjp_rules
            if not rules:
                raise _missing_rule(prim, 0)
            saved, out, in_avals, params = rec.saved, rec.out, rec.in_avals, rec.params
            all_cts = (None if prim.vjp_all is None else
                       prim.vjp_all.apply(g, -1, saved, out, in_avals, params))
            variadic = prim.inputs is None
            i = -1
            for v in rec.in_vars:
                i += 1
                if v < 0:
                    continue
                shape, dtype = var_avals[v]
                if dtype.kind not in "fc":
                    continue
                if all_cts is not None:
                    gi = all_cts[i]
                    if gi is None:
                        continue
                else:
                    rule = rules[0] if variadic else rules[i]
                    if rule is ZERO:
                        continue
                    if rule is None:
                        raise _missing_rule(prim, i)
                    gi = rule.apply(g, i, saved, out, in_avals, params)
                raw = gi._value if type(gi) is Array else None  # C attributes: faster
                if raw is None or raw.shape != shape or (raw.dtype is not dtype and
                                                         raw.dtype != dtype):
                    gi = fit_cotangent(gi, shape, dtype)
                old = cts[v]
                cts[v] = gi if old is None else old + gi
            if consume:
                rec.saved = rec.out = None
    finally:
        _phase.backward_depth -= 1
    return cts


def _missing_rule(prim: Primitive, i: int) -> NotImplementedError:
    return NotImplementedError(
        f"Differentiation rule for primitive {prim.name!r} is not implemented for argument "
        f"{i}" + (f" ({prim.inputs[i]!r})" if prim.inputs else "") + ". Declare one with "
        "defvjp, or wrap the value in funcgrad.stop_gradient if no derivative is needed.")


# ---------------------------------------------------------------------------------------
# Tapes you can print and re-run
# ---------------------------------------------------------------------------------------

_SHORT = {"float64": "f64", "float32": "f32", "float16": "f16", "complex128": "c128",
          "complex64": "c64", "int64": "i64", "int32": "i32", "int16": "i16", "int8": "i8",
          "uint8": "u8", "bool": "bool"}


def short_dtype(dtype: Any) -> str:
    return _SHORT.get(str(dtype), str(dtype))


def _var_name(n: int) -> str:
    s = ""
    n += 1
    while n:
        n, r = divmod(n - 1, 26)
        s = chr(ord("a") + r) + s
    return s


def _show_param(v: Any) -> str:
    if isinstance(v, np.dtype) or isinstance(v, type):
        return short_dtype(np.dtype(v))
    if callable(v) and hasattr(v, "__name__"):
        return v.__name__
    return repr(v)


class Tape:
    """A recorded program: inputs, records, outputs. Print it to read it (one record a
    line, like a jaxpr); call it to re-run it on new inputs of the same shapes."""

    def __init__(self, records: list[Record], var_avals: list[tuple], in_vars: list[int],
                 in_tree: tree_util.PyTreeDef, out_vars: list[int], out_consts: list,
                 out_tree: tree_util.PyTreeDef, name: str = "tape"):
        self.records = records
        self.var_avals = var_avals
        self.in_vars = in_vars
        self.in_tree = in_tree
        self.out_vars = out_vars
        self.out_consts = out_consts
        self.out_tree = out_tree
        self.name = name

    def __call__(self, *args: Any) -> Any:
        import funcgrad.numpy as fnp
        leaves, tree = tree_util.tree_flatten(args)
        if tree != self.in_tree:
            raise TypeError(f"this tape was recorded for inputs {self.in_tree}, got {tree}")
        env: list = [None] * len(self.var_avals)
        for var, x in zip(self.in_vars, leaves):
            x = fnp.asarray(x)
            shape, dtype = self.var_avals[var]
            if x.shape != shape or x.dtype != dtype:
                raise TypeError(f"this tape was recorded for an input of shape {shape} and "
                                f"dtype {dtype}, got {x.shape} {x.dtype}")
            env[var] = x
        for rec in self.records:
            args_ = [env[v] if v >= 0 else rec.saved[i] for i, v in enumerate(rec.in_vars)]
            out = rec.prim(*args_, **rec.params)
            for v, o in zip(rec.out_vars, out if rec.prim.multiple_results else (out,)):
                if v >= 0:
                    env[v] = o
        outs = [env[v] if v >= 0 else c for v, c in zip(self.out_vars, self.out_consts)]
        return self.out_tree.unflatten(outs)

    # -- reading -----------------------------------------------------------------------
    def var(self, v: int) -> str:
        shape, dtype = self.var_avals[v]
        return f"{_var_name(v)}:{short_dtype(dtype)}{list(shape)}".replace(" ", "")

    def _const(self, x: Any) -> str:
        shape, dtype = aval_of(x)
        if shape:
            return f"const:{short_dtype(dtype)}{list(shape)}".replace(" ", "")
        value = x.concrete().item() if isinstance(x, Array) else np.asarray(x).item()
        return f"{value!r}:{short_dtype(dtype)}"

    def record_lines(self, indent: str = "    ") -> list[str]:
        lines = []
        phase = "forward"
        for rec in self.records:
            if rec.phase != phase:
                phase = rec.phase
                lines.append(f"{indent}# --- {phase} pass ---")
            outs = " ".join(self.var(v) if v >= 0 else "_" for v in rec.out_vars)
            ins = " ".join(_var_name(v) if v >= 0 else self._const(rec.saved[i])
                           for i, v in enumerate(rec.in_vars))
            params = " ".join(f"{k}={_show_param(p)}" for k, p in rec.params.items())
            params = f"[{params}]" if params else ""
            lines.append(f"{indent}{outs} = {rec.prim.name}{params} {ins}".rstrip())
            if rec.sub is not None:
                lines.extend(rec.sub.record_lines(indent + "    "))
        return lines

    def __str__(self) -> str:
        ins = " ".join(self.var(v) for v in self.in_vars)
        outs = ", ".join(_var_name(v) if v >= 0 else repr(c)
                         for v, c in zip(self.out_vars, self.out_consts))
        body = "\n".join(self.record_lines())
        return f"{{ lambda {ins}. let\n{body}\n  in ({outs}) }}"

    def __repr__(self) -> str:
        return str(self)

    def __len__(self) -> int:
        return len(self.records)

    def draw(self, **kwargs: Any) -> Any:
        """A Graphviz picture of this tape (see `funcgrad.viz.draw`)."""
        from funcgrad.viz import draw
        return draw(self, **kwargs)

    def _repr_html_(self) -> str:
        from funcgrad.viz.html import tape_html
        return tape_html(self)

    @property
    def primitives(self) -> list[str]:
        """The primitive names in recording order."""
        return [r.prim.name for r in self.records]


def make_tape(fun: Callable, *, sources: bool = False) -> Callable[..., Tape]:
    """``make_tape(f)(*args)`` records every primitive ``f`` applies and returns the
    `Tape`. Transforms inside ``f`` show up too: the tape of ``grad(f)`` holds the forward
    and the backward pass, marked as such."""

    def tape_of(*args: Any) -> Tape:
        import funcgrad.numpy as fnp
        leaves, in_tree = tree_util.tree_flatten(args)
        trace = RevTrace("make_tape", keep_all=True, sources=sources)
        with new_trace(trace):
            tracers = [trace.new_var(fnp.asarray(x)) for x in leaves]
            out = fun(*in_tree.unflatten(tracers))
            out_leaves, out_tree = tree_util.tree_flatten(out)
        out_vars = [trace.var_of(o) for o in out_leaves]
        consts = [None if v >= 0 else o for v, o in zip(out_vars, out_leaves)]
        return Tape(trace.records, trace.var_avals, [t._var for t in tracers], in_tree,
                    out_vars, consts, out_tree, getattr(fun, "__name__", "tape"))

    return tape_of
