"""The methods and functions of `funcgrad.torch._ops_extras` against PyTorch."""
from __future__ import annotations

import pytest

import funcgrad.torch as F

PROGRAMS = {
    "new(sizes)": lambda m, x: tuple(x.new(2, 3).shape),
    "new(data)": lambda m, x: (str(x.new([1, 2]).dtype), x.new([1, 2]).tolist()),
    "new()": lambda m, x: tuple(x.new().shape),
    "new(Size)": lambda m, x: tuple(x.new(m.Size([2])).shape),
    "sum_to_size": lambda m, x: (x.sum_to_size(1, 2).tolist(), x.sum_to_size(2).tolist()),
    "sum_to_size error": lambda m, x: x.sum_to_size(3),
    "fill_diagonal_": lambda m, x: m.zeros(3, 4).fill_diagonal_(5).tolist(),
    "fill_diagonal_ wrap": lambda m, x: m.zeros(7, 3).fill_diagonal_(1, wrap=True).tolist(),
    "fill_diagonal_ tall": lambda m, x: m.zeros(7, 3).fill_diagonal_(1).tolist(),
    "fill_diagonal_ cube": lambda m, x: m.zeros(2, 2, 2).fill_diagonal_(3).tolist(),
    "bitwise_left_shift": lambda m, x: m.tensor([1, 2]).bitwise_left_shift(2).tolist(),
    "bitwise_right_shift": lambda m, x: m.bitwise_right_shift(m.tensor([8, 16]),
                                                              m.tensor([1, 2])).tolist(),
    "<<, >>": lambda m, x: ((m.tensor([1, 2]) << 2).tolist(), (m.tensor([8]) >> 1).tolist()),
    "<<=": lambda m, x: _ilshift(m.tensor([1, 2])).tolist(),
    "shift of floats": lambda m, x: x.bitwise_left_shift(1),
    "dim_order": lambda m, x: (x.dim_order(), x.t().dim_order(),
                               m.zeros(2, 3, 4).permute(2, 0, 1).dim_order()),
    "nonzero_static": lambda m, x: (m.nonzero_static(m.tensor([0, 1, 0, 2]), size=3).tolist(),
                                    m.nonzero_static(m.tensor([0, 1, 0, 2]), size=1,
                                                     fill_value=-5).tolist()),
    "apply_": lambda m, x: x.clone().apply_(lambda v: v * 10).tolist(),
    "map_": lambda m, x: x.clone().map_(x, lambda a, b: a + b).tolist(),
    "map2_": lambda m, x: x.clone().map2_(x, x[0], lambda a, b, c: a * b - c).tolist(),
    "conj_physical": lambda m, x: (m.conj_physical(m.tensor([1 + 2j])).tolist(),
                                   m.conj_physical(x).tolist()),
    "mH": lambda m, x: x.mH.tolist(),
    "hardshrink method": lambda m, x: x.hardshrink(2.5).tolist(),
    "prelu method": lambda m, x: (x - 3).prelu(m.tensor([0.5])).tolist(),
    "index_reduce": lambda m, x: [
        m.ones(3, 2).index_reduce(0, m.tensor([0, 2, 0]), m.arange(1.0, 7.0).reshape(3, 2),
                                  reduce, include_self=inc).tolist()
        for reduce in ("prod", "mean", "amax", "amin") for inc in (True, False)],
    "index_reduce_ dim 1": lambda m, x: m.zeros(2, 3).index_reduce_(
        1, m.tensor([2, 2]), m.tensor([[1.0, 5.0], [3.0, -1.0]]), "amax").tolist(),
    "index_reduce bad": lambda m, x: m.ones(2).index_reduce(0, m.tensor([0]),
                                                            m.ones(1), "sum"),
    "bernoulli method": lambda m, x: str(m.zeros(2).bernoulli().dtype),
    "multinomial method": lambda m, x: m.tensor([0.0, 1.0]).multinomial(1).tolist(),
}


def _ilshift(t):
    t <<= 1
    return t


def _outcome(m, program):
    try:
        return program(m, m.tensor([[1.0, 2.0], [3.0, 4.0]]))
    except Exception as e:  # noqa: BLE001 - the type and text are what is compared
        return type(e).__name__, str(e)


@pytest.mark.parametrize("name", sorted(PROGRAMS))
def test_matches_pytorch(real, name):
    assert _outcome(F, PROGRAMS[name]) == _outcome(real, PROGRAMS[name])
