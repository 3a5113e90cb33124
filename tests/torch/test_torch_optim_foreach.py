"""The optimizers' fused update (the default, PyTorch's foreach path) against their
per-tensor path (``foreach=False``): the same bits, state and versions, for every option
of SGD, Adam and AdamW; and against PyTorch itself."""
import warnings

import numpy as np
import pytest

import funcgrad.torch as torch
import funcgrad.torch.nn as nn
import funcgrad.torch.nn.functional as F

X = np.random.RandomState(0).randn(8, 4).astype(np.float32)
Y = np.array([0, 1, 2, 1, 0, 2, 2, 1])

OPTIONS = {
    "sgd": ("SGD", dict(lr=0.1)),
    "sgd momentum dampening maximize": ("SGD", dict(lr=0.1, momentum=0.9, dampening=0.2,
                                                    maximize=True)),
    "sgd nesterov weight decay": ("SGD", dict(lr=0.1, momentum=0.9, nesterov=True,
                                              weight_decay=0.01)),
    "adam": ("Adam", dict(lr=0.01)),
    "adam weight decay amsgrad maximize": ("Adam", dict(lr=0.01, weight_decay=0.1,
                                                        amsgrad=True, maximize=True)),
    "adamw": ("AdamW", dict(lr=0.01)),
    "adamw amsgrad": ("AdamW", dict(lr=0.01, amsgrad=True, weight_decay=0.3,
                                    betas=(0.8, 0.9))),
}


def _train(m, name, steps=4, **extra):
    cls, options = OPTIONS[name]
    m.manual_seed(0)
    model = m.nn.Sequential(m.nn.Linear(4, 6), m.nn.ReLU(), m.nn.Linear(6, 3))
    if m is not torch:  # the same start as funcgrad's
        ours = _train(torch, name, steps=0)[0]
        with m.no_grad():
            for p, q in zip(model.parameters(), ours):
                p.copy_(m.tensor(q.numpy()))
    opt = getattr(m.optim, cls)(model.parameters(), **options, **extra)
    x, y = m.tensor(X), m.tensor(Y)
    for _ in range(steps):
        opt.zero_grad()
        m.nn.functional.cross_entropy(model(x), y).backward()
        opt.step()
    params = [p.detach().clone() for p in model.parameters()]
    state = [v.clone() for p in model.parameters() for v in opt.state[p].values()]
    versions = [t._version for p in model.parameters() for t in [p, *opt.state[p].values()]]
    return params, state, versions


@pytest.mark.parametrize("name", list(OPTIONS))
def test_fused_update_is_the_per_tensor_update_bit_for_bit(name):
    fused, single = _train(torch, name), _train(torch, name, foreach=False)
    for a, b in zip(fused[0] + fused[1], single[0] + single[1]):
        assert a.dtype == b.dtype and torch.equal(a, b)
    assert len(fused[1]) == len(single[1]) and fused[2] == single[2]


@pytest.mark.parametrize("name", list(OPTIONS))
def test_fused_update_matches_pytorch(name):
    real = pytest.importorskip("torch")
    ours, theirs = _train(torch, name), _train(real, name)
    for a, b in zip(ours[0] + ours[1], theirs[0] + theirs[1]):
        np.testing.assert_allclose(a.numpy(), b.numpy(), rtol=1e-5, atol=1e-6)


def test_fused_update_writes_in_place_and_refuses_nothing_it_cannot_write():
    """Parameters keep their memory (views see the update); a read-only parameter falls
    back to the per-tensor path, which raises its error."""
    lin = nn.Linear(3, 2)
    alias = lin.weight.detach().numpy()
    opt = torch.optim.SGD(lin.parameters(), lr=0.5, momentum=0.9)
    for _ in range(2):
        opt.zero_grad()
        F.mse_loss(lin(torch.ones(4, 3)), torch.zeros(4, 2)).backward()
        opt.step()
    np.testing.assert_array_equal(alias, lin.weight.detach().numpy())
    frozen = np.ones(3, np.float32)
    frozen.flags.writeable = False
    with warnings.catch_warnings():  # PyTorch's read-only warning (once per process)
        warnings.simplefilter("ignore", UserWarning)
        w = torch.from_numpy(frozen).requires_grad_()
    opt = torch.optim.SGD([w], lr=0.1)
    (w * 2).sum().backward()
    with pytest.raises(ValueError, match="read-only"):
        opt.step()
