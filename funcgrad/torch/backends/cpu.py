"""torch.backends.cpu: the CPU backend is numpy."""
from __future__ import annotations

__all__ = ["get_cpu_capability"]


def get_cpu_capability() -> str:
    """The vector instruction set numpy dispatches to ('AVX512F', 'AVX2', ... or
    'DEFAULT' when numpy reports none), PyTorch's name for this query."""
    import numpy as np
    features = getattr(np, "__cpu_features__", {})
    for name in ("AVX512F", "AVX2", "SVE", "NEON", "VSX"):
        if features.get(name):
            return name
    return "DEFAULT"
