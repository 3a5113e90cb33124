"""nn.utils (weight norm in both forms, gradient clipping, vector conversion) and nn.init
completions against real PyTorch."""
import math
import warnings

import numpy as np
import pytest

RNG = np.random.RandomState(0)


def _copy(peer, real, ours):
    ours.load_state_dict({k: peer.ours.tensor(v.detach().numpy())
                          for k, v in real.state_dict().items()})


def _forward_backward(T, m, x):
    out = m(T.tensor(x))
    out.sum().backward()
    return out.detach().numpy()


@pytest.mark.parametrize("make,dim,shape", [
    (lambda T: T.nn.Linear(3, 4), 0, (2, 3)),
    (lambda T: T.nn.Conv2d(2, 3, 3), 1, (1, 2, 5, 5)),
    (lambda T: T.nn.Linear(3, 4), None, (2, 3)),
])
def test_weight_norm_hook_form(peer, make, dim, shape):
    x = RNG.uniform(-1, 1, shape).astype(np.float32)
    mods = []
    for T in (peer.real, peer.ours):
        with pytest.warns(FutureWarning, match="torch.nn.utils.weight_norm` is deprecated"):
            mods.append(T.nn.utils.weight_norm(make(T), dim=dim))
    real, ours = mods
    assert list(ours.state_dict()) == list(real.state_dict())
    _copy(peer, real, ours)
    a, b = _forward_backward(peer.real, real, x), _forward_backward(peer.ours, ours, x)
    np.testing.assert_allclose(b, a, rtol=1e-5, atol=1e-6)
    for name in ("weight_g", "weight_v"):
        np.testing.assert_allclose(getattr(ours, name).grad.numpy(),
                                   getattr(real, name).grad.numpy(), rtol=1e-5, atol=1e-6)
    assert ours.weight.grad_fn.name() == real.weight.grad_fn.name()
    for T, m in ((peer.real, real), (peer.ours, ours)):
        T.nn.utils.remove_weight_norm(m)
    assert list(ours.state_dict()) == list(real.state_dict())
    np.testing.assert_allclose(ours.weight.detach().numpy(), real.weight.detach().numpy(),
                               rtol=1e-6)
    peer.raises(lambda T: T.nn.utils.remove_weight_norm(T.nn.Linear(2, 2)))


def test_weight_norm_parametrization(peer):
    x = RNG.uniform(-1, 1, (2, 3)).astype(np.float32)
    real, ours = (T.nn.utils.parametrizations.weight_norm(T.nn.Linear(3, 4))
                  for T in (peer.real, peer.ours))
    assert repr(ours) == repr(real)
    assert list(ours.state_dict()) == list(real.state_dict())
    _copy(peer, real, ours)
    np.testing.assert_allclose(_forward_backward(peer.ours, ours, x),
                               _forward_backward(peer.real, real, x), rtol=1e-5, atol=1e-6)
    for i in (0, 1):
        g1 = getattr(real.parametrizations.weight, f"original{i}").grad.numpy()
        g2 = getattr(ours.parametrizations.weight, f"original{i}").grad.numpy()
        np.testing.assert_allclose(g2, g1, rtol=1e-5, atol=1e-6)
    for T, m in ((peer.real, real), (peer.ours, ours)):
        assert T.nn.utils.parametrize.is_parametrized(m, "weight")
        m.weight = T.ones(4, 3)  # through the right inverse
        np.testing.assert_allclose(m.weight.detach().numpy(), np.ones((4, 3)), rtol=1e-6)
        T.nn.utils.parametrize.remove_parametrizations(m, "weight")
    assert repr(ours) == repr(real) and type(ours).__name__ == "Linear"
    assert list(ours.state_dict()) == list(real.state_dict())


def test_clip_and_convert(peer):
    grads = [RNG.uniform(-3, 3, (3, 2)), RNG.uniform(-3, 3, (4,))]
    results = []
    for T in (peer.real, peer.ours):
        ps = [T.nn.Parameter(T.zeros(*g.shape, dtype=T.float64)) for g in grads]
        for p, g in zip(ps, grads):
            p.grad = T.tensor(g)
        total = T.nn.utils.get_total_norm([p.grad for p in ps], 3.0)
        norm = T.nn.utils.clip_grad_norm_(ps, 1.5, norm_type=3.0)
        T.nn.utils.clip_grads_with_norm_(ps, 0.5, total)
        T.nn.utils.clip_grad_value_(ps, 0.1)
        vec = T.nn.utils.parameters_to_vector(p.grad for p in ps)
        T.nn.utils.vector_to_parameters(vec * 2, ps)
        results.append([total.item(), norm.item(), vec.numpy(), ps[0].detach().numpy()])
    for a, b in zip(*results):
        np.testing.assert_allclose(b, a, rtol=1e-10)


def test_init_completions(peer):
    T = peer.ours
    for name in ("linear", "conv2d", "sigmoid", "tanh", "relu", "selu"):
        assert T.nn.init.calculate_gain(name) == peer.real.nn.init.calculate_gain(name)
    assert T.nn.init.calculate_gain("leaky_relu", 0.2) == \
        peer.real.nn.init.calculate_gain("leaky_relu", 0.2)
    for shape, groups in (((4, 2, 3, 3), 2), ((3, 3, 5), 1), ((2, 2, 3, 2, 3), 1)):
        ours, real = T.empty(*shape), peer.real.empty(*shape)
        T.nn.init.dirac_(ours, groups)
        peer.real.nn.init.dirac_(real, groups)
        np.testing.assert_array_equal(ours.numpy(), real.numpy())
    w = T.empty(3, 2, 2)
    T.nn.init.orthogonal_(w, gain=2.0)
    flat = w.numpy().reshape(3, 4)
    np.testing.assert_allclose(flat @ flat.T, 4 * np.eye(3), atol=1e-5)
    w = T.empty(10, 6)
    T.nn.init.sparse_(w, 0.25, std=0.5)
    assert ((w == 0).sum(0) == math.ceil(2.5)).all().item()
    w = T.empty(200, 300)
    T.nn.init.xavier_normal_(w)
    assert abs(w.std().item() - math.sqrt(2 / 500)) < 0.01 * math.sqrt(2 / 500) * 10
    for lib in (T, peer.real):
        with warnings.catch_warnings(record=True) as seen:
            warnings.simplefilter("always")
            lib.nn.init.kaiming_uniform(lib.empty(3, 3))
        assert str(seen[0].message) == ("`nn.init.kaiming_uniform` is now deprecated in "
                                        "favor of `nn.init.kaiming_uniform_`.")
    peer.raises(lambda T: T.nn.init.dirac_(T.empty(3, 3)))
    peer.raises(lambda T: T.nn.init.orthogonal_(T.empty(3)))
