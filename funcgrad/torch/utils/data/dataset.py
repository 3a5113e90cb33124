"""Datasets: the map-style `Dataset` (``__getitem__`` + ``__len__``), the iterable-style
`IterableDataset` (``__iter__``), and their compositions, with PyTorch's semantics.

``ds1 + ds2`` concatenates (`ConcatDataset`, or `ChainDataset` for iterables); `Subset`
views some indices of a dataset; `random_split` splits a dataset into non-overlapping
subsets of given lengths or fractions, in an order drawn from a `torch.Generator`.
"""
from __future__ import annotations

import bisect
import itertools
import math
import warnings
from typing import Any, Iterable, Sequence

from funcgrad.torch._factories import Generator, default_generator, randperm

__all__ = ["Dataset", "IterableDataset", "TensorDataset", "StackDataset", "ConcatDataset",
           "ChainDataset", "Subset", "random_split"]


class Dataset:
    """A map from keys (usually indices 0..len-1) to samples. Subclasses define
    ``__getitem__`` (and ``__len__``, which the default samplers need); a
    ``__getitems__(indices)`` method, if defined, fetches a whole batch at once."""

    def __getitem__(self, index: Any) -> Any:
        raise NotImplementedError("Subclasses of Dataset should implement __getitem__.")

    def __add__(self, other: "Dataset") -> "ConcatDataset":
        return ConcatDataset([self, other])

    def __class_getitem__(cls, item: Any) -> type:  # Dataset[T] in type hints, as PyTorch's
        return cls


class IterableDataset(Dataset):
    """A stream of samples: subclasses define ``__iter__``. With several DataLoader workers
    each worker iterates its own copy, so shard the stream with `get_worker_info`."""

    def __iter__(self) -> Any:
        raise NotImplementedError("Subclasses of IterableDataset should implement __iter__.")

    def __add__(self, other: Dataset) -> "ChainDataset":
        return ChainDataset([self, other])


class TensorDataset(Dataset):
    """Samples are ``tuple(t[i] for t in tensors)``: the tensors share their first size."""

    def __init__(self, *tensors: Any) -> None:
        if any(tensors[0].size(0) != t.size(0) for t in tensors):
            raise AssertionError("Size mismatch between tensors")
        self.tensors = tensors

    def __getitem__(self, index: Any) -> tuple:
        return tuple(t[index] for t in self.tensors)

    def __len__(self) -> int:
        return self.tensors[0].size(0)


class StackDataset(Dataset):
    """Samples are tuples (``StackDataset(a, b)``) or dicts (``StackDataset(x=a, y=b)``)
    of the samples of datasets of one length."""

    def __init__(self, *args: Dataset, **kwargs: Dataset) -> None:
        if args and kwargs:
            raise ValueError("Supported either ``tuple``- (via ``args``) or``dict``- (via "
                             "``kwargs``) like input/output, but both types are given.")
        if not args and not kwargs:
            raise ValueError("At least one dataset should be passed")
        parts = list(args) or list(kwargs.values())
        self._length = len(parts[0])
        if any(self._length != len(d) for d in parts):
            raise ValueError("Size mismatch between datasets")
        self.datasets = args or kwargs

    def __getitem__(self, index: Any) -> Any:
        if isinstance(self.datasets, dict):
            return {k: d[index] for k, d in self.datasets.items()}
        return tuple(d[index] for d in self.datasets)

    def __getitems__(self, indices: list) -> list:
        named = isinstance(self.datasets, dict)
        parts = self.datasets.items() if named else enumerate(self.datasets)
        columns = {key: _fetch_many(d, indices) for key, d in parts}
        if named:
            return [{k: columns[k][i] for k in columns} for i in range(len(indices))]
        return [tuple(columns[k][i] for k in columns) for i in range(len(indices))]

    def __len__(self) -> int:
        return self._length


def _fetch_many(dataset: Dataset, indices: list) -> list:
    many = getattr(dataset, "__getitems__", None)
    if not callable(many):
        return [dataset[i] for i in indices]
    items = many(indices)
    if len(items) != len(indices):
        raise ValueError(f"Nested dataset's output size mismatch. Expected {len(indices)}, "
                         f"got {len(items)}")
    return items


