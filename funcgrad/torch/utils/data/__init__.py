"""torch.utils.data for funcgrad.torch: datasets, samplers, collation and `DataLoader`, with
PyTorch 2.13's semantics and error messages (see `dataloader` for ``num_workers``).

``distributed`` (``DistributedSampler``) lives in its own module.
"""
from funcgrad.torch.utils.data.dataset import (ChainDataset, ConcatDataset, Dataset,
                                               IterableDataset, StackDataset, Subset,
                                               TensorDataset, random_split)
from funcgrad.torch.utils.data.sampler import (BatchSampler, RandomSampler, Sampler,
                                               SequentialSampler, SubsetRandomSampler,
                                               WeightedRandomSampler)
from funcgrad.torch.utils.data._utils.collate import default_collate, default_convert
from funcgrad.torch.utils.data._utils.worker import WorkerInfo, get_worker_info
from funcgrad.torch.utils.data.dataloader import DataLoader
from funcgrad.torch.utils.data.distributed import DistributedSampler

__all__ = ["BatchSampler", "ChainDataset", "ConcatDataset", "DataLoader", "Dataset",
           "DistributedSampler",
           "IterableDataset", "RandomSampler", "Sampler", "SequentialSampler", "StackDataset",
           "Subset", "SubsetRandomSampler", "TensorDataset", "WeightedRandomSampler",
           "WorkerInfo", "default_collate", "default_convert", "get_worker_info",
           "random_split"]
