"""``torch.profiler`` / ``torch.autograd.profiler`` on funcgrad.torch, against PyTorch's on
the same program: which ops and backward nodes are events, their counts, nesting under
``record_function``, the table's layout and the step schedule."""
import numpy as np
import pytest

import funcgrad.torch as ftorch

torch = pytest.importorskip("torch")
BOTH = pytest.mark.parametrize("m", [ftorch, torch], ids=["funcgrad", "torch"])


def _program(m):
    m.manual_seed(0)
    lin = m.nn.Linear(4, 3)
    x = m.randn(2, 4)
    with m.profiler.profile(activities=[m.profiler.ProfilerActivity.CPU],
                            record_shapes=True) as prof:
        with m.profiler.record_function("model_inference"):
            y = m.tanh(lin(x)).sum()
        y.backward()
    return prof


NAMES = ["model_inference", "aten::addmm", "aten::tanh", "aten::sum",
         "autograd::engine::evaluate_function: SumBackward0", "SumBackward0",
         "autograd::engine::evaluate_function: TanhBackward0", "TanhBackward0",
         "autograd::engine::evaluate_function: AddmmBackward0", "AddmmBackward0"]


def test_events_and_counts_match_pytorch():
    got = {e.key: e.count for e in _program(ftorch).key_averages()}
    want = {e.key: e.count for e in _program(torch).key_averages()}
    for name in NAMES:  # (PyTorch's backward runs aten ops too: only nodes are counted)
        assert name in got and name in want, name
        if not name.startswith("aten::"):
            assert got[name] == want[name] == 1, name


@BOTH
def test_nesting_self_times_and_table(m):
    prof = _program(m)
    events = prof.events()
    outer = next(e for e in events if e.name == "model_inference")
    inner = {e.name for e in events if e.cpu_parent is outer}
    assert {"aten::tanh", "aten::sum"} <= inner
    assert all(e.cpu_parent is not None for e in events if e.name == "aten::tanh")
    assert outer.cpu_time_total >= sum(c.cpu_time_total for c in outer.cpu_children)
    averages = prof.key_averages()
    for e in averages:
        assert 0 <= e.self_cpu_time_total <= e.cpu_time_total + 1e-6
    table = averages.table(sort_by="cpu_time_total", row_limit=3)
    lines = table.splitlines()
    assert lines[1].split() == ["Name", "Self", "CPU", "%", "Self", "CPU", "CPU", "total",
                                "%", "CPU", "total", "CPU", "time", "avg", "#", "of",
                                "Calls"]
    assert set(lines[0]) == {"-", " "} and lines[0] == lines[2]
    top = max(averages, key=lambda e: e.cpu_time_total).key
    assert lines[3].lstrip().startswith(top)  # the largest total comes first
    assert len(lines) == 3 + 3 + 2 and lines[-1].startswith("Self CPU time total: ")
    shapes = prof.key_averages(group_by_input_shape=True).table(row_limit=50)
    assert "Input Shapes" in shapes.splitlines()[1] and "[[2, 3]]" in shapes


def test_schedule_matches_pytorch():
    ours = ftorch.profiler.schedule(skip_first=1, wait=1, warmup=1, active=2, repeat=2)
    theirs = torch.profiler.schedule(skip_first=1, wait=1, warmup=1, active=2, repeat=2)
    assert [ours(i).name for i in range(12)] == [theirs(i).name for i in range(12)]


@BOTH
def test_schedule_records_only_active_steps(m):
    traces = []
    with m.profiler.profile(schedule=m.profiler.schedule(wait=1, warmup=1, active=2),
                            on_trace_ready=lambda p: traces.append(
                                sum(e.count for e in p.key_averages()
                                    if e.key == "aten::mul"))) as prof:
        for _ in range(4):
            m.ones(3) * 2
            prof.step()
    assert traces == [2]


def test_autograd_profiler_and_chrome_trace(tmp_path):
    with ftorch.autograd.profiler.profile() as prof:
        ftorch.ones(3) * 2
    assert [e.key for e in prof.key_averages()] == ["aten::mul"]
    path = tmp_path / "trace.json"
    prof.export_chrome_trace(str(path))
    import json
    trace = json.loads(path.read_text())
    assert [e["name"] for e in trace["traceEvents"]] == ["aten::mul"]
    assert np.isfinite(trace["traceEvents"][0]["dur"])
