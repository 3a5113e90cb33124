"""nn.SyncBatchNorm against real PyTorch on CPU: without torch.distributed initialised it is
BatchNorm (train and eval: outputs, gradients, running statistics), with it initialised a
training call raises PyTorch's error; checks, repr and convert_sync_batchnorm too."""
from __future__ import annotations

import importlib.util

import numpy as np
import pytest

import funcgrad.torch as torch


def _step(T, kwargs, shape, train):
    T.manual_seed(0)
    m = T.nn.SyncBatchNorm(shape[1], **kwargs)
    with T.no_grad():
        if m.weight is not None:
            m.weight.copy_(T.linspace(0.5, 1.5, shape[1]))
        if m.bias is not None:
            m.bias.copy_(T.linspace(-1, 1, shape[1]))
    m.train(train)
    x = T.tensor(np.random.default_rng(0).standard_normal(shape).astype(np.float32),
                 requires_grad=True)
    outs = [m(x), m(x * 2)]
    sum(o.sum() * (i + 1) + (o * o).sum() for i, o in enumerate(outs)).backward()
    return ([o.detach().numpy() for o in outs] + [x.grad.numpy()]
            + [v.numpy() for v in m.state_dict().values()], repr(m),
            type(outs[0].grad_fn).__name__)


@pytest.mark.parametrize("kwargs", [{}, {"momentum": None}, {"affine": False},
                                    {"track_running_stats": False}, {"bias": False},
                                    {"eps": 1e-3, "momentum": 0.3}])
@pytest.mark.parametrize("shape", [(4, 3), (4, 3, 5), (2, 3, 4, 5), (2, 3, 2, 3, 2)])
@pytest.mark.parametrize("train", [True, False])
def test_single_process_is_batch_norm(real, kwargs, shape, train):
    (ours, r1, n1), (theirs, r2, n2) = (_step(T, kwargs, shape, train) for T in (torch, real))
    assert (r1, n1) == (r2, n2)
    assert len(ours) == len(theirs)
    for a, b in zip(ours, theirs):
        np.testing.assert_allclose(a, b, rtol=1e-4, atol=1e-5)


def _error(fn):
    with pytest.raises(Exception) as info:
        fn()
    return type(info.value), str(info.value)


@pytest.mark.parametrize("shape", [(3,), (), (4, 0, 2)])
def test_input_errors(real, shape):
    assert (_error(lambda: torch.nn.SyncBatchNorm(3)(torch.zeros(shape)))
            == _error(lambda: real.nn.SyncBatchNorm(3)(real.zeros(shape))))


def test_convert_sync_batchnorm(real):
    reprs, states = [], []
    for T in (torch, real):
        T.manual_seed(0)
        bn = T.nn.BatchNorm2d(4, momentum=0.2)
        inner = T.nn.BatchNorm1d(3, affine=False)
        model = T.nn.Sequential(T.nn.Conv2d(2, 4, 3), bn, T.nn.Sequential(T.nn.ReLU(), inner))
        model[1].eval()
        converted = T.nn.SyncBatchNorm.convert_sync_batchnorm(model)
        assert converted is model
        assert type(model[1]) is T.nn.SyncBatchNorm and type(model[2][1]) is T.nn.SyncBatchNorm
        assert model[1].weight is bn.weight and model[1].bias is bn.bias
        assert model[1].running_mean is bn.running_mean
        assert not model[1].training and model[2][1].training
        assert model[2][1].weight is None
        reprs.append(repr(model))
        states.append(list(model.state_dict()))
        single = T.nn.SyncBatchNorm.convert_sync_batchnorm(T.nn.BatchNorm3d(2))
        reprs.append(repr(single))
    assert reprs[:2] == reprs[2:] and states[0] == states[1]


@pytest.mark.skipif(importlib.util.find_spec("mpi4py") is None,
                    reason="needs mpi4py: pip install 'funcgrad[distributed]'")
def test_initialised_distributed_training_on_cpu_raises(real, tmp_path):
    """One process, gloo: PyTorch refuses a CPU input in training, and runs in eval."""
    errors = []
    for T, name in ((torch, "fg"), (real, "pt")):
        T.distributed.init_process_group("gloo", init_method=f"file://{tmp_path}/{name}",
                                         rank=0, world_size=1)
        try:
            m = T.nn.SyncBatchNorm(3)
            errors.append(_error(lambda: m(T.ones(2, 3))))
            assert int(m.num_batches_tracked) == 1
            m.eval()
            assert tuple(m(T.ones(2, 3)).shape) == (2, 3)
        finally:
            T.distributed.destroy_process_group()
    assert errors[0] == errors[1]
