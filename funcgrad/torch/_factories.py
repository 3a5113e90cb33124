"""Tensor factories and randomness: `tensor`, `zeros`, `arange`, `rand`, `manual_seed`...

Random tensors come from one facade-wide numpy Generator (PCG64) that `manual_seed` resets,
so runs are reproducible; the streams differ from PyTorch's, the distributions do not.
Factories return leaf tensors; ``device='cuda'`` places them with cupy.
"""
from __future__ import annotations

import builtins
import warnings
from typing import Any, Sequence

import numpy as np

import funcgrad
import funcgrad.numpy as fnp
from funcgrad.array import new_array
from funcgrad.meta import ShapeDtypeStruct, to_meta
from funcgrad.core import Tracer
from funcgrad.torch import _compiled_random
from funcgrad.torch._runtime import dtypes as D
from funcgrad.torch._compile_state import GraphBreak
from funcgrad.torch._compiled_random import STATE_BYTES, state_bytes, stream_of
from funcgrad.torch._dispatch import apply, const_like
from funcgrad.torch._range_values import linspace_values
from funcgrad.torch._tensor import Tensor, _size_args, make

__all__ = ["tensor", "as_tensor", "from_numpy", "zeros", "ones", "empty", "full",
           "zeros_like", "ones_like", "empty_like", "full_like", "arange", "linspace",
           "logspace", "eye", "rand", "randn", "randint", "rand_like", "randn_like",
           "randint_like", "randperm", "normal", "bernoulli", "manual_seed", "seed",
           "initial_seed", "Generator", "default_generator", "scalar_tensor", "get_rng_state",
           "set_rng_state", "multinomial", "legacy_init"]


class Generator:
    """A random stream (numpy's PCG64), seeded with `manual_seed`."""

    def __init__(self, device: Any = "cpu"):
        self.device = D.device(device)
        self._seed = 67280421310721
        self.rng = np.random.default_rng(self._seed)

    def manual_seed(self, seed: int) -> "Generator":
        self._seed = int(seed)
        self.rng = np.random.default_rng(self._seed)
        return self

    def initial_seed(self) -> int:
        return self._seed

    def seed(self) -> int:
        s = int(np.random.SeedSequence().entropy % (2 ** 63))
        self.manual_seed(s)
        return s

    def get_state(self) -> Tensor:
        """The stream's position as a uint8 tensor (seed and PCG64 state, 16 bytes each),
        for `set_state`; the layout is funcgrad's, not PyTorch's mt19937 state."""
        raw = state_bytes(self._seed, self.rng)
        return finish(np.frombuffer(raw, np.uint8), D.uint8, None, False)

    def set_state(self, new_state: Tensor) -> "Generator":
        """Continue the stream from a state that `get_state` returned."""
        if not isinstance(new_state, Tensor) or new_state.dtype != D.uint8:
            raise TypeError("RNG state must be a torch.ByteTensor")
        raw = new_state._host().tobytes()
        if len(raw) != STATE_BYTES:
            raise RuntimeError(f"Expected a funcgrad generator state of size {STATE_BYTES} "
                               f"but found the input RNG state size to be {len(raw)}")
        self._seed, self.rng = stream_of(raw)
        return self


default_generator = Generator()


def manual_seed(seed: int) -> Generator:
    """Seed the facade's random stream (rand, randn, randint, dropout, nn.init)."""
    return default_generator.manual_seed(seed)


def seed() -> int:
    return default_generator.seed()


def get_rng_state() -> Tensor:
    """The default generator's state (`Generator.get_state`)."""
    return default_generator.get_state()


def set_rng_state(new_state: Tensor) -> None:
    default_generator.set_state(new_state)


def initial_seed() -> int:
    return default_generator.initial_seed()


VMAP_RANDOMNESS: list = []  # the randomness modes of the enclosing torch.func.vmap calls


