"""How the registry-driven tests draw inputs for a primitive.

Every differentiable primitive declares ``sample=``: a function ``(prim, draw) -> [Case]``
where ``draw`` is hypothesis' ``data.draw``. A `Case` is a function of float arrays only
(static params and integer arguments bound) plus the arrays to check it at. The test suite
checks each case's derivatives against central finite differences; a primitive declared
without a sampler fails that suite, so a new primitive is tested the day it is declared.

hypothesis is imported only when a sampler runs (it is a test dependency).
"""
from __future__ import annotations

from functools import partial
from typing import Any, Callable, NamedTuple, Sequence

import numpy as np

__all__ = ["Case", "elementwise", "custom", "sampler", "draw_shape", "draw_rng", "draw_int",
           "draw_bool", "values"]


class Case(NamedTuple):
    fun: Callable[..., Any]
    args: tuple
    label: str = ""


def draw_rng(draw: Callable) -> np.random.RandomState:
    from hypothesis import strategies as st  # a test dependency
    return np.random.RandomState(draw(st.integers(0, 2**31 - 1)))


def draw_shape(draw: Callable, min_dims: int = 0, max_dims: int = 3, min_side: int = 0,
               max_side: int = 3) -> tuple:
    """A small shape: scalars, vectors, matrices and 3-D, sizes 0 to ``max_side``."""
    from hypothesis.extra import numpy as hnp  # a test dependency
    return draw(hnp.array_shapes(min_dims=min_dims, max_dims=max_dims, min_side=min_side,
                                 max_side=max_side))


def values(rng: np.random.RandomState, shape: tuple, domain: tuple = (-2.0, 2.0),
           signed: bool = False, complex_: bool = False) -> np.ndarray:
    """float64 (or complex128) values uniform in ``domain``; ``signed`` mirrors them to
    ±domain, which keeps them away from a singular point at 0."""
    lo, hi = domain
    x = rng.uniform(lo, hi, shape)
    if signed:
        x = x * rng.choice([-1.0, 1.0], shape)
    if complex_:
        y = rng.uniform(lo, hi, shape)
        x = x + 1j * (y * rng.choice([-1.0, 1.0], shape) if signed else y)
    return x


def elementwise(nargs: int = 1, domain: tuple | Sequence[tuple] = (-2.0, 2.0),
                signed: bool = False, complex_: bool = False,
                params: dict | None = None) -> Callable:
    """Sampler for an elementwise primitive of ``nargs`` float inputs with broadcasting
    shapes (scalars and size-0 included). ``domain`` may be one range or one per input;
    ``complex_`` adds a complex128 case."""
    domains = [domain] * nargs if isinstance(domain[0], (int, float)) else list(domain)

    def sample(prim: Any, draw: Callable) -> list[Case]:
        from hypothesis.extra import numpy as hnp  # a test dependency
        rng = draw_rng(draw)
        if nargs == 1:
            shapes = [draw_shape(draw)]
        else:
            shapes = list(draw(hnp.mutually_broadcastable_shapes(
                num_shapes=nargs, min_dims=0, max_dims=3, min_side=0, max_side=3)).input_shapes)
        fun = partial(prim, **params) if params else prim
        cases = [Case(fun, tuple(values(rng, s, d, signed) for s, d in zip(shapes, domains)),
                      f"float64 {shapes}")]
        if complex_:
            cases.append(Case(fun, tuple(values(rng, s, d, signed, True)
                                         for s, d in zip(shapes, domains)),
                              f"complex128 {shapes}"))
        return cases

    return sample


def custom(fn: Callable[[np.random.RandomState, Callable], list[Case]]) -> Callable:
    """A sampler from ``fn(rng, draw) -> [Case]`` for primitives with params or
    non-float arguments."""

    def sample(prim: Any, draw: Callable) -> list[Case]:
        return fn(draw_rng(draw), draw)

    return sample


def sampler(fn: Callable[[Any, np.random.RandomState, Callable], list[Case]]) -> Callable:
    """A sampler from ``fn(prim, rng, draw) -> [Case]``: the family samplers in
    `funcgrad.primitives.samplers` take the primitive they test as an argument (they do
    not import the rule modules, which import them)."""

    def sample(prim: Any, draw: Callable) -> list[Case]:
        return fn(prim, draw_rng(draw), draw)

    return sample


def draw_int(draw: Callable, lo: int, hi: int) -> int:
    from hypothesis import strategies as st  # a test dependency
    return draw(st.integers(lo, hi))


def draw_bool(draw: Callable) -> bool:
    from hypothesis import strategies as st  # a test dependency
    return draw(st.booleans())
