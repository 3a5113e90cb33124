"""`jit`: trace a function once per signature, compile its tape to straight-line numpy.

Tracing runs the function on `JitTracer`s of a `JitTrace` (`transforms.jit_trace`): a
trace that records every primitive call and refuses to let Python look at values.

The tape is handed to `transforms.compile`, which writes one Python function calling each
primitive's implementation on raw numpy (or cupy) arrays: no tracers, no dispatch, no pytree
work. Later calls with the same signature (pytree structure, shapes, dtypes, Python scalars'
types, static values) run that function: the cost of a cache hit is flattening the
arguments and looking up the signature.

A jitted function called with tracers of other transforms is one `JitCall`
(`transforms.jit_call`): under ``grad`` one record whose forward and backward are compiled
programs (the backward on the forward's saved residuals), under ``jvp`` the jitted JVP;
inside another jit it is traced inline.
"""
from __future__ import annotations

import functools
import inspect
import warnings
from typing import Any, Callable, Sequence

import numpy as np

import funcgrad.numpy as fnp
from funcgrad import tree_util
from funcgrad.array import Array, WeakArray, is_weak, new_array, weakened
from funcgrad._config import float_checks
from funcgrad._results import check_floats
from funcgrad.core import Tracer
from funcgrad.dtypes import check_numeric, check_python_int
from funcgrad.meta import ShapeDtypeStruct, to_meta
from funcgrad.primitives import sampling
from funcgrad.ref import (check_jit_args, check_jit_result, flatten_holding_refs,
                          undone_on_error)
from . import argspec
from . import compile as compiler
from .jit_trace import (  # noqa: F401 (JitTracer, StagedClosureError: re-exported)
    SCALAR_TYPES, ClosedOverTracer, JitTrace, JitTracer, StagedClosureError, trace_to_tape)
from .jit_call import JitCall, _raw, jit_call_p
from .jit_explain import explain_cache_miss
from .tape import Tape
from .jit_aot import Compiled, Lowered, Traced  # noqa: F401 (Compiled: re-exported)

__all__ = ["jit", "JitTrace", "JitTracer", "Jitted", "Lowered", "Compiled", "Traced",
           "make_jaxpr",
           "trace_to_tape", "StagedClosureError"]

# ---------------------------------------------------------------------------------------
# Signatures: what a compiled program is specialised to
# ---------------------------------------------------------------------------------------

def _leaf_signature(x: Any) -> tuple:
    """What the program depends on about one argument leaf: the type of a Python number
    (weakly typed: its value is an input), else shape, dtype and device."""
    t = type(x)
    if t in SCALAR_TYPES:
        if t is int:  # (JAX's OverflowError, not an object array inside the program)
            check_python_int(x)
        return (t,)
    if t is Array:
        return (x.shape, x.dtype, x.device)
    if t is WeakArray:  # (its results may be weak too: a program of its own)
        return (x.shape, x.dtype, x.device, "weak")
    if isinstance(x, np.ndarray):
        check_numeric(x)  # (JAX's refusal at the boundary, not an error inside the program)
        return (x.shape, x.dtype, "cpu")
    if isinstance(x, Array):  # a tracer: the call is a TraceCall (never cached)
        return (x.shape, x.dtype, "tracer")
    if isinstance(x, np.generic):
        return (x.shape, x.dtype, "cpu")
    raise TypeError(f"jit: an argument of type {t.__name__} is not an array; pass Arrays, "
                    "numpy arrays or Python numbers, or mark the argument static with "
                    "static_argnums / static_argnames")


def _hashable(value: Any, what: str) -> Any:
    try:
        hash(value)
    except TypeError:
        raise ValueError(
            f"Non-hashable static arguments are not supported. An error occurred while "
            f"trying to hash an object of type {type(value)}, {value!r}, passed as {what}. "
            "Pass it as a regular (traced) argument, or make it hashable (a tuple instead "
            "of a list, for example).") from None
    return value


