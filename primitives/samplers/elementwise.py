"""Samplers of the elementwise families (unary, binary, special, where)."""
from __future__ import annotations

import functools
from typing import Any, Callable

import numpy as np

from .. import sampling
from ..sampling import Case

__all__ = ["off_steps", "steps", "pairs", "interleaved", "quotients", "where", "orders",
           "complex_values", "real_pairs"]


def off_steps(rng: np.random.RandomState, shape: tuple, scale: float = 1.0) -> np.ndarray:
    """Values ``scale * (k + u)`` with integer k and u in (0.1, 0.4) or (0.6, 0.9): at least
    0.1 * scale from every integer and half-integer multiple of ``scale``, where floor,
    round, mod... jump."""
    k = rng.randint(-3, 3, shape)
    u = rng.uniform(0.1, 0.4, shape) + 0.5 * rng.randint(0, 2, shape)
    return scale * (k + u)


def steps(params: dict | None = None, scale: float = 1.0) -> Callable:
    """Sampler for a piecewise-constant unary primitive: values away from its jumps."""
    def cases(prim: Any, rng: np.random.RandomState, draw: Callable) -> list:
        shape = sampling.draw_shape(draw)
        fun = functools.partial(prim, **params) if params else prim
        return [Case(fun, (off_steps(rng, shape, scale),), f"{shape}")]
    return sampling.sampler(cases)


def pairs(make: Callable[[np.random.RandomState, tuple, tuple], tuple]) -> Callable:
    """Sampler drawing two broadcastable shapes and values ``make(rng, shape_x, shape_y)``
    for functions with kinks or jumps that random values could straddle."""
    def cases(prim: Any, rng: np.random.RandomState, draw: Callable) -> list:
        from hypothesis.extra import numpy as hnp  # a test dependency
        sx, sy = draw(hnp.mutually_broadcastable_shapes(
            num_shapes=2, min_dims=0, max_dims=3, min_side=0, max_side=3)).input_shapes
        return [Case(prim, make(rng, sx, sy), f"{sx} {sy}")]
    return sampling.sampler(cases)


def interleaved(rng: np.random.RandomState, sx: tuple, sy: tuple) -> tuple:
    """x near even and y near odd integers: either may be larger, never within 0.2."""
    return (2 * rng.randint(-1, 2, sx) + rng.uniform(-0.4, 0.4, sx),
            2 * rng.randint(-1, 2, sy) + 1 + rng.uniform(-0.4, 0.4, sy))


def quotients(rng: np.random.RandomState, sx: tuple, sy: tuple) -> tuple:
    """y = ±m (one magnitude m in (0.5, 2)) and x = m (k + u) as in `off_steps`, so that
    x/y stays away from the integers and half-integers where mod and floor_divide jump."""
    m = rng.uniform(0.5, 2.0)
    return off_steps(rng, sx, m), m * rng.choice([-1.0, 1.0], sy)


def _where_cases(prim: Any, rng: np.random.RandomState, draw: Callable) -> list:
    from hypothesis.extra import numpy as hnp  # a test dependency
    sc, sx, sy = draw(hnp.mutually_broadcastable_shapes(
        num_shapes=3, min_dims=0, max_dims=3, min_side=0, max_side=3)).input_shapes
    cond = rng.uniform(size=sc) < 0.5
    fun = functools.partial(prim, cond)
    return [Case(fun, (sampling.values(rng, sx), sampling.values(rng, sy)),
                 f"float64 {sc} {sx} {sy}"),
            Case(fun, (sampling.values(rng, sx, complex_=True),
                       sampling.values(rng, sy, complex_=True)),
                 f"complex128 {sc} {sx} {sy}")]


where = sampling.sampler(_where_cases)


def orders(lo: int, hi: int, domain: tuple) -> Callable:
    """Sampler for ``prim(n, x)`` with an integer order n in [lo, hi] (polygamma...)."""
    def cases(prim: Any, rng: np.random.RandomState, draw: Callable) -> list:
        n = sampling.draw_int(draw, lo, hi)
        shape = sampling.draw_shape(draw)
        return [Case(lambda x: prim(n, x), (sampling.values(rng, shape, domain),),
                     f"n={n} {shape}")]
    return sampling.sampler(cases)


def triples(make: Callable[[np.random.RandomState, tuple, tuple], tuple]) -> Callable:
    """Sampler for ``prim(g, a, b)``: a and b from ``make`` (see `pairs`), g of their
    broadcast shape."""
    def cases(prim: Any, rng: np.random.RandomState, draw: Callable) -> list:
        from hypothesis.extra import numpy as hnp  # a test dependency
        sa, sb = draw(hnp.mutually_broadcastable_shapes(
            num_shapes=2, min_dims=0, max_dims=3, min_side=0, max_side=3)).input_shapes
        a, b = make(rng, sa, sb)
        g = sampling.values(rng, np.broadcast_shapes(sa, sb))
        return [Case(prim, (g, a, b), f"{sa} {sb}")]
    return sampling.sampler(cases)


def _complex_values(prim: Any, rng: np.random.RandomState, draw: Callable) -> list:
    shape = sampling.draw_shape(draw)
    return [Case(prim, (sampling.values(rng, shape, complex_=True),), f"{shape} complex")]


def _real_pairs(prim: Any, rng: np.random.RandomState, draw: Callable) -> list:
    shape = sampling.draw_shape(draw) + (2,)
    return [Case(prim, (sampling.values(rng, shape),), f"{shape}")]


complex_values = sampling.sampler(_complex_values)  # view_as_real's inputs
real_pairs = sampling.sampler(_real_pairs)  # view_as_complex's: a last axis of 2
