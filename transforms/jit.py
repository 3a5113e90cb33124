"""`jit`: trace a function once per signature, compile its tape to straight-line numpy.

Tracing runs the function on `JitTracer`s of a `JitTrace` (`transforms.jit_trace`): a
trace that records every primitive call and refuses to let Python look at values.

The tape is handed to `transforms.compile`, which writes one Python function calling each
primitive's implementation on raw numpy (or cupy) arrays: no tracers, no dispatch, no pytree
work. Later calls with the same signature (pytree structure, shapes, dtypes, Python scalars'
types, static values) run that function: the cost of a cache hit is flattening the
arguments and looking up the signature.

A jitted function called with tracers of other transforms is one `TraceCall`: under
``grad`` it records one node, run by a compiled forward program that also returns the
residuals of its VJP, and whose backward is a compiled program of that VJP on the saved
residuals (nothing recomputed; where the call is itself differentiated again, or replayed
by a checkpoint, the backward is the jitted VJP of the function, which recomputes the
forward pass as a checkpoint would); under ``jvp`` it runs the jitted JVP; inside another
jit it is traced inline.
"""
from __future__ import annotations

import functools
import inspect
import warnings
from typing import Any, Callable, Sequence

import numpy as np

import funcgrad.numpy as fnp
from funcgrad import tree_util
from funcgrad.array import Array, new_array
from funcgrad.core import Primitive, TraceCall, Tracer, is_inexact
from funcgrad.primitives import sampling
from . import compile as compiler
from .grad import float0, vjp
from .jit_trace import (  # noqa: F401 (JitTracer, StagedClosureError: re-exported)
    SCALAR_TYPES, JitTrace, JitTracer, StagedClosureError, trace_to_tape)
from .jvp import jvp
from .tape import RevTrace, Tape, trace_flat
from .tape_text import tape_text
from . import vmap_calls

__all__ = ["jit", "JitTrace", "JitTracer", "Jitted", "Lowered", "make_jaxpr",
           "trace_to_tape", "StagedClosureError"]

# ---------------------------------------------------------------------------------------
# Signatures: what a compiled program is specialised to
# ---------------------------------------------------------------------------------------

def _leaf_signature(x: Any) -> tuple:
    """What the program depends on about one argument leaf: the type of a Python number
    (weakly typed: its value is an input), else shape, dtype and device."""
    t = type(x)
    if t in SCALAR_TYPES:
        return (t,)
    if t is Array:
        return (x.shape, x.dtype, x.device)
    if isinstance(x, np.ndarray):
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


def _raw(x: Any) -> Any:
    """The backend value a compiled program takes for an argument leaf: a numpy scalar
    becomes the 0-d array the tracing run saw (numpy's scalar loops may round differently
    from its array loops: complex square, for one)."""
    if type(x) is Array:
        return x._value
    return np.asarray(x) if isinstance(x, np.generic) else x


