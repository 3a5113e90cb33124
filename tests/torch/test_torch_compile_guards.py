"""torch.compile never changes what a program does: Python values it was traced with are
guarded (a change retraces, up to ``torch._dynamo.config.recompile_limit``), and what a
program cannot carry (Python side effects, value-dependent control flow, random draws,
in-place writes to captured tensors) is a graph break: the call runs eagerly, with
eager's results and side effects on every call."""
from __future__ import annotations

import warnings

import pytest

import funcgrad.torch as torch
import funcgrad.torch.nn as nn

SCALE = 2.0  # a global a compiled function reads


def test_python_side_effects_happen_on_every_call(capsys):
    log = []

    def f(x):
        log.append(len(log))
        return x * 2
    compiled = torch.compile(f)
    for _ in range(3):
        assert compiled(torch.ones(2)).tolist() == [2.0, 2.0]
    assert log == [0, 1, 2]
    assert "a Python side effect: it changes the list log" in compiled.graph_breaks[0].reason

    def shout(x):
        print("called")
        return x + 1
    compiled = torch.compile(shout)
    compiled(torch.ones(1))
    compiled(torch.ones(1))
    assert capsys.readouterr().out == "called\ncalled\n"

    class Counter:
        calls = 0
    counter = Counter()

    def counted(x):
        counter.calls += 1
        return x - 1
    compiled = torch.compile(counted)
    compiled(torch.ones(1))
    compiled(torch.ones(1))
    assert counter.calls == 2


def test_closed_over_numbers_and_module_attributes_are_guarded():
    global SCALE
    k = {"v": 2.0}
    g = torch.compile(lambda x: x * k["v"])
    assert g(torch.ones(2)).tolist() == [2.0, 2.0]
    k["v"] = 3.0
    assert g(torch.ones(2)).tolist() == [3.0, 3.0]
    factor = 1.5

    def h(x):
        return x * factor * SCALE
    compiled = torch.compile(h)
    assert compiled(torch.ones(1)).item() == 3.0
    factor = 4.0  # a rebound closure variable
    assert compiled(torch.ones(1)).item() == 8.0
    SCALE = 0.5
    try:
        assert compiled(torch.ones(1)).item() == 2.0
    finally:
        SCALE = 2.0

    class Scaled(nn.Module):
        def __init__(self):
            super().__init__()
            self.lin = nn.Linear(2, 2)
            self.scale = 2.0

        def forward(self, x):
            return self.lin(x) * self.scale
    model = Scaled()
    compiled = torch.compile(model)
    x = torch.ones(1, 2)
    first = compiled(x)
    model.scale = 5.0
    assert torch.allclose(compiled(x), model(x)) and torch.allclose(compiled(x), first * 2.5)


def test_captured_tensors_are_inputs_and_in_place_writes_run_eagerly():
    acc = torch.zeros(2)

    def h(x):
        acc.add_(x)
        return x + 1
    compiled = torch.compile(h)
    compiled(torch.ones(2))
    compiled(torch.ones(2))
    assert acc.tolist() == [2.0, 2.0]  # (a trace once left a traced value in acc)
    bias = torch.zeros(2)
    shifted = torch.compile(lambda x: x + bias)
    assert shifted(torch.ones(2)).tolist() == [1.0, 1.0]
    bias.fill_(5.0)  # read anew on every call, not baked in
    assert shifted(torch.ones(2)).tolist() == [6.0, 6.0]


def test_random_draws_are_fresh_each_call_and_match_eager():
    model = nn.Sequential(nn.Linear(4, 4), nn.Dropout(0.5))
    x = torch.randn(8, 4)
    compiled = torch.compile(model)
    torch.manual_seed(7)
    eager = [model(x), model(x)]
    torch.manual_seed(7)
    got = [compiled(x), compiled(x)]
    assert all(torch.equal(a, b) for a, b in zip(eager, got))
    assert not torch.equal(got[0], got[1])


def test_value_dependent_branches_take_eagers_path():
    def f(x):
        if x.sum() > 0:
            return x * 2
        return x - 1
    compiled = torch.compile(f)
    assert compiled(torch.ones(2)).tolist() == [2.0, 2.0]
    assert compiled(-torch.ones(2)).tolist() == [-2.0, -2.0]
    with pytest.raises(torch._dynamo.exc.Unsupported, match="graph break with fullgraph=True"):
        torch.compile(f, fullgraph=True)(torch.ones(2))
    report = torch._dynamo.explain(f)(torch.ones(2))  # (PyTorch's counts: 2 and 1)
    assert report.graph_count == 2 and report.graph_break_count == 1
    assert "depend on a tensor's value" in report.break_reasons[0].reason
    assert "Graph Break Count: 1" in str(report)
    clean = torch._dynamo.explain(lambda x: torch.sin(x) * 2)(torch.ones(2))
    assert clean.graph_count == 1 and clean.graph_break_count == 0 and clean.op_count == 2


def test_the_recompile_limit_warns_naming_the_guard_then_runs_eagerly():
    k = {"v": 0.0}
    compiled = torch.compile(lambda x: x * k["v"])
    limit = torch._dynamo.config.recompile_limit
    assert limit == 8
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        for i in range(limit + 3):
            k["v"] = float(i)
            assert compiled(torch.ones(1)).item() == i
    texts = [str(w.message) for w in caught if "recompile_limit" in str(w.message)]
    assert len(texts) == 1 and "torch._dynamo hit config.recompile_limit (8)" in texts[0]
    assert "k.v == 7.0 (now 8.0)" in texts[0]
    torch._dynamo.config.recompile_limit = 2
    try:
        torch._dynamo.reset()
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always")
            for i in range(4):
                k["v"] = float(i)
                assert compiled(torch.ones(1)).item() == i
        assert any("recompile_limit (2)" in str(w.message) for w in caught)
    finally:
        torch._dynamo.config.recompile_limit = 8
        torch._dynamo.reset()


def test_integer_index_inputs_compile_without_a_break():
    for pad in (None, 2):
        torch.manual_seed(0)
        model = nn.Sequential(nn.Embedding(10, 4, padding_idx=pad), nn.Linear(4, 2))
        idx = torch.tensor([[1, 2], [3, 2]])
        compiled = torch.compile(model)
        out = compiled(idx)
        assert compiled.graph_breaks == [] and torch.allclose(out, model(idx))
        out.sum().backward()
        got = model[0].weight.grad.clone()
        model.zero_grad()
        model(idx).sum().backward()
        assert torch.allclose(got, model[0].weight.grad)
        assert pad is None or got[pad].abs().sum().item() == 0.0
