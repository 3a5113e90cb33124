"""Tensors out of a checkpoint's storages: PyTorch's rebuild functions, on the facade.

A checkpoint's pickle rebuilds every tensor by calling one of ``torch._utils``' rebuild
functions on a storage (the reader's `LoadedStorage`), an offset, a size and a stride. The
functions here are what the reader hands out under those names. Each tensor is a strided
numpy view into its storage's buffer, so tensors that viewed one storage when saved view one
memory block again (writes through one are seen by the others, as in PyTorch). The layout
comes from an untrusted file, so it is checked against the storage before any view is made:
a view past the storage's end would read memory that is not the tensor's.
"""
from __future__ import annotations

from typing import Any

import numpy as np

from funcgrad.array import new_array
from funcgrad.torch._runtime import dtypes as D
from funcgrad.torch._runtime.storage import as_strided
from funcgrad.torch._factories import empty
from funcgrad.torch._tensor import Tensor, make
from funcgrad.torch.nn.parameter import Parameter

__all__ = ["CorruptCheckpoint", "LoadedStorage", "ForeignDtype", "rebuild_tensor", "rebuild_tensor_v2",
           "rebuild_tensor_v3", "rebuild_parameter", "rebuild_parameter_with_state",
           "rebuild_from_type_v2", "rebuild_meta_tensor_no_storage", "unsupported_rebuild"]


class CorruptCheckpoint(RuntimeError):
    """A checkpoint that fails a check of what it says against itself (the reader adds
    the file's name)."""


class ForeignDtype:
    """A PyTorch dtype the facade has no tensors of (``torch.uint16``, the float8 types):
    it unpickles, and a tensor of it raises naming it."""

    __slots__ = ("name",)

    def __init__(self, name: str):
        self.name = name

    def __repr__(self) -> str:
        return f"torch.{self.name}"


class LoadedStorage:
    """A storage read from a checkpoint: its bytes (a writable uint8 array, or a
    copy-on-write map of the file), the dtype its pickle named (None: untyped), and the
    location its tensors go to (``'cpu'``, ``'cuda:0'``: the saved one after
    ``map_location``). It offers what a ``map_location`` callable uses of PyTorch's
    storages: ``device``, ``cpu()``, ``cuda()``, ``to()``, ``nbytes()``."""

    __slots__ = ("data", "dtype", "location", "byteorder", "_typed")

    def __init__(self, data: np.ndarray, dtype: Any, location: str, byteorder: str = "little"):
        self.data = data
        self.dtype = dtype
        self.location = location
        self.byteorder = byteorder
        self._typed: dict = {}

    def moved(self, location: str) -> "LoadedStorage":
        """This storage's bytes, destined for ``location``."""
        out = LoadedStorage(self.data, self.dtype, location, self.byteorder)
        out._typed = self._typed
        return out

    def retyped(self, dtype: Any) -> "LoadedStorage":
        """This storage's bytes, as another storage type names them (a legacy file's
        storage pickled under two types)."""
        out = self.moved(self.location)
        out.dtype = dtype
        return out

    @property
    def device(self) -> D.device:
        return D.device(self.location)

    def cpu(self) -> "LoadedStorage":
        return self.moved("cpu")

    def cuda(self, device: Any = None, non_blocking: bool = False) -> "LoadedStorage":
        index = 0 if device is None else D.device(device).index or 0
        return self.moved(f"cuda:{index}")

    def to(self, device: Any = None, non_blocking: bool = False) -> "LoadedStorage":
        return self.moved(str(D.device(device)))

    def nbytes(self) -> int:
        return int(self.data.size)

    def __len__(self) -> int:
        return self.nbytes() // (1 if self.dtype is None else self.dtype.itemsize)

    def typed(self, dtype: D.dtype) -> np.ndarray:
        """The storage's elements as ``dtype`` (one array per dtype, so that every tensor
        of this storage and dtype views the same memory)."""
        arr = self._typed.get(dtype.name)
        if arr is None:
            np_dtype = dtype.np
            usable = self.data.size - self.data.size % np_dtype.itemsize
            arr = self.data[:usable].view(np_dtype)
            if self.byteorder == "big" and np_dtype.itemsize > 1:
                arr = arr.view(np_dtype.newbyteorder(">")).astype(np_dtype)
            self._typed[dtype.name] = arr
        return arr


def _facade_dtype(dtype: Any) -> D.dtype:
    if isinstance(dtype, ForeignDtype):
        raise RuntimeError(f"funcgrad.torch has no {dtype!r} tensors: this checkpoint holds "
                           f"one; convert it in PyTorch first (e.g. t.to(torch.int64))")
    if not isinstance(dtype, D.dtype):
        raise CorruptCheckpoint(f"a tensor's dtype in the checkpoint is {dtype!r}, not a "
                                "dtype")
    return dtype


