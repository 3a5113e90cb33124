"""RPC: call functions on other workers, and keep objects there (RRefs).

    python -m funcgrad.distributed.run -n 3 examples/distributed/rpc.py

The basis of parameter servers and pipeline schemes: worker 0 owns a parameter store
(created there with rpc.remote); the other workers send it gradients and read the
parameters through the RRef, while worker 0 also answers plain remote calls.
"""
import os

import funcgrad.torch as torch
import funcgrad.torch.distributed.rpc as rpc


class ParameterStore:
    """Lives on worker 0: parameters, updated by whoever sends gradients."""

    def __init__(self, size):
        self.params = torch.zeros(size)
        self.updates = 0

    def apply(self, grad, lr):
        with torch.no_grad():
            self.params -= lr * grad
        self.updates += 1
        return self.updates

    def get(self):
        return self.params


def square_sum(x):
    return (x * x).sum()


def fail():
    raise ValueError("raised on the remote worker")


rank, world = int(os.environ["RANK"]), int(os.environ["WORLD_SIZE"])
rpc.init_rpc(f"worker{rank}", rank=rank, world_size=world)

store = rpc.remote("worker0", ParameterStore, args=(3,))  # every worker makes its own store
if rank > 0:
    for step in range(2):
        store.rpc_sync().apply(torch.ones(3) * rank, 0.5)
    seen = store.to_here()  # a copy of this worker's store's parameters
    assert torch.allclose(seen.params, torch.full((3,), -1.0 * rank)), seen.params
    fut = rpc.rpc_async("worker0", square_sum, args=(torch.arange(4.0),))
    assert fut.wait().item() == 14.0
    try:
        rpc.rpc_sync("worker0", fail)
    except ValueError as e:
        assert "raised on the remote worker" in str(e)
    print(f"worker{rank}: store on {store.owner_name()} has {seen.params.tolist()} after "
          f"{seen.updates} updates", flush=True)
else:
    assert rpc.get_worker_info().name == "worker0"
rpc.shutdown()  # waits until every worker is done
