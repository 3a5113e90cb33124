"""torch.autograd.functional: vjp, jvp, vhp, hvp, jacobian and hessian of a function.

Each takes ``func`` and its ``inputs`` (a tensor or a tuple of tensors) and returns results
shaped like PyTorch's: a single tensor where PyTorch gives one, tuples where the inputs or
outputs are tuples, and Jacobians nested ``[output][input]`` with shape
``output.shape + input.shape``.

They run on the facade's autograd engine exactly as PyTorch's do, so ``create_graph=True``
results stay in the graph of the caller's tensors (a gradient penalty can be
differentiated again): the inputs are aliased into a fresh graph, ``func`` is run, and
`autograd.grad` gives the vector-Jacobian products. Forward-mode products (`jvp`, `hvp`)
use the double-backward trick: the VJP ``u -> J^T u`` is linear in ``u``, so its own VJP at
``v`` is ``J v``. ``vectorize=True`` (and ``strategy='forward-mode'``, which needs it) runs
the whole Jacobian in one funcgrad transform (`funcgrad.torch.func`'s ``jacrev`` /
``jacfwd``), the counterpart of PyTorch's vmap; with ``create_graph=True`` the reverse-mode
Jacobian keeps the row-by-row engine path, which gives the same values.
"""
from __future__ import annotations

from typing import Any, Callable

from funcgrad.torch._tensor import Tensor
from funcgrad.torch._runtime import grad_mode
from funcgrad.torch.autograd.engine import grad as autograd_grad
from funcgrad.torch import _factories
from funcgrad.torch._ops_shape import stack
from funcgrad.torch import func as torch_func

__all__ = ["vjp", "jvp", "jacobian", "hessian", "hvp", "vhp"]


# -- arguments and results ------------------------------------------------------------------

def _as_tuple(value: Any, what: str, fn_name: str) -> tuple:
    """``(was_tuple, tensors)``, with PyTorch's TypeError for anything but tensors."""
    was_tuple = isinstance(value, tuple)
    values = value if was_tuple else (value,)
    for i, v in enumerate(values):
        if not isinstance(v, Tensor):
            where = f"the value at index {i} has" if was_tuple else f"the given {what} has"
            raise TypeError(f"The {what} given to {fn_name} must be either a Tensor or a "
                            f"tuple of Tensors but {where} type {type(v)}.")
    return was_tuple, values


def _unpack(results: Any, keep: Any) -> Any:
    """Undo the tuple wrapping of arguments that were single tensors: ``keep`` is whether
    the (outer, inner) levels were tuples."""
    if isinstance(keep, tuple):
        outer, inner = keep
        if not inner:
            results = tuple(r[0] for r in results)
        return results if outer else results[0]
    return results if keep else results[0]


def _alias_inputs(inputs: tuple, create_graph: bool, need_graph: bool) -> tuple:
    """The tensors ``func`` is run on: with ``create_graph``, inputs that require grad are
    aliased inside their own graph (so results stay differentiable w.r.t. them); others
    are detached, made to require grad when ``need_graph``."""
    return tuple(x.view_as(x) if create_graph and x.requires_grad
                 else x.detach().requires_grad_(need_graph) for x in inputs)


def _finish(results: tuple, create_graph: bool) -> tuple:
    """Results leave the function's graph unless ``create_graph``."""
    if create_graph:
        return results
    return tuple(_finish(r, False) if isinstance(r, tuple) else r.detach() for r in results)


def _check_v(v: tuple, like: tuple, like_is_tuple: bool) -> None:
    if len(v) != len(like):
        if like_is_tuple:
            raise RuntimeError(f"v is a tuple of invalid length: should be {len(like)} but "
                               f"got {len(v)}.")
        raise RuntimeError("The given v should contain a single Tensor.")
    for i, (a, b) in enumerate(zip(v, like)):
        if a.size() != b.size():
            prefix = f"Entry {i} in " if like_is_tuple else ""
            raise RuntimeError(f"{prefix}v has invalid size: should be {b.size()} but got "
                               f"{a.size()}.")


