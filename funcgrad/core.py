"""The core of funcgrad: primitives, tracers and the trace stack.

Everything differentiable in funcgrad is a call of a `Primitive`, and every call goes
through `bind`::

    def bind(prim, args, params):
        top = <the trace of the highest level among the tracers in args>
        if top is not None:
            return top.process(prim, args, params)  # the innermost transform takes it
        return <prim.impl on the raw arrays, as an Array>  # no transform: the backend

A transform (grad, jvp, vmap, jit, make_tape, ...) pushes a `Trace` on this thread's trace
stack and wraps its inputs in `Tracer`s of that trace. When a primitive sees tracers among
its arguments it hands the call to the trace of the highest level among them; that trace
computes the primal by binding the primitive again on the tracers' primals (which may be
tracers of lower levels) and adds what it needs (a tape record, a tangent, a batch axis).
Acting only for the highest level is what prevents perturbation confusion between nested
transforms.

Rules are plain functions written in funcgrad ops, so the values they compute are traced by
any outer transform: derivatives of derivatives come for free. They are pure functions of
what they declare (no branching on data or memory layout; that is a kernel's business).
"""
from __future__ import annotations

import threading
from typing import Any, Callable, Iterator, Sequence

import numpy as np

from funcgrad._config import float_checks
from funcgrad._results import check_floats, check_same_device, wrap_raw
from funcgrad.array import RAW_TYPES, WEAK_TYPES, Array, WeakArray, new_array, to_raw, \
    weakened
from funcgrad.avals import ShapedArray
from funcgrad.backend import device_of
from funcgrad._calls import by_backend, weak_result
from funcgrad.dtypes import EXTENDED_FLOATS
from funcgrad.errors import ConcretizationTypeError, EscapedTracerError
from funcgrad.rules import Rule

__all__ = ["Primitive", "Rule", "Trace", "Tracer", "TraceCall", "ZERO", "registry", "bind",
           "EscapedTracerError", "ConcretizationTypeError", "new_trace", "find_top_trace",
           "is_inexact", "wrap_raw", "layout_of", "ShapedArray", "weak_result"]


class _Zero:
    """Marks a rule whose result is identically zero (floor, sign, round...): the tape
    drops the cotangent instead of computing zeros."""

    __slots__ = ()

    def __repr__(self) -> str:
        return "ZERO"


ZERO = _Zero()

_PRIMITIVES: dict[str, "Primitive"] = {}
# the class ``Primitive(name)`` (JAX's one-argument form) makes: set by the module that
# defines it (funcgrad.extend.primitive), which builds on this one
ONE_ARGUMENT_KIND: list[type] = []


def registry() -> dict[str, "Primitive"]:
    """All declared primitives by name (funcgrad's and the user's)."""
    return dict(_PRIMITIVES)


def is_inexact(dtype: Any) -> bool:
    """Whether values of this dtype carry derivatives (floating, bfloat16 too, or complex)."""
    kind = getattr(dtype, "kind", None) or np.dtype(dtype).kind
    return kind == "f" or kind == "c" or (kind == "V" and np.dtype(dtype) in EXTENDED_FLOATS)


