"""Differential tests against real PyTorch, run only where PyTorch is installed.

The same code runs on both libraries (``T`` is either module); reprs, node names, values
and gradients must agree.
"""
import numpy as np
import pytest

torch_real = pytest.importorskip("torch")
if not hasattr(torch_real, "tensor"):  # the tests/torch folder itself, seen as a namespace
    pytest.skip("PyTorch is not installed", allow_module_level=True)

import funcgrad.torch as fg  # noqa: E402

CASES = {
    "mul_mean": lambda T, x: (x * 2).mean(),
    "sum_log": lambda T, x: (x * x).sum().log(),
    "sigmoid": lambda T, x: T.sigmoid(x).sum(),
    "softmax": lambda T, x: T.nn.functional.softmax(x, 1)[:, 0].sum(),
    "cross_entropy": lambda T, x: T.nn.functional.cross_entropy(x, T.tensor([0, 1])),
    "matmul": lambda T, x: (x @ x.t()).tanh().sum(),
    "index": lambda T, x: x[0, 1:].exp().sum(),
    "max": lambda T, x: x.max(1).values.sum() + x.max(),
    "clamp_pow": lambda T, x: x.clamp(min=0.5).pow(3).sum(),
    "cat_view": lambda T, x: T.cat([x, x * 3], 0).view(-1).sum(),
}
VALUES = np.array([[0.5, 1.0, 2.0], [1.5, 0.25, 0.75]], dtype=np.float32)


@pytest.mark.parametrize("name", sorted(CASES))
def test_same_forward_backward_and_names(name):
    results = []
    for T in (torch_real, fg):
        x = T.tensor(VALUES.tolist(), requires_grad=True)
        out = CASES[name](T, x)
        out.backward()
        results.append((out.detach().numpy(), x.grad.numpy(), out.grad_fn.name(), repr(out)))
    (v1, g1, n1, r1), (v2, g2, n2, r2) = results
    np.testing.assert_allclose(v2, v1, rtol=1e-5)
    np.testing.assert_allclose(g2, g1, rtol=1e-5, atol=1e-6)
    assert n2 == n1
    assert r2 == r1


@pytest.mark.parametrize("opt", ["SGD", "Adam"])
def test_same_optimizer_trajectory(opt):
    kw = dict(lr=0.1, momentum=0.9, nesterov=True) if opt == "SGD" else dict(lr=0.1,
                                                                            amsgrad=True)
    params = []
    for T in (torch_real, fg):
        p = T.tensor([1.0, -2.0, 0.5], dtype=T.float64, requires_grad=True)
        o = getattr(T.optim, opt)([p], **kw)
        for k in range(5):
            o.zero_grad()
            ((p - k) ** 2).sum().backward()
            o.step()
        params.append(p.detach().numpy())
    np.testing.assert_allclose(params[1], params[0], rtol=1e-10)


def test_same_errors():
    for T in (torch_real, fg):
        x = T.tensor([1.0, 2.0], requires_grad=True)
        with pytest.raises(RuntimeError, match="grad can be implicitly created only for "
                                               "scalar outputs"):
            (x * 2).backward()
        y = x.exp()
        y.sum().backward()
        with pytest.raises(RuntimeError, match="Trying to backward through the graph a "
                                               "second time"):
            y.sum().backward()
