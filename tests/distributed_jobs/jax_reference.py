"""``python jax_reference.py N out.npz``: the cases under jax.pmap over N simulated CPU
devices (run with XLA_FLAGS=--xla_force_host_platform_device_count=N, JAX_ENABLE_X64=1)."""
import sys
import types

import jax
import jax.numpy as jnp
import numpy as np
from jax import lax

from cases import cases, inputs, weights


def namespace():
    ns = types.SimpleNamespace(sum=jnp.sum, sin=jnp.sin, cos=jnp.cos, exp=jnp.exp,
                               tanh=jnp.tanh)
    ns.psum = lambda x: lax.psum(x, "i")
    ns.pmean = lambda x: lax.pmean(x, "i")
    ns.all_gather = lambda x, axis=0, tiled=False: lax.all_gather(x, "i", axis=axis,
                                                                  tiled=tiled)
    ns.psum_scatter = lambda x, tiled=False: lax.psum_scatter(x, "i", tiled=tiled)
    ns.ppermute = lambda x, perm: lax.ppermute(x, "i", perm)
    # lax.pbroadcast's documented meaning; its own transpose fails in jax 0.10 ("full must
    # be called with scalar fill_value")
    ns.pbroadcast = lambda x, source: lax.psum(
        jnp.where(lax.axis_index("i") == source, x, jnp.zeros_like(x)), "i")
    ns.axis_index = lambda: lax.axis_index("i")
    ns.weights = lambda *shape: weights(jnp, *shape)
    return ns


def main():
    n, out = int(sys.argv[1]), sys.argv[2]
    ns = namespace()
    table = cases(n)
    xs = {name: inputs(n, shape, name)[0] for name, (_, shape) in table.items()}
    ts = {name: inputs(n, shape, name)[1] for name, (_, shape) in table.items()}

    def per_rank(xs, ts):  # every case at once: one pmap, one compilation
        got = {}
        for name, (fn, _) in table.items():
            f = lambda x, fn=fn: fn(ns, x)  # noqa: E731
            got[f"{name}/value"], got[f"{name}/grad"] = jax.value_and_grad(f)(xs[name])
            got[f"{name}/jvp"] = jax.jvp(f, (xs[name],), (ts[name],))[1]
            got[f"{name}/hvp"] = jax.jvp(jax.grad(f), (xs[name],), (ts[name],))[1]
        return got
    results = jax.pmap(per_rank, axis_name="i")(xs, ts)
    np.savez(out, **{k: np.asarray(v) for k, v in results.items()})


if __name__ == "__main__":
    main()