def _vector(v: Any, like: tuple, like_is_tuple: bool, fn_name: str, create_graph: bool,
            none_message: str) -> tuple | None:
    """The user's ``v`` checked against ``like``; None only where ``like`` is one
    single-element tensor (then the product is taken with 1)."""
    if v is None:
        if len(like) != 1 or like[0].nelement() != 1:
            raise RuntimeError(none_message)
        return None
    _, v = _as_tuple(v, "v", fn_name)
    v = _alias_inputs(v, create_graph, need_graph=False)
    _check_v(v, like, like_is_tuple)
    return v


_V_OUTPUT = ("The vector v can only be None if the user-provided function returns a single "
             "Tensor with a single element.")
_V_INPUT = ("The vector v can only be None if the input to the user-provided function is a "
            "single Tensor with a single element.")


# -- strict-mode checks (PyTorch's messages) ------------------------------------------------

_NOT_REQUIRING = {
    "outputs": "Output {i} of the user-provided function does not require gradients. The "
               "outputs must be computed in a differentiable manner from the input when "
               "running in strict mode.",
    "grad_inputs": "The gradient with respect to input {i} is independent of the inputs of "
                   "the user-provided function. This is not allowed in strict mode.",
    "jacobian": "While computing the hessian, found that the jacobian of the user-provided "
                "function with respect to input {i} is independent of the input. This is "
                "not allowed in strict mode. You should ensure that your function is twice "
                "differentiable and that the jacobian depends on the inputs (this would be "
                "violated by a linear function for example).",
    "hessian": "The hessian of the user-provided function with respect to input {i} is "
               "independent of the input. This is not allowed in strict mode. You should "
               "ensure that your function is thrice differentiable and that the hessian "
               "depends on the inputs.",
}


def _check_requires_grad(tensors: tuple, kind: str, strict: bool) -> None:
    if not strict:
        return
    for i, t in enumerate(tensors):
        if t is None:
            raise RuntimeError(f"The output of the user-provided function is independent "
                               f"of input {i}. This is not allowed in strict mode.")
        if not t.requires_grad:
            raise RuntimeError(_NOT_REQUIRING[kind].format(i=i))


_INDEPENDENT = {
    "back": "The output of the user-provided function is independent of input {i}. This is "
            "not allowed in strict mode.",
    "back_trick": "The gradient with respect to the input is independent of entry {i} in "
                  "the grad_outputs when using the double backward trick to compute forward "
                  "mode gradients. This is not allowed in strict mode.",
    "double_back": "The jacobian of the user-provided function is independent of input {i}. "
                   "This is not allowed in strict mode.",
    "double_back_trick": "The hessian of the user-provided function is independent of entry "
                         "{i} in the grad_jacobian. This is not allowed in strict mode as it "
                         "prevents from using the double backward trick to replace forward "
                         "mode AD.",
}


def _zeros_for_missing(grads: tuple, refs: tuple, strict: bool, create_graph: bool,
                       stage: str) -> tuple:
    """Gradients the engine found no path to become zeros (an error in strict mode)."""
    out = []
    for i, g in enumerate(grads):
        if g is None:
            if strict:
                raise RuntimeError(_INDEPENDENT[stage].format(i=i))
            g = _factories.zeros_like(refs[i])
        elif strict and create_graph and not g.requires_grad:
            which = "hessian" if "double" in stage else "jacobian"
            raise RuntimeError(f"The {which} of the user-provided function is independent "
                               f"of input {i}. This is not allowed in strict mode when "
                               "create_graph=True.")
        out.append(g)
    return tuple(out)


def _grad(outputs: tuple, inputs: tuple, grad_outputs: tuple | None = None,
          create_graph: bool = False, retain_graph: bool | None = None) -> tuple:
    """`autograd.grad` of the outputs that require grad (all None when none does)."""
    if grad_outputs is None:
        grad_outputs = (None,) * len(outputs)
    pairs = [(o, g) for o, g in zip(outputs, grad_outputs) if o is not None and
             o.requires_grad]
    if not pairs:
        return (None,) * len(inputs)
    outs, gouts = zip(*pairs)
    return autograd_grad(outs, inputs, gouts, retain_graph=retain_graph,
                         create_graph=create_graph, allow_unused=True)