def _rng(generator: Generator | None) -> np.random.Generator:
    if VMAP_RANDOMNESS and VMAP_RANDOMNESS != ["same"] * len(VMAP_RANDOMNESS):
        if "error" in VMAP_RANDOMNESS:
            raise RuntimeError("vmap: called random operation while in randomness error mode. "
                               "Please either use the 'same' or 'different' randomness flags "
                               "on vmap or perform the randomness operation out of vmap")
        raise RuntimeError("vmap: randomness='different' is not supported by funcgrad.torch "
                           "(its random stream draws one value per call, not one per "
                           "example): use randomness='same', or draw the batch's random "
                           "numbers outside vmap and map over them with in_dims")
    traced = _compiled_random.active()
    if traced is not None:  # a compiled trace: its draws are records on the traced state
        if generator is not None and generator is not default_generator:
            raise GraphBreak("it draws from a torch.Generator other than the default one")
        return traced
    return (generator or default_generator).rng


class _MetaDraws:
    """What random factories draw from for the meta device: zeros of the requested shape
    with no memory of their own, and no generator state used (PyTorch's meta tensors leave
    the generator alone). ``size`` is numpy's keyword or the last positional argument;
    ``permutation(n)`` draws n."""

    def __getattr__(self, method: str) -> Any:
        def draw(*args: Any, size: Any = None, **kwargs: Any) -> np.ndarray:
            if method == "permutation":
                size = args[0] if isinstance(args[0], (builtins.int, np.integer)) else len(
                    args[0])
            elif size is None:
                size = args[-1] if args else ()
            return np.broadcast_to(np.zeros(()), size)
        return draw


def random_stream(generator: Generator | None, device: Any) -> np.random.Generator:
    """The numpy stream a sampler outside this module draws ``generator``'s values from."""
    return _draws(generator, device)


def _draws(generator: Generator | None, device: Any) -> Any:
    """The stream a random factory for ``device`` (None: the default device) draws from."""
    device = D.get_default_device() if device is None else D.device(device)
    return _MetaDraws() if device.type == "meta" else _rng(generator)


def finish(raw: np.ndarray, dtype: D.dtype, device: Any, requires_grad: bool) -> Tensor:
    device = D.get_default_device() if device is None else D.device(device)
    if device.type == "meta":  # the shape and dtype alone: no values are made or kept
        data = to_meta(ShapeDtypeStruct(np.shape(raw), dtype.np))
    elif isinstance(raw, Tracer):  # a compiled program's draw (`_compiled_random`)
        data = raw.astype(dtype.np)
    else:
        bound = D.SATURATING_BOUND.get(dtype.np)
        if bound is not None:  # (PyTorch's float8 conversion saturates)
            raw = np.clip(np.asarray(raw, dtype=np.float64), -bound, bound)
        data = new_array(np.array(raw, dtype=dtype.np, order="C"))
    if device.type not in ("cpu", "meta"):
        if not funcgrad.backend.cupy_available():
            raise AssertionError("Torch not compiled with CUDA enabled")
        data = funcgrad.device_put(data, device.funcgrad)
    t = make(data)
    if requires_grad:
        t.requires_grad_(True)
    return t


def _infer_dtype(arr: np.ndarray, data: Any) -> D.dtype:
    if isinstance(data, (np.ndarray, np.generic)):
        return D.to_torch_dtype(arr.dtype)
    kind = arr.dtype.kind
    if kind == "f":
        return D.get_default_dtype()
    if kind == "c":
        return D.get_default_dtype().to_complex()
    if kind in "iu":
        return D.int64
    if kind == "b":
        return D.bool
    raise TypeError(f"Could not infer dtype of {type(data).__name__}")


def _to_values(data: Any) -> Any:
    if isinstance(data, Tensor):
        return data._host()
    if isinstance(data, (list, tuple)):
        return [_to_values(d) for d in data]
    if isinstance(data, funcgrad.Array):
        return data.to_numpy()
    return data


