"""Kernels of `funcgrad.random`: the Threefry-2x32 hash and XLA's float arithmetic, bit for bit.

JAX's random numbers are the Threefry-2x32 block cipher (Salmon et al., "Parallel random
numbers: as easy as 1, 2, 3", SC 2011) applied to counters, followed by float arithmetic
that XLA's CPU backend compiles its own way. Reproducing JAX's numbers exactly takes both:

- `threefry2x32`: 20 rounds of add / rotate / xor on uint32 words, key injection every four
  rounds; wrapping uint32 arithmetic is numpy's (and cupy's) own.
- `fma`: XLA contracts ``a * b + c`` into one fused multiply-add (one rounding), which is
  how ``uniform(minval, maxval)`` scales and how every polynomial below is evaluated. numpy
  has no fma, so it is computed exactly: float32 in float64 with the one double-rounding
  case corrected, float64 with Dekker's error-free product and sum.
- `xla_log`, `xla_log1p`, `xla_exp`: XLA's approximations (Cephes' logf / expf polynomials
  for float32, the Cephes double exp, and for log1p a Cephes rational below sqrt(2) - 1 and
  ``log(1 + x)`` above), with XLA's flushing of subnormals. float64 log is the C library's,
  as in XLA.
- `erf_inv`: M. Giles' approximation ("Approximating the erfinv function", GPU Computing
  Gems 2, 2010): one polynomial in ``w = -log(1 - x^2)`` per range of w, two for float32
  (split at w = 5) and three for float64 (6.25, 16). JAX's `normal` is ``sqrt(2) *
  erf_inv(u)``; scipy's exact erfinv differs from it by up to ~90 ulp in float32.

Everything is elementwise numpy, so cupy arrays run it through numpy's dispatch. float16
is computed in float32 and rounded back, as XLA does on the CPU.
"""
from __future__ import annotations

from typing import Any, Sequence

import numpy as np

from funcgrad.backend import backend_of

# -- Threefry-2x32 ---------------------------------------------------------------------

_ROTATIONS = ((13, 15, 26, 6), (17, 29, 16, 24))
_KEY_PARITY = np.uint32(0x1BD11BDA)  # Threefish's key-schedule constant, 32-bit form


def threefry2x32(k1: Any, k2: Any, x1: Any, x2: Any) -> tuple:
    """The Threefry-2x32 hash of the counter words (x1, x2) under the key (k1, k2), all
    uint32 and broadcast together: 5 groups of 4 rounds (add, rotate left, xor) with the
    three-word key schedule injected after each group."""
    k1, k2, x1, x2 = np.broadcast_arrays(*(np.asarray(a, np.uint32) if not hasattr(
        a, "__cuda_array_interface__") else a for a in (k1, k2, x1, x2)))
    shape = x1.shape
    # 1-d copies: in-place passes on fresh buffers, and array (not scalar) arithmetic, which
    # wraps silently
    ks = [k1.reshape(-1), k2.reshape(-1)]
    ks.append(ks[0] ^ ks[1] ^ _KEY_PARITY)
    a = x1.reshape(-1) + ks[0]
    b = x2.reshape(-1) + ks[1]
    tmp = np.empty_like(b)
    for group in range(5):
        for r in _ROTATIONS[group % 2]:
            np.add(a, b, out=a)
            np.left_shift(b, np.uint32(r), out=tmp)
            np.right_shift(b, np.uint32(32 - r), out=b)
            np.bitwise_or(b, tmp, out=b)
            np.bitwise_xor(b, a, out=b)
        np.add(a, ks[(group + 1) % 3], out=a)
        np.add(b, ks[(group + 2) % 3], out=b)
        np.add(b, np.uint32(group + 1), out=b)
    return a.reshape(shape), b.reshape(shape)


