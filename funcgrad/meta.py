"""The 'meta' device: arrays that have a shape and a dtype but no values.

PyTorch's meta tensors let a program build a model too large for memory, ask what shapes
a network produces, or check a program's shapes before running it; JAX's `eval_shape` does
the last. funcgrad has no shape rule per primitive, so a meta array is a `Tracer` of one
permanent trace, `MetaTrace`, which sits below every transform (level -1). A primitive
called on meta arrays runs its own implementation on a stand-in of each: a read-only array
of zeros with the meta array's shape and dtype and no memory of its own (every stride 0).
The result's shape and dtype are kept and its values dropped, so shapes, dtypes, broadcasting
and shape errors are exactly the eager ones. The cost is one operation's compute and
result memory at a time, not the model's memory.

What a stand-in cannot answer raises: a primitive whose result's shape depends on values
(`nonzero`, boolean masks, `unique`), a primitive that communicates (collectives), and any
reading of values (``float``, ``bool``, ``item``, numpy conversion, copying to a real
device). The texts are PyTorch's, whose meta tensors these arrays carry.

Because every transform ranks above the meta trace, meta arrays go through ``grad``,
``vjp``, ``jvp`` and ``vmap``: their derivatives are meta arrays as well.
"""
from __future__ import annotations

from typing import Any, Callable, Sequence

import numpy as np

from funcgrad import tree_util
from funcgrad.array import Array, is_weak, new_array, weakened
from funcgrad.avals import Shaped
from funcgrad._config import canonical_dtype
from funcgrad.core import Primitive, Trace, Tracer, bind, weak_result

__all__ = ["META", "MetaTrace", "MetaTracer", "to_meta", "is_meta", "ShapeDtypeStruct",
           "typeof", "eval_shape", "NO_DATA_ERROR", "dynamic_shape_error", "def_meta_impl", "stand_in",
           "def_elementwise"]

NO_DATA_ERROR = "Cannot copy out of meta tensor; no data!"
ITEM_ERROR = "Tensor.item() cannot be called on meta tensors"
NUMPY_ERROR = ("can't convert meta device type tensor to numpy. Use Tensor.cpu() to copy "
               "the tensor to host memory first.")


class MetaTrace(Trace):
    """The one trace of meta arrays: never on a thread's stack, never retired."""

    name = "meta"
    mode = "meta"

    def __init__(self) -> None:
        self.level = -1  # below every transform: a transform's tracer may hold a meta array
        self.alive = True

    def process(self, prim: Primitive, args: Sequence, params: dict) -> Any:
        own = META_IMPLS.get(prim)
        if own is not None:  # the primitive's own shape function (a custom op's fake)
            out = own(*args, **params)
            return type(out)(to_meta(o) for o in out) if prim.multiple_results else \
                to_meta(out)
        refusal = _refusal(prim, params)
        if refusal is not None:
            raise refusal
        stand_ins = [a._primal if type(a) is MetaTracer else a for a in args]
        if prim in ELEMENTWISE or type(prim.impl) is np.ufunc:
            out = _elementwise_on_meta(prim, stand_ins, params)
            if out is not None:
                return out
        with np.errstate(all="ignore"):  # zeros make 0/0 and log(0): their values are dropped
            try:
                out = bind(prim, stand_ins, params)
            except np.linalg.LinAlgError:  # zeros are singular: identities, then noise
                try:
                    out = bind(prim, [_identity_like(a) for a in stand_ins], params)
                except np.linalg.LinAlgError:
                    out = bind(prim, [_noise_like(a) for a in stand_ins], params)
        if prim.multiple_results:
            return type(out)(to_meta(o) for o in out)
        return to_meta(out)


def _elementwise_on_meta(prim: Primitive, stand_ins: list, params: dict) -> Any:
    """An elementwise primitive's result on meta arrays: the inputs' broadcast shape and
    the dtypes its implementation gives 0-dim operands. On stand-ins it would fill a result
    of that shape, and a meta array may stand for more memory than the machine has. None
    where that does not apply: shapes that do not broadcast (the stand-ins then raise the
    implementation's own error, before any result is made) or a probe whose result is not
    0-dim (a bitcast to another width changes the shape)."""
    try:
        shape = np.broadcast_shapes(*[getattr(a, "shape", ()) for a in stand_ins])
    except ValueError:
        return None
    scalars = [np.zeros((), a.dtype) if hasattr(a, "dtype") else a for a in stand_ins]
    with np.errstate(all="ignore"):
        probe = prim.impl(*scalars, **params)
    outs = tuple(probe) if prim.multiple_results else (probe,)
    if any(np.ndim(o) for o in outs):
        return None
    weak = weak_result(prim, stand_ins)
    metas = [to_meta(ShapeDtypeStruct(shape, np.result_type(o), weak)) for o in outs]
    return type(probe)(metas) if prim.multiple_results else metas[0]


