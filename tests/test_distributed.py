"""funcgrad.distributed: collectives, shard_map, data parallelism, faults, the launcher.

The multi-process tests start MPI jobs (python -m funcgrad.distributed.run, bounded by
timeouts) that each run many checks; the collectives' per-rank values and derivatives are
compared with jax.pmap over as many simulated devices. They are skipped only when mpi4py
is not installed (pip install 'funcgrad[distributed]'). The single-process tests need
nothing: a `SelfTransport` is a group of one.
"""
import importlib.util
import os
import sys
import time

import numpy as np
import pytest

import funcgrad
import funcgrad.numpy as fnp
import funcgrad.distributed as dist
from funcgrad.primitives.kernels.collectives import Transport

sys.path.insert(0, os.path.join(os.path.dirname(__file__), "distributed_jobs"))
from harness import launch, start_jax_reference  # noqa: E402

needs_mpi = pytest.mark.skipif(importlib.util.find_spec("mpi4py") is None,
                               reason="needs mpi4py: pip install 'funcgrad[distributed]'")
needs_jax = pytest.mark.skipif(importlib.util.find_spec("jax") is None,
                               reason="the reference is jax.pmap")


# -- one process -------------------------------------------------------------------------------

def test_collectives_over_a_group_of_one_are_identities():
    x = fnp.asarray(np.arange(6.0).reshape(2, 3))
    with dist.bind_axis("i", dist.SelfTransport()):
        np.testing.assert_array_equal(dist.psum(x, "i"), x)
        np.testing.assert_array_equal(dist.pmean(x, "i"), x)
        assert dist.all_gather(x, "i").shape == (1, 2, 3)
        assert dist.all_gather(x, "i", axis=2).shape == (2, 3, 1)
        assert dist.all_gather(x, "i", axis=1, tiled=True).shape == (2, 3)
        np.testing.assert_array_equal(dist.psum_scatter(x, "i", tiled=True), x)
        np.testing.assert_array_equal(dist.ppermute(x, "i", [(0, 0)]), x)
        np.testing.assert_array_equal(dist.ppermute(x, "i", []), np.zeros((2, 3)))
        assert int(dist.axis_index("i")) == 0 and dist.axis_size("i") == 1
        g = funcgrad.grad(lambda x: fnp.sum(dist.psum(x, "i") ** 2))(x)
        np.testing.assert_allclose(g, 2 * np.arange(6.0).reshape(2, 3))
    assert "i" not in dist.bound_axis_names()


def test_an_unbound_axis_name_says_how_to_bind_one():
    with pytest.raises(NameError, match="unbound axis name: batch. The following axis "
                       r"names \(e.g. defined by pmap\) are available") as e:
        dist.psum(fnp.ones(2), "batch")
    assert "funcgrad.distributed.initialize()" in str(e.value)
    with pytest.raises(NameError, match="unbound axis name"):
        funcgrad.grad(lambda x: fnp.sum(dist.pmean(x, "batch")))(fnp.ones(2))


def test_bad_arguments_are_errors_naming_them():
    with dist.bind_axis("i", dist.SelfTransport()):
        with pytest.raises(ValueError, match="tiled=True needs an operand with at least one"):
            dist.all_gather(fnp.asarray(1.0), "i", tiled=True)
        with pytest.raises(ValueError, match="axis 3 is out of bounds"):
            dist.all_gather(fnp.ones((2, 2)), "i", axis=3)
        with pytest.raises(ValueError, match="must be equal to 1"):
            dist.psum_scatter(fnp.ones(3), "i")
        with pytest.raises(ValueError, match="source 2 is not a rank of axis 'i'"):
            dist.pbroadcast(fnp.ones(3), "i", 2)
        with pytest.raises(ValueError, match="sources and destinations must be unique"):
            dist.ppermute(fnp.ones(3), "i", [(0, 0), (0, 0)])
        with pytest.raises(NotImplementedError, match="over several axes at once"):
            dist.all_gather(fnp.ones(3), ("i", "j"))
        with pytest.raises(TypeError, match="axis name must be hashable"):
            dist.psum(fnp.ones(3), ["i", ["j"]])
        with pytest.raises(ValueError, match="bucket_bytes must be positive"):
            dist.allreduce_gradients({"w": fnp.ones(2)}, "i", bucket_bytes=0)