def iota_2x32(shape: Sequence[int], like: Any = None) -> tuple:
    """The counters 0, 1, ..., prod(shape) - 1 laid out in ``shape``, as the (high, low)
    uint32 words of a uint64 (what JAX's partitionable Threefry hashes)."""
    xp = np if like is None else backend_of(like).xp
    count = xp.arange(int(np.prod(shape)), dtype=np.uint64).reshape(tuple(shape))
    return (count >> np.uint64(32)).astype(np.uint32), count.astype(np.uint32)


# -- fused multiply-add, exactly rounded ------------------------------------------------

def _two_sum(a: Any, b: Any) -> tuple:
    """(s, e) with s = fl(a + b) and a + b = s + e exactly (Knuth)."""
    s = a + b
    bb = s - a
    return s, (a - (s - bb)) + (b - bb)


def _split(a: Any) -> tuple:
    """(hi, lo) with a = hi + lo and each half 26 bits wide (Veltkamp)."""
    c = 134217729.0 * a  # 2**27 + 1
    hi = c - (c - a)
    return hi, a - hi


def _fma64(a: Any, b: Any, c: Any, b_split: tuple | None = None) -> Any:
    """float64 ``a * b + c`` rounded once: Dekker's exact product, then an exact sum whose
    error terms are added before the final rounding. ``b_split`` is b's `_split`, when
    the caller reuses it (Horner's rule multiplies by the same x every step)."""
    p = a * b
    (ah, al), (bh, bl) = _split(a), b_split or _split(b)
    p_err = ((ah * bh - p) + ah * bl + al * bh) + al * bl
    s, s_err = _two_sum(p, c)
    out = s + (s_err + p_err)
    return np.where(np.isfinite(out), out, p + c)  # inf and nan operands


_F32_TIE_BITS = np.uint64(1 << 28)  # an float32 midpoint: the 29 extra float64 bits 100..0
_F32_EXTRA_BITS = np.uint64((1 << 29) - 1)


def _widen(a: Any) -> Any:
    return a.astype(np.float64) if hasattr(a, "astype") else np.float64(a)


def _fma32(a: Any, b: Any, c: Any) -> Any:
    """float32 ``a * b + c`` rounded once. The product is exact in float64 and the sum is
    rounded there first; that double rounding is wrong only when the float64 sum lands
    exactly halfway between two float32 values, where the exact sum's error term decides."""
    wide = np.float64
    p = _widen(a) * _widen(b)
    c = _widen(c)
    s = p + c
    out = np.asarray(s.astype(np.float32))  # a 0-d array for scalars (written below)
    ties = (s.view(np.uint64) & _F32_EXTRA_BITS) == _F32_TIE_BITS
    if ties.any():  # rare: recompute those exactly
        p, c = np.broadcast_to(p, s.shape)[ties], np.broadcast_to(c, s.shape)[ties]
        st, err = _two_sum(p, c)
        r = st.astype(np.float32)
        up = np.nextafter(r, np.where(st > r, np.inf, -np.inf).astype(np.float32))
        out = out.copy()
        out[ties] = np.where(err * (st - r.astype(wide)) > 0, up, r)
    return out


def fma(a: Any, b: Any, c: Any) -> Any:
    """``a * b + c`` with a single rounding, in the common float dtype of the inputs; for
    float16, whose arithmetic XLA's CPU backend does not fuse, two roundings."""
    dtype = np.result_type(a, b, c)
    with np.errstate(over="ignore", invalid="ignore"):
        if dtype == np.float64:
            return _fma64(a, b, c)
        if dtype == np.float32:
            return _fma32(a, b, c)
        if dtype == np.float16:
            return (a * b + c).astype(np.float16)
    raise TypeError(f"fma is defined for float16, float32 and float64, got {dtype}")


def _horner(x: Any, coefficients: Sequence[float]) -> Any:
    """The polynomial with these coefficients (highest degree first) at x, each step one
    fused multiply-add, as XLA evaluates it."""
    dtype = x.dtype.type
    p = np.full_like(x, dtype(coefficients[0]))
    if dtype != np.float64:
        for c in coefficients[1:]:
            p = fma(p, x, dtype(c))
        return p
    with np.errstate(over="ignore", invalid="ignore"):
        return _horner64(p, x, coefficients[1:])


