"""Reading a checkpoint: PyTorch's zip archive or its legacy run of pickles.

`read_checkpoint` opens the container, unpickles ``data.pkl`` with the unpickler it is
given (weights-only or full), and serves each storage the pickle names from its record:
read and CRC-checked, or mapped copy-on-write from the file (``mmap``). ``map_location``
decides where each storage's tensors go. Everything the file says is checked before it is
used to allocate or index memory: record sizes against the archive, element counts against
records, tensor layouts against storages (`_rebuild`). A file that fails a check raises
`CorruptCheckpoint` naming the file and what is wrong, before anything is returned.
"""
from __future__ import annotations

import io
import os
import struct
import zipfile
from typing import Any, Callable

import numpy as np

from funcgrad.torch._runtime import dtypes as D
from funcgrad.torch import cuda
from funcgrad.torch.serialization._format import (CUDA_UNAVAILABLE, MAGIC_NUMBER,
                                                  PROTOCOL_VERSION, StorageType)
from funcgrad.torch.serialization._rebuild import CorruptCheckpoint, LoadedStorage

__all__ = ["read_checkpoint", "restorer", "source_name", "zip_pickle_bytes",
           "MapLocationError"]

_CHUNK = 1 << 24  # bytes read at a time into a storage's memory


class MapLocationError(TypeError):
    """A ``map_location`` callable that returned something other than a storage (the
    caller's mistake, reported as such, not as a damaged file)."""


def source_name(f: Any) -> str:
    """How messages name the file: its path, or the file object's name."""
    if isinstance(f, (str, os.PathLike)):
        return repr(os.fspath(f))
    name = getattr(f, "name", None)
    return repr(name) if isinstance(name, str) else "the file-like object"


def restorer(map_location: Any) -> Callable[[LoadedStorage, str], LoadedStorage]:
    """``map_location`` (None, a device or its name, a dict of names, or a callable
    ``(storage, location) -> storage``) as one function from a storage and its saved
    location to the storage where its tensors go."""
    if map_location is None:
        return _to_location
    if isinstance(map_location, (str, bytes, D.device)):
        target = str(D.device(map_location.decode() if isinstance(map_location, bytes)
                              else map_location))
        return lambda storage, location: _to_location(storage, target)
    if isinstance(map_location, dict):
        return lambda storage, location: _to_location(
            storage, str(map_location.get(location, location)))
    if callable(map_location):
        def restore(storage: LoadedStorage, location: str) -> LoadedStorage:
            result = map_location(storage, location)
            if result is None:
                return _to_location(storage, location)
            if not isinstance(result, LoadedStorage):
                raise MapLocationError("map_location must return the storage it is given (or "
                                       "one of its .cpu()/.cuda()/.to() results), got "
                                       f"{type(result)!r}")
            return _to_location(result, result.location)
        return restore
    raise TypeError("map_location must be a callable, a string, a torch.device or a dict, "
                    f"got {type(map_location)!r}")


def _to_location(storage: LoadedStorage, location: str) -> LoadedStorage:
    device = D.device(location)
    if device.type == "cuda" and not cuda.is_available():
        raise RuntimeError(CUDA_UNAVAILABLE)
    if device.type not in ("cpu", "cuda"):
        raise RuntimeError(f"cannot load a checkpoint's tensors onto the {device} device: "
                           "use map_location='cpu' or 'cuda'")
    return storage if storage.location == str(device) else storage.moved(str(device))


