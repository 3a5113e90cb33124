"""Sparse tensors: PyTorch's COO and CSR layouts on the facade's one autograd.

A sparse tensor is a `Tensor` whose array is its *values*, one row per stored element
(``(nnz, *dense_dims)``), with its indices (host int64 arrays: never differentiated) and
its size beside them. Autograd then needs nothing new: an op on a sparse tensor is a
funcgrad function of the values (and of dense operands) recorded by `apply` like any op,
and a sparse leaf's gradient arrives as the gradient of its values, which
`_accumulate_grad` stores as a sparse tensor on the leaf's coalesced pattern, as PyTorch's.

The dense ops refuse sparse tensors (``_refuses``), with PyTorch's "Could not run
'aten::exp' with arguments from the 'SparseCPU' backend": an op that silently densified
would hide the memory the layout exists to save. The ops the layouts have are the rows of
`SPARSE_OPS` (filled by `funcgrad.torch.sparse._ops`), which ``_kind_op`` runs.
"""
from __future__ import annotations

import math
import re
import weakref
from typing import Any, Callable

import numpy as np

import funcgrad.numpy as fnp
from funcgrad.torch._runtime import dtypes as D
from funcgrad.torch._dispatch import apply
from funcgrad.torch._runtime.layouts import sparse_coo, sparse_csr
from funcgrad.torch._tensor import Tensor, as_array, make
from funcgrad.torch._tensor_str import add_suffixes, tensor_str
from funcgrad.torch._runtime import grad_mode
from funcgrad.torch._runtime.node import AccumulateGrad

__all__ = ["SparseTensor", "SparseCoo", "SparseCsr", "SPARSE_OPS", "coo", "csr",
           "values_of", "dense_of", "gathered_rows", "as_coo", "coalesced_keys"]

# the ops of the sparse layouts: op name (a torch function or Tensor method) -> function
SPARSE_OPS: dict[str, Callable] = {}

_BACKENDS = (
    "CPU, CUDA, HIP, MPS, IPU, XPU, HPU, VE, MTIA, MAIA, PrivateUse1, PrivateUse2, "
    "PrivateUse3, Meta, FPGA, Vulkan, Metal, QuantizedCPU, QuantizedCUDA, QuantizedHIP, "
    "QuantizedMPS, QuantizedIPU, QuantizedXPU, QuantizedHPU, QuantizedVE, QuantizedMTIA, "
    "QuantizedMAIA, QuantizedPrivateUse1, QuantizedPrivateUse2, QuantizedPrivateUse3, "
    "QuantizedMeta, CustomRNGKeyId, MkldnnCPU, SparseCsrCPU, SparseCsrCUDA, SparseCsrHIP, "
    "SparseCsrMPS, SparseCsrIPU, SparseCsrXPU, SparseCsrHPU, SparseCsrVE, SparseCsrMTIA, "
    "SparseCsrMAIA, SparseCsrPrivateUse1, SparseCsrPrivateUse2, SparseCsrPrivateUse3, "
    "SparseCsrMeta, BackendSelect, Python, FuncTorchDynamicLayerBackMode, Functionalize, "
    "Conjugate, Negative, ZeroTensor, ADInplaceOrView, AutogradOther, AutogradCPU, "
    "AutogradCUDA, AutogradHIP, AutogradXLA, AutogradMPS, AutogradIPU, AutogradXPU, "
    "AutogradHPU, AutogradVE, AutogradLazy, AutogradMTIA, AutogradMAIA, "
    "AutogradPrivateUse1, AutogradPrivateUse2, AutogradPrivateUse3, AutogradMeta, "
    "AutogradNestedTensor, Tracer, AutocastCPU, AutocastMTIA, AutocastMAIA, AutocastXPU, "
    "AutocastMPS, AutocastCUDA, FuncTorchBatched, BatchedNestedTensor, FuncTorchVmapMode, "
    "Batched, VmapMode, FuncTorchGradWrapper, PythonTLSSnapshot, "
    "FuncTorchDynamicLayerFrontMode, PreDispatch, PythonDispatcher")


