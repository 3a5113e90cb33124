"""The tests of `funcgrad.torch.library.opcheck`, one function per test name.

Each takes the op, the call's args and kwargs and the tolerances, and raises (an
AssertionError saying what differs) when the op fails it.
"""
from __future__ import annotations

from typing import Any, Callable, Iterable

import numpy as np

from funcgrad.core import is_inexact
from funcgrad.torch._runtime import dtypes as D
from funcgrad.torch._tensor import Tensor

__all__ = ["run_test"]

# default tolerances by dtype name, as torch.testing's
_TOLERANCES = {"float16": (1e-3, 1e-5), "bfloat16": (1.6e-2, 1e-5), "float32": (1.3e-6, 1e-5),
               "float64": (1e-7, 1e-7), "complex64": (1.3e-6, 1e-5),
               "complex128": (1e-7, 1e-7)}


def _tensors(value: Any) -> Iterable[Tensor]:
    if isinstance(value, Tensor):
        yield value
    elif isinstance(value, (list, tuple)):
        for v in value:
            yield from _tensors(v)


def _host(t: Tensor) -> np.ndarray:
    t = t.detach().cpu()
    return (t.float() if t.dtype is D.bfloat16 else t).numpy().copy()


def _outputs(out: Any) -> list:
    return list(out) if isinstance(out, (tuple, list)) else [out]


def _close(what: str, got: Tensor, want: Tensor, atol: float | None,
           rtol: float | None) -> None:
    default_rtol, default_atol = _TOLERANCES.get(want.dtype.name, (0.0, 0.0))
    np.testing.assert_allclose(_host(got), _host(want),
                               rtol=default_rtol if rtol is None else rtol,
                               atol=default_atol if atol is None else atol,
                               equal_nan=True, err_msg=what)


def _test_schema(op: Any, args: tuple, kwargs: dict, atol: Any, rtol: Any) -> None:
    """The inputs keep their values and no output is one of them."""
    inputs = list(_tensors((args, tuple(kwargs.values()))))
    before = [_host(t) for t in inputs]
    out = op(*args, **kwargs)
    for k, (t, old) in enumerate(zip(inputs, before)):
        if not np.array_equal(_host(t), old, equal_nan=True):
            raise AssertionError(f"{op._qualname} changed input tensor {k}, but its schema "
                                 "says it mutates nothing (mutates_args=())")
    for o in _outputs(out):
        if any(o is t for t in inputs):
            raise AssertionError(f"{op._qualname} returned one of its inputs")


def _differentiable(args: tuple, kwargs: dict) -> list:
    return [t for t in _tensors((args, tuple(kwargs.values())))
            if t.requires_grad and is_inexact(t.dtype.np)]


def _test_autograd_registration(op: Any, args: tuple, kwargs: dict, atol: Any,
                                rtol: Any) -> None:
    """Called on inputs that require grad, the op records its node and its backward
    reaches those inputs."""
    leaves = _differentiable(args, kwargs)
    if not leaves:
        return
    if op._backward is None:
        raise AssertionError(f"{op._qualname} was called on inputs that require grad but "
                             "has no autograd formula; add one with register_autograd")
    import funcgrad.torch as torch  # the facade's autograd.grad (library imports early)
    outs = [o for o in _outputs(op(*args, **kwargs)) if o.requires_grad]
    for o in outs:
        if o.grad_fn is None or o.grad_fn.name() != op._node_name:
            raise AssertionError(f"{op._qualname}'s output has grad_fn {o.grad_fn}, not "
                                 f"{op._node_name}")
    torch.autograd.grad(outs, leaves, [torch.ones_like(o) for o in outs], allow_unused=True)


def _test_faketensor(op: Any, args: tuple, kwargs: dict, atol: Any, rtol: Any) -> None:
    """The fake's outputs have the kernel's count, shapes, dtypes and devices."""
    if op._fake is None:
        raise AssertionError(f"{op._qualname} has no fake implementation; register one with "
                             "register_fake (a function computing only the outputs' shapes "
                             "and dtypes)")
    values = op._schema.bind(op._qualname, args, kwargs)
    fake = _outputs(op._schema.call(op._fake, values))
    real = _outputs(op(*args, **kwargs))
    if len(fake) != len(real):
        raise AssertionError(f"the fake of {op._qualname} returned {len(fake)} outputs, the "
                             f"kernel {len(real)}")
    for k, (f, r) in enumerate(zip(fake, real)):
        if not isinstance(f, Tensor):
            raise AssertionError(f"the fake of {op._qualname} returned a "
                                 f"{type(f).__name__} as output {k}, not a Tensor")
        for what in ("shape", "dtype", "device"):
            if getattr(f, what) != getattr(r, what):
                raise AssertionError(f"output {k} of {op._qualname}: the fake gives {what} "
                                     f"{getattr(f, what)}, the kernel {getattr(r, what)}")


def _test_aot_dispatch_dynamic(op: Any, args: tuple, kwargs: dict, atol: Any,
                               rtol: Any) -> None:
    """Traced by funcgrad (torch.func.vjp), the op gives the eager values and gradients."""
    import funcgrad.torch as torch  # the facade's torch.func and autograd
    leaves = _differentiable(args, kwargs)
    eager = _outputs(op(*args, **kwargs))
    floating = [o for o in eager if is_inexact(o.dtype.np)]
    detached = [t.detach() for t in leaves]

    index = {id(t): i for i, t in enumerate(leaves)}

    def traced(*xs: Any) -> tuple:
        def swap(v: Any) -> Any:  # a leaf tensor -> its traced stand-in
            return xs[index[id(v)]] if id(v) in index else v
        a = tuple(_map(swap, v) for v in args)
        k = {n: _map(swap, v) for n, v in kwargs.items()}
        return tuple(o for o in _outputs(op(*a, **k)) if is_inexact(o.dtype.np))

    if not leaves or op._backward is None:
        for k, (g, w) in enumerate(zip(traced(*detached), floating)):
            _close(f"output {k} traced", g, w, atol, rtol)
        return
    out, vjp_fn = torch.func.vjp(traced, *detached)
    for k, (g, w) in enumerate(zip(out, floating)):
        _close(f"output {k} traced", g, w, atol, rtol)
    cts = tuple(torch.ones_like(o) for o in out)
    traced_grads = vjp_fn(cts)
    eager_grads = torch.autograd.grad([o for o in eager if o.requires_grad], leaves,
                                      [torch.ones_like(o) for o in eager if o.requires_grad],
                                      allow_unused=True)
    for k, (g, w) in enumerate(zip(traced_grads, eager_grads)):
        if w is not None:
            _close(f"gradient {k} traced", g, w, atol, rtol)


def _map(fn: Callable, value: Any) -> Any:
    return [fn(v) for v in value] if isinstance(value, list) else fn(value)


_RUN = {"test_schema": _test_schema, "test_autograd_registration": _test_autograd_registration,
        "test_faketensor": _test_faketensor,
        "test_aot_dispatch_dynamic": _test_aot_dispatch_dynamic}


def run_test(name: str, op: Any, args: tuple, kwargs: dict, atol: Any, rtol: Any) -> None:
    _RUN[name](op, args, kwargs, atol, rtol)