def tensor(data: Any, dtype: Any = None, device: Any = None, requires_grad: bool = False,
           pin_memory: bool = False) -> Tensor:
    """A new leaf tensor holding a copy of ``data`` (nested lists, numbers, arrays)."""
    if isinstance(data, Tensor):
        warnings.warn("To copy construct from a tensor, it is recommended to use "
                      "sourceTensor.detach().clone() or sourceTensor.detach().clone()."
                      "requires_grad_(True), rather than torch.tensor(sourceTensor).",
                      UserWarning, stacklevel=2)
    arr = np.array(_to_values(data))
    dt = D.to_torch_dtype(dtype) if dtype is not None else (
        data.dtype if isinstance(data, Tensor) else _infer_dtype(arr, data))
    if device is None and isinstance(data, Tensor):
        device = data.device
    return finish(arr, dt, device, requires_grad)


def as_tensor(data: Any, dtype: Any = None, device: Any = None) -> Tensor:
    """``data`` itself when it is a tensor of that dtype/device; a numpy array's memory
    when the dtype and device allow (as `from_numpy`); else a new tensor."""
    if isinstance(data, Tensor):
        out = data if dtype is None else data.to(dtype)
        return out if device is None else out.to(device)
    if isinstance(data, np.ndarray) and (dtype is None or D.to_torch_dtype(dtype).np ==
                                         data.dtype) and (
            (D.get_default_device() if device is None else D.device(device)).type == "cpu"):
        return from_numpy(data)
    return tensor(data, dtype=dtype, device=device)


_read_only_warned = []  # PyTorch warns once per program


def from_numpy(ndarray: np.ndarray) -> Tensor:
    """A tensor sharing the memory of ``ndarray``: writes through either are seen by the
    other, as in PyTorch."""
    if not isinstance(ndarray, np.ndarray):
        raise TypeError(f"expected np.ndarray (got {type(ndarray).__name__})")
    D.to_torch_dtype(ndarray.dtype)  # raises for the dtypes PyTorch has not
    if any(s < 0 for s in ndarray.strides):
        raise ValueError("At least one stride in the given numpy array is negative, and "
                         "tensors with negative strides are not currently supported. (You "
                         "can probably work around this by making a copy of your array "
                         " with array.copy().) ")
    if not ndarray.flags.writeable and not _read_only_warned:
        _read_only_warned.append(True)
        warnings.warn("The given NumPy array is not writable, and PyTorch does not support "
                      "non-writable tensors. This means writing to this tensor will result "
                      "in undefined behavior. You may want to copy the array to protect its "
                      "data or make it writable before converting it to a tensor. This type "
                      "of warning will be suppressed for the rest of this program.",
                      UserWarning, stacklevel=2)
    if ndarray.dtype.byteorder not in "=|":
        raise ValueError("given numpy array has byte order different from the native byte "
                         "order. Conversion between byte orders is currently not supported.")
    return make(new_array(ndarray))


def scalar_tensor(s: Any, dtype: Any = None, device: Any = None,
                  requires_grad: bool = False) -> Tensor:
    return full((), s, dtype=dtype or D.get_default_dtype(), device=device,
                requires_grad=requires_grad)


def _constant(shape: Any, value: Any) -> np.ndarray:
    """``value`` everywhere in ``shape``, with no memory of its own until `_finish` makes
    the tensor's (so a meta tensor of any size costs nothing)."""
    return np.broadcast_to(np.asarray(value), shape)


def _dt(dtype: Any) -> D.dtype:
    return D.get_default_dtype() if dtype is None else D.to_torch_dtype(dtype)


def zeros(*sizes: Any, size: Any = None, dtype: Any = None, device: Any = None,
          requires_grad: bool = False) -> Tensor:
    return finish(_constant(_shape_of(sizes, size), 0.0), _dt(dtype), device, requires_grad)


def ones(*sizes: Any, size: Any = None, dtype: Any = None, device: Any = None,
         requires_grad: bool = False) -> Tensor:
    return finish(_constant(_shape_of(sizes, size), 1.0), _dt(dtype), device, requires_grad)


