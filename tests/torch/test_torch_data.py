"""torch.utils.data: datasets, samplers, collation and DataLoader against PyTorch's, and the
behaviour of the in-process workers, seeding and errors on their own."""
import collections
import random
import sys
import warnings

import numpy as np
import pytest

import funcgrad.torch as fg
from funcgrad.torch.utils import data as fgdata


def plain(x):
    """Batches as comparable data: tensors become (dtype, values), containers keep their
    type name."""
    if hasattr(x, "detach") and hasattr(x, "dtype"):
        return ("tensor", str(x.dtype).replace("torch.", ""), x.detach().numpy().tolist())
    if isinstance(x, dict):
        return (type(x).__name__, {k: plain(v) for k, v in x.items()})
    if isinstance(x, (list, tuple)):
        return (type(x).__name__, [plain(v) for v in x])
    return x


Point = collections.namedtuple("Point", "x y")

BATCHES = {
    "ints": [1, 2, 3],
    "floats": [1.0, 2.5],
    "bools": [True, False],
    "strings": ["a", "b"],
    "numpy arrays": [np.array([1.0, 2.0]), np.array([3.0, 4.0])],
    "numpy float32 scalars": [np.float32(1), np.float32(2)],
    "numpy int scalars": [np.int32(1), np.int32(5)],
    "dicts": [{"a": 1, "b": np.float32(2)}, {"a": 3, "b": np.float32(4)}],
    "namedtuples": [Point(1, 2.0), Point(3, 4.0)],
    "lists": [[1, 2], [3, 4]],
    "nested": [{"img": [np.ones(2), 1], "label": (1, "x")},
               {"img": [np.zeros(2), 0], "label": (0, "y")}],
}


def _tensors_of(T, batch):
    return [T.tensor([1.0, 2.0]), T.tensor([3.0, 4.0])] if batch == "tensors" else batch


@pytest.mark.parametrize("name", sorted(BATCHES) + ["tensors"])
def test_default_collate_and_convert_match_pytorch(real, name):
    batch1 = BATCHES.get(name) or _tensors_of(real, "tensors")
    batch2 = BATCHES.get(name) or _tensors_of(fg, "tensors")
    got = plain(fgdata.default_collate(batch2))
    assert got == plain(real.utils.data.default_collate(batch1))
    assert plain(fgdata.default_convert(batch2)) == plain(
        real.utils.data.default_convert(batch1))


@pytest.mark.parametrize("batch", [[[1, 2], [3]], [object()], [np.array(["a"])]])
def test_default_collate_errors_match_pytorch(real, batch):
    def error(fn):
        with pytest.raises(Exception) as info:
            fn(batch)
        return type(info.value).__name__, str(info.value)
    assert error(fgdata.default_collate) == error(real.utils.data.default_collate)


def _loader_batches(T, make_dataset, **kw):
    loader = T.utils.data.DataLoader(make_dataset(T), **kw)
    return len(loader), [plain(b) for b in loader]


def _tensor_dataset(T):
    return T.utils.data.TensorDataset(T.arange(10.0).view(10, 1), T.arange(10))


class Squares:
    """A map-style dataset (any object with __getitem__ and __len__) of dict samples."""

    def __len__(self):
        return 7

    def __getitem__(self, i):
        return {"x": np.array([i, i * i], dtype=np.float32), "i": i}


@pytest.mark.parametrize("kw", [dict(), dict(batch_size=3), dict(batch_size=3, drop_last=True),
                                dict(batch_size=None), dict(batch_size=4,
                                                            collate_fn=lambda b: len(b))])
def test_sequential_loading_matches_pytorch(real, kw):
    for make in (_tensor_dataset, lambda T: Squares()):
        assert _loader_batches(fg, make, **kw) == _loader_batches(real, make, **kw)


