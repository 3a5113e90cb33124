"""torch.testing.assert_close and make_tensor against PyTorch: what passes, and the exact
messages of what fails."""
from __future__ import annotations

import math

import numpy as np
import pytest

import funcgrad.torch as F

CASES = {
    "close floats": lambda m: (m.tensor([1.0, 2.0, 3.0]), m.tensor([1.0, 2.000001, 3.0])),
    "one far": lambda m: (m.tensor([1.0, 2.0, 3.0]), m.tensor([1.0, 2.5, 3.0])),
    "dtypes": lambda m: (m.tensor([1.0, 2.0]), m.tensor([1.0, 2.0], dtype=m.float64)),
    "ints": lambda m: (m.tensor([1, 2]), m.tensor([1, 3])),
    "shapes": lambda m: (m.ones(2), m.ones(3)),
    "list item": lambda m: ([m.ones(2), 1.0], [m.ones(2), 1.5]),
    "dict item": lambda m: ({"a": m.ones(2)}, {"a": m.zeros(2)}),
    "0-d nan": lambda m: (m.tensor(math.nan), m.tensor(math.nan)),
    "2-d": lambda m: (m.ones(2, 2), m.ones(2, 2) + m.eye(2)),
    "one element": lambda m: (m.tensor([1.0]), m.tensor([2.0])),
    "0-d ints": lambda m: (m.tensor(1), m.tensor(2)),
    "python ints": lambda m: (1, 2),
    "python floats": lambda m: (1.0, 1.5),
    "nan inside": lambda m: (m.tensor([1.0, 2.0]), m.tensor([1.0, math.nan])),
    "int vs float": lambda m: (1, 1.0),
    "tensor vs float": lambda m: (m.ones(1), 1.0),
    "lengths": lambda m: ([1, 2], [1]),
    "numpy": lambda m: (np.ones(2), np.zeros(2)),
    "float64": lambda m: (m.tensor([1.0], dtype=m.float64), m.tensor([1.0 + 1e-6],
                                                                      dtype=m.float64)),
    "half": lambda m: (m.tensor([1.0], dtype=m.float16), m.tensor([1.01], dtype=m.float16)),
    "infinities": lambda m: (m.tensor([math.inf, 1.0]), m.tensor([math.inf, 1.0])),
    "bools": lambda m: (m.tensor([True, False]), m.tensor([True, True])),
}


def _outcome(m, case, **options):
    try:
        m.testing.assert_close(*CASES[case](m), **options)
    except Exception as e:  # noqa: BLE001 - the type and text are what is compared
        return type(e).__name__, str(e)
    return None


@pytest.mark.parametrize("case", sorted(CASES))
def test_assert_close_matches_pytorch(real, case):
    assert _outcome(F, case) == _outcome(real, case)


def test_options_match_pytorch(real):
    for case, options in [("one far", {"rtol": 0.0, "atol": 0.6}), ("dtypes",
                                                                    {"check_dtype": False}),
                          ("0-d nan", {"equal_nan": True}), ("one far", {"msg": "custom"}),
                          ("one far", {"rtol": 1e-3}), ("int vs float", {"check_dtype": False})]:
        assert _outcome(F, case, **options) == _outcome(real, case, **options), case


def test_make_tensor_ranges():
    for dtype, low, high in ((F.float32, -9, 9), (F.int64, -9, 10), (F.uint8, 0, 10)):
        t = F.testing.make_tensor((50, 4), dtype=dtype, device="cpu")
        assert t.dtype is dtype and tuple(t.shape) == (50, 4)
        assert low <= t.min().item() and t.max().item() < high
    t = F.testing.make_tensor(3, dtype=F.float64, device="cpu", low=0, high=1,
                              requires_grad=True, exclude_zero=True)
    assert t.requires_grad and (t != 0).all()
