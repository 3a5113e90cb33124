"""DistributedSampler: each rank's share of a dataset, reshuffled every epoch.

    python -m funcgrad.distributed.run -n 3 examples/distributed/distributed_sampler.py

The shares are disjoint and of equal size; when the dataset does not divide evenly, the
sampler pads by repeating indices (or drops the tail with drop_last=True). Forgetting
set_epoch repeats the first epoch's order every epoch.
"""
import funcgrad.torch.distributed as dist
from funcgrad.torch.utils.data.distributed import DistributedSampler

dist.init_process_group("gloo")
rank, world = dist.get_rank(), dist.get_world_size()
dataset = range(10)

for drop_last in (False, True):
    sampler = DistributedSampler(dataset, shuffle=True, seed=42, drop_last=drop_last)
    for epoch in range(2):
        sampler.set_epoch(epoch)
        shares = [None] * world
        dist.all_gather_object(shares, list(sampler))
        if rank == 0:
            print(f"drop_last={drop_last} epoch {epoch}: {shares}")
        assert all(len(s) == len(sampler) for s in shares)
        flat = [i for s in shares for i in s]
        if drop_last:
            assert len(set(flat)) == len(flat)  # disjoint, some indices dropped
        else:
            assert set(flat) == set(dataset)  # everything, a few indices twice
dist.destroy_process_group()