class Primitive:
    """One differentiable operation: its backend implementation and its rules.

    ``impl(*raw_inputs, **params)`` computes on numpy or cupy arrays (numpy functions
    dispatch to cupy through ``__array_function__``/``__array_ufunc__``); `def_impl` gives
    a backend an implementation of its own (a cupy kernel beside numpy's). ``inputs`` names
    the array arguments (``None`` for a variadic primitive such as concatenate); ``params``
    names the static, hashable keyword parameters. Declare rules with `defvjp` / `defjvp` /
    `defbatch`. ``view``: the result may share memory with an input (reshape, real...).
    ``dynamic_shape``: the result's shape depends on the input's values (nonzero), so it
    cannot be compiled by `jit`. ``effectful``: the call does something besides computing
    its result (communicates), so a compiler may not drop or merge it. ``fresh``: the
    result is always a new array of its own, which a compiled program may then write into
    (numpy ufuncs are; other implementations say so). ``promote``: for an elementwise
    primitive, a function that casts its operands to the dtype it computes in (JAX's type
    promotion, `funcgrad.primitives.promotion`); `bind` applies it before anything else,
    so every transform sees operands of one dtype. ``keeps_weak``: the result is weakly
    typed when every operand is (JAX's rule for its elementwise and structural
    primitives; reductions, scans and casts give strong results): by default on for the
    elementwise primitives (those with ``promote``), off for the others; a slice: those
    operands decide (not a gather's index arrays, nor a select's condition).
    """

    def __new__(cls, *args: Any, **kwargs: Any) -> "Primitive":
        """``Primitive(name)`` alone is JAX's constructor: it makes the JAX-style kind."""
        if cls is Primitive and len(args) == 1 and not kwargs and ONE_ARGUMENT_KIND:
            cls = ONE_ARGUMENT_KIND[0]
        return object.__new__(cls)

    def __init__(self, name: str, impl: Callable, inputs: Sequence[str] | None = ("x",),
                 params: Sequence[str] = (), *, multiple_results: bool = False,
                 differentiable: bool = True, view: bool = False,
                 dynamic_shape: bool = False, effectful: bool = False,
                 fresh: bool | None = None, sample: Callable | None = None,
                 doc: str | None = None, promote: Callable | None = None,
                 keeps_weak: bool | slice | None = None, replace: bool = False):
        if name in _PRIMITIVES and not replace:
            raise ValueError(f"a primitive named {name!r} is already declared; choose "
                             "another name, or pass replace=True to redefine it (e.g. when "
                             "re-running a notebook cell)")
        self.name = name
        # backend name -> implementation; without any, calls raise naming the missing one
        self.impls: dict[str, Callable] = {} if impl is None else {"cpu": impl}
        self.impl = impl if impl is not None else by_backend(name, {})
        self.inputs = None if inputs is None else tuple(inputs)
        self.params = tuple(params)
        self.multiple_results = multiple_results
        self.differentiable = differentiable
        self.view = view
        self.dynamic_shape = dynamic_shape
        self.effectful = effectful
        self.fresh = (isinstance(impl, np.ufunc) and not (multiple_results or view)
                      if fresh is None else fresh)
        self.plain = not (multiple_results or view)  # impl's result is the Array's value
        self.promote = promote  # args -> args of one dtype (elementwise primitives)
        if keeps_weak is None:
            keeps_weak = promote is not None
        self.keeps_weak = bool(keeps_weak)
        # the operands that decide (None: all)
        self.weak_operands = keeps_weak if type(keeps_weak) is slice else None
        self.sample = sample
        self.vjp_rules: list = []
        self.vjp_all: Rule | None = None
        self.reads_avals = False  # whether a VJP rule reads input shapes, dtypes or layouts
        # the inputs whose layout token a rule (VJP or JVP) reads: only those get one
        self.layout_inputs: frozenset = frozenset()
        self.jvp_rules: list = []
        self.batch_rule: Callable | None = None
        self.stage_rule: Callable | None = None  # how jit records a call (control flow)
        # ``rule(primals, tangents, params) -> (out, tangent)``: a JVP computing the primal
        # too (JAX's ``primitive_jvps``); compiled programs call ``lowering`` for ``impl``
        self.jvp_full: Callable | None = None
        self.lowering: Callable | None = None
        # `needs(mask, n)` by ``mask | 1 << n`` (one int for both: mask < 2**n), filled by
        # `needs` and read first by the tape's record builder (a lookup costs less than a call)
        self.needs_cache: dict[int, tuple] = {}
        self.__name__ = name
        self.__doc__ = doc or getattr(impl, "__doc__", None)
        _PRIMITIVES[name] = self

    def __repr__(self) -> str:
        return f"<funcgrad primitive {self.name}>"

    @property
    def variadic(self) -> bool:
        return self.inputs is None

    # -- declaring rules --------------------------------------------------------------
    def source_of(self, name: str, fn: Callable, kind: str) -> tuple:
        """Where a rule's parameter ``name`` comes from (see `Rule`)."""
        if self.inputs is None:
            if name in ("xs", "shapes", "dtypes", "argnum"):
                return (name,)
        elif name in self.inputs:
            return ("in", self.inputs.index(name))
        elif name.endswith("_shape") and name[:-6] in self.inputs:
            return ("shape", self.inputs.index(name[:-6]))
        elif name.endswith("_dtype") and name[:-6] in self.inputs:
            return ("dtype", self.inputs.index(name[:-6]))
        elif name.endswith("_layout") and name[:-7] in self.inputs:
            return ("layout", self.inputs.index(name[:-7]))
        if name in ("out", "params"):  # params: every static parameter, as a dict
            return (name,)
        if name in self.params:
            return ("param", name)
        allowed = (["xs", "shapes", "dtypes", "argnum"] if self.inputs is None else
                   [*self.inputs, *(f"{i}_shape" for i in self.inputs),
                    *(f"{i}_dtype" for i in self.inputs),
                    *(f"{i}_layout" for i in self.inputs)]) + ["out", "params", *self.params]
        raise TypeError(f"{kind} rule {getattr(fn, '__name__', fn)!r} of primitive "
                        f"{self.name!r} asks for {name!r}, which it does not have; a rule "
                        f"may ask for: {', '.join(allowed)}")

    def _rules(self, fns: Sequence, kind: str) -> list:
        n = 1 if self.inputs is None else len(self.inputs)
        if len(fns) > n:
            raise TypeError(f"primitive {self.name!r} has {n} inputs but {len(fns)} "
                            f"{kind} rules were given")
        return [f if f is None or f is ZERO else Rule(self, f, kind)
                for f in list(fns) + [None] * (n - len(fns))]

    def defvjp(self, *rules: Callable | None) -> "Primitive":
        """Declare one VJP rule per input: ``rule(g, <what it reads>...) -> cotangent``.

        ``None`` means "not differentiable in this argument" (an error if a gradient is
        needed there); `ZERO` means the derivative is identically zero. A variadic
        primitive takes one rule for all its inputs. Cotangents may come back with a
        broadcast shape or another dtype: the tape sums and casts them to the input's.
        """
        self.vjp_rules = self._rules(rules, "VJP")
        self.vjp_all = None
        self._rules_changed()
        return self

    def defvjp_all(self, rule: Callable) -> "Primitive":
        """Declare one VJP rule for all inputs at once: ``rule(g, <reads>...)`` returns a
        tuple with one cotangent (or ``None`` for zero) per input. For rules that share work
        between inputs (custom_vjp's bwd, einsum); ``argnum`` is not available."""
        self.vjp_all = Rule(self, rule, "VJP")
        self.vjp_rules = [self.vjp_all] * (1 if self.inputs is None else len(self.inputs))
        self._rules_changed()
        return self

    def _rules_changed(self) -> None:
        self.needs_cache = {}
        self.reads_avals = any(isinstance(r, Rule) and r.reads_avals for r in self.vjp_rules)
        self.layout_inputs = frozenset().union(*[r.layouts_read for r in
                                                 [*self.vjp_rules, *self.jvp_rules]
                                                 if isinstance(r, Rule)])

    def defjvp(self, *rules: Callable | None) -> "Primitive":
        """Declare one JVP rule per input: ``rule(t, <what it reads>...) -> tangent``,
        linear in ``t``; the output tangent is the sum over inputs. A primitive without
        JVP rules gets forward mode from its VJP rules (see `transforms.jvp`)."""
        self.jvp_rules = self._rules(rules, "JVP")
        self._rules_changed()
        return self

    def def_impl(self, backend: str, impl: Callable | None = None) -> Callable:
        """Give backend ``backend`` ("cpu": numpy, "gpu": cupy) its own implementation,
        chosen by the inputs' device; without one a backend uses the numpy
        implementation (through numpy's dispatch to cupy). Usable as a decorator."""
        if backend not in ("cpu", "gpu"):
            raise ValueError(f"unknown backend {backend!r} for primitive {self.name!r}: use "
                             "'cpu' (numpy) or 'gpu' (cupy)")

        def register(fn: Callable) -> Callable:
            self.impls[backend] = fn
            impls = self.impls
            if set(impls) == {"cpu"}:  # the plain function: nothing to choose
                self.impl = impls["cpu"]
            else:  # one dispatching implementation: no cost for single-backend primitives
                self.impl = by_backend(self.name, dict(impls))
            return fn
        return register if impl is None else register(impl)

    def defstage(self, rule: Callable) -> "Primitive":
        """Declare how `jit` records a call, for primitives that take functions (cond,
        while_loop, scan): ``rule(trace, args, params) -> out`` traces the functions into
        sub-programs of the jit trace and records the call with them."""
        self.stage_rule = rule
        return self

    def defbatch(self, rule: Callable) -> "Primitive":
        """Declare the batching rule ``rule(args, dims, **params) -> (out, out_dim)``:
        ``args`` hold a batch axis at ``dims[i]`` (``None``: not batched); the rule computes
        the batched result with funcgrad ops (moving axes, not looping) and says where its
        batch axis is (a tuple of axes for a primitive with several results)."""
        self.batch_rule = rule
        return self

    @property
    def jvp_source(self) -> str:
        """Where forward mode comes from: 'jvp rules', 'derived from vjp' or 'none'."""
        if self.jvp_rules:
            return "jvp rules"
        return "derived from vjp" if self.vjp_rules else "none"

    def jvp_rule(self, argnum: int) -> Any:
        rules = self.jvp_rules
        if not rules:
            return None
        return rules[0] if self.inputs is None else rules[argnum]

    def vjp_rule(self, argnum: int) -> Any:
        rules = self.vjp_rules
        if not rules:
            return None
        return rules[0] if self.inputs is None else rules[argnum]

    def needs(self, mask: int, n: int) -> tuple:
        """(the input positions, ascending, whose values the VJP rules of the inputs in
        ``mask`` read, whether they read the output), for a call with ``n`` inputs."""
        key = mask | 1 << n  # variadic primitives are called with varying numbers of inputs
        got = self.needs_cache.get(key)
        if got is None:
            ins: set = set()
            reads_out = False
            for i in range(n):
                rule = self.vjp_rule(i) if mask >> i & 1 else None
                if isinstance(rule, Rule):
                    ins.update(range(n) if "all" in rule.inputs_read else rule.inputs_read)
                    reads_out = reads_out or rule.reads_out
            got = self.needs_cache[key] = (tuple(sorted(i for i in ins if i < n)), reads_out)
        return got

    # -- calling -------------------------------------------------------------------------
    def __call__(self, *args: Any, **params: Any) -> Any:
        return bind(self, args, params)

    def bind(self, *args: Any, **params: Any) -> Any:
        """Apply the primitive (`bind`): on the backend, or through the innermost
        transform whose tracers are among the arguments. Rules and helpers on hot paths
        call this rather than the primitive object: CPython runs an object's ``__call__``
        from C, in an interpreter loop of its own, which costs about 500 instructions more
        per call than this method (callgrind, CPython 3.11)."""
        return bind(self, args, params)

    def wrap(self, out: Any, raws: Sequence, args: Sequence) -> Any:
        """The implementation's result ``out`` (on inputs ``raws``, the values of
        ``args``) as Array(s). A view of an Array's memory is kept (nobody writes there);
        a view of a numpy array the caller passed is copied: the caller may write to it."""
        if self.multiple_results:
            return tuple([new_array(o) for o in out])
        if self.view:
            for a, raw in zip(args, raws):
                if type(a) is not Array and type(raw) is np.ndarray and \
                        np.may_share_memory(raw, out):
                    out = out.copy()
                    break
        return wrap_raw(out)


