"""Numerical kernels of the special functions: pure-numpy fallbacks and parameter derivatives.

Two kinds of computation live here, on raw numpy arrays (cupy arrays are computed on the
host and moved back, see `on_host`):

- fallbacks used when scipy is not installed: erf, erfc, lgamma vectorised from `math`;
  digamma and polygamma by the recurrence psi(x) = psi(x + 1) - 1/x up to x >= 20 and the
  asymptotic series in Bernoulli numbers (about 1e-14 relative);
- derivatives of any order with respect to a parameter that has no closed form: d^k/da^k
  of the regularised incomplete gamma P(a, x), and d^k/ds^k of the Hurwitz zeta(s, q).
  Both are the series (or continued fraction) that computes the function, evaluated in
  truncated-Taylor arithmetic in the parameter: every number is a polynomial
  c_0 + c_1 e + ... + c_K e^K, and the k-th derivative is k! c_k. At order 0 the same code
  is the function itself, which is the fallback for gammainc and zeta.
"""
from __future__ import annotations

import math
from typing import Any, Callable

import numpy as np

try:
    import scipy.special as _scipy_special
except ImportError:  # scipy is optional: the fallbacks below take over
    _scipy_special = None

__all__ = ["digamma_fallback", "polygamma_fallback", "expit_fallback", "lgamma_fallback",
           "erf_fallback", "erfc_fallback", "i1_fallback", "gammainc_taylor", "zeta_taylor", "on_host"]

# B_2, B_4, ..., B_24
_BERNOULLI = (1 / 6, -1 / 30, 1 / 42, -1 / 30, 5 / 66, -691 / 2730, 7 / 6, -3617 / 510,
              43867 / 798, -174611 / 330, 854513 / 138, -236364091 / 2730)
_ASYMPTOTIC_FROM = 20.0
_EPS = 1e-16
_MAX_TERMS = 20000


def on_host(fn: Callable) -> Callable:
    """``fn`` (numpy code) applied to cupy arrays through host copies, result moved back."""
    def run(*args: Any, **kwargs: Any) -> Any:
        gpu = [a for a in args if hasattr(a, "__cuda_array_interface__")]
        if not gpu:
            return fn(*args, **kwargs)
        import cupy  # optional: only for GPU arrays
        out = fn(*[cupy.asnumpy(a) if hasattr(a, "__cuda_array_interface__") else a
                   for a in args], **kwargs)
        return cupy.asarray(out)
    run.__name__ = getattr(fn, "__name__", "kernel")
    run.__doc__ = fn.__doc__
    return run


# -- pure-numpy fallbacks -----------------------------------------------------------------

def _vectorize(f: Callable) -> Callable:
    ufunc = np.frompyfunc(f, 1, 1)
    return lambda x: np.asarray(ufunc(np.asarray(x, np.float64)), np.float64)


def _lgamma(v: float) -> float:
    try:
        return math.lgamma(v)
    except ValueError:  # a pole: 0, -1, -2, ...
        return math.inf


erf_fallback = _vectorize(math.erf)
erfc_fallback = _vectorize(math.erfc)
lgamma_fallback = _vectorize(_lgamma)


def _shift_up(x: np.ndarray, term: Callable[[np.ndarray], np.ndarray]) -> tuple:
    """(x shifted by whole steps to >= 20, the sum of ``term`` over the skipped points)."""
    acc = np.zeros_like(x)
    x = x.copy()
    low = x < _ASYMPTOTIC_FROM
    while low.any():
        acc[low] += term(x[low])
        x[low] += 1.0
        low = x < _ASYMPTOTIC_FROM
    return x, acc


def digamma_fallback(x: Any) -> np.ndarray:
    """psi(x): reflection psi(x) = psi(1 - x) - pi / tan(pi x) below 1/2, recurrence up to
    20, then ln x - 1/(2x) - sum B_2k / (2k x^2k). -inf at 0, nan at negative integers."""
    x = np.asarray(x, np.float64)
    with np.errstate(divide="ignore", invalid="ignore"):
        reflect = x < 0.5
        y, acc = _shift_up(np.where(reflect, 1.0 - x, x), lambda v: -1.0 / v)
        inv2 = 1.0 / (y * y)
        series = sum(b / (2 * k) * inv2 ** k for k, b in enumerate(_BERNOULLI, 1))
        out = acc + np.log(y) - 0.5 / y - series
        frac = x - np.round(x)  # tan(pi x) from the fractional part keeps its precision
        out = np.where(reflect, out - np.pi / np.tan(np.pi * frac), out)
        return np.where(x == 0, -np.inf, np.where((x < 0) & (frac == 0), np.nan, out))