class ConcatDataset(Dataset):
    """The samples of ``datasets`` one after another (map-style datasets only)."""

    @staticmethod
    def cumsum(sequence: Iterable) -> list:
        return list(itertools.accumulate(len(d) for d in sequence))

    def __init__(self, datasets: Iterable[Dataset]) -> None:
        self.datasets = list(datasets)
        if not self.datasets:
            raise AssertionError("datasets should not be an empty iterable")
        for d in self.datasets:
            if isinstance(d, IterableDataset):
                raise AssertionError("ConcatDataset does not support IterableDataset")
        self.cumulative_sizes = self.cumsum(self.datasets)

    def __len__(self) -> int:
        return self.cumulative_sizes[-1]

    def __getitem__(self, idx: int) -> Any:
        if idx < 0:
            if -idx > len(self):
                raise ValueError("absolute value of index should not exceed dataset length")
            idx = len(self) + idx
        which = bisect.bisect_right(self.cumulative_sizes, idx)
        start = self.cumulative_sizes[which - 1] if which else 0
        return self.datasets[which][idx - start]

    @property
    def cummulative_sizes(self) -> list:
        warnings.warn("`cummulative_sizes` attribute is renamed to `cumulative_sizes`",
                      FutureWarning, stacklevel=2)
        return self.cumulative_sizes


class ChainDataset(IterableDataset):
    """The streams of iterable ``datasets`` one after another."""

    def __init__(self, datasets: Iterable[Dataset]) -> None:
        self.datasets = datasets

    def __iter__(self) -> Any:
        for d in self.datasets:
            if not isinstance(d, IterableDataset):
                raise AssertionError("ChainDataset only supports IterableDataset")
            yield from d

    def __len__(self) -> int:
        total = 0
        for d in self.datasets:
            if not isinstance(d, IterableDataset):
                raise AssertionError("ChainDataset only supports IterableDataset")
            total += len(d)
        return total


class Subset(Dataset):
    """The samples of ``dataset`` at ``indices``, renumbered 0..len(indices)-1."""

    def __init__(self, dataset: Dataset, indices: Sequence[int]) -> None:
        self.dataset = dataset
        self.indices = indices
        cls = type(self)
        if cls.__getitem__ is not Subset.__getitem__ and \
                cls.__getitems__ is Subset.__getitems__:
            raise NotImplementedError(
                f"{cls.__name__} overrides __getitem__ but not __getitems__. When subclassing "
                "Subset and overriding __getitem__, you must also override __getitems__ to "
                "ensure DataLoader works correctly with your custom logic. A simple "
                "implementation:\n\ndef __getitems__(self, indices):\n    return "
                "[self.__getitem__(idx) for idx in indices]")

    def __getitem__(self, idx: Any) -> Any:
        if isinstance(idx, list):
            return self.dataset[[self.indices[i] for i in idx]]
        return self.dataset[self.indices[idx]]

    def __getitems__(self, indices: list) -> list:
        inner = [self.indices[i] for i in indices]
        many = getattr(self.dataset, "__getitems__", None)
        return many(inner) if callable(many) else [self.dataset[i] for i in inner]

    def __len__(self) -> int:
        return len(self.indices)


def random_split(dataset: Dataset, lengths: Sequence[Any],
                 generator: Generator | None = default_generator) -> list:
    """Split ``dataset`` into `Subset`s of the given ``lengths``, or of the given
    fractions of its length (summing to 1; the remainder goes one by one to the first
    subsets), in an order drawn from ``generator``."""
    if math.isclose(sum(lengths), 1) and sum(lengths) <= 1:
        lengths = _lengths_of_fractions(len(dataset), lengths)
    if sum(lengths) != len(dataset):
        raise ValueError("Sum of input lengths does not equal the length of the input "
                         "dataset!")
    order = randperm(sum(lengths), generator=generator).tolist()
    return [Subset(dataset, order[end - n:end])
            for end, n in zip(itertools.accumulate(lengths), lengths)]


def _lengths_of_fractions(total: int, fractions: Sequence[float]) -> list:
    lengths = []
    for i, frac in enumerate(fractions):
        if frac < 0 or frac > 1:
            raise ValueError(f"Fraction at index {i} is not between 0 and 1")
        lengths.append(math.floor(total * frac))
    for i in range(total - sum(lengths)):
        lengths[i % len(lengths)] += 1
    for i, n in enumerate(lengths):
        if n == 0:
            warnings.warn(f"Length of split at index {i} is 0. This might result in an empty "
                          "dataset.", stacklevel=3)
    return lengths
