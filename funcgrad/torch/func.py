"""torch.func for funcgrad.torch: funcgrad's functional transforms applied to facade code.

The function is run on tensors whose arrays are funcgrad tracers, so its tensor ops are
traced by `funcgrad.grad` / `funcgrad.vjp` (no autograd graph is involved). As in
torch.func, ``.item()`` and other conversions of traced values to Python raise.
``functional_call(module, params, args)`` runs a module with some of its parameters and
buffers replaced (by name), which makes a module a pure function of its parameters.
"""
from __future__ import annotations

import contextlib
from typing import Any, Callable, Iterator, Sequence

import funcgrad
from funcgrad import tree_util
from funcgrad.array import Array
from funcgrad.torch import _factories
from funcgrad.transforms.vmap import flatten_axes
from funcgrad.torch._dispatch import apply
from funcgrad.torch._tensor import Tensor, make
from funcgrad.torch._runtime import grad_mode

__all__ = ["grad", "grad_and_value", "vjp", "jvp", "jacrev", "jacfwd", "hessian",
           "functional_call", "reparametrized", "vmap", "stack_module_state", "to_array",
           "from_array"]


def _unwrap(tree: Any) -> Any:
    if type(tree) is list and all(isinstance(x, Tensor) for x in tree):  # the common call
        return [x._a for x in tree]
    return tree_util.tree_map(lambda x: x._a if isinstance(x, Tensor) else x, tree)


def _wrap(tree: Any) -> Any:
    if type(tree) is list and all(type(x) is Array for x in tree):  # the common call
        return [make(x) for x in tree]
    return tree_util.tree_map(lambda x: make(x) if isinstance(x, Array) else x, tree)


def _with_autograd(name: str, run: Callable[[Any], Any], args: tuple) -> Any:
    """``run`` (a function of ``args`` with their tensors as Arrays) on ``args``, its
    result as tensors: one autograd node ``name`` of the tensor arguments when one of
    them requires grad, so that a transform's result is differentiable by the outer
    autograd (PyTorch's transforms compose with its engine: gradients reach stacked
    parameters through ``vmap``)."""
    leaves, spec = tree_util.tree_flatten(args)
    at = [i for i, x in enumerate(leaves) if isinstance(x, Tensor)]
    if not (grad_mode.is_grad_enabled() and any(leaves[i].requires_grad for i in at)):
        return _wrap(run(_unwrap(args)))
    out_tree: list = []

    def on_arrays(*arrays: Any) -> tuple:
        full = _unwrap(list(leaves))
        for i, a in zip(at, arrays):
            full[i] = a
        outs, tree = tree_util.tree_flatten(run(spec.unflatten(full)))
        out_tree[:] = [tree]
        return tuple(outs)
    outs = apply(name, on_arrays, [leaves[i] for i in at], multi=True)
    return out_tree[0].unflatten(list(outs))


def to_array(tree: Any) -> Any:
    """The funcgrad Arrays of the tensors in ``tree`` (other leaves as they are): the
    bridge from facade code to funcgrad's functional transforms (`funcgrad.jit`,
    `funcgrad.vjp`...). The Arrays carry no autograd history."""
    return _unwrap(tree)


def from_array(tree: Any) -> Any:
    """Tensors (no autograd history) for the funcgrad Arrays in ``tree``: the way back
    from `to_array`."""
    return _wrap(tree)


def _ordered_like(result: Any, template: Any) -> Any:
    """``result`` with its dicts' keys in ``template``'s order: PyTorch's pytrees keep a
    dict's insertion order where funcgrad's (JAX's) sort the keys, and programs zip a
    gradient dict's values with ``model.parameters()``."""
    if isinstance(result, dict) and isinstance(template, dict) and \
            set(result) == set(template):
        return type(result)((k, _ordered_like(result[k], template[k])) for k in template)
    if isinstance(result, (list, tuple)) and isinstance(template, (list, tuple)) and \
            len(result) == len(template) and not hasattr(result, "_fields"):
        return type(result)(_ordered_like(r, t) for r, t in zip(result, template))
    return result


def _array_fn(func: Callable, has_aux: bool, kwargs: dict, like: tuple = ()) -> Callable:
    """``func`` as a function of Arrays; its arguments' dicts in the order of ``like``'s
    (the caller's arguments: funcgrad's flattening sorts them)."""
    def f(*arrays: Any) -> Any:
        out = func(*_ordered_like(_wrap(arrays), like), **kwargs)
        if has_aux:
            out, aux = out
            return _unwrap(out), _unwrap(aux)
        return _unwrap(out)
    return f


def _of_argnums(args: tuple, argnums: Any) -> Any:
    """The arguments a gradient is taken of, as the gradient is structured."""
    return args[argnums] if isinstance(argnums, int) else tuple(args[i] for i in argnums)


