"""Shape primitives: reshape, broadcast_to, transpose ...

Their VJPs move the cotangent back (reshape to the input's shape, transpose by the inverse
permutation); broadcast_to's VJP is the identity because the tape sums a cotangent back
over broadcast axes.
"""
from __future__ import annotations

from typing import Any

import numpy as np

from funcgrad.core import Primitive
from . import sampling


def _case(fun_of_shape: Any) -> Any:
    def cases(rng: np.random.RandomState, draw: Any) -> list:
        shape = sampling.draw_shape(draw)
        fun = fun_of_shape(shape, draw)
        return [sampling.Case(fun, (sampling.values(rng, shape),), f"{shape}")]
    return sampling.custom(cases)


reshape = Primitive("reshape", lambda x, shape: np.reshape(x, shape), params=("shape",),
                    view=True, sample=_case(lambda s, draw: lambda x: reshape(
                        x, shape=(int(np.prod(s)),))))
reshape.defvjp(lambda g, x_shape: reshape(g, shape=x_shape))
reshape.defjvp(lambda t, shape: reshape(t, shape=shape))

broadcast_to = Primitive("broadcast_to", lambda x, shape: np.broadcast_to(x, shape),
                         params=("shape",), view=True,
                         sample=_case(lambda s, draw: lambda x: broadcast_to(
                             x, shape=(2,) + s)))
broadcast_to.defvjp(lambda g: g)
broadcast_to.defjvp(lambda t, shape: broadcast_to(t, shape=shape))


def _transpose_case(s: tuple, draw: Any) -> Any:
    from hypothesis import strategies as st
    axes = tuple(draw(st.permutations(range(len(s)))))
    return lambda x: transpose(x, axes=axes)


transpose = Primitive("transpose", lambda x, axes: np.transpose(x, axes), params=("axes",),
                      view=True, sample=_case(_transpose_case))
transpose.defvjp(lambda g, axes: transpose(g, axes=tuple(int(i) for i in np.argsort(axes))))
transpose.defjvp(lambda t, axes: transpose(t, axes=axes))
