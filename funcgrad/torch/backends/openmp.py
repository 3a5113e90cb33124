"""torch.backends.openmp: funcgrad's own code does not use OpenMP (numpy's BLAS threads
are its own business)."""
from __future__ import annotations

__all__ = ["is_available"]


def is_available() -> bool:
    return False