def empty(*sizes: Any, size: Any = None, dtype: Any = None, device: Any = None,
          requires_grad: bool = False, memory_format: Any = None) -> Tensor:
    """Zeros (immutable arrays have no use for uninitialised memory)."""
    return zeros(_shape_of(sizes, size), dtype=dtype, device=device,
                 requires_grad=requires_grad)


def _shape_of(sizes: tuple, size: Any) -> tuple:
    """The shape a factory is given: positionally (``zeros(2, 3)``, ``zeros((2, 3))``) or
    as ``size=`` (``zeros(size=(2, 3))``), as PyTorch accepts both."""
    if size is None:
        return _size_args(sizes)
    if sizes:
        raise TypeError("got multiple values for argument 'size'")
    return _size_args((size,))


def _fill_dtype(value: Any) -> D.dtype:
    if isinstance(value, Tensor):
        return value.dtype
    if isinstance(value, builtins.bool):
        return D.bool
    if isinstance(value, (builtins.int, np.integer)):
        return D.int64
    if isinstance(value, complex):
        return D.get_default_dtype().to_complex()
    return D.get_default_dtype()


def full(size: Any, fill_value: Any, *, dtype: Any = None, device: Any = None,
         requires_grad: bool = False) -> Tensor:
    dt = D.to_torch_dtype(dtype) if dtype is not None else _fill_dtype(fill_value)
    value = fill_value.item() if isinstance(fill_value, Tensor) else fill_value
    return finish(_constant(_size_args((size,)), value), dt, device, requires_grad)


def _like(input: Tensor, dtype: Any, device: Any) -> tuple:
    return (tuple(input.shape), input.dtype if dtype is None else D.to_torch_dtype(dtype),
            input.device if device is None else device)


def zeros_like(input: Tensor, *, dtype: Any = None, device: Any = None,
               requires_grad: bool = False, memory_format: Any = None) -> Tensor:
    shape, dt, dev = _like(input, dtype, device)
    return finish(_constant(shape, 0.0), dt, dev, requires_grad)


def ones_like(input: Tensor, *, dtype: Any = None, device: Any = None,
              requires_grad: bool = False, memory_format: Any = None) -> Tensor:
    shape, dt, dev = _like(input, dtype, device)
    return finish(_constant(shape, 1.0), dt, dev, requires_grad)


def empty_like(input: Tensor, *, dtype: Any = None, device: Any = None,
               requires_grad: bool = False, memory_format: Any = None) -> Tensor:
    return zeros_like(input, dtype=dtype, device=device, requires_grad=requires_grad)


def full_like(input: Tensor, fill_value: Any, *, dtype: Any = None, device: Any = None,
              requires_grad: bool = False, memory_format: Any = None) -> Tensor:
    shape, dt, dev = _like(input, dtype, device)
    return finish(_constant(shape, fill_value), dt, dev, requires_grad)


def arange(start: Any, end: Any = None, step: Any = 1, *, dtype: Any = None,
           device: Any = None, requires_grad: bool = False) -> Tensor:
    if end is None:
        start, end = 0, start
    vals = [v.item() if isinstance(v, Tensor) else v for v in (start, end, step)]
    if dtype is None:
        dtype = (D.int64 if all(isinstance(v, (builtins.int, np.integer)) for v in vals)
                 else D.get_default_dtype())
    dt = D.to_torch_dtype(dtype)
    n = builtins.int(np.ceil((vals[1] - vals[0]) / vals[2]))
    raw = vals[0] + np.arange(max(n, 0), dtype=np.float64 if dt.is_floating_point else
                              np.int64) * vals[2]
    return finish(raw, dt, device, requires_grad)


def linspace(start: Any, end: Any, steps: int, *, dtype: Any = None, device: Any = None,
             requires_grad: bool = False) -> Tensor:
    dt = _dt(dtype)
    return finish(linspace_values(float(start), float(end), steps, dt.np), dt, device,
                   requires_grad)


def logspace(start: Any, end: Any, steps: int, base: float = 10.0, *, dtype: Any = None,
             device: Any = None, requires_grad: bool = False) -> Tensor:
    return finish(np.logspace(float(start), float(end), steps, base=base), _dt(dtype),
                   device, requires_grad)