def _horner64(p: np.ndarray, x: np.ndarray, coefficients: Sequence[float]) -> np.ndarray:
    """`_horner` in float64: `_fma64` step by step, x split once and every pass in place
    (the exact product and sum cost ~19 passes a step; fresh temporaries would double it)."""
    xh, xl = _split(x)
    prod, t, u, e, w = (np.empty_like(p) for _ in range(5))
    for c in coefficients:
        np.multiply(p, x, out=prod)
        np.multiply(p, 134217729.0, out=t)         # Veltkamp split of p: t -> hi, u -> lo
        np.subtract(t, p, out=u)
        np.subtract(t, u, out=t)
        np.subtract(p, t, out=u)
        np.multiply(t, xh, out=e)                  # the product's rounding error
        np.subtract(e, prod, out=e)
        np.multiply(t, xl, out=w)
        np.add(e, w, out=e)
        np.multiply(u, xh, out=w)
        np.add(e, w, out=e)
        np.multiply(u, xl, out=w)
        np.add(e, w, out=e)
        np.add(prod, c, out=p)                     # p <- s = fl(prod + c), two-sum error:
        np.subtract(p, prod, out=t)                # bb = s - prod
        np.subtract(p, t, out=u)
        np.subtract(prod, u, out=u)                # prod - (s - bb)
        np.subtract(c, t, out=t)                   # c - bb
        np.add(u, t, out=u)
        np.add(u, e, out=u)
        np.add(p, u, out=p)
    return p


def _in_float32(fn: Any, x: Any) -> Any:
    """fn on float16 input computed in float32 and rounded back (XLA's CPU upcast)."""
    return fn(x.astype(np.float32)).astype(np.float16)


# -- XLA's log, log1p and exp ------------------------------------------------------------

# Cephes' logf: ln(1 + f) = f - f^2/2 + f^3 P(f) for the mantissa f in [sqrt(1/2) - 1,
# sqrt(2) - 1], plus e * ln 2 split in two (ln 2 = 0.693359375 - 2.12194440e-4)
_LOGF_P = (7.0376836292e-2, -1.1514610310e-1, 1.1676998740e-1, -1.2420140846e-1,
           1.4249322787e-1, -1.6668057665e-1, 2.0000714765e-1, -2.4999993993e-1,
           3.3333331174e-1)
_LN2_HI, _LN2_LO = 0.693359375, -2.12194440e-4


def _log_f32(x: np.ndarray) -> np.ndarray:
    f32 = np.float32
    tiny = np.finfo(np.float32).tiny
    bits = np.maximum(x, f32(tiny)).view(np.uint32)
    exponent = (bits >> np.uint32(23)).astype(np.int32) - 127
    m = ((bits & np.uint32(0x807FFFFF)) | np.uint32(0x3F000000)).view(np.float32)  # [.5, 1)
    e = f32(1) + exponent.astype(np.float32)
    low = m < f32(0.707106781186547524)
    m = (m - f32(1)) + np.where(low, m, f32(0))  # 2m - 1 below sqrt(1/2), else m - 1
    e = e - np.where(low, f32(1), f32(0))
    m2 = m * m
    m3 = m2 * m
    # the polynomial in three interleaved parts, as XLA's vectorised code computes it
    y = fma(fma(m, f32(_LOGF_P[0]), f32(_LOGF_P[1])), m, f32(_LOGF_P[2]))
    y1 = fma(fma(m, f32(_LOGF_P[3]), f32(_LOGF_P[4])), m, f32(_LOGF_P[5]))
    y2 = fma(fma(m, f32(_LOGF_P[6]), f32(_LOGF_P[7])), m, f32(_LOGF_P[8]))
    y = fma(fma(y, m3, y1), m3, y2)
    y = fma(y, m3, f32(_LN2_LO) * e)
    out = ((m - f32(0.5) * m2) + y) + f32(_LN2_HI) * e
    return _log_special_values(x, out)


