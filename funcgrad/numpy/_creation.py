"""Array creation: asarray/array, the constant factories and the readers of files and buffers.

Results are constants, except where a value comes from an Array: ``full(shape, x)`` and
``full_like(a, x)`` broadcast x (differentiably), lists holding Arrays are stacked, and
``asarray`` of an Array is that Array. ``*_like`` take only the shape, dtype and device of
their first argument. Shapes may be ints, sequences of ints or integer Arrays (numpy's
``operator.index`` rule: a float raises TypeError). Every factory takes the Array API's
``device=`` ('cpu', 'gpu', 'gpu:N'). Inferred and default dtypes follow
`funcgrad.config` (64-bit unless ``jax_enable_x64`` is off).
"""
from __future__ import annotations

import operator
from typing import Any

import numpy as np

from funcgrad._config import canonical_dtype, config, default_float, default_int, \
    requested_dtype
from funcgrad._promotion import SCALAR_NODES, computed_type
from funcgrad.array import Array, is_weak, new_array, to_raw, weakened
from funcgrad.backend import backend_of
from funcgrad.dtypes import check_numeric, check_python_int
from funcgrad.primitives.control import convert_element_type, device_put

__all__ = ["asarray", "array", "asanyarray", "ascontiguousarray", "asfortranarray",
           "asarray_chkfinite", "require", "copy", "zeros", "ones", "empty", "full",
           "zeros_like", "ones_like", "empty_like", "full_like", "eye", "identity", "tri",
           "astype", "from_dlpack", "frombuffer", "fromiter", "fromstring", "fromfile",
           "fromfunction", "fromregex", "loadtxt", "genfromtxt", "load", "ndim", "shape",
           "size"]

_SCALARS = (int, float, complex, bool, np.generic)


def _contains_array(x: Any) -> bool:
    if isinstance(x, Array):
        return True
    return isinstance(x, (list, tuple)) and any(_contains_array(e) for e in x)


def _inferred(raw: Any, dtype: Any) -> Any:
    """The dtype to store ``raw`` in: the one asked for (already `requested_dtype`), else
    raw's own, narrowed to 32 bits when x64 is disabled (None: keep raw's dtype)."""
    if dtype is not None:
        return dtype
    own = np.result_type(raw) if not hasattr(raw, "dtype") else raw.dtype
    narrow = canonical_dtype(own)
    return None if narrow == own else narrow


def _no_copy_error(what: str) -> ValueError:
    return ValueError(f"asarray(copy=False): {what}, so a copy cannot be avoided. Pass "
                      "copy=None (copy only when needed) or copy=True.")


def asarray(a: Any, dtype: Any = None, order: Any = None, *, device: Any = None,
            copy: bool | None = None) -> Array:
    """``a`` as an Array: an Array is returned as it is (immutable, so ``copy=True`` has
    nothing to protect), other input is copied so that changing it later cannot change the
    Array (``copy=False`` raises for it). Lists holding Arrays are stacked, differentiably.
    ``order`` is accepted for numpy compatibility (Arrays expose no memory layout). A
    Python number without ``dtype`` makes a weakly typed Array, as in JAX."""
    if isinstance(a, Array) and dtype is None and device is None:
        return a  # the common case (every wrapper calls asarray on its inputs)
    dtype = requested_dtype(dtype, "asarray")
    if isinstance(a, Array):
        out = a
        if dtype is not None and a.dtype != dtype:
            if copy is False:
                raise _no_copy_error(f"the dtype changes from {a.dtype} to {dtype}")
            out = astype(a, dtype)
    elif isinstance(a, (list, tuple)) and _contains_array(a):
        if copy is False:
            raise _no_copy_error("a list of Arrays is stacked into a new Array")
        from funcgrad.numpy._shape import stack  # _shape imports this module
        out = stack([asarray(e) for e in a])
        out = out if dtype is None else astype(out, dtype)
    else:
        if copy is False:
            raise _no_copy_error(f"a {type(a).__name__} is copied into funcgrad's "
                                 "immutable memory")
        out = new_array(_host_copy(a, dtype))
        if dtype is None and type(a) in _WEAK_NUMBERS:
            out = weakened(out)
    return _placed(out, device)


