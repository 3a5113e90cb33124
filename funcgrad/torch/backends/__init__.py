"""torch.backends for funcgrad.torch: what the numpy/cupy backends really are.

PyTorch programs query these before choosing a device or a kernel. funcgrad runs every op
on numpy (CPU) or cupy (GPU), so the answers are about those: cuda is built when cupy is
installed and available when cupy sees a GPU; funcgrad never calls cuDNN, oneDNN (mkldnn),
OpenMP or Metal (mps) itself, so those report unavailable. The tuning flags PyTorch
programs set (``cudnn.benchmark``, ``cudnn.deterministic``, ``cuda.matmul.allow_tf32``...)
exist with PyTorch's defaults so that such programs run, and change nothing: funcgrad's
kernels are deterministic and compute in the dtype they are given.
"""
from funcgrad.torch.backends import cpu, cuda, cudnn, mkl, mkldnn, mps, openmp

__all__ = ["cpu", "cuda", "cudnn", "mkl", "mkldnn", "mps", "openmp"]
