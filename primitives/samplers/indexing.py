"""Samplers of the indexing primitives: basic indices and integer-array indices with
repeats and negative entries."""
from __future__ import annotations

from typing import Any, Callable

import numpy as np

from funcgrad.array import new_array
from .. import sampling
from ..sampling import Case

__all__ = ["draw_index", "gather", "update"]


def draw_index(draw: Callable, rng: np.random.RandomState, shape: tuple) -> tuple:
    """(Index, idx) for ``shape``: basic, or integer arrays with repeats (and negative
    entries) on a random set of axes with reversed slices on the others."""
    from hypothesis import strategies as st  # a test dependency
    from hypothesis.extra import numpy as hnp  # a test dependency
    from ..indexing import NO_INDEX, Index, Ref, Slice  # the index types are the family's
    if not shape or draw(st.booleans()):
        basic = draw(hnp.basic_indices(shape, allow_newaxis=True, allow_ellipsis=True))
        basic = basic if isinstance(basic, tuple) else (basic,)
        return Index(Slice(e.start, e.stop, e.step) if isinstance(e, slice) else e
                     for e in basic), NO_INDEX
    axes = sorted(draw(st.sets(st.sampled_from(range(len(shape))), min_size=1)))
    count = draw(st.integers(0, 4)) if all(shape[a] for a in axes) else 0
    rows = np.stack([rng.randint(-shape[a], max(shape[a], 1), size=count) for a in axes])
    entries = [Slice(None, None, -1)] * len(shape)
    for row, a in enumerate(axes):
        entries[a] = Ref(row)
    return Index(entries), new_array(rows.astype(np.intp))


def _gather(prim: Any, rng: np.random.RandomState, draw: Callable) -> list:
    shape = sampling.draw_shape(draw)
    index, idx = draw_index(draw, rng, shape)
    return [Case(lambda x: prim(x, idx, index=index), (sampling.values(rng, shape),),
                 f"{shape}{index!r}")]


gather = sampling.sampler(_gather)


def _indexed_shape(shape: tuple, index: Any, idx: Any) -> tuple:
    return np.empty(shape, dtype=[])[index.build(idx.to_numpy())].shape


def _update(prim: Any, rng: np.random.RandomState, draw: Callable) -> list:
    """scatter_add or index_set of updates shaped like x[index], or broadcast to it."""
    shape = sampling.draw_shape(draw)
    index, idx = draw_index(draw, rng, shape)
    target = _indexed_shape(shape, index, idx)
    updates = sampling.values(rng, target[sampling.draw_int(draw, 0, len(target)):])
    if prim.name == "scatter_add":
        return [Case(lambda u: prim(u, idx, index=index, shape=shape), (updates,),
                     f"{shape}{index!r} updates {updates.shape}")]
    return [Case(lambda x, v: prim(x, v, idx, index=index),
                 (sampling.values(rng, shape), updates),
                 f"{shape}{index!r} values {updates.shape}")]


update = sampling.sampler(_update)