def _log_special_values(x: np.ndarray, out: np.ndarray) -> np.ndarray:
    """log's values at 0, inf and below 0, with subnormal inputs read as zero (XLA's
    flushing)."""
    dtype = x.dtype.type
    tiny = np.finfo(dtype).tiny
    out = np.where(np.abs(x) < dtype(tiny), dtype(-np.inf), out)
    out = np.where(x == dtype(np.inf), dtype(np.inf), out)
    return np.where((x <= -dtype(tiny)) | np.isnan(x), dtype(np.nan), out)


def xla_log(x: Any) -> Any:
    """The natural log as XLA's CPU backend computes it."""
    if x.dtype == np.float32:
        return _log_f32(x)
    if x.dtype == np.float16:
        return _in_float32(_log_f32, x)
    with np.errstate(divide="ignore", invalid="ignore"):
        return _log_special_values(x, np.log(x))


# Cephes' log1p rational for |x| < sqrt(2) - 1 (numerator / denominator, highest degree first)
_LOG1P_NUM = (4.5270000862445199635215e-5, 4.9854102823193375972212e-1,
              6.5787325942061044846969e0, 2.9911919328553073277375e1,
              6.0949667980987787057556e1, 5.7112963590585538103336e1,
              2.0039553499201281259648e1)
_LOG1P_DEN = (1.0, 1.5062909083469192043167e1, 8.3047565967967209469434e1,
              2.2176239823732856465394e2, 3.0909872225312059774938e2,
              2.1642788614495947685003e2, 6.0118660497603843919306e1)
_SQRT2_MINUS_1 = 0.41421356237309504880


def _log1p(x: np.ndarray) -> np.ndarray:
    dtype = x.dtype.type
    shape = x.shape
    x = x.reshape(-1)
    small = np.abs(x) < dtype(_SQRT2_MINUS_1)
    with np.errstate(divide="ignore", invalid="ignore"):
        out = xla_log(x + dtype(1))
        if small.any():  # the rational only where it is used
            v = x[small]
            v2 = v * v
            ratio = _horner(v, _LOG1P_NUM) / _horner(v, _LOG1P_DEN)
            out[small] = v + (dtype(-0.5) * v2 + (v * v2) * ratio)
        out = np.where(np.abs(x) < np.finfo(dtype).tiny, x * dtype(0), out)  # flushed input
    return out.reshape(shape)


def xla_log1p(x: Any) -> Any:
    """log(1 + x) as XLA computes it (its float64 values lose up to ~100 ulp for x in
    [-0.414, -0.3], where the rational is used beyond Cephes' range: JAX's values)."""
    return _in_float32(_log1p, x) if x.dtype == np.float16 else _log1p(x)


# Cephes' expf: exp(r) = 1 + r + r^2 P(r) for |r| <= ln(2)/2 after x = n ln 2 + r
_EXPF_P = (1.9875691500e-4, 1.3981999507e-3, 8.3334519073e-3, 4.1665795894e-2,
           1.6666665459e-1, 5.0000001201e-1)
# Cephes' double exp: exp(r) = 1 + 2 r P(r^2) / (Q(r^2) - r P(r^2))
_EXP_P = (1.26177193074810590878e-4, 3.02994407707441961300e-2, 9.99999999999999999910e-1)
_EXP_Q = (3.00198505138664455042e-6, 2.52448340349684104192e-3, 2.27265548208155028766e-1,
          2.00000000000000000009e0)
_EXP_LN2 = {np.float32: (0.693359375, -2.12194440e-4),
            np.float64: (6.93145751953125e-1, 1.42860682030941723212e-6)}


