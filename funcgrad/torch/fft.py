"""``torch.fft``: discrete Fourier transforms of tensors, differentiable.

Each transform is `funcgrad.numpy.fft`'s under one node named by the kinds of its input
and output as PyTorch's kernels are (``FftR2CBackward0``: real to complex, ``C2C``, ``C2R``;
PyTorch itself may record a conjugation or copy around them);
the derivative is funcgrad's, with the facade's complex convention applied by `apply`.
Integer and boolean inputs are transformed in the default float dtype, as PyTorch's.
"""
from __future__ import annotations

from typing import Any, Callable

import funcgrad.numpy as fnp
from funcgrad.torch import _dtypes as D
from funcgrad.torch._dispatch import apply
from funcgrad.torch._factories import arange
from funcgrad.torch._ops_basic import FUNCTIONS
from funcgrad.torch._tensor import Tensor

__all__ = ["fft", "ifft", "fft2", "ifft2", "fftn", "ifftn", "rfft", "irfft", "rfft2",
           "irfft2", "rfftn", "irfftn", "hfft", "ihfft", "fftfreq", "rfftfreq", "fftshift",
           "ifftshift"]

_NORMS = (None, "backward", "ortho", "forward")


def _floating(input: Tensor) -> Tensor:
    if input.dtype.is_floating_point or input.dtype.is_complex:
        return input
    return input.to(D.get_default_dtype())


def _node(input: Tensor, output_complex: bool) -> str:
    if not output_complex:
        return "FftC2RBackward0"
    return "FftC2CBackward0" if input.dtype.is_complex else "FftR2CBackward0"


def _run(numpy_fn: Callable, output_complex: bool, input: Tensor, norm: str | None,
         out: Tensor | None, **kwargs: Any) -> Tensor:
    if norm not in _NORMS:
        raise RuntimeError(f'Invalid normalization mode: "{norm}"')
    x = _floating(input)
    result = apply(_node(x, output_complex), lambda a: numpy_fn(a, norm=norm, **kwargs), [x])
    return result if out is None else out.copy_(result)


def _transform(numpy_fn: Callable, output_complex: bool) -> Callable:
    """The torch function of 1-D transform ``numpy_fn``: PyTorch's ``n``, ``dim``."""
    def transform(input: Tensor, n: int | None = None, dim: int = -1,
                  norm: str | None = None, *, out: Tensor | None = None) -> Tensor:
        return _run(numpy_fn, output_complex, input, norm, out, n=n, axis=dim)
    transform.__name__ = numpy_fn.__name__
    return transform


def _transform_n(numpy_fn: Callable, output_complex: bool, default_dim: Any = None
                 ) -> Callable:
    """The torch function of n-D transform ``numpy_fn``: PyTorch's ``s`` (sizes of the
    last ``len(s)`` dims when ``dim`` is not given), ``dim``."""
    def transform(input: Tensor, s: Any = None, dim: Any = default_dim,
                  norm: str | None = None, *, out: Tensor | None = None) -> Tensor:
        if dim is None and s is not None:
            dim = tuple(range(-len(s), 0))
        return _run(numpy_fn, output_complex, input, norm, out, s=s, axes=dim)
    transform.__name__ = numpy_fn.__name__
    return transform


fft = _transform(fnp.fft.fft, True)
ifft = _transform(fnp.fft.ifft, True)
rfft = _transform(fnp.fft.rfft, True)
irfft = _transform(fnp.fft.irfft, False)
hfft = _transform(fnp.fft.hfft, False)
ihfft = _transform(fnp.fft.ihfft, True)
fftn = _transform_n(fnp.fft.fftn, True)
ifftn = _transform_n(fnp.fft.ifftn, True)
rfftn = _transform_n(fnp.fft.rfftn, True)
irfftn = _transform_n(fnp.fft.irfftn, False)
fft2 = _transform_n(fnp.fft.fftn, True, (-2, -1))
ifft2 = _transform_n(fnp.fft.ifftn, True, (-2, -1))
rfft2 = _transform_n(fnp.fft.rfftn, True, (-2, -1))
irfft2 = _transform_n(fnp.fft.irfftn, False, (-2, -1))


def fftfreq(n: int, d: float = 1.0, *, dtype: Any = None, device: Any = None,
            requires_grad: bool = False, **kwargs: Any) -> Tensor:
    """The sample frequencies of an ``n``-point transform with spacing ``d``."""
    k = arange(n, dtype=dtype or D.get_default_dtype(), device=device)
    k = FUNCTIONS["where"](k < (n + 1) // 2, k, k - n) / (d * n)
    return k.requires_grad_(requires_grad)


def rfftfreq(n: int, d: float = 1.0, *, dtype: Any = None, device: Any = None,
             requires_grad: bool = False, **kwargs: Any) -> Tensor:
    """The sample frequencies of ``rfft`` of ``n`` points with spacing ``d``."""
    k = arange(n // 2 + 1, dtype=dtype or D.get_default_dtype(), device=device) / (d * n)
    return k.requires_grad_(requires_grad)


def _shift(sign: int) -> Callable:
    def shift(input: Tensor, dim: Any = None) -> Tensor:
        dims = tuple(range(input.ndim)) if dim is None else (
            (dim,) if isinstance(dim, int) else tuple(dim))
        amounts = [sign * (input.shape[d] // 2) for d in dims]
        return FUNCTIONS["roll"](input, amounts, dims)
    return shift


fftshift, ifftshift = _shift(1), _shift(-1)
