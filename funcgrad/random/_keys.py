"""PRNG keys: seeding, splitting, folding in, and the random bits every sampler starts from.

A key is two uint32 words. `PRNGKey(seed)` returns them as a raw ``uint32[2]`` Array (JAX's
legacy keys); `key(seed)` returns a typed `KeyArray` of shape ``()``, which wraps the same
``uint32[..., 2]`` data and shows its implementation in its dtype (``key<fry>``). Every
function accepts both and returns keys of the kind it was given. `KeyArray` is a pytree
node whose one leaf is its data, so keys pass through transforms as uint32 arrays.

`split`, `fold_in` and `random_bits` are JAX's Threefry-2x32 derivations with
``jax_threefry_partitionable=True`` (JAX 0.10's default): each output element hashes its
own 64-bit counter, split as (high, low) uint32 words.
"""
from __future__ import annotations

from typing import Any, Sequence

import numpy as np

import funcgrad.numpy as fnp
from funcgrad import tree_util
from funcgrad.array import Array
from funcgrad.primitives.control import device_put
from funcgrad.primitives.kernels.random import iota_2x32
from funcgrad.primitives.random import threefry2x32

from ._util import canonical_shape

IMPL = "threefry2x32"
_OTHER_JAX_IMPLS = ("rbg", "unsafe_rbg", "philox2x32", "philox4x32", "threefry4x32")


class KeyDType:
    """The dtype of typed keys: ``key<fry>``, the Threefry-2x32 implementation."""

    name = "key<fry>"
    impl = IMPL

    def __repr__(self) -> str:
        return self.name

    __str__ = __repr__

    def __eq__(self, other: Any) -> bool:
        return isinstance(other, KeyDType) or other == self.name or other == IMPL

    def __hash__(self) -> int:
        return hash(self.name)


KEY_DTYPE = KeyDType()


class KeyArray:
    """An immutable array of typed PRNG keys over ``uint32[*shape, 2]`` key data.

    Indexing, ``reshape``, ``ravel``, ``len`` and iteration act on the key axes; ``==``
    compares whole keys. Get the data with `key_data`, make keys from data with
    `wrap_key_data`."""

    __slots__ = ("_data",)
    __hash__ = None  # type: ignore[assignment]

    def __init__(self, data: Array):
        self._data = data

    @property
    def shape(self) -> tuple:
        return tuple(self._data.shape[:-1])

    @property
    def ndim(self) -> int:
        return self._data.ndim - 1

    @property
    def size(self) -> int:
        return int(np.prod(self.shape))

    @property
    def dtype(self) -> KeyDType:
        return KEY_DTYPE

    def __len__(self) -> int:
        if not self.shape:
            raise TypeError("len() of unsized object (a 0-d key array)")
        return self.shape[0]

    def __iter__(self):
        if not self.shape:
            raise TypeError("iteration over a 0-d key array")
        return (self[i] for i in range(self.shape[0]))

    def __getitem__(self, idx: Any) -> "KeyArray":
        idx = idx if isinstance(idx, tuple) else (idx,)
        tail = (slice(None),) if any(i is Ellipsis for i in idx) else (Ellipsis, slice(None))
        return KeyArray(self._data[(*idx, *tail)])

    def reshape(self, *shape: Any) -> "KeyArray":
        if len(shape) == 1 and not isinstance(shape[0], (int, np.integer)):
            shape = tuple(shape[0])
        return KeyArray(fnp.reshape(self._data, tuple(shape) + (2,)))

    def ravel(self) -> "KeyArray":
        return self.reshape(-1)

    flatten = ravel

    @property
    def T(self) -> "KeyArray":
        return KeyArray(fnp.moveaxis(fnp.transpose(self._data), 0, -1))

    def __eq__(self, other: Any) -> Array:  # type: ignore[override]
        if not isinstance(other, KeyArray):
            return NotImplemented
        return fnp.all(self._data == other._data, axis=-1)

    def __ne__(self, other: Any) -> Array:  # type: ignore[override]
        if not isinstance(other, KeyArray):
            return NotImplemented
        return fnp.any(self._data != other._data, axis=-1)

    def __repr__(self) -> str:
        return f"Array({self.shape}, dtype={KEY_DTYPE}) overlaying:\n{self._data}"


