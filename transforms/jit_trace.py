"""The trace `jit` records a function on: `JitTracer`s of a `JitTrace`.

A `JitTrace` is a reverse-mode trace that keeps every record (as `make_tape` does) and
forbids looking at values: ``if x > 0``, ``float(x)`` or ``range(n)`` on a traced value
raise `ConcretizationTypeError` naming the line and the fixes, because the compiled program
must be right for every value of the same shape and dtype. The tracers still hold the first
call's values (transforms are eager), which is how shapes and dtypes are known without a
shape rule per primitive, and what the first call returns. Python numbers are weakly typed
inputs: their tracers keep the number as their primal, so that they combine with arrays as
the number does.
"""
from __future__ import annotations

import sys
import weakref
from typing import Any, Callable, Sequence

import numpy as np

import funcgrad.numpy as fnp
from funcgrad.array import Array
from funcgrad.core import ConcretizationTypeError, Primitive, Tracer, bind, new_trace
from .tape import RevTrace, RevTracer, Tape
from .tape_text import aval_text

__all__ = ["JitTrace", "JitTracer", "StagedClosureError", "trace_to_tape", "SCALAR_TYPES"]

SCALAR_TYPES = (bool, int, float, complex)  # Python numbers: weakly typed inputs


class StagedClosureError(NotImplementedError):
    """A staged control-flow construct's function read, from its closure, a value traced
    by a transform applied inside the jitted function: such a function cannot become a
    sub-program (the value is not an operand of the construct)."""


class JitTracer(RevTracer):
    """A value inside a function being traced by `jit`: its shape and dtype are known, its
    value is not (as far as the program is concerned)."""

    __slots__ = ()

    def _concretization(self, what: str) -> ConcretizationTypeError:
        return ConcretizationTypeError(
            f"Abstract tracer value encountered where concrete value is expected: traced "
            f"array with shape {aval_text(self.shape, self.dtype)} (an argument or result "
            f"inside `{self._trace.name}`). The problem arose with the `{what}` function "
            f"{_user_line()}. Its value is known only when the compiled program runs, so "
            "Python control flow and conversions cannot depend on it. Fixes: mark the "
            "argument static with jit(..., static_argnums=...) or static_argnames=...; "
            "use funcgrad.lax.cond / switch / while_loop / fori_loop instead of Python "
            "if/while/for; use funcgrad.numpy.where to select elementwise.")

    def __bool__(self) -> bool:
        raise self._concretization("bool")

    def __int__(self) -> int:
        raise self._concretization("int")

    def __float__(self) -> float:
        raise self._concretization("float")

    def __complex__(self) -> complex:
        raise self._concretization("complex")

    def __index__(self) -> int:
        raise self._concretization("__index__")

    def item(self, *args: Any) -> Any:
        raise self._concretization("item")

    def tolist(self) -> Any:
        raise self._concretization("tolist")

    def __array__(self, dtype: Any = None, copy: Any = None) -> np.ndarray:
        raise self._concretization("numpy.asarray")

    def concrete(self) -> Array:
        raise self._concretization("concrete")

    def __repr__(self) -> str:
        return f"Traced<{aval_text(self.shape, self.dtype)}>with<{self._trace.name}>"

    __str__ = __repr__

    def __format__(self, spec: str) -> str:
        """``f"{x}"`` prints the traced value as `str` does (as JAX's tracer); a format
        spec needs a value to format, which a traced one does not have: JAX's TypeError."""
        if spec:
            raise TypeError(f"unsupported format string passed to {type(self).__name__}"
                            ".__format__")
        return str(self)

    # a Python number argument's tracer keeps the number as its primal (weak typing)
    @property
    def scalar_type(self) -> type | None:
        """The Python number type of a Python number input's tracer, else None."""
        return type(self._primal) if type(self._primal) in SCALAR_TYPES else None

    @property
    def device(self) -> str:
        return self._primal.device if isinstance(self._primal, Array) else "cpu"

    @property
    def size(self) -> int:
        return self._primal.size if isinstance(self._primal, Array) else 1


def _user_line() -> str:
    """'at file:line' of the innermost caller outside funcgrad."""
    f = sys._getframe(2)
    while f is not None:
        name = f.f_code.co_filename
        if ("funcgrad" not in name and "/transforms/" not in name
                and "/primitives/" not in name):
            return f"at {name}:{f.f_lineno}"
        f = f.f_back
    return ""


class ClosedOverTracer(Exception):
    """Raised by a `JitTrace` that refuses closures (tracing a program for a jitted call
    that other transforms see) at the first value of an outer transform that the function
    reads from its closure: the call then runs as traced, op by op, under those transforms
    (their tracers cannot be arguments of a program compiled once for all)."""


