"""Derivative rules: a rule function together with what it reads.

A rule's parameter names declare its inputs (see `Rule`); knowing them, the tape keeps
exactly the residuals a backward pass will read. `funcgrad.core.Primitive` makes one
`Rule` per declared function (``defvjp``, ``defjvp``); the backward pass calls
``rule.apply``.
"""
from __future__ import annotations

import inspect
from typing import Any, Callable, Sequence

__all__ = ["Rule"]


class Rule:
    """A derivative rule together with what it reads (made by a `Primitive`, whose
    ``source_of`` says where each of the function's parameters comes from).

    The parameter names of the function (after the first, which receives the cotangent or
    tangent) say what the rule needs: an input by its declared name, ``out`` for the
    output, a static param by name, ``params`` for all of them (a dict), ``<input>_shape`` / ``<input>_dtype``,
    ``<input>_layout`` (`layout_of`: a token a rule hands on to a kernel, unread), or for
    variadic primitives ``xs``, ``shapes``, ``dtypes`` and ``argnum``. Knowing this, the
    tape keeps exactly the residuals the backward pass will read and nothing else: a rule
    that needs an input's layout only (to lay its result out alike) keeps a token, not the
    array.
    """

    __slots__ = ("fn", "sources", "inputs_read", "reads_out", "reads_avals", "layouts_read",
                 "apply")

    def __init__(self, prim: Any, fn: Callable, kind: str):
        names = list(inspect.signature(fn).parameters)[1:]
        self.fn = fn
        self.sources = tuple(prim.source_of(n, fn, kind) for n in names)
        self.inputs_read = frozenset(s[1] for s in self.sources if s[0] == "in") | (
            frozenset(["all"]) if ("xs",) in self.sources else frozenset())
        self.reads_out = ("out",) in self.sources
        self.reads_avals = any(s[0] in ("shape", "dtype", "layout", "shapes", "dtypes")
                               for s in self.sources)
        self.layouts_read = frozenset(s[1] for s in self.sources if s[0] == "layout")
        self.apply = self._specialized()

    def _specialized(self) -> Callable:
        """``apply(ct, argnum, ins, out, avals, params)``: the rule handed what it reads.
        The rules reading nothing, one input or the output (most of them) get a direct
        closure: the backward pass calls one per recorded input."""
        fn, sources = self.fn, self.sources
        if not sources:
            return lambda ct, argnum, ins, out, avals, params: fn(ct)
        if len(sources) == 1 and sources[0][0] == "in":
            k = sources[0][1]
            return lambda ct, argnum, ins, out, avals, params: fn(ct, ins[k])
        if sources == (("out",),):
            return lambda ct, argnum, ins, out, avals, params: fn(ct, out)
        return self._general

    def _general(self, ct: Any, argnum: int, ins: Sequence[Any], out: Any,
                 avals: Sequence[tuple] | None, params: dict) -> Any:
        """The rule on cotangent (or tangent) ``ct``, given the inputs, the output, the
        inputs' (shape, dtype) and the params, of which it is handed what it declared."""
        args = [ct]
        for s in self.sources:
            kind = s[0]
            if kind == "in":
                args.append(ins[s[1]])
            elif kind == "out":
                args.append(out)
            elif kind == "param":
                args.append(params[s[1]])
            elif kind == "params":
                args.append(params)
            elif kind == "shape":  # (the commonest aval, without `_aval_source`'s call)
                args.append(avals[s[1]][0])
            else:
                args.append(_aval_source(s, argnum, ins, avals))
        return self.fn(*args)


def _aval_source(source: tuple, argnum: int, ins: Sequence, avals: Sequence) -> Any:
    kind = source[0]
    if kind == "dtype":
        return avals[source[1]][1]
    if kind == "layout":
        return avals[source[1]][2]
    if kind == "xs":
        return tuple(ins)
    if kind == "shapes":
        return tuple(a[0] for a in avals)
    if kind == "dtypes":
        return tuple(a[1] for a in avals)
    return argnum
