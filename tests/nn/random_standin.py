"""A stand-in for funcgrad.random (built on branch h/random) with the part of JAX's API
that funcgrad.nn.initializers, stax and the examples use: PRNGKey/key, split, fold_in,
normal, uniform, truncated_normal, bernoulli, randint, permutation, categorical.

Keys are uint32 pairs as in JAX, but the numbers come from numpy's PCG64 seeded by the key:
they are NOT JAX's numbers. `install()` puts this module in place of funcgrad.random only
when the real one cannot be imported; tests that use it check statistics and
determinism, never exact draws.
"""
from __future__ import annotations

import sys
import types

import numpy as np

import funcgrad
import funcgrad.numpy as fnp


def _words(key):
    return [int(w) for w in np.asarray(fnp.asarray(key).to_numpy(), np.uint32).ravel()]


def _rng(key):
    return np.random.Generator(np.random.PCG64(np.random.SeedSequence(_words(key))))


def PRNGKey(seed):
    return fnp.asarray(np.array([0, int(seed) & 0xFFFFFFFF], np.uint32))


def split(key, num=2):
    words = _rng(key).integers(0, 2 ** 32, size=(num, 2), dtype=np.uint32)
    return fnp.asarray(words)


def fold_in(key, data):
    seed = np.random.SeedSequence(_words(key) + [int(data) & 0xFFFFFFFF])
    return fnp.asarray(np.random.Generator(np.random.PCG64(seed)).integers(
        0, 2 ** 32, size=2, dtype=np.uint32))


def normal(key, shape=(), dtype=np.float64):
    return fnp.asarray(_rng(key).standard_normal(tuple(shape)).astype(dtype))


def uniform(key, shape=(), dtype=np.float64, minval=0.0, maxval=1.0):
    return fnp.asarray(_rng(key).uniform(minval, maxval, tuple(shape)).astype(dtype))


def truncated_normal(key, lower, upper, shape=None, dtype=np.float64):
    import scipy.stats
    shape = () if shape is None else tuple(shape)
    u = _rng(key).uniform(size=shape)
    return fnp.asarray(scipy.stats.truncnorm.ppf(u, lower, upper).astype(dtype))


def bernoulli(key, p=0.5, shape=None):
    shape = np.shape(p) if shape is None else tuple(shape)
    return fnp.asarray(_rng(key).uniform(size=shape) < np.asarray(p))


def randint(key, shape, minval, maxval, dtype=np.int64):
    return fnp.asarray(_rng(key).integers(minval, maxval, tuple(shape)).astype(dtype))


def permutation(key, x):
    if isinstance(x, (int, np.integer)):
        return fnp.asarray(_rng(key).permutation(int(x)))
    return fnp.asarray(x)[fnp.asarray(_rng(key).permutation(len(x)))]


def categorical(key, logits, axis=-1, shape=None):
    logits = np.asarray(fnp.asarray(logits).to_numpy())
    g = -np.log(-np.log(_rng(key).uniform(size=logits.shape)))
    return fnp.asarray(np.argmax(logits + g, axis=axis))


key = PRNGKey


def install():
    """Make ``funcgrad.random`` importable: the real module if it exists, else this one.
    Returns the module in place."""
    try:
        from funcgrad import random  # noqa: F401  (the real one, once merged)
        return random
    except ImportError:
        pass
    module = types.ModuleType("funcgrad.random")
    module.__doc__ = __doc__
    for name in ("PRNGKey", "key", "split", "fold_in", "normal", "uniform",
                 "truncated_normal", "bernoulli", "randint", "permutation", "categorical"):
        setattr(module, name, globals()[name])
    module.IS_STANDIN = True
    sys.modules["funcgrad.random"] = module
    funcgrad.random = module
    return module
