"""Data parallelism the functional way: funcgrad.distributed's collectives under grad.

    python -m funcgrad.distributed.run -n 2 examples/distributed/functional_data_parallel.py

Two equivalent recipes. (1) Each rank takes the gradient of its own shard's loss and
averages the gradients with allreduce_gradients (bucketed all-reduces). (2) shard_map
runs the loss on every rank's block of the whole batch; the collectives are primitives
with derivative rules, so grad of the shard_map is the whole-batch gradient directly.
Both equal the gradient one process would compute on the whole batch.
"""
import numpy as np

import funcgrad
import funcgrad.numpy as fnp
import funcgrad.distributed as dist

dist.initialize()  # the MPI job as the axis "world"
rank, world = dist.process_index(), dist.process_count()

rng = np.random.RandomState(0)
X, Y = rng.randn(8 * world, 3), rng.randn(8 * world)
params = dist.broadcast_parameters({"w": fnp.asarray(rng.randn(3)), "b": fnp.asarray(0.0)})


def loss(p, x, y):
    return fnp.mean((fnp.tanh(x @ p["w"]) + p["b"] - y) ** 2)


shard = slice(8 * rank, 8 * rank + 8)
g1 = dist.allreduce_gradients(funcgrad.grad(loss)(params, X[shard], Y[shard]))

sharded_loss = dist.shard_map(lambda p, x, y: dist.pmean(loss(p, x, y), "world"),
                              in_specs=(dist.P(), dist.P("world"), dist.P("world")),
                              out_specs=dist.P())
g2 = funcgrad.grad(sharded_loss)(params, X, Y)

alone = funcgrad.grad(loss)(params, X, Y)  # what one process computes on everything
for k in alone:
    np.testing.assert_allclose(g1[k], alone[k], rtol=1e-10)
    np.testing.assert_allclose(g2[k], alone[k], rtol=1e-10)
if rank == 0:
    print(f"whole-batch gradient from {world} ranks: w {np.asarray(g2['w'])}, "
          f"b {float(g2['b']):.6f}")