def _aten_name(op: str) -> str:
    """The aten name of an op named by its function (``exp``) or its node
    (``ExpBackward0``, where `apply` refuses)."""
    base = re.sub(r"Backward\d*$", "", op)
    return re.sub(r"(?<!^)(?=[A-Z])", "_", base).lower() if base != op else op


class SparseTensor(Tensor):
    """What the sparse layouts share: refusing the dense ops, metadata, conversions."""

    __slots__ = ()
    _refuses = True
    backend = "SparseCPU"
    is_sparse = False
    is_sparse_csr = False

    def _refusal(self, op: str) -> NotImplementedError:
        name = _aten_name(op)
        return NotImplementedError(
            f"Could not run 'aten::{name}' with arguments from the '{self.backend}' backend. "
            "This could be because the operator doesn't exist for this backend, or was "
            "omitted during the selective/custom build process (if using custom build). If "
            "you are a Facebook employee using PyTorch on mobile, please visit "
            "https://fburl.com/ptmfixes for possible resolutions. "
            f"'aten::{name}' is only available for these backends: [{_BACKENDS}].")

    def _kind_op(self, op: str, args: tuple, kwargs: dict) -> Any:
        impl = SPARSE_OPS.get(op)
        if impl is None:
            raise self._refusal(op)
        return impl(*args, **kwargs)

    # -- metadata --------------------------------------------------------------------------
    @property
    def shape(self) -> D.Size:
        return D.Size(self._size)

    def size(self, dim: int | None = None) -> Any:
        return D.Size(self._size) if dim is None else self._size[dim]

    @property
    def ndim(self) -> int:
        return len(self._size)

    def dim(self) -> int:
        return len(self._size)

    ndimension = dim

    def numel(self) -> int:
        return math.prod(self._size)

    nelement = numel

    def _nnz(self) -> int:
        return int(self._a.shape[0])

    def dense_dim(self) -> int:
        return self._a.ndim - 1

    def sparse_dim(self) -> int:
        return len(self._size) - self.dense_dim()

    def numpy(self, *, force: bool = False) -> np.ndarray:
        raise TypeError("can't convert Sparse layout tensor to numpy. Use Tensor.to_dense() "
                        "first.")

    def data_ptr(self) -> int:
        raise RuntimeError("Cannot access data pointer of Tensor that doesn't have storage")

    def untyped_storage(self) -> Any:
        raise NotImplementedError(f"Cannot access storage of {self._impl}")

    storage = untyped_storage

    def __reduce_ex__(self, protocol: int) -> tuple:
        raise NotImplementedError("funcgrad.torch: saving a sparse tensor is not supported; "
                                  "save its indices and values (or to_dense()) instead")

    # -- graph -----------------------------------------------------------------------------
    def detach(self) -> "SparseTensor":
        return self._like(make(self._a, vc=self._vc))

    def _accumulate_grad(self, g: Any) -> None:
        """The gradient of the values, stored as a sparse gradient of this leaf."""
        self._add_to_grad(self._grad_of(make(as_array(g))))

    def _accumulate_graph_grad(self, g: Tensor) -> None:
        self._add_to_grad(self._grad_of(g))

    def _add_to_grad(self, grad: "SparseTensor") -> None:
        old = self._grad
        if old is None:
            self._grad = grad
        elif isinstance(old, SparseTensor):
            self._grad = self._like_grad(make(as_array(old._a) + as_array(grad._a)), old)
        else:  # a dense gradient already (`_accumulate_dense_grad`)
            self._grad = make(old._a + grad.to_dense()._a)

    def _accumulate_dense_grad(self, g: Any) -> None:
        """A gradient with respect to every element (PyTorch's ``mm``/``sum`` of a sparse
        leaf give one): ``.grad`` becomes dense, as PyTorch's."""
        g = as_array(g)
        old = self._grad
        self._grad = make(g if old is None else g + as_array(old.to_dense()) if isinstance(
            old, SparseTensor) else g + old._a)

    def __repr__(self) -> str:
        indent = len("tensor(")
        parts = [f"{prefix}={_inner(value, indent + len(prefix) + 8)}"
                 for prefix, value in self._shown()]
        body = "tensor(" + (",\n" + " " * indent).join(parts)
        suffixes = [f"size={tuple(self._size)}", f"nnz={self._nnz()}"]
        default = D.get_default_dtype()
        if self.dtype not in (default, default.to_complex(), D.int64, D.bool):
            suffixes.append(f"dtype={self.dtype}")
        suffixes.append(f"layout={self.layout}")
        if self._grad_fn is not None:
            suffixes.append(f"grad_fn=<{self._grad_fn.name()}>")
        elif self._rg:
            suffixes.append("requires_grad=True")
        return add_suffixes(body, suffixes, indent, force_newline=self.is_sparse)

    __str__ = __repr__

    def _a_host(self) -> np.ndarray:
        """The values on the host, for printing."""
        return make(self._a).numpy(force=True)


