"""torch.distributions against PyTorch: log densities, cdf/icdf, entropies, moments, KL
divergences and their gradients to the parameters; validation errors; sample shapes and
statistics (the draws come from another generator, so they are compared in law)."""
from __future__ import annotations

import math

import numpy as np
import pytest

import funcgrad.torch as F

# name -> (build(m, params), value(m), params as numpy arrays)
FAMILIES = {
    "Normal": (lambda m, a, b: m.distributions.Normal(a, b.exp()),
               lambda m: m.tensor([[0.3, -1.2, 2.0]], dtype=m.float64)),
    "Laplace": (lambda m, a, b: m.distributions.Laplace(a, b.exp()),
                lambda m: m.tensor([[0.3, -1.2, 2.0]], dtype=m.float64)),
    "Uniform": (lambda m, a, b: m.distributions.Uniform(a - 3, a + b.exp() + 3),
                lambda m: m.tensor([[0.3, -1.2, 2.0]], dtype=m.float64)),
    "Exponential": (lambda m, a, b: m.distributions.Exponential(b.exp()),
                    lambda m: m.tensor([[0.3, 1.2, 2.0]], dtype=m.float64)),
    "Bernoulli(probs)": (lambda m, a, b: m.distributions.Bernoulli(probs=a.sigmoid()),
                         lambda m: m.tensor([[0.0, 1.0, 1.0]], dtype=m.float64)),
    "Bernoulli(logits)": (lambda m, a, b: m.distributions.Bernoulli(logits=a),
                          lambda m: m.tensor([[0.0, 1.0, 1.0]], dtype=m.float64)),
    "Categorical(probs)": (lambda m, a, b: m.distributions.Categorical(probs=b.exp()),
                           lambda m: m.tensor([2, 0])),
    "Categorical(logits)": (lambda m, a, b: m.distributions.Categorical(logits=a),
                            lambda m: m.tensor([2, 1])),
    "MultivariateNormal(cov)": (
        lambda m, a, b: m.distributions.MultivariateNormal(
            a, covariance_matrix=_spd(m, b)), lambda m: m.tensor(
                [[0.3, -1.2, 2.0], [0.0, 0.1, -0.5]], dtype=m.float64)),
    "MultivariateNormal(tril)": (
        lambda m, a, b: m.distributions.MultivariateNormal(
            a[0], scale_tril=m.linalg.cholesky(_spd(m, b))), lambda m: m.tensor(
                [0.3, -1.2, 2.0], dtype=m.float64)),
    "MultivariateNormal(precision)": (
        lambda m, a, b: m.distributions.MultivariateNormal(
            a[0], precision_matrix=_spd(m, b)), lambda m: m.tensor(
                [0.3, -1.2, 2.0], dtype=m.float64)),
    "Independent(Normal)": (
        lambda m, a, b: m.distributions.Independent(m.distributions.Normal(a, b.exp()), 1),
        lambda m: m.tensor([[0.3, -1.2, 2.0], [1.0, 0.0, 0.5]], dtype=m.float64)),
}


def _spd(m, b):
    lower = b.reshape(3, 1) * b.reshape(1, 3) * 0.1
    return lower + m.eye(3, dtype=m.float64) * 2


def _params(m):
    a = m.tensor([[0.5, -0.3, 1.1], [0.2, 0.7, -1.0]], dtype=m.float64, requires_grad=True)
    b = m.tensor([0.1, -0.4, 0.3], dtype=m.float64, requires_grad=True)
    return a, b


def _facts(m, name, method):
    build, value = FAMILIES[name]
    a, b = _params(m)
    dist = build(m, a, b)
    if method == "log_prob":
        out = dist.log_prob(value(m))
    elif method in ("cdf", "icdf"):
        out = getattr(dist, method)(value(m).sigmoid() if method == "icdf" else value(m))
    else:
        out = getattr(dist, method)
        out = out() if callable(out) else out
    out = out.to(m.float64)
    if out.requires_grad:
        (out * m.arange(1.0, out.numel() + 1, dtype=m.float64).reshape(out.shape)
         ).sum().backward()
    grads = [None if t.grad is None else t.grad.numpy() for t in (a, b)]
    return (out.detach().numpy(), grads, tuple(dist.batch_shape), tuple(dist.event_shape),
            repr(dist))


CASES = [(name, method) for name in FAMILIES
         for method in ("log_prob", "entropy", "mean", "variance", "stddev", "mode")] + [
    (name, method) for name in ("Normal", "Laplace", "Uniform", "Exponential")
    for method in ("cdf", "icdf")]