def polygamma_fallback(n: Any, x: Any) -> np.ndarray:
    """psi^(n)(x) for integer n >= 0: recurrence psi^(n)(x) = psi^(n)(x + 1) +
    (-1)^(n+1) n! / x^(n+1) up to 20, then (-1)^(n+1) [(n-1)!/x^n + n!/(2 x^(n+1)) +
    sum B_2k (2k+n-1)! / ((2k)! x^(2k+n))]."""
    n, x = np.broadcast_arrays(np.asarray(n), np.asarray(x, np.float64))
    out = np.empty(x.shape)
    for order in np.unique(n):
        at = n == order
        out[at] = _polygamma_of_order(int(order), x[at])
    return out


def _polygamma_of_order(n: int, x: np.ndarray) -> np.ndarray:
    if n < 0:
        return np.full(x.shape, np.nan)
    if n == 0:
        return digamma_fallback(x)
    with np.errstate(divide="ignore", invalid="ignore", over="ignore"):
        y, acc = _shift_up(x, lambda v: 1.0 / v ** (n + 1))
        series = sum(b * math.factorial(2 * k + n - 1) / math.factorial(2 * k)
                     / y ** (2 * k + n) for k, b in enumerate(_BERNOULLI, 1))
        tail = math.factorial(n - 1) / y ** n + math.factorial(n) / (2 * y ** (n + 1))
        return (-1) ** (n + 1) * (math.factorial(n) * acc + tail + series)


def expit_fallback(x: Any) -> Any:
    """1 / (1 + exp(-x)) as exp(-log(1 + exp(-x))): no overflow for any x."""
    return np.exp(-np.logaddexp(0, -np.asarray(x)))


def i1_fallback(x: Any) -> np.ndarray:
    """The modified Bessel function I_1(x) = sum_k (x/2)^(2k+1) / (k! (k+1)!), summed until
    the terms stop changing the total (every term has the sign of x: no cancellation)."""
    x = np.asarray(x, np.float64)
    term = x / 2
    total = term.copy()
    quarter = x * x / 4
    k = 1
    with np.errstate(over="ignore", invalid="ignore"):
        while np.any(np.abs(term) > _EPS * np.abs(total)):
            term = term * quarter / (k * (k + 1))
            total = total + term
            k += 1
    return total


def _polygamma(n: int, x: np.ndarray) -> np.ndarray:
    if _scipy_special is not None:
        return _scipy_special.polygamma(n, x)
    return _polygamma_of_order(n, x)


def _lgamma_values(x: np.ndarray) -> np.ndarray:
    return _scipy_special.gammaln(x) if _scipy_special is not None else lgamma_fallback(x)


# -- truncated Taylor arithmetic: a number is a list [c_0, ..., c_K] of arrays ---------------

def _mul(a: list, b: list) -> list:
    return [sum(a[i] * b[n - i] for i in range(n + 1)) for n in range(len(a))]


def _recip(a: list) -> list:
    out = [1.0 / a[0]]
    for n in range(1, len(a)):
        out.append(-sum(a[i] * out[n - i] for i in range(1, n + 1)) * out[0])
    return out


def _exp(a: list) -> list:
    out = [np.exp(a[0])]
    for n in range(1, len(a)):
        out.append(sum(j * a[j] * out[n - j] for j in range(1, n + 1)) / n)
    return out


def _linear(c0: Any, c1: Any, order: int, like: np.ndarray) -> list:
    """c0 + c1 e as a Taylor number of ``order``."""
    zero = np.zeros_like(like)
    return [c0 + zero, c1 + zero] + [zero] * (order - 1) if order else [c0 + zero]


def _inv_linear(c: np.ndarray, order: int) -> list:
    """1 / (c + e): the coefficients (-1)^j / c^(j+1)."""
    inv = 1.0 / c
    return [(-1) ** j * inv ** (j + 1) for j in range(order + 1)]


def _log_gamma_shifted(a: np.ndarray, order: int) -> list:
    """lgamma(a + e): lgamma(a), psi(a), psi^(j-1)(a) / j! for j >= 2."""
    out = [_lgamma_values(a)]
    for j in range(1, order + 1):
        out.append(_polygamma(j - 1, a) / math.factorial(j))
    return out


def _converged(step: list, total: list) -> np.ndarray:
    return np.all([np.abs(s) <= _EPS * np.abs(t) for s, t in zip(step, total)], axis=0)