class JitTrace(RevTrace):
    """The trace `jit` records a function on: every primitive call becomes a record (no
    residuals: nothing here is differentiated), constants included. ``closures`` collects
    tracers of other (outer) transforms the function uses without taking them as
    arguments: such a call cannot be compiled once for all, and runs as traced."""

    mode = "jit"
    tracer_type = JitTracer

    def __init__(self, name: str, refuse_closures: bool = False):
        super().__init__(name, keep_all=True)
        self.weak_vars: set = set()  # inputs that are Python numbers (weakly typed)
        self.closures = False
        self.refuse_closures = refuse_closures
        self.staging = 0  # how many `scoped` sub-programs are being recorded
        # var -> its value while tracing (weakly: for staged control flow's runs)
        self._values: weakref.WeakValueDictionary = weakref.WeakValueDictionary()
        self._numbers: dict = {}  # the values of weak (Python number) variables

    def new_var(self, primal: Any, diff: bool | None = None) -> JitTracer:
        t = super().new_var(primal, diff)
        if isinstance(primal, Array):
            self._values[t._var] = primal
        return t

    def record(self, prim: Primitive, params: dict, primals: Sequence, in_vars: Sequence,
               mask: int, out: Any) -> Any:
        result = super().record(prim, params, primals, in_vars, mask, out)
        if not prim.multiple_results and isinstance(out, Array):  # (`new_var` did the rest)
            self._values[result._var] = out
        return result

    def value_of(self, var: int) -> Any:
        """The value variable ``var`` has in this tracing (the first call's)."""
        if var in self._numbers:
            return self._numbers[var]
        return self._values[var]

    def new_weak_var(self, value: Any) -> JitTracer:
        """A tracer for a Python number argument: its primal stays the number, so that it
        combines with arrays as the number does (numpy's weak scalars)."""
        t = self.new_var(fnp.asarray(value))
        t._primal = value
        self.weak_vars.add(t._var)
        self._numbers[t._var] = value
        return t

    def new_input(self, value: Any) -> JitTracer:
        """A tracer for an input of the program (or of a sub-program): weak for a Python
        number, else typed by the array."""
        return self.new_weak_var(value) if type(value) in SCALAR_TYPES else self.new_var(value)

    def process(self, prim: Primitive, args: Sequence, params: dict) -> Any:
        if prim.stage_rule is not None:
            return prim.stage_rule(self, args, params)
        return self.stage(prim, args, params)

    def stage(self, prim: Primitive, args: Sequence, params: dict) -> Any:
        """Record one call as it is: the default, and what a stage rule that only checks
        something first (a JAX-style primitive's) hands the call on to."""
        if prim.dynamic_shape:
            raise _dynamic_shape_error(prim, args)
        primals, in_vars, _ = self.lower(args)
        for p, v in zip(primals, in_vars):
            if v < 0 and isinstance(p, Tracer):
                if self.refuse_closures:
                    raise ClosedOverTracer(prim.name)
                self.closures = True  # an outer transform's value, used from a closure
        out = bind(prim, primals, params)
        return self.record(prim, params, primals, in_vars, 0, out)

    def scoped(self, fun: Callable, args: Sequence) -> tuple[Tape, list]:
        """Record ``fun(*tracers)`` (flat in, flat out) as a sub-program of this trace:
        its records go to a `Tape` of their own, which may read this trace's variables
        (the function's closure). For control flow: the bodies of cond, while_loop, scan."""
        saved = self.records
        self.records = []
        self.staging += 1
        try:
            tracers = [self.new_input(self.primal_of(a)) for a in args]
            outs = list(fun(*tracers))
            out_vars = [self.var_of(o) for o in outs]
            sub = Tape(self.records, self.var_avals, [t._var for t in tracers], out_vars,
                       [None if v >= 0 else o for v, o in zip(out_vars, outs)],
                       name=getattr(fun, "__name__", "body"))
        finally:
            self.records = saved
            self.staging -= 1
        return sub, [self.primal_of(o) for o in outs]


def _dynamic_shape_error(prim: Primitive, args: Sequence) -> Exception:
    return ConcretizationTypeError(
        f"primitive {prim.name!r} returns an array whose shape depends on the values of its "
        f"input ({_user_line()}), so it cannot be compiled: the program must work for "
        "every input of the same shape. Boolean masks (x[mask], nonzero, argwhere, unique) "
        "have this shape; use funcgrad.numpy.where(mask, x, fill) to keep the shape, or "
        "call the function without jit.")


def trace_to_tape(fun: Callable, leaves: Sequence, name: str, refuse_closures: bool = False,
                  effects: bool = True) -> tuple[Tape, list, Any]:
    """Trace ``fun`` (flat leaves in, flat leaves out) under a `JitTrace`: (its tape, the
    traced outputs' values, the trace). Without ``effects`` (tracing only, as ``lower``:
    nothing runs the program) effectful calls are recorded without being made, as in a
    sub-program."""
    trace = JitTrace(name, refuse_closures)
    trace.staging = 0 if effects else 1
    with new_trace(trace):
        tracers = [trace.new_input(x) for x in leaves]
        outs = list(fun(*tracers))
    out_vars = [trace.var_of(o) for o in outs]
    values = [trace.primal_of(o) for o in outs]
    tape = Tape(trace.records, trace.var_avals, [t._var for t in tracers], out_vars,
                [None if v >= 0 else o for v, o in zip(out_vars, values)], name=name)
    return tape, values, trace
