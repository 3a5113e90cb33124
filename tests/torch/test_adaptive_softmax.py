"""nn.AdaptiveLogSoftmaxWithLoss against real PyTorch: with the same weights (state_dict
copied across), forward's output and loss, log_prob, predict, the gradients of the input
and every parameter, the repr and the error texts are PyTorch's."""
from __future__ import annotations

import numpy as np
import pytest

import funcgrad.torch as torch


def _pair(real, *args, **kwargs):
    """(facade module, real module) with the real one's weights."""
    real.manual_seed(0)
    theirs = real.nn.AdaptiveLogSoftmaxWithLoss(*args, **kwargs)
    ours = torch.nn.AdaptiveLogSoftmaxWithLoss(*args, **kwargs)
    ours.load_state_dict({k: torch.from_numpy(v.detach().numpy().copy())
                          for k, v in theirs.state_dict().items()})
    return ours, theirs


def _close(a, b):
    np.testing.assert_allclose(a.detach().numpy(), b.detach().numpy(), rtol=1e-5, atol=1e-6)


CASES = [((8, 20, [4, 10]), {}), ((8, 20, [4, 10, 15]), {"div_value": 2.0, "head_bias": True}),
         ((6, 12, [3]), {"div_value": 1.5})]


@pytest.mark.parametrize("args,kwargs", CASES)
@pytest.mark.parametrize("targets", [[0, 5, 19, 3, 11, 7, 2, 16], [1, 2, 3, 0, 1, 2, 3, 0],
                                     [11, 11, 11, 11, 11, 11, 11, 11]])
def test_forward_and_gradients(real, args, kwargs, targets):
    ours, theirs = _pair(real, *args, **kwargs)
    x = np.random.default_rng(1).standard_normal((8, args[0])).astype(np.float32)
    t = np.minimum(np.array(targets), args[1] - 1)
    results = []
    for T, module in ((torch, ours), (real, theirs)):
        xt = T.tensor(x, requires_grad=True)
        out = module(xt, T.tensor(t))
        (out.output * T.arange(8.0)).sum().add(out.loss).backward()
        results.append((out, xt.grad, {k: p.grad for k, p in module.named_parameters()}))
    (o1, g1, p1), (o2, g2, p2) = results
    assert type(o1).__name__ == "_ASMoutput" and o1._fields == ("output", "loss")
    _close(o1.output, o2.output)
    _close(o1.loss, o2.loss)
    _close(g1, g2)
    assert p1.keys() == p2.keys()
    for k in p1:
        if p2[k] is None:
            assert p1[k] is None or not p1[k].abs().sum().item(), k
        else:
            _close(p1[k], p2[k])


@pytest.mark.parametrize("args,kwargs", CASES)
def test_log_prob_and_predict(real, args, kwargs):
    ours, theirs = _pair(real, *args, **kwargs)
    x = 3 * np.random.default_rng(2).standard_normal((16, args[0])).astype(np.float32)
    _close(ours.log_prob(torch.tensor(x)), theirs.log_prob(real.tensor(x)))
    np.testing.assert_array_equal(ours.predict(torch.tensor(x)).numpy(),
                                  theirs.predict(real.tensor(x)).numpy())
    for rows in (x[:1], x[:0] + 0):  # all-shortlist / single row paths
        if len(rows):
            np.testing.assert_array_equal(ours.predict(torch.tensor(rows)).numpy(),
                                          theirs.predict(real.tensor(rows)).numpy())


def test_predict_paths(real):
    """Rows all in the shortlist, all in clusters, and mixed, by biasing the head."""
    ours, theirs = _pair(real, 4, 10, [3], head_bias=True)
    x = np.random.default_rng(3).standard_normal((6, 4)).astype(np.float32)
    for bias in ([9, 0, 0, 0], [0, 0, 0, 9], None):
        for module, T in ((ours, torch), (theirs, real)):
            if bias is not None:
                with T.no_grad():
                    module.head.bias.copy_(T.tensor(bias, dtype=T.float32))
        np.testing.assert_array_equal(ours.predict(torch.tensor(x)).numpy(),
                                      theirs.predict(real.tensor(x)).numpy())


def test_unbatched(real):
    ours, theirs = _pair(real, 5, 9, [2, 6])
    x = np.random.default_rng(4).standard_normal(5).astype(np.float32)
    a, b = ours(torch.tensor(x), torch.tensor(7)), theirs(real.tensor(x), real.tensor(7))
    assert a.output.shape == () == tuple(b.output.shape)
    _close(a.output, b.output)
    _close(a.loss, b.loss)


def test_structure_and_repr(real):
    ours, theirs = _pair(real, 16, 40, [5, 20], div_value=2.0, head_bias=True)
    assert repr(ours) == repr(theirs)
    assert list(ours.state_dict()) == list(theirs.state_dict())
    for name in ("cutoffs", "shortlist_size", "n_clusters", "head_size", "in_features",
                 "n_classes", "div_value", "head_bias"):
        assert getattr(ours, name) == getattr(theirs, name), name
    assert torch.nn.modules.adaptive.AdaptiveLogSoftmaxWithLoss is type(ours)


def _error(fn):
    with pytest.raises(Exception) as info:
        fn()
    return type(info.value), str(info.value)


@pytest.mark.parametrize("cutoffs", [[], [5, 3], [0, 3], [3, 10], [3, 3], [2.5]])
def test_constructor_errors(real, cutoffs):
    assert (_error(lambda: torch.nn.AdaptiveLogSoftmaxWithLoss(4, 10, cutoffs))
            == _error(lambda: real.nn.AdaptiveLogSoftmaxWithLoss(4, 10, cutoffs)))


@pytest.mark.parametrize("x_shape,target", [((3, 4), [1, 2]), ((4,), [1]), ((3, 4), 1),
                                            ((2, 4), [[1, 2]]), ((2, 4), [1, 12]),
                                            ((2, 4), [-1, 3])])
def test_forward_errors(real, x_shape, target):
    ours, theirs = _pair(real, 4, 10, [3, 6])
    x = np.zeros(x_shape, np.float32)
    assert (_error(lambda: ours(torch.tensor(x), torch.tensor(target)))
            == _error(lambda: theirs(real.tensor(x), real.tensor(target))))