_new = object.__new__
NO_PARAMS: dict = {}  # shared by every call without params; never written to


def bind(prim: Primitive, args: Sequence, params: dict, promoted: bool = False) -> Any:
    """The one path of every primitive call: to the trace of the highest level among the
    tracers in ``args`` (`find_top_trace`), or, with no tracer, to the backend
    implementation, its result wrapped in an Array. One pass over ``args`` does both the
    search and the unwrapping of Arrays (this runs for every operation). An elementwise
    primitive's operands are first cast to one dtype (``prim.promote``; ``promoted``: they
    are)."""
    promote = None if promoted else prim.promote
    top = None
    raws = []
    dtype = None
    mixed = False  # (operands of several dtypes, or numbers: maybe promoted, see below)
    for a in args:
        if type(a) is Array:
            raws.append(a._value)
        elif isinstance(a, Tracer):
            t = a._trace
            if top is None or t.level > top.level:
                top = t
        else:  # a number or a numpy array as it is, or a nested list, a cupy array...
            raws.append(a if type(a) in RAW_TYPES else to_raw(a))
            mixed = True
            continue
        if dtype is None:
            dtype = a.dtype
        elif a.dtype is not dtype and a.dtype != dtype:
            mixed = True
    if promote is not None and (mixed or dtype in promote.compute or promote.first
                                or promote.stop is not None):
        cast = promote(args)
        if cast is not args:  # (bind the operands of one dtype, once)
            return bind(prim, cast, params, True)
    if top is not None:
        if not top.alive:
            raise escaped_error(top, prim)
        return top.process(prim, args, params)
    try:
        out = prim.impl(*raws, **params) if params else prim.impl(*raws)
    except Exception:
        check_same_device(prim, raws)  # mixed devices get a clear error
        raise
    if float_checks.on:  # jax_debug_nans / jax_debug_infs
        check_floats(prim.name, out if prim.multiple_results else (out,))
    # (weak operands are never Arrays: `mixed` is set where one is, see `WeakArray`)
    weak = mixed and weak_result(prim, args)
    if prim.plain and type(out) is np.ndarray:  # `wrap` of the common case, written out
        result = _new(WeakArray if weak else Array)
        result._value = out
        result.shape = out.shape
        result.dtype = out.dtype
        result.ndim = out.ndim
        return result
    out = prim.wrap(out, raws, args)
    if weak:
        return tuple([weakened(o) for o in out]) if prim.multiple_results else weakened(out)
    return out


