"""``torch.signal``: signal-processing helpers (its window functions: `windows`)."""
from funcgrad.torch.signal import windows

__all__ = ["windows"]
