"""funcgrad.scipy.signal against scipy.signal: every mode, boundary and fill value, real
and complex operands of every relative size, and derivatives to second order in both
operands."""
import itertools

import numpy as np
import pytest
import scipy.signal as ss

from funcgrad.primitives.kernels import signal as kernels
from funcgrad.scipy import signal as S
from funcgrad.test_util import check_grads

RNG = np.random.RandomState(0)
SHAPES_1D = [((5,), (3,)), ((3,), (5,)), ((4,), (4,)), ((6,), (1,))]
SHAPES_2D = [((5, 4), (3, 2)), ((3, 3), (4, 5)), ((2, 5), (3, 2)), ((3, 4), (3, 4))]
MODES = ("full", "same", "valid")


def _pair(s1, s2, complex_=False):
    a, b = RNG.randn(*s1), RNG.randn(*s2)
    return (a, b + 1j * RNG.randn(*s2)) if complex_ else (a, b)


def _agree(ours, theirs, *args, **kwargs):
    try:
        expected = theirs(*args, **kwargs)
    except ValueError:
        with pytest.raises(ValueError):
            ours(*args, **kwargs)
        return
    np.testing.assert_allclose(np.asarray(ours(*args, **kwargs)), expected, rtol=1e-10,
                               atol=1e-12)


@pytest.mark.parametrize("name", ["convolve", "correlate"])
@pytest.mark.parametrize("method", ["direct", "fft", "auto"])
def test_nd_convolution_matches_scipy(name, method):
    for (s1, s2), mode, cplx in itertools.product(SHAPES_1D + SHAPES_2D, MODES, (False, True)):
        a, b = _pair(s1, s2, cplx)
        _agree(getattr(S, name), getattr(ss, name), a, b, mode, method=method)
    a, b = _pair((2, 3, 4), (2, 2, 3))
    _agree(getattr(S, name), getattr(ss, name), a, b, "same")


@pytest.mark.parametrize("name", ["convolve2d", "correlate2d"])
def test_2d_convolution_matches_scipy(name):
    for (s1, s2), mode, boundary, fill, cplx in itertools.product(
            SHAPES_2D, MODES, ("fill", "wrap", "symm"), (0, 1.5), (False, True)):
        a, b = _pair(s1, s2, cplx)
        _agree(getattr(S, name), getattr(ss, name), a, b, mode, boundary, fill)


def test_fftconvolve():
    a, b = _pair((7,), (3,))
    for mode in MODES:
        _agree(S.fftconvolve, ss.fftconvolve, a, b, mode)


@pytest.mark.parametrize("case", [("convolve", "same", {}), ("correlate", "valid", {}),
                                  ("convolve2d", "full", dict(boundary="wrap")),
                                  ("correlate2d", "same", dict(boundary="symm")),
                                  ("convolve2d", "same", dict(fillvalue=0.7))])
def test_derivatives_in_both_operands(case):
    name, mode, kw = case
    s1, s2 = ((4, 3), (2, 3)) if name.endswith("2d") else ((5,), (3,))
    check_grads(lambda a, b: getattr(S, name)(a, b, mode, **kw), _pair(s1, s2), order=2)


def test_bad_arguments():
    with pytest.raises(ValueError, match="mode"):
        S.convolve(np.ones(3), np.ones(2), mode="circular")
    with pytest.raises(ValueError, match="same dimensionality"):
        S.convolve(np.ones(3), np.ones((2, 2)))
    with pytest.raises(ValueError, match="at least as large"):
        S.convolve(np.ones((3, 2)), np.ones((2, 3)), "valid")
    with pytest.raises(ValueError, match="2-D"):
        S.convolve2d(np.ones(3), np.ones(2))
    with pytest.raises(ValueError, match="boundary"):
        S.convolve2d(np.ones((3, 3)), np.ones((2, 2)), boundary="reflect")


def test_direct_kernel_without_scipy(monkeypatch):
    monkeypatch.setattr(kernels, "_scipy_signal", None)
    a, b = _pair((3, 4), (2, 3), True)
    for mode in MODES:
        np.testing.assert_allclose(np.asarray(S.convolve(a, b, mode)), ss.convolve(a, b, mode),
                                   rtol=1e-12)