def _check_layout(numel: int, offset: Any, size: Any, stride: Any) -> None:
    """Refuse a layout that does not fit in a storage of ``numel`` elements."""
    fields = (offset, *size, *stride)
    if not all(type(v) is int and v >= 0 for v in fields) or len(size) != len(stride):
        raise CorruptCheckpoint(f"a tensor in the checkpoint has offset {offset!r}, size "
                                f"{size!r} and stride {stride!r}: not a tensor layout")
    end = offset + sum((n - 1) * s for n, s in zip(size, stride)) + 1
    if 0 in size:
        end = offset
    if end > numel:
        raise CorruptCheckpoint(f"a tensor in the checkpoint of size {tuple(size)} and "
                                f"stride {tuple(stride)} at offset {offset} reaches past its "
                                f"storage of {numel} elements")


def _tensor_of(storage: Any, offset: Any, size: Any, stride: Any, requires_grad: Any,
               dtype: Any) -> Tensor:
    if not isinstance(storage, LoadedStorage):
        raise CorruptCheckpoint(f"a tensor in the checkpoint is rebuilt from "
                                f"{type(storage)!r}, not a storage")
    dtype = _facade_dtype(dtype)
    size, stride = tuple(size), tuple(stride)
    elements = storage.typed(dtype)
    _check_layout(elements.size, offset, size, stride)
    itemsize = elements.itemsize
    raw = as_strided(elements[offset:], size, [s * itemsize for s in stride])
    t = make(new_array(raw), bool(requires_grad) and (dtype.is_floating_point or
                                                      dtype.is_complex))
    if storage.location != "cpu":
        t = t.to(storage.location)  # (each tensor a copy of its own: no views across devices)
    return t


def rebuild_tensor(storage: Any, storage_offset: int, size: Any, stride: Any) -> Tensor:
    """``torch._utils._rebuild_tensor`` (the oldest files)."""
    return _tensor_of(storage, storage_offset, size, stride, False, storage.dtype)


def rebuild_tensor_v2(storage: Any, storage_offset: int, size: Any, stride: Any,
                      requires_grad: bool = False, backward_hooks: Any = None,
                      metadata: Any = None) -> Tensor:
    """``torch._utils._rebuild_tensor_v2``: what ``torch.save`` writes for a tensor of a
    dtype with a storage class of its own."""
    return _tensor_of(storage, storage_offset, size, stride, requires_grad,
                      getattr(storage, "dtype", None))


def rebuild_tensor_v3(storage: Any, storage_offset: int, size: Any, stride: Any,
                      requires_grad: bool, backward_hooks: Any, dtype: Any,
                      metadata: Any = None) -> Tensor:
    """``torch._utils._rebuild_tensor_v3``: an untyped storage and the tensor's dtype."""
    return _tensor_of(storage, storage_offset, size, stride, requires_grad, dtype)


def _set_state(obj: Any, state: Any) -> None:
    """PyTorch's ``_set_obj_state``, limited to the object's ``__dict__``: a checkpoint
    may add attributes to a tensor, never replace the tensor's own fields."""
    if isinstance(state, tuple) and len(state) == 2:
        state, slots = state
        state = {**(state or {}), **(slots or {})}
    if state:
        if not isinstance(state, dict) or not all(type(k) is str for k in state):
            raise CorruptCheckpoint(f"a tensor's state in the checkpoint is "
                                    f"{type(state)!r}, not a dict of attributes")
        obj.__dict__.update(state)


def rebuild_parameter(data: Tensor, requires_grad: bool, backward_hooks: Any) -> Parameter:
    """``torch._utils._rebuild_parameter``: a Parameter on the rebuilt tensor's memory."""
    return Parameter(data, bool(requires_grad))


def rebuild_parameter_with_state(data: Tensor, requires_grad: bool, backward_hooks: Any,
                                 state: Any) -> Parameter:
    """``torch._utils._rebuild_parameter_with_state``: a Parameter with attributes."""
    p = rebuild_parameter(data, requires_grad, backward_hooks)
    _set_state(p, state)
    return p


def rebuild_from_type_v2(func: Any, new_type: Any, args: Any, state: Any) -> Tensor:
    """``torch._tensor._rebuild_from_type_v2``: a tensor of a subclass, or with attributes.
    ``func`` and ``new_type`` came through the unpickler's allow-list."""
    ret = func(*args)
    if type(ret) is not new_type:
        if not (isinstance(new_type, type) and issubclass(new_type, Tensor)):
            raise RuntimeError(f"the checkpoint rebuilds a tensor as {new_type!r}, which is "
                               "not a Tensor class")
        ret = ret.as_subclass(new_type)
    _set_state(ret, state)
    return ret


def rebuild_meta_tensor_no_storage(dtype: Any, size: Any, stride: Any,
                                   requires_grad: bool) -> Tensor:
    """``torch._utils._rebuild_meta_tensor_no_storage``: a tensor on the meta device."""
    return empty(tuple(size), dtype=_facade_dtype(dtype), device="meta",
                 requires_grad=bool(requires_grad))


def unsupported_rebuild(kind: str) -> Any:
    """A rebuild function for a tensor kind the facade does not have (sparse, quantized,
    nested): it loads as far as that tensor and raises naming it."""
    def rebuild(*args: Any, **kwargs: Any) -> Any:
        raise RuntimeError(f"this checkpoint holds a {kind} tensor, which funcgrad.torch "
                           "does not have: convert it to a dense tensor in PyTorch first "
                           "(t.to_dense() / t.dequantize())")
    rebuild.__name__ = f"rebuild_{kind}"
    return rebuild

