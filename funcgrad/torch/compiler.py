"""``torch.compiler``: the public face of torch.compile — ``compile``, ``reset``,
``is_compiling``, ``disable`` (the function runs eagerly: a graph break, as PyTorch's),
``allow_in_graph`` / ``assume_constant_result`` (funcgrad traces through Python, so they
change nothing), ``wrap_numpy`` and ``cudagraph_mark_step_begin`` (no CUDA graphs)."""
from __future__ import annotations

import functools
from typing import Any, Callable

import numpy as np

from funcgrad.torch import _dynamo, jit
from funcgrad.torch._compile_state import GraphBreak
from funcgrad.torch._factories import from_numpy
from funcgrad.torch._tensor import Tensor

__all__ = ["compile", "reset", "is_compiling", "is_dynamo_compiling", "is_exporting",
           "disable", "allow_in_graph", "assume_constant_result", "wrap_numpy",
           "cudagraph_mark_step_begin"]

compile = jit.compile  # noqa: A001 (PyTorch's name)
reset = _dynamo.reset
is_compiling = is_dynamo_compiling = _dynamo.is_compiling


def is_exporting() -> bool:
    return False


def disable(fn: Callable | None = None, recursive: bool = True, *,
            reason: str | None = None) -> Any:
    """``fn`` never traced: called while torch.compile traces, it breaks the graph and
    runs eagerly (with ``fullgraph=True``, the compile raises)."""
    if fn is None:
        return functools.partial(disable, recursive=recursive, reason=reason)

    @functools.wraps(fn)
    def eager(*args: Any, **kwargs: Any) -> Any:
        if is_compiling():
            raise GraphBreak(f"it calls {getattr(fn, '__qualname__', fn)!s}, which "
                             f"torch.compiler.disable keeps eager" +
                             (f" ({reason})" if reason else ""))
        return fn(*args, **kwargs)
    eager._torchdynamo_disable = True
    return eager


def allow_in_graph(fn: Callable) -> Callable:
    return fn


def assume_constant_result(fn: Callable) -> Callable:
    return fn


def wrap_numpy(fn: Callable) -> Callable:
    """``fn`` of numpy arrays as a function of tensors (tensors in and out)."""
    @functools.wraps(fn)
    def wrapped(*args: Any, **kwargs: Any) -> Any:
        def to_numpy(x: Any) -> Any:
            return x.numpy(force=True) if isinstance(x, Tensor) else x

        def to_tensor(x: Any) -> Any:
            return from_numpy(np.asarray(x)) if isinstance(x, (np.ndarray, np.generic)) else x
        out = fn(*map(to_numpy, args), **{k: to_numpy(v) for k, v in kwargs.items()})
        if isinstance(out, (tuple, list)):
            return type(out)(map(to_tensor, out))
        return to_tensor(out)
    return wrapped


def cudagraph_mark_step_begin() -> None:
    """Nothing to mark: funcgrad.torch records no CUDA graphs."""
