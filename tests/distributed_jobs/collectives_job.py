"""Run by tests/test_distributed.py on N ranks: ``collectives_job.py OUT.npz [--quick]``.

1. The per-rank cases of cases.py (value, gradient, JVP, Hessian-vector product on every
   rank, pmap convention) and the same cases as one global function through shard_map
   (whose value, gradient and JVP are the sums / stacks of the per-rank ones): saved to
   OUT.npz by rank 0 for comparison with jax.pmap.
2. Checks that assert here: shard_map derivatives of a few cases against finite
   differences (forward and reverse, to second order), pmax/pmin and their tie sharing, bucketed gradient averaging and parameter
   broadcast, data-parallel gradients equal to one process's, pmap, pytrees, all-reduces
   on both agreement paths (operands riding along, operands too large to), and the
   errors (mismatched collectives: shapes, dtypes, ops, operations, a small operand
   against a large one, one rank alone differing; unbound axes, unreplicated outputs),
   which every rank raises and survives.
"""
import sys
import types

import numpy as np
from mpi4py import MPI

import funcgrad
import funcgrad.numpy as fnp
import funcgrad.distributed as dist
from funcgrad.test_util import check_grads
from cases import cases, inputs, weights

W = "world"
FINITE_DIFFERENCES = {"psum", "all_gather_axis1_tiled", "psum_scatter_tiled",
                      "ppermute_ring", "pbroadcast"}


def namespace():
    ns = types.SimpleNamespace(sum=fnp.sum, sin=fnp.sin, cos=fnp.cos, exp=fnp.exp,
                               tanh=fnp.tanh)
    ns.psum = lambda x: dist.psum(x, W)
    ns.pmean = lambda x: dist.pmean(x, W)
    ns.all_gather = lambda x, axis=0, tiled=False: dist.all_gather(x, W, axis=axis,
                                                                   tiled=tiled)
    ns.psum_scatter = lambda x, tiled=False: dist.psum_scatter(x, W, tiled=tiled)
    ns.ppermute = lambda x, perm: dist.ppermute(x, W, perm)
    ns.pbroadcast = lambda x, source: dist.pbroadcast(x, W, source)
    ns.axis_index = lambda: dist.axis_index(W)
    ns.weights = lambda *shape: weights(fnp, *shape)
    return ns


def per_rank_results(n, r, ns, quick):
    out = {}
    for name, (fn, shape) in cases(n).items():
        X, T = inputs(n, shape, name)
        x, t = X[r], T[r]
        f = lambda x, fn=fn: fn(ns, x)  # noqa: E731
        out[f"{name}/value"], out[f"{name}/grad"] = funcgrad.value_and_grad(f)(x)
        out[f"{name}/jvp"] = funcgrad.jvp(f, (x,), (t,))[1]
        out[f"{name}/hvp"] = funcgrad.jvp(funcgrad.grad(f), (x,), (t,))[1]

        # the same program as one function of the whole (stacked) input
        glob = dist.shard_map(lambda xb, fn=fn: dist.psum(fn(ns, xb[0]), W),
                              in_specs=(dist.P(W),), out_specs=dist.P())
        out[f"{name}/shard_value"], out[f"{name}/shard_grad"] = \
            funcgrad.value_and_grad(glob)(X)
        out[f"{name}/shard_jvp"] = funcgrad.jvp(glob, (X,), (T,))[1]
        if not quick and name in FINITE_DIFFERENCES:  # (jax.pmap checks all the others)
            check_grads(glob, (X,), order=2)
    return {k: np.asarray(v) for k, v in out.items()}


