"""broadcast: rank 0's tensor (or Python objects) copied to every rank.

    python -m funcgrad.distributed.run -n 2 examples/distributed/broadcast.py

Typical use: every rank starts from the same initial weights or configuration, chosen on
one rank. (DistributedDataParallel does this for a model's parameters when it is built.)
"""
import funcgrad.torch as torch
import funcgrad.torch.distributed as dist

dist.init_process_group("gloo")
rank = dist.get_rank()

torch.manual_seed(rank)  # a different random start on every rank ...
weights = torch.randn(3, 2)
dist.broadcast(weights, src=0)  # ... replaced by rank 0's
everyone = [None] * dist.get_world_size()
dist.all_gather_object(everyone, weights.tolist())
assert all(w == everyone[0] for w in everyone)

config = [{"lr": 0.1, "epochs": 3} if rank == 0 else None]
dist.broadcast_object_list(config, src=0)  # any picklable objects
assert config[0]["lr"] == 0.1
if rank == 0:
    print(f"every rank holds rank 0's weights {weights.tolist()} and config {config[0]}")
dist.destroy_process_group()