def _array_call(args: tuple, static: frozenset) -> tuple[list, tuple, list] | None:
    """(raw values, signature, leaves) of positional arguments that are each static (at the
    positions ``static``), a CPU `Array` or a list or tuple of them: the common call, whose
    signature is read here without the general flattening (its tree follows from the
    argument types and lengths). None for any other call."""
    leaves: list = []
    structure = []
    for i, a in enumerate(args):
        t = type(a)
        if i in static:
            structure.append((i, a))
        elif t is Array:
            leaves.append(a)
            structure.append(t)
        elif t is list or t is tuple:
            leaves += a
            structure.append((t, len(a)))
        else:
            return None
    raws = []
    for x in leaves:
        if type(x) is not Array:
            return None
        raw = x._value
        if type(raw) is not np.ndarray:
            return None
        raws.append(raw)
    return raws, (tuple(structure), tuple([x.shape for x in leaves]),
                  tuple([x.dtype for x in leaves])), leaves


def _signature_and_raws(leaves: list) -> tuple[tuple, list] | None:
    """(the signature, the raw values) of a call's dynamic leaves, in one pass; None if a
    leaf is a tracer of another transform."""
    signature, raws = [], []
    for x in leaves:
        if type(x) is Array:  # the common leaf, inline
            raw = x._value
            signature.append((x.shape, x.dtype, "cpu" if type(raw) is np.ndarray
                              else x.device))
            raws.append(raw)
        elif isinstance(x, Tracer):
            return None
        else:
            signature.append(_leaf_signature(x))
            raws.append(_raw(x))
    return tuple(signature), raws


class _Entry:
    """One compiled program: the function, its output structure, what it was traced
    from (for `Lowered`) and which outputs are weakly typed (the traced values' weak
    types: the program computes raw arrays, whose dtypes were fixed while tracing)."""

    __slots__ = ("fn", "out_tree", "tape", "program", "weak")

    def __init__(self, fn: Callable, out_tree: Any, tape: Tape, program: Any,
                 values: Sequence):
        self.fn = fn
        self.out_tree = out_tree
        self.tape = tape
        self.program = program
        self.weak = tuple(k for k, v in enumerate(values) if is_weak(v))

    def run(self, raws: list) -> Any:
        """The outputs (as Arrays, in their tree) of the program on raw inputs."""
        outs = [new_array(o) for o in self.fn(*raws)]
        for k in self.weak:
            outs[k] = weakened(outs[k])
        return self.out_tree.unflatten(outs)


