"""Training an MLP end to end: two moons, made with numpy, to 100% training accuracy with
SGD (momentum) and with Adam."""

import numpy as np
import pytest

import funcgrad.torch as torch
import funcgrad.torch.nn as nn
import funcgrad.torch.nn.functional as F


def two_moons(n: int, noise: float, seed: int) -> tuple:
    rng = np.random.default_rng(seed)
    t = rng.uniform(0, np.pi, n)
    upper = np.stack([np.cos(t), np.sin(t)], 1)
    lower = np.stack([1 - np.cos(t), 0.5 - np.sin(t)], 1)
    X = np.concatenate([upper, lower]) + rng.normal(0, noise, (2 * n, 2))
    y = np.concatenate([np.zeros(n), np.ones(n)]).astype(np.int64)
    return torch.from_numpy(X.astype(np.float32)), torch.from_numpy(y)


class MLP(nn.Module):
    def __init__(self):
        super().__init__()
        self.net = nn.Sequential(nn.Linear(2, 16), nn.Tanh(), nn.Linear(16, 16), nn.ReLU(),
                                 nn.Linear(16, 2))

    def forward(self, x):
        return self.net(x)


@torch.no_grad()
def accuracy(model, X, y):
    model.eval()
    acc = (model(X).argmax(1) == y).float().mean().item()
    model.train()
    return acc


@pytest.mark.parametrize("make_opt", [
    lambda ps: torch.optim.SGD(ps, lr=0.1, momentum=0.9),
    lambda ps: torch.optim.Adam(ps, lr=0.01),
], ids=["sgd", "adam"])
def test_mlp_learns_two_moons(make_opt):
    X, y = two_moons(100, 0.1, seed=0)
    X_test, y_test = two_moons(100, 0.1, seed=1)
    torch.manual_seed(0)
    model = MLP()
    opt = make_opt(model.parameters())
    first = None
    for step in range(250):
        opt.zero_grad()
        loss = F.cross_entropy(model(X), y)
        loss.backward()
        nn.utils.clip_grad_norm_(model.parameters(), 5.0)
        opt.step()
        first = loss.item() if first is None else first
    assert loss.item() < 0.05 < first
    assert accuracy(model, X, y) == 1.0
    assert accuracy(model, X_test, y_test) >= 0.97


def test_minibatches_with_dropout_and_state_dict_reload():
    X, y = two_moons(64, 0.1, seed=2)
    torch.manual_seed(1)
    model = nn.Sequential(nn.Linear(2, 32), nn.ReLU(), nn.Dropout(0.1), nn.Linear(32, 2))
    opt = torch.optim.Adam(model.parameters(), lr=0.02)
    for epoch in range(60):
        perm = torch.randperm(128)
        for i in range(0, 128, 32):
            idx = perm[i:i + 32]
            opt.zero_grad()
            F.cross_entropy(model(X[idx]), y[idx]).backward()
            opt.step()
    model.eval()
    with torch.no_grad():
        acc = (model(X).argmax(1) == y).float().mean().item()
    assert acc >= 0.97
    clone = nn.Sequential(nn.Linear(2, 32), nn.ReLU(), nn.Dropout(0.1), nn.Linear(32, 2))
    clone.load_state_dict(model.state_dict())
    clone.eval()
    with torch.no_grad():
        assert torch.allclose(clone(X), model(X))


@pytest.mark.gpu
def test_mlp_trains_on_cuda():
    X, y = two_moons(100, 0.1, seed=0)
    X, y = X.cuda(), y.cuda()
    torch.manual_seed(0)
    model = nn.Sequential(nn.Linear(2, 16), nn.Tanh(), nn.Dropout(0.1), nn.Linear(16, 2)).cuda()
    assert all(p.is_cuda for p in model.parameters())
    opt = torch.optim.Adam(model.parameters(), lr=0.02)
    for _ in range(200):
        opt.zero_grad()
        loss = F.cross_entropy(model(X), y)
        loss.backward()
        opt.step()
    assert all(p.grad.is_cuda for p in model.parameters())
    assert accuracy(model, X, y) >= 0.97
