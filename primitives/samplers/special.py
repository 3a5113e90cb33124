"""Test-input samplers of the special functions (`special`, `distributions`, `bessel`).

The finite-difference checks of the registry tests need inputs where a function is smooth
and not too steep: away from the poles of gamma, inside (0, 1) for probabilities, orders
drawn as integers, parameters of incomplete integrals kept moderate.
"""
from __future__ import annotations

from typing import Any, Callable

import numpy as np

from .. import sampling
from ..sampling import Case


def _integer(draw: Callable, lo: int, hi: int) -> int:
    from hypothesis import strategies as st  # a test dependency
    return draw(st.integers(lo, hi))


def _shapes(draw: Callable, n: int) -> list:
    from hypothesis.extra import numpy as hnp  # a test dependency
    return list(draw(hnp.mutually_broadcastable_shapes(
        num_shapes=n, min_dims=0, max_dims=2, min_side=0, max_side=3)).input_shapes)


def off_poles(gamma_like: bool = True) -> Callable:
    """Sampler for gamma, rgamma, gammasgn: positive values, and negative ones at least
    0.2 from the integers (the poles)."""
    def sample(prim: Any, draw: Callable) -> list:
        rng = sampling.draw_rng(draw)
        shape = sampling.draw_shape(draw)
        k = rng.randint(-3, 3, shape)
        x = np.where(k >= 0, rng.uniform(0.3, 3.0, shape),
                     k + rng.uniform(0.2, 0.8, shape))
        return [Case(prim, (x,), f"{shape}")]
    return sample


def polygamma_cases(rng: np.random.RandomState, draw: Callable) -> list:
    from .. import special  # the rule module imports this sampler: a cycle
    n = _integer(draw, 0, 3)
    shape = sampling.draw_shape(draw)
    return [Case(lambda x: special.polygamma(n, x),
                 (sampling.values(rng, shape, (0.3, 3.0)),), f"n={n} {shape}")]


def xlogy_cases(rng: np.random.RandomState, draw: Callable) -> list:
    """x with some exact zeros (where the value is 0 but the x-derivative is log(y)),
    y in (0.2, 2)."""
    sx, sy = _shapes(draw, 2)
    x = sampling.values(rng, sx) * (rng.uniform(size=sx) < 0.7)
    return [Case(None, (x, sampling.values(rng, sy, (0.2, 2.0))), f"{sx} {sy}")]


def with_prim(cases: Callable) -> Callable:
    """A sampler whose cases name ``None`` as their function: call the primitive itself."""
    def sample(prim: Any, draw: Callable) -> list:
        out = cases(sampling.draw_rng(draw), draw)
        return [Case(prim if c.fun is None else c.fun, c.args, c.label) for c in out]
    return sample


# -- distributions: incomplete gamma and beta, Student's t, zeta ---------------------------

def gammainc_cases(rng: np.random.RandomState, draw: Callable) -> list:
    """a in (0.5, 4), x in (0.2, 6) (both the series and the continued fraction), and a
    derivative order in a of 0 or 1."""
    from .. import distributions as D  # the rule module imports this sampler: a cycle
    order = _integer(draw, 0, 1)
    (a, x), label = _gamma_pair(rng, draw, (0.5, 4.0), (0.2, 6.0))
    return [Case(lambda a, x: D.gammainc(a, x, order=order), (a, x), f"order={order} {label}")]


def _gamma_pair(rng: np.random.RandomState, draw: Callable, a_range: tuple,
                x_range: tuple) -> tuple:
    sa, sx = _shapes(draw, 2)
    return (sampling.values(rng, sa, a_range), sampling.values(rng, sx, x_range)), f"{sa} {sx}"


def gamma_pair_cases(rng: np.random.RandomState, draw: Callable) -> list:
    args, label = _gamma_pair(rng, draw, (0.5, 4.0), (0.2, 6.0))
    return [Case(None, args, label)]


def gammaincinv_cases(rng: np.random.RandomState, draw: Callable) -> list:
    args, label = _gamma_pair(rng, draw, (0.8, 4.0), (0.1, 0.9))
    return [Case(None, args, label)]


def fixed_leading(n_fixed: int, fixed_range: tuple, x_range: tuple) -> Callable:
    """Sampler for f(p_1, ..., p_n, x) differentiated in x only: the n leading parameters
    are drawn once in ``fixed_range`` and bound."""
    def sample(prim: Any, draw: Callable) -> list:
        rng = sampling.draw_rng(draw)
        shape = sampling.draw_shape(draw)
        fixed = tuple(float(v) for v in rng.uniform(*fixed_range, n_fixed))
        return [Case(lambda x: prim(*fixed, x), (sampling.values(rng, shape, x_range),),
                     f"params={fixed} {shape}")]
    return sample


def zeta_cases(rng: np.random.RandomState, draw: Callable) -> list:
    """Hurwitz zeta(s, q) for s in (1.5, 5), q in (0.5, 3), orders 0 and 1 in s."""
    from .. import special  # the rule module imports this sampler: a cycle
    order = _integer(draw, 0, 1)
    ss, sq = _shapes(draw, 2)
    return [Case(lambda s, q: special.zeta(s, q, order=order),
                 (sampling.values(rng, ss, (1.5, 5.0)), sampling.values(rng, sq, (0.5, 3.0))),
                 f"order={order} {ss} {sq}")]


# -- Bessel functions ---------------------------------------------------------------------

def bessel_order_cases(prim_name: str, positive: bool) -> Callable:
    """(v, x) with v an integer order in 0..3 or a real one in (0.2, 2.5) and x in
    (0.5, 4) (mirrored to negative values where the function is real there)."""
    def cases(rng: np.random.RandomState, draw: Callable) -> list:
        from .. import bessel  # the rule module imports this sampler: a cycle
        prim = getattr(bessel, prim_name)
        shape = sampling.draw_shape(draw)
        whole = draw_bool(draw)
        v = float(_integer(draw, 0, 3)) if whole else float(rng.uniform(0.2, 2.5))
        x = sampling.values(rng, shape, (0.5, 4.0), signed=whole and not positive)
        return [Case(lambda x: prim(v, x), (x,), f"v={v:.2f} {shape}")]
    return cases


def draw_bool(draw: Callable) -> bool:
    from hypothesis import strategies as st  # a test dependency
    return draw(st.booleans())