_WEAK_NUMBERS = (int, float, complex)  # (a Python bool makes a strong bool, as in JAX)


def _host_copy(a: Any, dtype: Any) -> Any:
    """A fresh backend array of ``a`` in the dtype to store. Besides what every funcgrad
    function takes, objects numpy converts (``__array__``: torch tensors, JAX arrays...)
    and DLPack producers are read."""
    if isinstance(a, (list, tuple, np.ndarray, *_SCALARS)) or hasattr(
            a, "__cuda_array_interface__"):
        raw = to_raw(a)
    elif hasattr(a, "__array__") or hasattr(a, "__array_interface__"):
        raw = np.asarray(a)
    elif hasattr(a, "__dlpack__"):
        raw = np.from_dlpack(a)
    else:
        raw = to_raw(a)  # raises its clear TypeError
    if dtype is None:  # numbers only (JAX's refusals), unless a dtype says what to make
        if type(raw) is int:
            check_python_int(raw)
        check_numeric(raw)
    return backend_of(raw).xp.array(raw, dtype=_inferred(raw, dtype), copy=True)


def array(object: Any, dtype: Any = None, copy: bool = True, order: Any = None,
          ndmin: int = 0, *, device: Any = None) -> Array:
    """numpy.array: like `asarray`, with ``ndmin`` leading axes of length 1 added."""
    out = asarray(object, requested_dtype(dtype, "array"), device=device,
                  copy=None if copy else False)
    if out.ndim < ndmin:
        from funcgrad.numpy._shape import reshape  # _shape imports this module
        out = reshape(out, (1,) * (ndmin - out.ndim) + out.shape)
    return out


def asanyarray(a: Any, dtype: Any = None, order: Any = None, *, device: Any = None,
               copy: bool | None = None) -> Array:
    """`asarray` (Arrays have no subclasses to pass through)."""
    return asarray(a, requested_dtype(dtype, "asarray"), device=device, copy=copy)


def ascontiguousarray(a: Any, dtype: Any = None) -> Array:
    """`asarray` with at least one dimension (Arrays expose no memory layout)."""
    out = asarray(a, requested_dtype(dtype, "asarray"))
    return out if out.ndim else array(out, ndmin=1)


def asfortranarray(a: Any, dtype: Any = None) -> Array:
    """`ascontiguousarray`: Arrays expose no memory layout to choose."""
    return ascontiguousarray(a, requested_dtype(dtype, "asarray"))


def require(a: Any, dtype: Any = None, requirements: Any = None) -> Array:
    """`asarray`; layout requirements ('C', 'F', 'A', 'W', 'O', 'E') have nothing to act
    on, except 'W' (writeable), which an immutable Array cannot meet."""
    reqs = {str(r).upper()[:1] for r in (requirements or ())}
    if "W" in reqs:
        raise ValueError("require: funcgrad Arrays are immutable and cannot be writeable; "
                         "use x.at[idx].set(v) for updates")
    return asarray(a, requested_dtype(dtype, "asarray"))


def asarray_chkfinite(a: Any, dtype: Any = None, order: Any = None) -> Array:
    """`asarray`, raising ValueError if the values hold an inf or a NaN."""
    out = asarray(a, requested_dtype(dtype, "asarray"))
    if out.dtype.kind in "fc" and not bool(np.isfinite(out.concrete().to_numpy()).all()):
        raise ValueError("array must not contain infs or NaNs")
    return out


def copy(a: Any, order: Any = "K", subok: bool = False) -> Array:
    """``a`` as an Array (an Array is immutable: it is its own copy)."""
    return asarray(a)


