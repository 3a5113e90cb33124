"""A variational autoencoder trained with stax and optimizers, as JAX's
examples/mnist_vae.py does, on synthetic binary 8x8 "images": noisy copies of six
prototype patterns (so that it runs in seconds without downloading MNIST).

The encoder outputs a mean and a (softplus) variance; the ELBO is a Bernoulli likelihood of
the decoded logits at a reparameterised sample, minus the Gaussian KL divergence. Only the
imports differ from the JAX example: ``jax`` -> ``funcgrad``.

    python examples/vae.py
"""
import numpy as np

import funcgrad.numpy as jnp
from funcgrad import grad, random
from funcgrad.example_libraries import optimizers, stax
from funcgrad.example_libraries.stax import Dense, FanOut, Relu, Softplus

IMAGE = 8 * 8


def gaussian_kl(mu, sigmasq):
    """KL divergence from a diagonal Gaussian to the standard normal."""
    return -0.5 * jnp.sum(1. + jnp.log(sigmasq) - mu**2. - sigmasq)


def gaussian_sample(rng, mu, sigmasq):
    """Sample a diagonal Gaussian (differentiable in mu and sigmasq)."""
    return mu + jnp.sqrt(sigmasq) * random.normal(rng, mu.shape)


def bernoulli_logpdf(logits, x):
    """Bernoulli log pdf of data x given logits."""
    return -jnp.sum(jnp.logaddexp(0., jnp.where(x, -1., 1.) * logits))


def elbo(rng, params, images):
    """Monte Carlo estimate of the negative evidence lower bound."""
    enc_params, dec_params = params
    mu_z, sigmasq_z = encode(enc_params, images)
    logits_x = decode(dec_params, gaussian_sample(rng, mu_z, sigmasq_z))
    return bernoulli_logpdf(logits_x, images) - gaussian_kl(mu_z, sigmasq_z)


def synthetic_images(rng, n, prototypes=6, flip=0.05):
    """Binary images: one of a few random patterns, each pixel flipped with prob. flip."""
    patterns = rng.uniform(size=(prototypes, IMAGE)) < 0.5
    picks = patterns[rng.randint(prototypes, size=n)]
    return (picks ^ (rng.uniform(size=picks.shape) < flip)).astype(np.float64)


encoder_init, encode = stax.serial(
    Dense(64), Relu, Dense(64), Relu,
    FanOut(2), stax.parallel(Dense(2), stax.serial(Dense(2), Softplus)),
)

decoder_init, decode = stax.serial(
    Dense(64), Relu, Dense(64), Relu, Dense(IMAGE),
)


def main(num_epochs=6, batch_size=32, step_size=0.003, seed=0, verbose=True):
    images = synthetic_images(np.random.RandomState(seed), 640 + 256)
    train_images, test_images = images[:640], images[640:]
    num_batches = train_images.shape[0] // batch_size

    enc_init_rng, dec_init_rng = random.split(random.PRNGKey(2))
    _, init_encoder_params = encoder_init(enc_init_rng, (batch_size, IMAGE))
    _, init_decoder_params = decoder_init(dec_init_rng, (batch_size, 2))
    init_params = init_encoder_params, init_decoder_params

    opt_init, opt_update, get_params = optimizers.momentum(step_size, mass=0.9)

    def run_epoch(rng, opt_state):
        for i in range(num_batches):
            elbo_rng = random.fold_in(rng, i)
            batch = train_images[i * batch_size:(i + 1) * batch_size]
            loss = lambda params: -elbo(elbo_rng, params, batch) / batch_size  # noqa: E731
            opt_state = opt_update(i, grad(loss)(get_params(opt_state)), opt_state)
        return opt_state

    def evaluate(opt_state):
        params = get_params(opt_state)
        return float(elbo(random.PRNGKey(5), params, test_images)) / test_images.shape[0]

    opt_state = opt_init(init_params)
    history = [evaluate(opt_state)]
    for epoch in range(num_epochs):
        opt_state = run_epoch(random.PRNGKey(epoch), opt_state)
        history.append(evaluate(opt_state))
        if verbose:
            print(f"epoch {epoch}: test ELBO per image {history[-1]:.3f}")
    return {"elbo_history": history}


if __name__ == "__main__":
    main()
