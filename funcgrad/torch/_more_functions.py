"""torch functions beside the op families: ``asarray``, ``frombuffer``,
``empty_strided``, ``fill``, ``gradient`` (differentiable, numpy's finite differences),
``histogram`` (host counts), and the ``poisson``/``binomial`` samplers on the facade's
generator."""
from __future__ import annotations

from typing import Any

import numpy as np

import funcgrad.numpy as fnp
from funcgrad.torch import _factories
from funcgrad.torch._runtime import dtypes as D
from funcgrad.torch._dispatch import apply
from funcgrad.torch._ops_reduce import return_types
from funcgrad.torch._tensor import Tensor

__all__ = ["asarray", "frombuffer", "empty_strided", "fill", "gradient", "histogram",
           "poisson", "binomial"]


def asarray(obj: Any, *, dtype: Any = None, device: Any = None, copy: bool | None = None,
            requires_grad: bool = False) -> Tensor:
    """``obj`` as a tensor: a tensor itself when nothing changes and no copy is asked for;
    numpy arrays and buffers shared where possible, as PyTorch's."""
    if isinstance(obj, Tensor):
        out = obj.to(dtype=dtype or obj.dtype, device=device or obj.device)
        if copy and out is obj:
            out = obj.clone()
    elif isinstance(obj, np.ndarray) and not copy and dtype is None and device is None:
        out = _factories.from_numpy(obj)
    else:
        out = _factories.tensor(obj, dtype=dtype, device=device)
    return out.requires_grad_(True) if requires_grad else out


def frombuffer(buffer: Any, *, dtype: Any, count: int = -1, offset: int = 0,
               requires_grad: bool = False) -> Tensor:
    """A 1-D tensor on the memory of a Python buffer (not copied)."""
    raw = np.frombuffer(buffer, dtype=D.to_torch_dtype(dtype).np, count=count, offset=offset)
    return _factories.from_numpy(raw).requires_grad_(requires_grad)


def empty_strided(size: Any, stride: Any, *, dtype: Any = None, layout: Any = None,
                  device: Any = None, requires_grad: bool = False,
                  pin_memory: bool = False) -> Tensor:
    """An uninitialised tensor of ``size`` with the given strides (its storage just large
    enough)."""
    size, stride = tuple(size), tuple(stride)
    extent = 1 + sum((n - 1) * s for n, s in zip(size, stride)) if all(size) else 0
    base = _factories.empty(extent, dtype=dtype, device=device)
    return base.as_strided(size, stride).requires_grad_(requires_grad)


def fill(input: Tensor, value: Any) -> Tensor:
    """A new tensor like ``input`` holding ``value`` everywhere (recorded: its gradient
    to ``input`` is zero, as PyTorch's FillBackward0)."""
    value = value.item() if isinstance(value, Tensor) else value
    return apply("FillBackward0", lambda a: fnp.full_like(a, value), [input])


def gradient(input: Tensor, *, spacing: Any = 1, dim: Any = None,
             edge_order: int = 1) -> tuple:
    """The central differences of ``input`` along each of ``dim`` (all dims by default),
    one-sided of order ``edge_order`` at the edges: a tuple of tensors."""
    dims = list(range(input.ndim)) if dim is None else (
        [dim] if isinstance(dim, int) else list(dim))
    if isinstance(spacing, (list, tuple)):
        spacings = [s._a if isinstance(s, Tensor) else s for s in spacing]
    else:
        spacings = [spacing] * len(dims)
    if len(dims) == 1:
        return (apply("GradientBackward0", lambda a: fnp.gradient(
            a, *spacings, axis=dims[0], edge_order=edge_order), [input]),)
    outs = apply("GradientBackward0", lambda a: tuple(fnp.gradient(
        a, *spacings, axis=tuple(dims), edge_order=edge_order)), [input], multi=True)
    return tuple(outs)


def histogram(input: Tensor, bins: Any = 100, *, range: Any = None, weight: Any = None,
              density: bool = False, out: Any = None) -> Any:
    """(hist, bin_edges) of ``input``'s values: ``bins`` equal bins over ``range`` (the
    values' extent by default), or the edges given."""
    values = input.detach().numpy(force=True).ravel()
    edges = bins.detach().numpy(force=True) if isinstance(bins, Tensor) else bins
    weights = None if weight is None else weight.detach().numpy(force=True).ravel()
    hist, bin_edges = np.histogram(values, edges, range=range, weights=weights,
                                   density=density)
    return return_types.histogram(_factories.tensor(hist, dtype=input.dtype),
                                  _factories.tensor(bin_edges, dtype=input.dtype))


def poisson(input: Tensor, generator: Any = None) -> Tensor:
    """Poisson draws of rate ``input``, elementwise."""
    rng = _factories.random_stream(generator, input.device)
    raw = rng.poisson(input.detach().numpy(force=True))
    return _factories.finish(raw, input.dtype, input.device, False)


def binomial(count: Tensor, prob: Tensor, generator: Any = None) -> Tensor:
    """Binomial draws of ``count`` trials of probability ``prob``, elementwise."""
    rng = _factories.random_stream(generator, count.device)
    raw = rng.binomial(count.detach().numpy(force=True).astype(np.int64),
                       prob.detach().numpy(force=True))
    return _factories.finish(raw, count.dtype, count.device, False)
