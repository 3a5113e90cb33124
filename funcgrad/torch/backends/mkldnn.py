"""torch.backends.mkldnn: funcgrad does not use oneDNN."""
from __future__ import annotations

__all__ = ["is_available", "enabled"]

enabled = True  # PyTorch's default; settable, no effect here


def is_available() -> bool:
    return False
