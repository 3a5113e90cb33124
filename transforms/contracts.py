"""The contracts of the lax constructs' user functions, checked in one place with JAX's texts.

JAX traces every function a construct is given before running anything, so a branch that
returns another structure than its sibling, a loop body that changes its carry's shape, a
``cond_fun`` that returns a float or a scan body that returns one value instead of
``(carry, y)`` is refused whatever the values. funcgrad runs constructs eagerly where their
values are known, and a check made only where a construct is staged would let the same
program pass eagerly and fail under `jit`, or return a silently wrong answer. So each
construct calls these checks on every path: the staged one on its traced outputs, the eager
one on the actual outputs of each step and, for the branches not taken, on their outputs
evaluated abstractly (`abstract_outputs`: on meta arrays, shapes and dtypes only).

The custom derivative rules are checked here too, with JAX's texts: a custom_jvp rule must
return ``(primal_out, tangent_out)`` with the function's output structure and types and
tangents of the primal's tangent types, a custom_vjp ``fwd`` ``(out, residuals)`` with the
function's output structure and types, ``bwd`` one cotangent per primal input of its
structure and shapes. The rules' primal outputs are compared with the function's where it
has run for the call (staged under jit, replayed from a tape), as JAX compares them where it
has traced the function.

A type is ``(shape, dtype)``; a Python number is weakly typed (JAX's weak types): its dtype
gives way to the other side's, as JAX promotes a weakly typed initial carry.
"""
from __future__ import annotations

import contextlib
import inspect
from typing import Any, Callable, Sequence

import numpy as np

from funcgrad import tree_util
from funcgrad.core import active_traces, is_inexact
from funcgrad.meta import to_meta
from .grad import float0

__all__ = ["short", "check_branches", "check_carry", "check_pred", "split_pair",
           "abstract_outputs", "check_same_leaves", "split_jvp_rule_output",
           "split_fwd_output", "check_bwd_output"]

_WEAK = (bool, int, float, complex)


def _leaf_type(x: Any) -> tuple:
    if type(x) in _WEAK:
        return (), np.result_type(x), True
    return tuple(x.shape), np.dtype(x.dtype), False


def short(x: Any) -> str:
    """A value's type as JAX prints it: ``float32[3,2]``."""
    shape, dtype, _ = _leaf_type(x)
    return f"{dtype.name}[{','.join(str(d) for d in shape)}]"


def _kind(dtype: np.dtype) -> str:
    return {"u": "i"}.get(dtype.kind, dtype.kind)


def _mismatch(a: Any, b: Any, promotes: bool = False) -> str | None:
    """Why leaves ``a`` and ``b`` differ in type (JAX's explanation), None when they match.
    A weakly typed side matches the other's dtype of its kind of number; with ``promotes``
    (a loop's initial carry ``a``, which JAX promotes to the body's output type) a weakly
    typed ``a`` matches any dtype it casts to safely in kind (an int to a float)."""
    (sa, da, wa), (sb, db, wb) = _leaf_type(a), _leaf_type(b)
    if sa != sb:
        return "so the shapes do not match"
    if da == db or ((wa or wb) and _kind(da) == _kind(db)):
        return None
    if promotes and wa and np.can_cast(da, db, "same_kind"):
        return None
    return "so the dtypes do not match"


def _paths(tree: Any) -> list:
    return [tree_util.keystr(p) for p, _ in tree_util.tree_flatten_with_path(tree)[0]]


def _differences(lines: list) -> str:
    if len(lines) == 1:
        return lines[0][0].upper() + lines[0][1:] + ".\n"
    return "\n".join(f"  * {d};" for d in lines[:-1]) + f"\n  * {lines[-1]}.\n"


def _describe(fun: Any) -> str:
    code = getattr(fun, "__code__", None)
    where = f" at {code.co_filename}:{code.co_firstlineno}" if code is not None else ""
    return f"{getattr(fun, '__name__', type(fun).__name__)}{where}"