def test_samplers_match_pytorch(real):
    def run(T):
        D = T.utils.data
        return (list(D.BatchSampler(D.SequentialSampler(range(10)), 3, False)),
                list(D.BatchSampler(range(10), 3, True)),
                len(D.BatchSampler(range(10), 3, False)),
                len(D.RandomSampler(range(5), replacement=True, num_samples=70)),
                len(D.WeightedRandomSampler([1, 2], 9)),
                _loader_batches(T, _tensor_dataset,
                                batch_sampler=D.BatchSampler(range(0, 10, 2), 2, False)))
    assert run(fg) == run(real)


def test_datasets_match_pytorch(real):
    def run(T):
        D = T.utils.data
        base = D.TensorDataset(T.arange(6), T.arange(6) * 10)
        concat = base + D.Subset(base, [5, 0])
        stacked = D.StackDataset(a=base, b=D.Subset(base, [1, 2, 3, 4, 5, 0]))
        return (len(concat), plain(concat[6]), plain(concat[-1]), concat.cumulative_sizes,
                plain(stacked[2]), plain(stacked.__getitems__([0, 1])),
                plain(D.Subset(base, [4, 2]).__getitems__([1, 0])),
                [len(s) for s in D.random_split(range(11), [0.3, 0.3, 0.4])],
                [len(s) for s in D.random_split(range(11), [4, 7])])
    assert run(fg) == run(real)


def _sharded(T, n):
    """Each worker streams its own share of range(n) (PyTorch's documented pattern)."""
    class Shard(T.utils.data.IterableDataset):
        def __iter__(self):
            info = T.utils.data.get_worker_info()
            start, step = (0, 1) if info is None else (info.id, info.num_workers)
            return iter(range(start, n, step))

        def __len__(self):
            return n
    return Shard()


def _uneven(T):
    class Uneven(T.utils.data.IterableDataset):
        def __iter__(self):
            info = T.utils.data.get_worker_info()
            wid = 0 if info is None else info.id
            return iter(range(100 * wid, 100 * wid + 1 + 3 * wid))
    return Uneven()


@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="uses fork workers")
@pytest.mark.parametrize("case", ["sharded", "uneven", "unbatched", "map"])
def test_worker_batches_match_pytorch_workers(real, case):
    """The in-process workers hand out batches exactly as PyTorch's worker processes do."""
    make = {"sharded": lambda T: _sharded(T, 11), "uneven": _uneven,
            "unbatched": _uneven, "map": _tensor_dataset}[case]
    kw = dict(batch_size=None) if case == "unbatched" else dict(batch_size=2)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        ours = [plain(b) for b in fg.utils.data.DataLoader(make(fg), num_workers=3, **kw)]
        theirs = [plain(b) for b in real.utils.data.DataLoader(
            make(real), num_workers=3, multiprocessing_context="fork", timeout=120, **kw)]
    assert ours == theirs


def test_shuffle_is_a_permutation_reproducible_from_seeds():
    ds = fgdata.TensorDataset(fg.arange(20))

    def order(**kw):
        return [i for (b,) in fgdata.DataLoader(ds, batch_size=6, shuffle=True, **kw)
                for i in b.tolist()]
    fg.manual_seed(3)
    a = order()
    fg.manual_seed(3)
    assert order() == a and sorted(a) == list(range(20)) and a != list(range(20))
    assert order() != a  # the default generator moved on
    g = fg.Generator().manual_seed(7)
    b = order(generator=g)
    assert order(generator=fg.Generator().manual_seed(7)) == b
    assert order(generator=g) != b


def test_random_samplers():
    g = fg.Generator().manual_seed(0)
    wrap = list(fgdata.RandomSampler(range(5), num_samples=12, generator=g))
    assert sorted(wrap[:5]) == sorted(wrap[5:10]) == list(range(5)) and len(wrap) == 12
    draws = list(fgdata.RandomSampler(range(3), replacement=True, num_samples=3000,
                                      generator=g))
    assert set(draws) == {0, 1, 2} and abs(draws.count(0) / 3000 - 1 / 3) < 0.05
    sub = list(fgdata.SubsetRandomSampler([10, 20, 30], generator=g))
    assert sorted(sub) == [10, 20, 30]
    weighted = list(fgdata.WeightedRandomSampler([0.0, 1.0, 3.0], 4000, generator=g))
    assert 0 not in weighted and abs(weighted.count(2) / 4000 - 0.75) < 0.03
    no_repeat = list(fgdata.WeightedRandomSampler([1.0, 5.0, 1.0, 0.1], 4,
                                                  replacement=False, generator=g))
    assert sorted(no_repeat) == [0, 1, 2, 3]


