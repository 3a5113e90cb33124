"""funcgrad.scipy.special against scipy.special: values on grids that include poles,
tails and float32, derivatives to second order in every continuous argument, the
parameter derivatives without closed form (gammainc in a, zeta in x) against finite
differences of scipy and against JAX, and the behaviour without scipy."""
import math

import numpy as np
import pytest
import scipy.special as ss

import funcgrad as fg
import funcgrad.numpy as fnp
from funcgrad.primitives import special as special_prims
from funcgrad.scipy import special as S
from funcgrad.test_util import check_grads

X = np.array([0.05, 0.3, 1.0, 2.5, 7.0, 30.0])
SIGNED = np.concatenate([-X[::-1], [0.0], X])
UNIT = np.array([1e-10, 0.01, 0.25, 0.5, 0.75, 0.99])

# name: (arguments for the values, interior arguments for the derivatives, the
#        indices of the arguments not differentiated)
TABLE = {
    "erfinv": ((np.concatenate([-UNIT, UNIT]),), ((np.array([-0.6, 0.2, 0.7]),)), ()),
    "erfcinv": ((np.concatenate([UNIT, 2 - UNIT]),), ((np.array([0.3, 1.0, 1.6]),)), ()),
    "ndtri": ((UNIT,), ((np.array([0.1, 0.5, 0.8]),)), ()),
    "log_ndtr": ((np.linspace(-60, 40, 11),), ((np.array([-30.0, -1.0, 0.5, 6.0]),)), ()),
    "gamma": ((np.array([-2.5, -0.5, 0.1, 1.0, 4.5, 20.0]),), ((np.array([-1.5, 0.7, 3.0]),)),
              ()),
    "rgamma": ((np.array([-3.0, -2.5, 0.0, 0.1, 4.5, 170.0]),),
               ((np.array([-1.5, 0.7, 3.0]),)), ()),
    "gammasgn": ((np.array([-2.5, -1.5, 0.5, 3.0]),), None, ()),
    "gammaln": ((X,), ((np.array([0.4, 3.0, 12.0]),)), ()),
    "beta": ((X[:, None], X), ((np.array([0.5, 2.0]), np.array([[1.5], [3.0]]))), ()),
    "betaln": ((X[:, None] * 30, X), ((np.array([0.5, 20.0]), np.array([[1.5], [300.0]]))),
               ()),
    "gammainc": ((X[:, None], X), ((np.array([0.5, 2.0, 9.0]), np.array([[0.3], [4.0]]))),
                 ()),
    "gammaincc": ((X[:, None], X), ((np.array([0.5, 2.0, 9.0]), np.array([[0.3], [4.0]]))),
                  ()),
    "gammaincinv": ((X[:, None], UNIT), ((np.array([0.7, 3.0]), np.array([[0.2], [0.8]]))),
                    ()),
    "betainc": ((X[:, None], X[::-1, None, None], UNIT),
                ((2.0, 3.0, np.array([0.2, 0.5, 0.9]))), (0, 1)),
    "betaincinv": ((X[:, None], X[::-1, None, None], UNIT),
                   ((2.0, 3.0, np.array([0.2, 0.5, 0.9]))), (0, 1)),
    "stdtr": ((X[:, None], SIGNED), ((3.5, np.array([-2.0, 0.3, 4.0]))), (0,)),
    "stdtrit": ((X[:, None], UNIT), ((3.5, np.array([0.1, 0.5, 0.8]))), (0,)),
    "digamma": ((np.array([-2.5, 0.1, 1.0, 30.0]),), ((np.array([0.4, 3.0]),)), ()),
    "multigammaln": ((np.array([2.5, 7.0]), 3), ((np.array([2.5, 7.0]), 3)), (1,)),
    "zeta": ((np.array([1.5, 2.0, 5.0, 30.0])[:, None], np.array([0.3, 1.0, 4.0])),
             ((np.array([1.5, 3.0]), np.array([[0.4], [2.0]]))), ()),
    "i0": ((SIGNED,), ((np.array([-2.0, 0.3, 5.0]),)), ()),
    "i0e": ((SIGNED * 10,), ((np.array([-2.0, 0.3, 5.0]),)), ()),
    "i1": ((SIGNED,), ((np.array([-2.0, 0.3, 5.0]),)), ()),
    "i1e": ((SIGNED * 10,), ((np.array([-2.0, 0.3, 5.0]),)), ()),
    "iv": ((np.array([0.0, 1.0, 2.5])[:, None], X), ((1.5, np.array([0.3, 2.0, 6.0]))), (0,)),
    "ive": ((np.array([0.0, 1.0, 2.5])[:, None], X * 10),
            ((1.5, np.array([0.8, 2.0, 6.0]))), (0,)),
    "j0": ((SIGNED,), ((np.array([-2.0, 0.3, 5.0]),)), ()),
    "j1": ((SIGNED,), ((np.array([-2.0, 0.3, 5.0]),)), ()),
    "jv": ((np.array([0.0, 1.0, 2.5])[:, None], X), ((2.5, np.array([0.3, 2.0, 6.0]))), (0,)),
    "jn": ((np.array([0, 1, 3])[:, None], SIGNED), ((2, np.array([-1.0, 2.0, 6.0]))), (0,)),
    "y0": ((X,), ((np.array([0.3, 2.0, 6.0]),)), ()),
    "y1": ((X,), ((np.array([0.3, 2.0, 6.0]),)), ()),
    "yv": ((np.array([0.0, 1.0, 2.5])[:, None], X), ((1.5, np.array([0.3, 2.0, 6.0]))), (0,)),
    "yn": ((np.array([0, 1, 3])[:, None], X), ((2, np.array([0.8, 2.0, 6.0]))), (0,)),
    "spence": ((np.array([0.0, 0.1, 1.0, 1.0005, 2.0, 40.0]),),
               ((np.array([0.2, 1.0, 1.0005, 3.0]),)), ()),
    "xlogy": ((np.array([0.0, 0.0, 1.5, -2.0]), np.array([0.0, 2.0, 3.0, 0.5])),
              ((np.array([0.0, 1.5]), np.array([2.0, 3.0]))), ()),
    "xlog1py": ((np.array([0.0, 0.0, 1.5]), np.array([-1.0, 2.0, -0.5])),
                ((np.array([0.0, 1.5]), np.array([2.0, -0.5]))), ()),
    "entr": ((np.array([-1.0, 0.0, 0.3, 2.0]),), ((np.array([0.3, 2.0]),)), ()),
    "rel_entr": ((np.array([0.0, 0.0, 1.0, 2.0, -1.0, 1.0]),
                  np.array([0.0, 1.0, 1.0, 3.0, 1.0, -1.0])),
                 ((np.array([0.5, 2.0]), np.array([1.5, 0.7]))), ()),
    "kl_div": ((np.array([0.0, 0.0, 1.0, 2.0, -1.0, 1.0]),
                np.array([0.0, 1.0, 1.0, 3.0, 1.0, -1.0])),
               ((np.array([0.5, 2.0]), np.array([1.5, 0.7]))), ()),
    "log_expit": ((np.linspace(-800, 800, 9),), ((np.array([-30.0, 0.5, 40.0]),)), ()),
    "logit": ((UNIT,), ((np.array([0.1, 0.5, 0.8]),)), ()),
    "factorial": ((np.array([-1.0, 0.0, 3.0, 4.5]),), ((np.array([0.5, 3.0]),)), ()),
}