def _inner(values: np.ndarray, indent: int) -> str:
    """``tensor(...)`` of an index or values array, as the sparse repr nests it."""
    dtype = D.to_torch_dtype(values.dtype)
    text = "tensor(" + tensor_str(values, dtype, indent)
    if values.size == 0:
        text += f", size={tuple(values.shape)}"
    return text + ")"


class SparseCoo(SparseTensor):
    """A COO tensor: ``_idx`` (sparse_dim, nnz) indices, ``_size``, ``_coalesced``."""

    __slots__ = ()
    layout = sparse_coo
    is_sparse = True
    _impl = "SparseTensorImpl"

    def stride(self, dim: int | None = None) -> Any:
        return (0,) * len(self._size) if dim is None else 0

    def is_coalesced(self) -> bool:
        return self._coalesced

    def _indices(self) -> Tensor:
        return make(fnp.asarray(self._idx))

    def _values(self) -> Tensor:
        return values_of(self)

    def indices(self) -> Tensor:
        if not self._coalesced:
            raise RuntimeError("Cannot get indices on an uncoalesced tensor, please call "
                               ".coalesce() first")
        return self._indices()

    def values(self) -> Tensor:
        if not self._coalesced:
            raise RuntimeError("Cannot get values on an uncoalesced tensor, please call "
                               ".coalesce() first")
        return apply("ValuesBackward0", _same, [values_of(self)])

    def _like(self, values: Tensor) -> "SparseCoo":
        return coo(values, self._idx, self._size, self._coalesced)

    def _shown(self) -> list:
        return [("indices", self._idx), ("values", self._a_host())]

    def _grad_of(self, g: Tensor) -> "SparseCoo":
        """A sparse gradient on this tensor's coalesced pattern from the gradient ``g``
        of its values: every duplicate of an index gets the same gradient, its index's."""
        if self._coalesced:
            return coo(g, self._idx, self._size, True)
        uniq, first = np.unique(coalesced_keys(self), return_index=True)
        idx = _unravel(uniq, self._size[:self.sparse_dim()])
        return coo(g[make(fnp.asarray(first))], idx, self._size, True)

    def _like_grad(self, values: Tensor, old: "SparseCoo") -> "SparseCoo":
        return coo(values, old._idx, old._size, True)

    def coalesce(self) -> "SparseCoo":
        if self._coalesced:
            return self
        uniq, inverse = np.unique(coalesced_keys(self), return_inverse=True)
        n = len(uniq)
        values = apply("CoalesceBackward0",
                       lambda v: fnp.zeros((n,) + v.shape[1:], v.dtype).at[inverse].add(v),
                       [values_of(self)])
        return coo(values, _unravel(uniq, self._size[:self.sparse_dim()]), self._size, True)

    def to_dense(self, dtype: Any = None, *, masked_grad: bool = True) -> Tensor:
        size, idx = self._size, tuple(self._idx)
        out = apply("ToDenseBackward0",
                    lambda v: fnp.zeros(size, v.dtype).at[idx].add(v), [values_of(self)])
        return out if dtype is None else out.to(dtype)

    def to_sparse(self, *args: Any, layout: Any = None, **kwargs: Any) -> SparseTensor:
        return self.to_sparse_csr() if layout is sparse_csr else self

    def to_sparse_coo(self) -> "SparseCoo":
        return self

    def to_sparse_csr(self, dense_dim: int | None = None) -> "SparseCsr":
        if self.sparse_dim() != 2:
            raise RuntimeError("to_sparse_csr: expected a tensor with 2 sparse dimensions, "
                               f"got {self.sparse_dim()}")
        c = self.coalesce()
        rows, cols = c._idx
        crow = np.concatenate([[0], np.cumsum(np.bincount(rows, minlength=self._size[0]))])
        values = apply("ToSparseCsrBackward0", _same, [values_of(c)])
        return csr(values, crow.astype(np.int64), cols, self._size)