def _derivative(taylor: list, order: int) -> np.ndarray:
    return taylor[order] * math.factorial(order)


# -- the regularised incomplete gamma P(a, x) and its a-derivatives ---------------------------

class _Finished:
    """Collects the results of an elementwise iteration as its elements converge, so that
    each step computes only on the elements still running."""

    def __init__(self, n: int):
        self.out = np.full(n, np.nan)
        self.running = np.arange(n)

    def retire(self, done: np.ndarray, value: Callable[[np.ndarray], np.ndarray]) -> bool:
        """Store ``value(done)`` for the elements flagged ``done``; True when none remain."""
        if done.any():
            self.out[self.running[done]] = value(done)
            self.running = self.running[~done]
        return self.running.size == 0


def _keep(arrays: list, mask: np.ndarray) -> list:
    return [c[mask] for c in arrays]


def _lead(a: np.ndarray, x: np.ndarray, log_g: list, order: int) -> list:
    """exp((a + e) log x - x - log_g(e)) for the Taylor number log_g."""
    log_x = np.log(x)
    return _exp([a * log_x - x - log_g[0]] + ([log_x - log_g[1]] if order else [])
                + [-c for c in log_g[2:]])


def _lower_series(a: np.ndarray, x: np.ndarray, order: int) -> np.ndarray:
    """P(a + e, x) = exp((a + e) log x - x - lgamma(a + e + 1)) sum_n x^n / ((a+e+1)...
    (a+e+n)): the series converges for every x, fast where x < a + 1."""
    lead = _lead(a, x, _log_gamma_shifted(a + 1, order), order)
    term = _linear(1.0, 0.0, order, a)
    total = list(term)
    result = _Finished(a.size)
    for n in range(1, _MAX_TERMS):
        term = [c * x for c in _mul(term, _inv_linear(a + n, order))]
        total = [t + c for t, c in zip(total, term)]
        done = _converged(term, total)
        if result.retire(done, lambda m: _derivative(_mul(_keep(lead, m),
                                                          _keep(total, m)), order)):
            break
        a, x, lead, term, total = (a[~done], x[~done], _keep(lead, ~done),
                                   _keep(term, ~done), _keep(total, ~done))
    return result.out


def _upper_fraction(a: np.ndarray, x: np.ndarray, order: int) -> np.ndarray:
    """Q(a + e, x) = exp((a + e) log x - x - lgamma(a + e)) / (x + 1 - a - e -
    1 (1 - a - e) / (x + 3 - a - e - ...)), by the modified Lentz method; for x >= a + 1."""
    tiny = 1e-300
    lead = _lead(a, x, _log_gamma_shifted(a, order), order)
    b = _linear(x + 1 - a, -1.0, order, a)
    c = _linear(1 / tiny, 0.0, order, a)
    d = _recip(b)
    h = list(d)
    result = _Finished(a.size)
    for i in range(1, _MAX_TERMS):
        an = _linear(-i * (i - a), float(i), order, a)
        b = [b[0] + 2] + b[1:]
        d = [p + q for p, q in zip(_mul(an, d), b)]
        d[0] = np.where(np.abs(d[0]) < tiny, tiny, d[0])
        c = [p + q for p, q in zip(b, _mul(an, _recip(c)))]
        c[0] = np.where(np.abs(c[0]) < tiny, tiny, c[0])
        d = _recip(d)
        delta = _mul(c, d)
        h = _mul(h, delta)
        done = _converged([delta[0] - 1] + delta[1:], [np.ones_like(a)] * len(delta))
        if result.retire(done, lambda m: _derivative(_mul(_keep(lead, m), _keep(h, m)),
                                                     order)):
            break
        a, lead, b, c, d, h = (a[~done], _keep(lead, ~done), _keep(b, ~done),
                               _keep(c, ~done), _keep(d, ~done), _keep(h, ~done))
    return result.out


def _gammainc_taylor(a: Any, x: Any, order: int) -> np.ndarray:
    """d^order/da^order of P(a, x) (order 0: P itself); nan outside a > 0, x >= 0."""
    a, x = np.broadcast_arrays(np.asarray(a, np.float64), np.asarray(x, np.float64))
    out = np.full(a.shape, np.nan)
    valid = (a > 0) & (x >= 0) & ~np.isnan(x)
    ends = valid & ((x == 0) | np.isinf(x))
    out[ends] = 0.0 if order else np.where(x[ends] == 0, 0.0, 1.0)
    series = valid & ~ends & (x < a + 1)
    fraction = valid & ~ends & ~series
    with np.errstate(over="ignore", under="ignore", divide="ignore", invalid="ignore"):
        if series.any():
            out[series] = _lower_series(a[series], x[series], order)
        if fraction.any():
            q = _upper_fraction(a[fraction], x[fraction], order)
            out[fraction] = -q if order else 1.0 - q
    return out


