"""Primitives defined the JAX way: ``p = Primitive("name")``, then ``def_impl``,
``def_abstract_eval``, and rules in ``funcgrad.interpreters.ad`` / ``.batching`` / ``.mlir``.

Such a primitive is a registry `funcgrad.core.Primitive` like funcgrad's own, so it takes
the one dispatch path (`funcgrad.core.bind`) and every transform sees it as a primitive
(it is an equation of `make_jaxpr`'s program). What the user defines fills the registry
primitive's parts:

- ``def_impl``: its implementation (on numpy arrays; what it returns is converted);
- ``def_abstract_eval``: its shapes on meta arrays (`eval_shape`), and what `jit` checks
  before recording a call (JAX needs it to trace: so does funcgrad's jit);
- the JVP rule (``ad.primitive_jvps``): forward mode, through ``Primitive.jvp_full``;
- reverse mode: the JVP rule linearized and transposed (`funcgrad.transforms.linear`),
  with the transpose rules (``ad.primitive_transposes``) of the primitives it uses linearly;
- the batching rule (``batching.primitive_batchers``): funcgrad's batch rule, same form;
- the lowering (``mlir.register_lowering``): what compiled programs call (``lowering``).

``funcgrad.core.Primitive("name")`` (one argument, as JAX's ``core.Primitive``) makes one
of these: this module registers its class as that constructor's kind.
"""
from __future__ import annotations

from typing import Any, Callable, Sequence

import funcgrad.numpy as fnp
from funcgrad.array import Array, to_raw
from funcgrad.avals import ShapedArray, shaped_array_of
from funcgrad.core import ONE_ARGUMENT_KIND, Trace, Tracer, registry
from funcgrad.meta import def_meta_impl
from funcgrad.transforms.linear import TransposablePrimitive, Zero, transpose_jvp

__all__ = ["JaxStylePrimitive"]


def _raw(x: Any) -> Any:
    """A user implementation's result as a backend value (it may use funcgrad ops)."""
    return x._value if type(x) is Array else to_raw(x)


def _same_aval(got: Any, want: Any) -> bool:
    return tuple(got.shape) == tuple(want.shape) and got.dtype == want.dtype