class SparseCsr(SparseTensor):
    """A CSR matrix: ``_crow`` (rows + 1) and ``_col`` (nnz) indices, ``_size``."""

    __slots__ = ()
    layout = sparse_csr
    is_sparse_csr = True
    backend = "SparseCsrCPU"
    _impl = "SparseCsrTensorImpl"

    def stride(self, dim: int | None = None) -> Any:
        raise RuntimeError("Sparse CSR tensors do not have strides")

    def is_coalesced(self) -> bool:
        raise RuntimeError("is_coalesced expected sparse coordinate tensor layout but got "
                           "SparseCsr")

    def crow_indices(self) -> Tensor:
        return make(fnp.asarray(self._crow))

    def col_indices(self) -> Tensor:
        return make(fnp.asarray(self._col))

    def values(self) -> Tensor:
        return apply("ValuesBackward0", _same, [values_of(self)])

    def _like(self, values: Tensor) -> "SparseCsr":
        return csr(values, self._crow, self._col, self._size)

    def _shown(self) -> list:
        return [("crow_indices", self._crow), ("col_indices", self._col),
                ("values", self._a_host())]

    def _grad_of(self, g: Tensor) -> "SparseCsr":
        return self._like(g)

    def _like_grad(self, values: Tensor, old: "SparseCsr") -> "SparseCsr":
        return old._like(values)

    def to_dense(self, dtype: Any = None, *, masked_grad: bool = True) -> Tensor:
        return as_coo(self).to_dense(dtype)

    def to_sparse(self, *args: Any, layout: Any = None, **kwargs: Any) -> SparseTensor:
        return self if layout is sparse_csr else self.to_sparse_coo()

    def to_sparse_coo(self) -> SparseCoo:
        coo_view = as_coo(self)
        values = apply("ToSparseBackward0", _same, [values_of(coo_view)])
        return coo_view._like(values)

    def to_sparse_csr(self, dense_dim: int | None = None) -> "SparseCsr":
        return self


def _same(v: Any) -> Any:
    return v


def _unravel(keys: np.ndarray, shape: tuple) -> np.ndarray:
    return np.array(np.unravel_index(keys, shape), dtype=np.int64).reshape(len(shape), -1)


def coalesced_keys(t: SparseCoo) -> np.ndarray:
    """Each stored element's index as one integer (row-major over the sparse dims)."""
    shape = t._size[:t.sparse_dim()]
    if not t._idx.shape[1]:
        return np.zeros(0, np.int64)
    return np.ravel_multi_index(tuple(t._idx), shape)


def _continued(values: Tensor) -> Tensor:
    """``values`` with a node of its own where it is a leaf's alias (`values_of`): a new
    sparse tensor on the alias itself would be a leaf cut off from the leaf's node."""
    if "_keeps" in values.__dict__:
        return apply("AliasBackward0", _same, [values])
    return values


def coo(values: Tensor, idx: np.ndarray, size: tuple, coalesced: bool) -> SparseCoo:
    """A COO tensor on values tensor ``values`` (its graph included) and host indices."""
    t = _continued(values).as_subclass(SparseCoo)
    t._idx = np.asarray(idx, dtype=np.int64)
    t._size = tuple(int(s) for s in size)
    t._coalesced = bool(coalesced)
    return t


def csr(values: Tensor, crow: np.ndarray, col: np.ndarray, size: tuple) -> SparseCsr:
    """A CSR matrix on values tensor ``values`` and host indices."""
    t = _continued(values).as_subclass(SparseCsr)
    t._crow = np.asarray(crow, dtype=np.int64)
    t._col = np.asarray(col, dtype=np.int64)
    t._size = tuple(int(s) for s in size)
    return t


