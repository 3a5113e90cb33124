"""torch.func for funcgrad.torch: funcgrad's functional transforms applied to facade code.

The function is run on tensors whose arrays are funcgrad tracers, so its tensor ops are
traced by `funcgrad.grad` / `funcgrad.vjp` (no autograd graph is involved). As in
torch.func, ``.item()`` and other conversions of traced values to Python raise.
``functional_call(module, params, args)`` runs a module with some of its parameters and
buffers replaced (by name), which makes a module a pure function of its parameters.
"""
from __future__ import annotations

from typing import Any, Callable, Sequence

import funcgrad
from funcgrad import tree_util
from funcgrad.array import Array
from funcgrad.torch._tensor import Tensor, make

__all__ = ["grad", "grad_and_value", "vjp", "jvp", "jacrev", "jacfwd", "hessian",
           "functional_call", "to_array", "from_array"]


def _unwrap(tree: Any) -> Any:
    return tree_util.tree_map(lambda x: x._st.a if isinstance(x, Tensor) else x, tree)


def _wrap(tree: Any) -> Any:
    return tree_util.tree_map(lambda x: make(x) if isinstance(x, Array) else x, tree)


def to_array(tree: Any) -> Any:
    """The funcgrad Arrays of the tensors in ``tree`` (other leaves as they are): the
    bridge from facade code to funcgrad's functional transforms (`funcgrad.jit`,
    `funcgrad.vjp`...). The Arrays carry no autograd history."""
    return _unwrap(tree)


def from_array(tree: Any) -> Any:
    """Tensors (no autograd history) for the funcgrad Arrays in ``tree``: the way back
    from `to_array`."""
    return _wrap(tree)


def _array_fn(func: Callable, has_aux: bool, kwargs: dict) -> Callable:
    def f(*arrays: Any) -> Any:
        out = func(*_wrap(arrays), **kwargs)
        if has_aux:
            out, aux = out
            return _unwrap(out), _unwrap(aux)
        return _unwrap(out)
    return f


def grad(func: Callable, argnums: int | Sequence[int] = 0, has_aux: bool = False) -> Callable:
    """``grad(f)(*args)``: the gradient of scalar ``f`` w.r.t. ``args[argnums]``."""
    def wrapper(*args: Any, **kwargs: Any) -> Any:
        g = funcgrad.grad(_array_fn(func, has_aux, kwargs), argnums, has_aux)(*_unwrap(args))
        return _wrap(g)
    return wrapper


def grad_and_value(func: Callable, argnums: int | Sequence[int] = 0,
                   has_aux: bool = False) -> Callable:
    """``(grad, value)`` (``(grad, (value, aux))`` with has_aux), as torch.func."""
    def wrapper(*args: Any, **kwargs: Any) -> Any:
        value, g = funcgrad.value_and_grad(_array_fn(func, has_aux, kwargs), argnums,
                                           has_aux)(*_unwrap(args))
        return _wrap(g), _wrap(value)
    return wrapper


def vjp(func: Callable, *primals: Any, has_aux: bool = False) -> tuple:
    """``(output, vjp_fn)`` (plus ``aux``): ``vjp_fn(cotangent)`` returns a tuple of
    cotangents of the primals."""
    result = funcgrad.vjp(_array_fn(func, has_aux, {}), *_unwrap(primals), has_aux=has_aux)
    out, fn = result[0], result[1]

    def vjp_fn(cotangents: Any) -> tuple:
        return tuple(_wrap(fn(_unwrap(cotangents))))
    return (_wrap(out), vjp_fn, _wrap(result[2])) if has_aux else (_wrap(out), vjp_fn)


def _transform(transform: Callable, func: Callable, argnums: Any, has_aux: bool) -> Callable:
    def wrapper(*args: Any, **kwargs: Any) -> Any:
        f = _array_fn(func, has_aux, kwargs)
        return _wrap(transform(f, argnums, has_aux=has_aux)(*_unwrap(args)))
    return wrapper


def jacrev(func: Callable, argnums: int | Sequence[int] = 0, *,
           has_aux: bool = False) -> Callable:
    """The Jacobian of ``func`` by reverse mode (output shape + input shape)."""
    return _transform(funcgrad.jacrev, func, argnums, has_aux)


def jacfwd(func: Callable, argnums: int | Sequence[int] = 0, has_aux: bool = False) -> Callable:
    """The Jacobian of ``func`` by forward mode."""
    return _transform(funcgrad.jacfwd, func, argnums, has_aux)


def hessian(func: Callable, argnums: int | Sequence[int] = 0) -> Callable:
    """The Hessian of scalar ``func`` (forward-over-reverse)."""
    return _transform(funcgrad.hessian, func, argnums, False)


def jvp(func: Callable, primals: Sequence, tangents: Sequence, *,
        has_aux: bool = False) -> tuple:
    """``(func(*primals), J @ tangents)`` by forward mode."""
    out = funcgrad.jvp(_array_fn(func, has_aux, {}), tuple(_unwrap(tuple(primals))),
                       tuple(_unwrap(tuple(tangents))), has_aux=has_aux)
    return tuple(_wrap(out))


def functional_call(module: Any, parameter_and_buffer_dicts: Any, args: Any = None,
                    kwargs: dict | None = None, *, tie_weights: bool = True,
                    strict: bool = False) -> Any:
    """Call ``module(*args, **kwargs)`` with the named parameters/buffers replaced by the
    given tensors (restored afterwards)."""
    dicts = parameter_and_buffer_dicts
    if isinstance(dicts, (list, tuple)):
        merged: dict = {}
        for d in dicts:
            merged.update(d)
        dicts = merged
    if strict:
        own = set(module.state_dict(keep_vars=True))
        missing, unexpected = own - set(dicts), set(dicts) - own
        if missing or unexpected:
            raise RuntimeError(f"Error(s) in reparametrizing for {type(module).__name__}: "
                               f"missing {sorted(missing)}, unexpected {sorted(unexpected)}")
    args = () if args is None else args if isinstance(args, tuple) else (args,)
    saved = []
    try:
        for name, value in dicts.items():
            path, _, leaf = name.rpartition(".")
            mod = module.get_submodule(path)
            store = mod._parameters if leaf in mod._parameters else mod._buffers
            saved.append((store, leaf, store.get(leaf)))
            store[leaf] = value
        return module(*args, **(kwargs or {}))
    finally:
        for store, leaf, old in reversed(saved):
            store[leaf] = old
