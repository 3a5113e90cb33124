"""Dynamic shapes (`funcgrad.torch._compiled_shapes`): the programs compiled for sizes
2, 3, 4, 5 of a dimension with ``dynamic=None`` (automatic after a change), ``True``,
``False`` and ``torch._dynamo.mark_dynamic``, counted by ``CompileCounter`` beside real
PyTorch's frame counts, and the limit: a program that computes with the size itself (a
mean's divisor) is traced per size."""
from __future__ import annotations

import importlib

import numpy as np
import pytest

import funcgrad.torch as torch


def _elementwise(T):
    return lambda x: T.sin(x) * 2 + x.exp().sum(0)


def _mean(T):
    return lambda x: x.mean()


def _frames(T, make, dynamic, mark=False):
    T._dynamo.reset()
    counter = T._dynamo.testing.CompileCounter()
    f = make(T)
    compiled = T.compile(f, backend=counter, dynamic=dynamic)
    for n in (2, 3, 4, 5):
        x = T.arange(float(n * 3)).reshape(n, 3) / 7
        if mark:
            T._dynamo.mark_dynamic(x, 0)
        np.testing.assert_allclose(compiled(x).numpy(), f(x).numpy(), rtol=1e-6)
    return counter.frame_count


@pytest.mark.parametrize("dynamic,mark,expected", [(None, False, 2), (True, False, 1),
                                                   (False, False, 4), (None, True, 1)])
def test_programs_per_size_match_pytorchs_frame_counts(dynamic, mark, expected, real):
    importlib.import_module("torch._dynamo.testing")  # (real PyTorch's CompileCounter)
    assert _frames(real, _elementwise, dynamic, mark) == expected
    assert _frames(torch, _elementwise, dynamic, mark) == expected


def test_a_program_computing_with_the_size_is_traced_per_size(real):
    importlib.import_module("torch._dynamo.testing")
    assert [_frames(real, _mean, d) for d in (None, True, False)] == [2, 1, 4]
    assert [_frames(torch, _mean, d) for d in (None, True, False)] == [4, 4, 4]


def test_sizes_0_and_1_keep_programs_of_their_own():
    counter = torch._dynamo.testing.CompileCounter()
    f = _elementwise(torch)
    compiled = torch.compile(f, backend=counter, dynamic=True)
    for n in (3, 1, 0, 4, 1):
        x = torch.ones(n, 3)
        assert torch.equal(compiled(x), f(x))
    assert counter.frame_count == 3


def test_mark_dynamic_checks_the_dimension_and_dynamic_its_value():
    with pytest.raises(IndexError, match="Dimension out of range"):
        torch._dynamo.mark_dynamic(torch.ones(2), 1)
    with pytest.raises(ValueError, match="dynamic must be None, True or False"):
        torch.compile(lambda x: x, dynamic="yes")




def test_a_branch_on_a_size_is_guarded_for_each_new_size():
    """The programs for sizes 2 and 3 are one program, but the Python takes another
    branch from size 4 on: each new size is checked before the generic program runs."""
    def f(x):
        if x.shape[0] > 3:
            return x * 2
        return x + 1
    counter = torch._dynamo.testing.CompileCounter()
    compiled = torch.compile(f, backend=counter)
    for n in (2, 3, 4, 5, 2, 6):
        x = torch.ones(n)
        assert torch.equal(compiled(x), f(x))
    assert counter.frame_count == 4  # sizes 2, 3 (one program from then on), 4, 5
