"""``ddp_job.py OUT.npz``: funcgrad.torch's DistributedDataParallel and DistributedSampler.

Asserts that DDP training on the ranks' shares of the batch gives the parameters of one
process training on the whole batch (several bucket sizes), that construction broadcasts
rank 0's parameters, no_sync accumulation, find_unused_parameters, and PyTorch's errors;
rank 0 saves the trained parameters for comparison with PyTorch's own DDP.
"""
import sys

import numpy as np

import funcgrad.torch as torch
import funcgrad.torch.distributed as dist
from funcgrad.torch.nn.parallel import DistributedDataParallel as DDP
from funcgrad.torch.utils.data.distributed import DistributedSampler

from ddp_common import GLOBAL_BATCH, data, model, train

dist.init_process_group("mpi")
r, n = dist.get_rank(), dist.get_world_size()
X, Y = data()
alone = train(torch, model(torch), X, Y, list(range(GLOBAL_BATCH)))
mine = list(DistributedSampler(range(GLOBAL_BATCH), shuffle=False))


def assert_same(trained, reference, what):
    for k, v in reference.items():
        np.testing.assert_allclose(trained["module." + k], v, rtol=2e-5, atol=2e-6,
                                   err_msg=f"{what}: {k}")


# training on shares equals training alone, whatever the buckets
for cap in (None, 1e-4):  # 25 MiB (one bucket) and ~100 bytes (a bucket per parameter)
    net = DDP(model(torch), bucket_cap_mb=cap)
    assert len(net.reducer.buckets) == (1 if cap is None else 4)
    trained = train(torch, net, X, Y, mine)
    assert_same(trained, alone, f"bucket_cap_mb={cap}")
if r == 0:
    np.savez(sys.argv[1], **trained)

# construction broadcasts rank 0's parameters
torch.manual_seed(100 + r)
scrambled = torch.nn.Sequential(torch.nn.Linear(4, 8), torch.nn.Tanh(), torch.nn.Linear(8, 3))
DDP(scrambled)
everyone = [None] * n
dist.all_gather_object(everyone, [p.detach().numpy().copy() for p in scrambled.parameters()])
for other in everyone[1:]:
    for a, b in zip(everyone[0], other):
        np.testing.assert_array_equal(a, b)

# no_sync: two local micro-batches, then one synchronised backward = the whole batch once
net = DDP(model(torch))
half = len(mine) // 2
with net.no_sync():
    torch.nn.functional.mse_loss(net(torch.tensor(X[mine[:half]])),
                                 torch.tensor(Y[mine[:half]])).backward()
local = [p.grad.detach().numpy().copy() for p in net.parameters()]
torch.nn.functional.mse_loss(net(torch.tensor(X[mine[half:]])),
                             torch.tensor(Y[mine[half:]])).backward()
ref = model(torch)  # one process: every rank's two halves, accumulated, over n
for k in range(n):
    share = list(range(k, GLOBAL_BATCH, n))
    for chunk in (share[:half], share[half:]):
        torch.nn.functional.mse_loss(ref(torch.tensor(X[chunk])),
                                     torch.tensor(Y[chunk])).backward()
for p, q in zip(net.parameters(), ref.parameters()):
    np.testing.assert_allclose(p.grad.detach().numpy(), q.grad.detach().numpy() / n,
                               rtol=2e-5, atol=2e-6)
assert not np.allclose(local[0], net.module[0].weight.grad.detach().numpy())


# find_unused_parameters: a branch only some ranks use, and one no rank uses
class Branchy(torch.nn.Module):
    def __init__(self):
        super().__init__()
        self.a = torch.nn.Linear(3, 2)
        self.b = torch.nn.Linear(3, 2)
        self.never = torch.nn.Linear(3, 2)

    def forward(self, x, use_b):
        return self.a(x) + (self.b(x) if use_b else 0)


torch.manual_seed(0)
net = DDP(Branchy(), find_unused_parameters=True)
x = torch.ones(1, 3) * (r + 1)
for step in range(2):
    for p in net.parameters():
        p.grad = None
    net(x, use_b=(r == 0)).sum().backward()
    # a: every rank's gradient averaged; b: rank 0's gradient / n; never: no gradient
    np.testing.assert_allclose(net.module.a.weight.grad.detach().numpy(),
                               np.full((2, 3), (n + 1) / 2), rtol=1e-6)
    np.testing.assert_allclose(net.module.b.weight.grad.detach().numpy(),
                               np.full((2, 3), 1.0 / n), rtol=1e-6)
    assert net.module.never.weight.grad is None

# without find_unused_parameters, an unused parameter is PyTorch's error at the next forward
net = DDP(Branchy())
net(x, use_b=True).sum().backward()
try:
    net(x, use_b=True)
except RuntimeError as e:
    assert str(e).startswith("Expected to have finished reduction in the prior iteration")
    assert f"Parameter indices which did not receive grad for rank {r}: 4 5" in str(e)
else:
    raise AssertionError("no error for an unfinished reduction")

# a module without trainable parameters, and ranks holding different models
try:
    DDP(torch.nn.Tanh())
except RuntimeError as e:
    assert "DistributedDataParallel is not needed" in str(e)
else:
    raise AssertionError("no error for a module without parameters")
try:
    DDP(torch.nn.Linear(3, 2 + r))
except RuntimeError as e:
    assert "DDP expects same model across all ranks" in str(e), e
else:
    raise AssertionError("no error for different models")

# DistributedSampler asks the default group: the ranks' shares partition the data
for size, drop_last in [(10, False), (10, True), (12, False)]:
    sampler = DistributedSampler(range(size), shuffle=True, seed=3, drop_last=drop_last)
    sampler.set_epoch(2)
    shares = [None] * n
    dist.all_gather_object(shares, list(sampler))
    assert len({len(s) for s in shares}) == 1 and len(shares[0]) == len(sampler)
    union = sorted(i for s in shares for i in s)
    if drop_last or size % n == 0:
        assert len(set(union)) == len(union), union  # disjoint
    assert set(union) <= set(range(size))
    assert (set(union) == set(range(size))) or drop_last

dist.destroy_process_group()
if r == 0:
    print(f"ddp job passed on {n} ranks")
