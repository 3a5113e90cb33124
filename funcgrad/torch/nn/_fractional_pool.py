"""Fractional max pooling (Graham, 2014): ``F.fractional_max_pool{2,3}d(_with_indices)`` and
``nn.FractionalMaxPool{2,3}d``, as PyTorch 2.13's CPU kernels compute them.

Each (batch, channel) plane has its own pseudo-random window starts, drawn from its
``_random_samples`` entry ``u`` per axis (2-D: ``u[0]`` for width, ``u[1]`` for height; 3-D:
time, height, width) by PyTorch's sequence ``alpha = (in - k) / (out - 1)``, ``start_i =
int((i + u) * alpha) - int(u * alpha)``, last start ``in - k``, evaluated in the samples' dtype
(so float32 rounding picks the same starts). The starts are constants (the samples get no
gradient), so the op is a gather: every plane's windows as a table of flat plane indices,
the first maximum of each window chosen by ``argmax`` and gathered from the input, so the
gradient goes to that element and the indices are PyTorch's. A window holding NaN pools to
NaN; its index is its first NaN (PyTorch's is its last). Without ``_random_samples`` the
samples are ``torch.rand(N, C, n)`` from the facade's generator, as PyTorch draws them.
"""
from __future__ import annotations

from typing import Any

import numpy as np

import funcgrad.numpy as fnp
from funcgrad.torch import _factories
from funcgrad.torch._dispatch import apply
from funcgrad.torch._tensor import Tensor
from funcgrad.torch.nn._common import const_on, shape_list
from funcgrad.torch.nn.module import Module

__all__ = ["fractional_max_pool2d", "fractional_max_pool3d",
           "fractional_max_pool2d_with_indices", "fractional_max_pool3d_with_indices"]
MODULES = ["FractionalMaxPool2d", "FractionalMaxPool3d"]

_PREFIX = {2: "fractional_max_pool2d()", 3: "fractional_max_pool3d_out()"}
_TUPLE_OF = {2: "tuple of Ints", 3: "tuple of three Ints"}
_AXES = {2: ("height", "width"), 3: ("time", "height", "width")}
# the largest ``out + k - 1`` PyTorch's kernels allow: the 2-D one the input size, the 3-D
# one one less
_SLACK = {2: 0, 3: 1}