def _refusal(prim: Primitive, params: dict) -> Exception | None:
    """Why ``prim`` cannot run on meta arrays, or None when it can."""
    if prim.dynamic_shape:
        return dynamic_shape_error(prim.name)
    if prim.effectful:
        return NotImplementedError(
            f"{prim.name}: a meta array has no values to communicate or hand to a "
            "callback; run it on arrays of a real device.")
    if params.get("device", "meta") != "meta":  # device_put off the meta device
        return NotImplementedError(NO_DATA_ERROR)
    return None


def dynamic_shape_error(name: str) -> NotImplementedError:
    """The refusal of an operation whose result's shape depends on values (``nonzero``)."""
    return NotImplementedError(
        f"{name}: attempted to run this operator with Meta tensors, but there was no fake "
        "impl or Meta kernel registered: the shape of its result depends on the values of "
        "its input, which a meta array does not have. Run it on a real device (or keep the "
        "shape fixed with funcgrad.numpy.where).")


def _identity_like(stand_in: Any) -> Any:
    """A stand-in with identity matrices in its last two axes (ones if they are not square):
    the values an operation that refuses singular input (inv, solve, cholesky) accepts."""
    if type(stand_in) is not Array or stand_in.ndim < 2:
        return stand_in
    shape, dtype = stand_in.shape, stand_in.dtype
    core = np.eye(shape[-1], dtype=dtype) if shape[-1] == shape[-2] else np.ones(shape[-2:],
                                                                                 dtype)
    return new_array(np.broadcast_to(core, shape))


def _noise_like(stand_in: Any) -> Any:
    """A stand-in of fixed pseudo-random values: regular where neither zeros nor identities
    are (a banded matrix's storage form); it has memory of its own, so it is the last try."""
    if type(stand_in) is not Array or stand_in.dtype.kind not in "fc":
        return stand_in
    noise = np.random.default_rng(0).standard_normal(stand_in.shape)
    return new_array(noise.astype(stand_in.dtype))


META = MetaTrace()
# primitives whose results on meta arrays come from a function of their own instead of
# their implementation on stand-ins: ``fn(*args, **params)`` gets the meta arrays and
# returns arrays (any device) with the results' shapes and dtypes
META_IMPLS: dict = {}
# primitives that broadcast their inputs elementwise (numpy ufuncs are found by type; the
# others are declared with `def_elementwise`): on meta arrays, their shapes need no stand-in
ELEMENTWISE: set = set()


def def_meta_impl(prim: Primitive, fn: Callable) -> None:
    """Give ``prim`` its own evaluation on meta arrays (see `META_IMPLS`): for an
    implementation that cannot run on stand-ins (a user's kernel, PyTorch's custom ops with
    their ``register_fake``)."""
    META_IMPLS[prim] = fn


def def_elementwise(prim: Primitive) -> None:
    """Declare ``prim`` elementwise (see `ELEMENTWISE`): its result on meta arrays has the
    broadcast shape of its inputs."""
    ELEMENTWISE.add(prim)


class MetaTracer(Tracer):
    """An array on the 'meta' device: a shape and a dtype, no values."""

    __slots__ = ()

    @property
    def device(self) -> str:
        return "meta"

    def concrete(self) -> Array:
        raise NotImplementedError(NO_DATA_ERROR)

    def __array__(self, dtype: Any = None, copy: Any = None) -> np.ndarray:
        raise TypeError(NUMPY_ERROR)

    def _no_item(self, *args: Any) -> Any:
        raise RuntimeError(ITEM_ERROR)

    __float__ = __int__ = __complex__ = __index__ = __bool__ = item = _no_item

    def tolist(self) -> Any:
        raise NotImplementedError(NO_DATA_ERROR)

    def __repr__(self) -> str:
        return f"Array(..., device='meta', shape={self.shape}, dtype={self.dtype})"

    __str__ = __repr__


