"""``out=``: torch functions that take it write their result into the given tensor(s).

The result is computed as without ``out``, then written into ``out`` as PyTorch writes it:
cast to ``out``'s dtype (PyTorch's error where that cast is not allowed), ``out`` resized
to the result's shape as ``resize_`` does (with PyTorch's deprecation warning when it had
elements; PyTorch's error where its storage cannot grow, a numpy array's), its
version bumped, and no graph recorded: functions with ``out=`` are not differentiable, so
an argument that requires grad is an error while grad mode is on, as in PyTorch.
"""
from __future__ import annotations

import functools
import warnings
from typing import Any, Callable

from funcgrad.torch._tensor import Tensor, tensors_in
from funcgrad.torch._runtime import grad_mode

__all__ = ["accepting_out", "write_out", "install"]

_RESIZE_WARNING = (
    "An output with one or more elements was resized since it had shape {old}, which does "
    "not match the required output shape {new}. This behavior is deprecated, and in a "
    "future PyTorch release outputs will not be resized unless they have zero elements. "
    "You can explicitly reuse an out tensor t by resizing it, inplace, to zero elements "
    "with t.resize_(0).")

# torch functions defined outside the op tables that take ``out=`` in PyTorch
OUT_FUNCTIONS = (
    "zeros", "ones", "empty", "full", "arange", "linspace", "logspace", "eye", "rand",
    "randn", "randint", "randperm", "normal", "multinomial", "cat", "concat",
    "concatenate", "stack", "hstack", "vstack", "dstack", "max", "min", "sort", "topk",
    "nonzero", "index_select", "gather", "take", "masked_select", "where", "cumsum",
    "cumprod", "tensordot", "kron", "cross", "matmul", "mm", "bmm", "mv", "dot",
)


def write_out(name: str, out: Any, result: Any) -> Any:
    """Write ``result`` (a tensor or a tuple of tensors) into ``out`` (one tensor or as
    many) and return ``out`` in the result's form."""
    several = isinstance(result, tuple)
    outs = tuple(out) if isinstance(out, (tuple, list)) else (out,)
    results = result if several else (result,)
    if len(outs) != len(results):
        raise TypeError(f"{name}(): argument 'out' must be a tuple of {len(results)} "
                        f"Tensors, not {len(outs)}")
    for o in outs:
        if not isinstance(o, Tensor):
            raise TypeError(f"{name}(): argument 'out' must be Tensor, not "
                            f"{type(o).__name__}")
    for o, r in zip(outs, results):
        if tuple(o.shape) != tuple(r.shape) and o.numel():
            warnings.warn(_RESIZE_WARNING.format(old=list(o.shape), new=list(r.shape)),
                          UserWarning, stacklevel=3)
        r = o._cast_result(r.detach())  # (PyTorch's error for a cast it refuses)
        if o._raw() is None:  # a traced tensor: no memory to resize or write
            o._rebind(r)
            continue
        if tuple(o.shape) != tuple(r.shape):
            o._resize(tuple(r.shape))  # (PyTorch's error where the storage cannot grow)
        o._assign_array(r._a)  # into out's memory: its views see the values
    if not several:
        return outs[0]
    return type(result)(*outs) if hasattr(result, "_fields") else outs


def accepting_out(fn: Callable, name: str | None = None) -> Callable:
    """``fn`` with PyTorch's ``out=`` keyword."""
    name = name or fn.__name__

    @functools.wraps(fn)
    def with_out(*args: Any, out: Any = None, **kwargs: Any) -> Any:
        if out is None:
            return fn(*args, **kwargs)
        check_out_args(name, out, args, kwargs)
        return write_out(name, out, fn(*args, **kwargs))
    return with_out


def check_out_args(name: str, out: Any, args: tuple, kwargs: dict) -> None:
    """PyTorch's error for ``out=`` with an argument that requires grad (grad mode on)."""
    if not grad_mode.state.enabled:
        return
    outs = out if isinstance(out, (tuple, list)) else (out,)
    for t in tensors_in((*args, *kwargs.values(), *outs)):
        if t.requires_grad:
            raise RuntimeError(f"{name}(): functions with out=... arguments don't support "
                               "automatic differentiation, but one of the arguments "
                               "requires grad.")


def install(namespace: dict) -> None:
    """Give the functions of ``OUT_FUNCTIONS`` found in ``namespace`` (the torch module's
    globals) their ``out=`` keyword."""
    for name in OUT_FUNCTIONS:
        fn = namespace.get(name)
        if fn is not None and not getattr(fn, "takes_out", False):
            wrapped = accepting_out(fn, name)
            wrapped.takes_out = True
            namespace[name] = wrapped
