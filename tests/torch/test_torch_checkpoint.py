"""torch.utils.checkpoint on funcgrad.checkpoint: equal gradients (arguments and closure
parameters), less saved memory, dropout determinism, checkpoint_sequential."""
import numpy as np

import funcgrad.torch as torch
from funcgrad.torch import nn
from funcgrad.torch.autograd.graph import saved_bytes
from funcgrad.torch.utils.checkpoint import checkpoint, checkpoint_sequential


def _net(depth=8, width=64):
    torch.manual_seed(0)
    return nn.Sequential(*[m for _ in range(depth) for m in (nn.Linear(width, width), nn.Tanh())])


def test_gradients_equal_for_arguments_and_parameters():
    net = _net()
    x = torch.randn(16, 64, requires_grad=True)
    net(x).pow(2).sum().backward()
    ref_x, ref_p = x.grad.clone(), [p.grad.clone() for p in net.parameters()]
    x.grad = None
    net.zero_grad()
    out = checkpoint(net, x, use_reentrant=False)
    assert out.grad_fn.name() == "CheckpointFunctionBackward"
    out.pow(2).sum().backward()
    np.testing.assert_allclose(x.grad.numpy(), ref_x.numpy(), rtol=1e-5, atol=1e-6)
    for p, r in zip(net.parameters(), ref_p):
        np.testing.assert_allclose(p.grad.numpy(), r.numpy(), rtol=1e-5, atol=1e-6)


def test_checkpoint_saves_less_for_backward():
    net = _net(depth=16)
    x = torch.randn(512, 64, requires_grad=True)  # activations outweigh the parameters
    plain = saved_bytes(net(x).sum())
    whole = saved_bytes(checkpoint(net, x).sum())  # the input and the parameters only
    params = sum(p.numel() * 4 for p in net.parameters())
    assert whole == x.numel() * 4 + params
    assert whole < plain / 5, (whole, plain)
    # 4 segments, the last one not checkpointed (as in PyTorch): about half
    sequential = saved_bytes(checkpoint_sequential(net, 4, x).sum())
    assert sequential < 0.6 * plain, (sequential, plain)


def test_dropout_sees_the_same_random_values():
    torch.manual_seed(1)
    x = torch.ones(1000, requires_grad=True)
    f = lambda t: torch.nn.functional.dropout(t * 2, p=0.5, training=True)
    out_ckpt = checkpoint(f, x)
    torch.manual_seed(1)
    out_plain = f(x)
    np.testing.assert_array_equal(out_ckpt.detach().numpy(), out_plain.detach().numpy())
    out_ckpt.sum().backward()
    np.testing.assert_array_equal(x.grad.numpy(), (out_plain.detach().numpy() != 0) * 4.0)


def test_checkpoint_sequential_matches_plain_and_double_backward():
    net = _net(depth=5, width=4)
    x = torch.randn(3, 4, requires_grad=True)
    np.testing.assert_allclose(checkpoint_sequential(net, 2, x).detach().numpy(),
                               net(x).detach().numpy(), rtol=1e-6)
    y = checkpoint(lambda t: (t ** 3).sum(), x)
    (g,) = torch.autograd.grad(y, x, create_graph=True)
    (gg,) = torch.autograd.grad(g.sum(), x)
    np.testing.assert_allclose(gg.numpy(), 6 * x.detach().numpy(), rtol=1e-5)
