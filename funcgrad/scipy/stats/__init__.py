"""funcgrad.scipy.stats: differentiable densities, CDFs and quantiles of scipy.stats'
distributions, one module per distribution as in JAX (``stats.norm.logpdf(x, loc,
scale)``; ``import funcgrad.scipy.stats.norm as norm`` works too).

scipy's conventions: shape parameters first, then ``loc`` and ``scale`` (discrete
distributions: ``loc`` only); nan for invalid parameters, -inf log-densities and 0/1 CDFs
outside the support, with finite gradients there. Drawing samples is not differentiable:
use scipy.stats' ``rvs`` (or funcgrad.random) for that.

Continuous: norm, t, chi2, gamma, beta, expon, laplace, logistic, cauchy, uniform (logpdf,
pdf, cdf, logcdf, sf, logsf, ppf; isf for norm, t, expon, laplace, logistic, cauchy,
uniform), multivariate_normal and dirichlet (logpdf, pdf). Discrete: poisson, bernoulli,
binom (logpmf, pmf, cdf, logcdf, sf, logsf; bernoulli also ppf).
"""
from funcgrad.scipy.stats import (bernoulli, beta, binom, cauchy, chi2, dirichlet, expon,
                                  gamma, laplace, logistic, multivariate_normal, norm,
                                  poisson, t, uniform)

__all__ = ["bernoulli", "beta", "binom", "cauchy", "chi2", "dirichlet", "expon", "gamma",
           "laplace", "logistic", "multivariate_normal", "norm", "poisson", "t", "uniform"]
