"""torch.utils for funcgrad.torch: `checkpoint`."""
from funcgrad.torch.utils import checkpoint

__all__ = ["checkpoint"]