def layout_of(x: Any) -> str:
    """The memory layout of array ``x`` as a token: "F" for a matrix stored column by
    column (as the transpose ``w.T`` of a row-major ``w`` is), "C" for anything else. Rules
    may ask for an input's (``<input>_layout``) only to hand it to a kernel that lays its
    result out alike: the token is metadata, like the shape, and keeps the array free."""
    while isinstance(x, Tracer):
        x = x._primal
    if getattr(x, "ndim", 0) != 2:  # (a Python number has none)
        return "C"
    flags = getattr(x._value if isinstance(x, Array) else x, "flags", None)
    return "F" if flags is not None and flags.f_contiguous and not flags.c_contiguous else "C"


def escaped_error(trace: "Trace", prim: Primitive | None = None) -> EscapedTracerError:
    where = f" by primitive {prim.name!r}" if prim is not None else ""
    return EscapedTracerError(
        f"Encountered an escaped tracer: a value traced by `{trace.name}` (trace level "
        f"{trace.level}) was used{where} after that transform had finished. This happens "
        "when a function under a transform stores an intermediate value outside it (in a "
        "global, a list, or an attribute) and the value is used later. Return the value "
        "from the function instead, or store funcgrad.stop_gradient(value).")


# ---------------------------------------------------------------------------------------
# Traces and tracers
# ---------------------------------------------------------------------------------------