@pytest.mark.parametrize("name, method", CASES)
def test_family_matches_pytorch(real, name, method):
    try:
        theirs = _facts(real, name, method)
    except (NotImplementedError, AttributeError) as e:
        pytest.skip(f"PyTorch has no {method} for {name}: {e}")
    ours = _facts(F, name, method)
    assert ours[2:] == theirs[2:]
    np.testing.assert_allclose(ours[0], theirs[0], rtol=1e-10, atol=1e-12)
    for g, h in zip(ours[1], theirs[1]):
        assert (g is None) == (h is None)
        if g is not None:
            np.testing.assert_allclose(g, h, rtol=1e-9, atol=1e-12)


KL_PAIRS = ["Normal", "Laplace", "Exponential", "Bernoulli(logits)", "Categorical(logits)",
            "MultivariateNormal(cov)", "Independent(Normal)"]


@pytest.mark.parametrize("name", KL_PAIRS)
def test_kl_divergence_matches_pytorch(real, name):
    def kl(m):
        build, _ = FAMILIES[name]
        a, b = _params(m)
        p = build(m, a, b)
        q = build(m, (a * 0.5 + 0.1).detach(), (b * -0.7).detach())
        out = m.distributions.kl_divergence(p, q)
        out.sum().backward()
        return out.detach().numpy(), a.grad.numpy() if a.grad is not None else None
    (ours, ga), (theirs, gb) = kl(F), kl(real)
    np.testing.assert_allclose(ours, theirs, rtol=1e-10, atol=1e-12)
    if gb is not None:
        np.testing.assert_allclose(ga, gb, rtol=1e-9, atol=1e-12)


ERRORS = {
    "negative scale": lambda m: m.distributions.Normal(m.zeros(2), m.tensor([1.0, -1.0])),
    "outside the support": lambda m: m.distributions.Bernoulli(m.tensor([0.3, 0.6])).log_prob(
        m.tensor([0.5, 1.0])),
    "category out of range": lambda m: m.distributions.Categorical(
        m.tensor([0.3, 0.7])).log_prob(m.tensor(2)),
    "nan value": lambda m: m.distributions.Normal(0.0, 1.0).log_prob(m.tensor(math.nan)),
    "both parameterisations": lambda m: m.distributions.Bernoulli(0.3, 0.1),
    "event shape": lambda m: m.distributions.MultivariateNormal(
        m.zeros(2), m.eye(2)).log_prob(m.zeros(3)),
    "not broadcastable": lambda m: m.distributions.Normal(m.zeros(3), 1.0).log_prob(
        m.zeros(2)),
    "uniform bounds": lambda m: m.distributions.Uniform(1.0, 0.0),
    "no kl": lambda m: m.distributions.kl_divergence(m.distributions.Bernoulli(0.3),
                                                     m.distributions.Normal(0.0, 1.0)),
}


@pytest.mark.parametrize("name", sorted(ERRORS))
def test_errors_match_pytorch(real, name):
    raised = []
    for m in (F, real):
        with pytest.raises(Exception) as info:
            ERRORS[name](m)
        raised.append((type(info.value).__name__, str(info.value)))
    if name == "no kl":  # (the type only: PyTorch's text names its own lookup)
        raised = [r[0] for r in raised]
    assert raised[0] == raised[1]


@pytest.mark.parametrize("name, mean, var", [
    ("Normal", lambda d: d.mean, lambda d: d.variance),
    ("Laplace", lambda d: d.mean, lambda d: d.variance),
    ("Uniform", lambda d: d.mean, lambda d: d.variance),
    ("Exponential", lambda d: d.mean, lambda d: d.variance),
    ("Bernoulli(logits)", lambda d: d.mean, lambda d: d.variance),
    ("MultivariateNormal(cov)", lambda d: d.mean, lambda d: d.variance)])
def test_samples_follow_the_law(name, mean, var):
    F.manual_seed(0)
    a, b = _params(F)
    dist = FAMILIES[name][0](F, a, b)
    draws = dist.sample((20000,))
    assert tuple(draws.shape) == (20000,) + tuple(dist.batch_shape) + tuple(dist.event_shape)
    assert not draws.requires_grad
    np.testing.assert_allclose(draws.mean(0).numpy(), mean(dist).detach().numpy(),
                               atol=6 * math.sqrt(var(dist).max().item() / 20000))
    np.testing.assert_allclose(draws.var(0).numpy(), var(dist).detach().numpy(), rtol=0.1,
                               atol=0.01)


def test_categorical_samples_and_rsample_gradients():
    F.manual_seed(0)
    probs = F.tensor([0.1, 0.6, 0.3], dtype=F.float64)
    draws = F.distributions.Categorical(probs).sample((30000,))
    counts = np.bincount(draws.numpy(), minlength=3) / 30000
    np.testing.assert_allclose(counts, probs.numpy(), atol=0.015)
    loc = F.tensor([1.0, 2.0], requires_grad=True)
    F.distributions.Normal(loc, 0.5).rsample((4,)).sum().backward()
    assert loc.grad.tolist() == [4.0, 4.0]