def grad(func: Callable, argnums: int | Sequence[int] = 0, has_aux: bool = False) -> Callable:
    """``grad(f)(*args)``: the gradient of scalar ``f`` w.r.t. ``args[argnums]``."""
    def wrapper(*args: Any, **kwargs: Any) -> Any:
        g = funcgrad.grad(_array_fn(func, has_aux, kwargs, args), argnums,
                          has_aux)(*_unwrap(args))
        template = _of_argnums(args, argnums)  # (after _wrap: its tree_map sorts keys)
        g = _wrap(g)
        return (_ordered_like(g[0], template), g[1]) if has_aux else _ordered_like(g, template)
    return wrapper


def grad_and_value(func: Callable, argnums: int | Sequence[int] = 0,
                   has_aux: bool = False) -> Callable:
    """``(grad, value)`` (``(grad, (value, aux))`` with has_aux), as torch.func."""
    def wrapper(*args: Any, **kwargs: Any) -> Any:
        value, g = funcgrad.value_and_grad(_array_fn(func, has_aux, kwargs, args), argnums,
                                           has_aux)(*_unwrap(args))
        return _ordered_like(_wrap(g), _of_argnums(args, argnums)), _wrap(value)
    return wrapper


def vjp(func: Callable, *primals: Any, has_aux: bool = False) -> tuple:
    """``(output, vjp_fn)`` (plus ``aux``): ``vjp_fn(cotangent)`` returns a tuple of
    cotangents of the primals."""
    result = funcgrad.vjp(_array_fn(func, has_aux, {}, primals), *_unwrap(primals),
                          has_aux=has_aux)
    out, fn = result[0], result[1]

    def vjp_fn(cotangents: Any) -> tuple:
        return tuple(_wrap(fn(_unwrap(cotangents))))
    return (_wrap(out), vjp_fn, _wrap(result[2])) if has_aux else (_wrap(out), vjp_fn)


def _transform(transform: Callable, func: Callable, argnums: Any, has_aux: bool) -> Callable:
    def wrapper(*args: Any, **kwargs: Any) -> Any:
        f = _array_fn(func, has_aux, kwargs, args)
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
    with reparametrized(module, dicts):
        return module(*args, **(kwargs or {}))


@contextlib.contextmanager
def reparametrized(module: Any, tensors: dict) -> Iterator[None]:
    """Within the block, ``module``'s parameters and buffers named in ``tensors`` are
    those tensors (restored afterwards): what `functional_call` runs a module in, and
    torch.compile a function that uses a module in."""
    saved = []
    try:
        for name, value in tensors.items():
            path, _, leaf = name.rpartition(".")
            mod = module.get_submodule(path)
            store = mod._parameters if leaf in mod._parameters else mod._buffers
            saved.append((store, leaf, store.get(leaf)))
            store[leaf] = value
        yield
    finally:
        for store, leaf, old in reversed(saved):
            store[leaf] = old


# ---------------------------------------------------------------------------------------
# vmap (PyTorch's in_dims / out_dims / randomness over funcgrad.vmap)
# ---------------------------------------------------------------------------------------

_RANDOMNESS = ("error", "different", "same")


def _name(func: Callable) -> str:
    return getattr(func, "__name__", repr(func))


def _check_in_dims(func: Callable, in_dims: Any, args: tuple) -> list:
    """The flat in_dims of the positional args, with PyTorch's errors for the mistakes."""
    head = f"vmap({_name(func)}, in_dims={in_dims}, ...)(<inputs>): "
    if not isinstance(in_dims, (int, tuple)):
        raise ValueError(f"{head}expected `in_dims` to be int or a (potentially nested) tuple "
                         f"matching the structure of inputs, got: {type(in_dims)}.")
    if not args:
        raise ValueError(f"vmap({_name(func)})(<inputs>): got no inputs. Maybe you forgot to "
                         "add inputs, or you are trying to vmap over a function with no "
                         "inputs. The latter is unsupported.")
    leaves, spec = tree_util.tree_flatten(args)
    try:
        dims = flatten_axes("in_dims", in_dims, args)
    except ValueError:
        raise ValueError(f"{head}in_dims is not compatible with the structure of `inputs`. "
                         f"in_dims has structure {tree_util.tree_structure(in_dims)} but "
                         f"inputs has structure {spec}.") from None
    for x, d in zip(leaves, dims):
        if d is None:
            continue
        if not isinstance(x, Tensor):
            raise ValueError(f"{head}Got in_dim={d} for an input but the input is of type "
                             f"{type(x)}. We cannot vmap over non-Tensor arguments, please "
                             "use None as the respective in_dim")
        if not -x.dim() <= d < x.dim():
            raise ValueError(f"{head}Got in_dim={d} for some input, but that input is a Tensor "
                             f"of dimensionality {x.dim()} so expected in_dim to satisfy "
                             f"-{x.dim()} <= in_dim < {x.dim()}.")
    sizes = [x.shape[d] for x, d in zip(leaves, dims) if d is not None]
    if not sizes:
        raise ValueError("vmap: Expected at least one Tensor to vmap over")
    if any(n != sizes[0] for n in sizes):
        raise ValueError("vmap: Expected all tensors to have the same size in the mapped "
                         f"dimension, got sizes {sizes} for the mapped dimension")
    return dims


