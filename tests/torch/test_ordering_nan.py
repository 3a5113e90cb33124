"""Ordering ops with NaN and infinities against PyTorch: NaN counts as the largest value
(last ascending, first descending, NaNs in their original order), ``unique`` keeps each
NaN apart (NaN != NaN), integer extremes sort without overflow."""
from __future__ import annotations

import numpy as np
import pytest

import funcgrad.torch as ours

NAN, INF = float("nan"), float("inf")
VALUES = [1.0, NAN, 3.0, -1.0, NAN, 2.0, INF, -INF]

CASES = {
    "topk": lambda T, x: T.topk(x, 3),
    "topk smallest": lambda T, x: T.topk(x, 3, largest=False),
    "topk rows": lambda T, x: T.topk(x.reshape(2, 4), 2, dim=1),
    "sort": lambda T, x: T.sort(x),
    "sort descending": lambda T, x: T.sort(x, descending=True),
    "sort descending stable": lambda T, x: T.sort(x, descending=True, stable=True),
    "sort columns descending": lambda T, x: T.sort(x.reshape(4, 2), dim=0, descending=True),
    "argsort descending": lambda T, x: T.argsort(x, descending=True),
    "msort": lambda T, x: T.msort(x),
    "unique": lambda T, x: T.unique(x, return_inverse=True, return_counts=True),
    "max": lambda T, x: T.max(x),
    "argmax": lambda T, x: T.argmax(x),
    "min rows": lambda T, x: T.min(x.reshape(2, 4), dim=1),
    "kthvalue": lambda T, x: T.kthvalue(x, 3),
    "median": lambda T, x: T.median(x),
    "nanmedian": lambda T, x: T.nanmedian(x),
    "cummax": lambda T, x: T.cummax(x, 0),
    "int64 extremes descending": lambda T, x: T.sort(T.tensor([3, -2**63, 5, 3, 2**63 - 1]),
                                                     descending=True),
    "bool descending": lambda T, x: T.sort(T.tensor([True, False, True]), descending=True,
                                           stable=True),
}


@pytest.mark.parametrize("name", list(CASES))
def test_ordering_with_nan_is_pytorchs(name):
    real = pytest.importorskip("torch")
    if not hasattr(real, "tensor"):
        pytest.skip("PyTorch is not installed")
    got = []
    for T in (real, ours):
        out = CASES[name](T, T.tensor(VALUES))
        out = out if isinstance(out, tuple) else (out,)
        got.append([np.asarray(t.numpy()) for t in out])
    for a, b in zip(*got):
        assert a.dtype == b.dtype and a.shape == b.shape
        np.testing.assert_array_equal(b, a)


def test_the_gradient_of_a_descending_sort_goes_to_the_sorted_positions():
    x = ours.tensor(VALUES, requires_grad=True)
    values, _ = ours.sort(x, descending=True)
    values[2:6].sum().backward()  # inf, 3, 2, 1 (after the two NaNs)
    assert x.grad.tolist() == [1.0, 0.0, 1.0, 0.0, 0.0, 1.0, 1.0, 0.0]
