"""Run by tests/torch/test_torch_distributed.py on N ranks: every torch.distributed
operation of the facade against numpy's answer, sync and async, on the default group and
on sub-groups, plus PyTorch's error texts for misuse. Asserts; rank 0 prints a last line."""
import time
import warnings
from datetime import timedelta

import numpy as np

import funcgrad.torch as torch
import funcgrad.torch.distributed as dist

dist.init_process_group("gloo")
r, n = dist.get_rank(), dist.get_world_size()
ranks = np.arange(n, dtype=np.float64)


def close(t, expected):
    np.testing.assert_allclose(t.detach().numpy(), expected, rtol=1e-6, atol=1e-12)


def expect(kind, text, fn):
    try:
        fn()
    except kind as e:
        assert text in str(e), f"{text!r} not in {str(e)!r}"
        return
    raise AssertionError(f"{kind.__name__} not raised ({text})")


# -- all_reduce with every op, sync and async -------------------------------------------------
value = (r + 1.0) * np.array([1.0, -2.0, 0.5])
every = (ranks[:, None] + 1) * np.array([1.0, -2.0, 0.5])
for op, expected in [(dist.ReduceOp.SUM, every.sum(0)), (dist.ReduceOp.AVG, every.mean(0)),
                     (dist.ReduceOp.PRODUCT, every.prod(0)), (dist.ReduceOp.MIN, every.min(0)),
                     (dist.ReduceOp.MAX, every.max(0))]:
    t = torch.tensor(value)
    assert dist.all_reduce(t, op=op) is None
    close(t, expected)
    t = torch.tensor(value)
    work = dist.all_reduce(t, op=op, async_op=True)
    assert work.wait() is True and work.is_completed() and work.is_success()
    close(t, expected)
bits = torch.tensor([r + 1, 3], dtype=torch.int64)
dist.all_reduce(bits, op=dist.ReduceOp.BOR)
close(bits, [np.bitwise_or.reduce(np.arange(1, n + 1)), 3])
flags = torch.tensor([r == 0, True])
dist.all_reduce(flags)  # a sum of booleans is their or
close(flags, [True, True])

# an input that requires grad, and a non-leaf: written in place, graph untouched
leaf = torch.ones(2, requires_grad=True)
dist.all_reduce(leaf)
close(leaf, [n, n])
assert leaf.requires_grad and leaf.grad_fn is None
y = torch.ones(2, requires_grad=True)
z = y * 3
version = z._version
dist.all_reduce(z)
close(z, [3 * n, 3 * n])
assert z.grad_fn is not None and z._version > version
z.sum().backward()
close(y.grad, [3, 3])

# futures of async work
t = torch.ones(3)
fut = dist.all_reduce(t, async_op=True).get_future()
chained = fut.then(lambda f: f.value()[0] * 2)
close(chained.wait(), np.full(3, 2.0 * n))

# -- rooted collectives --------------------------------------------------------------------
src = n - 1
t = torch.tensor([float(r), 7.0])
dist.broadcast(t, src=src)
close(t, [src, 7.0])
t = torch.tensor([float(r)])
dist.reduce(t, dst=0, op=dist.ReduceOp.SUM)
close(t, [ranks.sum()] if r == 0 else [r])

out = torch.zeros(2)
pieces = [torch.tensor([k, -k], dtype=torch.float32) for k in range(n)] if r == 0 else None
dist.scatter(out, pieces, src=0)
close(out, [r, -r])
gathered = [torch.zeros(2) for _ in range(n)] if r == src else None
dist.gather(torch.tensor([r, r * r], dtype=torch.float32), gathered, dst=src)
if r == src:
    for k, g in enumerate(gathered):
        close(g, [k, k * k])

# -- gathers and reduce-scatters ----------------------------------------------------------------
mine = torch.tensor([[r, 1.0], [2.0, r]])
listed = [torch.zeros(2, 2) for _ in range(n)]
work = dist.all_gather(listed, mine, async_op=True)
work.wait()
for k, g in enumerate(listed):
    close(g, [[k, 1.0], [2.0, k]])
joined = torch.zeros(2 * n, 2)
dist.all_gather_into_tensor(joined, mine)
close(joined, np.concatenate([[[k, 1.0], [2.0, k]] for k in range(n)]))
stacked = torch.zeros(n, 2, 2)
dist.all_gather_into_tensor(stacked, mine)
close(stacked, np.stack([[[k, 1.0], [2.0, k]] for k in range(n)]))
full = torch.arange(3.0 * n) + r
part = torch.zeros(3)
dist.reduce_scatter_tensor(part, full, op=dist.ReduceOp.AVG)
close(part, (np.arange(3.0 * n)[3 * r:3 * r + 3] + ranks.mean()))
part = torch.zeros(2)
dist.reduce_scatter(part, [torch.full((2,), float(k + r)) for k in range(n)])
close(part, np.full(2, n * r + ranks.sum()))

