"""PyTorch's dtype, Size and device objects, mapped onto numpy dtypes and funcgrad devices.

`torch.float32` and friends are `dtype` objects that print as PyTorch prints them; each
knows its numpy dtype. The default floating dtype (float32, as in PyTorch) is what Python
floats and the random/constant factories produce; `set_default_dtype` changes it for the
process, as PyTorch does. Likewise the default device (cpu) is where factories put tensors
when no ``device=`` is given: `set_default_device`, or ``with torch.device('cuda'):``.
"""
from __future__ import annotations

import builtins
from typing import Any, Iterable

import numpy as np

from funcgrad import dtypes as lowp

builtin_float, builtin_int, builtin_bool = builtins.float, builtins.int, builtins.bool

__all__ = ["dtype", "Size", "device", "get_default_dtype", "set_default_dtype",
           "to_torch_dtype", "to_numpy_dtype", "float32", "float", "float64", "double",
           "float16", "half", "bfloat16", "complex64", "cfloat", "complex128", "cdouble", "int8",
           "int16", "short", "int32", "int", "int64", "long", "uint8", "bool", "uint16",
           "uint32", "uint64", "float8_e4m3fn", "float8_e5m2", "float8_e4m3fnuz",
           "float8_e5m2fnuz",
           "promote_types", "result_type_of", "can_cast", "tensor_type_name", "SATURATING_BOUND",
           "ALL_DTYPES",
           "get_default_device", "set_default_device"]


class dtype:
    """A tensor element type (``torch.float32``...). Compare with ``==`` or ``is``."""

    __slots__ = ("name", "np", "is_floating_point", "is_complex", "is_signed", "itemsize",
                 "_legacy")

    def __init__(self, name: str, np_dtype: Any, legacy: str):
        self.name = name
        self.np = np.dtype(np_dtype)
        self.is_floating_point = lowp.is_floating(self.np)
        self.is_complex = np.issubdtype(self.np, np.complexfloating)
        self.is_signed = self.np.kind in "fci" or self.is_floating_point
        self.itemsize = self.np.itemsize
        self._legacy = legacy

    def __repr__(self) -> str:
        return f"torch.{self.name}"

    @property
    def scalar_name(self) -> str:
        """The name PyTorch's errors give this dtype (its c10 ScalarType: "Float", "Long",
        "UInt16", "Float8_e4m3fn"...)."""
        return self._legacy[:-len("Tensor")]

    def __reduce__(self) -> str:
        return self.name

    def to_real(self) -> "dtype":
        return {complex64: float32, complex128: float64}.get(self, self)

    def to_complex(self) -> "dtype":
        return {float32: complex64, float64: complex128, float16: complex64,
                bfloat16: complex64}.get(self, self)


float32 = float = dtype("float32", np.float32, "FloatTensor")
float64 = double = dtype("float64", np.float64, "DoubleTensor")
float16 = half = dtype("float16", np.float16, "HalfTensor")


class _MissingDtype(dtype):
    """A dtype of ml_dtypes' (bfloat16, the float8 formats) where that package is missing:
    it prints and compares, and any use of its values raises the install hint (never a
    silent other dtype)."""

    __slots__ = ()

    def __init__(self, name: str, legacy: str, itemsize: builtin_int):
        self.name = name
        self.is_floating_point, self.is_complex, self.is_signed = True, False, True
        self.itemsize = itemsize
        self._legacy = legacy

    @property
    def np(self) -> np.dtype:  # type: ignore[override]
        return lowp.require_ml_dtype(self.name)


def _ml_dtype(name: str, legacy: str, itemsize: builtin_int) -> dtype:
    """The facade's dtype of ml_dtypes' format ``name`` (a placeholder without ml_dtypes)."""
    if lowp.bfloat16_available():
        return dtype(name, lowp.require_ml_dtype(name), legacy)
    return _MissingDtype(name, legacy, itemsize)


