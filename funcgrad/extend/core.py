"""``jax.extend.core``'s names on funcgrad: programs as objects and their interpreter.

``Primitive(name)`` makes a primitive defined the JAX way (`funcgrad.extend.primitive`);
`make_jaxpr` returns a `Tape`, which stands for JAX's ``ClosedJaxpr`` and its ``Jaxpr``
(``.jaxpr``, ``.invars``, ``.outvars``, ``.eqns``, ``.in_avals``...); its records are the
equations (``.primitive``, ``.params``, ``.invars`` of `Var` and `Literal`, ``.outvars``).
`eval_jaxpr` runs one equation at a time by binding each primitive, as JAX's does, so a
custom interpreter written against JAX's (its own ``eval_jaxpr``, a registry keyed by
``lax.exp_p``...) runs on funcgrad's programs.
"""
from __future__ import annotations

from typing import Any, Callable

from funcgrad.core import Primitive, ShapedArray
from funcgrad.extend import primitive  # noqa: F401  (makes Primitive(name) JAX's kind)
from funcgrad.transforms.tape import Literal, Record, Tape, Var

__all__ = ["Primitive", "ShapedArray", "Var", "Literal", "Jaxpr", "ClosedJaxpr", "JaxprEqn", "eval_jaxpr",
           "jaxpr_as_fun"]

Jaxpr = ClosedJaxpr = Tape
JaxprEqn = Record


def eval_jaxpr(jaxpr: Tape, consts: list, *args: Any) -> list:
    """The outputs of program ``jaxpr`` on ``args`` (``consts`` for its constvars, which
    funcgrad's programs do not have: their constants are literals), one equation at a
    time, each primitive bound anew (so under a transform, the transform sees them)."""
    env: dict = {}

    def read(v: Any) -> Any:
        return v.val if type(v) is Literal else env[v]

    for v, x in zip(jaxpr.invars, args, strict=True):
        env[v] = x
    for v, x in zip(jaxpr.constvars, consts, strict=True):
        env[v] = x
    for eqn in jaxpr.eqns:
        outs = eqn.primitive.bind(*map(read, eqn.invars), **eqn.params)
        outs = outs if eqn.primitive.multiple_results else [outs]
        for v, x in zip(eqn.outvars, outs):
            env[v] = x
    return [read(v) for v in jaxpr.outvars]


def jaxpr_as_fun(closed: Tape) -> Callable[..., list]:
    """The function program ``closed`` computes (its flat outputs, as a list)."""
    return lambda *args: eval_jaxpr(closed.jaxpr, closed.consts, *args)