def check_branches(api: str, names: Sequence[str], funs: Sequence[Callable],
                   outs: Sequence[Any]) -> None:
    """TypeError (JAX's text) unless every branch output ``outs[i]`` (of ``funs[i]``,
    called ``names[i]``) has the first one's structure and types."""
    first_leaves, first_tree = tree_util.tree_flatten(outs[0])
    for name, fun, out in zip(names[1:], funs[1:], outs[1:]):
        leaves, tree = tree_util.tree_flatten(out)
        head = (f"{names[0]} is {_describe(funs[0])}\n{name} is {_describe(fun)}\n\n")
        if tree != first_tree:
            raise TypeError(
                f"{api} branch outputs must have the same pytree structure, but they differ:"
                f"\n\n{head}{names[0]} output is {first_tree} but {name} output is {tree}, "
                f"so their structures differ.\n\nRevise {names[0]} and/or {name} so that "
                "they have the same pytree structure.")
        diffs = [f"the output of {names[0]}{p} has type {short(a)} but the corresponding "
                 f"output of {name} has type {short(b)}, {why}"
                 for p, a, b in zip(_paths(outs[0]), first_leaves, leaves)
                 if (why := _mismatch(a, b)) is not None]
        if diffs:
            raise TypeError(
                f"{api} branches must have equal output types but they differ.\n\n{head}"
                f"{_differences(diffs)}\nRevise {names[0]} and/or {name} so that all output "
                "types match.")


def check_carry(name: str, fun: Callable, carry_in: Any, carry_out: Any) -> None:
    """TypeError (JAX's text) unless loop body ``fun``'s carry output has its carry
    input's structure and types; ``name`` is JAX's ("scan body", "while_loop body").
    Runs at every eager step: the message is built only on failure."""
    in_leaves, in_tree = tree_util.tree_flatten(carry_in)
    out_leaves, out_tree = tree_util.tree_flatten(carry_out)
    if in_tree != out_tree:
        raise TypeError(
            f"{name} function carry input and carry output must have the same pytree "
            f"structure, but they differ:\n\nThe input tree structure is:\n{in_tree}\nthe "
            f"output tree structure is:\n{out_tree}\n\nRevise the function so that the "
            "carry output has the same pytree structure as the carry input.")
    if not any(_mismatch(a, b, promotes=True) for a, b in zip(in_leaves, out_leaves)):
        return
    try:
        params = list(inspect.signature(fun).parameters)
    except (TypeError, ValueError):
        params = []
    carry = f"the input carry {params[0]}" if params else "the input carry"
    diffs = [f"{carry}{p} has type {short(a)} but the corresponding output carry component "
             f"has type {short(b)}, {why}"
             for p, a, b in zip(_paths(carry_in), in_leaves, out_leaves)
             if (why := _mismatch(a, b, promotes=True)) is not None]
    raise TypeError(
        f"{name} function carry input and carry output must have equal types, but they "
        f"differ:\n\n{_differences(diffs)}\nRevise the function so that all output "
        "types match the corresponding input types.")


def check_same_leaves(what: str, expected: Sequence, got: Sequence) -> None:
    """TypeError unless flat ``got`` has ``expected``'s types (a scan's ys from step to
    step: JAX traces the body once, so they cannot differ there)."""
    if len(expected) != len(got) or any(_mismatch(a, b) for a, b in zip(expected, got)):
        raise TypeError(f"{what} must have identical types, got "
                        f"[{', '.join(short(a) for a in expected)}] and "
                        f"[{', '.join(short(b) for b in got)}].")


def check_pred(out: Any) -> Any:
    """``cond_fun``'s output, checked to be a boolean scalar as JAX requires."""
    leaves, tree = tree_util.tree_flatten(out)
    if len(leaves) != 1 or not tree_util.treedef_is_leaf(tree):
        raise TypeError(f"cond_fun must return a boolean scalar, but got pytree {tree}.")
    shape, dtype, _ = _leaf_type(leaves[0])
    if shape != () or dtype != np.bool_:
        raise TypeError("cond_fun must return a boolean scalar, but got output type(s) "
                        f"[ShapedArray({short(leaves[0])})].")
    return out


def split_pair(out: Any) -> tuple:
    """A scan body's output, checked to be a pair ``(carry, y)`` as JAX requires."""
    if not isinstance(out, (tuple, list)) or len(out) != 2:
        shown = tree_util.tree_map(short, out) if out is not None else out
        raise TypeError(f"scan body output must be a pair, got {shown}.")
    return out[0], out[1]


def _typed_tree(leaves: Sequence, tree: Any) -> str:
    """A tree of leaf types as JAX prints it: ``(float32[3], int32[])``."""
    return str(tree.unflatten([short(x) for x in leaves])).replace("'", "")


_STRUCTURE, _TYPES = "container/pytree structure:", "shapes/dtypes of:"