def astype(x: Any, dtype: Any, /, order: Any = "K", casting: str = "unsafe",
           subok: bool = True, copy: bool = True, *, device: Any = None) -> Array:
    """x cast to dtype (differentiable between float and complex dtypes); ``casting``
    follows numpy ('no', 'equiv', 'safe', 'same_kind', 'unsafe')."""
    x = asarray(x)
    dtype = requested_dtype(dtype, "astype")
    if casting != "unsafe" and not np.can_cast(x.dtype, dtype, casting):
        raise TypeError(f"Cannot cast array data from dtype({str(x.dtype)!r}) to "
                        f"dtype({str(dtype)!r}) according to the rule {casting!r}")
    # (a weak x of the dtype is cast too: astype's result is strongly typed, as in JAX)
    out = x if x.dtype == dtype and not x.weak_type else convert_element_type(
        x, new_dtype=dtype)
    return _placed(out, device)


def promote_dtypes(*xs: Any, rule: dict | None = None) -> list:
    """``xs`` as Arrays of the one dtype jax.numpy computes them in (JAX's
    ``promote_dtypes``; with ``rule`` `funcgrad._promotion.INEXACT`, ``NUMERIC`` or
    ``COMPLEX``, its ``promote_dtypes_inexact`` and siblings): Python numbers are weak, so
    ``polyval(int8_coefficients, 3)`` stays int8 and ``int64`` with ``float32`` is float32."""
    arrays = [x if type(x) in SCALAR_NODES else asarray(x) for x in xs]
    dtype, weak = computed_type(*arrays, rule=rule)
    if weak:  # the promoted type is weak: so are the results (``hstack([1.0, 2])``)
        return [convert_element_type(asarray(x), new_dtype=dtype, weak_type=True)
                for x in arrays]
    return [astype(x, dtype) if type(x) in SCALAR_NODES or x.dtype != dtype else x
            for x in arrays]


def as_index_array(indices: Any) -> Array:
    """Indices funcgrad computes (argmax, nonzero, argsort, searchsorted, ...) in the
    default integer dtype: numpy's int64, or int32 with x64 disabled, as JAX's are."""
    want = default_int()
    return indices if indices.dtype == want else astype(indices, want)


def as_shape(shape: Any) -> tuple:
    """numpy's shape argument (an int, a sequence of ints, an integer Array) as a tuple of
    Python ints; anything else raises numpy's TypeError."""
    if type(shape) is int:
        return (shape,)
    if type(shape) is tuple and all(type(s) is int for s in shape):
        return shape
    if isinstance(shape, (Array, np.ndarray)) and np.ndim(shape) == 0:
        return (operator.index(shape),)
    try:
        items = iter(shape)
    except TypeError:
        return (operator.index(shape),)
    return tuple(operator.index(s) for s in items)


def _placed(out: Array, device: Any) -> Array:
    """``out`` on ``device`` (None: where it already is)."""
    if device is None:
        return out
    device = str(device)
    if out.device == device or (device == "gpu" and
                                                  out.device.startswith("gpu")):
        return out
    return device_put(out, device)


def _constant(raw: np.ndarray, device: Any) -> Array:
    return _placed(new_array(raw), device)


def _default(dtype: np.dtype | None) -> np.dtype:
    """A requested dtype (`requested_dtype`), else the default float."""
    return default_float() if dtype is None else dtype


def zeros(shape: Any, dtype: Any = None, order: Any = "C", *, device: Any = None) -> Array:
    """An Array of zeros (float64 by default)."""
    return _constant(np.zeros(as_shape(shape), _default(requested_dtype(dtype, "zeros"))),
                     device)


def ones(shape: Any, dtype: Any = None, order: Any = "C", *, device: Any = None) -> Array:
    """An Array of ones (float64 by default)."""
    return _constant(np.ones(as_shape(shape), _default(requested_dtype(dtype, "ones"))),
                     device)


def empty(shape: Any, dtype: Any = None, order: Any = "C", *, device: Any = None) -> Array:
    """Zeros (an immutable array has no use for uninitialised memory)."""
    return zeros(shape, requested_dtype(dtype, "empty"), device=device)


