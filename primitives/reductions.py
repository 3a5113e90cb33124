"""Reductions and scans: sum ...

``axis`` is always a normalised tuple of non-negative axes and ``keepdims`` a bool; the
numpy-signature wrappers in `funcgrad.numpy` normalise them.
"""
from __future__ import annotations

from typing import Any

import numpy as np

from funcgrad.core import Primitive
from . import sampling


def _axes_case(prim: Primitive) -> Any:
    """Sampler: a random array with a random subset of its axes and keepdims."""
    def cases(rng: np.random.RandomState, draw: Any) -> list:
        from hypothesis import strategies as st
        shape = sampling.draw_shape(draw)
        axes = tuple(i for i in range(len(shape)) if draw(st.booleans()))
        keepdims = draw(st.booleans())
        return [sampling.Case(lambda x: prim(x, axis=axes, keepdims=keepdims),
                              (sampling.values(rng, shape),), f"{shape} axis={axes}")]
    return sampling.custom(cases)


def _expand(g: Any, axis: tuple, keepdims: bool) -> Any:
    """Re-insert reduced axes into a cotangent so that it broadcasts against the input."""
    from .shape import reshape
    if keepdims or not axis:
        return g
    shape = list(g.shape)
    for a in sorted(axis):
        shape.insert(a, 1)
    return reshape(g, shape=tuple(shape))


reduce_sum = Primitive("reduce_sum", lambda x, axis, keepdims: np.sum(
    x, axis=axis, keepdims=keepdims), params=("axis", "keepdims"))
reduce_sum.sample = _axes_case(reduce_sum)
reduce_sum.defvjp(lambda g, x_shape, axis, keepdims: shape_broadcast_to(
    _expand(g, axis, keepdims), x_shape))
reduce_sum.defjvp(lambda t, axis, keepdims: reduce_sum(t, axis=axis, keepdims=keepdims))


def shape_broadcast_to(g: Any, shape: tuple) -> Any:
    from .shape import broadcast_to
    return g if g.shape == tuple(shape) else broadcast_to(g, shape=tuple(shape))
