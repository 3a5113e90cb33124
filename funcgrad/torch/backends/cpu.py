"""torch.backends.cpu: the CPU backend is numpy."""
from __future__ import annotations

import numpy as np

__all__ = ["get_cpu_capability"]

# PyTorch's capability names, best first, with the numpy CPU features each needs
_CAPABILITIES = (("AVX512", ("AVX512F", "AVX512BW", "AVX512VL", "AVX512DQ")),
                 ("AVX2", ("AVX2", "FMA3")),
                 ("VSX", ("VSX",)),
                 ("Z VECTOR", ("VX",)))


def _numpy_cpu_features() -> dict:
    """numpy's runtime CPU feature table (public as ``np.__cpu_features__`` before numpy 2,
    only in its ``_multiarray_umath`` module since)."""
    features = getattr(np, "__cpu_features__", None)
    if features is None:
        try:  # numpy >= 2 keeps the table in a private module: only it knows the CPU
            from numpy._core._multiarray_umath import __cpu_features__ as features
        except ImportError:
            features = {}
    return features


def get_cpu_capability() -> str:
    """The vector instruction set the CPU kernels can use, by PyTorch's names ('AVX512',
    'AVX2', 'VSX', 'Z VECTOR', or 'DEFAULT' when none of them)."""
    features = _numpy_cpu_features()
    for name, needs in _CAPABILITIES:
        if all(features.get(f) for f in needs):
            return name
    return "DEFAULT"
