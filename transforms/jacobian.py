"""Jacobians and Hessians: `jacrev` (alias `jacobian`), `jacfwd`, `hessian`.

`jacrev` runs the function once and pulls back every basis cotangent (one per output
element) in one batched pass: the VJP under `vmap` over the rows of an identity. `jacfwd`
linearizes once and pushes forward every basis tangent (one per input element) the same
way. The result is the output tree over the input tree, each leaf of shape
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
from .vmap import vmap

__all__ = ["jacrev", "jacobian", "jacfwd", "hessian"]


def _basis(leaves: Sequence) -> tuple[list, list]:
    """The rows of the identity over the flattened ``leaves``: for each leaf, an array of
    shape (total size, *leaf.shape), one in the leaf's own block of rows; and the offsets
    of the blocks."""
    sizes = [int(x.size) for x in leaves]
    offsets = [sum(sizes[:k]) for k in range(len(sizes) + 1)]
    total = offsets[-1]
    rows = []
    for k, x in enumerate(leaves):
        eye = fnp.eye(total, dtype=x.dtype)[:, offsets[k]:offsets[k + 1]]
        rows.append(fnp.reshape(eye, (total,) + tuple(x.shape)))
    return rows, offsets


def _block(stacked: Any, offsets: list, k: int, lead_shape: tuple, tail_shape: tuple,
           rows_last: bool) -> Any:
    """Rows ``offsets[k]:offsets[k+1]`` of a batched result (basis index first), as an
    array of shape lead + tail (rows_last: the basis index runs over ``tail_shape``)."""
    part = stacked[offsets[k]:offsets[k + 1]]
    if rows_last:
        n = offsets[k + 1] - offsets[k]
        part = fnp.moveaxis(fnp.reshape(part, (n,) + lead_shape), 0, -1)
    return fnp.reshape(part, lead_shape + tail_shape)


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
        basis, offsets = _basis(out_leaves)
        if offsets[-1]:  # every basis cotangent pulled back at once
            pulled = tree_util.tree_leaves(vmap(lambda *g: vjp_fn(out_tree.unflatten(
                list(g))))(*basis))
        else:
            pulled = [fnp.zeros((0,) + tuple(x.shape), x.dtype) for x in in_leaves]
        per_out = [in_tree.unflatten([
            _block(p, offsets, k, tuple(o.shape), tuple(x.shape), False)
            for p, x in zip(pulled, in_leaves)]) for k, o in enumerate(out_leaves)]
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
        basis, offsets = _basis(in_leaves)
        if offsets[-1]:  # every basis tangent pushed forward at once
            pushed = tree_util.tree_leaves(vmap(lambda *t: f_jvp(*in_tree.unflatten(
                list(t))))(*basis))
        else:
            pushed = [fnp.zeros((0,) + tuple(o.shape), o.dtype) for o in out_leaves]
        per_in = [[_block(p, offsets, i, tuple(o.shape), tuple(x.shape), True)
                   for p, o in zip(pushed, out_leaves)] for i, x in enumerate(in_leaves)]
        per_out = [in_tree.unflatten([per_in[i][k] for i in range(len(in_leaves))])
                   for k in range(len(out_leaves))]
        jac = out_tree.unflatten([p[0] if isinstance(argnums, int) else p for p in per_out])
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
