"""Process groups: every rank joins the default group, then sub-groups of it.

    python -m funcgrad.distributed.run -n 4 examples/distributed/process_group.py

A process group is a set of processes that run collectives together. The launcher starts
N copies of this script; init_process_group joins them into the default group, in which
each has a rank (0 .. N-1). new_group makes a sub-group, which every rank must create
(ranks outside it get GroupMember.NON_GROUP_MEMBER); collectives then name the group.
"""
import funcgrad.torch as torch
import funcgrad.torch.distributed as dist

dist.init_process_group("gloo")  # "mpi" works too: both run on MPI here
rank, world = dist.get_rank(), dist.get_world_size()
print(f"rank {rank} of {world}, backend {dist.get_backend()}")

evens = dist.new_group([r for r in range(world) if r % 2 == 0])
odds = dist.new_group([r for r in range(world) if r % 2 == 1])
mine = evens if rank % 2 == 0 else odds
total = torch.tensor([float(rank)])
dist.all_reduce(total, group=mine)  # the sum over my half of the ranks only
expected = sum(r for r in range(world) if r % 2 == rank % 2)
assert total.item() == expected, (total, expected)
print(f"rank {rank}: sum of the ranks in my group {dist.get_process_group_ranks(mine)} "
      f"is {total.item():g}")

dist.barrier()  # everyone waits here until all ranks arrive
dist.destroy_process_group()