def _close(actual, expected, rtol):
    np.testing.assert_allclose(np.asarray(actual), expected, rtol=rtol, atol=1e-300)


@pytest.mark.parametrize("name", sorted(TABLE))
def test_values_match_scipy(name):
    values, _, _ = TABLE[name]
    with np.errstate(all="ignore"):
        expected = getattr(ss, name)(*values)
        _close(getattr(S, name)(*values), expected, rtol=1e-10)


@pytest.mark.parametrize("name", sorted(n for n in TABLE if TABLE[n][1] is not None))
def test_derivatives_to_second_order(name):
    _, args, frozen = TABLE[name]
    f = getattr(S, name)
    free = [i for i in range(len(args)) if i not in frozen]

    def of_free(*xs):
        full = list(args)
        for i, x in zip(free, xs):
            full[i] = x
        return f(*full)
    check_grads(of_free, [np.asarray(args[i], np.float64) for i in free], order=2,
                rtol=1e-5, atol=1e-7)


@pytest.mark.parametrize("name", ["erfinv", "ndtri", "gamma", "gammainc", "zeta", "i0e",
                                  "jv", "betainc", "xlogy"])
def test_float32_in_float32_out(name):
    values, _, _ = TABLE[name]
    args32 = [np.asarray(v, np.float32) if np.ndim(v) else v for v in values]
    with np.errstate(all="ignore"):
        out = getattr(S, name)(*args32)
    assert out.dtype == np.float32


