"""`DataLoader`: batches from a dataset, in the order of a sampler, as PyTorch's.

The options and their checks are PyTorch 2.13's: ``batch_size``/``drop_last`` wrap the
sampler in a `BatchSampler`; ``shuffle=True`` uses a `RandomSampler` on ``generator``;
``batch_sampler`` replaces all three; ``batch_size=None`` turns batching off (then
``collate_fn`` defaults to `default_convert`). An `IterableDataset` takes no sampler:
batches are consecutive items of its stream.

``num_workers > 0`` runs that many workers *in this process* (funcgrad has no worker
processes; see `_utils.worker`), with a warning: what a program sees is what PyTorch's
workers give it (the batches and their order, ``worker_init_fn``, `get_worker_info`, each
worker's seeds, the sharding of iterable datasets, ``persistent_workers``), but loading
does not overlap with training. ``timeout``, ``prefetch_factor``,
``multiprocessing_context`` and ``in_order`` are checked as PyTorch checks them and
change nothing else; ``pin_memory`` has no pinned memory to use (PyTorch's warning is
given when no GPU is present).

Each new iterator draws a base seed from ``generator`` (or the default generator), as
PyTorch's does, before its sampler draws its own; so ``torch.manual_seed`` or a seeded
``generator`` makes the order reproducible (the permutations are funcgrad's, not the
numbers PyTorch would draw).
"""
from __future__ import annotations

import collections
import itertools
import multiprocessing
import warnings
from math import ceil
from typing import Any, Callable, Iterator

from funcgrad.torch.utils.data._utils import collate as _collate
from funcgrad.torch.utils.data._utils.fetch import IterableDatasetFetcher, MapDatasetFetcher
from funcgrad.torch.utils.data._utils.worker import InProcessWorker
from funcgrad.torch.utils.data.dataset import IterableDataset
from funcgrad.torch.utils.data.sampler import (BatchSampler, RandomSampler, Sampler,
                                               SequentialSampler, draw_seed)
from funcgrad.torch import accelerator

__all__ = ["DataLoader"]

_FROZEN = ("batch_size", "batch_sampler", "sampler", "drop_last", "dataset",
           "persistent_workers")


class _InfiniteConstantSampler(Sampler):
    """The keys of an iterable dataset's batches: placeholders, forever."""

    def __iter__(self) -> Iterator[None]:
        while True:
            yield None


