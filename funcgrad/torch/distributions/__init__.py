"""``torch.distributions``: the common families (Normal, Uniform, Laplace, Exponential,
Bernoulli, Categorical, MultivariateNormal, Independent) with PyTorch's parameters,
shapes, validation texts, log densities, entropies, moments and reparameterized samples,
and ``kl_divergence`` between them."""
from funcgrad.torch.distributions import constraints
from funcgrad.torch.distributions.distribution import Distribution
from funcgrad.torch.distributions.families import (Bernoulli, Categorical, Exponential,
                                                   Independent, Laplace,
                                                   MultivariateNormal, Normal, Uniform)
from funcgrad.torch.distributions.kl import kl_divergence, register_kl

__all__ = ["constraints", "Distribution", "Bernoulli", "Categorical", "Exponential",
           "Independent", "Laplace", "MultivariateNormal", "Normal", "Uniform",
           "kl_divergence", "register_kl"]
