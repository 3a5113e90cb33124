"""torch.backends.cudnn: funcgrad does not use cuDNN (its GPU ops are cupy's)."""
from __future__ import annotations

__all__ = ["is_available", "version", "enabled", "benchmark", "deterministic", "allow_tf32"]

# PyTorch's defaults; settable, and without effect here (see funcgrad.torch.backends).
enabled = True
benchmark = False
deterministic = False
allow_tf32 = True


def is_available() -> bool:
    """False: no funcgrad op runs on cuDNN."""
    return False


def version() -> None:
    """None, as PyTorch answers when cuDNN is not available."""
    return None