bfloat16 = _ml_dtype("bfloat16", "BFloat16Tensor", 2)
complex64 = cfloat = dtype("complex64", np.complex64, "ComplexFloatTensor")
complex128 = cdouble = dtype("complex128", np.complex128, "ComplexDoubleTensor")
int8 = dtype("int8", np.int8, "CharTensor")
int16 = short = dtype("int16", np.int16, "ShortTensor")
int32 = int = dtype("int32", np.int32, "IntTensor")
int64 = long = dtype("int64", np.int64, "LongTensor")
uint8 = dtype("uint8", np.uint8, "ByteTensor")
bool = dtype("bool", np.bool_, "BoolTensor")  # noqa: A001  (torch.bool)
# PyTorch's "barebones" dtypes: stored, converted, compared and saved, but never promoted
# with another dtype (PyTorch's errors below); the facade computes in them through numpy
uint16 = dtype("uint16", np.uint16, "UInt16Tensor")
uint32 = dtype("uint32", np.uint32, "UInt32Tensor")
uint64 = dtype("uint64", np.uint64, "UInt64Tensor")
float8_e4m3fn = _ml_dtype("float8_e4m3fn", "Float8_e4m3fnTensor", 1)
float8_e5m2 = _ml_dtype("float8_e5m2", "Float8_e5m2Tensor", 1)
float8_e4m3fnuz = _ml_dtype("float8_e4m3fnuz", "Float8_e4m3fnuzTensor", 1)
float8_e5m2fnuz = _ml_dtype("float8_e5m2fnuz", "Float8_e5m2fnuzTensor", 1)
_WIDE_UNSIGNED = (uint16, uint32, uint64)
# PyTorch's conversion to float8_e4m3fn saturates (overflow and inf become +-448), where
# ml_dtypes' (numpy's cast) gives nan: the facade's casts clip to these bounds first
SATURATING_BOUND = ({float8_e4m3fn.np: 448.0} if lowp.bfloat16_available() else {})
_FLOAT8 = (float8_e4m3fn, float8_e5m2, float8_e4m3fnuz, float8_e5m2fnuz)

ALL_DTYPES = [float32, float64, float16, complex64, complex128, int8, int16, int32, int64,
              uint8, bool, uint16, uint32, uint64] + ([bfloat16, *_FLOAT8]
                                                      if lowp.bfloat16_available() else [])
_FROM_NP = {d.np: d for d in ALL_DTYPES}
_default = [float32]


def get_default_dtype() -> dtype:
    """The dtype of Python floats turned into tensors (torch.float32 unless changed)."""
    return _default[0]


def set_default_dtype(d: dtype) -> None:
    """Make ``d`` (torch.float32 or torch.float64) the default floating dtype."""
    d = to_torch_dtype(d)
    if d not in (float32, float64, float16, bfloat16):
        raise TypeError("only floating-point types are supported as the default type")
    _default[0] = d


# the C++ type names PyTorch's messages give dtypes (caffe2::TypeMeta's)
_C_TYPES = {"float64": "double", "float32": "float", "float16": "c10::Half",
            "bfloat16": "c10::BFloat16", "int64": "long int", "int32": "int",
            "int16": "short int", "int8": "signed char", "uint8": "unsigned char",
            "bool": "bool", "complex64": "c10::complex<float>",
            "complex128": "c10::complex<double>"}


def c_type(d: dtype) -> str:
    """The C++ type name PyTorch's "Bad in-place call" messages give ``d``."""
    return _C_TYPES.get(d.name, d.name)


def to_torch_dtype(d: Any) -> dtype:
    """A torch dtype from a torch dtype, a numpy dtype or a Python type."""
    if isinstance(d, dtype):
        return d
    if d is builtin_float:
        return get_default_dtype()
    if d is builtin_int:
        return int64
    if d is builtin_bool:
        return bool
    try:
        return _FROM_NP[lowp.canonical_dtype(d)]
    except (KeyError, TypeError):
        raise TypeError(f"funcgrad.torch has no dtype for {d!r}") from None


def to_numpy_dtype(d: Any) -> np.dtype:
    return to_torch_dtype(d).np


def tensor_type_name(d: dtype, dev: str = "cpu") -> str:
    """PyTorch's legacy type string, ``torch.FloatTensor`` / ``torch.cuda.FloatTensor``."""
    return f"torch.{'cuda.' if dev != 'cpu' else ''}{d._legacy}"


# -- promotion (PyTorch's rules: categories bool < integer < floating < complex) -------------

def _category(d: dtype) -> builtin_int:
    return 0 if d is bool else 3 if d.is_complex else 2 if d.is_floating_point else 1


def promote_types(a: dtype, b: dtype) -> dtype:
    """torch.promote_types: within a category numpy's rule; across categories the higher
    category's type (int64 with float32 is float32, not numpy's float64). The barebones
    dtypes promote with nothing else (uint16 and friends only with the real floats)."""
    if a is b:
        return a
    _check_barebones(a, b)
    ca, cb = _category(a), _category(b)
    if ca == cb:
        return _FROM_NP[np.promote_types(a.np, b.np)]
    hi, lo = (a, b) if ca > cb else (b, a)
    if hi.is_complex and lo is float64:
        return complex128
    return hi


def _check_barebones(a: dtype, b: dtype) -> None:
    """PyTorch's refusal to promote its float8 and wide unsigned dtypes."""
    if a in _FLOAT8 or b in _FLOAT8:
        raise RuntimeError("Promotion for Float8 Types is not supported, attempted to promote "
                           f"{a.scalar_name} and {b.scalar_name}")
    if (a in _WIDE_UNSIGNED or b in _WIDE_UNSIGNED) and not (
            _category(a) == 2 or _category(b) == 2):
        raise RuntimeError("Promotion for uint16, uint32, uint64 types is not supported, "
                           f"attempted to promote {a.scalar_name} and {b.scalar_name}")


