"""DataLoader workers, run inside the calling process.

funcgrad has no worker processes: a DataLoader with ``num_workers=N`` makes N
`InProcessWorker`s that take turns, each with what a PyTorch worker has of its own: its
seed (``base_seed + id``), random streams seeded from it (the facade's default generator,
Python's ``random`` and numpy's global generator, swapped in around each of its fetches so
the caller's streams are untouched), its `WorkerInfo` (what `get_worker_info` returns while
it runs) and its fetcher (for an iterable dataset, its own iterator, made after
``worker_init_fn``). The workers share the dataset object itself: PyTorch's work on copies,
so a dataset that mutates itself while loading will see the other workers' changes here.
"""
from __future__ import annotations

import contextlib
import random
from dataclasses import dataclass
from typing import Any, Callable, Iterator

import numpy as np

from funcgrad.torch._factories import default_generator, manual_seed

__all__ = ["WorkerInfo", "get_worker_info", "InProcessWorker"]


@dataclass(frozen=True)
class WorkerInfo:
    """What a worker knows about itself: ``id`` (0..num_workers-1), ``num_workers``,
    ``seed`` and the ``dataset`` it loads from."""
    id: int
    num_workers: int
    seed: int
    dataset: Any
    rng: Any = None
    worker_method: str = "in_process"


_current: list = [None]  # the WorkerInfo of the worker running now (None: the main program)


def get_worker_info() -> WorkerInfo | None:
    """The running DataLoader worker's `WorkerInfo` (in ``worker_init_fn``, in the dataset's
    ``__iter__``/``__getitem__`` and in ``collate_fn``), or None outside workers. Use it to
    shard an `IterableDataset` among the workers."""
    return _current[0]


def _capture() -> tuple:
    return default_generator.get_state(), random.getstate(), np.random.get_state()


def _restore(states: tuple) -> None:
    default_generator.set_state(states[0])
    random.setstate(states[1])
    np.random.set_state(states[2])


class InProcessWorker:
    """One worker: its info, random streams and fetcher (made by ``make_fetcher`` after
    ``init_fn(id)``, both inside the worker)."""

    def __init__(self, worker_id: int, num_workers: int, base_seed: int, dataset: Any,
                 init_fn: Callable | None, make_fetcher: Callable) -> None:
        seed = base_seed + worker_id
        self.info = WorkerInfo(id=worker_id, num_workers=num_workers, seed=seed,
                               dataset=dataset)
        outside = _capture()
        manual_seed(seed)
        random.seed(seed)
        np.random.seed(np.random.SeedSequence([worker_id, base_seed & 0xFFFFFFFF,
                                               base_seed >> 32]).generate_state(4))
        self._states = _capture()
        _restore(outside)
        self.make_fetcher = make_fetcher
        self.done = False
        with self.active():
            if init_fn is not None:
                init_fn(worker_id)
            self.fetcher = make_fetcher()

    @contextlib.contextmanager
    def active(self) -> Iterator[None]:
        """Run the block as this worker: its info and random streams in place."""
        outside, outer_info = _capture(), _current[0]
        _restore(self._states)
        _current[0] = self.info
        try:
            yield
        finally:
            self._states = _capture()
            _restore(outside)
            _current[0] = outer_info

    def restart(self) -> None:
        """A new epoch of a persistent worker: a fresh fetcher, the streams continue."""
        self.done = False
        with self.active():
            self.fetcher = self.make_fetcher()
