"""``jax.interpreters.ad``'s names: JVP and transpose rules of JAX-style primitives.

``primitive_jvps[p] = rule`` with ``rule(primals, tangents, **params) -> (out,
tangent)`` (`Zero` for tangents known to be zero) gives ``p`` forward mode, and reverse
mode by transposing the rule's tangent map (`funcgrad.transforms.linear`), for which
``primitive_transposes[q] = rule`` with ``rule(ct, *args, **params)`` (`UndefinedPrimal`
for the linear arguments) must exist for each JAX-style primitive ``q`` the JVP applies to
tangents. ``defjvp``, ``defjvp2`` and ``deflinear`` build such rules from simpler ones.
"""
from __future__ import annotations

from typing import Any, Callable, Sequence

from funcgrad.core import Primitive
from funcgrad.extend.primitive import JaxStylePrimitive
from funcgrad.interpreters._table import RuleTable
from funcgrad.transforms.linear import (UndefinedPrimal, Zero, instantiate_zeros,
                                        is_undefined_primal)

__all__ = ["Zero", "UndefinedPrimal", "is_undefined_primal", "instantiate_zeros",
           "primitive_jvps", "primitive_transposes", "defjvp", "defjvp2", "deflinear",
           "deflinear2"]


def _jax_style(prim: Primitive, what: str) -> JaxStylePrimitive:
    if not isinstance(prim, JaxStylePrimitive):
        raise TypeError(f"{what} are declared here for primitives made with "
                        f"Primitive(name); funcgrad's own primitive '{prim.name}' has its "
                        "rules (defjvp/defvjp on it)")
    return prim


def _put_jvp(prim: Primitive, rule: Callable | None) -> None:
    _jax_style(prim, "JVP rules").jvp_rule_full = rule


def _put_transpose(prim: Primitive, rule: Callable | None) -> None:
    _jax_style(prim, "transpose rules").transpose_rule = rule


primitive_jvps = RuleTable(
    "JVP rules", lambda p: p.jvp_rule_full if isinstance(p, JaxStylePrimitive) else None,
    _put_jvp)
primitive_transposes = RuleTable(
    "transpose rules",
    lambda p: p.transpose_rule if isinstance(p, JaxStylePrimitive) else None, _put_transpose)


def _add(a: Any, b: Any, multiple: bool) -> Any:
    if a is None:
        return b
    return tuple(x + y for x, y in zip(a, b)) if multiple else a + b


def _defjvp(prim: Primitive, rules: Sequence[Callable | None], with_out: bool) -> None:
    """The JVP summing ``rule(t, [out,] *primals, **params)`` over the inputs whose
    tangent is not zero (``None`` rules: the output does not depend on that input)."""
    def jvp(primals: tuple, tangents: tuple, **params: Any) -> tuple:
        out = prim.bind(*primals, **params)
        lead = (out,) if with_out else ()
        total = None
        for rule, t in zip(rules, tangents):
            if rule is not None and type(t) is not Zero:
                total = _add(total, rule(t, *lead, *primals, **params), prim.multiple_results)
        if total is None:
            total = (tuple(map(Zero.from_primal_value, out)) if prim.multiple_results
                     else Zero.from_primal_value(out))
        return out, total
    primitive_jvps[prim] = jvp


def defjvp(primitive: Primitive, *jvprules: Callable | None) -> None:
    """One rule per input: ``rule(t, *primals, **params)``, its tangent contribution."""
    _defjvp(primitive, jvprules, with_out=False)


def defjvp2(primitive: Primitive, *jvprules: Callable | None) -> None:
    """As `defjvp`, the rules also handed the output: ``rule(t, out, *primals,
    **params)``."""
    _defjvp(primitive, jvprules, with_out=True)


def deflinear2(primitive: Primitive, transpose_rule: Callable) -> None:
    """A primitive linear in all its inputs: its JVP applies it to the tangents, and
    ``transpose_rule(ct, *args, **params)`` transposes it."""
    def jvp(primals: tuple, tangents: tuple, **params: Any) -> tuple:
        return (primitive.bind(*primals, **params),
                primitive.bind(*map(instantiate_zeros, tangents), **params))
    primitive_jvps[primitive] = jvp
    primitive_transposes[primitive] = transpose_rule


def deflinear(primitive: Primitive, transpose_rule: Callable) -> None:
    """As `deflinear2`, with ``transpose_rule(ct, **params)`` (the arguments unread)."""
    deflinear2(primitive, lambda ct, *args, **params: transpose_rule(ct, **params))
