"""torch.backends.mkl: whether numpy's BLAS is Intel MKL."""
from __future__ import annotations

import numpy as np

__all__ = ["is_available"]


def is_available() -> bool:
    """True when numpy was built against MKL (funcgrad's matmuls then run on it)."""
    config = getattr(np.__config__, "CONFIG", {})
    blas = config.get("Build Dependencies", {}).get("blas", {})
    return "mkl" in str(blas.get("name", "")).lower()
