"""``torch.sparse``: sparse COO and CSR tensors, their constructors and products.

The tensors are `funcgrad.torch.sparse._tensor`'s, their ops `funcgrad.torch.sparse._ops`'
rows. The invariants PyTorch checks only with ``check_invariants=True`` (indices in
bounds, CSR's row pointers) are always checked here: an index out of bounds would
otherwise scatter into the wrong element or crash far from its cause.
"""
from __future__ import annotations

from typing import Any

import numpy as np

from funcgrad.torch._runtime import dtypes as D
from funcgrad.torch._dispatch import apply
from funcgrad.torch._factories import as_tensor
from funcgrad.torch._runtime.layouts import sparse_csr
from funcgrad.torch._tensor import Tensor, make
from funcgrad.torch.sparse import _ops
from funcgrad.torch.sparse._ops import addmm, log_softmax, mm, softmax, sparse_mask, sum
from funcgrad.torch.sparse._tensor import (SPARSE_OPS, SparseCoo, SparseCsr, SparseTensor,
                                           coo, csr)

__all__ = ["mm", "addmm", "sum", "softmax", "log_softmax", "sparse_coo_tensor",
           "sparse_csr_tensor", "spmm", "check_sparse_tensor_invariants", "install"]

spmm = mm


class check_sparse_tensor_invariants:
    """PyTorch's switch for checking sparse constructors' invariants. The facade always
    checks them (see the module's docstring); the switch is kept for code that sets it."""

    _enabled = False

    def __init__(self, enable: bool = True) -> None:
        self.state = enable
        self.saved = self._enabled

    @staticmethod
    def is_enabled() -> bool:
        return check_sparse_tensor_invariants._enabled

    @staticmethod
    def enable() -> None:
        check_sparse_tensor_invariants._enabled = True

    @staticmethod
    def disable() -> None:
        check_sparse_tensor_invariants._enabled = False

    def __enter__(self) -> "check_sparse_tensor_invariants":
        check_sparse_tensor_invariants._enabled = self.state
        return self

    def __exit__(self, *exc: Any) -> None:
        check_sparse_tensor_invariants._enabled = self.saved


def _index_array(indices: Any) -> np.ndarray:
    raw = np.asarray(indices.detach().numpy() if isinstance(indices, Tensor) else indices)
    if raw.dtype.kind not in "iuf" and raw.size:
        raise RuntimeError(f"indices must be an int64 tensor, got {raw.dtype}")
    return raw.astype(np.int64)


def _values_tensor(values: Any, dtype: Any, device: Any) -> Tensor:
    """The values as a tensor whose graph the sparse tensor continues (a copy-free
    alias when they need no gradient)."""
    t = values if isinstance(values, Tensor) else as_tensor(values, dtype=dtype)
    if dtype is not None and t.dtype != dtype:
        t = t.to(dtype)
    if device is not None and D.device(device).type != "cpu":
        raise NotImplementedError("funcgrad.torch: sparse tensors live on the CPU")
    return t


def _leaf(t: SparseTensor, values: Tensor, requires_grad: bool, node: str) -> SparseTensor:
    """``t`` continuing the graph of ``values``, or a new leaf (``requires_grad``)."""
    if values.requires_grad:
        return t._like(apply(node, _ops._same, [values]))
    return t.requires_grad_(True) if requires_grad else t