def _run(func: Callable, inputs: tuple, fn_name: str, strict: bool) -> tuple:
    outputs = func(*inputs)
    was_tuple, outputs = _as_tuple(outputs, "outputs of the user-provided function", fn_name)
    _check_requires_grad(outputs, "outputs", strict)
    return was_tuple, outputs


def _single_output(fn_name: str, was_tuple: bool, outputs: tuple) -> None:
    if was_tuple or not isinstance(outputs[0], Tensor):
        raise RuntimeError(f"The function given to {fn_name} should return a single Tensor")
    if outputs[0].nelement() != 1:
        raise RuntimeError(f"The Tensor returned by the function given to {fn_name} should "
                           "contain a single element")


# -- products -------------------------------------------------------------------------------

def vjp(func: Callable, inputs: Any, v: Any = None, create_graph: bool = False,
        strict: bool = False) -> tuple:
    """``(func(*inputs), v^T J)``: the vector-Jacobian product at ``inputs``."""
    with grad_mode.enable_grad():
        inputs_tuple, inputs = _as_tuple(inputs, "inputs", "vjp")
        inputs = _alias_inputs(inputs, create_graph, need_graph=True)
        outputs_tuple, outputs = _run(func, inputs, "vjp", strict)
        v = _vector(v, outputs, outputs_tuple, "vjp", create_graph, _V_OUTPUT)
    with grad_mode.set_grad_enabled(create_graph or grad_mode.is_grad_enabled()):
        grads = _grad(outputs, inputs, v, create_graph=create_graph)
        result = _zeros_for_missing(grads, inputs, strict, create_graph, "back")
    return (_unpack(_finish(outputs, create_graph), outputs_tuple),
            _unpack(_finish(result, create_graph), inputs_tuple))


def jvp(func: Callable, inputs: Any, v: Any = None, create_graph: bool = False,
        strict: bool = False) -> tuple:
    """``(func(*inputs), J v)``: the Jacobian-vector product, by the double-backward
    trick (the VJP's own VJP)."""
    with grad_mode.enable_grad():
        inputs_tuple, inputs = _as_tuple(inputs, "inputs", "jvp")
        inputs = _alias_inputs(inputs, create_graph, need_graph=True)
        v = _vector(v, inputs, inputs_tuple, "jvp", create_graph, _V_INPUT)
        outputs_tuple, outputs = _run(func, inputs, "jvp", strict)
        dummies = tuple(_factories.zeros_like(o, requires_grad=True) for o in outputs)
        vjps = _grad(outputs, inputs, dummies, create_graph=True)
        _check_requires_grad(vjps, "grad_inputs", strict)
    with grad_mode.set_grad_enabled(create_graph or grad_mode.is_grad_enabled()):
        grads = _grad(vjps, dummies, v, create_graph=create_graph)
        result = _zeros_for_missing(grads, outputs, strict, create_graph, "back_trick")
    return (_unpack(_finish(outputs, create_graph), outputs_tuple),
            _unpack(_finish(result, create_graph), outputs_tuple))


def vhp(func: Callable, inputs: Any, v: Any = None, create_graph: bool = False,
        strict: bool = False) -> tuple:
    """``(func(*inputs), v^T H)`` for scalar ``func``."""
    with grad_mode.enable_grad():
        inputs_tuple, inputs = _as_tuple(inputs, "inputs", "vhp")
        inputs = _alias_inputs(inputs, create_graph, need_graph=True)
        v = _vector(v, inputs, inputs_tuple, "vhp", create_graph, _V_INPUT)
        outputs_tuple, outputs = _run(func, inputs, "vhp", strict)
        _single_output("vhp", outputs_tuple, outputs)
        jac = _grad(outputs, inputs, create_graph=True)
        _check_requires_grad(jac, "jacobian", strict)
    with grad_mode.set_grad_enabled(create_graph or grad_mode.is_grad_enabled()):
        grads = _grad(jac, inputs, v, create_graph=create_graph)
        result = _zeros_for_missing(grads, inputs, strict, create_graph, "double_back")
    return (_unpack(_finish(outputs, create_graph), outputs_tuple),
            _unpack(_finish(result, create_graph), inputs_tuple))


