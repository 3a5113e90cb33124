"""Graph breaks split a compiled function (`funcgrad.torch._graph_split`): the capturable
statements run as compiled segments, the rest (side effects, ``.item()``, ifs on values)
as written, on every call. Differential against real PyTorch's ``torch.compile(backend=
"eager")``: results, gradients, side effects in order, and ``torch._dynamo.explain``'s
graph and break counts where the two split alike."""
from __future__ import annotations

import numpy as np
import pytest

import funcgrad.torch as torch
import funcgrad.torch.nn as nn


def _programs(T, log):
    """The same functions for library ``T``; ``log`` collects their side effects."""
    def side_effects(x):
        y = T.sin(x) * 2
        log.append(("after sin", round(float(y.sum()), 4)))
        print("between segments")
        z = y.exp() + 1
        log.append(("after exp", z.shape[0]))
        return z * y

    def item_in_the_middle(x):
        y = x * x + 1
        scale = y.sum().item()
        z = y / scale
        return T.tanh(z) * scale

    def value_branch(x):
        y = T.cos(x) + 0.5
        if y.sum() > 2:
            y = y * 3
        else:
            y = y - 1
        out = T.sigmoid(y)
        return out * x

    def loop_on_values(x):
        y = x * 1.5
        while y.abs().max() > 1:
            y = y / 2
        return y + x

    return {f.__name__: f for f in (side_effects, item_in_the_middle, value_branch,
                                    loop_on_values)}


def _run(T, name, values, compiled):
    log = []
    f = _programs(T, log)[name]
    run = (T.compile(f, backend="eager") if T is not torch else torch.compile(f)
           ) if compiled else f
    outs, grads = [], []
    for v in values:
        x = T.tensor(v, requires_grad=True)
        out = run(x)
        out.sum().backward()
        outs.append(out.detach().numpy())
        grads.append(x.grad.numpy())
    return outs, grads, log


@pytest.mark.parametrize("name", ["side_effects", "item_in_the_middle", "value_branch",
                                  "loop_on_values"])
def test_split_functions_give_eagers_results_gradients_and_side_effects(name, real, capsys):
    values = [np.array([0.3, -1.2, 2.0]), np.array([1.5, 0.1, 0.7]),
              np.array([-2.0, -1.0, -0.5])]
    got = {}
    for lib, T in (("real", real), ("ours", torch)):
        for compiled in (False, True):
            if lib == "real":
                real._dynamo.reset()
            got[lib, compiled] = _run(T, name, values, compiled)
            got[lib, compiled, "out"] = capsys.readouterr().out
    for key in [("real", True), ("ours", False), ("ours", True)]:
        for a, b in zip(got["real", False][0] + got["real", False][1],
                        got[key][0] + got[key][1]):
            np.testing.assert_allclose(b, a, rtol=1e-6, atol=1e-7)
        assert got[key][2] == got["real", False][2]  # the side effects, in order
        assert got[(*key, "out")] == got["real", False, "out"]
    ours = np.concatenate(got["ours", True][0] + got["ours", True][1])
    eager = np.concatenate(got["ours", False][0] + got["ours", False][1])
    np.testing.assert_array_equal(ours, eager)  # bit for bit: the same kernels


@pytest.mark.parametrize("name", ["side_effects", "item_in_the_middle", "value_branch"])
def test_explain_counts_graphs_and_breaks_as_pytorch_does(name, real):
    x = np.array([0.3, -1.2, 2.0], np.float32)
    real._dynamo.reset()
    theirs = real._dynamo.explain(_programs(real, []).get(name))(real.tensor(x))
    ours = torch._dynamo.explain(_programs(torch, []).get(name))(torch.tensor(x))
    expected = {"side_effects": (2, 1), "item_in_the_middle": (2, 1),
                "value_branch": (2, 1)}[name]
    if name != "side_effects":  # (Dynamo keeps list.append out of its graph count)
        assert (theirs.graph_count, theirs.graph_break_count) == expected
    assert (ours.graph_count, ours.graph_break_count) == (
        expected if name != "side_effects" else (3, 3))
    assert len(ours.ops_per_graph) == ours.graph_count
    assert all(r.user_stack and __file__ in r.user_stack[0] for r in ours.break_reasons)