def as_coo(t: SparseTensor) -> SparseCoo:
    """``t`` as a COO tensor on the same values and graph (a CSR matrix's rows spelled
    out: coalesced, since its elements are sorted and unique)."""
    if isinstance(t, SparseCoo):
        return t
    rows = np.repeat(np.arange(t._size[0], dtype=np.int64), np.diff(t._crow))
    return coo(values_of(t), np.stack([rows, t._col]), t._size, True)


class DenseAccumulateGrad(AccumulateGrad):
    """A sparse leaf's node for gradients with respect to its dense meaning."""

    __slots__ = ()

    def name(self) -> str:
        return "AccumulateGrad"

    def apply(self, grads: list, create_graph: bool) -> list:
        return self.apply_arrays(grads)

    def apply_arrays(self, grads: list) -> list:
        if grads[0] is not None:
            self.variable._accumulate_dense_grad(grads[0])
            self._post_accumulate()
        return []


def dense_of(t: SparseTensor) -> Tensor:
    """``t`` as a dense tensor for the ops whose gradient PyTorch does not mask to the
    sparse pattern (``mm``, ``sum``, dense + sparse): for a leaf that requires grad, a
    tensor feeding `DenseAccumulateGrad`, so ``t.grad`` gets every element's gradient;
    otherwise ``to_dense()`` (a non-leaf's gradient reaches its values, where PyTorch's
    constructor masks it)."""
    if not (t._rg and t._grad_fn is None):
        return t.to_dense()
    with grad_mode.no_grad():
        d = t.to_dense()
    node = t.__dict__.get("_dense_acc")
    node = node() if node is not None else None
    if node is None:
        node = DenseAccumulateGrad(t)
        t._dense_acc = weakref.ref(node)
    d._rg = True
    d._acc = weakref.ref(node)
    d._keeps = node
    return d


class SparseRowsAccumulateGrad(AccumulateGrad):
    """The node of rows gathered from a dense leaf by ``nn.Embedding(sparse=True)``: their
    gradient becomes the leaf's ``.grad`` as a sparse tensor of those rows (one element
    per lookup, uncoalesced, the ``skip`` lookups left out), as PyTorch's."""

    __slots__ = ("rows", "kept")

    def __init__(self, variable: Tensor, rows: np.ndarray, kept: np.ndarray) -> None:
        super().__init__(variable)
        self.rows, self.kept = rows, kept

    def name(self) -> str:
        return "AccumulateGrad"

    def apply(self, grads: list, create_graph: bool) -> list:
        return self.apply_arrays(grads)

    def apply_arrays(self, grads: list) -> list:
        g = grads[0]
        if g is None:
            return []
        var = self.variable
        grad = coo(make(as_array(g)[self.kept]), self.rows[self.kept][None], var.shape, False)
        old = var._grad
        if old is None:
            var._grad = grad
        elif isinstance(old, SparseTensor):
            var._grad = SPARSE_OPS["add"](old, grad)
        else:
            var._grad = make(old._a + grad.to_dense()._a)
        self._post_accumulate()
        return []


def gathered_rows(weight: Tensor, rows: np.ndarray, skip: int = -1) -> Tensor:
    """``weight[rows]`` as a leaf whose gradient reaches ``weight.grad`` as a sparse
    tensor (`SparseRowsAccumulateGrad`; lookups of row ``skip`` get none)."""
    out = make(fnp.take(weight._a, fnp.asarray(rows), axis=0), True)
    node = SparseRowsAccumulateGrad(weight, rows, np.flatnonzero(rows != skip))
    out._acc = weakref.ref(node)
    out._keeps = node
    return out


def values_of(t: SparseTensor) -> Tensor:
    """A dense tensor on ``t``'s values with ``t``'s place in the graph: what the ops
    compute with. A leaf's gradient reaches ``t``'s own AccumulateGrad node."""
    v = make(t._a, t._rg, t._grad_fn, t._output_nr, vc=t._vc)
    if t._rg and t._grad_fn is None:
        node = t._accumulator()
        v._acc = weakref.ref(node)
        v._keeps = node  # (the node lives while this alias can still make edges to it)
    return v
