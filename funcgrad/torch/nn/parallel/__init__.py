"""torch.nn.parallel for funcgrad.torch: `DistributedDataParallel` (over MPI)."""
from funcgrad.torch.nn.parallel.distributed import DistributedDataParallel

__all__ = ["DistributedDataParallel"]