class _Storages:
    """The persistent-id loader of one checkpoint: each storage made once (its bytes by
    ``make(key, nbytes)``, then placed by ``restore``, `restorer`'s; or, with no
    ``restore``, the finished storage ``make(key)``), then shared."""

    def __init__(self, make: Callable, restore: Callable | None, byteorder: str,
                 fields: int):
        self.make = make
        self.restore = restore
        self.byteorder = byteorder
        self.fields = fields  # 5 in the zip format, 6 (a storage view) in the legacy one
        self.loaded: dict[str, LoadedStorage] = {}
        self.locations: dict[str, str] = {}  # each storage's saved location

    def __call__(self, pid: Any) -> Any:
        if isinstance(pid, bytes):
            pid = pid.decode("ascii")
        if (isinstance(pid, tuple) and len(pid) == 2 and pid[0] in ("module", b"module")):
            return pid[1]  # (legacy: a module's source, not saved in the file)
        if not (isinstance(pid, tuple) and len(pid) == self.fields and
                pid[0] in ("storage", b"storage")):
            raise CorruptCheckpoint(f"unknown persistent id {pid!r} in its pickle")
        _, storage_type, key, location, numel = pid[:5]
        if isinstance(location, bytes):
            location = location.decode("ascii")
        if (not isinstance(storage_type, StorageType) or type(numel) is not int or numel < 0
                or not isinstance(key, str) or not isinstance(location, str)):
            raise CorruptCheckpoint(f"a storage's persistent id {pid!r} is not (type, key, "
                                    "location, size)")
        storage = self.loaded.get(key)
        if storage is None:
            if self.restore is None:  # (storages made already: ``make`` gives them)
                storage = self.make(key)
            else:
                data = self.make(key, numel * storage_type.itemsize())
                storage = LoadedStorage(data, storage_type.dtype, "cpu", self.byteorder)
                storage = self.restore(storage, location)
            self.loaded[key] = storage
            self.locations[key] = location
        if storage.dtype is not storage_type.dtype:
            storage = storage.retyped(storage_type.dtype)
        if self.fields == 6 and pid[5] is not None:
            storage = self._view(storage, pid[5])
        return storage

    def _view(self, storage: LoadedStorage, view: Any) -> LoadedStorage:
        """A legacy storage view: (its key, its offset and size in elements)."""
        _, offset, size = view
        itemsize = 1 if storage.dtype is None else storage.dtype.itemsize
        if not (type(offset) is int and type(size) is int and 0 <= offset and
                (offset + size) * itemsize <= storage.data.size):
            raise CorruptCheckpoint(f"a storage view {view!r} reaches past its storage")
        part = LoadedStorage(storage.data[offset * itemsize:(offset + size) * itemsize],
                             storage.dtype, storage.location, storage.byteorder)
        return part


def read_checkpoint(f: Any, unpickler: Callable, restore: Callable, mmap: bool) -> Any:
    """Load the object checkpoint ``f`` (a path or a binary file object) holds, with
    ``unpickler(file, persistent_load)``'s rules; ``restore``: `restorer`'s."""
    opened = open(f, "rb") if isinstance(f, (str, os.PathLike)) else f
    try:
        if not opened.seekable():
            opened = io.BytesIO(opened.read())
        start = opened.tell()
        magic = opened.read(4)
        opened.seek(start)
        if magic == b"PK\x03\x04":
            return _read_zip(opened, unpickler, restore,
                             os.fspath(f) if mmap else None)
        return _read_legacy(opened, unpickler, restore)
    finally:
        if opened is not f:
            opened.close()


def _open_zip(opened: Any) -> zipfile.ZipFile:
    try:
        return zipfile.ZipFile(opened)
    except (zipfile.BadZipFile, OSError, ValueError, EOFError, struct.error) as e:
        raise CorruptCheckpoint("PytorchStreamReader failed reading zip archive: failed "
                                f"finding central directory ({e})") from None


def _prefix(zf: zipfile.ZipFile) -> str:
    names = zf.namelist()
    if not names or "/" not in names[0]:
        raise CorruptCheckpoint("the zip archive holds no checkpoint folder (it was not "
                                "written by torch.save)")
    prefix = names[0].split("/", 1)[0]
    if f"{prefix}/data.pkl" not in names:
        if f"{prefix}/constants.pkl" in names or f"{prefix}/funcgrad_script.json" in names:
            raise RuntimeError("this zip file is a TorchScript archive: load it with "
                               "torch.jit.load")
        raise CorruptCheckpoint("PytorchStreamReader failed locating file data.pkl: file "
                                "not found")
    return prefix


def zip_pickle_bytes(f: Any) -> bytes:
    """The ``data.pkl`` bytes of the zip checkpoint ``f`` (a path or a binary file)."""
    opened = open(f, "rb") if isinstance(f, (str, os.PathLike)) else f
    try:
        with _open_zip(opened) as zf:
            return zf.read(f"{_prefix(zf)}/data.pkl")
    finally:
        if opened is not f:
            opened.close()


def _read_zip(opened: Any, unpickler: Callable, restore: Callable, mmap_path: str | None
              ) -> Any:
    with _open_zip(opened) as zf:
        prefix = _prefix(zf)
        names = set(zf.namelist())
        byteorder = (zf.read(f"{prefix}/byteorder").decode("ascii", "replace")
                     if f"{prefix}/byteorder" in names else "little")
        if byteorder not in ("little", "big"):
            raise CorruptCheckpoint(f"its byteorder record says {byteorder!r}")
        opened.seek(0, io.SEEK_END)
        archive_size = opened.tell()

        def record(key: str, nbytes: int) -> np.ndarray:
            return _record_bytes(zf, opened, f"{prefix}/data/{key}", nbytes, archive_size,
                                 mmap_path)

        storages = _Storages(record, restore, byteorder, 5)
        return unpickler(io.BytesIO(zf.read(f"{prefix}/data.pkl")), storages).load()


