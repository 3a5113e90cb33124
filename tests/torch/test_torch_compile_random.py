"""Random ops compile under torch.compile: the facade generator's state is an input of the
program and its next state an output, so ``manual_seed(s); compiled(x)`` draws eager's
numbers bit for bit, and each call draws fresh ones. The same two properties are checked
on real PyTorch (``backend="eager"``): its draws are mt19937's, not ours, so values are
compared within each library."""
from __future__ import annotations

import numpy as np
import pytest

import funcgrad.torch as torch
import funcgrad.torch.nn as nn
import funcgrad.torch.nn.functional as F


def _noisy(T, x):
    """rand, randn, bernoulli, dropout in training mode and an in-place uniform_."""
    u = T.rand(x.shape) + T.randn(x.shape, dtype=x.dtype) * T.bernoulli(T.full_like(x, 0.3))
    v = T.empty_like(x).uniform_(-1.0, 1.0)
    return T.nn.functional.dropout(x * u + v, 0.4, training=True)


def _seeded_runs(T, fn, x, calls=3, seed=0):
    T.manual_seed(seed)
    return [fn(x).detach().numpy() for _ in range(calls)]


@pytest.mark.parametrize("lib", ["ours", "real"])
def test_compiled_draws_equal_eager_draws_and_are_fresh_each_call(lib, real):
    T = torch if lib == "ours" else real
    x = T.linspace(-1.0, 1.0, 12).reshape(3, 4)

    def f(x):
        return _noisy(T, x)
    compiled = T.compile(f) if lib == "ours" else T.compile(f, backend="eager")
    eager = _seeded_runs(T, f, x)
    got = _seeded_runs(T, compiled, x)
    for a, b in zip(eager, got):
        np.testing.assert_array_equal(a, b)
    assert not np.array_equal(got[0], got[1])
    T.manual_seed(0)
    f(x)
    after_eager = T.rand(2).numpy()
    T.manual_seed(0)
    compiled(x)
    np.testing.assert_array_equal(T.rand(2).numpy(), after_eager)  # advanced as eager
    if lib == "ours":
        assert compiled.graph_breaks == []
        assert "torch_generator_draw" in compiled.code_for(x)


def test_dropout_gradients_through_the_compiled_program_equal_eagers():
    torch.manual_seed(0)
    model = nn.Sequential(nn.Linear(4, 8), nn.ReLU(), nn.Dropout(0.5), nn.Linear(8, 2))
    x = torch.randn(5, 4, requires_grad=True)
    compiled = torch.compile(model)
    grads = []
    for run in (model, compiled):
        torch.manual_seed(11)
        outs = [run(x) for _ in range(2)]
        sum(o.sum() for o in outs).backward()
        grads.append([x.grad.clone()] + [p.grad.clone() for p in model.parameters()])
        x.grad = None
        model.zero_grad()
        assert not torch.equal(outs[0], outs[1])
    assert compiled.graph_breaks == []
    assert all(torch.equal(a, b) for a, b in zip(*grads))


def test_a_program_that_draws_only_for_some_shapes_reads_the_generator_then():
    """A function that draws only for larger inputs: the first program draws nothing
    (its calls leave the generator alone); the larger input's program draws eager's
    numbers all the same."""
    def f(x):
        return F.dropout(x, 0.5) if x.shape[0] > 2 else x * 1
    compiled = torch.compile(f)
    sizes = [2, 2, 4, 4, 2, 4]
    torch.manual_seed(3)
    eager = [f(torch.ones(n)) for n in sizes]
    torch.manual_seed(3)
    got = [compiled(torch.ones(n)) for n in sizes]
    assert all(torch.equal(a, b) for a, b in zip(eager, got))
    assert compiled.graph_breaks == []


def test_a_generator_of_its_own_is_a_graph_break_with_eagers_numbers():
    g = torch.Generator()

    def f(x):
        return x + torch.rand(x.shape, generator=g)
    compiled = torch.compile(f)
    g.manual_seed(5)
    eager = [f(torch.zeros(3)) for _ in range(2)]
    g.manual_seed(5)
    got = [compiled(torch.zeros(3)) for _ in range(2)]
    assert all(torch.equal(a, b) for a, b in zip(eager, got))
    assert "other than the default one" in compiled.graph_breaks[0].reason


def test_every_random_factory_compiles_with_eagers_draws():
    def f(x):
        return (torch.normal(x, 0.5), torch.randint(0, 10, (3,)), torch.randperm(4),
                torch.randn_like(x), torch.empty(3).normal_(0, 2).exponential_())
    compiled = torch.compile(f)
    x = torch.zeros(3)
    torch.manual_seed(4)
    eager = [f(x) for _ in range(2)]
    torch.manual_seed(4)
    got = [compiled(x) for _ in range(2)]
    assert all(torch.equal(a, b) for e, g in zip(eager, got) for a, b in zip(e, g))
    assert compiled.graph_breaks == []
