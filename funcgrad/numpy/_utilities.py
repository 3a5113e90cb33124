"""numpy's utilities that act on values rather than compute: printing, saving, the
floating-point error state, and small predicates (iterable, isscalar, may_share_memory).

funcgrad computes with numpy (on the CPU), so numpy's printing options and error state
apply to it unchanged; these are numpy's own objects. The savers and printers take Arrays
through their concrete values (a traced Array refuses, since that would drop its
derivative silently).
"""
from __future__ import annotations

from typing import Any

import numpy as np

from funcgrad.array import Array, new_array

__all__ = ["array2string", "array_repr", "array_str", "set_printoptions",
           "get_printoptions", "printoptions", "format_float_positional",
           "format_float_scientific", "base_repr", "binary_repr", "errstate", "seterr",
           "geterr", "seterrcall", "geterrcall", "getbufsize", "setbufsize", "save",
           "savez", "savez_compressed", "savetxt", "iterable", "isscalar",
           "may_share_memory", "shares_memory", "exceptions", "dtypes", "packbits",
           "unpackbits"]

from numpy import (set_printoptions, get_printoptions, printoptions,
                   format_float_positional, format_float_scientific, base_repr, binary_repr,
                   errstate, seterr, geterr, seterrcall, geterrcall, getbufsize, setbufsize,
                   iterable, exceptions, dtypes)


def _host(a: Any) -> Any:
    """A numpy view of an Array's value (np.asarray's rules: a tracer raises)."""
    return np.asarray(a) if isinstance(a, Array) else a


def array2string(a: Any, *args: Any, **kwargs: Any) -> str:
    """numpy.array2string of the Array's values."""
    return np.array2string(_host(a), *args, **kwargs)


def array_repr(arr: Any, *args: Any, **kwargs: Any) -> str:
    """repr of an Array (``Array([...], dtype=...)``), numpy's for other input."""
    return repr(arr) if isinstance(arr, Array) else np.array_repr(arr, *args, **kwargs)


def array_str(a: Any, *args: Any, **kwargs: Any) -> str:
    """numpy.array_str of the Array's values."""
    return np.array_str(_host(a), *args, **kwargs)


def save(file: Any, arr: Any, allow_pickle: bool = True) -> None:
    """numpy.save of the Array's values (read back by funcgrad.numpy.load)."""
    np.save(file, _host(arr), allow_pickle=allow_pickle)


def savez(file: Any, *args: Any, **kwds: Any) -> None:
    """numpy.savez of Arrays (read back by funcgrad.numpy.load as a dict of Arrays)."""
    np.savez(file, *(_host(a) for a in args), **{k: _host(v) for k, v in kwds.items()})


def savez_compressed(file: Any, *args: Any, **kwds: Any) -> None:
    """numpy.savez_compressed of Arrays."""
    np.savez_compressed(file, *(_host(a) for a in args),
                        **{k: _host(v) for k, v in kwds.items()})


def savetxt(fname: Any, X: Any, *args: Any, **kwargs: Any) -> None:
    """numpy.savetxt of the Array's values."""
    np.savetxt(fname, _host(X), *args, **kwargs)


def isscalar(element: Any) -> bool:
    """Whether ``element`` is a scalar: Python and numpy scalars, not Arrays (even 0-d
    ones, as numpy says for 0-d ndarrays)."""
    return not isinstance(element, Array) and bool(np.isscalar(element))


def may_share_memory(a: Any, b: Any, max_work: Any = None) -> bool:
    """Whether the two values may share memory (Arrays by their backing buffers; sharing
    is harmless since Arrays are immutable)."""
    return bool(np.may_share_memory(_raw(a), _raw(b), max_work))


def shares_memory(a: Any, b: Any, max_work: Any = None) -> bool:
    """Whether the two values share memory (exactly, which may be slow)."""
    return bool(np.shares_memory(_raw(a), _raw(b), max_work))


def _raw(x: Any) -> Any:
    return x.concrete().to_numpy() if isinstance(x, Array) else x


def packbits(a: Any, axis: Any = None, bitorder: str = "big") -> Array:
    """The elements of a boolean or integer array packed into bits of uint8 (a
    constant)."""
    return new_array(np.packbits(np.asarray(_raw(a)), axis, bitorder))


def unpackbits(a: Any, axis: Any = None, count: Any = None, bitorder: str = "big") -> Array:
    """The bits of a uint8 array as an array of 0s and 1s (a constant)."""
    return new_array(np.unpackbits(np.asarray(_raw(a)), axis, count, bitorder))
