"""The facts of PyTorch's checkpoint format that both the writer and the reader use.

PyTorch 2.x's ``torch.save`` writes a zip archive (every record under one folder, stored
uncompressed, each record's bytes 64-byte aligned):

- ``<prefix>/data.pkl``: the object, pickled (protocol 2) with tensors reduced to
  ``torch._utils._rebuild_tensor_v2(storage, offset, size, stride, requires_grad, hooks)``
  (``_rebuild_tensor_v3(..., dtype)`` for the dtypes without a legacy storage class);
  each storage is a persistent id ``('storage', torch.FloatStorage, key, location, numel)``;
- ``<prefix>/data/<key>``: each storage's bytes, little-endian;
- ``<prefix>/byteorder``, ``<prefix>/version`` (``3``), ``.format_version``,
  ``.storage_alignment``, ``.data/serialization_id``.

The legacy format (``_use_new_zipfile_serialization=False``) is a run of pickles: a magic
number, the protocol version, system information, the object (persistent ids with a sixth
field, the storage view), the storage keys, then each storage as an int64 element count
and its bytes.
"""
from __future__ import annotations

from typing import Any

from funcgrad.torch._runtime import dtypes as D

__all__ = ["StorageType", "STORAGE_TYPES", "storage_type_of", "DTYPE_NAMES",
           "FOREIGN_DTYPES", "MAGIC_NUMBER", "PROTOCOL_VERSION", "ALIGNMENT", "UNSAFE_MESSAGE",
           "DOCS_MESSAGE", "CUDA_UNAVAILABLE"]

MAGIC_NUMBER = 0x1950A86A20F9469CFC6C
PROTOCOL_VERSION = 1001
ALIGNMENT = 64  # where each storage record's bytes start in the archive (for mmap)

# PyTorch's own words (torch.serialization), so that users find them in its documentation
UNSAFE_MESSAGE = (
    "In PyTorch 2.6, we changed the default value of the `weights_only` argument in "
    "`torch.load` from `False` to `True`. Re-running `torch.load` with `weights_only` set to "
    "`False` will likely succeed, but it can result in arbitrary code execution. Do it only "
    "if you got the file from a trusted source.")
DOCS_MESSAGE = (
    "\n\nCheck the documentation of torch.load to learn more about types accepted by default "
    "with weights_only https://pytorch.org/docs/stable/generated/torch.load.html.")
CUDA_UNAVAILABLE = (
    "Attempting to deserialize object on a CUDA device but torch.cuda.is_available() is "
    "False. If you are running on a CPU-only machine, please use torch.load with "
    "map_location=torch.device('cpu') to map your storages to the CPU.")

# the legacy storage class of each dtype (``torch.FloatStorage``): what ``persistent_id``
# names; dtypes without one are saved through ``UntypedStorage`` and ``_rebuild_tensor_v3``
_STORAGE_CLASS = {"float64": "DoubleStorage", "float32": "FloatStorage",
                  "float16": "HalfStorage", "bfloat16": "BFloat16Storage",
                  "int64": "LongStorage", "int32": "IntStorage", "int16": "ShortStorage",
                  "int8": "CharStorage", "uint8": "ByteStorage", "bool": "BoolStorage",
                  "complex64": "ComplexFloatStorage", "complex128": "ComplexDoubleStorage"}

# the facade's dtypes, by PyTorch's names (the barebones ones have no storage class)
DTYPE_NAMES = tuple(_STORAGE_CLASS) + ("uint16", "uint32", "uint64", "float8_e4m3fn",
                                       "float8_e5m2", "float8_e4m3fnuz", "float8_e5m2fnuz")

# dtypes PyTorch saves that the facade has no tensors of: a file naming one loads up to the
# tensor of that dtype, which raises naming it (never a silent reinterpretation)
FOREIGN_DTYPES = ("float8_e8m0fnu", "float4_e2m1fn_x2",
                  "complex32", "qint8", "quint8", "qint32", "quint4x2", "quint2x4", "bits8",
                  "bits16", "bits1x8", "bits2x4", "bits4x2")


class StorageType:
    """What a pickled storage class (``torch.FloatStorage``, ``torch.cuda.HalfStorage``,
    ``torch.storage.UntypedStorage``) stands for when loading: the dtype of its elements
    (None: untyped bytes). The reader hands these out in place of PyTorch's classes."""

    __slots__ = ("name", "dtype")

    def __init__(self, name: str, dtype: Any):
        self.name = name
        self.dtype = dtype

    def itemsize(self) -> int:
        return 1 if self.dtype is None else self.dtype.itemsize

    def __repr__(self) -> str:
        return f"torch.{self.name}"


def _storage_types() -> dict[str, StorageType]:
    """Every storage class name a checkpoint may hold, by its pickled ``module.name``."""
    table = {}
    for dname, cls in _STORAGE_CLASS.items():
        dtype = getattr(D, dname)
        table[f"torch.{cls}"] = table[f"torch.cuda.{cls}"] = StorageType(cls, dtype)
    for name in ("torch.storage.UntypedStorage", "torch.UntypedStorage",
                 "torch.storage.TypedStorage"):
        table[name] = StorageType("UntypedStorage", None)
    return table


STORAGE_TYPES = _storage_types()


def storage_type_of(dtype: Any) -> str | None:
    """The legacy storage class name of facade dtype ``dtype`` (``FloatStorage``)."""
    return _STORAGE_CLASS.get(dtype.name)