class _TwoRanks(Transport):
    """Rank 0 of a pretend group of two whose other rank calls ``theirs``: enough to test
    the agreement step without MPI."""

    def __init__(self, theirs):
        super().__init__(0, 2)
        self.checks = True
        self.theirs = theirs

    def _allreduce(self, x, op):
        return np.maximum(x, np.concatenate([self.theirs, -self.theirs]))

    def _allgather(self, x):
        return np.stack([x, self.theirs])

    _reduce_scatter = _reduce = _broadcast = _gather = _scatter = _sendrecv = None
    _barrier = send = recv = split = None


def test_ranks_that_disagree_are_told_what_each_called():
    from funcgrad.primitives.kernels.collectives import _signature
    other = _signature("allgather", (2, 5), np.float32, 0)
    with pytest.raises(dist.CollectiveMismatchError) as e:
        _TwoRanks(other).allreduce(np.ones(3), "sum")
    message = str(e.value)
    assert "rank 0: allreduce(sum) on float64[3]" in message
    assert "rank 1: allgather() on float32[2, 5]" in message
    assert "same collectives in the same order" in message
    same = _signature("allreduce", (3,), np.float64, 0)
    _TwoRanks(same).agree("allreduce", (3,), np.float64, 0)  # agreement: no error


class _Counting(Transport):
    """Rank 0 of a pretend group of two that agrees with itself: counts agreements and
    reductions."""

    def __init__(self):
        super().__init__(0, 2)
        self.checks = True
        self.agreements = self.reductions = 0

    def _agreed(self, sig):
        self.agreements += 1
        return True

    def _allreduce(self, x, op):
        self.reductions += 1
        return x * 2

    _allgather = _reduce_scatter = _reduce = _broadcast = _gather = _scatter = None
    _sendrecv = _barrier = send = recv = split = None


def test_a_transports_allreducers_are_made_once_and_still_agree_on_every_call():
    """One function per (shape, dtype, op), remembered; every call through it agrees
    first. Changing ``checks`` forgets them (they were made for the other setting); an
    unknown op, or one the dtype has not, is an error on every call (after the agreement,
    so that ranks that disagree learn that first)."""
    t = _Counting()
    run = t.allreducer((3,), np.float64, "sum")
    assert t.allreducer([3], "float64", "sum") is run
    for k in range(1, 3):
        np.testing.assert_array_equal(t.allreduce(np.ones(3)), np.full(3, 2.0))
        assert (t.agreements, t.reductions) == (k, k)
    assert list(t.allreducers) == [((3,), np.dtype(np.float64), "sum")]
    t.checks = False
    assert t.allreducers == {}
    np.testing.assert_array_equal(t.allreduce(np.ones(3)), np.full(3, 2.0))
    assert (t.agreements, t.reductions) == (2, 3)
    t.checks = True
    for _ in range(2):
        with pytest.raises(ValueError, match="unknown reduction 'avg'"):
            t.allreduce(np.ones(3), "avg")
        with pytest.raises(TypeError, match="max reduction is not defined on complex"):
            t.allreduce(np.ones(3, complex), "max")
    assert (t.agreements, t.reductions) == (4, 3)


def test_an_eager_reduction_is_the_bound_primitives_result():
    """`AxisReduction.reduce` (what psum calls on an Array) gives bind's result: a new
    Array from the transport; a tracer, a vmap binding the name, or an implementation
    given by def_impl take bind's path."""
    from funcgrad.array import Array
    from funcgrad.primitives import collectives as C
    x = fnp.asarray(np.arange(3.0))
    with dist.bind_axis("i", _Counting()) as t:
        y = C.psum.reduce(x, "i")
        assert type(y) is Array and t.reductions == 1 and t.agreements == 1
        np.testing.assert_array_equal(y, 2 * np.arange(3.0))
        g = funcgrad.grad(lambda v: fnp.sum(dist.psum(v, "i")))(x)  # psum's VJP: psum
        np.testing.assert_array_equal(g, np.full(3, 2.0))
        np.testing.assert_array_equal(
            funcgrad.vmap(lambda v: dist.psum(v, "i"), axis_name="i")(x), np.full(3, 3.0))
        assert t.reductions == 3  # the vmap's psum reduced its own axis
        C.psum.def_impl("cpu", lambda v, axis_name: v + 100)
        try:
            np.testing.assert_array_equal(dist.psum(x, "i"), np.arange(3.0) + 100)
        finally:
            C.psum.def_impl("cpu", C.psum.kernel)
        assert C.psum.impl is C.psum.kernel and t.reductions == 3


