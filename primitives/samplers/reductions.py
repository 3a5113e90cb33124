"""Samplers of the reductions and scans."""
from __future__ import annotations

from typing import Any, Callable

import numpy as np

from .. import sampling
from ..sampling import Case

__all__ = ["distinct", "with_zeros", "axes", "scan", "nll_loss"]


def distinct(rng: np.random.RandomState, shape: tuple) -> np.ndarray:
    """Values at least 0.08 apart (no ties within a finite-difference step)."""
    n = int(np.prod(shape, dtype=np.int64))
    return (rng.permutation(n) * 0.1 - 0.1 * n / 2 + rng.uniform(0, 0.02, n)).reshape(shape)


def with_zeros(rng: np.random.RandomState, shape: tuple) -> np.ndarray:
    """Values in ±(0.5, 1.5) with about a quarter of them exactly zero."""
    x = sampling.values(rng, shape, (0.5, 1.5), signed=True)
    return np.where(rng.uniform(size=shape) < 0.25, 0.0, x)


def axes(values: Callable = sampling.values, nonempty: bool = False,
         keepdims: bool = True) -> Callable:
    """Sampler: a random array, a random subset of its axes and, when the primitive takes
    one, keepdims (``nonempty``: only axes of non-zero length, for reductions without an
    identity)."""
    def cases(prim: Any, rng: np.random.RandomState, draw: Callable) -> list:
        shape = sampling.draw_shape(draw)
        chosen = tuple(i for i, n in enumerate(shape)
                       if (n or not nonempty) and sampling.draw_bool(draw))
        params: dict = {"axis": chosen}
        if keepdims:
            params["keepdims"] = sampling.draw_bool(draw)
        return [Case(lambda x: prim(x, **params), (values(rng, shape),), f"{shape} {params}")]
    return sampling.sampler(cases)


def scan(values: Callable, nargs: int = 1) -> Callable:
    """Sampler: arrays of one random shape (ndim >= 1) scanned along a random axis."""
    def cases(prim: Any, rng: np.random.RandomState, draw: Callable) -> list:
        shape = sampling.draw_shape(draw, min_dims=1, max_side=4)
        axis = sampling.draw_int(draw, 0, len(shape) - 1)
        return [Case(lambda *xs: prim(*xs, axis=axis),
                     tuple(values(rng, shape) for _ in range(nargs)), f"{shape} axis={axis}")]
    return sampling.sampler(cases)


def _nll_loss(prim: Any, rng: np.random.RandomState, draw: Callable) -> list:
    from hypothesis import strategies as st  # a test dependency
    lead = sampling.draw_shape(draw, max_dims=2)  # (N, d...) around the class axis, or ()
    n_cls = draw(st.integers(1, 4))
    shape = lead[:1] + (n_cls,) + lead[1:]
    axis = 1 if lead else 0
    target = rng.randint(n_cls, size=lead)
    weight = 1.0 if draw(st.booleans()) else rng.uniform(0.5, 2.0, lead)
    reduction = draw(st.sampled_from(["none", "sum", "mean"] if np.prod(lead)
                                     else ["none", "sum"]))
    return [Case(lambda x: prim(x, target, weight, axis=axis, reduction=reduction),
                 (sampling.values(rng, shape, (-3.0, -0.1)),),
                 f"{shape} target {lead} axis {axis} {reduction}")]


nll_loss = sampling.sampler(_nll_loss)