def _exp(x: np.ndarray) -> np.ndarray:
    dtype = x.dtype.type
    ln2_hi, ln2_lo = _EXP_LN2[dtype]
    with np.errstate(over="ignore", invalid="ignore"):
        # beyond these the result is inf or 0 anyway; the clamp keeps n an int
        xc = np.clip(x, dtype(-760), dtype(720)) if dtype == np.float64 else np.clip(
            x, dtype(-104), dtype(89))
        n = np.floor(fma(xc, dtype(1.44269504088896341), dtype(0.5)))
        if dtype == np.float32:
            n = np.minimum(n, dtype(127))  # 2**n stays finite; the polynomial takes the rest
        r = fma(n, dtype(-ln2_hi), xc)
        r = fma(n, dtype(-ln2_lo), r)
        r2 = r * r
        if dtype == np.float32:
            y = fma(_horner(r, _EXPF_P), r2, r) + dtype(1)
        else:
            p = r * _horner(r2, _EXP_P)
            y = fma(dtype(2), p / (_horner(r2, _EXP_Q) - p), dtype(1))
        out = np.ldexp(y, n.astype(np.int32))
    out = np.where(out < np.finfo(dtype).tiny, dtype(0), out)  # XLA flushes subnormals
    return np.where(np.isnan(x), x, out)


def xla_exp(x: Any) -> Any:
    """exp as XLA's CPU backend computes it (Cephes' algorithms, subnormals flushed)."""
    return _in_float32(_exp, x) if x.dtype == np.float16 else _exp(x)


# -- Giles' erf_inv --------------------------------------------------------------------

# (upper bound of w, the variable: w - shift or sqrt(w) - shift, coefficients), per range
_ERF_INV_F32 = (
    (5.0, False, 2.5, (2.81022636e-08, 3.43273939e-07, -3.5233877e-06, -4.39150654e-06,
                       0.00021858087, -0.00125372503, -0.00417768164, 0.246640727,
                       1.50140941)),
    (np.inf, True, 3.0, (-0.000200214257, 0.000100950558, 0.00134934322, -0.00367342844,
                         0.00573950773, -0.0076224613, 0.00943887047, 1.00167406,
                         2.83297682)),
)
_ERF_INV_F64 = (
    (6.25, False, 3.125, (
        -3.6444120640178196996e-21, -1.685059138182016589e-19, 1.2858480715256400167e-18,
        1.115787767802518096e-17, -1.333171662854620906e-16, 2.0972767875968561637e-17,
        6.6376381343583238325e-15, -4.0545662729752068639e-14, -8.1519341976054721522e-14,
        2.6335093153082322977e-12, -1.2975133253453532498e-11, -5.4154120542946279317e-11,
        1.051212273321532285e-09, -4.1126339803469836976e-09, -2.9070369957882005086e-08,
        4.2347877827932403518e-07, -1.3654692000834678645e-06, -1.3882523362786468719e-05,
        0.0001867342080340571352, -0.00074070253416626697512, -0.0060336708714301490533,
        0.24015818242558961693, 1.6536545626831027356)),
    (16.0, True, 3.25, (
        2.2137376921775787049e-09, 9.0756561938885390979e-08, -2.7517406297064545428e-07,
        1.8239629214389227755e-08, 1.5027403968909827627e-06, -4.013867526981545969e-06,
        2.9234449089955446044e-06, 1.2475304481671778723e-05, -4.7318229009055733981e-05,
        6.8284851459573175448e-05, 2.4031110387097893999e-05, -0.0003550375203628474796,
        0.00095328937973738049703, -0.0016882755560235047313, 0.0024914420961078508066,
        -0.0037512085075692412107, 0.005370914553590063617, 1.0052589676941592334,
        3.0838856104922207635)),
    (np.inf, True, 5.0, (
        -2.7109920616438573243e-11, -2.5556418169965252055e-10, 1.5076572693500548083e-09,
        -3.7894654401267369937e-09, 7.6157012080783393804e-09, -1.4960026627149240478e-08,
        2.9147953450901080826e-08, -6.7711997758452339498e-08, 2.2900482228026654717e-07,
        -9.9298272942317002539e-07, 4.5260625972231537039e-06, -1.9681778105531670567e-05,
        7.5995277030017761139e-05, -0.00021503011930044477347, -0.00013871931833623122026,
        1.0103004648645343977, 4.8499064014085844221)),
)