def _primal_output_mismatch(got: Any, expected: Any) -> tuple | None:
    """How a rule's primal output ``got`` differs from the function's output ``expected``
    (None: not known): (JAX's `_STRUCTURE` or `_TYPES`, got's typed tree, expected's);
    None when it does not."""
    if expected is None:
        return None
    (leaves, tree), (e_leaves, e_tree) = (tree_util.tree_flatten(got),
                                          tree_util.tree_flatten(expected))
    if tree != e_tree:
        return _STRUCTURE, _typed_tree(leaves, tree), _typed_tree(e_leaves, e_tree) + "."
    if any(_mismatch(a, b) for a, b in zip(leaves, e_leaves)):
        return _TYPES, _typed_tree(leaves, tree), _typed_tree(e_leaves, e_tree)
    return None


def _tangent_mismatch(primal: Any, tangent: Any) -> str | None:
    """The tangent type ``primal`` expects (JAX's ``float0`` for a non-inexact one, whose
    tangent is dropped: funcgrad's zeros in its own dtype are taken too), when
    ``tangent`` (None: zeros) is not of it."""
    if tangent is None:
        return None
    (sp, dp, _), (st, dt, weak) = _leaf_type(primal), _leaf_type(tangent)
    if is_inexact(dp):
        fits, want = dt == dp or (weak and _kind(dt) == _kind(dp)), dp.name
    else:
        fits, want = dt in (dp, float0), "float0"
    return None if fits and st == sp else f"{want}[{','.join(str(d) for d in sp)}]"


def split_jvp_rule_output(rule_name: str, primal_name: str, res: Any,
                          expected: Any) -> tuple[list, Any, list]:
    """A custom_jvp rule's output ``res``, checked with JAX's texts: a pair
    ``(primal_out, tangent_out)`` whose primal output has the structure and types of the
    function's output ``expected`` (None: not known) and whose tangents (None for zeros,
    also a whole subtree) have the primal output's structure and tangent types. Returns
    (primal leaves, primal tree, tangent leaves)."""
    head = f"Custom JVP rule {rule_name} for function {primal_name} must produce"
    if not isinstance(res, (tuple, list)) or len(res) != 2:
        raise TypeError(f"{head} a pair (list or tuple of length two) representing primal "
                        f"and tangent outputs, but got {res}.")
    leaves, tree = tree_util.tree_flatten(res[0])
    t_leaves, t_tree = tree_util.tree_flatten(res[1], is_leaf=lambda x: x is None)
    if res[1] is None:
        t_leaves, t_tree = [None] * len(leaves), tree
    elif t_tree != tree:
        raise TypeError(f"{head} primal and tangent outputs with equal container (pytree) "
                        f"structures, but got {tree} and {t_tree} respectively.")
    diff = _primal_output_mismatch(res[0], expected)
    if diff is not None:
        what, got, want = diff
        same = ("of the same container/pytree structure" if what is _STRUCTURE else
                "with leaves of the same shape/dtype")
        raise TypeError(
            f"{head} a pair (list or tuple of length two) where the first element "
            "represents the primal output (equal in value to the output of the "
            f"custom_jvp-decorated function {primal_name}, and in particular {same}"
            f"), but instead the JVP rule output's first element had {what}\n    {got}\n"
            f"while the custom_jvp-decorated function {primal_name} had output {what}\n"
            f"    {want}")
    wrong = [(p, t, want) for p, t in zip(leaves, t_leaves)
             if (want := _tangent_mismatch(p, t)) is not None]
    if len(wrong) == 1 and len(leaves) == 1:
        (p, t, want), = wrong
        raise TypeError("Custom JVP rule must produce primal and tangent outputs with "
                        f"corresponding shapes and dtypes. Expected {want} (tangent type of "
                        f"{short(p)}) but got {short(t)}.")
    if wrong:
        raise TypeError("Custom JVP rule must produce primal and tangent outputs with "
                        "corresponding shapes and dtypes, but got:\n" + "\n".join(
                            f"  primal {short(p)} with tangent {short(t)}, expecting "
                            f"tangent {want}" for p, t, want in wrong))
    return leaves, tree, t_leaves