def hvp(func: Callable, inputs: Any, v: Any = None, create_graph: bool = False,
        strict: bool = False) -> tuple:
    """``(func(*inputs), H v)`` for scalar ``func`` (the double-backward trick on the
    gradient)."""
    with grad_mode.enable_grad():
        inputs_tuple, inputs = _as_tuple(inputs, "inputs", "hvp")
        inputs = _alias_inputs(inputs, create_graph, need_graph=True)
        v = _vector(v, inputs, inputs_tuple, "hvp", create_graph, _V_INPUT)
        outputs_tuple, outputs = _run(func, inputs, "hvp", strict)
        _single_output("hvp", outputs_tuple, outputs)
        jac = _grad(outputs, inputs, create_graph=True)
        _check_requires_grad(jac, "jacobian", strict)
        dummies = tuple(_factories.zeros_like(x, requires_grad=True) for x in inputs)
        double_back = _grad(jac, inputs, dummies, create_graph=True)
        _check_requires_grad(jac, "hessian", strict)
    with grad_mode.set_grad_enabled(create_graph or grad_mode.is_grad_enabled()):
        grads = _grad(double_back, dummies, v, create_graph=create_graph)
        result = _zeros_for_missing(grads, inputs, strict, create_graph, "double_back_trick")
    return (_unpack(_finish(outputs, create_graph), outputs_tuple),
            _unpack(_finish(result, create_graph), inputs_tuple))


# -- Jacobian and Hessian -------------------------------------------------------------------

_STRATEGY = ('Expected strategy to be either "forward-mode" or "reverse-mode". Hint: If your '
             'function has more outputs than inputs, "forward-mode" tends to be more '
             'performant. Otherwise, prefer to use "reverse-mode".')


def jacobian(func: Callable, inputs: Any, create_graph: bool = False, strict: bool = False,
             vectorize: bool = False, strategy: str = "reverse-mode") -> Any:
    """The Jacobian of ``func`` at ``inputs``: ``J[i][j]`` of shape
    ``outputs[i].shape + inputs[j].shape`` (unnested where PyTorch unnests)."""
    if strategy not in ("forward-mode", "reverse-mode"):
        raise AssertionError(_STRATEGY)
    if strategy == "forward-mode":
        return _forward_jacobian(func, inputs, create_graph, strict, vectorize)
    if vectorize and strict:
        raise RuntimeError("torch.autograd.functional.jacobian: `strict=True` and "
                           "`vectorized=True` are not supported together. Please either set "
                           "`strict=False` or `vectorize=False`.")
    inputs_tuple, inputs = _as_tuple(inputs, "inputs", "jacobian")
    if vectorize and not create_graph:
        return _transformed_jacobian("jacrev", func, inputs, inputs_tuple)
    with grad_mode.enable_grad():
        inputs = _alias_inputs(inputs, create_graph, need_graph=True)
        outputs_tuple, outputs = _run(func, inputs, "jacobian", strict)
        rows = tuple(_jacobian_rows(i, out, inputs, create_graph, strict)
                     for i, out in enumerate(outputs))
        return _unpack(_finish(rows, create_graph), (outputs_tuple, inputs_tuple))


def _jacobian_rows(i: int, out: Tensor, inputs: tuple, create_graph: bool,
                   strict: bool) -> tuple:
    """d out / d inputs[j] for each j, one engine pass per element of ``out``."""
    rows: list = [[] for _ in inputs]
    flat = out.reshape(-1)
    for k in range(out.nelement()):
        grads = _grad((flat[k],), inputs, retain_graph=True, create_graph=create_graph)
        for j, (g, x) in enumerate(zip(grads, inputs)):
            if g is None:
                if strict:
                    raise RuntimeError(f"Output {i} of the user-provided function is "
                                       f"independent of input {j}. This is not allowed in "
                                       "strict mode.")
                g = _factories.zeros_like(x)
            elif strict and create_graph and not g.requires_grad:
                raise RuntimeError("The jacobian of the user-provided function is "
                                   f"independent of input {i}. This is not allowed in "
                                   "strict mode when create_graph=True.")
            rows[j].append(g)
    return tuple(stack(r, 0).view(tuple(out.shape) + tuple(x.shape)) if r else
                 _factories.zeros(tuple(out.shape) + tuple(x.shape), dtype=x.dtype,
                                  device=x.device)
                 for r, x in zip(rows, inputs))