def test_multinomial():
    g = fg.Generator().manual_seed(1)
    probs = fg.tensor([[0.2, 0.8, 0.0], [1.0, 1.0, 2.0]])
    draws = fg.multinomial(probs, 5000, replacement=True, generator=g)
    assert draws.shape == (2, 5000) and draws.dtype == fg.int64
    counts = np.bincount(draws[1].numpy(), minlength=3) / 5000
    np.testing.assert_allclose(counts, [0.25, 0.25, 0.5], atol=0.03)
    assert 2 not in draws[0].tolist()
    first = [fg.multinomial(fg.tensor([1.0, 3.0]), 2, generator=g).tolist() for _ in range(2000)]
    assert all(sorted(f) == [0, 1] for f in first)
    assert abs(sum(f[0] == 1 for f in first) / 2000 - 0.75) < 0.04
    for args, message in [((fg.ones(3), 4), "cannot sample n_sample > prob_dist.size"),
                          ((fg.zeros(3), 1), "invalid multinomial distribution"),
                          ((fg.tensor([1.0, -1.0]), 1), "probability tensor contains"),
                          ((fg.ones(3, dtype=fg.int64), 1), "only supports floating-point "
                                                             "dtypes for input, got: Long"),
                          ((fg.ones(2, 2, 2), 1), "prob_dist must be 1 or 2 dim"),
                          ((fg.ones(3), 0), "cannot sample n_sample <= 0 samples")]:
        with pytest.raises(RuntimeError, match=message):
            fg.multinomial(*args)


def test_workers_get_info_seeds_and_leave_the_main_streams_alone():
    class Noisy(fgdata.Dataset):
        def __len__(self):
            return 6

        def __getitem__(self, i):
            info = fgdata.get_worker_info()
            noise = fg.rand(1).item() + random.random() + np.random.rand()
            return i, info.id, fg.initial_seed() - info.seed, noise

    inits = []

    def init(worker_id):
        inits.append((worker_id, fgdata.get_worker_info().num_workers))

    def main_streams():
        return fg.rand(2).tolist(), random.random(), np.random.rand()

    def run(dataset, **kw):
        fg.manual_seed(11)
        random.seed(11)
        np.random.seed(11)
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            batches = list(fgdata.DataLoader(dataset, batch_size=None, **kw))
        return batches, main_streams()

    batches, after = run(Noisy(), num_workers=2, worker_init_fn=init)
    assert [b[:3] for b in batches] == [[i, i % 2, 0] for i in range(6)]
    assert inits == [(0, 2), (1, 2)] and fgdata.get_worker_info() is None
    _, after_plain = run(list(range(6)))  # a dataset that draws nothing, no workers
    assert after == after_plain
    again, _ = run(Noisy(), num_workers=2)
    assert [b[3] for b in again] == [b[3] for b in batches]  # worker seeds repeat


def test_persistent_workers_initialise_once():
    calls = []
    with pytest.warns(UserWarning, match="the 2 workers take turns in this process"):
        loader = fgdata.DataLoader(_sharded(fg, 5), batch_size=2, num_workers=2,
                                   persistent_workers=True, worker_init_fn=calls.append)
    epochs = [[b.tolist() for b in loader] for _ in range(2)]
    assert epochs[0] == epochs[1] == [[0, 2], [1, 3], [4]] and calls == [0, 1]


