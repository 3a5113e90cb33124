"""torch.utils.data for funcgrad.torch (this branch: `DistributedSampler` only)."""
from funcgrad.torch.utils.data.distributed import DistributedSampler

__all__ = ["DistributedSampler"]
