"""torch.functional: the module PyTorch defines ``einsum``, ``meshgrid``, ``norm``,
``split``, ``unique``... in (``torch.<name>`` are the same functions). Programs import it
(``import torch.functional as F``), so it exists here too, naming the facade's functions."""
from funcgrad import torch as _torch

__all__ = ["atleast_1d", "atleast_2d", "atleast_3d", "broadcast_shapes", "broadcast_tensors",
           "cartesian_prod", "block_diag", "cdist", "chain_matmul", "einsum", "norm",
           "meshgrid", "split", "tensordot", "unique", "unique_consecutive", "unravel_index"]

globals().update({_name: getattr(_torch, _name) for _name in __all__})
