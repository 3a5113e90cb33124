"""asarray, frombuffer, empty_strided, fill, gradient, histogram, poisson, binomial,
torch.random, torch.version and the aliases, against PyTorch."""
from __future__ import annotations

import numpy as np
import pytest

import funcgrad.torch as F

PROGRAMS = {
    "gradient": lambda m, x: m.gradient(x),
    "gradient spacing": lambda m, x: m.gradient(x, spacing=2.0),
    "gradient dim edge_order": lambda m, x: m.gradient(m.stack([x, x * x]), dim=1,
                                                       edge_order=2),
    "gradient all dims": lambda m, x: m.gradient(m.stack([x, x * x])),
    "gradient coordinates": lambda m, x: m.gradient(x, spacing=(m.tensor(
        [0.0, 1.0, 3.0, 4.0], dtype=m.float64),)),
    "histogram bins": lambda m, x: m.histogram(x.detach(), bins=3),
    "histogram edges density": lambda m, x: m.histogram(x.detach(), bins=m.tensor(
        [0.0, 5.0, 20.0], dtype=m.float64), density=True),
    "histogram range weight": lambda m, x: m.histogram(x.detach(), 2, range=(0.0, 10.0),
                                                       weight=x.detach()),
    "asarray list": lambda m, x: (str(m.asarray([1, 2]).dtype), m.asarray([1, 2]).tolist()),
    "asarray same": lambda m, x: (m.asarray(x) is x, m.asarray(x, copy=True) is x,
                                  str(m.asarray(x, dtype=m.float32).dtype)),
    "frombuffer": lambda m, x: m.frombuffer(bytearray(b"\x01\x00\x00\x00\x02\x00\x00\x00"),
                                            dtype=m.int32).tolist(),
    "empty_strided": lambda m, x: m.empty_strided((2, 3), (1, 2)).stride(),
    "fill": lambda m, x: m.fill(x, 3.0),
    "poisson of zero": lambda m, x: m.poisson(m.zeros(3)).tolist(),
    "binomial of zero": lambda m, x: m.binomial(m.tensor([5.0]), m.tensor([0.0])).tolist(),
    "newaxis": lambda m, x: m.newaxis,
    "version": lambda m, x: (m.version.cuda, m.__version__.split("+")[0]),
}


def _outcome(m, program):
    x = m.tensor([1.0, 4.0, 9.0, 16.0], dtype=m.float64, requires_grad=True)
    out = program(m, x)
    grads = None
    if isinstance(out, tuple) and out and isinstance(out[0], m.Tensor) and out[0].requires_grad:
        sum(o.sum() for o in out).backward()
        grads = x.grad.numpy()
    elif isinstance(out, m.Tensor) and out.requires_grad:
        out.sum().backward()
        grads = x.grad.numpy()
    return _shown(m, out), None if grads is None else np.round(grads, 12).tolist()


def _shown(m, out):
    """The values (the node PyTorch's compositions end in may differ)."""
    if isinstance(out, m.Tensor):
        return repr(out.detach())
    if isinstance(out, tuple) and out and isinstance(out[0], m.Tensor):
        return type(out).__name__ + repr(tuple(o.detach() for o in out))
    return repr(out)


@pytest.mark.parametrize("name", sorted(PROGRAMS))
def test_matches_pytorch(real, name):
    assert _outcome(F, PROGRAMS[name]) == _outcome(real, PROGRAMS[name])


def test_fork_rng_restores_the_state_and_samplers_follow_their_laws():
    with F.random.fork_rng():
        a = F.rand(3)
    assert (a == F.rand(3)).all()
    F.manual_seed(0)
    draws = F.poisson(F.full((20000,), 3.0))
    assert abs(draws.mean().item() - 3.0) < 0.1 and abs(draws.var().item() - 3.0) < 0.2
    draws = F.binomial(F.full((20000,), 10.0), F.full((20000,), 0.3))
    assert abs(draws.mean().item() - 3.0) < 0.1 and draws.max().item() <= 10


def test_frombuffer_shares_the_buffer():
    buffer = bytearray(8)
    t = F.frombuffer(buffer, dtype=F.int32)
    t[1] = 7
    assert buffer[4] == 7
