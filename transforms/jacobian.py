"""Jacobians and Hessians: `jacrev` (alias `jacobian`), `jacfwd`, `hessian`.

`jacrev` runs the function once and pulls back one basis cotangent per output element;
`jacfwd` linearizes once and pushes forward one basis tangent per input element. The
result is the output tree over the input tree, each leaf of shape
``out_leaf.shape + in_leaf.shape`` (JAX's layout). Both are traced by outer transforms, so
``hessian = jacfwd(jacrev(f))`` is forward-over-reverse.
"""
from __future__ import annotations

import functools
from typing import Any, Callable, Sequence

import funcgrad.numpy as fnp
from funcgrad import tree_util
from .grad import _as_array, _check_argnums, _check_inputs, _vjp
from .jvp import JVPTracer, linearize

__all__ = ["jacrev", "jacobian", "jacfwd", "hessian"]


def _basis(leaves: Sequence, k: int, j: int) -> list:
    """Zeros like ``leaves`` except a one at flat position ``j`` of leaf ``k``."""
    out = [fnp.zeros_like(x) for x in leaves]
    target = out[k]
    out[k] = fnp.reshape(fnp.reshape(target, (-1,)).at[j].set(1), target.shape)
    return out


def _stack_rows(rows: list, lead_shape: tuple, tail_shape: tuple, rows_last: bool) -> Any:
    """Stack per-basis results into an array of shape lead + tail (rows_last: the basis
    index runs over ``tail_shape``, otherwise over ``lead_shape``)."""
    if not rows:
        return fnp.zeros(lead_shape + tail_shape)
    stacked = fnp.stack(rows, axis=-1 if rows_last else 0)
    return fnp.reshape(stacked, lead_shape + tail_shape)


def _dyn_args(args: tuple, argnums: Any, name: str) -> tuple[tuple, Callable]:
    nums = _check_argnums(argnums, len(args), name)

    def with_dyn(fun: Callable, kwargs: dict) -> Callable:
        def partial(*dyn: Any) -> Any:
            full = list(args)
            for i, a in zip(nums, dyn):
                full[i] = a
            return fun(*full, **kwargs)
        return partial
    dyn = tuple(tree_util.tree_map(_as_array, args[i]) for i in nums)
    return dyn, with_dyn


def jacrev(fun: Callable, argnums: int | Sequence[int] = 0, has_aux: bool = False,
           holomorphic: bool = False, allow_int: bool = False) -> Callable:
    """The Jacobian of ``fun`` by reverse mode: one VJP per output element."""
    name = f"jacrev({getattr(fun, '__name__', 'fun')})"

    @functools.wraps(fun)
    def jac_f(*args: Any, **kwargs: Any) -> Any:
        dyn, with_dyn = _dyn_args(args, argnums, name)
        _check_inputs(dyn, allow_int, holomorphic, name)
        out, vjp_fn, aux = _vjp(with_dyn(fun, kwargs), dyn, has_aux, name, consume=False)
        out_leaves, out_tree = tree_util.tree_flatten(out)
        for o in out_leaves:
            if o.dtype.kind == "c" and not holomorphic:
                raise TypeError(f"{name} requires real-valued outputs (output dtype that is a "
                                f"sub-dtype of np.floating), but got {o.dtype}. For "
                                "holomorphic differentiation, pass holomorphic=True. For "
                                "differentiation of non-holomorphic functions involving "
                                "complex outputs, use vjp directly.")
        in_leaves, in_tree = tree_util.tree_flatten(dyn)
        per_out = []
        for k, o in enumerate(out_leaves):
            rows = [tree_util.tree_leaves(vjp_fn(out_tree.unflatten(_basis(out_leaves, k, j))))
                    for j in range(o.size)]
            per_out.append(in_tree.unflatten([
                _stack_rows([r[i] for r in rows], tuple(o.shape), tuple(x.shape), False)
                for i, x in enumerate(in_leaves)]))
        jac = out_tree.unflatten([p if not isinstance(argnums, int) else p[0]
                                  for p in per_out])
        return (jac, aux) if has_aux else jac

    return jac_f


jacobian = jacrev


def jacfwd(fun: Callable, argnums: int | Sequence[int] = 0, has_aux: bool = False,
           holomorphic: bool = False) -> Callable:
    """The Jacobian of ``fun`` by forward mode: one linearized JVP per input element."""
    name = f"jacfwd({getattr(fun, '__name__', 'fun')})"

    @functools.wraps(fun)
    def jac_f(*args: Any, **kwargs: Any) -> Any:
        dyn, with_dyn = _dyn_args(args, argnums, name)
        _check_inputs(dyn, False, holomorphic, name)
        f = with_dyn(fun, kwargs)
        aux_box = []
        if has_aux:
            def main(*xs: Any) -> Any:
                out, aux = f(*xs)
                aux_box.append(aux)
                return out
        else:
            main = f
        out, f_jvp = linearize(main, *dyn)
        out_leaves, out_tree = tree_util.tree_flatten(out)
        in_leaves, in_tree = tree_util.tree_flatten(dyn)
        per_in = []
        for i, x in enumerate(in_leaves):
            cols = [tree_util.tree_leaves(f_jvp(*in_tree.unflatten(_basis(in_leaves, i, j))))
                    for j in range(x.size)]
            per_in.append([_stack_rows([c[k] for c in cols], tuple(o.shape), tuple(x.shape),
                                       True) for k, o in enumerate(out_leaves)])
        jac = out_tree.unflatten([
            in_tree.unflatten([per_in[i][k] for i in range(len(in_leaves))])
            if not isinstance(argnums, int) else per_in[0][k]
            for k in range(len(out_leaves))])
        if has_aux:
            aux = tree_util.tree_map(_concrete_or_self, aux_box[0])
            return jac, aux
        return jac

    return jac_f


def _concrete_or_self(x: Any) -> Any:
    while isinstance(x, JVPTracer):
        x = x._primal
    return x


def hessian(fun: Callable, argnums: int | Sequence[int] = 0, has_aux: bool = False,
            holomorphic: bool = False) -> Callable:
    """The Hessian, as ``jacfwd(jacrev(fun))`` (forward-over-reverse)."""
    return jacfwd(jacrev(fun, argnums, has_aux, holomorphic), argnums, has_aux, holomorphic)