class _ThreadState(threading.local):
    def __init__(self) -> None:
        self.stack: list[Trace] = []


_state = _ThreadState()


class Trace:
    """One activation of a transform. ``level`` is its depth in this thread's stack;
    ``mode`` names the kind of transform ("rev", "jvp", "batch", "jit"), which is how a
    `TraceCall` picks its handling."""

    name = "trace"
    mode = "none"

    def __init__(self) -> None:
        self.level = len(_state.stack)
        self.alive = True

    def process(self, prim: Primitive, args: Sequence, params: dict) -> Any:
        """A call of ``prim`` with tracers of this trace among ``args``."""
        raise NotImplementedError

    def process_call(self, call: "TraceCall", args: Sequence) -> Any:
        """Handle a `TraceCall` (custom_vjp, custom_jvp, checkpoint, jit, control flow)
        whose arguments hold tracers of this trace. The call decides: it has one
        ``process_<mode>`` method per trace mode, so each call's logic stays in its own
        module; a call without one for this mode runs its function on the tracers."""
        handler = getattr(call, f"process_{self.mode}", None)
        if handler is None:
            return call.fun(*args)
        return handler(self, args)

    def __repr__(self) -> str:
        return f"{type(self).__name__}(level={self.level})"


def active_traces() -> list[Trace]:
    """The traces of this thread's transforms now running, outermost first."""
    return list(_state.stack)


class new_trace:
    """Context manager: push a trace for the duration of a transform, then retire it so
    that any of its tracers used later raise `EscapedTracerError`."""

    def __init__(self, trace: Trace):
        self.trace = trace

    def __enter__(self) -> Trace:
        _state.stack.append(self.trace)
        return self.trace

    def __exit__(self, *exc: Any) -> None:
        self.trace.alive = False
        stack = _state.stack
        if stack[-1] is self.trace:  # it is the innermost unless transforms interleave
            stack.pop()
        else:
            stack.pop(stack.index(self.trace))