class DataLoader:
    """Iterate over batches of ``dataset``; see the module docstring for the options."""

    _initialized = False

    def __init__(self, dataset: Any, batch_size: int | None = 1, shuffle: bool | None = None,
                 sampler: Any = None, batch_sampler: Any = None, num_workers: int = 0,
                 collate_fn: Callable | None = None, pin_memory: bool = False,
                 drop_last: bool = False, timeout: float = 0,
                 worker_init_fn: Callable | None = None, multiprocessing_context: Any = None,
                 generator: Any = None, *, prefetch_factor: int | None = None,
                 persistent_workers: bool = False, pin_memory_device: str = "",
                 in_order: bool = True) -> None:
        prefetch_factor = _check_workers(num_workers, timeout, prefetch_factor,
                                         persistent_workers)
        self.dataset = dataset
        self.num_workers = num_workers
        self.prefetch_factor = prefetch_factor
        self.pin_memory = pin_memory
        self.pin_memory_device = pin_memory_device
        self.timeout = timeout
        self.worker_init_fn = worker_init_fn
        self.multiprocessing_context = multiprocessing_context
        self.in_order = in_order
        self._iterable = isinstance(dataset, IterableDataset)
        if self._iterable:
            _check_iterable_options(shuffle, sampler, batch_sampler)
        else:
            shuffle = bool(shuffle)
        batch_size, drop_last = _check_batching(batch_size, shuffle, sampler, batch_sampler,
                                                drop_last)
        if sampler is None:
            sampler = (_InfiniteConstantSampler() if self._iterable else
                       RandomSampler(dataset, generator=generator) if shuffle else
                       SequentialSampler(dataset))
        if batch_size is not None and batch_sampler is None:
            batch_sampler = BatchSampler(sampler, batch_size, drop_last)
        self.batch_size = batch_size
        self.drop_last = drop_last
        self.sampler = sampler
        self.batch_sampler = batch_sampler
        self.generator = generator
        if collate_fn is None:
            collate_fn = (_collate.default_collate if self._auto_collation else
                          _collate.default_convert)
        self.collate_fn = collate_fn
        self.persistent_workers = persistent_workers
        self._IterableDataset_len_called = None
        self._iterator = None
        self._initialized = True
        if num_workers > 0:
            warnings.warn(f"DataLoader(num_workers={num_workers}): funcgrad.torch has no "
                          f"worker processes, so the {num_workers} workers take turns in "
                          "this process. Batches, their order, worker_init_fn, "
                          "get_worker_info() and per-worker seeds are as with PyTorch's "
                          "workers, but loading does not overlap with training; pass "
                          "num_workers=0 to silence this warning.", UserWarning, stacklevel=2)

    @property
    def multiprocessing_context(self) -> Any:
        return self._multiprocessing_context

    @multiprocessing_context.setter
    def multiprocessing_context(self, context: Any) -> None:
        if context is not None:
            if self.num_workers <= 0:
                raise ValueError("multiprocessing_context can only be used with multi-process "
                                 "loading (num_workers > 0), but got "
                                 f"num_workers={self.num_workers}")
            if isinstance(context, str):
                methods = multiprocessing.get_all_start_methods()
                if context not in methods:
                    raise ValueError("multiprocessing_context option should specify a valid "
                                     f"start method in {methods!r}, but got "
                                     f"multiprocessing_context={context!r}")
                context = multiprocessing.get_context(context)
            if not isinstance(context, multiprocessing.context.BaseContext):
                raise TypeError("multiprocessing_context option should be a valid context "
                                "object or a string specifying the start method, but got "
                                f"multiprocessing_context={context}")
        self._multiprocessing_context = context

    def __setattr__(self, name: str, value: Any) -> None:
        if self._initialized and name in _FROZEN:
            raise ValueError(f"{name} attribute should not be set after "
                             f"{type(self).__name__} is initialized")
        super().__setattr__(name, value)

    @property
    def _auto_collation(self) -> bool:
        return self.batch_sampler is not None

    @property
    def _index_sampler(self) -> Any:
        return self.batch_sampler if self._auto_collation else self.sampler

    def __iter__(self) -> "_DataLoaderIter":
        if self.persistent_workers and self.num_workers > 0:
            if self._iterator is None:
                self._iterator = _DataLoaderIter(self)
            else:
                self._iterator._reset(self)
            return self._iterator
        return _DataLoaderIter(self)

    def __len__(self) -> int:
        """The number of batches: from the sampler, or for an iterable dataset from its
        ``len()`` (then fetching more batches than that gives PyTorch's warning)."""
        if not self._iterable:
            return len(self._index_sampler)
        length = self._IterableDataset_len_called = len(self.dataset)
        if self.batch_size is not None:
            length = length // self.batch_size if self.drop_last else \
                ceil(length / self.batch_size)
        return length


def _check_workers(num_workers: int, timeout: float, prefetch_factor: int | None,
                   persistent_workers: bool) -> int | None:
    if num_workers < 0:
        raise ValueError("num_workers option should be non-negative; use num_workers=0 to "
                         "disable multiprocessing.")
    if timeout < 0:
        raise ValueError("timeout option should be non-negative")
    if num_workers == 0 and prefetch_factor is not None:
        raise ValueError("prefetch_factor option could only be specified in multiprocessing."
                         "let num_workers > 0 to enable multiprocessing, otherwise set "
                         "prefetch_factor to None.")
    if num_workers > 0 and prefetch_factor is None:
        prefetch_factor = 2
    elif prefetch_factor is not None and prefetch_factor < 0:
        raise ValueError("prefetch_factor option should be non-negative")
    if persistent_workers and num_workers == 0:
        raise ValueError("persistent_workers option needs num_workers > 0")
    return prefetch_factor


def _check_iterable_options(shuffle: Any, sampler: Any, batch_sampler: Any) -> None:
    if shuffle not in {False, None}:
        raise ValueError("DataLoader with IterableDataset: expected unspecified shuffle "
                         f"option, but got shuffle={shuffle}")
    if sampler is not None:
        raise ValueError("DataLoader with IterableDataset: expected unspecified sampler "
                         f"option, but got sampler={sampler}")
    if batch_sampler is not None:
        raise ValueError("DataLoader with IterableDataset: expected unspecified batch_sampler "
                         f"option, but got batch_sampler={batch_sampler}")


def _check_batching(batch_size: Any, shuffle: Any, sampler: Any, batch_sampler: Any,
                    drop_last: bool) -> tuple:
    if sampler is not None and shuffle:
        raise ValueError("sampler option is mutually exclusive with shuffle")
    if batch_sampler is not None:
        if batch_size != 1 or shuffle or sampler is not None or drop_last:
            raise ValueError("batch_sampler option is mutually exclusive with batch_size, "
                             "shuffle, sampler, and drop_last")
        return None, False
    if batch_size is None and drop_last:
        raise ValueError("batch_size=None option disables auto-batching and is mutually "
                         "exclusive with drop_last")
    return batch_size, drop_last