def test_complex_arguments_keep_their_imaginary_part():
    """scipy's erf and erfc take complex numbers; a Python complex must not be cast to
    float (found by running HIPS autograd's test_scipy.py through funcgrad's names)."""
    z = 0.3 + 0.2j
    np.testing.assert_allclose(complex(S.erf(z)), complex(ss.erf(z)), rtol=1e-14)
    np.testing.assert_allclose(np.asarray(S.erfc(np.array([z, -1 + 0.5j]))),
                               ss.erfc(np.array([z, -1 + 0.5j])), rtol=1e-14)
    check_grads(S.erf, (np.array([z, -0.4 + 1.1j]),), order=2)


def _fd(f, x, h):
    return (f(x + h) - f(x - h)) / (2 * h)


def test_gammainc_derivatives_in_a_of_every_order():
    """The a-derivatives come from the Taylor kernel (series and continued fraction);
    compared with central differences of scipy's gammainc/gammaincc."""
    a = np.array([0.05, 0.7, 3.0, 3.0, 40.0, 1000.0, 1e4])
    x = np.array([0.02, 2.0, 0.5, 30.0, 38.0, 1010.0, 1.01e4])
    d1 = fg.grad(lambda a: fnp.sum(S.gammainc(a, x)))(a)
    expected = _fd(lambda a: -ss.gammaincc(a, x), a, 1e-6)
    _close(d1, expected, rtol=1e-6)
    d1c = fg.grad(lambda a: fnp.sum(S.gammaincc(a, x)))(a)
    _close(d1c, -expected, rtol=1e-6)
    d2 = fg.grad(lambda a: fnp.sum(fg.grad(lambda a: fnp.sum(S.gammainc(a, x)))(a)))(a)
    h = 1e-3 * np.sqrt(np.maximum(a, 1.0))  # P varies on the scale sqrt(a)
    _close(d2, _fd(lambda a: _fd(lambda b: -ss.gammaincc(b, x), a, h), a, h), rtol=1e-5)
    # the mixed derivative d2/da dx = d/da of the gamma density
    dx = lambda a: fg.grad(lambda x: fnp.sum(S.gammainc(a, x)))(x)  # noqa: E731
    mixed = fg.jacfwd(lambda a: dx(a))(a)
    density = np.exp((a - 1) * np.log(x) - x - ss.gammaln(a))
    _close(np.diagonal(np.asarray(mixed)), density * (np.log(x) - ss.digamma(a)), rtol=1e-8)


def test_zeta_derivatives_in_x_and_q():
    s = np.array([1.2, 2.0, 3.5, 10.0, 2.0, 0.5, -0.5, -3.3, -11.5])
    q = np.array([1.0, 0.5, 3.0, 0.2, 100.0, 1.0, 1.0, 1.0, 1.0])
    riemann = q == 1

    def scipy_zeta(s):
        return np.where(riemann, ss.zeta(s), ss.zeta(s, q))
    _close(S.zeta(s[riemann]), ss.zeta(s[riemann]), rtol=1e-12)
    _close(S.zeta(s, q), scipy_zeta(s), rtol=1e-12)
    _close(fg.grad(lambda s: fnp.sum(S.zeta(s, q)))(s), _fd(scipy_zeta, s, 1e-6), rtol=1e-7)
    d2 = fg.grad(lambda s: fnp.sum(fg.grad(lambda s: fnp.sum(S.zeta(s, q)))(s)))(s)
    _close(d2, _fd(lambda s: _fd(scipy_zeta, s, 1e-4), s, 1e-4), rtol=1e-5)
    hurwitz = ~riemann
    dq = fg.grad(lambda q: fnp.sum(S.zeta(s[hurwitz], q)))(q[hurwitz])
    _close(dq, _fd(lambda q: ss.zeta(s[hurwitz], q), q[hurwitz], 1e-6), rtol=1e-7)


