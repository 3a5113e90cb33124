"""Optimizers against PyTorch's update equations, written out in numpy."""
import numpy as np
import pytest

import funcgrad.torch as torch

G = [np.array([0.5, -1.0, 2.0]), np.array([0.1, 0.3, -0.2]), np.array([-1.0, 0.0, 0.7]),
     np.array([0.2, -0.4, 0.1])]
P0 = np.array([1.0, -2.0, 0.5])


def run(opt_cls, **kw):
    p = torch.tensor(P0, dtype=torch.float64, requires_grad=True)
    opt = opt_cls([p], **kw)
    for g in G:
        opt.zero_grad()
        (p * torch.tensor(g)).sum().backward()  # grad = g
        opt.step()
    return p.detach().numpy()


def sgd_reference(lr, momentum=0.0, dampening=0.0, weight_decay=0.0, nesterov=False,
                  maximize=False):
    p, buf = P0.copy(), None
    for g in G:
        g = -g if maximize else g.copy()
        if weight_decay:
            g = g + weight_decay * p
        if momentum:
            buf = g.copy() if buf is None else momentum * buf + (1 - dampening) * g
            g = g + momentum * buf if nesterov else buf
        p = p - lr * g
    return p


@pytest.mark.parametrize("kw", [dict(lr=0.1), dict(lr=0.1, momentum=0.9),
                                dict(lr=0.05, momentum=0.8, dampening=0.3),
                                dict(lr=0.1, momentum=0.9, nesterov=True),
                                dict(lr=0.1, momentum=0.5, weight_decay=0.01),
                                dict(lr=0.1, maximize=True)])
def test_sgd_equations(kw):
    np.testing.assert_allclose(run(torch.optim.SGD, **kw), sgd_reference(**kw), rtol=1e-12)


def adam_reference(lr=1e-3, betas=(0.9, 0.999), eps=1e-8, weight_decay=0.0, amsgrad=False,
                   decoupled=False):
    p = P0.copy()
    m, v, vmax = np.zeros(3), np.zeros(3), np.zeros(3)
    b1, b2 = betas
    for t, g in enumerate(G, start=1):
        if weight_decay:
            if decoupled:
                p = p * (1 - lr * weight_decay)
            else:
                g = g + weight_decay * p
        m = m + (1 - b1) * (g - m)
        v = b2 * v + (1 - b2) * g * g
        step_size = lr / (1 - b1 ** t)
        if amsgrad:
            vmax = np.maximum(vmax, v)
            denom = np.sqrt(vmax) / np.sqrt(1 - b2 ** t) + eps
        else:
            denom = np.sqrt(v) / np.sqrt(1 - b2 ** t) + eps
        p = p - step_size * m / denom
    return p


@pytest.mark.parametrize("kw", [dict(lr=0.1), dict(lr=0.05, betas=(0.8, 0.99), eps=1e-6),
                                dict(lr=0.1, weight_decay=0.1), dict(lr=0.1, amsgrad=True),
                                dict(lr=0.1, amsgrad=True, weight_decay=0.05)])
def test_adam_equations(kw):
    np.testing.assert_allclose(run(torch.optim.Adam, **kw), adam_reference(**kw), rtol=1e-12)


def test_adamw_decouples_weight_decay():
    np.testing.assert_allclose(run(torch.optim.AdamW, lr=0.1, weight_decay=0.1),
                               adam_reference(lr=0.1, weight_decay=0.1, decoupled=True),
                               rtol=1e-12)


def test_optimizer_api():
    a = torch.ones(2, requires_grad=True)
    b = torch.ones(2, requires_grad=True)
    opt = torch.optim.SGD([{"params": [a]}, {"params": [b], "lr": 0.5}], lr=0.1)
    assert [g["lr"] for g in opt.param_groups] == [0.1, 0.5]
    (a + b).sum().backward()
    opt.step()
    assert a.tolist() == pytest.approx([0.9, 0.9]) and b.tolist() == [0.5, 0.5]
    g = a.grad
    opt.zero_grad(set_to_none=False)
    assert a.grad is g and g.tolist() == [0.0, 0.0]
    opt.zero_grad()
    assert a.grad is None and b.grad is None
    with pytest.raises(ValueError, match="optimizer got an empty parameter list"):
        torch.optim.SGD([], lr=0.1)
    with pytest.raises(ValueError, match="can't optimize a non-leaf Tensor"):
        torch.optim.SGD([a * 2], lr=0.1)
    with pytest.raises(ValueError, match="Invalid learning rate: -1"):
        torch.optim.Adam([a], lr=-1)
    with pytest.raises(ValueError, match="Nesterov momentum requires a momentum and zero "
                                         "dampening"):
        torch.optim.SGD([a], lr=0.1, nesterov=True)
    assert repr(torch.optim.SGD([a], lr=0.1)).startswith("SGD (\nParameter Group 0\n"
                                                         "    dampening: 0\n")


def test_step_updates_parameters_in_place_and_state_dict():
    p = torch.ones(2, requires_grad=True)
    opt = torch.optim.Adam([p], lr=0.1)
    (p * 2).sum().backward()
    before = p
    opt.step()
    assert p is before and p._version == 1
    sd = opt.state_dict()
    assert sd["state"][0]["step"].item() == 1.0
    opt2 = torch.optim.Adam([torch.ones(2, requires_grad=True)], lr=0.5)
    opt2.load_state_dict(sd)
    assert opt2.param_groups[0]["lr"] == 0.1
