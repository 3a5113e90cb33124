"""nn.UninitializedParameter / nn.UninitializedBuffer against real PyTorch: construction,
repr, materialize, the errors before materialisation, copies and pickles."""
from __future__ import annotations

import copy
import pickle

import pytest

import funcgrad.torch as torch


def _both(real, name, *args, **kwargs):
    return getattr(torch.nn, name)(*args, **kwargs), getattr(real.nn, name)(*args, **kwargs)


@pytest.mark.parametrize("name", ["UninitializedParameter", "UninitializedBuffer"])
def test_construction_and_materialize(real, name):
    for kwargs in ({}, {"requires_grad": False}, {"requires_grad": True}):
        ours, theirs = _both(real, name, **kwargs)
        assert repr(ours) == repr(theirs) and str(ours) == str(theirs)
        assert ours.requires_grad == theirs.requires_grad
        assert str(ours.dtype) == str(theirs.dtype) and tuple(ours.size()) == (0,)
        assert torch.nn.parameter.is_lazy(ours) and real.nn.parameter.is_lazy(theirs)
        ours.materialize((2, 3))
        theirs.materialize((2, 3))
        assert type(ours).__name__ == type(theirs).__name__
        assert tuple(ours.shape) == tuple(theirs.shape) == (2, 3)
        assert ours.requires_grad == theirs.requires_grad
        assert not torch.nn.parameter.is_lazy(ours)
    for T in (torch, real):
        p = getattr(T.nn, name)(dtype=T.float64)
        p.materialize(4)
        assert p.dtype == T.float64 and tuple(p.shape) == (4,)
        q = getattr(T.nn, name)()
        q.materialize([2], dtype=T.float16)
        assert q.dtype == T.float16


def _error(fn):
    with pytest.raises(Exception) as info:
        fn()
    return type(info.value), str(info.value)


def _text(op: str, name: str) -> str:
    return (f"Attempted to use an uninitialized parameter in {op}. This error happens when you "
            f"are using a `LazyModule` or explicitly manipulating `torch.nn.parameter.{name}` "
            f"objects. When using LazyModules Call `forward` with a dummy batch to initialize "
            f"the parameters before calling torch functions")


@pytest.mark.parametrize("name", ["UninitializedParameter", "UninitializedBuffer"])
def test_errors_before_materialize(real, name):
    ours, theirs = _both(real, name)
    for attr in (lambda t: t.shape, lambda t: t.share_memory_()):
        assert _error(lambda: attr(ours)) == _error(lambda: attr(theirs))
    # PyTorch names the function object (`<method 'add' of ...>`), the facade the op
    for op, call in (("add", lambda T, t: t + 1), ("sum", lambda T, t: t.sum()),
                     ("mul", lambda T, t: T.mul(t, 2)), ("t", lambda T, t: t.t())):
        kind, text = _error(lambda: call(torch, ours))
        real_kind, real_text = _error(lambda: call(real, theirs))
        assert kind is real_kind is ValueError
        assert text == _text(op, name)
        assert real_text.split(" in ", 1)[1].split(". ", 1)[1] == text.split(". ", 1)[1]


def test_copies_and_pickles(real):
    for T in (torch, real):
        p = T.nn.UninitializedParameter(requires_grad=False, dtype=T.float64)
        for q in (copy.deepcopy(p), pickle.loads(pickle.dumps(p))):
            assert type(q) is T.nn.UninitializedParameter and not q.requires_grad
        assert copy.deepcopy(p).dtype == T.float64