class Jitted:
    """``jit(fun)``: calls ``fun`` through compiled programs, one per signature."""

    RETRACE_WARNING = 16  # signatures after which a warning names the changing argument

    def __init__(self, fun: Callable, static_argnums: Sequence[int] = (),
                 static_argnames: Sequence[str] = (), donate_argnums: Sequence[int] = ()):
        functools.update_wrapper(self, fun)
        if not hasattr(self, "__name__"):  # a partial, a primitive, a callable object
            self.__name__ = getattr(type(fun), "__name__", "fun")
        self.fun = fun
        self.static_argnums = frozenset(_as_tuple(static_argnums))
        self.static_argnames = frozenset(_as_tuple(static_argnames))
        self.donate_argnums = frozenset(_as_tuple(donate_argnums))
        argspec.validate_argnums(fun, _as_tuple(static_argnums), "static_argnums")
        argspec.validate_argnames(fun, _as_tuple(static_argnames), "static_argnames")
        argspec.validate_argnums(fun, _as_tuple(donate_argnums), "donate_argnums")
        self._cache: dict = {}
        # `_array_call` signature -> (the same calls' _Entry, their donated leaf positions)
        self._array_calls: dict = {}
        self._params = _positional_names(fun)
        self._static_positions = self.static_argnums | {
            i for i, name in self._params.items() if name in self.static_argnames}
        self._flats: dict = {}    # (static, tree) -> the flat function of those calls
        self._derived: dict = {}  # (static, tree, kind) -> a Jitted derived function
        self._vjp_tapes: dict = {}  # (static, tree, wanted, inputs' key) -> a call's tape
        self._backward_keys: dict = {}  # those keys -> numbers naming their backward
        self._unsaving: set = set()  # (static, tree, kind) of calls that cannot save
        self.uncompilable: set = set()  # derived functions that run as traced instead
        self.refuse_closures = False  # (a derived function's: see `ClosedOverTracer`)
        self._warned = False

    # -- the call ------------------------------------------------------------------------
    def _split(self, args: tuple, kwargs: dict) -> tuple[tuple, list, Any, tuple]:
        """(static part of the signature, dynamic leaves, their tree, donated leaf
        positions)."""
        if not (kwargs or self.static_argnums or self.static_argnames
                or self.donate_argnums):  # the common call: only dynamic positionals
            leaves, tree = flatten_holding_refs((args, {}))
            return (), leaves, tree, ()
        static = []
        dynamic = []
        donated: list = []
        for i, a in enumerate(args):
            if i in self.static_argnums or self._params.get(i) in self.static_argnames:
                static.append((i, _hashable(a, f"static argument {i}")))
            else:
                dynamic.append(a)
        dyn_kwargs = {}
        for k in sorted(kwargs):
            if k in self.static_argnames:
                static.append((k, _hashable(kwargs[k], f"static argument {k!r}")))
            else:
                dyn_kwargs[k] = kwargs[k]
        leaves, tree = flatten_holding_refs((tuple(dynamic), dyn_kwargs))
        if self.donate_argnums:
            donated = self._donated_leaves(args, leaves)
        return tuple(static), leaves, tree, tuple(donated)

    def _donated_leaves(self, args: tuple, leaves: list) -> list:
        ids = set()
        for i in self.donate_argnums:
            if i < len(args) and i not in self.static_argnums:
                ids.update(id(x) for x in tree_util.tree_leaves(args[i]))
        return [k for k, x in enumerate(leaves) if id(x) in ids and type(x) is Array]

    def __call__(self, *args: Any, **kwargs: Any) -> Any:
        if float_checks.on:
            return self._checked_call(args, kwargs)
        if not kwargs:  # a cache hit of the common call costs this
            found = _array_call(args, self._static_positions)
            if found is not None:
                raws, signature, leaves = found
                try:
                    hit = self._array_calls.get(signature)
                except TypeError:  # an unhashable static argument: the general path says so
                    return self._call(args, kwargs)
                if hit is None:
                    return self._first_array_call(args, signature)
                entry, donated = hit
                if not donated:
                    return entry.run(raws)
                if len({id(r) for r in raws}) == len(raws):  # else: which is donated?
                    out = entry.run(raws)
                    _delete(leaves, donated)
                    return out
        return self._call(args, kwargs)

    def _checked_call(self, args: tuple, kwargs: dict) -> Any:
        """A call under ``jax_debug_nans`` / ``jax_debug_infs``: a NaN (infinity) among the
        results makes the function run again without jit, where the operation making it
        raises (JAX's way to name it)."""
        out = self._call(args, kwargs)
        try:
            check_floats(f"jit({self.__name__})", tree_util.tree_leaves(out))
        except FloatingPointError as e:
            if self.donate_argnums:
                raise FloatingPointError(f"{e} (its donated arguments are gone: call it "
                                         "without donate_argnums to find the operation)")
            self.fun(*args, **kwargs)  # the operation making it raises here
            raise FloatingPointError(
                f"{e}; run again without jit, the function produced none: the compiled "
                "program computed differently (an operation reordered or fused)") from None
        return out

    def _first_array_call(self, args: tuple, signature: tuple) -> Any:
        """An array call of a new `_array_call` signature: the general call, whose entry
        (and donated leaf positions) later calls of this signature then find directly."""
        static, leaves, tree, donated = self._split(args, {})
        out = self._call(args, {})
        key = (static, tree, tuple((x.shape, x.dtype, "cpu") for x in leaves), donated)
        entry = self._cache.get(key)
        if entry is not None and len({id(x) for x in leaves}) == len(leaves):
            self._array_calls[signature] = (entry, donated)
        return out

    def _call(self, args: tuple, kwargs: dict) -> Any:
        static, leaves, tree, donated = self._split(args, kwargs)
        found = _signature_and_raws(leaves)
        if found is None:  # a tracer among the leaves
            return self._traced_call(args, kwargs, static, leaves, tree)
        signature, raws = found
        key = (static, tree, signature, donated)
        entry = self._cache.get(key)
        if entry is None:
            return self._first_call(key, static, leaves, tree, donated)
        out = entry.run(raws)
        _delete(leaves, donated)
        return out

    def executable(self, *args: Any, **kwargs: Any) -> compiler.Program | None:
        """The compiled program a call with these arguments runs (`compile.Program`: a
        callable, with the inputs it never reads), a function of the dynamic leaves' raw
        (numpy, cupy) arrays returning the raw outputs, flat; None
        until a call of this signature has compiled it. For a caller that checks the
        signature of its calls itself and then calls the program directly (the facade's
        compiled training step): the function does not check its inputs, and it may
        write into the donated ones."""
        static, leaves, tree, donated = self._split(args, kwargs)
        found = _signature_and_raws(leaves)
        entry = None if found is None else self._cache.get(
            (static, tree, found[0], donated))
        return None if entry is None else entry.program

    def _flat_fun(self, static: tuple, tree: Any) -> Callable:
        """The user's function on the flat dynamic leaves, returning flat outputs (and
        recording the output structure in ``out_trees``), one per (static, tree)."""
        found = self._flats.get((static, tree))
        if found is not None:
            return found
        fun, statics = self.fun, dict(static)
        out_trees: list = []

        def flat(*leaves: Any) -> list:
            dynamic, kwargs = tree.unflatten(list(leaves))
            it = iter(dynamic)
            n = len(dynamic) + sum(1 for k in statics if isinstance(k, int))
            full = [statics[i] if i in statics else next(it) for i in range(n)]
            kwargs.update({k: v for k, v in statics.items() if isinstance(k, str)})
            passed = check_jit_args(fun, full, kwargs)
            out = fun(*full, **kwargs)
            check_jit_result(fun, out, passed)
            out_leaves, out_tree = tree_util.tree_flatten(out)
            out_trees.append(out_tree)
            return out_leaves

        flat.__name__ = getattr(fun, "__name__", "fun")
        flat.out_trees = out_trees  # type: ignore[attr-defined]
        self._flats[(static, tree)] = flat
        return flat

    def derived(self, static: tuple, tree: Any, kind: str, fun: Callable) -> "Jitted":
        """The jitted version of a flat function derived from this one for calls of
        (static, tree): its forward, VJP or JVP; made once."""
        found = self._derived.get((static, tree, kind))
        if found is None:
            def flat(*leaves: Any) -> tuple:
                return tuple(fun(*leaves))
            flat.__name__ = f"{kind}_{self.__name__}"
            found = self._derived[(static, tree, kind)] = Jitted(flat)
            found.refuse_closures = True  # its callers fall back on the function itself
        return found

    def _backward_index(self, key: tuple) -> int:
        """A number for a traced call's tape key (names its backward program)."""
        return self._backward_keys.setdefault(key, len(self._backward_keys))

    def _trace(self, static: tuple, leaves: list, tree: Any, effects: bool = True) -> tuple:
        flat = self._flat_fun(static, tree)
        inputs = [x if type(x) in SCALAR_TYPES or isinstance(x, Array) else fnp.asarray(x)
                  for x in leaves]
        with undone_on_error():
            tape, values, trace = trace_to_tape(flat, inputs, f"jit({flat.__name__})",
                                                self.refuse_closures, effects)
        return tape, values, trace, flat.out_trees[-1]

    def _first_call(self, key: tuple, static: tuple, leaves: list, tree: Any,
                    donated: tuple) -> Any:
        explain_cache_miss(self, key, self._params)
        tape, values, trace, out_tree = self._trace(static, leaves, tree)
        if not trace.closures:
            program = compiler.compile_tape(tape, trace.weak_vars, donated,
                                            blocks=_on_cpu(leaves))
            self._cache[key] = _Entry(program.fn, out_tree, tape, program, values)
            self._check_retracing(key)
        given = {id(leaves[k]) for k in donated}  # a donated input returned as it is: a
        out = out_tree.unflatten([  # new Array of its buffer, which the deletion keeps
            (new_array(v._value) if id(v) in given else v) if isinstance(v, Array)
            else fnp.asarray(v) for v in values])
        _delete(leaves, donated)
        return out

    def _traced_call(self, args: tuple, kwargs: dict, static: tuple, leaves: list,
                     tree: Any) -> Any:
        """A call with tracers of outer transforms among the arguments: one `JitCall`."""
        flat = self._flat_fun(static, tree)
        call = JitCall(self, flat, static, tree)
        try:
            outs = call.bind(leaves)
        except ClosedOverTracer:  # it reads an outer transform's value: run it as traced
            if self.refuse_closures:
                raise  # (a derived function: the user's own falls back as a whole)
            outs = flat(*leaves)
        return flat.out_trees[-1].unflatten(list(outs))

    # -- retracing -----------------------------------------------------------------------
    def _check_retracing(self, key: tuple) -> None:
        if self._warned or len(self._cache) <= self.RETRACE_WARNING:
            return
        self._warned = True
        keys = list(self._cache)
        changing = _changing_part(keys)
        warnings.warn(
            f"jit({self.__name__}) has been traced {len(keys)} times, for {len(keys)} "
            f"different signatures; {changing} keeps changing. Each new signature traces "
            "and compiles again: keep shapes and dtypes fixed, pass varying Python values "
            "as arguments rather than static ones, or pad inputs to a few sizes.",
            stacklevel=3)

    def _cache_size(self) -> int:
        """How many compiled programs (signatures) this function has."""
        return len(self._cache)

    def clear_cache(self) -> None:
        self._cache.clear()
        self._array_calls.clear()

    # -- inspection ----------------------------------------------------------------------
    def lower(self, *args: Any, **kwargs: Any) -> "Lowered":
        """The traced program for these arguments (``.as_text()``), and ``.compile()``.
        A `ShapeDtypeStruct` stands for an argument of its shape and dtype (traced on a
        meta array: nothing is computed)."""
        static, leaves, tree, donated = self._split(args, kwargs)
        leaves = [to_meta(x) if isinstance(x, ShapeDtypeStruct) else x for x in leaves]
        tape, _, trace, out_tree = self._trace(static, leaves, tree, effects=False)
        return Lowered(tape, trace.weak_vars, donated, _on_cpu(leaves),
                       calling=(self._split, static, tree, out_tree))

    def trace(self, *args: Any, **kwargs: Any) -> Traced:
        """JAX's first ahead-of-time stage: the traced program (``.jaxpr``), its outputs'
        shapes and dtypes (``.out_info``), and ``.lower()``."""
        lowered = self.lower(*args, **kwargs)
        _, static, tree, _ = lowered.calling
        return Traced(lowered, self.__name__, self._flat_fun(static, tree))

    def __repr__(self) -> str:
        return f"<jitted function {self.__name__}>"

    def __get__(self, obj: Any, objtype: Any = None) -> Any:
        """Jitted methods bind like functions (``self`` is an argument)."""
        return self if obj is None else functools.partial(self, obj)


