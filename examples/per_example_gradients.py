"""Per-example gradients with ``vmap(grad(loss))``, and differentially private SGD built on
them, as in JAX's cookbook ("per-example gradients") and its examples/differentially_private
_sgd.py: each example's gradient is clipped to a norm bound before the batch average, and
Gaussian noise is added, so no single example moves the parameters much.

Only the imports differ from the JAX code: ``jax`` -> ``funcgrad``. The data are two
Gaussian clusters (so that it runs in a second without downloads).

    python examples/per_example_gradients.py
"""
import numpy as np

import funcgrad.numpy as jnp
from funcgrad import grad, jit, random, tree_util, vmap


def init_params(key, sizes=(2, 16, 1)):
    keys = random.split(key, len(sizes) - 1)
    return [(random.normal(k, (m, n)) / jnp.sqrt(m), jnp.zeros(n))
            for k, m, n in zip(keys, sizes[:-1], sizes[1:])]


def predict(params, x):
    """The logit of one example (x of shape (2,))."""
    for w, b in params[:-1]:
        x = jnp.tanh(x @ w + b)
    w, b = params[-1]
    return (x @ w + b)[0]


def loss(params, x, y):
    """Logistic loss of one example, y in {0, 1}."""
    logit = predict(params, x)
    return jnp.logaddexp(0.0, logit) - y * logit


# one gradient per example: the gradient of the one-example loss, mapped over the batch
per_example_grads = jit(vmap(grad(loss), in_axes=(None, 0, 0)))


def clipped_noisy_mean(grads, key, l2_clip, noise_multiplier):
    """Each example's gradient scaled to norm at most l2_clip, averaged, plus noise."""
    leaves, tree = tree_util.tree_flatten(grads)
    norms = jnp.sqrt(sum(jnp.sum(jnp.reshape(g, (g.shape[0], -1)) ** 2, axis=1)
                         for g in leaves))
    scale = jnp.minimum(1.0, l2_clip / (norms + 1e-12))
    batch = leaves[0].shape[0]
    keys = random.split(key, len(leaves))
    noisy = [(jnp.sum(g * jnp.reshape(scale, (-1,) + (1,) * (g.ndim - 1)), axis=0)
              + l2_clip * noise_multiplier * random.normal(k, g.shape[1:])) / batch
             for g, k in zip(leaves, keys)]
    return tree.unflatten(noisy)


def data(rng, n):
    labels = rng.randint(2, size=n)
    points = rng.normal(size=(n, 2)) * 0.7 + np.where(labels[:, None] == 1, 1.2, -1.2)
    return jnp.asarray(points), jnp.asarray(labels.astype(np.float64))


def main(steps=40, batch=64, lr=0.5, l2_clip=1.0, noise_multiplier=0.3, verbose=True):
    rng = np.random.RandomState(0)
    key = random.PRNGKey(0)
    params = init_params(key)
    x, y = data(rng, batch)

    # the batched gradients are the per-example loop's, in one call
    batched = per_example_grads(params, x, y)
    looped = [grad(loss)(params, x[i], y[i]) for i in range(batch)]
    gap = max(float(jnp.max(jnp.abs(b[i] - tree_util.tree_leaves(looped[i])[j])))
              for j, b in enumerate(tree_util.tree_leaves(batched)) for i in range(batch))

    for _ in range(steps):
        key, k_noise = random.split(key)
        xb, yb = data(rng, batch)
        g = clipped_noisy_mean(per_example_grads(params, xb, yb), k_noise, l2_clip,
                               noise_multiplier)
        params = tree_util.tree_map(lambda p, d: p - lr * d, params, g)
    xt, yt = data(rng, 500)
    logits = vmap(predict, in_axes=(None, 0))(params, xt)
    accuracy = float(jnp.mean((logits > 0) == (yt > 0.5)))
    if verbose:
        print(f"per-example gradients: max difference to the loop {gap:.2e}")
        print(f"DP-SGD ({steps} steps, clip {l2_clip}, noise {noise_multiplier}): "
              f"test accuracy {accuracy:.3f}")
    return {"max_gap": gap, "accuracy": accuracy}


if __name__ == "__main__":
    main()