def vmap(func: Callable, in_dims: Any = 0, out_dims: Any = 0, randomness: str = "error", *,
         chunk_size: int | None = None) -> Callable:
    """``torch.func.vmap``: ``func`` over a dimension of its tensor inputs (funcgrad's
    `vmap` underneath, so it composes with grad, jacrev... in any order). Keyword
    arguments are passed through unmapped, as in PyTorch. ``randomness``: 'error' raises
    when ``func`` draws random numbers, 'same' gives every example the same draw; the
    facade's stream draws one value per call, so 'different' raises when a draw happens
    (draw the batch's numbers outside and map over them). ``chunk_size`` runs the
    examples that many at a time (less memory) and joins the results."""
    if randomness not in _RANDOMNESS:
        raise RuntimeError("Only allowed values for randomness are 'error', 'different', or "
                           f"'same'. Got {randomness}")
    if chunk_size is not None and (not isinstance(chunk_size, int) or chunk_size < 1):
        raise ValueError(f"vmap: chunk_size should be None or greater than 0. (got "
                         f"{chunk_size})")

    def wrapper(*args: Any, **kwargs: Any) -> Any:
        dims = _check_in_dims(func, in_dims, args)
        leaves, spec = tree_util.tree_flatten(args)
        flat_axes = spec.unflatten(dims)

        returned: list = []  # what func returns (its dicts' key order)

        def array_fn(*arrays: Any) -> Any:
            out = func(*_ordered_like(_wrap(arrays), args), **kwargs)
            returned[:] = [out]
            return _unwrap(out)
        batched = funcgrad.vmap(array_fn, in_axes=tuple(flat_axes), out_axes=out_dims)
        _factories.VMAP_RANDOMNESS.append(randomness)
        try:
            if chunk_size is None:
                out = _with_autograd("VmapBackward0", lambda arrays: batched(*arrays), args)
            else:
                out = _with_autograd("VmapBackward0", lambda arrays: _chunked(
                    batched, arrays, leaves, dims, spec, chunk_size, out_dims), args)
            return _ordered_like(out, returned[0]) if returned else out
        except ValueError as e:
            if "out_axes is None" in str(e) or "got axis spec None" in str(e):
                raise ValueError(f"vmap({_name(func)}, ...): `{_name(func)}` can not return a "
                                 "BatchedTensor when out_dim is None") from None
            raise
        finally:
            _factories.VMAP_RANDOMNESS.pop()
    return wrapper


def _chunked(batched: Callable, arrays: tuple, leaves: list, dims: list, spec: Any,
             chunk_size: int, out_dims: Any) -> Any:
    """``batched`` on consecutive chunks of the examples, results joined along out_dims."""
    import funcgrad.numpy as fnp  # the facade's modules import this one
    flat = tree_util.tree_leaves(arrays)
    size = next(x.shape[d] for x, d in zip(flat, dims) if d is not None)
    parts = []
    for start in range(0, size, chunk_size):
        stop = min(start + chunk_size, size)
        chunk = [x if d is None else fnp.take(x, fnp.arange(start, stop), axis=d)
                 for x, d in zip(flat, dims)]
        parts.append(batched(*spec.unflatten(chunk)))
    out_tree = tree_util.tree_structure(parts[0])
    out_axes = flatten_axes("out_dims", out_dims, parts[0])
    joined = [p[0] if a is None else fnp.concatenate(list(p), axis=a)
              for p, a in zip(zip(*[tree_util.tree_leaves(p) for p in parts]), out_axes)]
    return out_tree.unflatten(joined)


def stack_module_state(models: Sequence) -> tuple[dict, dict]:
    """``(params, buffers)``: each named parameter and buffer of the (identically shaped)
    models stacked along a new leading dimension, for `vmap` over `functional_call`
    (PyTorch's model-ensembling recipe). The stacked parameters are new leaf tensors
    that require grad where the models' do."""
    import funcgrad.torch as torch  # the facade's package imports this module
    if not models:
        raise RuntimeError("stack_module_state: Expected at least one model, got 0.")
    if not (all(m.training for m in models) or all(not m.training for m in models)):
        raise RuntimeError("stack_module_state: Expected all models to have the same "
                           "training/eval mode.")
    first = type(models[0])
    if not all(type(m) is first for m in models):
        raise RuntimeError("stack_module_state: Expected all models to be of the same class.")
    params = {name: torch.stack([dict(m.named_parameters())[name].detach() for m in models])
              .requires_grad_(p.requires_grad)
              for name, p in models[0].named_parameters()}
    buffers = {name: torch.stack([dict(m.named_buffers())[name] for m in models])
               for name, _ in models[0].named_buffers()}
    return params, buffers
