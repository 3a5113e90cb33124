"""The memory behind facade tensors: backend buffers shared by views, as PyTorch's storages.

A concrete tensor holds a funcgrad Array, which wraps one numpy (or cupy) ndarray. The
memory block that ndarray lives in is the tensor's *storage*: numpy tells us its owner (an
ndarray's ``base``, or the ndarray itself when it owns its data), so two tensors whose
ndarrays have the same owner view one storage, with offsets and strides that numpy's own
views already carry. Views made by ops (`funcgrad.torch._dispatch` finds them by this
owner test) share their base's version counter.

In-place ops are the only writers (`write`): they compute the new values functionally,
then copy them into the memory, so every view and every numpy array sharing it sees the
change, and the shared version counter is bumped by the caller. Funcgrad itself never
writes into an Array's memory; the values a backward pass reads are guarded by the version
counters (PyTorch's "modified by an inplace operation" error), and the old value an
in-place op's own rule needs is snapshotted (`snapshot`) before the write.
"""
from __future__ import annotations

import math
from typing import Any

import numpy as np

from funcgrad.array import Array, buffer_of, new_array
from funcgrad.backend import backend_of
from funcgrad.dtypes import EXTENDED_FLOATS
from funcgrad.torch._runtime import dtypes as D

__all__ = ["raw_of", "owner", "same_storage", "address", "storage_address",
           "storage_nbytes", "restrided", "grown", "NOT_RESIZABLE", "write", "add_scaled",
           "snapshot", "viewable", "overlapping", "as_strided", "strided", "OVERLAP_ERROR",
           "UntypedStorage"]

NOT_RESIZABLE = "Trying to resize storage that is not resizable"
OVERLAP_ERROR = ("unsupported operation: more than one element of the written-to tensor "
                 "refers to a single memory location. Please clone() the tensor before "
                 "performing the operation.")


def raw_of(a: Any) -> Any:
    """The backend ndarray of a concrete Array; None for a tracer (a value being traced by
    a funcgrad transform has no memory to share)."""
    return buffer_of(a) if type(a) is Array else None


def owner(raw: Any) -> Any:
    """The object owning ``raw``'s memory: numpy and cupy point a view's ``base`` at it
    (views of views included); a strided view (``as_strided``) points at an interface
    object whose own ``base`` leads there."""
    base = raw.base
    if base is None:
        return raw
    while getattr(base, "base", None) is not None:
        base = base.base
    return base


def same_storage(a: Any, b: Any) -> bool:
    """Whether Arrays ``a`` and ``b`` are views of one memory block."""
    ra, rb = raw_of(a), raw_of(b)
    return ra is not None and rb is not None and owner(ra) is owner(rb)


def address(raw: Any) -> int:
    """The address of ``raw``'s first element (PyTorch's ``data_ptr``)."""
    if type(raw) is np.ndarray:
        return raw.__array_interface__["data"][0]
    return int(raw.data.ptr)


def storage_address(raw: Any) -> int:
    """The address where ``raw``'s storage starts (its owner's first element; for memory
    owned by another kind of object, such as the bytes under ``np.frombuffer``, the lowest
    address ``raw`` touches)."""
    base = owner(raw)
    if isinstance(base, type(raw)):
        return address(base)
    return int(np.byte_bounds(raw)[0]) if type(raw) is np.ndarray else address(raw)


def storage_nbytes(raw: Any) -> int:
    base = owner(raw)
    return int(getattr(base, "nbytes", raw.nbytes))


def viewable(a: Any, shape: tuple) -> bool:
    """Whether ``a``'s memory can be read in ``shape`` without a copy (traced values: yes,
    they have no layout yet)."""
    raw = raw_of(a)
    if raw is None or type(raw) is not np.ndarray:
        return True
    alias = raw.view()
    try:
        alias.shape = shape  # numpy refuses where the strides cannot express the shape
    except AttributeError:
        return False
    return True


def as_strided(raw: Any, shape: tuple, byte_strides: Any) -> Any:
    """numpy's (or cupy's) ``as_strided``, also for ml_dtypes' floats, whose dtype numpy's
    array interface cannot name ('<f1', '<V2'): those go through an unsigned view."""
    stride_tricks = backend_of(raw).xp.lib.stride_tricks
    if raw.dtype not in EXTENDED_FLOATS:
        return stride_tricks.as_strided(raw, shape, byte_strides)
    carrier = raw.view(np.dtype(f"u{raw.itemsize}"))
    return stride_tricks.as_strided(carrier, shape, byte_strides).view(raw.dtype)


def strided(a: Array, offset: int, shape: tuple, strides: tuple) -> Array:
    """The view of ``a``'s memory (row-major, ``a`` contiguous) at element ``offset`` with
    element ``strides`` (PyTorch's ``as_strided``; the caller checked the bounds)."""
    raw = buffer_of(a).reshape(-1)
    start = raw[offset:] if offset < raw.size else raw[:0]
    return new_array(as_strided(start, shape, tuple(s * raw.itemsize for s in strides)))


def restrided(a: Array, shape: tuple) -> Array | None:
    """``a``'s memory from its first element, read as a C-contiguous array of ``shape``
    (no copy: the storage is shared), or None where the storage ends too soon
    (PyTorch's ``resize_`` within a storage's bytes)."""
    raw = buffer_of(a)
    nbytes = math.prod(shape) * raw.itemsize
    if address(raw) - storage_address(raw) + nbytes > storage_nbytes(raw):
        return None
    strides, step = [], raw.itemsize
    for n in reversed(shape):
        strides.insert(0, step)
        step *= max(n, 1)
    return new_array(as_strided(raw, shape, strides))


