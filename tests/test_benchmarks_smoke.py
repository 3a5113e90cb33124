"""Smoke run of the benchmark suite (benchmarks/) at tiny sizes, in-process, so that it never
rots: the table has the expected rows, and funcgrad's gradients agree with hand-written
numpy's. Peers that are not installed are skipped by the suite itself. Correctness only:
nothing here asserts on time."""
import sys
from pathlib import Path

import numpy as np
import pytest

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))  # the repository root

import benchmarks  # noqa: E402
from benchmarks import chain, hvp, memory, mlp, script_loop  # noqa: E402
from benchmarks.__main__ import main, table  # noqa: E402
from benchmarks.harness import Timing, paired_ratio, peer, time_target  # noqa: E402


@pytest.fixture(scope="module")
def report():
    return benchmarks.run(quick=True)


def test_table_has_a_row_per_workload_and_implementation(report):
    impls = {(r.workload, r.impl) for r in report.rows}
    for workload in (1, 2, 3):
        assert {(workload, "numpy"), (workload, "funcgrad")} <= impls
    peers = {"torch": ["torch"], "autograd": ["autograd"], "jax": ["jax eager", "jax jit"]}
    for module, names in peers.items():
        for workload in (1, 2, 3):
            expected = names if peer(module) is not None else ["-"]
            assert all((workload, name) in impls for name in expected), (workload, names)
    assert {(4, "numpy"), (4, "funcgrad")} <= impls
    assert sum(r.workload == 4 and r.impl == "funcgrad" for r in report.rows) == 2  # grad, HVP
    assert {(5, "funcgrad, no checkpoint"), (5, "funcgrad, 4 segments"),
            (5, "funcgrad, sqrt(n) segments"), (5, "numpy, no checkpoint")} <= impls
    assert all(r.value is None or r.value > 0 for r in report.rows)
    text = table(report)
    assert text.count("\n") == len(report.rows) + 1
    assert len(report.targets) == 18
    assert {(1, "funcgrad.torch"), (3, "funcgrad.torch")} <= impls  # issue 20's targets
    # issue 17: the facade's step with the model compiled, the loss function compiled, and
    # the whole step compiled
    assert {(3, "funcgrad.torch compile(model)"), (3, "funcgrad.torch compile(loss)"),
            (3, "funcgrad.torch compile(step)")} <= impls
    for workload in (1, 2, 3):  # issue 17: jitted rows and their first calls
        assert {(workload, "funcgrad jit"), (workload, "funcgrad jit: first call")} <= impls
    assert {(6, "funcgrad"), (6, "funcgrad.torch")} <= impls  # (their gradients checked)
    assert any("Workload 5 by depth" in s for s in report.sections)


def test_targets_are_decided_on_paired_ratios():
    """Round r of a is divided by round r of b: a machine slowdown in round 3 (both sides
    3x slower) leaves the paired ratio at 2, where the ratio of medians would move."""
    a = Timing(4.0, 0.0, (2.0, 4.0, 6.0 * 3, 4.0))
    b = Timing(2.0, 0.0, (1.0, 2.0, 3.0 * 3, 2.0))
    assert paired_ratio(a, b) == 2.0
    target = time_target("a <= 1.9x b", a, b, 1.9)
    assert target.met is False and target.measured.startswith("2.00x paired")
    assert time_target("a <= 2x b", a, b, 2.0).met
    assert time_target("a <= 1x peer", a, None, 1.0).met is None


def test_funcgrad_chain_gradient_matches_numpy():
    fns, _ = chain.implementations(*chain.make(10, 5))
    np.testing.assert_allclose(np.asarray(fns["funcgrad"]()), fns["numpy"](), rtol=1e-12)


def test_funcgrad_mlp_gradients_match_numpy():
    impls, _ = mlp.implementations(mlp.make(mlp.QUICK_SIZES, mlp.QUICK_BATCH))
    loss, grads = impls["numpy"].value_and_grad()
    f_loss, f_grads = impls["funcgrad"].value_and_grad()
    np.testing.assert_allclose(float(f_loss), loss, rtol=1e-5)
    for g, f_g in zip(grads, f_grads):
        assert np.asarray(f_g).dtype == np.float32
        np.testing.assert_allclose(np.asarray(f_g), g, rtol=1e-4, atol=1e-6)


def test_funcgrad_hvp_matches_numpy():
    rng = np.random.RandomState(0)
    x, v = rng.randn(20), rng.randn(20)
    impls, _ = hvp.implementations(x, v)
    grad, hv = impls["funcgrad"]
    np.testing.assert_allclose(np.asarray(grad()), hvp.numpy_grad(x), rtol=1e-12)
    np.testing.assert_allclose(np.asarray(hv()), hvp.numpy_hvp(x, v), rtol=1e-12)


def test_funcgrad_checkpointed_gradients_match_numpy():
    x, ws, bs = chain.make(50, 9)
    expected = chain.numpy_grad(x, ws, bs)
    for name, fn in memory._funcgrad(x, ws, bs, 3).items():
        np.testing.assert_allclose(np.asarray(fn()), expected, rtol=1e-12, err_msg=name)


def test_sqrt_bound():
    assert memory.sqrt_segments(64) == 8 and memory.bound_layers(64, 8) == 16
    assert memory.bound_layers(10, 3) == 3 + 4


def test_command_line_writes_the_results(tmp_path, capsys):
    out = tmp_path / "RESULTS.md"
    assert main(["--quick", "--only", "1", "--output", str(out)]) == 0
    printed = capsys.readouterr().out
    assert "| 1 | chain x10, n=10, grad | funcgrad |" in printed
    text = out.read_text()
    assert "Machine:" in text and "numpy BLAS:" in text and "Versions:" in text
    assert "W1: funcgrad <= 1x PyTorch eager" in text


def test_facade_ops_table_measures_every_op_on_both_libraries():
    """Every expression of the per-op table runs on funcgrad.torch and gives PyTorch's
    values (the table compares like with like)."""
    from benchmarks import facade_ops
    import funcgrad.torch as ft
    timings = facade_ops.measure(ft, number=1, grad_only=True)
    assert set(timings) == set(facade_ops.OPS) and all(t[1] > 0 for t in timings.values())
    torch = pytest.importorskip("torch")
    env = {}
    for lib in (ft, torch):
        rng = np.random.RandomState(0)
        env[lib] = {"L": lib, "a": lib.tensor(rng.randn(10, 10)), "w": lib.tensor(rng.randn(10, 10)),
                    "b": lib.tensor(rng.randn(10)), "y": lib.tensor(rng.randint(0, 10, 10))}
    for name, expr in facade_ops.OPS.items():
        ours, theirs = (eval(expr, env[lib]) for lib in (ft, torch))  # noqa: S307
        ours, theirs = (v if isinstance(v, (tuple, list)) else (v,) for v in (ours, theirs))
        for o, t in zip(ours, theirs):
            o = o if isinstance(o, (int, float)) else o.numpy()
            t = t if isinstance(t, (int, float)) else t.numpy()
            np.testing.assert_allclose(o, t, rtol=1e-6, atol=1e-7, err_msg=name)


def test_the_scripted_loop_and_the_lax_loop_compute_the_same():
    """The two sides of issue 40's speed target (``benchmarks.instructions loop_script
    loop_lax``) compute one function."""
    np.testing.assert_allclose(np.asarray(script_loop.scripted()()),
                               np.asarray(script_loop.by_hand()()), rtol=1e-6)
