"""Tensor methods and torch functions PyTorch has beside its op families, each a
composition of the facade's ops (so they record no derivative of their own): the legacy
``Tensor.new``, ``sum_to_size``, ``fill_diagonal_``, ``nonzero_static``,
``dim_order``, the shift operators, the element-wise Python callbacks ``apply_``/``map_``/``map2_``, ``mH``,
``conj_physical``, and the method forms of functions (``x.bernoulli()``, ``x.prelu(w)``).
`install` attaches them from above the op table.
"""
from __future__ import annotations

from typing import Any, Callable

import numpy as np

from funcgrad.torch import _factories
from funcgrad.torch._runtime import dtypes as D
from funcgrad.torch._ops_basic import FUNCTIONS
from funcgrad.torch._tensor import Tensor, _size_args
from funcgrad.torch._runtime import grad_mode
from funcgrad.torch.nn import functional as F

__all__ = ["install"]


def new(self: Tensor, *args: Any, **kwargs: Any) -> Tensor:
    """The legacy constructor of ``self``'s type: ``x.new(2, 3)`` (uninitialised),
    ``x.new(data)``, ``x.new()`` (empty), in ``self``'s dtype and device."""
    dtype, device = self.dtype, kwargs.get("device", self.device)
    if len(args) == 1 and not isinstance(args[0], (int, np.integer, D.Size)):
        data = args[0]
        if isinstance(data, Tensor):
            return data.detach()
        return _factories.tensor(data, dtype=dtype, device=device)
    return _factories.empty(*_size_args(args) if args else (0,), dtype=dtype, device=device)


def sum_to_size(self: Tensor, *size: Any) -> Tensor:
    """``self`` summed down to ``size`` (which it must broadcast from)."""
    size = _size_args(size)
    lead = self.ndim - len(size)
    if lead < 0 or any(s not in (1, n) for s, n in zip(size, self.shape[lead:])):
        raise RuntimeError(f"size {{{list(size)}}} is not expandable to size "
                           f"{{{list(self.shape)}}}.")
    dims = list(range(lead)) + [lead + k for k, s in enumerate(size)
                                if s == 1 and self.shape[lead + k] != 1]
    out = self.sum(dims, keepdim=True) if dims else self
    return out.reshape(size)


def fill_diagonal_(self: Tensor, fill_value: Any, wrap: bool = False) -> Tensor:
    """Write ``fill_value`` on the main diagonal in place (a tall matrix's diagonal
    restarts every ``cols + 1`` rows with ``wrap``)."""
    if self.ndim < 2:
        raise RuntimeError("dimensions must larger than 1")
    if self.ndim > 2 and len(set(self.shape)) != 1:
        raise RuntimeError("all dimensions of input must be of equal length")
    n = min(self.shape)
    rows = np.arange(n)
    if self.ndim == 2 and wrap and self.shape[0] > self.shape[1] + 1:
        step = self.shape[1] + 1
        rows = np.concatenate([np.arange(start, min(start + self.shape[1], self.shape[0]))
                               for start in range(0, self.shape[0], step)])
    cols = np.arange(len(rows)) % self.shape[1]
    index = (rows,) + (cols,) * (self.ndim - 1)
    index = tuple(_factories.tensor(i) for i in index)
    return self.index_put_(index, _factories.tensor(fill_value, dtype=self.dtype))


def index_reduce(self: Tensor, dim: int, index: Tensor, source: Tensor, reduce: str, *,
                 include_self: bool = True) -> Tensor:
    """``self`` with ``source``'s slices along ``dim`` reduced into the positions
    ``index`` names ('prod', 'mean', 'amax', 'amin'): `scatter_reduce` with the index
    spread over ``source``'s other dims."""
    if reduce not in ("prod", "mean", "amax", "amin"):
        raise RuntimeError(f"index_reduce(): Expected reduce to be one of prod, mean, amax "
                           f"or amin but got {reduce}.")
    dim %= max(source.ndim, 1)
    shape = [1] * source.ndim
    shape[dim] = -1
    spread = index.reshape(shape).expand(source.shape)
    return self.scatter_reduce(dim, spread, source, reduce, include_self=include_self)