class _DataLoaderIter:
    """One pass over a DataLoader (reused across passes with ``persistent_workers``)."""

    def __init__(self, loader: DataLoader) -> None:
        if loader.num_workers == 0 and loader.timeout != 0:
            raise AssertionError("_SingleProcessDataLoaderIter requires timeout == 0 (timeout "
                                 "only applies with num_workers > 0)")
        if loader.pin_memory:
            _warn_pin_memory(loader)
        self._dataset = loader.dataset
        self._iterable = loader._iterable
        self._auto_collation = loader._auto_collation
        self._drop_last = loader.drop_last
        self._index_sampler = loader._index_sampler
        self._num_workers = loader.num_workers
        self._collate_fn = loader.collate_fn
        self._persistent = loader.persistent_workers
        self._sampler_iter = iter(self._index_sampler)
        self._base_seed = draw_seed(loader.generator)
        self._num_yielded = 0
        self._IterableDataset_len_called = loader._IterableDataset_len_called
        if self._num_workers == 0:
            self._fetcher = self._make_fetcher()
            return
        self._prefetch = loader.prefetch_factor * self._num_workers
        self._workers = [InProcessWorker(i, self._num_workers, self._base_seed,
                                         self._dataset, loader.worker_init_fn,
                                         self._make_fetcher)
                         for i in range(self._num_workers)]
        self._start_tasks()

    def _make_fetcher(self) -> Any:
        kind = IterableDatasetFetcher if self._iterable else MapDatasetFetcher
        return kind(self._dataset, self._auto_collation, self._collate_fn, self._drop_last)

    def _start_tasks(self) -> None:
        """Hand out the first keys, ``prefetch_factor`` per worker, as PyTorch's loader
        does when it starts (so the sampler draws at the same moments)."""
        self._tasks: collections.deque = collections.deque()
        self._next_worker = itertools.cycle(range(self._num_workers))
        for _ in range(self._prefetch):
            self._put_task()

    def _put_task(self) -> None:
        """The sampler's next keys, for the next worker (in turn) that is not done."""
        try:
            keys = next(self._sampler_iter)
        except StopIteration:
            return
        for _ in range(self._num_workers):
            worker_id = next(self._next_worker)
            if not self._workers[worker_id].done:
                self._tasks.append((worker_id, keys))
                return

    def _reset(self, loader: DataLoader) -> None:
        """A new pass of a persistent iterator: a new sampler pass, the same workers."""
        self._sampler_iter = iter(self._index_sampler)
        self._num_yielded = 0
        self._IterableDataset_len_called = loader._IterableDataset_len_called
        for worker in self._workers:
            worker.restart()
        self._start_tasks()

    def __iter__(self) -> "_DataLoaderIter":
        return self

    def __len__(self) -> int:
        return len(self._index_sampler)

    def __next__(self) -> Any:
        data = self._next_data()
        self._num_yielded += 1
        expected = self._IterableDataset_len_called
        if self._iterable and expected is not None and self._num_yielded > expected:
            message = (f"Length of IterableDataset {self._dataset} was reported to be "
                       f"{expected}(when accessing len(dataloader)), but "
                       f"{self._num_yielded} samples have been fetched. ")
            if self._num_workers > 0:
                message += ("For multiprocessing data-loading, this could be caused by not "
                            "properly configuring the IterableDataset replica at each "
                            "worker. Please see https://pytorch.org/docs/stable/data.html"
                            "#torch.utils.data.IterableDataset for examples.")
            warnings.warn(message, stacklevel=2)
        return data

    def _next_data(self) -> Any:
        if self._num_workers == 0:
            return self._fetcher.fetch(next(self._sampler_iter))
        while self._tasks:
            worker_id, keys = self._tasks.popleft()
            worker = self._workers[worker_id]
            if worker.done:  # handed out before its worker's stream ended: dropped
                continue
            try:
                with worker.active():
                    data = worker.fetcher.fetch(keys)
            except StopIteration:
                worker.done = True
                self._put_task()
                continue
            self._put_task()
            return data
        raise StopIteration

    def __getstate__(self) -> Any:
        raise NotImplementedError(f"{type(self).__name__} cannot be pickled")


def _warn_pin_memory(loader: DataLoader) -> None:
    if loader.pin_memory_device:
        warnings.warn("pin_memory_device is deprecated, the current accelerator will be used "
                      f"as the device,ignore pin_memory_device='{loader.pin_memory_device}'.",
                      stacklevel=3)
    if not accelerator.is_available():
        warnings.warn("'pin_memory' argument is set as true but no accelerator is found, then "
                      "device pinned memory won't be used.", stacklevel=3)
