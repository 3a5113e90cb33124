"""`TensorData`: what a `funcgrad.torch.Tensor` says about its values (shape, dtype,
device), its memory (storage, strides, views, DLPack) and its conversions to Python and
numpy values, apart from the autograd state `Tensor` adds.

Its methods read the tensor's fields (``_a``: the funcgrad Array, ``_view``, ``_vc``),
which `Tensor` declares; `Tensor` is its only subclass.
"""
from __future__ import annotations

import sys
from typing import Any

import numpy as np

from funcgrad.array import Array, buffer_of, new_array
from funcgrad.core import Tracer
from funcgrad.meta import is_meta
from funcgrad.torch._runtime import dtypes as D, storage as _storage
from funcgrad.torch._runtime.layouts import dims_order, strided
from funcgrad.viz.html import tensor_html

__all__ = ["TensorData"]


class TensorData:
    """The values, memory and conversions of a tensor (the base of `Tensor`)."""

    __slots__ = ()

    # -- data ------------------------------------------------------------------------------
    @property
    def _data(self) -> Array:
        return self._a

    @property
    def shape(self) -> D.Size:
        return D.Size(self._a.shape)

    def size(self, dim: int | None = None) -> Any:
        s = self._a.shape
        return D.Size(s) if dim is None else s[dim]

    @property
    def dtype(self) -> D.dtype:
        return D.to_torch_dtype(self._a.dtype)

    @property
    def device(self) -> D.device:
        return D.device.of_funcgrad(self._a.device)

    @property
    def is_cuda(self) -> bool:
        return self.device.type == "cuda"

    @property
    def is_meta(self) -> bool:
        """Whether this tensor is on the 'meta' device: a shape and a dtype, no values."""
        return is_meta(self._a)

    layout = strided  # (the sparse tensors' classes have theirs)

    # PyTorch's flags of devices, layouts and kinds of tensor the facade does not have
    is_xpu = is_mps = is_ipu = is_maia = is_mtia = is_vulkan = is_xla = is_mkldnn = \
        is_nested = is_quantized = is_sparse = is_sparse_csr = property(lambda self: False)

    def is_conj(self) -> bool:
        """Whether a lazy conjugation is pending (the facade conjugates at once)."""
        return False

    def is_neg(self) -> bool:
        """Whether a lazy negation is pending (the facade negates at once)."""
        return False

    def is_pinned(self, device: Any = None) -> bool:
        return False

    def is_shared(self) -> bool:
        return False

    def is_distributed(self) -> bool:
        return False

    def is_coalesced(self) -> bool:
        raise RuntimeError("is_coalesced expected sparse coordinate tensor layout but got "
                           "Strided")

    def is_set_to(self, tensor: Any) -> bool:
        """Whether ``tensor`` is this tensor's memory with the same layout."""
        return (self.untyped_storage().data_ptr() == tensor.untyped_storage().data_ptr()
                and self.data_ptr() == tensor.data_ptr() and self.shape == tensor.shape
                and self.stride() == tensor.stride())

    @property
    def ndim(self) -> int:
        return self._a.ndim

    def dim(self) -> int:
        return self._a.ndim

    ndimension = dim

    def numel(self) -> int:
        return int(self._a.size)

    nelement = numel

    def element_size(self) -> int:
        return self._a.dtype.itemsize

    def is_floating_point(self) -> bool:
        return self.dtype.is_floating_point

    def is_complex(self) -> bool:
        return self.dtype.is_complex

    def is_inference(self) -> bool:
        return self._inference

    # -- memory: storage, strides, views --------------------------------------------------
    def resize_(self, *sizes: Any, memory_format: Any = None) -> Any:
        """Make this tensor ``sizes`` (C-contiguous) in its storage, as PyTorch's
        ``resize_``: within the storage's bytes no memory moves (views and numpy arrays
        keep seeing it); a larger size grows the storage, which funcgrad can do only for
        memory no one else sees (a numpy array's, or a view's, raises PyTorch's error)."""
        shape = tuple(sizes[0]) if len(sizes) == 1 and not isinstance(sizes[0], int) \
            else tuple(sizes)
        if not all(isinstance(n, int) and n >= 0 for n in shape):
            raise RuntimeError(f"Trying to create tensor with negative dimension: {shape}"
                               if any(isinstance(n, int) and n < 0 for n in shape) else
                               f"resize_(): sizes must be ints, got {sizes}")
        if self.requires_grad:
            raise RuntimeError("cannot resize variables that require grad")
        return self._resize(shape)

    def _resize(self, shape: tuple) -> Any:
        """`resize_` without its autograd check (``out=`` resizes as PyTorch's
        ``resize_output`` does, under no_grad)."""
        if self._raw() is None:
            raise RuntimeError("resize_: a tensor traced by a funcgrad transform or on the "
                               "meta device has no storage to resize")
        if shape == tuple(self._a.shape):
            return self
        fitted = _storage.restrided(self._a, shape)
        if fitted is None:
            if not _alone(self._a):
                raise RuntimeError(f"{_storage.NOT_RESIZABLE}: its memory is a numpy "
                                   "array's, or other tensors or arrays view it, and "
                                   "funcgrad cannot grow shared memory in place; resize a "
                                   "tensor with memory of its own (t.clone())")
            fitted = _storage.grown(self._a, shape)
        self._a = fitted
        self._view = None  # (no longer the view it was made as)
        self._vc.v += 1
        return self

    def resize_as_(self, other: Any, memory_format: Any = None) -> Any:
        """``resize_(other.shape)``."""
        return self.resize_(tuple(other.shape))

    def _raw(self) -> Any:
        """The backend ndarray (None while a funcgrad transform traces this tensor)."""
        return _storage.raw_of(self._a)

    def _layout(self) -> Any:
        """The ndarray whose strides and offset are this tensor's: its memory; for a view of
        a meta tensor, which has none, the same view of a zero buffer of the base's shape
        (its pages are never touched: views only move strides); None for a traced value."""
        raw = self._raw()
        view = self._view
        if raw is not None or view is None or not self.is_meta:
            return raw
        try:
            probe = new_array(np.zeros(view.base._a.shape, view.base._a.dtype))
        except MemoryError:
            raise RuntimeError("the layout of this view of a meta tensor is not known: its "
                               "base is too large to lay out on this machine") from None
        out = _storage.raw_of(view.fn(probe))
        shares = out is not None and _storage.owner(out) is _storage.owner(buffer_of(probe))
        return out if shares else None

    def stride(self, dim: int | None = None) -> Any:
        """Elements to step in memory per index of each dimension."""
        raw = self._layout()
        if raw is None:  # a traced value: the layout of a new contiguous tensor
            strides, step = [], 1
            for n in reversed(self._a.shape):
                strides.insert(0, step)
                step *= max(n, 1)
        else:
            strides = [s // raw.itemsize for s in raw.strides]
            for d in range(len(strides) - 1, -1, -1):  # numpy's new axes have stride 0,
                if raw.shape[d] == 1 and strides[d] == 0:  # PyTorch's the next one's span
                    strides[d] = (strides[d + 1] * raw.shape[d + 1]
                                  if d + 1 < len(strides) else 1)
        return tuple(strides) if dim is None else strides[dim]

    def storage_offset(self) -> int:
        raw = self._layout()
        if raw is None:
            return 0
        return (_storage.address(raw) - _storage.storage_address(raw)) // raw.itemsize

    def untyped_storage(self) -> _storage.UntypedStorage:
        raw = self._raw()
        if raw is None and self.is_meta:  # as PyTorch's: at 0, the size of the base's elements
            base = self if self._view is None else self._view.base
            return _storage.UntypedStorage(None, base.numel() * base.element_size())
        if raw is None:
            raise RuntimeError("Cannot access storage of a tensor traced by a funcgrad "
                               "transform (torch.func, torch.compile): it has no memory")
        return _storage.UntypedStorage(raw)

    def data_ptr(self) -> int:
        raw = self._raw()
        if raw is None:
            return 0 if self.is_meta else id(self._a)  # a meta tensor's memory is at 0
        return _storage.address(raw)

    def is_contiguous(self, memory_format: Any = None) -> bool:
        raw = self._layout()
        if raw is None:
            return True
        order = dims_order(memory_format, raw.ndim)
        if order is None:
            return bool(raw.flags.c_contiguous)
        return bool(raw.transpose(order).flags.c_contiguous)

    def _is_view(self) -> bool:
        return self._view is not None

    @property
    def _base(self) -> "Tensor | None":
        return None if self._view is None else self._view.base

    @property
    def _version(self) -> int:
        return self._vc.v

    def __dlpack__(self, *, stream: Any = None, **kwargs: Any) -> Any:
        """The DLPack capsule of the values (``cupy.from_dlpack(t)`` in a CUDA kernel);
        read-only in spirit: funcgrad arrays are immutable."""
        if self.requires_grad:
            raise RuntimeError("Can't export tensors that require gradient, use "
                               "tensor.detach()")
        return self._a.__dlpack__(stream=stream, **kwargs)

    def __dlpack_device__(self) -> tuple:
        return self._a.__dlpack_device__()

    def __len__(self) -> int:
        if not self.ndim:
            raise TypeError("len() of a 0-d tensor")
        return self.shape[0]

    # -- conversion ----------------------------------------------------------------------
    def numpy(self, *, force: bool = False) -> np.ndarray:
        """The values as a numpy array sharing this tensor's memory (writes through either
        are seen by the other, as PyTorch's); a host copy with ``force`` on a GPU."""
        if self.requires_grad and not force:
            raise RuntimeError("Can't call numpy() on Tensor that requires grad. Use "
                               "tensor.detach().numpy() instead.")
        if self.device.type != "cpu" and not force:
            raise TypeError(f"can't convert {self.device} device type tensor to numpy. Use "
                            "Tensor.cpu() to copy the tensor to host memory first.")
        self._own()
        raw = self._raw()
        if raw is None:
            raise self._a._conversion_error("a numpy array")
        return raw if type(raw) is np.ndarray else self._a.to_numpy()

    def __array__(self, dtype: Any = None, copy: Any = None) -> np.ndarray:
        out = self.numpy()
        if copy:
            return np.array(out, dtype=dtype, copy=True)
        return out if dtype is None else out.astype(dtype)

    def _host(self) -> np.ndarray:
        a = self._a
        if isinstance(a, Tracer):
            a = a.concrete()
        return a.to_numpy()

    def item(self) -> Any:
        if self.numel() != 1:
            raise RuntimeError(f"a Tensor with {self.numel()} elements cannot be converted "
                               "to Scalar")
        a = self._a
        if isinstance(a, Tracer):
            return a.item()
        return self._host().reshape(()).item()

    def tolist(self) -> Any:
        return self._host().tolist()

    def __float__(self) -> float:
        return float(self.item())

    def __int__(self) -> int:
        return int(self.item())

    def __complex__(self) -> complex:
        return complex(self.item())

    def __index__(self) -> int:
        if self.dtype.is_floating_point or self.dtype.is_complex or self.numel() != 1:
            raise TypeError("only integer tensors of a single element can be converted to "
                            "an index")
        return int(self.item())

    def __bool__(self) -> bool:
        if self.numel() != 1:
            raise RuntimeError("Boolean value of Tensor with more than one value is "
                               "ambiguous")
        return bool(self.item())

    def __format__(self, spec: str) -> str:
        if self.dim() == 0 and not isinstance(self._a, Tracer):
            return self.item().__format__(spec)
        return object.__format__(self, spec)

    def _repr_html_(self) -> str:
        return tensor_html(self)


class _Holder:
    """Holds an array as a tensor does (one slot): to count its references."""

    __slots__ = ("_a",)


def _references(a: Array) -> tuple:
    """How often ``a``, its backend array and each object down that array's chain of
    bases (the memory's owner last) is referenced."""
    raw = buffer_of(a)
    counts = [sys.getrefcount(a), sys.getrefcount(raw)]
    base = raw.base
    while base is not None:
        counts.append(sys.getrefcount(base))
        base = getattr(base, "base", None)
    return tuple(counts)


def _through_one_call(a: Array) -> tuple:
    """`_references` seen from one call down, as `_alone` sees them."""
    return _references(a)


def _calibrated() -> tuple:
    """`_references` of memory one tensor alone holds, through a strided view (the counts
    depend on the interpreter): (the Array's, the array's, each base's)."""
    holder = _Holder()
    holder._a = new_array(np.lib.stride_tricks.as_strided(np.empty(2), (1,), (8,)))
    counts = _through_one_call(holder._a)
    if len(set(counts[2:])) != 1:
        raise AssertionError(f"funcgrad.torch: unexpected reference counts {counts}")
    return counts[:3]


_ALONE = _calibrated()


def _alone(a: Array) -> bool:
    """Whether only the tensor holding ``a`` sees its memory: ``a``, its backend array and
    every base under it held once each (no numpy array, no other tensor, no view shares
    any of them), so that new memory changes what no one else can see."""
    counts = _references(a)
    return counts[:2] == _ALONE[:2] and all(c == _ALONE[2] for c in counts[2:])