def _fill_dtype(fill_value: Any, dtype: Any) -> Any:
    """numpy's dtype for a fill value, narrowed when x64 is disabled (None: numpy's own
    choice, which is the fill value's dtype); ``dtype``: the one requested, already
    `requested_dtype`."""
    if dtype is not None:
        return dtype
    if isinstance(fill_value, Array):
        return fill_value.dtype
    if config.x64_enabled:
        return None
    return canonical_dtype(np.asarray(to_raw(fill_value)).dtype)


def full(shape: Any, fill_value: Any, dtype: Any = None, order: Any = "C", *,
         device: Any = None) -> Array:
    """An Array of ``shape`` filled with ``fill_value`` (broadcast when it is an array; an
    Array fill value is differentiable). Weakly typed without ``dtype`` for a weak fill
    value (a Python number), as in JAX."""
    shape = as_shape(shape)
    weak = dtype is None and is_weak(fill_value)
    dtype = _fill_dtype(fill_value, requested_dtype(dtype, "full"))
    if isinstance(fill_value, Array):
        from funcgrad.numpy._shape import broadcast_to  # _shape imports this module
        fill = fill_value if weak else astype(fill_value, dtype)
        return _placed(broadcast_to(fill, shape), device)
    out = _constant(np.full(shape, to_raw(fill_value), dtype), device)
    return weakened(out) if weak else out


def _like(a: Any) -> tuple[tuple, np.dtype, str]:
    """(shape, dtype, device) of a ``*_like`` template, traced or not (its values are not
    read: a template under jit has none)."""
    if isinstance(a, Array):
        return tuple(a.shape), a.dtype, a.device
    raw = np.asarray(to_raw(a))
    return raw.shape, canonical_dtype(raw.dtype), "cpu"


def full_like(a: Any, fill_value: Any, dtype: Any = None, order: Any = "K",
              subok: bool = True, shape: Any = None, *, device: Any = None) -> Array:
    """An Array shaped like ``a`` (or ``shape``), with a's dtype and device unless given,
    filled with ``fill_value`` (an Array fill value is differentiable); weakly typed
    when ``a`` is and no ``dtype`` is given, as in JAX."""
    weak = dtype is None and is_weak(a)
    a_shape, a_dtype, a_device = _like(a)
    shape = a_shape if shape is None else as_shape(shape)
    dtype = a_dtype if dtype is None else requested_dtype(dtype, "full_like")
    device = a_device if device is None else device
    if isinstance(fill_value, Array):
        out = full(shape, fill_value, dtype)
    else:
        out = new_array(np.full(shape, to_raw(fill_value), dtype))
    return _placed(weakened(out) if weak else out, device)


def zeros_like(a: Any, dtype: Any = None, order: Any = "K", subok: bool = True,
               shape: Any = None, *, device: Any = None) -> Array:
    """Zeros shaped like ``a``."""
    return full_like(a, 0, requested_dtype(dtype, "zeros_like"), shape=shape, device=device)


def ones_like(a: Any, dtype: Any = None, order: Any = "K", subok: bool = True,
              shape: Any = None, *, device: Any = None) -> Array:
    """Ones shaped like ``a``."""
    return full_like(a, 1, requested_dtype(dtype, "ones_like"), shape=shape, device=device)


def empty_like(a: Any, dtype: Any = None, order: Any = "K", subok: bool = True,
               shape: Any = None, *, device: Any = None) -> Array:
    """Zeros shaped like ``a``."""
    return zeros_like(a, requested_dtype(dtype, "empty_like"), shape=shape, device=device)


def eye(N: Any, M: Any = None, k: Any = 0, dtype: Any = None, order: Any = "C", *,
        device: Any = None) -> Array:
    """The N x M matrix with ones on the k-th diagonal."""
    M = None if M is None else operator.index(M)
    return _constant(np.eye(operator.index(N), M, operator.index(k),
                            _default(requested_dtype(dtype, "eye"))), device)