tree_util.register_pytree_node(KeyArray, lambda k: ((k._data,), None),
                               lambda _, children: KeyArray(children[0]))


# -- checking keys and implementations ----------------------------------------------------

def check_impl(impl: Any) -> None:
    """Only Threefry-2x32 is implemented; JAX's other implementations say so."""
    if impl is None or impl == IMPL or isinstance(impl, KeyDType):
        return
    if impl in _OTHER_JAX_IMPLS:
        raise NotImplementedError(f'PRNG implementation "{impl}" is not available in '
                                  f'funcgrad.random, which implements "{IMPL}" only.')
    if isinstance(impl, str):
        raise ValueError(f'unrecognized PRNG implementation "{impl}". Did you mean one of: '
                         f'"{IMPL}"?')
    raise TypeError(f"unrecognized type {type(impl)} for specifying PRNG implementation.")


def check_key_data(data: Any) -> Array:
    """Raw key data as a uint32[..., 2] Array, JAX's errors otherwise."""
    if not all(hasattr(data, attr) for attr in ("ndim", "shape", "dtype")):
        raise TypeError("invalid PRNG key data: expected key_data to have ndim, shape, and "
                        f"dtype attributes. Got {data}")
    if data.ndim < 1:
        raise TypeError(f"invalid PRNG key data: expected key_data.ndim >= 1; got "
                        f"ndim={data.ndim}")
    if tuple(data.shape[-1:]) != (2,):
        raise TypeError("invalid PRNG key data: expected key_data.shape to end with (2,); "
                        f"got shape={tuple(data.shape)} for impl={IMPL}")
    if np.dtype(data.dtype) != np.uint32:
        raise TypeError(f"invalid PRNG key data: expected key_data.dtype = uint32; got "
                        f"dtype={data.dtype}")
    return data if isinstance(data, Array) else fnp.asarray(data)


def check_prng_key(name: str, key: Any, allow_batched: bool = False) -> tuple[Array, bool]:
    """(the key data, whether the key was typed) of a key argument; one key unless
    ``allow_batched``."""
    if isinstance(key, KeyArray):
        data, typed = key._data, True
    elif isinstance(key, (list, tuple)):
        raise TypeError(f"unexpected PRNG key type {type(key)}")
    else:
        data, typed = check_key_data(key), False
    if not allow_batched and data.ndim > 1:
        shape = key.shape if typed else tuple(data.shape)
        raise ValueError(f"{name} accepts a single key, but was given a key array of shape "
                         f"{shape} != (). Use funcgrad.vmap for batching.")
    return data, typed


def _return(data: Array, typed: bool) -> Any:
    return KeyArray(data) if typed else data


# -- seeds ---------------------------------------------------------------------------------

def _seed_data(ctor: str, seed: Any) -> Array:
    """The two key words of a 64-bit (or narrower) integer seed: (high, low) 32 bits."""
    if isinstance(seed, KeyArray):
        raise TypeError(f"{ctor} accepts a scalar seed, but was given a PRNG key.")
    if isinstance(seed, (bool, int)):
        if not -2**63 <= seed < 2**63:
            raise OverflowError(f"{ctor}: the seed {seed} does not fit in an int64; seeds "
                                "are 64-bit integers")
        seed = np.int64(seed)
    seed = fnp.asarray(seed)
    if seed.ndim:
        raise TypeError(f"{ctor} accepts a scalar seed, but was given an array of shape "
                        f"{tuple(seed.shape)} != (). Use funcgrad.vmap for batching")
    if seed.dtype.kind not in "biu":
        raise TypeError(f"PRNG key seed must be an integer; got {seed!r}")
    low = fnp.astype(seed, np.uint32)  # wraps: the low 32 bits
    if seed.dtype.itemsize > 4:
        high = fnp.astype(fnp.right_shift(seed, seed.dtype.type(32)), np.uint32)
    else:
        high = fnp.zeros_like(low)
    return fnp.stack([high, low])


def PRNGKey(seed: Any, *, impl: Any = None) -> Array:
    """A raw key, ``uint32[2]``, from an integer seed (the high and low 32 bits of the
    seed as an int64)."""
    check_impl(impl)
    return _seed_data("PRNGKey", seed)


