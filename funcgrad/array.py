"""`Array`: funcgrad's immutable n-dimensional array.

An Array wraps one backend array (a numpy or a cupy ndarray) that nobody mutates: results of
operations are new Arrays, item assignment raises, and ``np.asarray(a)`` gives a read-only
view. Functional updates go through ``a.at[idx].set(v)`` (and ``add``, ``multiply``, ...).

This is the bottom layer with `funcgrad.backend`: the arithmetic operators, the numpy-style
methods and ``.at[]``'s updates are installed by `funcgrad.numpy` (they are its functions),
and the notebook reprs by `funcgrad.viz`, which keeps this module free of any derivative
logic and of everything above it.
"""
from __future__ import annotations

from typing import Any

import numpy as np

from funcgrad.backend import backend_of, device_of, on_device_of

__all__ = ["Array", "WeakArray", "new_array", "to_raw", "as_array", "zeros_on", "buffer_of",
           "weakened", "strengthened", "is_weak", "WEAK_TYPES"]

_SCALARS = (int, float, complex, bool, np.generic)
_BACKEND_VALUES = (np.ndarray, *_SCALARS)  # what `to_raw` passes through (and cupy arrays)
# the exact types of those, which `funcgrad.core.bind` passes through without a call
RAW_TYPES = frozenset([np.ndarray, int, float, complex, bool])


class Array:
    """An immutable array on the CPU (numpy) or a GPU (cupy).

    Build one with `funcgrad.numpy.asarray` / `array`; every funcgrad function also accepts
    numpy arrays, Python scalars and nested lists and returns Arrays.
    """

    # shape, dtype and ndim are the backend array's, stored when the Array is made: they
    # are read all the time (by every rule and wrapper), and a slot costs no Python call
    __slots__ = ("_value", "shape", "dtype", "ndim", "__weakref__")
    __array_priority__ = 100.0
    # whether the dtype is weak (JAX's weak type: a Python number's, which an array of
    # its kind or a higher one absorbs); strong here, True on `WeakArray`, a tracer's
    # primal's on tracers
    weak_type = False
    __hash__ = None  # type: ignore[assignment]  # == is elementwise, as in numpy

    def __init__(self, value: Any, dtype: Any = None):
        if isinstance(value, Array):
            value = value.concrete()._value
        raw = to_raw(value)
        self._value = v = backend_of(raw).xp.array(raw, dtype=dtype, copy=True)
        self.shape, self.dtype, self.ndim = v.shape, v.dtype, v.ndim

    # -- metadata --------------------------------------------------------------------------
    @property
    def size(self) -> int:
        return self._value.size

    @property
    def itemsize(self) -> int:
        return self.dtype.itemsize

    @property
    def nbytes(self) -> int:
        return self.size * self.dtype.itemsize

    @property
    def device(self) -> str:
        if type(self._value) is np.ndarray:
            return "cpu"
        return device_of(self._value)

    def devices(self) -> set[str]:
        """The devices holding this array: one, its `device` (JAX's ``Array.devices()``)."""
        return {self.device}

    @property
    def sharding(self) -> "SingleDeviceSharding":
        """How the array is laid out over devices: wholly on its one device."""
        return SingleDeviceSharding(self.device)

    def concrete(self) -> "Array":
        """This Array itself (tracers return their underlying concrete value)."""
        return self

    # -- immutability ------------------------------------------------------------------------
    def __setitem__(self, idx: Any, value: Any) -> None:
        raise TypeError(
            f"'{type(self).__name__}' object does not support item assignment: funcgrad "
            "Arrays are immutable. Use the functional update x = x.at[idx].set(value) "
            "(or .add, .multiply, .divide, .min, .max) instead.")

    @property
    def at(self) -> "_IndexUpdateHelper":
        """Functional index updates: ``x.at[idx].set(v)`` returns a new Array."""
        return _IndexUpdateHelper(self)

    def __copy__(self) -> "Array":
        return self

    def __deepcopy__(self, memo: dict) -> "Array":
        return self

    def __reduce__(self) -> tuple:
        return (type(self), (self.to_numpy(),))

    # -- conversion ----------------------------------------------------------------------------
    def to_numpy(self) -> np.ndarray:
        """A read-only numpy view (CPU) or a host copy (GPU) of the concrete value."""
        v = self.concrete()._value
        if type(v) is not np.ndarray:
            return v.get()
        view = v.view()
        view.flags.writeable = False
        return view

    def __array__(self, dtype: Any = None, copy: Any = None) -> np.ndarray:
        v = self._value
        if type(v) is not np.ndarray:
            raise TypeError(f"this Array lives on {self.device}; implicit conversion to a "
                            "numpy array is not allowed. Use funcgrad.device_put(x, 'cpu') "
                            "or x.to_numpy().")
        if copy:
            return np.array(v, dtype=dtype, copy=True)
        out = self.to_numpy()
        return out if dtype is None or out.dtype == dtype else out.astype(dtype)

    def __dlpack__(self, *, stream: Any = None, max_version: Any = None,
                   dl_device: Any = None, copy: Any = None) -> Any:
        """The DLPack capsule of the concrete value (a traced Array refuses, as for
        __array__, since the derivative would be lost)."""
        value = self._value if type(self) is Array else self.__array__()
        kwargs = {k: v for k, v in (("stream", stream), ("max_version", max_version),
                                    ("dl_device", dl_device), ("copy", copy))
                  if v is not None}
        return value.__dlpack__(**kwargs)

    def __dlpack_device__(self) -> tuple:
        return self.concrete()._value.__dlpack_device__()

    def item(self, *args: Any) -> Any:
        return self._value.item(*args)

    def tolist(self) -> Any:
        return self.to_numpy().tolist()

    def __float__(self) -> float:
        return float(self._value)

    def __int__(self) -> int:
        return int(self._value)

    def __complex__(self) -> complex:
        return complex(self._value)

    def __index__(self) -> int:
        return self._value.__index__()

    def __bool__(self) -> bool:
        return bool(self._value)

    def __len__(self) -> int:
        if not self.shape:
            raise TypeError("len() of unsized object (a 0-d Array)")
        return self.shape[0]

    def __iter__(self):
        if not self.shape:
            raise TypeError("iteration over a 0-d Array")
        return (self[i] for i in range(self.shape[0]))

    def __format__(self, spec: str) -> str:
        return format(self.to_numpy() if self.ndim else self.item(), spec)

    def __repr__(self) -> str:
        body = np.array2string(self.to_numpy(), separator=", ", prefix="Array(")
        extra = "" if self.device == "cpu" else f", device={self.device}"
        extra += ", weak_type=True" if self.weak_type else ""
        return f"Array({body}, dtype={self.dtype}{extra})"

    def __str__(self) -> str:
        return str(self.to_numpy())


