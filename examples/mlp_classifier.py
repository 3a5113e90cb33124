"""A multilayer perceptron classifier trained with stax and optimizers, as JAX's
examples/mnist_classifier.py does, on synthetic data: ten Gaussian clusters in 32
dimensions (so that it runs in seconds without downloading MNIST).

Only the imports differ from the JAX example: ``jax`` -> ``funcgrad``.

    python examples/mlp_classifier.py
"""
import itertools
import time

import numpy as np

import funcgrad.numpy as jnp
from funcgrad import grad, random
from funcgrad.example_libraries import optimizers, stax
from funcgrad.example_libraries.stax import Dense, LogSoftmax, Relu


def synthetic_data(rng, num_classes=10, dim=32, per_class=100, spread=0.6):
    """Train and test sets of points around ten random centres, one-hot labels."""
    centres = rng.normal(size=(num_classes, dim)) * spread

    def draw(n):
        labels = rng.randint(num_classes, size=n)
        points = centres[labels] + rng.normal(size=(n, dim))
        return points, np.eye(num_classes)[labels]
    return draw(num_classes * per_class), draw(num_classes * per_class // 2)


def loss(params, batch):
    inputs, targets = batch
    preds = predict(params, inputs)
    return -jnp.mean(jnp.sum(preds * targets, axis=1))


def accuracy(params, batch):
    inputs, targets = batch
    target_class = jnp.argmax(targets, axis=1)
    predicted_class = jnp.argmax(predict(params, inputs), axis=1)
    return float(jnp.mean(predicted_class == target_class))


init_random_params, predict = stax.serial(
    Dense(64), Relu,
    Dense(64), Relu,
    Dense(10), LogSoftmax)


def main(num_epochs=4, batch_size=100, step_size=0.01, seed=0, verbose=True):
    rng = random.PRNGKey(seed)
    (train_images, train_labels), test = synthetic_data(np.random.RandomState(seed))
    num_train = train_images.shape[0]
    num_batches = num_train // batch_size

    def data_stream():
        perm_rng = np.random.RandomState(seed)
        while True:
            perm = perm_rng.permutation(num_train)
            for i in range(num_batches):
                batch_idx = perm[i * batch_size:(i + 1) * batch_size]
                yield train_images[batch_idx], train_labels[batch_idx]
    batches = data_stream()

    opt_init, opt_update, get_params = optimizers.adam(step_size)

    def update(i, opt_state, batch):
        params = get_params(opt_state)
        return opt_update(i, grad(loss)(params, batch), opt_state)

    _, init_params = init_random_params(rng, (-1, train_images.shape[1]))
    opt_state = opt_init(init_params)
    itercount = itertools.count()
    for epoch in range(num_epochs):
        start_time = time.time()
        for _ in range(num_batches):
            opt_state = update(next(itercount), opt_state, next(batches))
        params = get_params(opt_state)
        train_acc = accuracy(params, (train_images, train_labels))
        test_acc = accuracy(params, test)
        if verbose:
            print(f"Epoch {epoch} in {time.time() - start_time:0.2f} sec")
            print(f"Training set accuracy {train_acc}")
            print(f"Test set accuracy {test_acc}")
    return {"train_accuracy": train_acc, "test_accuracy": test_acc,
            "loss": float(loss(params, test))}


if __name__ == "__main__":
    main()
