"""torch.nn.parallel for funcgrad.torch: `DistributedDataParallel` (over MPI) and
`DataParallel`."""
from funcgrad.torch.nn.parallel.data_parallel import DataParallel
from funcgrad.torch.nn.parallel.distributed import DistributedDataParallel

__all__ = ["DataParallel", "DistributedDataParallel"]
