"""Array's operators and numpy-style methods, installed from `funcgrad.numpy`.

The table maps each method to the namespace function it calls; ``install`` runs once when
`funcgrad.numpy` is imported. Keeping the table here leaves `funcgrad.array` free of any
knowledge of the primitives.
"""
from __future__ import annotations

from typing import Any

import numpy as np

from funcgrad.array import Array, _IndexUpdateRef
from funcgrad.core import NO_PARAMS, Primitive, bind
from funcgrad.numpy import _index_modes as index_modes

# method name -> funcgrad.numpy function called with the array first
_METHODS = {
    "sum": "sum", "mean": "mean", "prod": "prod", "max": "max", "min": "min",
    "std": "std", "var": "var", "cumsum": "cumsum", "cumprod": "cumprod",
    "argmax": "argmax", "argmin": "argmin", "argsort": "argsort", "all": "all",
    "any": "any", "swapaxes": "swapaxes", "squeeze": "squeeze", "ravel": "ravel",
    "flatten": "ravel", "astype": "astype", "dot": "dot", "clip": "clip", "conj": "conj",
    "conjugate": "conj", "round": "round", "trace": "trace", "diagonal": "diagonal",
    "repeat": "repeat", "take": "take", "nonzero": "nonzero", "ptp": "ptp",
    "argpartition": "argpartition", "choose": "choose", "searchsorted": "searchsorted",
    "sort": "sort",
}
# binary operators: (name, function, reflected)
_OPERATORS = [
    ("add", "add"), ("sub", "subtract"), ("mul", "multiply"), ("truediv", "true_divide"),
    ("floordiv", "floor_divide"), ("mod", "mod"), ("pow", "power"),
    ("matmul", "matmul"), ("and", "logical_and_bitwise"), ("or", "logical_or_bitwise"),
    ("xor", "logical_xor_bitwise"), ("divmod", "divmod"), ("lshift", "left_shift"),
    ("rshift", "right_shift"),
]
_COMPARISONS = [("lt", "less"), ("le", "less_equal"), ("gt", "greater"),
                ("ge", "greater_equal"), ("eq", "equal"), ("ne", "not_equal")]
_UNARY = [("neg", "negative"), ("pos", "positive"), ("abs", "abs"), ("invert", "invert")]
_PROPERTIES = {"T": "_T", "mT": "matrix_transpose", "real": "real", "imag": "imag"}


_API_VERSIONS = ("2021.12", "2022.12", "2023.12", "2024.12")
_OPERANDS = (Array, float, int, np.ndarray, np.generic, complex, list)


def _binary(f: Any, reflected: bool) -> Any:
    """An operator method; other operand types get NotImplemented, so that Python tries
    their reflected method (as it does for numpy arrays). A primitive goes to `bind`
    directly (calling the primitive object would add a call)."""
    if isinstance(f, Primitive):
        if reflected:
            def op(x: Array, y: Any) -> Any:
                return bind(f, (y, x), NO_PARAMS) if isinstance(y, _OPERANDS) else \
                    NotImplemented
        else:
            def op(x: Array, y: Any) -> Any:
                return bind(f, (x, y), NO_PARAMS) if isinstance(y, _OPERANDS) else \
                    NotImplemented
    elif reflected:
        def op(x: Array, y: Any) -> Any:
            return f(y, x) if isinstance(y, _OPERANDS) else NotImplemented
    else:
        def op(x: Array, y: Any) -> Any:
            return f(x, y) if isinstance(y, _OPERANDS) else NotImplemented
    return op


def _unary(f: Any) -> Any:
    """A unary operator method (``-x``, ``abs(x)``...): a primitive goes to `bind` directly,
    as `_binary`'s do (through `_method` it would cost two calls more, one of them a call
    of the primitive object, which CPython runs in a new interpreter loop)."""
    if isinstance(f, Primitive):
        def op(x: Array) -> Any:
            return bind(f, (x,), NO_PARAMS)
        op.__name__ = f.name
        op.__doc__ = f.__doc__
        return op
    return _method(f)