def identity(n: Any, dtype: Any = None, *, device: Any = None) -> Array:
    """The n x n identity matrix."""
    return eye(n, dtype=requested_dtype(dtype, "identity"), device=device)


def tri(N: Any, M: Any = None, k: Any = 0, dtype: Any = None, *,
        device: Any = None) -> Array:
    """Ones at and below the k-th diagonal of an N x M matrix, zeros above."""
    M = None if M is None else operator.index(M)
    return _constant(np.tri(operator.index(N), M, operator.index(k),
                            _default(requested_dtype(dtype, "tri"))), device)


def from_dlpack(x: Any, /, *, device: Any = None, copy: bool | None = None) -> Array:
    """An Array from any object with ``__dlpack__`` (numpy, cupy, torch, JAX arrays...).
    Other producers' memory may change, so their data is always copied into funcgrad's
    immutable memory (``copy=False`` raises BufferError); an Array is returned as it is."""
    if isinstance(x, Array):
        return _placed(x, device)
    if copy is False:
        raise BufferError("from_dlpack(copy=False): funcgrad Arrays own immutable memory, "
                          "so another library's data is always copied; pass copy=None or "
                          "copy=True")
    if not hasattr(x, "__dlpack__"):
        raise TypeError(f"from_dlpack: {type(x).__name__!r} does not implement __dlpack__")
    if hasattr(x, "__cuda_array_interface__"):
        return _placed(new_array(backend_of(x).xp.array(x, copy=True)), device)
    host = np.from_dlpack(x)
    return _placed(new_array(np.array(host, copy=True)), device)


# -- constants from files, buffers and functions (numpy reads them; funcgrad wraps) --------

def _wrapped(np_fn: Any, name: str) -> Any:
    def reader(*args: Any, **kwargs: Any) -> Any:
        out = np_fn(*args, **kwargs)
        if not isinstance(out, np.ndarray):
            return out
        if out.dtype.names:  # Arrays hold numbers: one per field, read as out["name"]
            return {field: new_array(np.array(out[field], copy=True))
                    for field in out.dtype.names}
        return new_array(np.array(out, copy=True))
    reader.__name__ = reader.__qualname__ = name
    reader.__doc__ = (f"numpy.{name}, returning an Array (a constant); a structured result "
                      "(named fields) is a dict of one Array per field.")
    return reader


frombuffer = _wrapped(np.frombuffer, "frombuffer")
fromiter = _wrapped(np.fromiter, "fromiter")
fromstring = _wrapped(np.fromstring, "fromstring")
fromfile = _wrapped(np.fromfile, "fromfile")
fromregex = _wrapped(np.fromregex, "fromregex")
loadtxt = _wrapped(np.loadtxt, "loadtxt")
genfromtxt = _wrapped(np.genfromtxt, "genfromtxt")


def load(file: Any, *args: Any, **kwargs: Any) -> Any:
    """numpy.load: an .npy file as an Array; an .npz archive as a dict of Arrays."""
    out = np.load(file, *args, **kwargs)
    if isinstance(out, np.ndarray):
        return new_array(np.array(out, copy=True))
    with out:
        return {k: new_array(np.array(out[k], copy=True)) for k in out.files}


def fromfunction(function: Any, shape: Any, *, dtype: Any = float, **kwargs: Any) -> Any:
    """``function(*indices)`` called once with the coordinate Arrays of ``shape`` (as
    numpy's fromfunction); differentiable through whatever the function computes."""
    from funcgrad.numpy._ranges import indices  # _ranges imports this module
    return function(*indices(as_shape(shape), dtype=dtype), **kwargs)


def ndim(a: Any) -> int:
    return a.ndim if isinstance(a, Array) else np.ndim(a)


def shape(a: Any) -> tuple:
    return tuple(a.shape) if isinstance(a, Array) else np.shape(a)


def size(a: Any, axis: int | None = None) -> int:
    s = shape(a)
    return int(np.prod(s)) if axis is None else s[axis]