def sparse_coo_tensor(indices: Any, values: Any, size: Any = None, *, dtype: Any = None,
                      device: Any = None, pin_memory: bool = False,
                      requires_grad: bool = False, check_invariants: Any = None,
                      is_coalesced: Any = None) -> SparseCoo:
    """A COO tensor of ``values[k]`` at ``indices[:, k]``; ``size`` defaults to the
    smallest that holds the indices."""
    idx = _index_array(indices)
    if idx.ndim != 2:
        raise RuntimeError(f"indices must be sparse_dim x nnz, but got: {list(idx.shape)}")
    vals = _values_tensor(values, dtype, device)
    if idx.shape[1] != (vals.shape[0] if vals.ndim else 1):
        raise RuntimeError(f"indices and values must have same nnz, but got nnz from "
                           f"indices: {idx.shape[1]}, nnz from values: "
                           f"{vals.shape[0] if vals.ndim else 1}")
    sd = idx.shape[0]
    if size is None:
        size = tuple(idx.max(axis=1) + 1 if idx.shape[1] else [0] * sd) + tuple(
            vals.shape[1:])
    size = tuple(int(s) for s in size)
    if len(size) != sd + vals.ndim - 1:
        raise RuntimeError(f"'len(size) == sparse_dim + dense_dim' is not satisfied: "
                           f"len(size) = {len(size)}, sparse_dim = {sd}, dense_dim = "
                           f"{vals.ndim - 1}")
    _check_bounds(idx, size)
    coalesced = bool(is_coalesced) or idx.shape[1] <= 1
    t = coo(make(vals._a, vc=vals._vc), idx, size, coalesced)
    return _leaf(t, vals, requires_grad, "SparseCooTensorWithDimsAndTensorsBackward0")


def _check_bounds(idx: np.ndarray, size: tuple) -> None:
    for d in range(idx.shape[0]):
        if not idx.shape[1]:
            return
        low, high = idx[d].min(), idx[d].max()
        if low < 0:
            raise RuntimeError(f"found negative index {low} for dim {d}")
        if high >= size[d]:
            raise RuntimeError(f"size is inconsistent with indices: for dim {d}, size is "
                               f"{size[d]} but found index {high}")


def sparse_csr_tensor(crow_indices: Any, col_indices: Any, values: Any, size: Any = None, *,
                      dtype: Any = None, device: Any = None, pin_memory: bool = False,
                      requires_grad: bool = False, check_invariants: Any = None
                      ) -> SparseCsr:
    """A CSR matrix: row ``i``'s elements are ``values[crow[i]:crow[i+1]]`` in columns
    ``col_indices[crow[i]:crow[i+1]]``."""
    crow, col = _index_array(crow_indices), _index_array(col_indices)
    vals = _values_tensor(values, dtype, device)
    if crow.ndim != 1 or col.ndim != 1 or vals.ndim != 1:
        raise NotImplementedError("sparse_csr_tensor: funcgrad.torch supports unbatched "
                                  "CSR matrices of scalars")
    if size is None:
        size = (len(crow) - 1, int(col.max()) + 1 if col.size else 0)
    size = tuple(int(s) for s in size)
    nnz = len(col)
    if len(crow) != size[0] + 1:
        raise RuntimeError("`crow_indices.size(-1) == nrows + 1` is not satisfied.")
    if crow[0] != 0:
        raise RuntimeError("`crow_indices[..., 0] == 0` is not satisfied.")
    if crow[-1] != nnz:
        raise RuntimeError("`crow_indices[..., -1] == nnz` is not satisfied.")
    if np.any(np.diff(crow) < 0):
        raise RuntimeError("`0 <= crow_indices[..., 1:] - crow_indices[..., :-1] <= ncols` "
                           "is not satisfied.")
    if nnz and (col.min() < 0 or col.max() >= size[1]):
        raise RuntimeError("`0 <= col_indices < ncols` is not satisfied.")
    if len(vals) != nnz:
        raise RuntimeError(f"col_indices and values must have the same nnz, but got "
                           f"{nnz} and {len(vals)}")
    t = csr(make(vals._a, vc=vals._vc), crow, col, size)
    return _leaf(t, vals, requires_grad, "SparseCompressedTensorBackward0")


def _to_sparse(self: Tensor, *args: Any, layout: Any = None, blocksize: Any = None,
               dense_dim: Any = None) -> SparseTensor:
    """The nonzero elements of dense ``self`` as a COO tensor (coalesced), or a CSR
    matrix with ``layout=torch.sparse_csr``; ``sparse_dim`` keeps the trailing dims
    dense."""
    if isinstance(self, SparseTensor):
        return self.to_sparse(*args, layout=layout)
    sd = args[0] if args else self.ndim
    raw = self.detach().numpy(force=True)
    nonzero = raw != 0
    if sd < self.ndim:
        nonzero = nonzero.reshape(raw.shape[:sd] + (-1,)).any(axis=-1)
    idx = np.array(np.nonzero(nonzero), dtype=np.int64).reshape(sd, -1)
    coords = tuple(idx)
    node = "ToSparseBackward1" if args or layout is not None else "ToSparseBackward0"
    values = apply(node, lambda x: x[coords], [self])
    t = coo(values, idx, tuple(self.shape), True)
    return t.to_sparse_csr() if layout is sparse_csr else t