def test_derivatives_that_are_not_implemented_say_so():
    with pytest.raises(NotImplementedError, match="betainc with respect to a"):
        fg.grad(lambda a: S.betainc(a, 2.0, 0.3))(1.5)
    with pytest.raises(NotImplementedError, match="iv with respect to v"):
        fg.grad(lambda v: S.iv(v, 2.0))(1.5)
    with pytest.raises(NotImplementedError, match="stdtr with respect to df"):
        fg.jvp(lambda df: S.stdtr(df, 0.3), (3.0,), (1.0,))


def test_bad_arguments_raise_scipys_errors():
    with pytest.raises(ValueError, match=r"condition a \(.*\) > 0.5 \* \(d-1\)"):
        S.multigammaln(0.5, 3)
    with pytest.raises(TypeError, match="integer"):
        S.polygamma(1.5, 2.0)


def test_without_scipy_kernels_compute_or_a_clear_error_names_the_extra(monkeypatch):
    monkeypatch.setattr(special_prims, "_scipy_special", None)
    a, x = np.array([0.5, 3.0, 20.0]), np.array([0.2, 4.0, 25.0])
    _close(S.gammainc(a, x), ss.gammainc(a, x), rtol=1e-12)
    _close(S.gammaincc(a, x), ss.gammaincc(a, x), rtol=1e-11)
    _close(S.zeta(np.array([1.5, 4.0]), np.array([0.5, 2.0])),
           ss.zeta([1.5, 4.0], [0.5, 2.0]), rtol=1e-12)
    _close(S.xlogy(np.array([0.0, 2.0]), np.array([0.0, 3.0])), [0.0, 2 * math.log(3.0)],
           rtol=1e-15)
    _close(S.i0(x), ss.i0(x), rtol=1e-14)
    _close(S.i1(-x), ss.i1(-x), rtol=1e-14)
    _close(fg.grad(lambda x: fnp.sum(S.i1(x)))(x), ss.i0(x) - ss.i1(x) / x, rtol=1e-13)
    for call in (lambda: S.betainc(1.0, 2.0, 0.5), lambda: S.i0e(1.0), lambda: S.erfinv(0.3)):
        with pytest.raises(ImportError, match=r"pip install 'funcgrad\[scipy\]'"):
            call()


def test_gradients_agree_with_jax():
    jax = pytest.importorskip("jax")
    jax.config.update("jax_enable_x64", True)
    jsp = pytest.importorskip("jax.scipy.special")
    with jax.disable_jit():  # op by op: cheaper here than compiling each reference
        _compare_gradients_with_jax(jax, jsp)


def _compare_gradients_with_jax(jax, jsp):
    a, x = np.array([0.7, 3.0, 12.0]), np.array([0.5, 4.0, 11.0])
    ours = fg.grad(lambda a, x: fnp.sum(S.gammainc(a, x)), (0, 1))(a, x)
    theirs = jax.grad(lambda a, x: jsp.gammainc(a, x).sum(), (0, 1))(a, x)
    for o, t in zip(ours, theirs):
        _close(o, np.asarray(t), rtol=1e-8)
    for name in ("erfinv", "i0e", "log_ndtr", "ndtri"):
        args = TABLE[name][1]
        ours = fg.grad(lambda x: fnp.sum(getattr(S, name)(x)))(*args)
        theirs = jax.grad(lambda x: getattr(jsp, name)(x).sum())(*args)
        _close(ours, np.asarray(theirs), rtol=1e-9)
    ours = fg.grad(lambda x, y: fnp.sum(S.xlogy(x, y)), (0, 1))(*TABLE["xlogy"][1])
    theirs = jax.grad(lambda x, y: jsp.xlogy(x, y).sum(), (0, 1))(*TABLE["xlogy"][1])
    for o, t in zip(ours, theirs):
        _close(o, np.asarray(t), rtol=1e-12)
