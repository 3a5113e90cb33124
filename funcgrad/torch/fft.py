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
from funcgrad.torch._runtime import dtypes as D
from funcgrad.torch._dispatch import apply
from funcgrad.torch import _factories
from funcgrad.torch._factories import arange
from funcgrad.torch._ops_basic import FUNCTIONS
from funcgrad.torch._tensor import Tensor
from funcgrad.torch.nn import functional as _F

__all__ = ["fft", "ifft", "fft2", "ifft2", "fftn", "ifftn", "rfft", "irfft", "rfft2",
           "irfft2", "rfftn", "irfftn", "hfft", "ihfft", "fftfreq", "rfftfreq", "fftshift",
           "ifftshift", "stft", "istft"]

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


def _stft_window(window: Tensor | None, win_length: int, n_fft: int, like: Tensor) -> Tensor:
    """The window of ``win_length`` (ones when None) centred in ``n_fft`` samples."""
    if window is None:
        window = _factories.ones(win_length, dtype=like.dtype)
    if window.shape[0] != win_length:
        raise RuntimeError(f"stft: expected a 1D window tensor of size equal to win_length="
                           f"{win_length}, but got window with size {list(window.shape)}")
    left = (n_fft - win_length) // 2
    return _F.pad(window, (left, n_fft - win_length - left)) if left or \
        n_fft != win_length else window


def stft(input: Tensor, n_fft: int, hop_length: int | None = None,
         win_length: int | None = None, window: Tensor | None = None, center: bool = True,
         pad_mode: str = "reflect", normalized: bool = False, onesided: bool | None = None,
         return_complex: bool | None = None, align_to_window: bool | None = None) -> Tensor:
    """The short-time Fourier transform: (..., frequencies, frames), as PyTorch's
    (frames of ``n_fft`` samples every ``hop_length``, windowed, transformed; ``center``
    pads by n_fft // 2 first)."""
    if return_complex is None and not input.is_complex():
        raise RuntimeError("stft requires the return_complex parameter be given for real "
                           "inputs, and will further require that return_complex=True in a "
                           "future PyTorch release.")
    hop = n_fft // 4 if hop_length is None else hop_length
    win_length = n_fft if win_length is None else win_length
    x = input if input.ndim > 1 else input.unsqueeze(0)
    if center:
        pad = n_fft // 2
        x = _F.pad(x.unsqueeze(1), (pad, pad), mode=pad_mode).squeeze(1)
    frames = x.unfold(-1, n_fft, hop) * _stft_window(window, win_length, n_fft, input)
    onesided = not input.is_complex() if onesided is None else onesided
    spectrum = (rfft if onesided else fft)(frames, norm="ortho" if normalized else None)
    out = spectrum.transpose(-1, -2)
    out = out if input.ndim > 1 else out.squeeze(0)
    return out if return_complex is not False else FUNCTIONS["view_as_real"](out)


def istft(input: Tensor, n_fft: int, hop_length: int | None = None,
          win_length: int | None = None, window: Tensor | None = None, center: bool = True,
          normalized: bool = False, onesided: bool | None = None, length: int | None = None,
          return_complex: bool = False) -> Tensor:
    """The inverse of `stft`: each frame transformed back, windowed and overlap-added,
    divided by the overlapped squared windows (PyTorch's least-squares inverse)."""
    hop = n_fft // 4 if hop_length is None else hop_length
    win_length = n_fft if win_length is None else win_length
    spec = input if input.ndim > 2 else input.unsqueeze(0)
    frames_first = spec.transpose(-1, -2)
    onesided = (spec.shape[-2] != n_fft) if onesided is None else onesided
    norm = "ortho" if normalized else None
    frames = irfft(frames_first, n=n_fft, norm=norm) if onesided and not return_complex \
        else ifft(frames_first, n=n_fft, norm=norm)
    if not return_complex and frames.is_complex():
        frames = frames.real
    win = _stft_window(window, win_length, n_fft, frames.real if frames.is_complex()
                       else frames)
    frames = frames * win
    count = frames.shape[-2]
    total = n_fft + hop * (count - 1)
    starts = _factories.arange(count) * hop
    index = (starts.unsqueeze(1) + _factories.arange(n_fft)).reshape(-1)
    batch = frames.shape[:-2]
    signal = _factories.zeros(*batch, total, dtype=frames.dtype).index_add(
        -1, index, frames.reshape(*batch, -1))
    envelope = _factories.zeros(total, dtype=win.dtype).index_add(
        0, index, (win * win).repeat(count))
    start = n_fft // 2 if center else 0
    end = total - n_fft // 2 if center else total
    if length is not None:
        end = start + length
    signal, envelope = signal[..., start:end], envelope[start:end]
    if bool((envelope.abs() < 1e-11).any()):
        raise RuntimeError("istft(...): window overlap add min: 0 (the window's overlap "
                           "leaves samples with no weight)")
    out = signal / envelope
    if length is not None and out.shape[-1] < length:
        out = _F.pad(out, (0, length - out.shape[-1]))
    return out if input.ndim > 2 else out.squeeze(0)