def _changing_part(keys: list) -> str:
    """Which part of the signatures differs most often among ``keys``."""
    counts: dict = {}
    first = keys[0]
    for key in keys[1:]:
        if key[0] != first[0]:
            counts["a static argument"] = counts.get("a static argument", 0) + 1
        if key[1] != first[1]:
            counts["the argument tree structure"] = counts.get(
                "the argument tree structure", 0) + 1
        for i, (a, b) in enumerate(zip(key[2], first[2])):
            if a != b:
                name = f"argument leaf {i} (shape/dtype {a})"
                counts[name] = counts.get(name, 0) + 1
    return max(counts, key=counts.get) if counts else "the signature"


def _as_tuple(x: Any) -> tuple:
    if x is None:
        return ()
    return (x,) if isinstance(x, (int, str)) else tuple(x)


def _positional_names(fun: Callable) -> dict:
    try:
        params = inspect.signature(fun).parameters.values()
    except (TypeError, ValueError):
        return {}
    return {i: p.name for i, p in enumerate(params)
            if p.kind in (p.POSITIONAL_ONLY, p.POSITIONAL_OR_KEYWORD)}


class _Deleted:
    """What a donated Array holds once a jitted call has taken its buffer."""

    __slots__ = ()

    def __getattr__(self, name: str) -> Any:
        raise RuntimeError("Array has been deleted: it was donated to a jitted call "
                           "(donate_argnums), which may have reused its memory. Use the "
                           "call's result instead, or do not donate this argument.")

    def __array__(self, *args: Any, **kwargs: Any) -> Any:
        return self.__getattr__("__array__")


