"""Fetchers: one batch (or sample) from a dataset, for a list of keys from the sampler."""
from __future__ import annotations

from typing import Any, Callable

__all__ = ["MapDatasetFetcher", "IterableDatasetFetcher"]


class MapDatasetFetcher:
    """``collate([dataset[k] for k in keys])`` (``dataset.__getitems__(keys)`` when the
    dataset has it); without batching, ``collate(dataset[key])``."""

    def __init__(self, dataset: Any, auto_collation: bool, collate_fn: Callable,
                 drop_last: bool) -> None:
        self.dataset, self.auto_collation = dataset, auto_collation
        self.collate_fn, self.drop_last = collate_fn, drop_last

    def fetch(self, keys: Any) -> Any:
        if not self.auto_collation:
            return self.collate_fn(self.dataset[keys])
        many = getattr(self.dataset, "__getitems__", None)
        data = many(keys) if many else [self.dataset[k] for k in keys]
        return self.collate_fn(data)


class IterableDatasetFetcher:
    """The next ``len(keys)`` samples of the dataset's stream (keys are placeholders),
    a shorter last batch unless ``drop_last``; StopIteration when the stream is done."""

    def __init__(self, dataset: Any, auto_collation: bool, collate_fn: Callable,
                 drop_last: bool) -> None:
        self.auto_collation, self.collate_fn, self.drop_last = (auto_collation, collate_fn,
                                                                drop_last)
        self.dataset_iter = iter(dataset)
        self.ended = False

    def fetch(self, keys: Any) -> Any:
        if self.ended:
            raise StopIteration
        if not self.auto_collation:
            return self.collate_fn(next(self.dataset_iter))
        data = []
        for _ in keys:
            try:
                data.append(next(self.dataset_iter))
            except StopIteration:
                self.ended = True
                break
        if not data or (self.drop_last and len(data) < len(keys)):
            raise StopIteration
        return self.collate_fn(data)
