"""funcgrad.torch.distributed, DistributedDataParallel and DistributedSampler.

The collectives, RPC and DDP run in MPI jobs (python -m funcgrad.distributed.run, bounded by
timeouts) that assert PyTorch's semantics and error texts; DDP's trained parameters are
also compared with PyTorch training the same model on the whole batch. The sampler is
compared with PyTorch's own. Multi-process tests are skipped only without mpi4py.
"""
import importlib.util
import os
import sys

import numpy as np
import pytest

import funcgrad.torch as fg
import funcgrad.torch.distributed as fdist
from funcgrad.torch.utils.data.distributed import DistributedSampler

JOBS = os.path.join(os.path.dirname(os.path.dirname(__file__)), "distributed_jobs")
sys.path.insert(0, JOBS)
from harness import launch  # noqa: E402

needs_mpi = pytest.mark.skipif(importlib.util.find_spec("mpi4py") is None,
                               reason="needs mpi4py: pip install 'funcgrad[distributed]'")


def _real_torch():
    torch = pytest.importorskip("torch")
    if not hasattr(torch, "tensor"):  # the tests/torch folder itself, seen as a namespace
        pytest.skip("PyTorch is not installed")
    return torch


def test_using_a_group_before_init_process_group_says_how_to_initialise():
    text = ("Default process group has not been initialized, please make sure to call "
            "init_process_group.")
    assert not fdist.is_initialized()
    for call in (lambda: fdist.all_reduce(fg.ones(2)), fdist.get_rank, fdist.get_world_size,
                 fdist.barrier, lambda: fdist.new_group([0]),
                 lambda: fdist.broadcast(fg.ones(1), src=0),
                 lambda: DistributedSampler(range(4)),
                 lambda: fg.nn.parallel.DistributedDataParallel(fg.nn.Linear(2, 2))):
        with pytest.raises(ValueError) as e:
            call()
        assert str(e.value) == text
    with pytest.raises(AssertionError, match="Process group cannot be None"):
        fdist.destroy_process_group()


def test_backends_and_reduce_ops_spell_like_pytorch():
    assert fdist.Backend("GLOO") == "gloo" and fdist.Backend.MPI == "mpi"
    assert repr(fdist.ReduceOp.AVG) == "<RedOpType.AVG: 1>"
    assert str(fdist.ReduceOp.MAX) == "RedOpType.MAX"
    assert fdist.is_available() == (importlib.util.find_spec("mpi4py") is not None)
    assert not fdist.is_nccl_available()
    with pytest.raises(RuntimeError, match="Distributed package doesn't have NCCL built in"):
        fdist.init_process_group("nccl")
    with pytest.raises(AssertionError, match="Unknown backend type foo"):
        fdist.init_process_group("foo")


@pytest.mark.parametrize("size, replicas, drop_last", [
    (10, 3, False), (10, 3, True), (12, 4, False), (12, 4, True), (2, 5, False),
    (7, 7, True), (1, 2, False)])
def test_distributed_sampler_matches_pytorchs(size, replicas, drop_last):
    torch = _real_torch()
    from torch.utils.data.distributed import DistributedSampler as TorchSampler
    shares = []
    for rank in range(replicas):
        ours = DistributedSampler(range(size), replicas, rank, shuffle=False,
                                  drop_last=drop_last)
        theirs = TorchSampler(range(size), replicas, rank, shuffle=False, drop_last=drop_last)
        assert list(ours) == list(theirs) and len(ours) == len(theirs)
        shares.append(list(ours))
    # shuffled: PyTorch's algorithm on the facade's permutation for seed + epoch
    for epoch in (0, 3):
        g = fg.Generator()
        g.manual_seed(7 + epoch)
        perm = fg.randperm(size, generator=g).tolist()
        total = len(shares[0]) * replicas
        padded = (perm * (total // size + 1))[:total] if not drop_last else perm[:total]
        for rank in range(replicas):
            s = DistributedSampler(range(size), replicas, rank, shuffle=True, seed=7,
                                   drop_last=drop_last)
            s.set_epoch(epoch)
            assert list(s) == padded[rank:total:replicas]
    with pytest.raises(ValueError, match=r"Invalid rank 3, rank should be in the interval "
                                         r"\[0, 2\]"):
        DistributedSampler(range(4), num_replicas=3, rank=3)
    del torch


@needs_mpi
@pytest.mark.parametrize("n", [2, 4])
def test_collectives_sync_async_groups_objects_and_errors(n):
    done, _ = launch("torch_collectives_job.py", n, timeout=240)
    assert f"torch collectives job passed on {n} ranks" in done.stdout


@needs_mpi
def test_rpc_calls_rrefs_errors_and_timeouts():
    done, _ = launch("rpc_job.py", 3, timeout=240)
    assert "rpc job passed on 3 ranks" in done.stdout


@pytest.fixture(scope="module")
def ddp_params(tmp_path_factory):
    """The DDP job on 2 ranks (it asserts equality with one process, no_sync,
    find_unused_parameters, PyTorch's errors and the sampler's partition); its trained
    parameters."""
    if importlib.util.find_spec("mpi4py") is None:
        pytest.skip("needs mpi4py: pip install 'funcgrad[distributed]'")
    out = tmp_path_factory.mktemp("ddp") / "ddp.npz"
    done, _ = launch("ddp_job.py", 2, out, timeout=240)
    assert "ddp job passed on 2 ranks" in done.stdout
    return np.load(out)


def test_ddp_trains_like_one_process(ddp_params):
    assert sorted(ddp_params.files) == ["module.0.bias", "module.0.weight", "module.2.bias",
                                        "module.2.weight"]


def test_ddp_trains_like_pytorch(ddp_params):
    """PyTorch training the same model on the whole batch reaches the same parameters."""
    torch = _real_torch()
    from ddp_common import GLOBAL_BATCH, data, model, train
    X, Y = data()
    theirs = train(torch, model(torch), X, Y, list(range(GLOBAL_BATCH)))
    for k, v in theirs.items():
        np.testing.assert_allclose(ddp_params["module." + k], v, rtol=2e-5, atol=2e-6,
                                   err_msg=k)
