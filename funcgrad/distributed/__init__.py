"""funcgrad.distributed: SPMD collectives, data parallelism and a launcher, on MPI.

Install with ``pip install 'funcgrad[distributed]'`` (mpi4py and the mpich wheel, which
brings ``mpiexec``) and run a script on N processes with
``python -m funcgrad.distributed.run -n N script.py``. Every process runs the same
program; collectives communicate along a named axis:

    import funcgrad, funcgrad.numpy as fnp
    import funcgrad.distributed as dist

    dist.initialize()                                   # the MPI job, as axis "world"
    x = fnp.arange(3.0) + dist.axis_index("world")      # a different x on every rank
    total = dist.psum(x, "world")                       # the same sum on every rank
    g = funcgrad.grad(lambda x: fnp.sum(dist.psum(x, "world") ** 2))(x)

- collectives (JAX's ``jax.lax`` names and signatures, over pytrees): `psum`, `pmean`,
  `pmax`, `pmin`, `all_gather`, `psum_scatter` (= `reduce_scatter`), `pbroadcast` (=
  `broadcast`), `ppermute`, `axis_index`, `axis_size`. They are registry primitives with
  VJP and JVP rules, so they compose with every transform, to any order.
- `shard_map` / `pmap`: one function per process over its block of whole arrays, whose
  results (and derivatives) are those of the same computation on one process.
- `allreduce_gradients` / `broadcast_parameters`: bucketed all-reduce of a pytree of
  gradients (averaged) and broadcast of parameters, for data-parallel training.
- `initialize`, `process_index`, `process_count`; `bind_axis` to bind any `Transport`
  (e.g. `SelfTransport`, a group of one) to a name for a block of code.

Derivatives follow JAX's pmap convention: each rank differentiates its own program, and
the transpose of psum is psum (so ``grad(lambda x: psum(x, "i"))`` is the axis size, as in
``jax.pmap(jax.grad(...))``). Values that are replicated count once only at a shard_map's
boundary. funcgrad.primitives.collectives explains the choice and lists every rule.

Failures end the job instead of hanging it: the ranks agree on each collective's operation,
shape and dtype first (a mismatch raises `CollectiveMismatchError` on every rank, naming
what each called); an uncaught exception on one rank prints its traceback and aborts every
rank; a watchdog aborts the job when an operation outlasts the timeout
(``FUNCGRAD_DISTRIBUTED_TIMEOUT``, 30 minutes by default). The transport (`Transport`) is
one small interface; MPI (`mpi.MPITransport`) is the one shipped, NCCL through cupy fits it.
"""
from funcgrad.primitives.kernels.collectives import (CollectiveMismatchError, Pending,
                                                     SelfTransport, Transport,
                                                     UnboundAxisError, bind_axis,
                                                     bound_axis_names, register_axis,
                                                     unregister_axis)
from .collectives import (all_gather, axis_index, axis_size, broadcast, pbroadcast, pmax,
                          pmean, pmin, ppermute, psum, psum_scatter, reduce_scatter)
from .data_parallel import DEFAULT_BUCKET_BYTES, allreduce_gradients, broadcast_parameters
from .shard_map import P, PartitionSpec, pmap, shard_map
from .world import (WORLD, initialize, is_initialized, process_count, process_index,
                    shutdown, world)

__all__ = ["psum", "pmean", "pmax", "pmin", "all_gather", "psum_scatter", "reduce_scatter",
           "pbroadcast", "broadcast", "ppermute", "axis_index", "axis_size", "shard_map",
           "pmap", "PartitionSpec", "P", "allreduce_gradients", "broadcast_parameters",
           "DEFAULT_BUCKET_BYTES", "initialize", "shutdown", "is_initialized", "world",
           "process_index", "process_count", "WORLD", "Transport", "SelfTransport",
           "Pending", "UnboundAxisError", "CollectiveMismatchError", "bind_axis",
           "register_axis", "unregister_axis", "bound_axis_names"]
