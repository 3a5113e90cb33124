"""Run by tests/torch/test_torch_distributed.py on N ranks: torch.distributed.rpc's calls,
RRefs, errors and timeouts, alongside a process group on the same job. Asserts."""
import os
import time

import funcgrad.torch as torch
import funcgrad.torch.distributed as dist
import funcgrad.torch.distributed.rpc as rpc

rank, world = int(os.environ["RANK"]), int(os.environ["WORLD_SIZE"])


def add(a, b):
    return a + b


def relay(to, x):
    """Runs on one worker and calls another: the listener must stay free meanwhile."""
    return rpc.rpc_sync(to, add, args=(x, 100))


def slow(seconds):
    time.sleep(seconds)
    return seconds


def whoami():
    return rpc.get_worker_info().name


def value_of(rref):
    return rref.to_here() * 2


class Counter:
    def __init__(self):
        self.count = 0

    def bump(self, by):
        self.count += by
        return self.count


try:
    rpc.rpc_sync("worker0", add, args=(1, 2))
except RuntimeError as e:
    assert str(e) == "RPC has not been initialized. Call torch.distributed.rpc.init_rpc first."
else:
    raise AssertionError("no error before init_rpc")

dist.init_process_group("gloo")  # RPC and collectives share the job
rpc.init_rpc(f"worker{rank}", rank=rank, world_size=world,
             rpc_backend_options=rpc.TensorPipeRpcBackendOptions(rpc_timeout=30))
peer = (rank + 1) % world
assert rpc.get_worker_info().name == f"worker{rank}"
assert rpc.get_worker_info(f"worker{peer}").id == peer

# calls: sync, async, to oneself, nested, tensors in and out
assert rpc.rpc_sync(f"worker{peer}", whoami) == f"worker{peer}"
assert rpc.rpc_sync(rank, whoami) == f"worker{rank}"
futs = [rpc.rpc_async(f"worker{k}", add, args=(torch.ones(2), k)) for k in range(world)]
for k, f in enumerate(futs):
    assert torch.allclose(f.wait(), torch.full((2,), 1.0 + k))
assert rpc.rpc_sync(f"worker{peer}", relay, args=(f"worker{(peer + 1) % world}", 1)) == 101
chained = rpc.rpc_async(f"worker{peer}", add, args=(2, 3)).then(lambda f: f.wait() * 10)
assert chained.wait() == 50

# RRefs: remote objects, method proxies, passing an RRef along, local RRefs
counter = rpc.remote(f"worker{peer}", Counter)
assert counter.owner().id == peer and not counter.is_owner()
counter.rpc_sync().bump(5)
assert counter.rpc_async().bump(1).wait() == 6
assert counter.to_here().count == 6
assert rpc.rpc_sync(f"worker{peer}", value_of, args=(rpc.RRef(21),)) == 42
mine = rpc.RRef([1, 2])
assert mine.is_owner() and mine.local_value() == [1, 2] and mine.to_here() == [1, 2]
try:
    counter.local_value()
except RuntimeError as e:
    assert "can only be called on the owner" in str(e)
else:
    raise AssertionError("local_value on a non-owner")

# errors: the remote exception comes back with its type; timeouts; bad arguments
try:
    rpc.rpc_sync(f"worker{peer}", add, args=(1, "x"))
except TypeError as e:
    assert "unsupported operand" in str(e) and "The remote traceback" in e.__notes__[0]
else:
    raise AssertionError("no remote error")
try:
    rpc.rpc_sync(f"worker{peer}", slow, args=(2.0,), timeout=0.2)
except RuntimeError as e:
    assert "RPC ran for more than set timeout" in str(e), e
else:
    raise AssertionError("no timeout")
broken = rpc.remote(f"worker{peer}", add, args=(1, "x"))
try:
    broken.to_here()
except TypeError:
    pass
else:
    raise AssertionError("a failed remote creation did not raise on to_here")
for bad, kind, text in [(lambda: rpc.rpc_sync("nobody", add, args=(1, 2)), ValueError,
                         "Cannot get WorkerInfo from name nobody"),
                        (lambda: rpc.rpc_sync(peer, 3), TypeError, "function should be callable"),
                        (lambda: rpc.init_rpc("again"), RuntimeError, "RPC is already initialized")]:
    try:
        bad()
    except kind as e:
        assert text in str(e), e
    else:
        raise AssertionError(text)

t = torch.ones(1)
dist.all_reduce(t)
assert t.item() == world
rpc.shutdown()
dist.destroy_process_group()
if rank == 0:
    print(f"rpc job passed on {world} ranks")