# -- point to point ----------------------------------------------------------------------------
nxt, prev = (r + 1) % n, (r - 1) % n
box = torch.zeros(3)
recv_work = dist.irecv(box, src=prev, tag=5)
send_work = dist.isend(torch.full((3,), float(r)), dst=nxt, tag=5)
send_work.wait()
recv_work.wait()
close(box, np.full(3, prev))
if r == 0:
    for k in range(1, n):
        got = torch.zeros(1)
        sender = dist.recv(got)  # from any rank
        close(got, [sender * 10.0])
else:
    dist.send(torch.tensor([r * 10.0]), dst=0)

# -- groups ------------------------------------------------------------------------------------
evens = dist.new_group([k for k in range(n) if k % 2 == 0])
odds = dist.new_group([k for k in range(n) if k % 2 == 1])
mine_group = evens if r % 2 == 0 else odds
t = torch.tensor([float(r)])
dist.all_reduce(t, group=mine_group)
close(t, [sum(k for k in range(n) if k % 2 == r % 2)])
assert dist.get_process_group_ranks(mine_group) == [k for k in range(n) if k % 2 == r % 2]
assert dist.get_rank(mine_group) == r // 2
other = odds if r % 2 == 0 else evens
assert dist.get_rank(other) == -1 and dist.get_world_size(other) == -1
with warnings.catch_warnings(record=True) as caught:
    warnings.simplefilter("always")
    assert dist.all_reduce(torch.ones(1), group=other) is None
assert "which does not belong to the given group" in str(caught[0].message)
t = torch.tensor([float(r)])
dist.broadcast(t, src=mine_group.ranks[-1], group=mine_group)  # src is a global rank
close(t, [mine_group.ranks[-1]])
expect(ValueError, "is not part of group",  # rank r + 1 is in the other group
       lambda: dist.broadcast(t, src=(r + 1) % n, group=mine_group))
dist.barrier(group=mine_group)

# -- monitored_barrier: names the rank that never came ---------------------------------------
dist.monitored_barrier(timeout=timedelta(seconds=60))
dist.monitored_barrier(timeout=timedelta(seconds=60), wait_all_ranks=True)
if r != n - 1:  # the last rank stays away
    start = time.monotonic()
    text = (f"[Rank 0]: Rank {n - 1} failed to pass monitoredBarrier in 1500 ms" if n == 2 else
            f"[Rank 0]: Ranks {n - 1} failed to pass monitoredBarrier in 1500 ms" if r == 0
            else "rank 0 did not answer monitoredBarrier in 1500 ms")
    expect(RuntimeError, text, lambda: dist.monitored_barrier(
        timeout=timedelta(seconds=1.5), wait_all_ranks=n > 2))
    assert 1.4 < time.monotonic() - start < 30  # the timeout, not the group's 30 minutes
dist.barrier()
dist.monitored_barrier(timeout=timedelta(seconds=60))  # nothing left over from the failure

# -- objects -----------------------------------------------------------------------------------
objects = [None] * n
dist.all_gather_object(objects, {"rank": r, "name": "x" * r})
assert objects == [{"rank": k, "name": "x" * k} for k in range(n)]
shared = [r, "from", r] if r == src else [None, None, None]
dist.broadcast_object_list(shared, src=src)
assert shared == [src, "from", src]
collected = [None] * n if r == 0 else None
dist.gather_object((r, "hi"), collected, dst=0)
assert r != 0 or collected == [(k, "hi") for k in range(n)]
received = [None]
dist.scatter_object_list(received, [f"to {k}" for k in range(n)] if r == 0 else None, src=0)
assert received == [f"to {r}"]

# -- misuse: PyTorch's texts ---------------------------------------------------------------------
expect(TypeError, "Expected parameter `tensor` of type torch.Tensor",
       lambda: dist.all_reduce([torch.ones(1)]))
expect(ValueError, "all_reduce does not support RedOpType.MAX on complex tensors",
       lambda: dist.all_reduce(torch.ones(2, dtype=torch.complex64), op=dist.ReduceOp.MAX))
expect(RuntimeError, "result type Float can't be cast to the desired output type Long",
       lambda: dist.all_reduce(torch.ones(2, dtype=torch.int64), op=dist.ReduceOp.AVG))
expect(RuntimeError, f"invalid output tensor list at index 0 (expected length {n}, got",
       lambda: dist.all_gather([torch.zeros(1)] * (n + 1), torch.ones(1)))
expect(ValueError, "Argument ``gather_list`` must be specified on destination rank.",
       lambda: dist.gather(torch.ones(1), None, dst=r))
expect(ValueError, "Argument ``scatter_list`` must be specified on source rank.",
       lambda: dist.scatter(torch.ones(1), None, src=r))
expect(ValueError, "Invalid destination rank: destination rank should not be the same",
       lambda: dist.send(torch.ones(1), dst=r))
expect(ValueError, "trying to initialize the default process group twice!",
       lambda: dist.init_process_group("gloo"))
expect(RuntimeError, "the ranks called", lambda: dist.all_reduce(torch.ones(2 + r)))
close(torch.ones(1), [1.0])

dist.destroy_process_group()
expect(ValueError, "Default process group has not been initialized",
       lambda: dist.all_reduce(torch.ones(1)))
if r == 0:
    print(f"torch collectives job passed on {n} ranks")
