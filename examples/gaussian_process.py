"""Gaussian process regression with learned hyperparameters, as JAX's
examples/gaussian_process_regression.py does: a squared-exponential kernel, the marginal
likelihood through the Cholesky factor (cho_factor, cho_solve, solve_triangular), its
gradient with respect to the log-hyperparameters, and the posterior mean and variance.

The hyperparameters are fitted twice: by the example's RMSProp-with-momentum loop, and by
funcgrad.scipy.optimize.minimize (BFGS). The kernel matrix is built by broadcasting (JAX's
version uses vmap), and the log-normal prior on the amplitude is added to the log marginal
likelihood (JAX's example subtracts it).

    python examples/gaussian_process.py
"""
import numpy as np

import funcgrad.numpy as jnp
from funcgrad import grad, random, scipy


def softplus(x):
    return jnp.logaddexp(x, 0.)


def sq_exp_cov(x1, x2):
    """exp(-|x1 - x2|^2) between the rows of x1 and x2."""
    return jnp.exp(-jnp.sum((x1[:, None, :] - x2[None, :, :]) ** 2, axis=-1))


def gp(params, x, y, xtest=None, compute_marginal_likelihood=False):
    noise = softplus(params['noise'])
    amp = softplus(params['amplitude'])
    ls = softplus(params['lengthscale'])
    numpts = x.shape[0]
    ymean = jnp.mean(y)
    y = y - ymean
    x = x / ls
    train_cov = amp * sq_exp_cov(x, x) + jnp.eye(numpts) * (noise + 1e-6)
    factor = scipy.linalg.cho_factor(train_cov, lower=True)
    kinvy = scipy.linalg.cho_solve(factor, y)
    if compute_marginal_likelihood:
        log2pi = jnp.log(2. * jnp.pi)
        ml = jnp.sum(-0.5 * jnp.dot(y.T, kinvy) - jnp.sum(jnp.log(jnp.diag(factor[0])))
                     - (numpts / 2.) * log2pi)
        # a log-normal prior on the amplitude (JAX's example subtracts it, which leaves
        # the objective unbounded below as amp grows: BFGS finds that)
        ml += jnp.sum(-0.5 * jnp.log(2 * jnp.pi) - jnp.log(amp) - 0.5 * jnp.log(amp) ** 2)
        return -ml
    xtest = xtest / ls
    cross_cov = amp * sq_exp_cov(x, xtest)
    mu = jnp.dot(cross_cov.T, kinvy) + ymean
    v = scipy.linalg.solve_triangular(factor[0], cross_cov, lower=True)
    var = amp * sq_exp_cov(xtest, xtest) - jnp.dot(v.T, v)
    return mu, var


def marginal_likelihood(params, x, y):
    return gp(params, x, y, compute_marginal_likelihood=True)


def predict(params, x, y, xtest):
    return gp(params, x, y, xtest)


NAMES = ("amplitude", "noise", "lengthscale")


def main(numpts=7, steps=300, lr=0.01, verbose=True):
    key = random.PRNGKey(0)
    x = random.uniform(key, shape=(numpts, 1)) * 4. + 1
    y = jnp.sin(x) + 0.1 * random.normal(random.fold_in(key, 1), shape=(numpts, 1))
    xtest = jnp.linspace(0, 6., 200)[:, None]

    params = {"amplitude": jnp.zeros((1, 1)), "noise": jnp.zeros((1, 1)) - 5.,
              "lengthscale": jnp.zeros((1, 1))}
    momentums = {k: p * 0. for k, p in params.items()}
    scales = {k: p * 0. + 1. for k, p in params.items()}
    grad_fun = grad(marginal_likelihood)
    initial = float(marginal_likelihood(params, x, y))
    for i in range(steps):
        grads = grad_fun(params, x, y)
        for k in params:
            momentums[k] = 0.9 * momentums[k] + 0.1 * grads[k][0]
            scales[k] = 0.9 * scales[k] + 0.1 * grads[k][0] ** 2
            params[k] = params[k] - lr * momentums[k] / jnp.sqrt(scales[k] + 1e-5)
        if verbose and i % 50 == 0:
            print(f"Step: {i}, neg marginal likelihood: "
                  f"{float(marginal_likelihood(params, x, y)):.4f}")

    def flat_objective(theta, x, y):
        return marginal_likelihood({k: jnp.reshape(theta[j], (1, 1))
                                    for j, k in enumerate(NAMES)}, x, y)
    start = jnp.asarray([float(params[k][0, 0]) for k in NAMES])
    fitted = scipy.optimize.minimize(flat_objective, start, (x, y), method="BFGS")
    best = {k: jnp.reshape(fitted.x[j], (1, 1)) for j, k in enumerate(NAMES)}
    mu, var = predict(best, x, y, xtest)
    std = jnp.sqrt(jnp.diag(var))
    if verbose:
        print(f"BFGS: neg marginal likelihood {float(fitted.fun):.4f} after {int(fitted.nit)} "
              f"iterations, converged: {bool(fitted.success)}")
    return {"initial": initial, "rmsprop": float(marginal_likelihood(params, x, y)),
            "bfgs": float(fitted.fun), "converged": bool(fitted.success), "x": x, "y": y,
            "xtest": xtest, "mu": mu, "std": std, "params": best}


if __name__ == "__main__":
    main()