def eye(n: int, m: int | None = None, *, dtype: Any = None, device: Any = None,
        requires_grad: bool = False) -> Tensor:
    return finish(np.eye(n, m), _dt(dtype), device, requires_grad)


def rand(*sizes: Any, size: Any = None, generator: Generator | None = None,
         dtype: Any = None, device: Any = None, requires_grad: bool = False) -> Tensor:
    """Uniform samples on [0, 1)."""
    dt = _dt(dtype)
    raw = _draws(generator, device).random(_shape_of(sizes, size), dtype=np.float64)
    return finish(raw, dt, device, requires_grad)


def randn(*sizes: Any, size: Any = None, generator: Generator | None = None,
          dtype: Any = None, device: Any = None, requires_grad: bool = False) -> Tensor:
    """Standard normal samples."""
    raw = _draws(generator, device).standard_normal(_shape_of(sizes, size))
    return finish(raw, _dt(dtype), device, requires_grad)


def randint(low: int = 0, high: int | None = None, size: Sequence[int] = (), *,
            generator: Generator | None = None, dtype: Any = None, device: Any = None,
            requires_grad: bool = False) -> Tensor:
    """Integers uniform on [low, high): ``randint(high, size)`` or
    ``randint(low, high, size)``."""
    if high is None or not isinstance(high, (builtins.int, np.integer)):
        if high is not None:
            size = high
        low, high = 0, low
    raw = _draws(generator, device).integers(low, high, size=tuple(size))
    return finish(raw, D.int64 if dtype is None else D.to_torch_dtype(dtype), device,
                   requires_grad)


def rand_like(input: Tensor, *, dtype: Any = None, device: Any = None,
              requires_grad: bool = False) -> Tensor:
    shape, dt, dev = _like(input, dtype, device)
    return rand(*shape, dtype=dt, device=dev, requires_grad=requires_grad)


def randn_like(input: Tensor, *, dtype: Any = None, device: Any = None,
               requires_grad: bool = False) -> Tensor:
    shape, dt, dev = _like(input, dtype, device)
    return randn(*shape, dtype=dt, device=dev, requires_grad=requires_grad)


def randint_like(input: Tensor, low: int = 0, high: int | None = None, *,
                 dtype: Any = None, device: Any = None) -> Tensor:
    shape, dt, dev = _like(input, dtype, device)
    return randint(low, high, shape, dtype=dt, device=dev)


def randperm(n: int, *, generator: Generator | None = None, dtype: Any = None,
             device: Any = None, requires_grad: bool = False) -> Tensor:
    raw = _draws(generator, device).permutation(n)
    return finish(raw, D.int64 if dtype is None else D.to_torch_dtype(dtype), device,
                   requires_grad)


def normal(mean: Any = 0.0, std: Any = 1.0, size: Sequence[int] | None = None, *,
           generator: Generator | None = None, dtype: Any = None, device: Any = None,
           requires_grad: bool = False) -> Tensor:
    """Normal samples; ``mean``/``std`` may be tensors (then shaped like them)."""
    shape = tuple(size) if size is not None else np.broadcast_shapes(
        *[tuple(t.shape) if isinstance(t, Tensor) else np.shape(t) for t in (mean, std)])
    dt = (mean.dtype if isinstance(mean, Tensor) else std.dtype if isinstance(std, Tensor)
          else _dt(dtype))
    tensors = [t for t in (mean, std) if isinstance(t, Tensor)]
    if not tensors:
        return finish(_draws(generator, device).normal(mean, std, size=shape), dt, device,
                       requires_grad)
    # mean + std * eps: differentiable in the tensor arguments (PyTorch's NormalBackward1/2/3
    # for a tensor mean, std, or both)
    eps = const_like(_rng(generator).standard_normal(shape).astype(dt.np), tensors[0])
    node = "NormalBackward" + str(isinstance(mean, Tensor) + 2 * isinstance(std, Tensor))

    def f(*ts: Any) -> Any:
        it = iter(ts)
        mu = next(it) if isinstance(mean, Tensor) else mean
        sigma = next(it) if isinstance(std, Tensor) else std
        return fnp.add(mu, fnp.multiply(sigma, eps))
    return apply(node, f, tensors)