def _array_call(args: tuple, static: frozenset) -> tuple[list, tuple] | None:
    """(raw values, signature) of positional arguments that are each static (at the
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
                  tuple([x.dtype for x in leaves]))


class _Entry:
    """One compiled program: the function, its output structure and what it was traced
    from (for `Lowered`)."""

    __slots__ = ("fn", "out_tree", "tape", "program")

    def __init__(self, fn: Callable, out_tree: Any, tape: Tape, program: Any):
        self.fn = fn
        self.out_tree = out_tree
        self.tape = tape
        self.program = program

    def run(self, raws: list) -> Any:
        """The outputs (as Arrays, in their tree) of the program on raw inputs."""
        return self.out_tree.unflatten([new_array(o) for o in self.fn(*raws)])


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
        self._cache: dict = {}
        self._array_calls: dict = {}  # `_array_call` signature -> the same calls' _Entry
        self._params = _positional_names(fun)
        self._static_positions = self.static_argnums | {
            i for i, name in self._params.items() if name in self.static_argnames}
        self._plain = not self.donate_argnums  # calls `_array_call` may read
        self._flats: dict = {}    # (static, tree) -> the flat function of those calls
        self._derived: dict = {}  # (static, tree, kind) -> a Jitted derived function
        self._vjp_tapes: dict = {}  # (static, tree, wanted, inputs' key) -> a call's tape
        self._backward_keys: dict = {}  # those keys -> numbers naming their backward
        self._unsaving: set = set()  # (static, tree, kind) of calls that cannot save
        self.uncompilable: set = set()  # derived functions that run as traced instead
        self._warned = False

    # -- the call ------------------------------------------------------------------------
    def _split(self, args: tuple, kwargs: dict) -> tuple[tuple, list, Any, tuple]:
        """(static part of the signature, dynamic leaves, their tree, donated leaf
        positions)."""
        if not (kwargs or self.static_argnums or self.static_argnames
                or self.donate_argnums):  # the common call: only dynamic positionals
            leaves, tree = tree_util.tree_flatten((args, {}))
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
        leaves, tree = tree_util.tree_flatten((tuple(dynamic), dyn_kwargs))
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
        if self._plain and not kwargs:  # a cache hit of the common call costs this
            found = _array_call(args, self._static_positions)
            if found is not None:
                try:
                    entry = self._array_calls.get(found[1])
                except TypeError:  # an unhashable static argument: the general path says so
                    return self._call(args, kwargs)
                if entry is not None:
                    return entry.run(found[0])
                return self._first_array_call(args, found[1])
        return self._call(args, kwargs)

    def _first_array_call(self, args: tuple, signature: tuple) -> Any:
        """An array call of a new `_array_call` signature: the general call, whose entry
        later calls of this signature then find directly."""
        out = self._call(args, {})
        static, leaves, tree, donated = self._split(args, {})
        key = (static, tree, tuple((x.shape, x.dtype, "cpu") for x in leaves), donated)
        entry = self._cache.get(key)
        if entry is not None:
            self._array_calls[signature] = entry
        return out

    def _call(self, args: tuple, kwargs: dict) -> Any:
        static, leaves, tree, donated = self._split(args, kwargs)
        signature, raws = [], []
        for x in leaves:  # the signature and the program's inputs, in one pass
            if type(x) is Array:  # the common leaf, inline
                raw = x._value
                signature.append((x.shape, x.dtype, "cpu" if type(raw) is np.ndarray
                                  else x.device))
                raws.append(raw)
            elif isinstance(x, Tracer):
                return self._traced_call(args, kwargs, static, leaves, tree)
            else:
                signature.append(_leaf_signature(x))
                raws.append(_raw(x))
        key = (static, tree, tuple(signature), donated)
        entry = self._cache.get(key)
        if entry is None:
            return self._first_call(key, static, leaves, tree, donated)
        out = entry.run(raws)
        _delete(leaves, donated)
        return out

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
            out_leaves, out_tree = tree_util.tree_flatten(fun(*full, **kwargs))
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
        return found

    def _backward_index(self, key: tuple) -> int:
        """A number for a traced call's tape key (names its backward program)."""
        return self._backward_keys.setdefault(key, len(self._backward_keys))

    def _trace(self, static: tuple, leaves: list, tree: Any) -> tuple:
        flat = self._flat_fun(static, tree)
        inputs = [x if type(x) in SCALAR_TYPES or isinstance(x, Array) else fnp.asarray(x)
                  for x in leaves]
        tape, values, trace = trace_to_tape(flat, inputs, f"jit({flat.__name__})")
        return tape, values, trace, flat.out_trees[-1]

    def _first_call(self, key: tuple, static: tuple, leaves: list, tree: Any,
                    donated: tuple) -> Any:
        tape, values, trace, out_tree = self._trace(static, leaves, tree)
        if not trace.closures:
            program = compiler.compile_tape(tape, trace.weak_vars, donated)
            self._cache[key] = _Entry(program.fn, out_tree, tape, program)
            self._check_retracing(key)
        out = out_tree.unflatten([v if isinstance(v, Array) else fnp.asarray(v)
                                  for v in values])
        _delete(leaves, donated)
        return out

    def _traced_call(self, args: tuple, kwargs: dict, static: tuple, leaves: list,
                     tree: Any) -> Any:
        """A call with tracers of outer transforms among the arguments: one `JitCall`."""
        flat = self._flat_fun(static, tree)
        call = JitCall(self, flat, static, tree)
        outs = call.bind(leaves)
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
        """The traced program for these arguments (``.as_text()``), and ``.compile()``."""
        static, leaves, tree, donated = self._split(args, kwargs)
        tape, _, trace, _ = self._trace(static, leaves, tree)
        return Lowered(tape, trace.weak_vars, donated)

    def trace(self, *args: Any, **kwargs: Any) -> "Lowered":
        return self.lower(*args, **kwargs)

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


def _delete(leaves: list, donated: tuple) -> None:
    for k in donated:
        leaves[k]._value = _DELETED


class Lowered:
    """A traced program: ``as_text()`` prints it (jaxpr style); ``compile()`` compiles it;
    ``compile().as_text()`` prints the generated source."""

    def __init__(self, tape: Tape, weak_vars: set, donated: tuple):
        self.tape = tape
        self.weak_vars = weak_vars
        self.donated = donated

    def as_text(self) -> str:
        return tape_text(self.tape)

    def compile(self) -> "compiler.Program":
        return compiler.compile_tape(self.tape, self.weak_vars, self.donated)

    def __str__(self) -> str:
        return self.as_text()


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


# ---------------------------------------------------------------------------------------
# A jitted call under other transforms
# ---------------------------------------------------------------------------------------

def _jit_call_impl(*raws: Any, call: "JitCall") -> tuple:
    """A recorded jitted call replayed without tracers: the compiled forward program."""
    return tuple(_raw(o) for o in call.forward(*[new_array(r) for r in raws]))


jit_call_p = Primitive("jit_call", _jit_call_impl, None, ("call",), multiple_results=True,
                       doc="A jitted function applied under other transforms.")
jit_call_p.defvjp_all(lambda g, xs, call: call.vjp(xs, g))
jit_call_p.defbatch(vmap_calls.call_rule)


def _sample_jit_call(rng: Any, draw: Callable) -> list:
    """Registry test cases: a jitted function (differentiated from outside: its VJP and
    JVP are jitted programs too)."""
    shape = sampling.draw_shape(draw)

    def body(x: Any, y: Any) -> Any:
        return fnp.sin(x * y) + fnp.exp(y) * x
    args = (sampling.values(rng, shape), sampling.values(rng, shape))
    return [sampling.Case(Jitted(body), args, f"jit {shape}")]


jit_call_p.sample = sampling.custom(_sample_jit_call)


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
        weak = x.weak_type if isinstance(x, JitTracer) else (
            type(x) if type(x) in SCALAR_TYPES else None)
        key.append(weak if weak is not None else (tuple(x.shape), x.dtype, x.device))
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
            outs = self.forward(*primals)
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