def _to_sparse_coo(self: Tensor) -> SparseTensor:
    return _to_sparse(self)


def _to_sparse_csr(self: Tensor, dense_dim: Any = None) -> SparseTensor:
    if isinstance(self, SparseTensor):
        return self.to_sparse_csr()
    if self.ndim != 2:
        raise RuntimeError(f"to_sparse_csr: expected a 2-D tensor, got {self.ndim}-D")
    return _to_sparse(self).to_sparse_csr()


def _to_dense(self: Tensor, dtype: Any = None, *, masked_grad: bool = True) -> Tensor:
    return self if dtype is None else self.to(dtype)


# what sparse tensors keep of the dense Tensor's public members: autograd metadata,
# dtype and device facts (everything else is a sparse op or refused, `install`)
_KEPT = {"requires_grad", "is_leaf", "grad_fn", "grad", "output_nr", "retains_grad",
         "retain_grad", "register_hook", "register_post_accumulate_grad_hook", "backward",
         "detach_", "dtype", "device", "get_device", "is_floating_point", "is_complex",
         "is_signed", "element_size", "itemsize", "is_cpu", "is_cuda", "is_ipu", "is_maia",
         "is_meta", "is_mkldnn", "is_mps", "is_mtia", "is_nested", "is_quantized",
         "is_vulkan", "is_xla", "is_xpu", "is_conj", "is_neg", "is_inference", "cpu"}
_KEPT_DUNDERS = {"__class__", "__init__", "__new__", "__getattribute__", "__setattr__",
                 "__delattr__", "__dir__", "__format__", "__sizeof__", "__init_subclass__",
                 "__subclasshook__", "__hash__", "__eq__", "__ne__", "__len__", "__doc__",
                 "__module__", "__dict__", "__weakref__", "__slots__", "__annotations__",
                 "__array_priority__", "__reduce__", "__getstate__", "__firstlineno__",
                 "__static_attributes__"}


def _refused(name: str) -> Any:
    def refuse(self: SparseTensor, *args: Any, **kwargs: Any) -> Any:
        raise self._refusal(name.strip("_"))
    refuse.__name__ = name
    return refuse


def install(namespace: dict) -> None:
    """Add the constructors to the torch namespace and the conversions to dense tensors;
    give the sparse tensors their ops, and refuse every other member of the dense Tensor
    (a dense method run on a sparse tensor would compute on its values array alone)."""
    namespace.update(sparse_coo_tensor=sparse_coo_tensor, sparse_csr_tensor=sparse_csr_tensor,
                     spmm=spmm)
    for name, fn in (("to_sparse", _to_sparse), ("to_sparse_coo", _to_sparse_coo),
                     ("to_sparse_csr", _to_sparse_csr), ("to_dense", _to_dense),
                     ("sparse_mask", sparse_mask)):
        setattr(Tensor, name, fn)
    own = {n for cls in (SparseCoo, SparseCsr, SparseTensor) for n in vars(cls)}
    for name in dir(Tensor):
        if name in own or name in _KEPT or name in _KEPT_DUNDERS or (
                name.startswith("_") and not name.startswith("__")):
            continue
        if name in SPARSE_OPS:
            setattr(SparseTensor, name, SPARSE_OPS[name])
        elif isinstance(getattr(Tensor, name), property):
            setattr(SparseTensor, name, property(_refused(name)))
        else:
            setattr(SparseTensor, name, _refused(name))
    SparseTensor.T = SparseTensor.mT = property(SPARSE_OPS["t"])
    SparseTensor.data = property(SparseTensor.detach)
    for name in ("__radd__", "__rsub__", "__rmul__", "__rmatmul__"):
        setattr(SparseTensor, name, SPARSE_OPS[name])