class JaxStylePrimitive(TransposablePrimitive):
    """``Primitive(name)``: a primitive whose rules are given one by one, as JAX's are.
    Its arguments are positional arrays (any number); keyword arguments of ``bind`` are
    its static parameters, handed to every rule."""

    def __init__(self, name: str):
        existing = registry().get(name)
        if existing is not None and not isinstance(existing, JaxStylePrimitive):
            raise ValueError(f"funcgrad has a primitive named {name!r} of its own; give "
                             "the new primitive another name")

        def missing_impl(*args: Any, **params: Any) -> Any:
            raise NotImplementedError(f"Evaluation rule for '{name}' not implemented")
        # (an existing JAX-style one of this name is replaced: a notebook cell re-run)
        super().__init__(name, missing_impl, None, replace=True)
        self.abstract_eval_rule: Callable | None = None
        self.jvp_rule_full: Callable | None = None  # JAX's form: (primals, tangents)
        self.transpose_rule: Callable | None = None
        self.jvp_full = self._jvp
        self.defvjp_all(self._vjp)
        self.defstage(self._stage)
        def_meta_impl(self, self._meta_eval)

    def __repr__(self) -> str:
        return self.name

    @property
    def multiple_results(self) -> bool:
        return self._multiple_results

    @multiple_results.setter
    def multiple_results(self, value: bool) -> None:
        self._multiple_results = bool(value)
        self.plain = not value  # (the core's fast path: one ndarray result)

    # -- what the user defines -----------------------------------------------------------
    def def_impl(self, impl: Any, fn: Callable | None = None) -> Callable:
        """``def_impl(impl)``: the implementation, on numpy arrays (JAX's form); with a
        backend name first, funcgrad's (`funcgrad.core.Primitive.def_impl`)."""
        if isinstance(impl, str):
            return super().def_impl(impl, fn)
        def run(*xs: Any, **params: Any) -> Any:
            out = impl(*xs, **params)
            return [_raw(o) for o in out] if self.multiple_results else _raw(out)
        run.__name__ = getattr(impl, "__name__", self.name)
        super().def_impl("cpu", run)
        return impl

    def def_abstract_eval(self, rule: Callable) -> Callable:
        """``rule(*avals, **params)`` -> the result's `ShapedArray` (a sequence of them
        with ``multiple_results``), from the inputs' `ShapedArray`."""
        self.abstract_eval_rule = rule
        return rule

    def abstract_eval(self, *avals: ShapedArray, **params: Any) -> Any:
        if self.abstract_eval_rule is None:
            raise NotImplementedError(f"Abstract evaluation for '{self.name}' not "
                                      "implemented")
        return self.abstract_eval_rule(*avals, **params)

    # -- what the transforms call -------------------------------------------------------
    def _meta_eval(self, *args: Any, **params: Any) -> Any:
        """The result on meta arrays: the abstract evaluation where there is one, else the
        implementation on stand-ins (as for funcgrad's primitives)."""
        avals = [shaped_array_of(a) for a in args]
        if self.abstract_eval_rule is not None:
            return self.abstract_eval(*avals, **params)
        out = self.impl(*[fnp.zeros(a.shape, a.dtype)._value for a in avals], **params)
        return [shaped_array_of(o) for o in out] if self.multiple_results else \
            shaped_array_of(out)

    def _jvp(self, primals: list, tangents: list, params: dict) -> tuple:
        """(out, its tangent; None where zero) by the JVP rule, given None for zero input
        tangents (JAX's rules take `Zero`)."""
        if self.jvp_rule_full is None:
            raise NotImplementedError(f"Differentiation rule for '{self.name}' not "
                                      "implemented")
        ts = [Zero.from_primal_value(p) if t is None else t
              for p, t in zip(primals, tangents)]
        out, t_out = self.jvp_rule_full(tuple(primals), tuple(ts), **params)
        if self.multiple_results:
            return (tuple(fnp.asarray(o) for o in out),
                    tuple(None if type(t) is Zero else t for t in t_out))
        return fnp.asarray(out), (None if type(t_out) is Zero else t_out)

    def _vjp(self, g: Any, xs: tuple, params: dict) -> list:
        """The VJP: the JVP rule's tangent map at ``xs``, transposed."""
        if self.jvp_rule_full is None:
            raise NotImplementedError(f"Differentiation rule for '{self.name}' not "
                                      "implemented")
        return transpose_jvp(lambda ts: self.jvp_rule_full(xs, tuple(ts), **params)[1],
                             xs, g)

    def transpose(self, ct: Any, args: Sequence, params: dict) -> list:
        if self.transpose_rule is None:
            raise NotImplementedError(f"Transpose rule (for reverse-mode differentiation) "
                                      f"for '{self.name}' not implemented")
        cts = self.transpose_rule(ct, *args, **params)
        return [None if c is None or type(c) is Zero else c for c in cts]

    def _stage(self, trace: Trace, args: Sequence, params: dict) -> Any:
        """jit records a call as JAX traces one: from the abstract evaluation (which must
        agree with the implementation) and with a lowering to compile."""
        want = self.abstract_eval(*[shaped_array_of(a) for a in args], **params)
        if self.lowering is None:
            raise NotImplementedError(f"MLIR translation rule for primitive '{self.name}' "
                                      "not found for platform cpu (register one with "
                                      "funcgrad.interpreters.mlir.register_lowering)")
        out = trace.stage(self, args, params)
        values = [trace.primal_of(a) for a in args]
        if not any(isinstance(v, Tracer) for v in values):  # fail now, not when run
            self.lowering(*[_raw(v) for v in values], **params)
        pairs = zip(out, want) if self.multiple_results else [(out, want)]
        for got, w in pairs:
            if not _same_aval(got, w):
                raise TypeError(f"the abstract evaluation of primitive '{self.name}' gives "
                                f"{w}, but its implementation returns "
                                f"{shaped_array_of(got).str_short()}")
        return out


ONE_ARGUMENT_KIND.append(JaxStylePrimitive)