def check_extrema(n, r):
    base = np.array([[1.0, -2.0, 3.0]]) * (np.arange(n)[:, None] + 1)
    base[:, 1] = 5.0  # a tie between all ranks in the middle element
    x = fnp.asarray(base[r])
    hi, lo = dist.pmax(x, W), dist.pmin(x, W)
    np.testing.assert_allclose(hi, base.max(0))
    np.testing.assert_allclose(lo, base.min(0))
    weights_ = np.arange(1.0, 4.0)
    g = funcgrad.grad(lambda x: fnp.sum(dist.pmax(x, W) * weights_))(x)
    # d/dx_r of sum over ranks of sum(w * max): n * w where r attains the max, split
    # equally among tied ranks
    hit = (base == base.max(0)).astype(float)
    np.testing.assert_allclose(g, n * weights_ * hit[r] / hit.sum(0))
    glob = dist.shard_map(lambda xb: dist.pmin(fnp.sin(xb[0]), W), in_specs=(dist.P(W),),
                          out_specs=dist.P())
    distinct = np.random.RandomState(1).permutation(3 * n).reshape(n, 3) / 7.0
    check_grads(glob, (fnp.asarray(distinct),), order=2)  # no ties: a smooth point


def check_data_parallel(n, r):
    rng = np.random.RandomState(0)
    X, Y = rng.randn(4 * n, 3), rng.randn(4 * n)
    params = {"w": fnp.asarray(rng.randn(3, 5)), "v": fnp.asarray(rng.randn(5)),
              "b": fnp.asarray(np.float32(0.5))}

    def loss(p, x, y):
        h = fnp.tanh(x @ p["w"])
        return fnp.mean((h @ p["v"] + p["b"] - y) ** 2)
    whole = funcgrad.grad(loss)(params, X, Y)
    mine = slice(4 * r, 4 * r + 4)
    local = funcgrad.grad(loss)(params, X[mine], Y[mine])
    for bucket_bytes in (dist.DEFAULT_BUCKET_BYTES, 64):  # one bucket; several
        avg = dist.allreduce_gradients(local, W, bucket_bytes=bucket_bytes)
        for k in whole:
            np.testing.assert_allclose(avg[k], whole[k], rtol=1e-6, atol=1e-7)
            assert avg[k].dtype == whole[k].dtype, (k, avg[k].dtype)
    # the same through shard_map: replicated parameters, batch split over the ranks
    sharded = dist.shard_map(lambda p, x, y: dist.pmean(loss(p, x, y), W),
                             in_specs=(dist.P(), dist.P(W), dist.P(W)), out_specs=dist.P())
    g = funcgrad.grad(sharded)(params, X, Y)
    for k in whole:
        np.testing.assert_allclose(g[k], whole[k], rtol=1e-6, atol=1e-7)
    tree = {"a": fnp.full((2, 3), float(r)), "n": fnp.asarray(np.arange(3) + r)}
    same = dist.broadcast_parameters(tree, W, root=n - 1, bucket_bytes=16)
    np.testing.assert_array_equal(same["a"], np.full((2, 3), n - 1.0))
    np.testing.assert_array_equal(same["n"], np.arange(3) + n - 1)


def check_pmap_and_trees(n, r):
    X = np.arange(n * 3.0).reshape(n, 3)
    f = dist.pmap(lambda x: fnp.sin(x) * dist.axis_index(W))
    np.testing.assert_allclose(f(X), np.sin(X) * np.arange(n)[:, None])
    g = funcgrad.grad(lambda X: fnp.sum(f(X) ** 2))(X)
    np.testing.assert_allclose(g, 2 * np.sin(X) * np.cos(X) * (np.arange(n)[:, None] ** 2),
                               rtol=1e-12)
    tree = {"a": fnp.ones(2) * r, "b": [fnp.asarray(1.0)]}
    total = dist.psum(tree, W)
    np.testing.assert_allclose(total["a"], np.full(2, n * (n - 1) / 2))
    np.testing.assert_allclose(total["b"][0], n)
    assert float(dist.psum(1, W)) == n  # the axis size, as JAX's psum(1, name)
    with dist.bind_axis("one", dist.SelfTransport()):
        np.testing.assert_allclose(dist.psum(fnp.ones(2), (W, "one")), np.full(2, n))
    pending = dist.world().allreduce(np.ones(3), "sum", block=False)
    np.testing.assert_allclose(pending.wait(), np.full(3, n))