class WeakArray(Array):
    """A concrete Array whose dtype is weak (JAX's ``weak_type=True``): what
    ``asarray(2.0)`` makes, and what an operation whose operands are all weak returns
    (``exp(2.0)``, ``full(3, 1.0)``), so that ``x32 * exp(2.0)`` stays float32.

    A subclass rather than a flag in every Array: `funcgrad.core.bind` and the transforms
    test ``type(a) is Array`` for the common strong operand, so a weak one falls to their
    slower general branches, where the weak type is read, and the strong path pays
    nothing."""

    __slots__ = ()
    weak_type = True


# what `funcgrad.core.bind` counts as a weak operand: Python numbers (a Python bool is a
# strong bool, as in JAX) and weak Arrays
WEAK_TYPES = frozenset([int, float, complex, WeakArray])


def _retyped(a: Array, cls: type) -> Array:
    out = object.__new__(cls)
    out._value = a._value
    out.shape, out.dtype, out.ndim = a.shape, a.dtype, a.ndim
    return out


def weakened(a: Array) -> Array:
    """Concrete Array ``a`` weakly typed (the same buffer: Arrays are immutable); other
    kinds of Array (a meta array) as they are."""
    return _retyped(a, WeakArray) if type(a) is Array else a


def strengthened(a: Array) -> Array:
    """Concrete Array ``a`` strongly typed (the same buffer)."""
    return _retyped(a, Array) if type(a) is WeakArray else a


def is_weak(x: Any) -> bool:
    """Whether ``x`` is weakly typed: a Python int, float or complex, or an Array (tracers
    too) with ``weak_type``."""
    return type(x) in WEAK_TYPES or (isinstance(x, Array) and x.weak_type)


def new_array(raw: Any) -> Array:
    """Wrap a backend array (or numpy scalar) that no one else holds, without copying."""
    if type(raw) is not np.ndarray and not hasattr(raw, "__cuda_array_interface__"):
        if isinstance(raw, Array):  # an implementation's result on the meta device
            return raw
        raw = np.asarray(raw)
    a = object.__new__(Array)
    a._value = raw
    a.shape, a.dtype, a.ndim = raw.shape, raw.dtype, raw.ndim
    return a


