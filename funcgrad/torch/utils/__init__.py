"""torch.utils for funcgrad.torch: `checkpoint`, `data` and `dlpack`."""
from funcgrad.torch.utils import checkpoint, data, dlpack

__all__ = ["checkpoint", "data", "dlpack"]