def _erf_inv(x: np.ndarray) -> np.ndarray:
    dtype = x.dtype.type
    ranges = _ERF_INV_F32 if dtype == np.float32 else _ERF_INV_F64
    shape = x.shape
    x = x.reshape(-1)
    with np.errstate(divide="ignore", invalid="ignore"):
        w = -xla_log1p(x * -x)
        p = np.zeros_like(x)
        done = np.isnan(w)  # |x| > 1
        for bound, root, shift, coefficients in ranges:
            here = ~done & (w < dtype(bound))
            if here.any():  # each polynomial only where it applies
                v = w[here]
                p[here] = _horner((np.sqrt(v) if root else v) - dtype(shift), coefficients)
            done |= here
        out = np.where(np.isnan(w), dtype(np.nan), p * x)
        out = np.where(np.abs(x) == dtype(1), x * dtype(np.inf), out)
    return out.reshape(shape)


def erf_inv(x: Any) -> Any:
    """The inverse error function as JAX computes it (Giles' approximation)."""
    return _in_float32(_erf_inv, x) if x.dtype == np.float16 else _erf_inv(x)


# -- draws from raw keys (what the rejection samplers consume) --------------------------
# These repeat, on backend arrays, what `funcgrad.random` composes from primitives: the
# rejection loops of gamma and poisson run on raw keys inside one primitive.

def split(keys: Any, num: int) -> Any:
    """``num`` new keys from each key of ``keys`` (uint32[..., 2] -> [..., num, 2])."""
    hi, lo = iota_2x32((num,), keys)
    a, b = threefry2x32(keys[..., 0:1], keys[..., 1:2], hi, lo)
    return np.stack([a, b], axis=-1)


def random_bits(keys: Any, bit_width: int, shape: Sequence[int] = ()) -> Any:
    """``shape`` random unsigned ints of ``bit_width`` bits per key: uint[..., *shape]."""
    hi, lo = iota_2x32(shape, keys)
    pad = (slice(None),) * (keys.ndim - 1) + (None,) * len(shape)
    a, b = threefry2x32(keys[..., 0][pad], keys[..., 1][pad], hi, lo)
    if bit_width == 64:
        return (a.astype(np.uint64) << np.uint64(32)) | b.astype(np.uint64)
    return (a ^ b).astype(np.dtype(f"uint{bit_width}"))


def uniform(keys: Any, dtype: Any, shape: Sequence[int] = (), minval: float = 0.0,
            maxval: float = 1.0) -> Any:
    """Uniform floats in [minval, maxval) per key: the mantissa bits of a float in [1, 2)
    minus one, scaled by a fused multiply-add."""
    dtype = np.dtype(dtype)
    info = np.finfo(dtype)
    unsigned = np.dtype(f"uint{info.bits}")
    bits = random_bits(keys, info.bits, shape)
    one = np.array(1.0, dtype).view(unsigned)
    floats = ((bits >> unsigned.type(info.bits - info.nmant)) | one).view(dtype) - dtype.type(1)
    lo, hi = dtype.type(minval), dtype.type(maxval)
    return np.maximum(lo, fma(floats, hi - lo, lo))


def normal(keys: Any, dtype: Any, shape: Sequence[int] = ()) -> Any:
    """Standard normal floats per key: sqrt(2) erf_inv(u) for u uniform in (-1, 1)."""
    dtype = np.dtype(dtype)
    lo = np.nextafter(dtype.type(-1), dtype.type(0))
    return dtype.type(np.sqrt(2)) * erf_inv(uniform(keys, dtype, shape, lo, 1.0))
