"""funcgrad.numpy.fft: values against numpy.fft for every n (padding, truncation), axis and
norm; derivatives through the padding and the n-dimensional compositions; dtypes; errors.
The primitives' own rules are checked by tests/test_registry_grads.py."""
import numpy as np
import pytest

import funcgrad
import funcgrad.numpy as fnp
from funcgrad.test_util import check_grads

FFT = fnp.fft
RNG = np.random.RandomState(0)
NORMS = [None, "backward", "ortho", "forward"]
X = RNG.standard_normal((3, 6))
Z = X + 1j * RNG.standard_normal((3, 6))


def close(actual, expected):
    actual = np.asarray(actual)
    assert actual.shape == np.shape(expected)
    np.testing.assert_allclose(actual, expected, rtol=1e-7, atol=1e-9)


def grads(f, *args):
    check_grads(f, args, order=2, modes=("fwd", "rev"))


@pytest.mark.parametrize("norm", NORMS)
@pytest.mark.parametrize("n", [None, 1, 4, 6, 9])
@pytest.mark.parametrize("axis", [0, -1])
def test_one_axis_transforms_match_numpy(norm, n, axis):
    close(FFT.fft(Z, n, axis, norm), np.fft.fft(Z, n, axis, norm))
    close(FFT.ifft(Z, n, axis, norm), np.fft.ifft(Z, n, axis, norm))
    close(FFT.fft(X, n, axis, norm), np.fft.fft(X, n, axis, norm))
    close(FFT.rfft(X, n, axis, norm), np.fft.rfft(X, n, axis, norm))
    if n != 1 or axis == -1:
        close(FFT.irfft(Z, n, axis, norm), np.fft.irfft(Z, n, axis, norm))


@pytest.mark.parametrize("norm", NORMS)
def test_n_dimensional_transforms_match_numpy(norm):
    z, x = Z.reshape(3, 2, 3), X.reshape(3, 2, 3)
    close(FFT.fft2(Z, norm=norm), np.fft.fft2(Z, norm=norm))
    close(FFT.ifft2(Z, s=(4, 5), norm=norm), np.fft.ifft2(Z, s=(4, 5), norm=norm))
    close(FFT.fftn(z, axes=(0, 2), norm=norm), np.fft.fftn(z, axes=(0, 2), norm=norm))
    close(FFT.ifftn(z, norm=norm), np.fft.ifftn(z, norm=norm))
    close(FFT.rfftn(x, norm=norm), np.fft.rfftn(x, norm=norm))
    close(FFT.rfft2(X, s=(2, 5), norm=norm), np.fft.rfft2(X, s=(2, 5), norm=norm))
    close(FFT.irfftn(z, norm=norm), np.fft.irfftn(z, norm=norm))
    close(FFT.irfft2(Z, s=(4, 7), norm=norm), np.fft.irfft2(Z, s=(4, 7), norm=norm))


def test_helpers_match_numpy():
    close(FFT.fftfreq(5, 0.1), np.fft.fftfreq(5, 0.1))
    close(FFT.rfftfreq(6), np.fft.rfftfreq(6))
    close(FFT.fftshift(X), np.fft.fftshift(X))
    close(FFT.ifftshift(X, axes=1), np.fft.ifftshift(X, axes=1))
    close(FFT.ifftshift(FFT.fftshift(Z)), Z)


@pytest.mark.parametrize("norm", ["backward", "ortho", "forward"])
@pytest.mark.parametrize("n", [None, 3, 8])
def test_gradients_through_padding_and_truncation(norm, n):
    grads(lambda z: FFT.fft(z, n, 1, norm), Z)
    grads(lambda z: FFT.ifft(z, n, 0, norm), Z)
    grads(lambda x: FFT.rfft(x, n, 1, norm), X)
    grads(lambda z: FFT.irfft(z, n, 1, norm), Z)
    grads(lambda x: FFT.fft(x, n, 1, norm), X)


@pytest.mark.parametrize("norm", ["backward", "ortho"])
def test_n_dimensional_gradients(norm):
    z, x = Z.reshape(3, 2, 3), X.reshape(3, 2, 3)
    grads(lambda z: FFT.fftn(z, s=(2, 4), axes=(0, 2), norm=norm), z)
    grads(lambda x: FFT.rfftn(x, norm=norm), x)
    grads(lambda z: FFT.irfft2(z, s=(3, 4), norm=norm), z)
    grads(lambda x: FFT.fftshift(x), x)


def test_parseval_gradient():
    # sum |fft(x)|^2 = N sum |x|^2, so its gradient is 2 N x
    f = lambda x: fnp.sum(fnp.abs(FFT.fft(x)) ** 2)
    close(funcgrad.grad(f)(X[0]), 2 * 6 * X[0])
    g = lambda x: fnp.sum(fnp.abs(FFT.fft(x, norm="ortho")) ** 2)
    close(funcgrad.grad(g)(X[0]), 2 * X[0])


def test_round_trips_and_their_gradients():
    close(FFT.ifft(FFT.fft(Z)), Z)
    close(FFT.irfft(FFT.rfft(X), 6), X)
    identity = funcgrad.grad(lambda x: fnp.sum(FFT.irfft(FFT.rfft(x), 6) * X[0]))(X[0])
    close(identity, X[0])


def test_float32_and_complex64_stay_single_precision():
    x = X.astype(np.float32)
    assert FFT.fft(x).dtype == np.complex64
    assert FFT.rfft(x).dtype == np.complex64
    assert FFT.irfft(Z.astype(np.complex64)).dtype == np.float32
    for f in (lambda x: fnp.sum(fnp.abs(FFT.fft(x, 8)) ** 2),
              lambda x: fnp.sum(fnp.real(FFT.rfft(x, 4))),
              lambda x: fnp.sum(FFT.irfft(FFT.rfft(x, norm="ortho"), 6, norm="ortho") ** 2)):
        value, g = funcgrad.value_and_grad(f)(x)
        assert value.dtype == np.float32 and g.dtype == np.float32


def test_errors():
    with pytest.raises(TypeError, match="real input"):
        FFT.rfft(Z)
    with pytest.raises(ValueError, match="norm"):
        FFT.fft(X, norm="unitary")
    with pytest.raises(ValueError, match=r"\(0\)"):
        FFT.fft(X, 0)
    with pytest.raises(ValueError, match=r"\(0\)"):
        FFT.irfft(Z[:, :1])
    with pytest.raises(ValueError, match="different lengths"):
        FFT.fftn(Z, s=(2, 3), axes=(0,))