def _scalar_dtype(x: Any) -> dtype:
    if isinstance(x, builtin_bool):
        return bool
    if isinstance(x, builtin_int):
        return int64
    if isinstance(x, complex):
        return get_default_dtype().to_complex()
    return get_default_dtype()


def result_type_of(operands: Iterable[tuple]) -> dtype:
    """PyTorch's result type for (dtype, kind) pairs, kind 0 = tensor with dims, 1 = 0-dim
    tensor, 2 = Python number. A lower-priority group only wins by a higher category."""
    groups: list = [None, None, None]
    for d, kind in operands:
        groups[kind] = d if groups[kind] is None else promote_types(groups[kind], d)
    out = None
    for g in groups:
        if g is None:
            continue
        if out is None:
            out = g
        elif _category(g) > _category(out):
            if _category(g) == 3 and out.is_floating_point:
                out = out.to_complex()  # float32 + a 0-dim complex128 is complex64
            else:
                out = g
    return out


def can_cast(frm: dtype, to: dtype) -> builtin_bool:
    """Whether an in-place op may write a ``frm`` result into a ``to`` tensor."""
    return _category(frm) <= _category(to)


class Size(tuple):
    """A tensor shape: a tuple that prints as ``torch.Size([2, 3])``."""

    def __repr__(self) -> str:
        return f"torch.Size({list(self)})"

    __str__ = __repr__

    def numel(self) -> builtin_int:
        n = 1
        for s in self:
            n *= s
        return n

    def __getitem__(self, k: Any) -> Any:
        r = super().__getitem__(k)
        return Size(r) if isinstance(k, slice) else r


# the device types PyTorch 2.13 knows (its error lists them); funcgrad has cpu and cuda
_TORCH_DEVICE_TYPES = ("cpu", "cuda", "ipu", "xpu", "mkldnn", "opengl", "opencl", "ideep",
                       "hip", "ve", "fpga", "maia", "xla", "lazy", "vulkan", "mps", "meta",
                       "hpu", "mtia", "privateuseone")


class device:
    """``torch.device('cpu')`` / ``torch.device('cuda', 0)``; cuda maps to funcgrad's
    'gpu:N' (cupy)."""

    __slots__ = ("type", "index")

    def __init__(self, type: Any, index: builtin_int | None = None):  # noqa: A002
        if isinstance(type, device):
            type, index = type.type, type.index
        elif isinstance(type, builtin_int):
            type, index = "cuda", type
        if ":" in type:
            type, idx = type.split(":")
            index = builtin_int(idx)
        if type not in _TORCH_DEVICE_TYPES:
            raise RuntimeError(f"Expected one of {', '.join(_TORCH_DEVICE_TYPES)} device type "
                               f"at start of device string: {type}")
        if type not in ("cpu", "cuda", "meta"):
            raise RuntimeError(f"funcgrad.torch has no {type!r} device: use 'cpu', 'cuda' "
                               "(cupy) or 'meta' (shapes without values)")
        self.type = type
        self.index = index

    def __repr__(self) -> str:
        return (f"device(type='{self.type}')" if self.index is None else
                f"device(type='{self.type}', index={self.index})")

    def __str__(self) -> str:
        return self.type if self.index is None else f"{self.type}:{self.index}"

    def __eq__(self, other: Any) -> builtin_bool:
        if isinstance(other, str):
            other = device(other)
        return isinstance(other, device) and (self.type, self.index) == (other.type,
                                                                          other.index)

    def __hash__(self) -> builtin_int:
        return hash((self.type, self.index))

    @property
    def funcgrad(self) -> str:
        """The funcgrad device name: 'cpu', 'gpu:N' or 'meta'."""
        return self.type if self.type in ("cpu", "meta") else f"gpu:{self.index or 0}"

    @staticmethod
    def of_funcgrad(name: str) -> "device":
        if name in ("cpu", "meta"):
            return device(name)
        return device("cuda", builtin_int(name.split(":")[1]))

    def __enter__(self) -> "device":
        """``with torch.device('cuda'):`` makes this the default device inside the block."""
        _device_stack.append(_default_device[0])
        set_default_device(self)
        return self

    def __exit__(self, *exc: Any) -> None:
        _default_device[0] = _device_stack.pop()


_default_device = [device("cpu")]
_device_stack: list = []  # the defaults that enclosing ``with device(...)`` blocks replaced


def get_default_device() -> device:
    """Where factories put tensors when no ``device=`` is given (cpu unless changed);
    a bare ``'cuda'`` reads as cuda:0, as in PyTorch."""
    return _default_device[0]


def set_default_device(d: Any) -> None:
    """Make ``d`` the default device of the factories (None restores cpu)."""
    d = device("cpu") if d is None else device(d)
    if d.type == "cuda" and d.index is None:
        d = device("cuda", 0)
    _default_device[0] = d
