"""torch.fft against PyTorch: values, dtypes, node names and gradients (through the
complex results) of every transform, in float64 and float32."""
from __future__ import annotations

import numpy as np
import pytest

import funcgrad.torch as F

PROGRAMS = [
    "m.fft.fft(x)", "m.fft.ifft(x, n=6, dim=1, norm='ortho')", "m.fft.rfft(x)",
    "m.fft.irfft(m.fft.rfft(x))", "m.fft.irfft(x.to(m.complex128), n=5)", "m.fft.fft2(x)",
    "m.fft.ifft2(x, s=(4, 6))", "m.fft.fftn(x)", "m.fft.fftn(x, dim=(0, 2), norm='forward')",
    "m.fft.rfftn(x)", "m.fft.irfftn(m.fft.rfftn(x))", "m.fft.rfft2(x)",
    "m.fft.irfft2(m.fft.rfft2(x))", "m.fft.hfft(x)", "m.fft.ihfft(x)", "m.fft.fftshift(x)",
    "m.fft.ifftshift(x, dim=1)", "m.fft.fft(x.to(m.complex64))", "m.fft.fftn(x, s=(3, 5))",
    "m.fft.fft(m.tensor([1, 2, 3]) * x[0, 0, :3])",
]


def _run(m, program, dtype):
    x = m.tensor(np.sin(np.arange(24.0)).reshape(2, 3, 4), dtype=getattr(m, dtype),
                 requires_grad=True)
    y = eval(program, {"m": m, "x": x})
    ((y.abs() ** 2).sum() if y.is_complex() else (y ** 2).sum()).backward()
    return y.detach().resolve_conj().numpy(), x.grad.numpy(), str(y.dtype)


@pytest.mark.parametrize("dtype", ["float64", "float32"])
@pytest.mark.parametrize("program", PROGRAMS)
def test_transforms_match_pytorch(real, program, dtype):
    ours, theirs = _run(F, program, dtype), _run(real, program, dtype)
    assert ours[2] == theirs[2]
    tol = 1e-12 if ours[2] in ("torch.float64", "torch.complex128") else 2e-4
    np.testing.assert_allclose(ours[0], theirs[0], rtol=tol, atol=tol)
    np.testing.assert_allclose(ours[1], theirs[1], rtol=tol, atol=tol)


def test_frequencies_match_pytorch(real):
    for m_args in ((5,), (6, 0.5), (4, 2.0)):
        for name in ("fftfreq", "rfftfreq"):
            np.testing.assert_allclose(getattr(F.fft, name)(*m_args).numpy(),
                                       getattr(real.fft, name)(*m_args).numpy())


def test_bad_norm_is_refused(real):
    for m in (F, real):
        with pytest.raises(RuntimeError, match="Invalid normalization mode"):
            m.fft.fft(m.ones(4), norm="bad")


STFT_OPTIONS = [dict(n_fft=8, return_complex=True),
                dict(n_fft=8, hop_length=3, window="hann", return_complex=True),
                dict(n_fft=8, center=False, normalized=True, return_complex=True),
                dict(n_fft=8, win_length=6, window="hann", onesided=False,
                     return_complex=True),
                dict(n_fft=8, return_complex=False),
                dict(n_fft=6, hop_length=2, pad_mode="constant", return_complex=True)]


def _stft(m, options, batched):
    x = m.tensor(np.sin(np.arange(80.0) / 3).reshape(2, 40)[:None if batched else 1]
                 .squeeze(), dtype=m.float64, requires_grad=True)
    kwargs = dict(options)
    if kwargs.get("window") == "hann":
        kwargs["window"] = m.hann_window(kwargs.get("win_length", 8), dtype=m.float64)
    y = m.stft(x, **kwargs)
    (y.abs() ** 2 if y.is_complex() else y ** 2).sum().backward()
    return y.detach().resolve_conj().numpy(), x.grad.numpy()


@pytest.mark.parametrize("batched", [False, True])
@pytest.mark.parametrize("options", range(len(STFT_OPTIONS)))
def test_stft_matches_pytorch(real, options, batched):
    for a, b in zip(_stft(F, STFT_OPTIONS[options], batched),
                    _stft(real, STFT_OPTIONS[options], batched)):
        np.testing.assert_allclose(a, b, rtol=1e-10, atol=1e-12)


def test_istft_matches_pytorch_and_inverts(real):
    def run(m):
        x = m.tensor(np.sin(np.arange(80.0) / 3).reshape(2, 40), dtype=m.float64)
        w = m.hann_window(8, dtype=m.float64)
        spec = m.stft(x, 8, hop_length=2, window=w, return_complex=True).requires_grad_()
        back = m.istft(spec, 8, hop_length=2, window=w, length=40)
        (back ** 2).sum().backward()
        return back.detach().numpy(), spec.grad.resolve_conj().numpy(), x.numpy()
    ours, theirs = run(F), run(real)
    np.testing.assert_allclose(ours[0], ours[2], atol=1e-12)
    for a, b in zip(ours[:2], theirs[:2]):
        np.testing.assert_allclose(a, b, rtol=1e-9, atol=1e-12)


def test_stft_needs_return_complex_for_real_input(real):
    for m in (F, real):
        with pytest.raises(RuntimeError, match="stft requires the return_complex parameter"):
            m.stft(m.ones(16), 8)
