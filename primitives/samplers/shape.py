"""Samplers of the shape primitives."""
from __future__ import annotations

from typing import Any, Callable

import numpy as np

from .. import sampling
from ..sampling import Case

__all__ = ["one_array", "reshape_flat", "broadcast_lead", "permutation", "concatenate",
           "pad"]


def one_array(call: Callable[[Any, tuple, Callable], Callable], min_dims: int = 0
              ) -> Callable:
    """Sampler: one random array; ``call(prim, shape, draw)`` is the function to check."""
    def cases(prim: Any, rng: np.random.RandomState, draw: Callable) -> list:
        shape = sampling.draw_shape(draw, min_dims=min_dims)
        return [Case(call(prim, shape, draw), (sampling.values(rng, shape),), f"{shape}")]
    return sampling.sampler(cases)


reshape_flat = one_array(lambda prim, s, draw: lambda x: prim(x, shape=(int(np.prod(s)),)))
broadcast_lead = one_array(lambda prim, s, draw: lambda x: prim(x, shape=(2,) + s))


def _permutation(prim: Any, s: tuple, draw: Callable) -> Callable:
    from hypothesis import strategies as st  # a test dependency
    axes = tuple(draw(st.permutations(range(len(s)))))
    return lambda x: prim(x, axes=axes)


permutation = one_array(_permutation)


def _concatenate(prim: Any, rng: np.random.RandomState, draw: Callable) -> list:
    from hypothesis import strategies as st  # a test dependency
    shape = sampling.draw_shape(draw, min_dims=1)
    axis = draw(st.integers(0, len(shape) - 1))
    sizes = draw(st.lists(st.integers(0, 3), min_size=1, max_size=3))
    shapes = [shape[:axis] + (n,) + shape[axis + 1:] for n in sizes]
    return [Case(lambda *xs: prim(*xs, axis=axis), tuple(sampling.values(rng, s) for s in shapes),
                 f"{shapes} axis={axis}")]


concatenate = sampling.sampler(_concatenate)


def _pad(prim: Any, s: tuple, draw: Callable) -> Callable:
    from hypothesis import strategies as st  # a test dependency
    widths = tuple((draw(st.integers(0, 2)), draw(st.integers(0, 2))) for _ in s)
    value = draw(st.sampled_from([0.0, 1.5]))
    return lambda x: prim(x, pad_width=widths, constant_values=value)


pad = one_array(_pad)