_DELETED = _Deleted()


def _on_cpu(leaves: list) -> bool:
    """Whether every argument leaf is a host value: only host programs run elementwise
    calls chunk by chunk (`compile_blocks`: on a GPU each chunk would be a kernel
    launch)."""
    return all(getattr(x, "device", "cpu") == "cpu" for x in leaves
               if type(x) not in SCALAR_TYPES)


def _delete(leaves: list, donated: tuple) -> None:
    for k in donated:
        leaves[k]._value = _DELETED


def jit(fun: Callable | None = None, *, static_argnums: Any = (), static_argnames: Any = (),
        donate_argnums: Any = ()) -> Any:
    """Compile ``fun``: trace it once per argument signature into a tape and run later
    calls as a generated numpy program (JAX's ``jax.jit``). Usable as ``@jit`` or
    ``@jit(static_argnums=...)``."""
    if fun is None:
        return functools.partial(jit, static_argnums=static_argnums,
                                 static_argnames=static_argnames,
                                 donate_argnums=donate_argnums)
    if isinstance(fun, Jitted):
        return fun
    return Jitted(fun, static_argnums, static_argnames, donate_argnums)


def make_jaxpr(fun: Callable, static_argnums: Any = ()) -> Callable[..., Tape]:
    """``make_jaxpr(f)(*args)``: the program jit would compile for these arguments, as a
    `Tape` that prints like a jaxpr."""
    jitted = Jitted(fun, static_argnums)

    def jaxpr(*args: Any, **kwargs: Any) -> Tape:
        return jitted.lower(*args, **kwargs).tape

    return jaxpr


def _sample_jit_call(rng: Any, draw: Callable) -> list:
    """Registry test cases: a jitted function (differentiated from outside: its VJP and
    JVP are jitted programs too)."""
    shape = sampling.draw_shape(draw)

    def body(x: Any, y: Any) -> Any:
        return fnp.sin(x * y) + fnp.exp(y) * x
    args = (sampling.values(rng, shape), sampling.values(rng, shape))
    return [sampling.Case(Jitted(body), args, f"jit {shape}")]


jit_call_p.sample = sampling.custom(_sample_jit_call)