def grown(a: Array, shape: tuple) -> Array:
    """New memory of ``shape`` holding, first, the storage bytes from ``a``'s first element
    on (a storage grown by ``resize_`` keeps its contents; the rest is zeros here)."""
    raw = buffer_of(a)
    xp = backend_of(raw).xp
    out = xp.zeros(shape, raw.dtype)
    kept = min(out.size, (storage_nbytes(raw) - (address(raw) - storage_address(raw)))
               // raw.itemsize)
    if kept:
        out.reshape(-1)[:kept] = buffer_of(restrided(a, (kept,)))
    return new_array(out)


def snapshot(a: Array) -> Array:
    """A copy of ``a`` in memory of its own (an old value the next write would change)."""
    raw = buffer_of(a)
    return new_array(backend_of(raw).xp.array(raw, copy=True))


def overlapping(a: Array) -> bool:
    """Whether several elements of ``a`` share memory: a stride 0 (``expand``), or
    windows that overlap (``unfold`` with a step below the size, ``as_strided``). Writing
    a computed result there is undefined in PyTorch; here it is refused."""
    raw = buffer_of(a)
    if raw.size < 2:
        return False
    flags = raw.flags
    if flags.c_contiguous or flags.f_contiguous:  # (no stride 0 along an axis of size > 1)
        return False
    if any(s == 0 and n > 1 for n, s in zip(raw.shape, raw.strides)):
        return True
    offsets = np.zeros((), np.int64)  # every element's byte offset: are they distinct?
    for n, s in zip(raw.shape, raw.strides):
        offsets = offsets[..., None] + np.arange(n, dtype=np.int64) * s
    return np.unique(offsets).size < raw.size


def write(target: Array, value: Array, region: Any = None, overlap_ok: bool = False
          ) -> None:
    """Copy the values of ``value`` (same shape and dtype) into ``target``'s memory: all
    of them, or those at index ``region``. Memory shared by several elements (a stride 0,
    as ``expand`` makes) raises PyTorch's error unless ``overlap_ok``."""
    dst = buffer_of(target)
    if not overlap_ok and overlapping(target):
        raise RuntimeError(OVERLAP_ERROR)
    if type(dst) is np.ndarray and not dst.flags.writeable:
        dst = _writable(dst)
    src = buffer_of(value) if type(value) is Array else value
    if region is None:
        backend_of(dst).xp.copyto(dst, src)
    else:
        where = tuple(buffer_of(i) if type(i) is Array else i for i in region) \
            if isinstance(region, tuple) else buffer_of(region) if type(region) is Array \
            else region
        dst[where] = src[where]


def add_scaled(target: Array, value: Array, alpha: Any) -> None:
    """``target += alpha * value`` in ``target``'s memory (``value`` broadcasting to it):
    the optimizers' update, one pass over the memory with at most one temporary, where
    writing a new ``target + alpha * value`` would allocate it and then copy it."""
    dst = buffer_of(target)
    if overlapping(target):
        raise RuntimeError(OVERLAP_ERROR)
    if type(dst) is np.ndarray and not dst.flags.writeable:
        dst = _writable(dst)
    xp = backend_of(dst).xp
    src = buffer_of(value)
    xp.add(dst, src if alpha == 1 else xp.multiply(src, alpha), out=dst, casting="same_kind")


def _writable(raw: np.ndarray) -> np.ndarray:
    """A writable alias of a read-only numpy view (``np.diagonal`` gives those) whose
    memory is writable; a read-only buffer (a read-only array given to ``from_numpy``)
    raises instead of being written."""
    base = owner(raw)
    if not isinstance(base, np.ndarray) or not base.flags.writeable:
        raise ValueError("this tensor's memory is read-only (it was made from a read-only "
                         "numpy array by torch.from_numpy or torch.as_tensor), so it cannot "
                         "be written in place; copy the array first (np.array(a)) or use "
                         "an out-of-place op")
    flat = base if base.flags.c_contiguous else base.T
    return np.ndarray(raw.shape, raw.dtype, buffer=flat,
                      offset=address(raw) - address(base), strides=raw.strides)


class UntypedStorage:
    """What ``Tensor.untyped_storage()`` returns: the memory block a tensor views."""

    def __init__(self, raw: Any, meta_nbytes: int = 0):
        self._raw = raw  # None: the storage of a meta tensor, at 0, of meta_nbytes bytes
        self._meta_nbytes = meta_nbytes

    def data_ptr(self) -> int:
        return 0 if self._raw is None else storage_address(self._raw)

    def nbytes(self) -> int:
        return self._meta_nbytes if self._raw is None else storage_nbytes(self._raw)

    def size(self) -> int:
        return self.nbytes()

    __len__ = size

    def element_size(self) -> int:
        return 1

    @property
    def device(self) -> D.device:
        if self._raw is None:
            return D.device("meta")
        return D.device("cpu") if type(self._raw) is np.ndarray else D.device("cuda", 0)

    def __repr__(self) -> str:
        return f"UntypedStorage(nbytes={self.nbytes()}, data_ptr={self.data_ptr():#x})"