gammainc_taylor = on_host(_gammainc_taylor)


# -- the Hurwitz zeta function zeta(s, q) and its s-derivatives -----------------------------

_ZETA_TERMS = 16  # direct terms before Euler-Maclaurin's tail


def _power_series(base: np.ndarray, s: np.ndarray, order: int) -> list:
    """base^-(s + e): base^-s (-log base)^j / j!."""
    log_b = np.log(base)
    lead = np.exp(-s * log_b)
    return [lead * (-log_b) ** j / math.factorial(j) for j in range(order + 1)]


def _zeta_series(s: np.ndarray, q: np.ndarray, order: int) -> list:
    """zeta(s + e, q) as a Taylor number: sum_{n<N} (n+q)^-s + (N+q)^(1-s)/(s-1) +
    (N+q)^-s/2 + sum_k B_2k/(2k)! s(s+1)...(s+2k-2) (N+q)^(1-s-2k) (Euler-Maclaurin)."""
    total = [np.zeros_like(s) for _ in range(order + 1)]
    for n in range(_ZETA_TERMS):
        total = [t + c for t, c in zip(total, _power_series(n + q, s, order))]
    big = _ZETA_TERMS + q
    tail = _power_series(big, s, order)
    pole = _mul([c * big for c in tail], _inv_linear(s - 1, order))
    total = [t + p + c / 2 for t, p, c in zip(total, pole, tail)]
    rising = _linear(s, 1.0, order, s)  # s (s+1) ... (s+2k-2), grown two factors a step
    power = [c / big for c in tail]  # (N+q)^-(s+1)
    for k, b in enumerate(_BERNOULLI, 1):
        coef = b / math.factorial(2 * k)
        total = [t + coef * c for t, c in zip(total, _mul(rising, power))]
        rising = _mul(_mul(rising, _linear(s + 2 * k - 1, 1.0, order, s)),
                      _linear(s + 2 * k, 1.0, order, s))
        power = [c / (big * big) for c in power]
    return total


def _riemann_reflected(s: np.ndarray, order: int) -> list:
    """Riemann's zeta(s + e) for s < 0 by the functional equation zeta(s) = 2^s pi^(s-1)
    sin(pi s / 2) gamma(1 - s) zeta(1 - s): the direct series would cancel badly there."""
    flip = [c * (-1) ** j for j, c in enumerate(_log_gamma_shifted(1 - s, order))]
    log_factor = [s * math.log(2) + (s - 1) * math.log(math.pi) + flip[0]]
    if order:
        log_factor += [math.log(2) + math.log(math.pi) + flip[1]] + flip[2:]
    half = np.pi / 2
    sine = [np.sin(half * s + j * np.pi / 2) * half ** j / math.factorial(j)
            for j in range(order + 1)]
    mirrored = [c * (-1) ** j for j, c in enumerate(_zeta_series(1 - s, np.ones_like(s),
                                                                  order))]
    return _mul(_mul(_exp(log_factor), sine), mirrored)


def _zeta_taylor(s: Any, q: Any, order: int) -> np.ndarray:
    """d^order/ds^order of the Hurwitz zeta(s, q) for q > 0 and s > 1, and of Riemann's
    (q == 1) for every s != 1; nan elsewhere (scipy's domain)."""
    s, q = np.broadcast_arrays(np.asarray(s, np.float64), np.asarray(q, np.float64))
    out = np.full(s.shape, np.nan)
    riemann = (q == 1) & (s != 1) & ~np.isnan(s)
    valid = ((q > 0) & (s > 1)) | riemann
    top = valid & np.isposinf(s)
    out[top] = 0.0 if order else np.where(q[top] == 1, 1.0, 0.0)
    reflect = riemann & (s < 0)
    direct = valid & ~top & ~reflect
    with np.errstate(over="ignore", under="ignore", divide="ignore", invalid="ignore"):
        if direct.any():
            out[direct] = _derivative(_zeta_series(s[direct], q[direct], order), order)
        if reflect.any():
            out[reflect] = _derivative(_riemann_reflected(s[reflect], order), order)
    return out


zeta_taylor = on_host(_zeta_taylor)
