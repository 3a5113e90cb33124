"""`DistributedSampler`: each rank's share of a dataset's indices, PyTorch's way.

Every rank builds the same index list, the same permutation when ``shuffle`` (from a
generator seeded with ``seed + epoch``; call `set_epoch` at the start of every epoch, or
each epoch repeats the previous order), then makes it a multiple of ``num_replicas``: by
repeating indices from its start (padding, the default) or by dropping the tail
(``drop_last``). Rank r takes every ``num_replicas``-th index starting at r, so the ranks'
shares are disjoint (apart from the padding) and of one size, as collective training needs.
"""
from __future__ import annotations

import math
from typing import Any, Iterator

from funcgrad.torch.utils.data.sampler import Sampler
from funcgrad.torch import distributed as dist

__all__ = ["DistributedSampler"]


class DistributedSampler(Sampler):
    """Sampler restricting data loading to one rank's share of ``dataset``."""

    def __init__(self, dataset: Any, num_replicas: int | None = None, rank: int | None = None,
                 shuffle: bool = True, seed: int = 0, drop_last: bool = False) -> None:
        if num_replicas is None or rank is None:
            if not dist.is_available():
                raise RuntimeError("Requires distributed package to be available")
            num_replicas = dist.get_world_size() if num_replicas is None else num_replicas
            rank = dist.get_rank() if rank is None else rank
        if rank >= num_replicas or rank < 0:
            raise ValueError(f"Invalid rank {rank}, rank should be in the interval [0, "
                             f"{num_replicas - 1}]")
        self.dataset = dataset
        self.num_replicas = num_replicas
        self.rank = rank
        self.epoch = 0
        self.drop_last = drop_last
        if self.drop_last and len(dataset) % num_replicas != 0:
            self.num_samples = math.ceil((len(dataset) - num_replicas) / num_replicas)
        else:
            self.num_samples = math.ceil(len(dataset) / num_replicas)
        self.total_size = self.num_samples * num_replicas
        self.shuffle = shuffle
        self.seed = seed

    def __iter__(self) -> Iterator[int]:
        import funcgrad.torch as torch  # the facade's generator and randperm
        n = len(self.dataset)
        if self.shuffle:
            g = torch.Generator()
            g.manual_seed(self.seed + self.epoch)
            indices = torch.randperm(n, generator=g).tolist()
        else:
            indices = list(range(n))
        if not self.drop_last:
            padding = self.total_size - len(indices)
            if padding <= len(indices):
                indices += indices[:padding]
            else:
                indices += (indices * math.ceil(padding / len(indices)))[:padding]
        else:
            indices = indices[:self.total_size]
        return iter(indices[self.rank:self.total_size:self.num_replicas])

    def __len__(self) -> int:
        return self.num_samples

    def set_epoch(self, epoch: int) -> None:
        """Use ``seed + epoch`` for the next shuffle (call it before each epoch)."""
        self.epoch = epoch