def _record_bytes(zf: zipfile.ZipFile, opened: Any, name: str, nbytes: int,
                  archive_size: int, mmap_path: str | None) -> np.ndarray:
    """The ``nbytes`` bytes of storage record ``name``: writable memory of their own, or a
    copy-on-write map of the file."""
    try:
        info = zf.getinfo(name)
    except KeyError:
        raise CorruptCheckpoint(f"its storage record {name} is missing") from None
    if info.file_size < nbytes or info.compress_size > archive_size:
        raise CorruptCheckpoint(f"its storage record {name} holds {info.file_size} bytes "
                                f"where its storage needs {nbytes}")
    if nbytes == 0:
        return np.empty(0, np.uint8)
    if mmap_path is not None and info.compress_type == zipfile.ZIP_STORED:
        opened.seek(info.header_offset)
        header = opened.read(30)
        if len(header) < 30 or header[:4] != b"PK\x03\x04":
            raise CorruptCheckpoint(f"the local header of {name} is damaged")
        name_len, extra_len = struct.unpack("<HH", header[26:30])
        offset = info.header_offset + 30 + name_len + extra_len
        if offset + nbytes > archive_size:
            raise CorruptCheckpoint(f"its storage record {name} reaches past the file's end")
        return np.memmap(mmap_path, np.uint8, mode="c", offset=offset, shape=(nbytes,))
    out = np.empty(nbytes, np.uint8)
    view = memoryview(out)
    with zf.open(info) as fh:
        done = 0
        while done < nbytes:
            got = fh.readinto(view[done:done + _CHUNK])
            if not got:
                raise CorruptCheckpoint(f"its storage record {name} ends after {done} of "
                                        f"{nbytes} bytes")
            done += got
        fh.read()  # to the record's end: the CRC is checked there
    return out


def _read_legacy(opened: Any, unpickler: Callable, restore: Callable) -> Any:
    """PyTorch's format before 1.6: pickles for the magic number, the protocol version,
    the system information, the object and the storage keys; then the storages."""
    start = opened.tell()
    opened.seek(0, io.SEEK_END)
    file_size = opened.tell()
    opened.seek(start)

    def plain() -> Any:
        return unpickler(opened, _no_persistent_ids).load()

    if plain() != MAGIC_NUMBER:
        raise CorruptCheckpoint("Invalid magic number; corrupt file? (it is neither the zip "
                                "archive nor the legacy format torch.save writes)")
    version = plain()
    if version != PROTOCOL_VERSION:
        raise CorruptCheckpoint(f"Invalid protocol version: {version!r}")
    sys_info = plain()
    little = not isinstance(sys_info, dict) or sys_info.get("little_endian", True) is True

    def allocate(key: str, nbytes: int) -> np.ndarray:
        if nbytes > file_size - opened.tell():
            raise CorruptCheckpoint(f"storage {key} needs {nbytes} bytes, more than the "
                                    "file holds")
        return np.empty(nbytes, np.uint8)

    # the storages' bytes follow the object's pickle: its tensors are made on host memory
    # that is filled afterwards; where they go elsewhere (or need a byte swap, which copies)
    # the pickle is read a second time, onto the filled storages
    pickle_start = opened.tell()
    storages = _Storages(allocate, _to_location, "little", 6)
    result = unpickler(opened, storages).load()
    keys = plain()
    if not isinstance(keys, list):
        raise CorruptCheckpoint("its list of storage keys is damaged")
    for key in keys:
        storage = storages.loaded.get(key)
        if storage is None:
            raise CorruptCheckpoint(f"it lists storage {key!r}, which its pickle never names")
        _fill_legacy(opened, storage, key, "<q" if little else ">q")
    filled = {key: LoadedStorage(s.data, s.dtype, "cpu", "little" if little else "big")
              for key, s in storages.loaded.items()}
    restored = {key: restore(s, storages.locations[key]) for key, s in filled.items()}
    if little and all(s.location == "cpu" for s in restored.values()):
        return result
    opened.seek(pickle_start)
    return unpickler(opened, _Storages(restored.__getitem__, None, "", 6)).load()


def _fill_legacy(opened: Any, storage: LoadedStorage, key: str, count_format: str) -> None:
    """Read one legacy storage (its element count, then its bytes) into its memory."""
    header = opened.read(8)
    itemsize = 1 if storage.dtype is None else storage.dtype.itemsize
    if len(header) < 8 or struct.unpack(count_format, header)[0] * itemsize != storage.data.size:
        raise CorruptCheckpoint(f"the header of storage {key!r} is damaged or missing")
    view = memoryview(storage.data)
    done = 0
    while done < storage.data.size:
        got = opened.readinto(view[done:done + _CHUNK])
        if not got:
            raise CorruptCheckpoint(f"storage {key!r} ends after {done} of "
                                    f"{storage.data.size} bytes")
        done += got


def _no_persistent_ids(pid: Any) -> Any:
    raise CorruptCheckpoint(f"a persistent id {pid!r} where none belongs")
