"""Samplers: the order in which a DataLoader visits dataset keys, with PyTorch's semantics.

Random samplers draw from a `torch.Generator` when given one; without one, each pass draws
a fresh seed from the default generator (so ``torch.manual_seed`` makes runs repeat), as
PyTorch does. The numbers differ from PyTorch's (funcgrad's generator is PCG64, not
mt19937), the distributions do not.
"""
from __future__ import annotations

import itertools
from typing import Any, Iterable, Iterator, Sequence

from funcgrad.torch._runtime import dtypes as D
from funcgrad.torch._factories import Generator, as_tensor, multinomial, randint, randperm

__all__ = ["Sampler", "SequentialSampler", "RandomSampler", "SubsetRandomSampler",
           "WeightedRandomSampler", "BatchSampler", "draw_seed"]


class Sampler:
    """Base class: ``__iter__`` yields keys (or lists of keys, for batch samplers);
    ``__len__``, if defined, says how many."""

    def __init__(self, data_source: Any = None) -> None:
        pass

    def __iter__(self) -> Iterator:
        raise NotImplementedError

    def __class_getitem__(cls, item: Any) -> type:  # Sampler[int] in type hints
        return cls


def _positive_int(name: str, value: Any) -> None:
    if not isinstance(value, int) or isinstance(value, bool) or value <= 0:
        raise ValueError(f"{name} should be a positive integer value, but got "
                         f"{name}={value}")


def draw_seed(generator: Generator | None = None) -> int:
    """A non-negative int64 seed drawn from ``generator`` (the default one if None)."""
    return int(randint(0, 2 ** 63 - 1, (), generator=generator).item())


def _fresh_generator() -> Generator:
    """A generator seeded from the default one (what a sampler without one uses)."""
    return Generator().manual_seed(draw_seed())


class SequentialSampler(Sampler):
    """0, 1, ..., len(data_source) - 1."""

    def __init__(self, data_source: Any) -> None:
        self.data_source = data_source

    def __iter__(self) -> Iterator[int]:
        return iter(range(len(self.data_source)))

    def __len__(self) -> int:
        return len(self.data_source)


class RandomSampler(Sampler):
    """A random permutation of the indices (``num_samples`` of them, wrapping into new
    permutations when more than the dataset), or, with ``replacement``, ``num_samples``
    independent uniform draws."""

    def __init__(self, data_source: Any, replacement: bool = False,
                 num_samples: int | None = None, generator: Generator | None = None) -> None:
        self.data_source = data_source
        self.replacement = replacement
        self._num_samples = num_samples
        self.generator = generator
        if not isinstance(self.replacement, bool):
            raise TypeError("replacement should be a boolean value, but got "
                            f"replacement={self.replacement}")
        if not isinstance(self.num_samples, int) or self.num_samples <= 0:
            raise ValueError("num_samples should be a positive integer value, but got "
                             f"num_samples={self.num_samples}")

    @property
    def num_samples(self) -> int:
        return len(self.data_source) if self._num_samples is None else self._num_samples

    def __iter__(self) -> Iterator[int]:
        n = len(self.data_source)
        g = self.generator if self.generator is not None else _fresh_generator()
        count = self.num_samples
        if self.replacement:  # drawn 32 at a time, as they are taken (PyTorch's chunks)
            for _ in range(count // 32):
                yield from randint(high=n, size=(32,), dtype=D.int64, generator=g).tolist()
            yield from randint(high=n, size=(count % 32,), dtype=D.int64,
                               generator=g).tolist()
        else:
            for _ in range(count // n):
                yield from randperm(n, generator=g).tolist()
            yield from randperm(n, generator=g).tolist()[:count % n]

    def __len__(self) -> int:
        return self.num_samples


class SubsetRandomSampler(Sampler):
    """The given ``indices`` in a random order."""

    def __init__(self, indices: Sequence[int], generator: Generator | None = None) -> None:
        self.indices = indices
        self.generator = generator

    def __iter__(self) -> Iterator[int]:
        for i in randperm(len(self.indices), generator=self.generator).tolist():
            yield self.indices[i]

    def __len__(self) -> int:
        return len(self.indices)


class WeightedRandomSampler(Sampler):
    """``num_samples`` indices of ``weights`` drawn with probabilities proportional to
    the weights (with or without replacement; `torch.multinomial`)."""

    def __init__(self, weights: Sequence[float], num_samples: int, replacement: bool = True,
                 generator: Generator | None = None) -> None:
        _positive_int("num_samples", num_samples)
        if not isinstance(replacement, bool):
            raise ValueError("replacement should be a boolean value, but got "
                             f"replacement={replacement}")
        weights_tensor = as_tensor(weights, dtype=D.float64)
        if len(weights_tensor.shape) != 1:
            raise ValueError("weights should be a 1d sequence but given weights have shape "
                             f"{tuple(weights_tensor.shape)}")
        self.weights = weights_tensor
        self.num_samples = num_samples
        self.replacement = replacement
        self.generator = generator

    def __iter__(self) -> Iterator[int]:
        yield from multinomial(self.weights, self.num_samples, self.replacement,
                               generator=self.generator).tolist()

    def __len__(self) -> int:
        return self.num_samples


class BatchSampler(Sampler):
    """Lists of ``batch_size`` consecutive keys of ``sampler`` (the last one shorter
    unless ``drop_last``)."""

    def __init__(self, sampler: Iterable, batch_size: int, drop_last: bool) -> None:
        _positive_int("batch_size", batch_size)
        if not isinstance(drop_last, bool):
            raise ValueError(f"drop_last should be a boolean value, but got "
                             f"drop_last={drop_last}")
        self.sampler = sampler
        self.batch_size = batch_size
        self.drop_last = drop_last

    def __iter__(self) -> Iterator[list]:
        keys = iter(self.sampler)
        while True:
            batch = list(itertools.islice(keys, self.batch_size))
            if not batch or (self.drop_last and len(batch) < self.batch_size):
                return
            yield batch

    def __len__(self) -> int:
        if self.drop_last:
            return len(self.sampler) // self.batch_size
        return (len(self.sampler) + self.batch_size - 1) // self.batch_size