def check_both_agreement_paths(n, r):
    """All-reduces whose operand rides along with the agreement and ones too large to
    (they agree first, then run MPI's): the reduction of every rank's operand, bitwise the
    same on every rank, for floats, ints and bools."""
    world = dist.world()
    for count in (5, world.exchange.capacity // 8 + 1):
        every = [np.random.RandomState(k).randn(count) for k in range(n)]
        total = world.allreduce(every[r], "sum")
        np.testing.assert_allclose(total, np.sum(every, 0), rtol=1e-12)
        assert all(g.tobytes() == total.tobytes() for g in world.allgather(total))
        ints = np.arange(count, dtype=np.int32) * (r + 1)
        np.testing.assert_array_equal(world.allreduce(ints, "max"), np.arange(count) * n)
        flags = np.arange(count) == r
        np.testing.assert_array_equal(world.allreduce(flags, "sum"), np.arange(count) < n)
        np.testing.assert_array_equal(world.allreduce(~flags, "prod"), np.arange(count) >= n)


def check_repeated_calls(n, r):
    """Remembered all-reducers called over and over, interleaved across shapes, dtypes and
    ops (operands that ride with the agreement and larger ones, which go through MPI's
    all-reduce), with every result kept: each result keeps its own values (no later call
    writes into it, none shares memory with another or with the operand), and each is
    the reduction of that call's operands. A result dropped but for a view of it is
    not written either."""
    big = dist.world().exchange.capacity // 8 + 1
    cases = [((7,), "float32", dist.psum, np.sum), ((2, 3), "float64", dist.pmax, np.max),
             ((7,), "int64", dist.pmin, np.min), ((), "float64", dist.psum, np.sum),
             ((big,), "float64", dist.psum, np.sum), ((7,), "float32", dist.pmax, np.max),
             ((big,), "float64", dist.pmax, np.max)]
    kept = []
    for call in range(4):
        for shape, dtype, reduction, reference in cases:
            every = [np.random.RandomState(100 * call + k).randint(-9, 9, shape).astype(dtype)
                     for k in range(n)]
            x = fnp.asarray(every[r])
            got = reduction(x, W)
            kept.append((got, reference(np.stack(every), axis=0), x))
    for got, want, x in kept:
        value = np.asarray(got._value)
        np.testing.assert_array_equal(value, want)
        assert value.dtype == want.dtype and value.shape == want.shape
        assert not np.shares_memory(value, x._value)
    values = [np.asarray(got._value) for got, _, _ in kept]
    for i, a in enumerate(values):
        assert not any(np.shares_memory(a, b) for b in values[i + 1:])
    view = dist.psum(fnp.full(big, r + 1.0), W)._value[:5]  # the result itself is dropped
    for _ in range(3):
        np.testing.assert_array_equal(dist.psum(fnp.full(big, 2.0 * r), W), n * (n - 1))
    np.testing.assert_array_equal(view, np.full(5, n * (n + 1) / 2))


def expect_error(kind, words, fn):
    try:
        fn()
    except kind as e:
        for w in words:
            assert w in str(e), f"{w!r} not in the message: {e}"
        return
    raise AssertionError(f"{kind.__name__} not raised")


def check_errors(n, r):
    # shapes differ: every rank raises, listing what each rank called, and survives
    expect_error(dist.CollectiveMismatchError, ["rank 0: allreduce(sum) on float64[3]",
                                                f"rank 1: allreduce(sum) on float64[{4}]"],
                 lambda: dist.psum(fnp.ones(3 if r == 0 else 4), W))
    expect_error(dist.CollectiveMismatchError, ["float32", "float64"],
                 lambda: dist.psum(fnp.ones(3, dtype="float32" if r else "float64"), W))
    expect_error(dist.CollectiveMismatchError, ["allgather", "allreduce"],
                 lambda: (dist.psum(fnp.ones(2), W) if r == 0 else
                          dist.all_gather(fnp.ones(2), W)))
    last = r == n - 1  # only the last rank differs: every rank still learns of it
    expect_error(dist.CollectiveMismatchError, ["allreduce(max) on float64[3]",
                                                "allreduce(sum) on float64[3]"],
                 lambda: (dist.pmax if last else dist.psum)(fnp.ones(3), W))
    big = dist.world().exchange.capacity // 8 + 1  # too large to ride with the agreement
    expect_error(dist.CollectiveMismatchError, [f"rank {n - 1}: allreduce(sum) on "
                                                f"float64[{big}]", "rank 0: allreduce(sum) "
                                                "on float64[3]"],
                 lambda: dist.psum(fnp.ones(big if last else 3), W))
    for _ in range(2):  # remembered all-reducers of both, then one of each at once
        dist.psum(fnp.ones(3), W)
        dist.psum(fnp.ones(3, dtype="int64"), W)
    expect_error(dist.CollectiveMismatchError, ["allreduce(sum) on float64[3]",
                                                "allreduce(sum) on int64[3]"],
                 lambda: dist.psum(fnp.ones(3, dtype="int64" if last else "float64"), W))
    expect_error(dist.CollectiveMismatchError, ["allreduce(sum) on float64[3, 1]"],
                 lambda: dist.psum(fnp.ones((3, 1) if last else 3), W))
    expect_error(dist.CollectiveMismatchError, ["broadcast(root=0)", "allreduce(sum)"],
                 lambda: (dist.broadcast(fnp.ones(big), W, 0) if last else
                          dist.psum(fnp.ones(big), W)))
    expect_error(dist.CollectiveMismatchError, ["The calls look alike", "without blocking"],
                 lambda: dist.world().allreduce(np.ones(3), block=not last))
    np.testing.assert_allclose(dist.psum(fnp.ones(2), W), np.full(2, n))  # still in step
    np.testing.assert_allclose(dist.psum(fnp.ones(big), W), np.full(big, n))
    expect_error(NameError, ["unbound axis name: nope", "'world'"],
                 lambda: dist.psum(fnp.ones(2), "nope"))
    not_replicated = dist.shard_map(lambda x: x * 2, in_specs=(dist.P(W),),
                                    out_specs=dist.P())
    expect_error(ValueError, ["replicated over axis 'world'", "differs across the ranks"],
                 lambda: not_replicated(fnp.arange(float(n))))
    expect_error(ValueError, ["not evenly divisible"],
                 lambda: not_replicated(fnp.arange(float(n + 1))))
    expect_error(ValueError, ["sources and destinations must be unique"],
                 lambda: dist.ppermute(fnp.ones(2), W, [(0, 1), (0, 1)]))
    expect_error(ValueError, ["must be a multiple of"],
                 lambda: dist.psum_scatter(fnp.ones(n + 1), W, tiled=True))


def main():
    out_path = sys.argv[1]
    quick = "--quick" in sys.argv
    dist.initialize()
    n, r = dist.process_count(), dist.process_index()
    results = per_rank_results(n, r, namespace(), quick)
    check_extrema(n, r)
    check_data_parallel(n, r)
    check_pmap_and_trees(n, r)
    check_both_agreement_paths(n, r)
    check_repeated_calls(n, r)
    check_errors(n, r)
    every = MPI.COMM_WORLD.gather(results, root=0)
    if r == 0:
        np.savez(out_path, **{f"{k}@{rank}": v for rank, res in enumerate(every)
                              for k, v in res.items()})
        print(f"collectives job passed on {n} ranks")


if __name__ == "__main__":
    main()
