"""DistributedDataParallel with DistributedSampler: data-parallel training, PyTorch's way.

    python -m funcgrad.distributed.run -n 2 examples/distributed/ddp_training.py

Every rank holds a replica of the model (DDP broadcasts rank 0's parameters when it is
built) and trains on its own share of each epoch's data (the sampler); during backward,
DDP averages the gradients across the ranks in buckets, so every replica takes the same
optimiser step and the replicas stay identical. The seed's troubleshooting row for "no
speed-up with several GPUs" is exactly this recipe: DDP (not DataParallel), a
DistributedSampler with set_epoch, and a correctly initialised process group.
"""
import numpy as np

import funcgrad.torch as torch
import funcgrad.torch.distributed as dist
from funcgrad.torch.nn.parallel import DistributedDataParallel as DDP
from funcgrad.torch.utils.data.distributed import DistributedSampler

dist.init_process_group("gloo")
rank, world = dist.get_rank(), dist.get_world_size()

rng = np.random.RandomState(0)  # the same dataset on every rank
inputs = rng.randn(64, 5).astype(np.float32)
targets = (inputs @ rng.randn(5, 1) + 0.1 * rng.randn(64, 1)).astype(np.float32)

torch.manual_seed(rank)  # different on purpose: DDP makes them equal
model = DDP(torch.nn.Sequential(torch.nn.Linear(5, 16), torch.nn.Tanh(),
                                torch.nn.Linear(16, 1)))
opt = torch.optim.SGD(model.parameters(), lr=0.1)
sampler = DistributedSampler(range(len(inputs)), shuffle=True, seed=0)

losses = []
for epoch in range(8):
    sampler.set_epoch(epoch)  # a new shuffle each epoch, the same on every rank
    order = list(sampler)
    for start in range(0, len(order), 8):
        batch = order[start:start + 8]
        x, y = torch.tensor(inputs[batch]), torch.tensor(targets[batch])
        opt.zero_grad()
        loss = torch.nn.functional.mse_loss(model(x), y)
        loss.backward()  # gradients are averaged across ranks here
        opt.step()
    total = loss.detach().clone()
    dist.all_reduce(total, op=dist.ReduceOp.AVG)
    losses.append(total.item())
    if rank == 0:
        print(f"epoch {epoch}: loss {total.item():.4f}")

replicas = [None] * world
dist.all_gather_object(replicas, [p.detach().numpy().copy() for p in model.parameters()])
assert all(np.array_equal(a, b) for other in replicas for a, b in zip(replicas[0], other))
assert losses[-1] < losses[0] / 2, losses
dist.destroy_process_group()
