"""Writing a checkpoint in PyTorch's formats, so that real PyTorch loads it.

`TorchPickler` pickles the object as ``torch.save`` does: a facade tensor becomes
``torch._utils._rebuild_tensor_v2(storage, offset, size, stride, requires_grad, hooks)``
(``_rebuild_tensor_v3``, which adds the dtype, for the dtypes without a legacy storage
class: uint16/32/64 and float8, whose storages are untyped) with its storage a persistent
id, a Parameter ``_rebuild_parameter``, dtypes, ``Size`` and devices PyTorch's globals; everything else pickles as usual (under funcgrad's names, for
``weights_only=False`` loads). PyTorch's names are written as raw ``GLOBAL`` opcodes (the
stdlib pickler would insist on importing them), hence the pure-Python pickler as base.

`StorageTable` finds each tensor's storage (the memory block its numpy array views: a
funcgrad storage is exactly that block), so tensors viewing one block are saved with one
record and come back as views of one storage.
"""
from __future__ import annotations

import io
import pickle
import struct
import sys
import uuid
import zipfile
from collections import OrderedDict
from typing import Any

import numpy as np

from funcgrad.torch._runtime import dtypes as D
from funcgrad.torch._runtime import storage as _storage
from funcgrad.torch._tensor import Tensor
from funcgrad.torch.nn.parameter import Parameter
from funcgrad.torch.serialization._format import (ALIGNMENT, MAGIC_NUMBER, PROTOCOL_VERSION,
                                                  storage_type_of)

__all__ = ["write_zip", "write_legacy"]


class _Name:
    """A global written as ``GLOBAL module name`` without importing it."""

    __slots__ = ("module", "name")

    def __init__(self, module: str, name: str):
        self.module, self.name = module, name

    def __call__(self, *args: Any) -> Any:
        """(Callable only for pickle's check on a reduce function: it is never called.)"""
        raise TypeError(f"{self.module}.{self.name} is PyTorch's: funcgrad only names it")


_NAMES: dict[tuple[str, str], _Name] = {}


def _name(module: str, name: str) -> _Name:
    """One `_Name` per global, so that the pickle's memo writes each once."""
    key = (module, name)
    found = _NAMES.get(key)
    if found is None:
        found = _NAMES[key] = _Name(module, name)
    return found


class _Record:
    """One storage to write: its bytes, the dtype its tensors read them as, its key."""

    __slots__ = ("data", "dtype", "key", "location", "numel", "storage_class")

    def __init__(self, data: np.ndarray, dtype: D.dtype, key: str, location: str):
        self.data, self.dtype, self.key, self.location = data, dtype, key, location
        self.storage_class = storage_type_of(dtype)
        # an untyped storage counts bytes, a typed one elements
        self.numel = data.size // (1 if self.storage_class is None else dtype.itemsize)


class StorageTable:
    """The storages of one checkpoint, by the memory block they are."""

    def __init__(self) -> None:
        self.records: list[_Record] = []
        self._by_block: dict[int, tuple[Any, _Record]] = {}  # id(owner): (owner, record)

    def locate(self, t: Tensor) -> tuple[_Record, int, tuple]:
        """``t``'s record, its offset and its strides there (in elements)."""
        dtype = t.dtype
        if t.device.type != "cpu":  # (a host copy: views on a GPU are saved apart)
            raw = t.detach().cpu().numpy()
            return self._new(raw, dtype, str(t.device)), 0, _strides(raw)
        raw = t.detach().numpy()
        owner = _storage.owner(raw)
        block = _block_bytes(owner, raw)
        itemsize = raw.itemsize
        offset = _storage.address(raw) - _storage.storage_address(raw) if block is not None \
            else -1
        if (block is None or offset % itemsize or block.size % itemsize
                or any(s < 0 or s % itemsize for s in raw.strides)):
            raw = np.ascontiguousarray(raw)  # a layout PyTorch cannot express: a copy
            return self._new(raw, dtype, "cpu"), 0, _strides(raw)
        found = self._by_block.get(id(owner))
        if found is None:
            record = self._new(block, dtype, "cpu", owner)
        else:
            record = found[1]
            if record.dtype is not dtype:
                raise RuntimeError("Cannot save multiple tensors or storages that view the "
                                   "same data as different types")
        return record, offset // itemsize, tuple(s // itemsize for s in raw.strides)

    def _new(self, data: np.ndarray, dtype: D.dtype, location: str, owner: Any = None
             ) -> _Record:
        block = data if data.dtype == np.uint8 and data.ndim == 1 else _flat_bytes(data)
        record = _Record(block, dtype, str(len(self.records)), location)
        self.records.append(record)
        if owner is not None:
            self._by_block[id(owner)] = (owner, record)  # (owner held: its id stays unique)
        return record