def test_segments_are_compiled_once_and_reused():
    log = []
    f = _programs(torch, log)["value_branch"]
    compiled = torch.compile(f)
    for v in ([3.0, 1.0], [-3.0, 2.0], [0.5, 0.5], [2.0, 2.0]):
        x = torch.tensor(v)
        assert torch.equal(compiled(x), f(x))
    split = compiled._program.split
    assert split and len(split.segments) == 3  # before the if, then each branch
    assert all(s.graph_breaks == [] for s in split.segments)


def test_fullgraph_names_the_line_and_the_reason():
    f = _programs(torch, [])["item_in_the_middle"]
    with pytest.raises(torch._dynamo.exc.Unsupported, match="graph break with fullgraph"
                       "=True") as caught:
        torch.compile(f, fullgraph=True)(torch.ones(3))
    assert "depends on a tensor's value" in str(caught.value)
    assert f"{__file__}:" in str(caught.value)


def test_a_module_whose_forward_breaks_runs_its_segments_and_hooks():
    class Counted(nn.Module):
        def __init__(self):
            super().__init__()
            self.a, self.b = nn.Linear(3, 4), nn.Linear(4, 2)
            self.calls = 0

        def forward(self, x):
            h = torch.relu(self.a(x))
            self.calls += 1
            if h.sum() > 0:
                h = h * 2
            return self.b(h)
    torch.manual_seed(0)
    model = Counted()
    seen = []
    model.register_forward_hook(lambda m, args, out: seen.append(tuple(out.shape)))
    compiled = torch.compile(model)
    x = torch.randn(5, 3)
    got, want = compiled(x), model(x)
    assert torch.equal(got, want) and model.calls == 2 and seen == [(5, 2), (5, 2)]
    got.sum().backward()
    grads = [p.grad.clone() for p in model.parameters()]
    model.zero_grad()
    want.sum().backward()
    assert all(torch.equal(g, p.grad) for g, p in zip(grads, model.parameters()))
    assert compiled._program.split and "forward" not in vars(model)


def test_the_split_function_reads_live_closure_cells_defaults_and_loops():
    scale = 2.0
    seen = []

    def f(x, *, shift=1.0):
        y = x * scale + shift
        for i in range(3):
            y = y + i
            seen.append(round(y.sum().item(), 3))
        return y
    compiled = torch.compile(f)
    x = torch.ones(2)
    assert torch.equal(compiled(x), f(x)) and seen[:3] == seen[3:]
    scale = 5.0  # a rebound closure variable: the segments read the cell
    assert torch.equal(compiled(x, shift=0.5), f(x, shift=0.5))
    assert seen[6:9] == seen[9:]
    assert compiled._program.split


def test_functions_that_cannot_be_split_run_eagerly():
    out = []
    compiled = torch.compile(lambda x: out.append(1) or x * 2)
    assert torch.equal(compiled(torch.ones(2)), torch.full((2,), 2.0)) and out == [1]
    assert compiled._program.split is False


def test_sizes_read_between_segments_are_static_for_the_next_ones():
    def f(x):
        b, t = x.shape
        print("rows", b)
        h = x.view(b, t, 1) * 2
        for i in range(b):
            h = h + i
        return h.sum(-1)
    compiled = torch.compile(f)
    for n in (2, 3, 2):
        x = torch.ones(n, 4, requires_grad=True)
        assert torch.equal(compiled(x), f(x))
    report = torch._dynamo.explain(f)(torch.ones(2, 4))
    assert report.graph_break_count == 1 and "print" in report.break_reasons[0].reason
    assert all(not s.graph_breaks for s in compiled._program.split.segments)


def test_python_ints_are_specialized_as_pytorch_does():
    compiled = torch.compile(lambda x, n: x.reshape(n, -1) * n)
    assert compiled(torch.ones(6), 2).shape == (2, 3)
    assert compiled(torch.ones(6), 3).shape == (3, 2)
    assert compiled.graph_breaks == []


def test_an_int_that_changes_becomes_an_input_unless_it_is_a_size():
    counter = torch._dynamo.testing.CompileCounter()
    scaled = torch.compile(lambda x, step: x * step, backend=counter)
    for step in range(6):
        assert torch.equal(scaled(torch.ones(2), step), torch.full((2,), float(step)))
    assert counter.frame_count == 2  # the first value, then one program for all
    counter = torch._dynamo.testing.CompileCounter()
    shaped = torch.compile(lambda x, n: x.reshape(n, -1), backend=counter)
    for n in (1, 2, 3, 2):
        assert shaped(torch.ones(6), n).shape == (n, 6 // n)
    assert counter.frame_count == 3 and shaped.graph_breaks == []