def _forward_jacobian(func: Callable, inputs: Any, create_graph: bool, strict: bool,
                      vectorize: bool) -> Any:
    if create_graph:
        raise NotImplementedError("torch.autograd.functional.jacobian: `create_graph=True` "
                                  'and `strategy="forward-mode"` are not supported together '
                                  '(yet). Please either set `create_graph=False` or '
                                  '`strategy="reverse-mode"`.')
    if strict:
        raise RuntimeError("torch.autograd.functional.jacobian: `strict=True` and "
                           '`strategy="forward-mode"` are not supported together (yet). '
                           'Please either set `strict=False` or `strategy="reverse-mode"`.')
    if not vectorize:
        raise NotImplementedError("Computing Jacobian using forward-AD or "
                                  "forward-over-reverse Hessian isonly implemented for "
                                  "`vectorize=True`.")
    inputs_tuple, inputs = _as_tuple(inputs, "inputs", "jacobian")
    return _transformed_jacobian("jacfwd", func, inputs, inputs_tuple)


def _transformed_jacobian(kind: str, func: Callable, inputs: tuple, inputs_tuple: bool,
                          hessian_of: bool = False) -> Any:
    """The Jacobian by funcgrad's transform ``kind`` (``jacrev``/``jacfwd``), laid out as
    PyTorch's; with ``hessian_of``, the Jacobian of scalar ``func``'s gradient."""
    argnums = tuple(range(len(inputs)))
    outer_tuple = [inputs_tuple]

    def as_outputs(*args: Any) -> tuple:
        outer_tuple[0], outputs = _as_tuple(func(*args), "outputs of the user-provided "
                                            "function", "jacobian")
        return outputs
    f = torch_func.jacrev(func, argnums=argnums) if hessian_of else as_outputs
    jac = getattr(torch_func, kind)(f, argnums=argnums)(*(x.detach() for x in inputs))
    # [output][input]; PyTorch's forward-mode Jacobian nests lists where reverse mode has tuples
    container = list if kind == "jacfwd" else tuple
    nested = container(container(row) for row in jac)
    return _unpack(nested, (outer_tuple[0], inputs_tuple))


def hessian(func: Callable, inputs: Any, create_graph: bool = False, strict: bool = False,
            vectorize: bool = False, outer_jacobian_strategy: str = "reverse-mode") -> Any:
    """The Hessian of scalar ``func``: ``H[i][j]`` of shape
    ``inputs[i].shape + inputs[j].shape``, the Jacobian (by ``outer_jacobian_strategy``)
    of its reverse-mode gradient."""
    inputs_tuple, inputs = _as_tuple(inputs, "inputs", "hessian")
    if outer_jacobian_strategy not in ("forward-mode", "reverse-mode"):
        raise AssertionError('Expected strategy to be either "forward-mode" or '
                             '"reverse-mode".')

    def scalar_func(*args: Any) -> Tensor:
        out = func(*args)
        was_tuple, outs = _as_tuple(out, "outputs of the user-provided function", "hessian")
        _check_requires_grad(outs, "outputs", strict)
        _single_output("hessian", was_tuple, outs)
        return out.squeeze()

    if vectorize and not create_graph and not strict:
        kind = "jacfwd" if outer_jacobian_strategy == "forward-mode" else "jacrev"
        return _transformed_jacobian(kind, scalar_func, inputs, inputs_tuple, True)

    def gradient(*args: Any) -> Any:
        jac = jacobian(scalar_func, args, create_graph=True)
        _check_requires_grad(jac, "jacobian", strict)
        return jac

    result = jacobian(gradient, inputs, create_graph=create_graph, strict=strict,
                      vectorize=vectorize, strategy=outer_jacobian_strategy)
    return _unpack(result, (inputs_tuple, inputs_tuple))
