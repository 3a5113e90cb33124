"""torch.utils for funcgrad.torch: `checkpoint`, `data`."""
from funcgrad.torch.utils import checkpoint, data

__all__ = ["checkpoint", "data"]