def stand_in(x: Any) -> np.ndarray:
    """Zeros of ``x``'s shape and dtype with no memory of their own (every stride 0)."""
    return np.broadcast_to(np.zeros((), x.dtype), x.shape)


def _meta_array(shape: tuple, dtype: np.dtype, weak: bool = False) -> MetaTracer:
    m = object.__new__(MetaTracer)
    m._trace = META
    primal = new_array(np.broadcast_to(np.zeros((), dtype), shape))  # no memory of its own
    m._primal = weakened(primal) if weak else primal
    m.shape, m.dtype, m.ndim = shape, dtype, len(shape)
    return m


def to_meta(x: Any) -> MetaTracer:
    """A meta array with the shape and dtype of ``x`` (an Array, a numpy array, a number, or
    anything with ``shape`` and ``dtype``)."""
    if type(x) is MetaTracer:
        return x
    weak = is_weak(x) or getattr(x, "weak_type", False) is True  # (a ShapeDtypeStruct's)
    if not (hasattr(x, "shape") and hasattr(x, "dtype")):
        x = np.asarray(x)
    return _meta_array(tuple(x.shape), np.dtype(x.dtype), weak)


def is_meta(x: Any) -> bool:
    """Whether ``x`` is an array on the meta device (a transform's tracer of one counts)."""
    while isinstance(x, Tracer):
        if type(x) is MetaTracer:
            return True
        x = x._primal
    return False


class ShapeDtypeStruct(Shaped):
    """A shape and a dtype standing for an array (JAX's name): what `eval_shape` returns,
    and what it accepts in place of an argument; ``weak_type``: whether the dtype is weak
    (JAX's field, see `funcgrad.array.WeakArray`)."""

    __slots__ = ("shape", "dtype", "weak_type")

    def __init__(self, shape: Sequence[int], dtype: Any, weak_type: bool = False):
        self.shape = tuple(int(s) for s in shape)
        self.weak_type = bool(weak_type)
        try:
            self.dtype = np.dtype(dtype)
        except TypeError:  # a dtype of funcgrad's own (random keys') is kept as it is
            if not hasattr(dtype, "name"):
                raise
            self.dtype = dtype

    def __eq__(self, other: Any) -> bool:
        return (isinstance(other, ShapeDtypeStruct) and (self.shape, self.dtype, self.weak_type)
                == (other.shape, other.dtype, other.weak_type))

    def __hash__(self) -> int:
        return hash((self.shape, self.dtype, self.weak_type))

    def __repr__(self) -> str:
        weak = ", weak_type=True" if self.weak_type else ""
        return f"ShapeDtypeStruct(shape={self.shape}, dtype={self.dtype.name}{weak})"

    @classmethod
    def like(cls, x: Any) -> "ShapeDtypeStruct":
        """The shape and dtype of array ``x``."""
        return cls(np.shape(x), np.result_type(x) if not hasattr(x, "dtype") else x.dtype)


def typeof(x: Any) -> ShapeDtypeStruct:
    """The shape and dtype of ``x`` (an array, a tracer or a Python number), JAX's
    ``jax.typeof``."""
    return ShapeDtypeStruct.like(x)


def eval_shape(fun: Callable, *args: Any, **kwargs: Any) -> Any:
    """The shapes and dtypes of ``fun(*args, **kwargs)``, as a pytree of `ShapeDtypeStruct`,
    computed on meta arrays (see the module docstring): no values are computed or kept.
    Array arguments (and `ShapeDtypeStruct`s) become meta arrays; Python numbers stay
    numbers, so they keep their weak type."""
    def as_meta(leaf: Any) -> Any:
        return leaf if isinstance(leaf, (bool, int, float, complex)) else to_meta(leaf)

    args, kwargs = tree_util.tree_map(as_meta, (args, kwargs))
    out = fun(*args, **kwargs)

    def as_struct(leaf: Any) -> Any:
        if not hasattr(leaf, "shape"):  # a Python number: its dtype under jax_enable_x64
            return ShapeDtypeStruct((), canonical_dtype(np.result_type(leaf)), is_weak(leaf))
        return ShapeDtypeStruct(leaf.shape, leaf.dtype, is_weak(leaf))
    return tree_util.tree_map(as_struct, out)
