"""torch.backends.cuda: the cuda backend is cupy."""
from __future__ import annotations

import importlib.util

__all__ = ["is_built", "matmul"]


def is_built() -> bool:
    """Whether funcgrad can use CUDA at all: cupy is installed (the ``cuda`` extra).
    Whether a GPU is visible is `torch.cuda.is_available()`."""
    return importlib.util.find_spec("cupy") is not None


class matmul:
    """``torch.backends.cuda.matmul`` flags (PyTorch's defaults; settable, no effect:
    cupy's matmul computes in the dtype of its inputs)."""
    allow_tf32 = False
    allow_fp16_reduced_precision_reduction = True
    allow_bf16_reduced_precision_reduction = True
