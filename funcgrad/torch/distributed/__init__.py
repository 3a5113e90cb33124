"""torch.distributed for funcgrad.torch: process groups and collectives on MPI.

``import funcgrad.torch.distributed as dist`` and PyTorch's distributed code runs:

    dist.init_process_group("gloo")          # or "mpi": both run on MPI (mpi4py)
    t = torch.ones(3) * (dist.get_rank() + 1)
    dist.all_reduce(t, op=dist.ReduceOp.SUM)  # in place, on every rank
    dist.destroy_process_group()

launched with ``python -m funcgrad.distributed.run -n 2 train.py`` (a thin wrapper over
mpiexec with torchrun's flags; it also sets RANK, WORLD_SIZE, LOCAL_RANK...). Offered:
`init_process_group`, `destroy_process_group`, `is_initialized`, `get_rank`,
`get_world_size`, `get_backend`, `new_group`, `barrier`, `all_reduce`, `reduce`,
`broadcast`, `scatter`, `gather`, `all_gather`, `all_gather_into_tensor`,
`reduce_scatter`, `reduce_scatter_tensor`, `send`/`recv`/`isend`/`irecv`, the object
collectives, ``async_op=True`` `Work` handles (with ``get_future()``), `ReduceOp` (SUM, AVG,
PRODUCT, MIN, MAX, BAND, BOR, BXOR) and `rpc`. `nn.parallel.DistributedDataParallel` and
`utils.data.distributed.DistributedSampler` build on them.

A rank that raises aborts the whole job (naming the rank); collectives whose shapes or
dtypes differ between ranks raise on every rank; an operation that outlasts the group's
``timeout`` (30 minutes by default) aborts the job instead of hanging. These collectives
are not differentiable (as in PyTorch); funcgrad.distributed has differentiable ones.
"""
from importlib.util import find_spec as _find_spec

from ._groups import (Backend, GroupMember, ProcessGroup, ReduceOp, destroy_process_group,
                      get_backend, get_global_rank, get_group_rank, get_process_group_ranks,
                      get_rank, get_world_size, group, init_process_group, is_initialized,
                      new_group)
from ._objects import (all_gather_object, broadcast_object_list, gather_object,
                       scatter_object_list)
from ._ops import (Work, all_gather, all_gather_into_tensor, all_reduce, barrier, broadcast,
                   gather, irecv, isend, recv, reduce, reduce_scatter, reduce_scatter_tensor,
                   scatter, send)
from ._monitored import monitored_barrier
from . import rpc

__all__ = ["Backend", "GroupMember", "ProcessGroup", "ReduceOp", "Work", "group",
           "init_process_group", "destroy_process_group", "is_initialized", "new_group",
           "get_rank", "get_world_size", "get_backend", "get_global_rank", "get_group_rank",
           "get_process_group_ranks", "all_reduce", "reduce", "broadcast", "all_gather",
           "all_gather_into_tensor", "reduce_scatter", "reduce_scatter_tensor", "scatter",
           "gather", "barrier", "monitored_barrier", "send", "recv", "isend", "irecv",
           "all_gather_object", "broadcast_object_list", "gather_object",
           "scatter_object_list", "is_available", "is_mpi_available", "is_gloo_available",
           "is_nccl_available", "rpc"]


def is_available() -> bool:
    """Whether the distributed package can run here (it needs mpi4py)."""
    return _find_spec("mpi4py") is not None


def is_mpi_available() -> bool:
    return is_available()


def is_gloo_available() -> bool:
    return is_available()  # "gloo" runs on MPI here


def is_nccl_available() -> bool:
    return False
