"""all_reduce: combine a tensor across all ranks, in place, on every rank.

    python -m funcgrad.distributed.run -n 2 examples/distributed/all_reduce.py

The collective data-parallel training is built on: each rank contributes its tensor and
every rank ends up with the reduction (SUM, AVG, PRODUCT, MIN, MAX). With async_op=True
the call returns a Work handle at once; wait() completes it (compute can overlap the
communication in between).
"""
import funcgrad.torch as torch
import funcgrad.torch.distributed as dist

dist.init_process_group("gloo")
rank, world = dist.get_rank(), dist.get_world_size()

t = torch.tensor([1.0, 2.0, 3.0]) * (rank + 1)
dist.all_reduce(t, op=dist.ReduceOp.SUM)
scale = world * (world + 1) / 2  # 1 + 2 + ... + world
assert torch.allclose(t, torch.tensor([1.0, 2.0, 3.0]) * scale)

m = torch.tensor([float(rank)])
dist.all_reduce(m, op=dist.ReduceOp.MAX)
assert m.item() == world - 1

avg = torch.ones(4) * rank
work = dist.all_reduce(avg, op=dist.ReduceOp.AVG, async_op=True)
other = (torch.arange(4.0) ** 2).sum()  # work that does not need the result
work.wait()
assert torch.allclose(avg, torch.full((4,), (world - 1) / 2))
if rank == 0:
    print(f"sum {t.tolist()}, max {m.item():g}, average {avg.tolist()} (and {other.item():g} "
          "computed while the average was in flight)")
dist.destroy_process_group()