def index_reduce_(self: Tensor, dim: int, index: Tensor, source: Tensor, reduce: str, *,
                  include_self: bool = True) -> Tensor:
    return self.copy_(index_reduce(self, dim, index, source, reduce,
                                   include_self=include_self))


def nonzero_static(input: Tensor, *, size: int, fill_value: int = -1) -> Tensor:
    """The indices of the nonzero elements, exactly ``size`` rows: cut, or padded with
    ``fill_value``."""
    found = FUNCTIONS["nonzero"](input)[:size]
    pad = size - found.shape[0]
    if pad <= 0:
        return found
    filler = _factories.full((pad, found.shape[1]), fill_value, dtype=found.dtype)
    return FUNCTIONS["cat"]([found, filler])


def dim_order(self: Tensor, *, ambiguity_check: Any = False) -> tuple:
    """The dims from outermost to innermost in memory (by decreasing stride)."""
    strides = self.stride()
    return tuple(sorted(range(self.ndim), key=lambda d: (-strides[d], d)))


def _each(self: Tensor, fn: Callable, *others: Tensor) -> Tensor:
    """``self[i] = fn(self[i], *others[i])`` for every element, in place (CPU tensors
    only, as PyTorch's)."""
    if self.device.type != "cpu":
        raise TypeError("apply_ is only implemented on CPU tensors")
    values = self.detach().numpy()
    columns = [values.reshape(-1)] + [np.broadcast_to(o.detach().numpy(), values.shape)
                                      .reshape(-1) for o in others]
    new_values = np.array([fn(*(v.item() for v in items)) for items in zip(*columns)],
                          dtype=values.dtype).reshape(values.shape)
    with grad_mode.no_grad():
        self.copy_(_factories.tensor(new_values, dtype=self.dtype))
    return self


def apply_(self: Tensor, callable: Callable) -> Tensor:
    return _each(self, callable)


def map_(self: Tensor, tensor: Tensor, callable: Callable) -> Tensor:
    return _each(self, callable, tensor)


def map2_(self: Tensor, x: Tensor, y: Tensor, callable: Callable) -> Tensor:
    return _each(self, callable, x, y)


def conj_physical(input: Tensor) -> Tensor:
    """The conjugate, computed now (the facade's ``conj`` is never lazy either)."""
    return FUNCTIONS["conj"](input).clone() if input.is_complex() else input.clone()


def conj_physical_(self: Tensor) -> Tensor:
    return self.copy_(FUNCTIONS["conj"](self)) if self.is_complex() else self


def _mH(self: Tensor) -> Tensor:
    return self.transpose(-2, -1).conj()


def install(namespace: dict) -> None:
    """Attach the methods to Tensor and the functions to the torch namespace."""
    Tensor.__lshift__ = Tensor.bitwise_left_shift
    Tensor.__rshift__ = Tensor.bitwise_right_shift
    Tensor.__ilshift__ = Tensor.bitwise_left_shift_
    Tensor.__irshift__ = Tensor.bitwise_right_shift_
    for fn in (new, sum_to_size, fill_diagonal_, dim_order, apply_, map_, map2_,
               conj_physical, conj_physical_, index_reduce, index_reduce_):
        setattr(Tensor, fn.__name__, fn)
    namespace.update(nonzero_static=nonzero_static, conj_physical=conj_physical,
                     conj_physical_=conj_physical_, index_reduce=index_reduce)
    Tensor.nonzero_static = nonzero_static
    Tensor.mH = property(_mH)
    for name, fn in (("bernoulli", namespace["bernoulli"]),
                     ("multinomial", namespace["multinomial"]), ("hardshrink", F.hardshrink),
                     ("prelu", F.prelu)):
        setattr(Tensor, name, fn)
