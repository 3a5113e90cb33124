"""Per-rank programs with collectives, written once for funcgrad and for JAX.

Each case is ``(function of (ns, x) -> scalar, per-rank input shape)``; ``ns`` supplies the
array functions and the collectives over one axis (funcgrad.distributed over "world", or
jax.lax over the pmap axis). The job runs them on every rank; the JAX reference runs them
under ``jax.pmap`` over as many simulated devices; the test compares value, gradient, JVP
and Hessian-vector product rank by rank.
"""
import numpy as np


def cases(n):
    ring = tuple((r, (r + 1) % n) for r in range(n))
    return {
        "psum": (lambda ns, x: ns.sum(ns.sin(ns.psum(x * x)) * x), (3,)),
        "psum_scalar_out": (lambda ns, x: ns.psum(ns.sum(ns.tanh(x))) * ns.sum(x), (2, 2)),
        "pmean": (lambda ns, x: ns.sum(ns.pmean(ns.exp(x)) * x), (3,)),
        "all_gather": (lambda ns, x: ns.sum(ns.all_gather(x) ** 2 * ns.weights(n, 2)),
                       (2,)),
        "all_gather_axis1_tiled": (
            lambda ns, x: ns.sum(ns.cos(ns.all_gather(x, axis=1, tiled=True))
                                 * ns.weights(2, 3 * n)), (2, 3)),
        "psum_scatter_tiled": (
            lambda ns, x: ns.sum(ns.psum_scatter(x ** 3, tiled=True) * ns.sin(x[:2])),
            (2 * n,)),
        "psum_scatter_untiled": (
            lambda ns, x: ns.sum(ns.psum_scatter(ns.sin(x)) ** 2), (n, 3)),
        "ppermute_ring": (lambda ns, x: ns.sum(ns.ppermute(x, ring) * x ** 2), (3,)),
        "ppermute_partial": (lambda ns, x: ns.sum(ns.ppermute(ns.exp(x), ((0, 1),)) * x),
                             (3,)),
        "pbroadcast": (lambda ns, x: ns.sum(ns.pbroadcast(x, 1) * ns.sin(x)), (3,)),
        "axis_index": (lambda ns, x: ns.sum(x ** 2 * (ns.axis_index() + 1.0)), (3,)),
        "composed": (lambda ns, x: ns.sum(ns.psum(ns.all_gather(ns.tanh(x)) * ns.sum(x))),
                     (2,)),
    }


def inputs(n, shape, name):
    """Rank r's input is row r: the same on every process."""
    seed = sum(ord(c) for c in name)
    rng = np.random.RandomState(seed)
    return rng.uniform(-1.0, 1.0, (n,) + shape), rng.uniform(-1.0, 1.0, (n,) + shape)


def weights(xp, *shape):
    return xp.reshape(xp.arange(float(np.prod(shape))), shape) / 10.0