def key(seed: Any, *, impl: Any = None, dtype: Any = None) -> KeyArray:
    """A typed key (`KeyArray` of shape ``()``, dtype ``key<fry>``) from an integer seed."""
    if dtype is not None:
        if impl is not None:
            raise ValueError("Cannot specify both `impl` and `dtype` arguments to "
                             "funcgrad.random.key")
        impl = dtype
    check_impl(impl)
    return KeyArray(_seed_data("key", seed))


def key_data(keys: Any) -> Array:
    """The uint32[..., 2] data of keys (typed or raw)."""
    data, _ = check_prng_key("key_data", keys, allow_batched=True)
    return data


def wrap_key_data(key_bits_array: Any, *, impl: Any = None, dtype: Any = None) -> KeyArray:
    """Typed keys over uint32[..., 2] key data."""
    if dtype is not None:
        if impl is not None:
            raise ValueError("Cannot specify both `impl` and `dtype` arguments to "
                             "funcgrad.random.wrap_key_data")
        impl = dtype
    check_impl(impl)
    return KeyArray(check_key_data(key_bits_array))


def key_impl(keys: Any) -> str:
    """The name of the keys' PRNG implementation."""
    check_prng_key("key_impl", keys, allow_batched=True)
    return IMPL


def clone(key: Any) -> Any:
    """The key itself (keys are immutable; JAX's key-reuse checker gives this a meaning)."""
    check_prng_key("clone", key, allow_batched=True)
    return key


# -- derivations -----------------------------------------------------------------------------

def on_device_of(raw: np.ndarray, like: Any) -> Array:
    """A constant made on the host, as an Array on the device of ``like``."""
    out = fnp.asarray(raw)
    device = like.device
    return out if device == "cpu" else device_put(out, device)


def hash_counters(data: Array, shape: Sequence[int]) -> tuple:
    """Threefry of one key over the counters of ``shape``: two uint32 Arrays of ``shape``."""
    high, low = (on_device_of(c, data) for c in iota_2x32(shape))
    return threefry2x32(data[0], data[1], high, low)


def split_data(data: Array, shape: Sequence[int]) -> Array:
    """uint32[*shape, 2]: one new key per counter."""
    y1, y2 = hash_counters(data, shape)
    return fnp.stack([y1, y2], axis=len(shape))


def random_bits(data: Array, bit_width: int, shape: Sequence[int]) -> Array:
    """``shape`` unsigned ints of ``bit_width`` bits from one key: the xor of the two hash
    words (8, 16 and 32 bits, truncated) or their concatenation (64 bits)."""
    y1, y2 = hash_counters(data, shape)
    if bit_width == 64:
        return fnp.bitwise_or(fnp.left_shift(fnp.astype(y1, np.uint64), np.uint64(32)),
                              fnp.astype(y2, np.uint64))
    bits = fnp.bitwise_xor(y1, y2)
    return bits if bit_width == 32 else fnp.astype(bits, np.dtype(f"uint{bit_width}"))


def split(key: Any, num: int | Sequence[int] = 2) -> Any:
    """``num`` new keys (or a ``num``-shaped array of keys) from one key."""
    data, typed = check_prng_key("split", key)
    shape = canonical_shape(num)
    return _return(split_data(data, shape), typed)


def fold_in(key: Any, data: Any) -> Any:
    """A new key from a key and a 32-bit integer: the hash of the counter (0, data)."""
    key_words, typed = check_prng_key("fold_in", key)
    if np.ndim(data) if not isinstance(data, Array) else data.ndim:
        raise TypeError("fold_in accepts a scalar, but was given an array of shape "
                        f"{np.shape(data) if not isinstance(data, Array) else data.shape} "
                        "!= (). Use funcgrad.vmap for batching.")
    if isinstance(data, (bool, int)):
        if not 0 <= data < 2**32:
            raise OverflowError(f"Python integer {data} out of bounds for uint32")
        message = on_device_of(np.uint32(data), key_words)
    else:
        message = fnp.astype(fnp.asarray(data), np.uint32)
    y1, y2 = threefry2x32(key_words[0], key_words[1], fnp.zeros_like(message), message)
    return _return(fnp.stack([y1, y2]), typed)