def buffer_of(a: Array) -> Any:
    """The backend array that concrete Array ``a`` wraps. For the PyTorch facade's storage
    (`funcgrad.torch._runtime.storage`), whose tensors share memory with each other and with
    numpy as PyTorch's do: it must see that memory, and it alone writes into it."""
    return a._value


def as_array(x: Any) -> Array:
    """``x`` as an Array without a copy: Arrays (tracers too) as they are, backend arrays
    and scalars wrapped. For values funcgrad made itself (a rule's result); user input goes
    through `funcgrad.numpy.asarray`, which copies numpy arrays."""
    if isinstance(x, Array):
        return x
    return new_array(to_raw(x))


def zeros_on(shape: tuple, dtype: Any, device: str) -> Array:
    """A constant Array of zeros on ``device``."""
    return new_array(on_device_of(np.zeros(shape, dtype), device))


def to_raw(x: Any) -> Any:
    """The backend value of a non-Array argument: ndarrays and scalars pass through, nested
    lists become numpy arrays."""
    if isinstance(x, _BACKEND_VALUES) or hasattr(x, "__cuda_array_interface__"):
        return x
    if isinstance(x, (list, tuple)):
        return np.asarray(x)
    if type(x) is Array or type(x) is WeakArray:
        return x._value
    if isinstance(x, Array):  # a tracer where the backend needs a concrete value
        raise x._conversion_error("a concrete array (this argument is not differentiable)")
    raise TypeError(f"funcgrad cannot use a value of type {type(x).__name__!r} as an "
                    "array; pass an Array, a numpy array, a Python scalar or a nested list")


class _IndexUpdateHelper:
    __slots__ = ("array",)

    def __init__(self, array: Array):
        self.array = array

    def __getitem__(self, idx: Any) -> "_IndexUpdateRef":
        return _IndexUpdateRef(self.array, idx)

    def __repr__(self) -> str:
        return f"_IndexUpdateHelper({self.array!r})"


class _IndexUpdateRef:
    """``x.at[idx]``: each method returns a new Array; all are differentiable. With
    repeated indices ``add`` accumulates every update (scatter-add). ``mode`` says what an
    index out of bounds does, as in JAX: "clip", "fill" (get: ``fill_value``) or "drop"
    (updates), else numpy's IndexError. ``indices_are_sorted`` and ``unique_indices`` are
    JAX's hints to its compiler and change nothing here. ``update(array, index, values,
    how, mode)`` and ``gather(array, index, mode, fill_value)`` are funcgrad.numpy's,
    installed when it is imported."""

    __slots__ = ("array", "index")
    update: Any = None
    gather: Any = None

    def __init__(self, array: Array, index: Any):
        self.array = array
        self.index = index

    def get(self, *, indices_are_sorted: bool = False, unique_indices: bool = False,
            mode: str | None = None, fill_value: Any = None) -> Array:
        if mode is None and fill_value is None:
            return self.array[self.index]
        return _IndexUpdateRef.gather(self.array, self.index, mode, fill_value)

    def __repr__(self) -> str:
        return f"_IndexUpdateRef({self.array!r}, {self.index!r})"


def _index_update_method(how: str) -> Any:
    def method(self: _IndexUpdateRef, values: Any, *, indices_are_sorted: bool = False,
               unique_indices: bool = False, mode: str | None = None) -> Array:
        return _IndexUpdateRef.update(self.array, self.index, values, how, mode)
    method.__name__ = method.__qualname__ = how
    method.__doc__ = f"A new Array: x with x[idx] {how} values (``x.at[idx].{how}``)."
    return method


for _how in ("set", "add", "multiply", "divide", "power", "min", "max"):
    setattr(_IndexUpdateRef, _how, _index_update_method(_how))
_IndexUpdateRef.mul = _IndexUpdateRef.multiply


class SingleDeviceSharding:
    """JAX's sharding of an array held whole by one device (funcgrad arrays always are)."""

    __slots__ = ("device",)

    def __init__(self, device: str):
        self.device = device

    @property
    def device_set(self) -> set[str]:
        return {self.device}

    is_fully_replicated = True
    is_fully_addressable = True
    num_devices = 1

    def __eq__(self, other: Any) -> bool:
        return isinstance(other, SingleDeviceSharding) and other.device == self.device

    def __hash__(self) -> int:
        return hash(self.device)

    def __repr__(self) -> str:
        return f"SingleDeviceSharding(device={self.device!r})"
