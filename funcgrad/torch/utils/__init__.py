"""torch.utils for funcgrad.torch: `checkpoint`, `data`, `dlpack` and `swap_tensors`."""
from funcgrad.torch.utils import checkpoint, data, dlpack
from funcgrad.torch.utils._swap import swap_tensors

__all__ = ["checkpoint", "data", "dlpack", "swap_tensors"]