def find_top_trace(values: Sequence) -> Trace | None:
    """The trace of the highest level among the tracers in ``values`` (None: none)."""
    top = None
    for a in values:
        if isinstance(a, Tracer):
            t = a._trace
            if top is None or t.level > top.level:
                top = t
    return top


class TraceCall:
    """A call that transforms must see whole rather than primitive by primitive: a function
    with custom derivative rules, a checkpointed or jitted function, a control-flow
    construct. Subclasses implement ``process_<mode>(trace, args)`` for the trace modes
    that treat it specially; with no tracer among the (flattened) arguments the call simply
    runs ``fun``."""

    def __init__(self, fun: Callable, name: str | None = None):
        self.fun = fun
        self.name = name or getattr(fun, "__name__", "fun")

    def bind(self, args: Sequence, closure: Sequence = ()) -> Any:
        """``args`` are flat (pytree leaves); ``fun`` takes them flat too. ``closure``:
        values the call's functions read besides ``args`` (closed over), which take part
        in choosing the transform that handles the call."""
        top = find_top_trace([*args, *closure] if closure else args)
        if top is None:
            return self.fun(*args)
        if not top.alive:
            raise escaped_error(top)
        return top.process_call(self, args)

    def held_values(self) -> list:
        """The values this call keeps for its backward pass besides its record's residuals
        (a checkpoint's sub-tape, a custom rule's residuals), in a fixed order: with
        `with_held_values` they make a vjp function a pytree. None by default."""
        return []

    def with_held_values(self, values: Iterator, sub: Any) -> tuple["TraceCall", Any]:
        """(a copy of this call holding the next values of ``values`` in place of
        `held_values`, the sub-tape its record shows, of which ``sub`` is the current
        one); this call and ``sub`` by default."""
        return self, sub


class Tracer(Array):
    """An Array standing for a value inside a transform. It holds a concrete primal
    (transforms are eager), so shapes, dtypes and Python control flow on comparisons work;
    conversions that would silently drop the derivative raise instead."""

    # shape, dtype and ndim (Array's slots) are the primal's, set when the tracer is made
    __slots__ = ("_trace", "_primal")

    @property
    def weak_type(self) -> bool:
        """Whether the value is weakly typed: its primal's weak type (transforms are eager,
        so the primal was computed by the same operations; a jit tracer of a Python
        number argument holds the number)."""
        p = self._primal
        return type(p) in WEAK_TYPES or (isinstance(p, Array) and p.weak_type)

    @property
    def size(self) -> int:
        return self._primal.size

    @property
    def trace_name(self) -> str:
        """The name of the transform tracing this value (``vjp``, ``jit(f)``...)."""
        return self._trace.name

    @property
    def device(self) -> str:
        p = self._primal  # a Python number under jit (a weakly typed argument): "cpu"
        return p.device if isinstance(p, (Array, Tracer)) else device_of(p)

    def concrete(self) -> Array:
        """The underlying concrete value, with every level of tracing removed."""
        v = self._primal
        return v.concrete() if isinstance(v, Tracer) else v

    def _conversion_error(self, what: str) -> TypeError:
        return TypeError(
            f"Cannot convert a traced Array ({self.dtype}{list(self.shape)}, traced by "
            f"`{self._trace.name}`) to {what}: the derivative would be silently lost. Use "
            "funcgrad.numpy functions on it, or read its value without derivative with "
            f"funcgrad.stop_gradient(x) first.")

    def __array__(self, dtype: Any = None, copy: Any = None) -> np.ndarray:
        raise self._conversion_error("a numpy array")

    def __float__(self) -> float:
        raise self._conversion_error("a Python float")

    def __int__(self) -> int:
        if is_inexact(self.dtype):
            raise self._conversion_error("a Python int")
        return int(self._primal)

    def __complex__(self) -> complex:
        raise self._conversion_error("a Python complex")

    def __index__(self) -> int:
        return self.__int__()

    def __bool__(self) -> bool:
        return bool(self._primal)

    def item(self, *args: Any) -> Any:
        if is_inexact(self.dtype):
            raise self._conversion_error("a Python scalar")
        return self._primal.item(*args)

    def tolist(self) -> Any:
        raise self._conversion_error("a Python list")

    def __repr__(self) -> str:
        return (f"Traced<{self.dtype}{list(self.shape)}>with<{self._trace.name}, "
                f"level={self._trace.level}>")

    __str__ = __repr__