def _sizes(n: int, value: Any, name: str) -> tuple:
    """An int or 1 or n ints as n ints, with PyTorch's error otherwise."""
    values = (value,) if isinstance(value, (int, np.integer)) else tuple(value)
    if len(values) not in (1, n):
        raise RuntimeError(f"fractional_max_pool{n}d: {name} must either be a single Int or "
                           f"{_TUPLE_OF[n]}")
    return tuple(int(v) for v in values) * (n // len(values))


def _check_input(n: int, input: Tensor) -> None:
    if input.ndim not in (n + 1, n + 2):
        raise RuntimeError(f"{_PREFIX[n]}: Expected {n + 1}D or {n + 2}D tensor, but got: "
                           f"{shape_list(input.shape)}")
    for i in range(1, input.ndim):
        if input.shape[i] == 0:
            raise RuntimeError(f"{_PREFIX[n]}: Expected input to have non-zero size for "
                               f"non-batch dimensions, but got{shape_list(input.shape)} with "
                               f"dimension {i} being empty.")


def _check_pool(n: int, input: Tensor, kernel: tuple, out: tuple) -> None:
    for axis, k, o, L in zip(_AXES[n], kernel, out, input.shape[-n:]):
        if o + k - 1 > L - _SLACK[n]:
            raise RuntimeError(f"{_PREFIX[n]}: pool {axis} {k} too large relative to input "
                               f"{axis} {L}")


def _check_samples(n: int, input: Tensor, samples: Tensor) -> None:
    if samples.dtype != input.dtype:
        raise RuntimeError("Expect _random_samples to have the same dtype as input")
    if samples.ndim != 3:
        raise RuntimeError(f"Expect _random_samples to have 3 dimensions, got {samples.ndim}")
    batch = input.shape[0] if input.ndim == n + 2 else 1
    if samples.shape[0] < batch:
        raise RuntimeError("Expect _random_samples.size(0) no less then input batch size.")
    if samples.shape[1] != input.shape[-n - 1]:
        raise RuntimeError("Expect _random_samples.size(1) equals to input channel size.")
    if samples.shape[2] != n:
        raise RuntimeError(f"Expect _random_samples.size(2) equals to {n}; got "
                           f"{samples.shape[2]}.")


def _starts(u: np.ndarray, L: int, o: int, k: int) -> np.ndarray:
    """PyTorch's window starts along one axis for samples ``u`` (planes,) -> (planes, o),
    in the samples' floating dtype."""
    seq = np.empty(u.shape + (o,), np.int64)
    if o > 1:
        alpha = u.dtype.type(L - k) / u.dtype.type(o - 1)
        i = np.arange(o - 1).astype(u.dtype)
        seq[:, :-1] = (((i + u[:, None]) * alpha).astype(np.int64)
                       - (u * alpha).astype(np.int64)[:, None])
    if o > 0:
        seq[:, -1] = L - k
    return seq


def _window_table(samples: np.ndarray, sizes: tuple, kernel: tuple, out: tuple) -> np.ndarray:
    """Flat plane indices of every window: (planes, prod(out), prod(kernel)), each window in
    row-major order (as PyTorch scans it)."""
    n = len(sizes)
    # 2-D samples are (width, height); 3-D ones (time, height, width)
    order = (1, 0) if n == 2 else (0, 1, 2)
    strides = np.cumprod((1,) + sizes[::-1])[:-1][::-1]
    planes = samples.shape[0]
    table = np.zeros((planes,) + (1,) * (2 * n), np.int64)
    for axis in range(n):
        starts = _starts(samples[:, order[axis]], sizes[axis], out[axis], kernel[axis])
        idx = (starts[:, :, None] + np.arange(kernel[axis])) * strides[axis]
        shape = [planes] + [1] * (2 * n)
        shape[1 + axis], shape[1 + n + axis] = out[axis], kernel[axis]
        table = table + idx.reshape(shape)
    return table.reshape(planes, int(np.prod(out)), int(np.prod(kernel)))


def _pool(n: int, input: Tensor, kernel: tuple, out: tuple, samples: Tensor) -> tuple:
    """(values, indices) of the fractional max pool with these checked arguments."""
    lead = tuple(input.shape[:-n])
    sizes = tuple(int(s) for s in input.shape[-n:])
    raw = samples.detach().cpu().numpy()[:lead[0] if len(lead) == 2 else 1]
    table = _window_table(raw.reshape(raw.shape[0] * raw.shape[1], n), sizes, kernel, out)

    def f(x: Any) -> Any:
        flat = fnp.reshape(x, (table.shape[0], int(np.prod(sizes))))
        t = const_on(table, x)
        candidates = fnp.take_along_axis(flat, fnp.reshape(t, (t.shape[0], t.shape[1] * t.shape[2])), -1)
        best = fnp.argmax(fnp.reshape(candidates, t.shape), axis=-1)
        index = fnp.take_along_axis(t, fnp.expand_dims(best, -1), -1)[..., 0]
        values = fnp.take_along_axis(flat, index, -1)
        return fnp.reshape(values, lead + out), fnp.reshape(index, lead + out)
    return apply(f"FractionalMaxPool{n}DBackward0", f, [input], multi=True)


def _output_size(n: int, input: Tensor, output_size: Any, output_ratio: Any) -> Any:
    """PyTorch's Python layer: the output size, given or ``int(size * ratio)``."""
    if output_size is None and output_ratio is None:
        raise ValueError(f"fractional_max_pool{n}d requires specifying either an output_size "
                         f"or an output_ratio")
    if output_size is not None:
        return output_size
    if n == 2 and len(output_ratio) > 2:  # (PyTorch's 2-D check; len() of a float raises)
        raise ValueError("fractional_max_pool2d requires output_ratio to either be a single "
                         "Int or tuple of Ints.")
    ratio = tuple(output_ratio) if isinstance(output_ratio, (tuple, list)) else (
        (output_ratio,) * n)
    return [int(input.size(i - n) * ratio[i]) for i in range(n)]


def _fractional(n: int, input: Tensor, kernel_size: Any, output_size: Any, output_ratio: Any,
                samples: Tensor | None) -> tuple:
    output_size = _output_size(n, input, output_size, output_ratio)
    if samples is None:
        batch = 1 if input.dim() == n + 1 else input.size(0)
        samples = _factories.rand(batch, input.size(-n - 1), n, dtype=input.dtype,
                                  device=input.device)
    kernel = _sizes(n, kernel_size, "kernel_size")
    out = _sizes(n, output_size, "output_size")
    _check_input(n, input)  # (in PyTorch's order)
    _check_pool(n, input, kernel, out)
    _check_samples(n, input, samples)
    return _pool(n, input, kernel, out, samples)


def fractional_max_pool2d_with_indices(input: Tensor, kernel_size: Any, output_size: Any = None,
                                       output_ratio: Any = None, return_indices: bool = False,
                                       _random_samples: Tensor | None = None) -> tuple:
    """(maxima, plane indices) over (kH, kW) windows at pseudo-random starts."""
    return _fractional(2, input, kernel_size, output_size, output_ratio, _random_samples)


def fractional_max_pool3d_with_indices(input: Tensor, kernel_size: Any, output_size: Any = None,
                                       output_ratio: Any = None, return_indices: bool = False,
                                       _random_samples: Tensor | None = None) -> tuple:
    """(maxima, volume indices) over (kT, kH, kW) windows at pseudo-random starts."""
    return _fractional(3, input, kernel_size, output_size, output_ratio, _random_samples)


def fractional_max_pool2d(input: Tensor, kernel_size: Any, output_size: Any = None,
                          output_ratio: Any = None, return_indices: bool = False,
                          _random_samples: Tensor | None = None) -> Any:
    out = _fractional(2, input, kernel_size, output_size, output_ratio, _random_samples)
    return out if return_indices else out[0]


def fractional_max_pool3d(input: Tensor, kernel_size: Any, output_size: Any = None,
                          output_ratio: Any = None, return_indices: bool = False,
                          _random_samples: Tensor | None = None) -> Any:
    out = _fractional(3, input, kernel_size, output_size, output_ratio, _random_samples)
    return out if return_indices else out[0]


def _tuple(n: int, value: Any) -> tuple:
    return tuple(value) if isinstance(value, (tuple, list)) else (value,) * n


class _FractionalMaxPoolNd(Module):
    """PyTorch's module: ``_random_samples`` is a buffer (None unless given), and the
    output size or ratio (in (0, 1)) is fixed at construction."""
    _n: int
    _functional: Any

    def __init__(self, kernel_size: Any, output_size: Any = None, output_ratio: Any = None,
                 return_indices: bool = False, _random_samples: Tensor | None = None) -> None:
        super().__init__()
        if self._n == 3 and any(k <= 0 for k in _tuple(3, kernel_size)):
            raise ValueError(f"kernel_size must be greater than 0, but got {kernel_size}")
        self.kernel_size = _tuple(self._n, kernel_size)
        self.return_indices = return_indices
        self.register_buffer("_random_samples", _random_samples)
        self.output_size = None if output_size is None else _tuple(self._n, output_size)
        self.output_ratio = None if output_ratio is None else _tuple(self._n, output_ratio)
        if output_size is None and output_ratio is None:
            raise ValueError(f"{type(self).__name__} requires specifying either an output "
                             f"size, or a pooling ratio")
        if output_size is not None and output_ratio is not None:
            raise ValueError("only one of output_size and output_ratio may be specified")
        if self.output_ratio is not None and not all(0 < r < 1 for r in self.output_ratio):
            raise ValueError(f"output_ratio must be between 0 and 1 (got {output_ratio})")

    def forward(self, input: Tensor) -> Any:
        return type(self)._functional(input, self.kernel_size, self.output_size,
                                      self.output_ratio, self.return_indices,
                                      _random_samples=self._random_samples)


class FractionalMaxPool2d(_FractionalMaxPoolNd):
    """2-D fractional max pooling over (kH, kW) windows."""
    _n = 2
    _functional = staticmethod(fractional_max_pool2d)


class FractionalMaxPool3d(_FractionalMaxPoolNd):
    """3-D fractional max pooling over (kT, kH, kW) windows."""
    _n = 3
    _functional = staticmethod(fractional_max_pool3d)
