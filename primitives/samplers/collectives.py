"""Samplers of the collective primitives, for the registry's finite-difference tests.

The registry suite runs in one process, so the cases run over an axis of size one (a
`SelfTransport` bound to ``SELF_AXIS``, bound once and left bound: the backward pass of a
case runs after the case function has returned). Over one rank every collective is a
reshaping identity, which checks the rules' plumbing (shapes, params, second order); their
values over several ranks are checked by tests/test_distributed.py under mpiexec.
"""
from __future__ import annotations

from typing import Callable

import numpy as np

from funcgrad.core import Primitive
from .. import sampling
from ..kernels.collectives import SelfTransport, bound_axis_names, register_axis

__all__ = ["SELF_AXIS", "declare"]

SELF_AXIS = "funcgrad.samplers:self"


def _bind_self_axis() -> None:
    if SELF_AXIS not in bound_axis_names():
        register_axis(SELF_AXIS, SelfTransport())


def _params(prim: Primitive, shape: tuple, draw: Callable) -> dict:
    """Static params for ``prim`` on an operand of ``shape`` over an axis of size 1."""
    from hypothesis import strategies as st  # a test dependency
    name = prim.name
    if name in ("all_gather", "all_gather_invariant"):
        tiled = bool(shape) and draw(st.booleans())
        axis = draw(st.integers(0, len(shape) - 1 if tiled else len(shape)))
        return {"axis": axis, "tiled": tiled}
    if name in ("psum_scatter", "pscatter"):
        key = "scatter_dimension" if name == "psum_scatter" else "axis"
        sized_one = [i for i, n in enumerate(shape) if n == 1]
        tiled = not sized_one or draw(st.booleans())
        axis = draw(st.sampled_from(range(len(shape)) if tiled else sized_one))
        return {key: axis, "tiled": tiled}
    if name == "pbroadcast":
        return {"source": 0}
    if name == "ppermute":
        return {"perm": draw(st.sampled_from([(), ((0, 0),)]))}
    if name == "pcast":
        return {"to": draw(st.sampled_from(["varying", "invariant"]))}
    return {}


def _sampler(prim: Primitive) -> Callable:
    needs_axes = prim.name in ("psum_scatter", "pscatter")

    def cases(rng: np.random.RandomState, draw: Callable) -> list:
        _bind_self_axis()
        shape = sampling.draw_shape(draw, min_dims=1 if needs_axes else 0)
        params = _params(prim, shape, draw)
        values = sampling.values(rng, shape)
        if prim.name in ("pmax", "pmin"):  # no ties within a finite-difference step
            values = values + 0.1 * np.arange(values.size).reshape(shape)
        return [sampling.Case(lambda x: prim(x, axis_name=SELF_AXIS, **params), (values,),
                              f"{shape} {params}")]
    return sampling.custom(cases)


def declare(*prims: Primitive) -> None:
    """Give each collective primitive its sampler."""
    for prim in prims:
        prim.sample = _sampler(prim)