def test_gradient_buckets_group_one_dtype_and_respect_the_size():
    leaves = [fnp.ones(10), fnp.ones(10), fnp.ones(3, dtype="float32"), fnp.ones(100),
              fnp.asarray([1, 2])]
    from funcgrad.distributed.data_parallel import buckets
    assert buckets(leaves, 200) == [[0, 1], [2], [3]]  # the int leaf is no gradient
    assert buckets(leaves, 1 << 20) == [[0, 1], [2], [3]]
    assert buckets(leaves, 8) == [[0], [1], [2], [3]]
    assert buckets(leaves, 8, floats_only=False)[-1] == [4]


# -- several processes ----------------------------------------------------------------------

@pytest.fixture(scope="module", params=[2, 4])
def collectives_run(request, tmp_path_factory):
    """The collectives job on n ranks (the jax.pmap reference computed alongside, when
    jax is installed): (n, our results, jax's results or None)."""
    if importlib.util.find_spec("mpi4py") is None:
        pytest.skip("needs mpi4py: pip install 'funcgrad[distributed]'")
    n, where = request.param, tmp_path_factory.mktemp(f"collectives{request.param}")
    reference = (start_jax_reference(n, where / "jax.npz")
                 if importlib.util.find_spec("jax") is not None else None)
    done, _ = launch("collectives_job.py", n, where / "ours.npz",
                     *(["--quick"] if n > 2 else []), timeout=240, check=False)
    if reference is not None:
        ref_out, _ = reference.communicate(timeout=240)
        assert reference.returncode == 0, ref_out[-4000:]
    assert done.returncode == 0, f"{done.stdout[-6000:]}\n{done.stderr[-6000:]}"
    assert f"collectives job passed on {n} ranks" in done.stdout
    return n, np.load(where / "ours.npz"), (np.load(where / "jax.npz") if reference
                                            else None)


def test_collectives_pass_their_checks_on_several_ranks(collectives_run):
    """The job's own assertions: shard_map derivatives against finite differences (on 2
    ranks; the 4-rank run, oversubscribed on small machines, skips those), pmax/pmin tie
    sharing, bucketed averaging and broadcast, data-parallel gradients equal to one
    process's, pmap, pytrees, and the errors every rank raises and survives."""
    n, ours, _ = collectives_run
    assert len({k.split("@")[0] for k in ours.files}) == 12 * 7


@needs_jax
def test_collectives_match_jax_pmap_rank_by_rank(collectives_run):
    """Every case's value, gradient, JVP and Hessian-vector product on every rank equals
    jax.pmap's over as many simulated devices; shard_map of the same program gives their
    sums (values, JVPs) and stacks (gradients)."""
    n, got, want = collectives_run
    for key in want.files:
        name, what = key.split("/")
        for r in range(n):
            np.testing.assert_allclose(got[f"{key}@{r}"], want[key][r], rtol=1e-10,
                                       atol=1e-12, err_msg=f"{key} on rank {r}")
        if what != "hvp":
            whole = want[key] if what == "grad" else want[key].sum(0)
            for r in range(n):
                np.testing.assert_allclose(got[f"{name}/shard_{what}@{r}"], whole,
                                           rtol=1e-10, atol=1e-12,
                                           err_msg=f"shard_map {key} on rank {r}")


@needs_mpi
@pytest.mark.parametrize("mode, words", [
    ("raise", ["rank 1 of 2 failed with ZeroDivisionError", "aborting all 2 ranks"]),
    ("raise_early", ["rank 1 of 2 failed with RuntimeError: rank 1 failed before"]),
    ("exit", ["rank 1 of 2 exited with status 3"]),
    ("skip", ["rank 0 of 2: allreduce on a group of 2 did not complete within 5 s"]),
])
def test_a_failing_rank_ends_the_job_promptly_naming_it(mode, words):
    """The job ends, with a line naming the failing rank (or the collective that did not
    complete), within 30 s of the moment rank 1 misbehaves (the watchdog's timeout is
    5 s). Measured from that moment, which the job prints: the start before it (two
    Pythons importing funcgrad) took up to a minute on a loaded machine. A job that hangs
    fails at the launch's timeout."""
    done, _ = launch("faults_job.py", 2, mode, launcher_args=["--timeout", "5"],
                     timeout=300, check=False)
    ended = time.time()
    output = done.stdout + done.stderr
    assert done.returncode != 0, output
    for w in words:
        assert w in output, output
    assert "should not get here" not in output
    failed = [float(line.split()[-1]) for line in done.stdout.splitlines()
              if line.startswith("FAILING AT ")]
    assert len(failed) == 1, output
    assert ended - failed[0] < 30, f"the job ended {ended - failed[0]:.1f} s after rank 1 " \
        f"failed\n{output}"


