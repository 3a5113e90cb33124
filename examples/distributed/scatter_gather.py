"""scatter and gather: rank 0 hands out one piece of work to each rank and collects the
results (all_gather: everyone collects them).

    python -m funcgrad.distributed.run -n 3 examples/distributed/scatter_gather.py
"""
import funcgrad.torch as torch
import funcgrad.torch.distributed as dist

dist.init_process_group("gloo")
rank, world = dist.get_rank(), dist.get_world_size()

pieces = list(torch.arange(world * 4.0).reshape(world, 4)) if rank == 0 else None
mine = torch.zeros(4)
dist.scatter(mine, pieces, src=0)  # rank r gets row r
result = (mine ** 2).sum(0, keepdim=True)  # each rank's share of the work

results = [torch.zeros(1) for _ in range(world)] if rank == 0 else None
dist.gather(result, results, dst=0)
if rank == 0:
    expected = (torch.arange(world * 4.0).reshape(world, 4) ** 2).sum(1)
    assert torch.allclose(torch.cat(results), expected)
    print(f"rank 0 gathered {[r.item() for r in results]}")

everyone = [torch.zeros(1) for _ in range(world)]
dist.all_gather(everyone, result)  # the same list on every rank
assert everyone[rank].item() == result.item()
dist.destroy_process_group()