def test_iterable_length_warning():
    class Lying(fgdata.IterableDataset):
        def __iter__(self):
            return iter(range(5))

        def __len__(self):
            return 2
    loader = fgdata.DataLoader(Lying(), batch_size=None)
    assert len(loader) == 2
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        assert list(loader) == [0, 1, 2, 3, 4]
    assert [str(w.message).split(" was reported to be ")[1] for w in caught] == [
        f"2(when accessing len(dataloader)), but {n} samples have been fetched. "
        for n in (3, 4, 5)]


def test_loader_option_errors_match_pytorch(real):
    it = lambda T: _sharded(T, 3)  # noqa: E731
    cases = [(it, dict(shuffle=True)), (it, dict(sampler=[0])), (it, dict(batch_sampler=[[0]])),
             (_tensor_dataset, dict(sampler=[0], shuffle=True)),
             (_tensor_dataset, dict(batch_sampler=[[0]], batch_size=2)),
             (_tensor_dataset, dict(batch_size=None, drop_last=True)),
             (_tensor_dataset, dict(num_workers=-1)), (_tensor_dataset, dict(timeout=-1)),
             (_tensor_dataset, dict(prefetch_factor=2)),
             (_tensor_dataset, dict(persistent_workers=True)),
             (_tensor_dataset, dict(multiprocessing_context="fork")),
             (_tensor_dataset, dict(num_workers=1, multiprocessing_context="nope")),
             (_tensor_dataset, dict(batch_size=0)), (_tensor_dataset, dict(drop_last=1))]
    for make, kw in cases:
        errors = []
        for T in (real, fg):
            with pytest.raises(ValueError) as info, warnings.catch_warnings():
                warnings.simplefilter("ignore")
                T.utils.data.DataLoader(make(T), **kw)
            errors.append(str(info.value).replace("torch.", "").split(" object at ")[0])
        assert errors[1] == errors[0], kw
    loader = fgdata.DataLoader(list(range(3)))
    with pytest.raises(ValueError, match="batch_size attribute should not be set after "
                                         "DataLoader is initialized"):
        loader.batch_size = 2
    with pytest.raises(AssertionError, match="requires timeout == 0"):
        iter(fgdata.DataLoader(list(range(3)), timeout=1))


def test_dataset_errors():
    with pytest.raises(AssertionError, match="Size mismatch between tensors"):
        fgdata.TensorDataset(fg.ones(2), fg.ones(3))
    with pytest.raises(AssertionError, match="ConcatDataset does not support IterableDataset"):
        fgdata.ConcatDataset([_sharded(fg, 2)])
    with pytest.raises(ValueError, match="Sum of input lengths does not equal"):
        fgdata.random_split(range(5), [2, 2])
    with pytest.raises(NotImplementedError, match="Subclasses of Dataset should implement"):
        fgdata.Dataset()[0]
    with pytest.warns(UserWarning, match="Length of split at index 1 is 0"):
        fgdata.random_split(range(2), [0.9, 0.1])
    chained = fgdata.ChainDataset([_sharded(fg, 2), _sharded(fg, 3)])
    assert list(chained) == [0, 1, 0, 1, 2] and len(chained) == 5


def test_pin_memory_warns_without_an_accelerator():
    if fg.accelerator.is_available():
        pytest.skip("a GPU is present")
    with pytest.warns(UserWarning, match="'pin_memory' argument is set as true but no "
                                         "accelerator is found"):
        list(fgdata.DataLoader(list(range(2)), pin_memory=True))


def test_random_sampler_with_replacement_draws_lazily():
    """``num_samples=10**10`` yields its first indices at once (no list of all of them is
    built first), in PyTorch's chunks of 32."""
    import itertools
    import time
    from funcgrad.torch.utils.data import RandomSampler
    gen = fg.Generator().manual_seed(0)
    sampler = RandomSampler(range(5), replacement=True, num_samples=10**10, generator=gen)
    start = time.process_time()
    first = list(itertools.islice(iter(sampler), 40))
    assert time.process_time() - start < 1.0
    assert len(first) == 40 and all(0 <= i < 5 for i in first) and len(sampler) == 10**10