def _strides(raw: np.ndarray) -> tuple:
    return tuple(s // raw.itemsize for s in raw.strides)


def _flat_bytes(arr: np.ndarray) -> np.ndarray:
    """A contiguous array's memory as flat bytes (no copy)."""
    return np.ascontiguousarray(arr).reshape(-1).view(np.uint8)


def _block_bytes(owner: Any, raw: np.ndarray) -> np.ndarray | None:
    """The whole memory block ``raw`` views, as flat bytes starting at the block's start
    (None where numpy cannot show it: then the tensor is saved as a copy)."""
    if isinstance(owner, np.ndarray):
        if not (owner.flags.c_contiguous or owner.flags.f_contiguous):
            return None
        return np.ravel(owner, order="K").view(np.uint8)  # (memory order: no copy)
    try:
        block = np.frombuffer(owner, np.uint8)
    except (TypeError, ValueError):
        return None
    return block if _storage.address(block) == _storage.storage_address(raw) else None


class TorchPickler(pickle._Pickler):
    """The pickler of ``torch.save``: tensors as PyTorch's rebuild calls on persistent
    storage ids, PyTorch's globals written by name."""

    dispatch = dict(pickle._Pickler.dispatch)

    def __init__(self, file: Any, protocol: int, storages: StorageTable, legacy: bool):
        super().__init__(file, protocol)
        self.storages = storages
        self.legacy = legacy

    def persistent_id(self, obj: Any) -> Any:
        if type(obj) is not _Record:
            return None
        storage_class = (_name("torch", obj.storage_class) if obj.storage_class is not None
                         else _name("torch.storage", "UntypedStorage"))
        pid = ("storage", storage_class, obj.key, obj.location, obj.numel)
        return pid + (None,) if self.legacy else pid

    def reducer_override(self, obj: Any) -> Any:
        if isinstance(obj, Tensor):
            return self._reduce_tensor(obj)
        cls = type(obj)
        if cls is D.Size:
            return (_name("torch", "Size"), (tuple(obj),))
        if cls is D.device:
            return (_name("torch", "device"), (str(obj),))
        return NotImplemented

    def _save_name(self, obj: _Name) -> None:
        self.write(pickle.GLOBAL + f"{obj.module}\n{obj.name}\n".encode("utf-8"))
        self.memoize(obj)

    def _save_dtype(self, obj: D.dtype) -> None:
        self.save(_name("torch", obj.name))

    dispatch[_Name] = _save_name

    def _reduce_tensor(self, t: Tensor) -> tuple:
        state = dict(t.__dict__)
        if type(t) is Parameter or (isinstance(t, Parameter) and not state):
            data = t.detach()
            if state:
                return (_name("torch._utils", "_rebuild_parameter_with_state"),
                        (data, t.requires_grad, OrderedDict(), state))
            return (_name("torch._utils", "_rebuild_parameter"),
                    (data, t.requires_grad, OrderedDict()))
        if t.is_meta:
            rebuild = (_name("torch._utils", "_rebuild_meta_tensor_no_storage"),
                       (t.dtype, tuple(t.shape), tuple(t.stride()), t.requires_grad))
        else:
            record, offset, strides = self.storages.locate(t)
            args = (record, offset, tuple(t.shape), strides, t.requires_grad, OrderedDict())
            rebuild = ((_name("torch._utils", "_rebuild_tensor_v2"), args)
                       if record.storage_class is not None else
                       (_name("torch._utils", "_rebuild_tensor_v3"), args + (t.dtype,)))
        if type(t) is Tensor and not state:
            return rebuild
        return (_name("torch._tensor", "_rebuild_from_type_v2"),
                (rebuild[0], type(t), rebuild[1], state))


for _dtype_class in {type(D.float32), type(D.bfloat16)}:  # (bfloat16's without ml_dtypes)
    TorchPickler.dispatch[_dtype_class] = TorchPickler._save_dtype


def _pickled(obj: Any, protocol: int, storages: StorageTable, legacy: bool) -> bytes:
    buffer = io.BytesIO()
    TorchPickler(buffer, protocol, storages, legacy).dump(obj)
    return buffer.getvalue()


def write_zip(obj: Any, f: Any, protocol: int, prefix: str) -> None:
    """``obj`` as PyTorch 2.x's zip checkpoint, to binary file ``f``."""
    storages = StorageTable()
    data_pkl = _pickled(obj, protocol, storages, legacy=False)
    with zipfile.ZipFile(f, "w", zipfile.ZIP_STORED, allowZip64=True) as zf:
        _write_record(zf, f"{prefix}/data.pkl", data_pkl)
        _write_record(zf, f"{prefix}/.format_version", b"1")
        _write_record(zf, f"{prefix}/.storage_alignment", str(ALIGNMENT).encode())
        _write_record(zf, f"{prefix}/byteorder", sys.byteorder.encode())
        for record in storages.records:
            _write_record(zf, f"{prefix}/data/{record.key}", record.data)
        _write_record(zf, f"{prefix}/version", b"3\n")
        _write_record(zf, f"{prefix}/.data/serialization_id",
                      str(uuid.uuid4().int).zfill(40)[:40].encode())


def _write_record(zf: zipfile.ZipFile, name: str, data: Any) -> None:
    """One record, stored, its bytes starting at a multiple of `ALIGNMENT` in the file (as
    PyTorch's writer pads them: an extra field of id ``FB``), so that loads can map them."""
    info = zipfile.ZipInfo(name, date_time=(1980, 1, 1, 0, 0, 0))
    info.compress_type = zipfile.ZIP_STORED
    nbytes = len(data) if isinstance(data, bytes) else data.nbytes
    info.file_size = nbytes
    zip64 = nbytes * 1.05 > zipfile.ZIP64_LIMIT  # (zipfile's own test: 20 more header bytes)
    header_end = zf.fp.tell() + 30 + len(name.encode("utf-8")) + 4 + (20 if zip64 else 0)
    pad = -header_end % ALIGNMENT
    info.extra = b"FB" + struct.pack("<H", pad) + b"Z" * pad
    with zf.open(info, "w", force_zip64=zip64) as out:
        out.write(data if isinstance(data, bytes) else memoryview(data))


def write_legacy(obj: Any, f: Any, protocol: int) -> None:
    """``obj`` in PyTorch's legacy format (``_use_new_zipfile_serialization=False``)."""
    storages = StorageTable()
    body = _pickled(obj, protocol, storages, legacy=True)
    for value in (MAGIC_NUMBER, PROTOCOL_VERSION,
                  {"protocol_version": PROTOCOL_VERSION,
                   "little_endian": sys.byteorder == "little",
                   "type_sizes": {"short": 2, "int": 4, "long": 4}}):
        pickle.dump(value, f, protocol=protocol)
    f.write(body)
    pickle.dump([r.key for r in storages.records], f, protocol=protocol)
    for record in storages.records:
        f.write(struct.pack("<q" if sys.byteorder == "little" else ">q", record.numel))
        f.write(memoryview(record.data))