def _method(f: Any) -> Any:
    def method(self: Array, *args: Any, **kwargs: Any) -> Any:
        kwargs.pop("out", None)  # numpy passes out=None through np.sum(x) and friends
        return f(self, *args, **kwargs)
    method.__name__ = getattr(f, "__name__", "method")
    method.__doc__ = getattr(f, "__doc__", None)
    return method


def install(ns: Any) -> None:
    """Attach the operators and methods of the tables above, taking the functions from
    the namespace module ``ns`` (funcgrad.numpy)."""
    for name, fn in _METHODS.items():
        setattr(Array, name, _method(getattr(ns, fn)))
    for name, fn in _OPERATORS + _COMPARISONS:
        f = getattr(ns, fn)
        setattr(Array, f"__{name}__", _binary(f, False))
        if (name, fn) not in _COMPARISONS:
            setattr(Array, f"__r{name}__", _binary(f, True))
    for name, fn in _UNARY:
        setattr(Array, f"__{name}__", _unary(getattr(ns, fn)))
    for name, fn in _PROPERTIES.items():
        setattr(Array, name, property(getattr(ns, fn)))

    def reshape(self: Array, *shape: Any, order: str = "C") -> Array:
        return ns.reshape(self, shape[0] if len(shape) == 1 else shape, order=order)

    def transpose(self: Array, *axes: Any) -> Array:
        return ns.transpose(self, (axes[0] if len(axes) == 1 else axes) or None)

    def __array_namespace__(self: Array, /, *, api_version: str | None = None) -> Any:
        """The Array API namespace of this Array: funcgrad.numpy."""
        if api_version is not None and api_version not in _API_VERSIONS:
            raise ValueError(f"funcgrad.numpy implements the Array API "
                             f"{ns.__array_api_version__}; api_version={api_version!r} "
                             f"is not one of {', '.join(_API_VERSIONS)}")
        return ns

    def to_device(self: Array, device: Any, /, *, stream: Any = None) -> Array:
        """This Array on ``device`` (differentiable; see funcgrad.device_put)."""
        if stream is not None:
            raise ValueError("to_device: funcgrad does not take a stream; pass stream=None")
        return ns.asarray(self, device=device)

    def compress(self: Array, condition: Any, axis: Any = None) -> Array:
        """The slices along ``axis`` where ``condition`` is true (numpy's argument order)."""
        return ns.compress(condition, self, axis)

    def tobytes(self: Array, order: str = "C") -> bytes:
        """The raw bytes of the values (a traced Array refuses, as np.asarray does)."""
        return np.asarray(self).tobytes(order)

    def view(self: Array, dtype: Any = None) -> Array:
        """The same bits read as ``dtype`` (JAX's bitcast; not differentiable, so a traced
        inexact Array refuses)."""
        raw = np.asarray(self)
        return ns.asarray(raw if dtype is None else raw.view(dtype))

    def __contains__(self: Array, value: Any) -> bool:
        return bool(ns.any(ns.equal(self, value)))

    Array.compress = compress
    Array.tobytes = tobytes
    Array.view = view
    Array.__contains__ = __contains__
    Array.reshape = reshape
    Array.transpose = transpose
    Array.__array_namespace__ = __array_namespace__
    Array.to_device = to_device
    Array.__getitem__ = ns.getitem
    _IndexUpdateRef.update = staticmethod(index_modes.update)
    _IndexUpdateRef.gather = staticmethod(index_modes.gather)
    Array.copy = lambda self: self
    Array.__array_ufunc__ = _array_ufunc(ns)


def _array_ufunc(ns: Any) -> Any:
    def __array_ufunc__(self: Array, ufunc: np.ufunc, method: str, *inputs: Any,
                        **kwargs: Any) -> Any:
        """numpy ufuncs on Arrays run funcgrad's (differentiable) version when there is
        one; otherwise concrete Arrays are converted and traced ones raise."""
        f = getattr(ns, ufunc.__name__, None)
        if method == "__call__" and f is not None and not kwargs:
            return f(*inputs)
        raw = [np.asarray(x) if isinstance(x, Array) else x for x in inputs]
        return getattr(ufunc, method)(*raw, **kwargs)
    return __array_ufunc__