def split_fwd_output(fwd_name: str, primal_name: str, res: Any, expected: Any) -> tuple:
    """A custom_vjp ``fwd``'s output ``res``, checked with JAX's texts: a pair
    ``(out, residuals)`` whose ``out`` has the structure and types of the function's
    output ``expected`` (None: not known)."""
    head = (f"Custom VJP fwd rule {fwd_name} for function {primal_name} must produce a pair "
            "(list or tuple of length two) where the first element represents the primal "
            "output (equal to {} the custom_vjp-decorated function "
            f"{primal_name}) and the second element represents residuals (i.e. values "
            "stored from the forward pass for use on the backward pass), but ")
    if not isinstance(res, (tuple, list)) or len(res) != 2:
        raise TypeError(head.format("those of") + f"instead of a pair the fwd rule "
                        f"{fwd_name} produced {res}.")
    diff = _primal_output_mismatch(res[0], expected)
    if diff is not None:
        what, got, want = diff
        raise TypeError(
            f"{head.format('the output of')}instead the fwd rule output's first element "
            f"had {what}\n    {got}\nwhile the custom_vjp-decorated function {primal_name} "
            f"had output {what}\n    {want}")
    return res[0], res[1]


def check_bwd_output(cts: Any, in_tree: Any, primals: Sequence) -> list:
    """A custom_vjp ``bwd``'s output ``cts``, checked with JAX's texts: a tuple (a list of
    the right length is taken) with one cotangent per primal input, of the input's
    structure (None for zeros, also a whole subtree) and shapes (a dtype may differ: JAX
    casts it). Returns the flat cotangents (None for zeros)."""
    args = in_tree.children()
    if isinstance(cts, list) and len(cts) == len(args):
        cts = tuple(cts)
    flat: list = []
    try:
        if not isinstance(cts, tuple) or len(cts) != len(args):
            raise ValueError
        for ct, arg in zip(cts, args):
            if ct is None:
                flat += [None] * arg.num_leaves
                continue
            leaves, tree = tree_util.tree_flatten(ct, is_leaf=lambda x: x is None)
            if tree != arg:
                raise ValueError
            flat += leaves
    except ValueError:
        raise TypeError(
            "Custom VJP bwd rule must produce an output with the same container (pytree) "
            "structure as the args tuple of the primal function, and in particular must "
            "produce a tuple of length equal to the number of arguments to the primal "
            f"function, but got bwd output structure {tree_util.tree_structure(cts)} for "
            f"primal input structure {in_tree}.") from None
    paths = _paths(in_tree.unflatten(list(primals)))
    for path, ct, p in zip(paths, flat, primals):
        if ct is not None and not hasattr(ct, "dtype") and type(ct) not in _WEAK:
            raise TypeError(f"Argument {ct!r} of type {type(ct)} is not a valid JAX type")
        if ct is not None and np.shape(ct) != np.shape(p):
            raise ValueError(
                "Custom VJP bwd rule must produce an output with the same type as the args "
                f"tuple of the primal function, but at output{path} the bwd rule produced "
                f"an output of type {short(ct)} corresponding to an input of type "
                f"{short(p)}, so the shapes do not match")
    return flat


_REFUSALS = (NotImplementedError, RuntimeError)  # a meta array's: no values to read


def abstract_outputs(fun: Callable, operands: tuple) -> Any:
    """``fun(*operands)`` evaluated on meta arrays of the operands' shapes and dtypes: its
    outputs' structure and types, no values (how a branch not taken is checked). None
    where meta arrays cannot run it (it reads values, as Python control flow on them does,
    or calls back into Python): such a branch is checked where it is staged."""
    def as_meta(x: Any) -> Any:
        return x if type(x) in _WEAK or not hasattr(x, "dtype") else to_meta(x)
    metas = tree_util.tree_map(as_meta, operands)
    try:
        with np.errstate(all="ignore"), _unrecorded():
            return fun(*metas)
    except _REFUSALS:
        return None
    except TypeError as e:  # a meta array's numpy conversion; other TypeErrors are real
        if "meta" not in str(e):
            raise
        return None


@contextlib.contextmanager
def _unrecorded() -> Any:
    """Drop what the transforms now running record meanwhile: an abstract evaluation that
    reads their values from its closure (a branch closing over a value under grad or jit)
    must leave no records on their tapes, only its outputs' types."""
    marks = [(t, len(t.records), getattr(t, "closures", None)) for t in active_traces()
             if hasattr(t, "records")]
    try:
        yield
    finally:
        for t, n, closures in marks:
            del t.records[n:]
            if closures is not None:
                t.closures = closures
