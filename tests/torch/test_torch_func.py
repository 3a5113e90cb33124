"""torch.func: funcgrad's transforms applied to facade code."""
import numpy as np
import pytest

import funcgrad.torch as torch
import funcgrad.torch.nn as nn
import funcgrad.torch.nn.functional as F
from funcgrad.torch.func import (functional_call, grad, grad_and_value, hessian, jacfwd,
                                 jacrev, jvp, vjp)


def test_grad_of_tensor_code():
    x = torch.tensor([1.0, 2.0, 3.0])
    g = grad(lambda t: (t.sin() * t).sum())(x)
    np.testing.assert_allclose(g.numpy(), np.sin([1, 2, 3]) + np.array([1, 2, 3]) *
                               np.cos([1, 2, 3]), rtol=1e-6)
    assert isinstance(g, torch.Tensor) and not g.requires_grad
    gx, gy = grad(lambda a, b: (a * b).sum(), argnums=(0, 1))(x, x * 2)
    assert gx.tolist() == [2.0, 4.0, 6.0] and gy.tolist() == [1.0, 2.0, 3.0]
    g, value = grad_and_value(lambda t: (t ** 2).sum())(x)
    assert value.item() == 14.0 and g.tolist() == [2.0, 4.0, 6.0]


def test_grad_with_aux_and_nesting():
    x = torch.tensor(2.0)
    g, aux = grad(lambda t: (t ** 3, t * 10), has_aux=True)(x)
    assert g.item() == pytest.approx(12.0) and aux.item() == 20.0
    assert grad(grad(lambda t: t ** 3))(x).item() == pytest.approx(12.0)


def test_item_inside_a_transform_raises():
    with pytest.raises(TypeError, match="Cannot convert a traced Array"):
        grad(lambda t: t.sum().item())(torch.ones(2))


def test_vjp_jvp_jacobians():
    x = torch.tensor([1.0, 2.0])
    out, fn = vjp(lambda t: t ** 2, x)
    assert out.tolist() == [1.0, 4.0] and fn(torch.ones(2))[0].tolist() == [2.0, 4.0]
    out, tangent = jvp(lambda t: t ** 2, (x,), (torch.ones(2),))
    assert tangent.tolist() == [2.0, 4.0]
    J = jacrev(lambda t: t ** 2)(x)
    assert J.tolist() == [[2.0, 0.0], [0.0, 4.0]]
    assert jacfwd(lambda t: t ** 2)(x).tolist() == J.tolist()
    H = hessian(lambda t: (t ** 3).sum())(x)
    assert H.tolist() == [[6.0, 0.0], [0.0, 12.0]]


def test_functional_call_makes_a_module_a_function_of_its_parameters():
    torch.manual_seed(0)
    model = nn.Sequential(nn.Linear(3, 4), nn.Tanh(), nn.Linear(4, 1))
    x = torch.randn(5, 3)
    params = {k: v.detach() for k, v in model.named_parameters()}

    def loss(p):
        return functional_call(model, p, (x,)).pow(2).mean()
    grads = grad(loss)(params)
    assert set(grads) == set(params)
    model(x).pow(2).mean().backward()
    for name, p in model.named_parameters():
        np.testing.assert_allclose(grads[name].numpy(), p.grad.numpy(), rtol=1e-5, atol=1e-7)
    # the module's own parameters are back in place afterwards
    assert all(isinstance(p, nn.Parameter) for p in model.parameters())
    zeros = {k: torch.zeros_like(v) for k, v in params.items()}
    assert functional_call(model, zeros, x).abs().sum().item() == 0.0


def test_per_example_gradients_by_looping_grad():
    torch.manual_seed(1)
    lin = nn.Linear(2, 1)
    params = {k: v.detach() for k, v in lin.named_parameters()}
    X, Y = torch.randn(3, 2), torch.randn(3, 1)

    def loss(p, x, y):
        return F.mse_loss(functional_call(lin, p, (x,)), y)
    per_example = [grad(loss)(params, X[i:i + 1], Y[i:i + 1]) for i in range(3)]
    mean_w = sum(g["weight"] for g in per_example) / 3
    full = grad(loss)(params, X, Y)
    np.testing.assert_allclose(mean_w.numpy(), full["weight"].numpy(), rtol=1e-5)


def test_per_sample_gradients_keep_the_parameters_order_as_pytorchs_tutorial_zips_them():
    """PyTorch's per-sample-gradients tutorial: vmap(grad(loss)) over functional_call of a
    small CNN, the result zipped with the gradients of a loop over the samples. Dicts
    keep their insertion order (PyTorch's pytrees), not funcgrad's sorted keys."""
    from funcgrad.torch.func import functional_call, grad as fgrad, vmap as fvmap
    nn, F = torch.nn, torch.nn.functional

    class SimpleCNN(nn.Module):
        def __init__(self):
            super().__init__()
            self.conv1, self.conv2 = nn.Conv2d(1, 4, 3), nn.Conv2d(4, 8, 3)
            self.fc = nn.Linear(8 * 4 * 4, 10)

        def forward(self, x):
            x = F.max_pool2d(F.relu(self.conv2(F.relu(self.conv1(x)))), 2)
            return F.log_softmax(self.fc(torch.flatten(x, 1)), dim=1)
    torch.manual_seed(0)
    model = SimpleCNN()
    data, targets = torch.randn(3, 1, 12, 12), torch.tensor([1, 7, 3])
    params = {k: v.detach() for k, v in model.named_parameters()}
    buffers = {k: v.detach() for k, v in model.named_buffers()}

    def loss(p, b, sample, target):
        out = functional_call(model, (p, b), (sample.unsqueeze(0),))
        return F.nll_loss(out, target.unsqueeze(0))
    per_sample = fvmap(fgrad(loss), in_dims=(None, None, 0, 0))(params, buffers, data, targets)
    assert list(per_sample) == [k for k, _ in model.named_parameters()]
    looped = []
    for i in range(3):
        model.zero_grad()
        F.nll_loss(model(data[i:i + 1]), targets[i:i + 1]).backward()
        looped.append([p.grad.clone() for p in model.parameters()])
    for k, (name, ft_grad) in enumerate(per_sample.items()):
        expected = torch.stack([row[k] for row in looped])
        assert ft_grad.shape == expected.shape, name
        assert torch.allclose(ft_grad, expected, atol=1e-6), name


def test_vmap_over_stacked_parameters_is_differentiable_by_the_outer_autograd():
    import copy
    from funcgrad.torch.func import functional_call, stack_module_state, vmap as fvmap
    models = [torch.nn.Linear(3, 2) for _ in range(4)]
    params, buffers = stack_module_state(models)
    base = copy.deepcopy(models[0]).to("meta")
    x = torch.randn(5, 3)
    out = fvmap(lambda p, b, x: functional_call(base, (p, b), (x,)),
                in_dims=(0, 0, None))(params, buffers, x)
    assert out.shape == (4, 5, 2) and out.requires_grad and out.grad_fn is not None
    out.sum().backward()
    for m in models:
        m(x).sum().backward()
    assert torch.allclose(params["weight"].grad, torch.stack([m.weight.grad for m in models]))
    assert torch.allclose(params["bias"].grad, torch.stack([m.bias.grad for m in models]))