def bernoulli(input: Tensor, p: float | None = None, *,
              generator: Generator | None = None) -> Tensor:
    """1 with probability ``input`` (or ``p``), elementwise; same dtype as input."""
    if input.is_meta:  # no probabilities to draw with: the shape and dtype are the result
        return zeros_like(input)
    probs = (np.full(tuple(input.shape), p) if p is not None else input._a
             if isinstance(input._a, Tracer) else input._host())  # (traced: compiled)
    raw = _rng(generator).random(tuple(input.shape)) < probs
    if p is not None or not input.requires_grad:
        return finish(raw, input.dtype, input.device, False)
    # a draw has the gradient 0 (PyTorch records BernoulliBackward0 all the same)
    draw = const_like(raw.astype(input.dtype.np), input)
    return apply("BernoulliBackward0", lambda q: fnp.where(True, draw, q), [input])


def multinomial(input: Tensor, num_samples: int, replacement: bool = False, *,
                generator: Generator | None = None) -> Tensor:
    """Indices drawn from the categories of each row of ``input`` (weights, not
    necessarily normalised). Without replacement the draws are sequential (a drawn
    category leaves the pool), done at once by the exponential race: the ``num_samples``
    smallest ``Exp(1) / weight``. Categories of weight 0 come last, in index order."""
    if not input.dtype.is_floating_point:
        raise RuntimeError("multinomial only supports floating-point dtypes for input, got: "
                           + input.type().rsplit(".", 1)[-1][:-len("Tensor")])
    if input.ndim not in (1, 2):
        raise RuntimeError("prob_dist must be 1 or 2 dim")
    if num_samples <= 0:
        raise RuntimeError("cannot sample n_sample <= 0 samples")
    if not replacement and num_samples > input.shape[-1]:
        raise RuntimeError("cannot sample n_sample > prob_dist.size(-1) samples without "
                           "replacement")
    if input.is_meta:  # no weights to check or draw with
        return empty(*input.shape[:-1], num_samples, dtype=D.int64, device="meta")
    weights = np.asarray(input._host(), dtype=np.float64).reshape(-1, input.shape[-1])
    if not np.all(np.isfinite(weights)) or np.any(weights < 0):
        raise RuntimeError("probability tensor contains either `inf`, `nan` or element < 0")
    totals = weights.sum(axis=1)
    if np.any(totals <= 0):
        raise RuntimeError("invalid multinomial distribution (sum of probabilities <= 0)")
    rng = _rng(generator)
    if replacement:
        cdf = np.cumsum(weights, axis=1)
        u = rng.random((len(weights), num_samples)) * totals[:, None]
        last = weights.shape[1] - 1 - np.argmax(weights[:, ::-1] > 0, axis=1)
        raw = np.stack([np.minimum(np.searchsorted(c, r, side="right"), k)
                        for c, r, k in zip(cdf, u, last)])
    else:
        with np.errstate(divide="ignore"):
            keys = rng.exponential(size=weights.shape) / weights
        raw = np.argsort(keys, axis=1, kind="stable")[:, :num_samples]
    raw = raw.reshape(tuple(input.shape[:-1]) + (num_samples,))
    return finish(raw, D.int64, input.device, False)


def legacy_init(self: Tensor, *args: Any) -> None:
    """The legacy constructor ``Tensor(2, 3)`` (zeros of that size) or ``Tensor(data)``
    (default dtype), attached to `Tensor` as its ``__init__``."""
    if len(args) == 1 and not isinstance(args[0], (int, np.integer)):
        src = tensor(args[0], dtype=D.get_default_dtype())
    else:
        src = zeros(*args)
    initialised = make(src._data)
    for name in Tensor.__slots__[:-2]:
        setattr(self, name, getattr(initialised, name))