@needs_mpi
def test_the_launcher_sets_torchruns_environment(tmp_path):
    """-m runs a module as __main__ on every rank, with torchrun's variables set (the rank
    ones from mpiexec, whatever the environment said) and the arguments passed on."""
    module = tmp_path / "env_module.py"
    module.write_text(open(os.path.join(os.path.dirname(__file__), "distributed_jobs",
                                        "env_job.py")).read())
    done, _ = launch("env_module", 2, "a", "--b", launcher_args=["-m"], timeout=60,
                     env={"PYTHONPATH": f"{tmp_path}{os.pathsep}{os.getcwd()}", "RANK": "9"})
    lines = sorted(line for line in done.stdout.splitlines() if line.startswith("ENV"))
    assert lines == [f"ENV {r} 2 {r} 2 127.0.0.1 29500 ['a', '--b'] __main__"
                     for r in range(2)], done.stdout


def test_the_launcher_builds_an_mpiexec_command(capsys):
    from funcgrad.distributed import run
    assert run.main(["--nproc-per-node", "3", "--mpiexec", "/bin/true", "--dry-run",
                     "train.py", "--lr", "0.1"]) == 0
    cmd = capsys.readouterr().out.split()
    assert cmd[0] == "/bin/true" and cmd[cmd.index("-n") + 1] == "3"
    assert cmd[-4:] == ["funcgrad.distributed.worker", "train.py", "--lr", "0.1"]
    with pytest.raises(SystemExit, match="only --nnodes 1 is supported"):
        run.main(["--nnodes", "2", "--mpiexec", "/bin/true", "train.py"])
    with pytest.raises(SystemExit, match="-n must be at least 1"):
        run.main(["-n", "0", "--mpiexec", "/bin/true", "train.py"])


def test_the_launcher_gives_each_of_several_ranks_one_thread_as_torchrun(capsys):
    """Several ranks without OMP_NUM_THREADS get 1 each, with torchrun's warning; a value
    the user set, or a single rank, is left alone."""
    from funcgrad.distributed import run
    parse = run._parser().parse_args
    env = run.rank_environment(parse(["-n", "2", "train.py"]), {"PATH": "/bin"})
    assert env["OMP_NUM_THREADS"] == "1" and env["MASTER_PORT"] == "29500"
    assert ("Setting OMP_NUM_THREADS environment variable for each process to be 1 in "
            "default, to avoid your system being overloaded") in capsys.readouterr().err
    assert run.rank_environment(parse(["-n", "2", "train.py"]),
                                {"OMP_NUM_THREADS": "4"})["OMP_NUM_THREADS"] == "4"
    assert "OMP_NUM_THREADS" not in run.rank_environment(parse(["-n", "1", "train.py"]), {})
    assert capsys.readouterr().err == ""


@needs_mpi
def test_the_examples_run_under_the_launcher(tmp_path):
    """Each of examples/distributed (process groups, all_reduce, broadcast, scatter and
    gather, DDP, DistributedSampler, functional data parallelism, RPC) asserts its own
    results; one job on 3 ranks runs them all."""
    examples = sorted(f for f in os.listdir(os.path.join(os.path.dirname(
        os.path.dirname(os.path.abspath(__file__))), "examples", "distributed"))
        if f.endswith(".py"))
    assert len(examples) >= 7
    launch("examples_job.py", 3, tmp_path / "finished.txt", timeout=300)
    assert (tmp_path / "finished.txt").read_text().split() == examples


@needs_mpi
def test_the_distributed_benchmark_runs(monkeypatch):
    """Smoke run of benchmarks/distributed.py (tiny sizes, both parts in one 2-rank job):
    every implementation is measured and the report has its rows and the target line.
    Nothing is asserted on time."""
    sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
    from benchmarks import distributed as bench
    measured = bench.launch("both", 2, quick=True)
    rows = measured["allreduce"]
    assert {r["impl"] for r in rows} == {
        "mpi4py Allreduce", "mpi4py Allreduce + new buffer", "funcgrad psum",
        "funcgrad psum, no agreement", "torch.distributed.all_reduce"}
    assert {r["size"] for r in rows} == set(bench.QUICK_SIZES)
    assert all(r["median"] > 0 and r["ratio"] > 0 for r in rows)
    assert measured["ddp"]["ranks"] == 2 and measured["ddp"]["params"] > 0
    text = bench.report(rows, [measured["ddp"]])
    assert "Target: funcgrad psum at most 1.2x" in text
    assert text.count("\n| ") == 1 + len(rows) + 1 + 1  # two headers, their rows
