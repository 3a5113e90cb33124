"""funcgrad.torch: a PyTorch-style facade on funcgrad's functional core.

``import funcgrad.torch as torch`` and PyTorch code runs: tensors with ``requires_grad``,
``grad_fn`` nodes named as PyTorch names them, ``backward()`` with PyTorch's engine order
and errors, custom ``autograd.Function``, ``nn``, ``optim`` (with ``lr_scheduler``),
``utils.data``, ``autograd.functional`` and ``torch.func``.

The facade is thin: every derivative comes from funcgrad's primitive registry (each op is a
funcgrad function run under `funcgrad.vjp`); the facade adds state (tensors that change,
graphs, version counters, hooks, memory shared by views and numpy arrays, in-place writes)
on top: see `funcgrad.torch._tensor` and `funcgrad.torch._runtime.storage`.
"""
import builtins as _builtins
import math as _math
from typing import Any as _Any

import numpy as np

from funcgrad.torch import _missing
from funcgrad.torch._runtime import dtypes as _dtypes
from funcgrad.torch._runtime.dtypes import (dtype, Size, device, get_default_dtype,
                                            set_default_dtype, get_default_device,
                                            set_default_device, promote_types, float32, float,
                                            float64, double, float16, half, bfloat16,
                                            complex64, cfloat, complex128, cdouble, int8,
                                            int16, short, int32, int, int64, long, uint8, bool,
                                            uint16, uint32, uint64, float8_e4m3fn, float8_e5m2,
                                            float8_e4m3fnuz, float8_e5m2fnuz)
from funcgrad.torch._tensor import Tensor, is_tensor
from funcgrad.torch._runtime.layouts import (layout, strided, sparse_coo, sparse_csr,
                                             sparse_csc, sparse_bsr, sparse_bsc, jagged,
                                             memory_format, contiguous_format, channels_last,
                                             channels_last_3d, preserve_format,
                                             legacy_contiguous_format)
from funcgrad.torch._tensor_str import set_printoptions
from funcgrad.torch._runtime.grad_mode import (no_grad, enable_grad, set_grad_enabled,
                                               inference_mode, is_grad_enabled,
                                               is_inference_mode_enabled)
from funcgrad.torch._factories import (tensor, as_tensor, from_numpy, zeros, ones, empty,
                                       full, zeros_like, ones_like, empty_like, full_like,
                                       arange, linspace, logspace, eye, rand, randn, randint,
                                       rand_like, randn_like, randint_like, randperm, normal,
                                       bernoulli, manual_seed, seed, initial_seed, Generator,
                                       default_generator, scalar_tensor, get_rng_state,
                                       set_rng_state, multinomial)
from funcgrad.torch import (_ops_basic, _ops_elementwise, _ops_reduce, _ops_shape,
                            _ops_indexing, _ops_matmul, _methods, _out)
from funcgrad.torch import (_ops_order_stats, _ops_arrange,  # noqa: F401  (register ops)
                            _ops_index_update, _ops_math_more, _ops_linalg_legacy,
                            _ops_inplace_views)
from funcgrad.torch._numeric_info import *  # noqa: F401,F403  (finfo, iinfo, range, ...)
from funcgrad.torch._flags import *  # noqa: F401,F403  (use_deterministic_algorithms, ...)
from funcgrad.torch._ops_reduce import return_types
from funcgrad.torch import autograd, nn, optim, func, cuda, linalg, utils
from funcgrad.torch import accelerator, backends, profiler
from funcgrad.torch import amp, cpu
from funcgrad.torch.amp import autocast
from funcgrad.torch._autocast_api import *  # noqa: F401,F403  (is_autocast_enabled...)
from funcgrad.torch.func import vmap
from funcgrad.torch import distributed, futures
from funcgrad.torch.serialization import save, load
from funcgrad.torch import library
from funcgrad.torch.library import ops
from funcgrad.torch.utils.dlpack import from_dlpack
from funcgrad.torch import jit  # torch.jit.trace; torch.compile below
from funcgrad.torch.jit import compile  # noqa: A004 (torch.compile shadows the builtin)
from funcgrad.torch import _dynamo, compiler  # noqa: E402

_methods.install()
globals().update(_ops_basic.FUNCTIONS)
_out.install(globals())
from funcgrad.torch import sparse  # noqa: E402  (its ops are made of the functions above)
sparse.install(globals())
from funcgrad.torch import _aten_aliases  # noqa: E402  (so are these names)
_aten_aliases.install(globals())
from funcgrad.torch import fft, testing, distributions, random, version  # noqa: E402
from funcgrad.torch import multiprocessing, signal  # noqa: E402
from funcgrad.torch.fft import stft, istft  # noqa: E402
Tensor.stft, Tensor.istft = stft, istft
from funcgrad.torch._more_functions import *  # noqa: E402,F401,F403  (asarray, gradient...)
from funcgrad.torch.version import __version__  # noqa: E402
from funcgrad.torch.amp import GradScaler  # noqa: E402
from funcgrad.torch import _ops_extras  # noqa: E402
_ops_extras.install(globals())
from funcgrad.torch import _legacy_api  # noqa: E402  (torch.lu, geqrf, cauchy_, ...)
_legacy_api.install(globals())
from funcgrad.torch import _aten_native  # noqa: E402  (native_layer_norm, cond, ...)
_aten_native.install(globals())
from funcgrad.torch._lowrank import svd_lowrank, pca_lowrank  # noqa: E402
from funcgrad.torch._aten_native import AcceleratorError, OutOfMemoryError  # noqa: E402
from funcgrad.torch._windows import (hann_window, hamming_window,  # noqa: E402
                                     blackman_window, bartlett_window, kaiser_window)
from funcgrad.torch import functional  # noqa: E402  (names the functions just made)
from funcgrad.torch import __future__  # noqa: E402,F401  (torch.__future__'s switches)

def __getattr__(name: str) -> _Any:
    """A name PyTorch has and the facade lacks: an AttributeError naming the feature."""
    raise _missing.missing_error("torch", name)


inf = _math.inf
nan = _math.nan
newaxis = None
pi = _math.pi
e = _math.e


def numel(input: Tensor) -> "int":
    return input.numel()


def is_floating_point(input: Tensor) -> "bool":
    return input.is_floating_point()


def is_complex(input: Tensor) -> "bool":
    return input.is_complex()


def typename(obj: object) -> str:
    return obj.type() if isinstance(obj, Tensor) else type(obj).__qualname__


def result_type(tensor1: object, tensor2: object) -> dtype:
    return _ops_basic.result_type(_ops_basic.operand(tensor1), _ops_basic.operand(tensor2))


def can_cast(from_: dtype, to: dtype) -> "bool":
    return _dtypes.can_cast(from_, to)


def isclose(input: Tensor, other: Tensor, rtol: "float" = 1e-05, atol: "float" = 1e-08,
            equal_nan: "bool" = False) -> Tensor:
    return tensor(np.isclose(input._host(), other._host(), rtol, atol, equal_nan))


def allclose(input: Tensor, other: Tensor, rtol: "float" = 1e-05, atol: "float" = 1e-08,
             equal_nan: "bool" = False) -> "bool":
    return _builtins.bool(isclose(input, other, rtol, atol, equal_nan).all())


Tensor.isclose = isclose
Tensor.allclose = allclose
Tensor.is_cpu = property(lambda self: self.device.type == "cpu")
Tensor.itemsize = property(lambda self: self.element_size())
Tensor.nbytes = property(lambda self: self.element_size() * self.numel())
Tensor.get_device = lambda self: -1 if self.device.type == "cpu" else self.device.index or 0


def _typed(dt: dtype) -> object:
    def make_typed(*args: object) -> Tensor:
        if len(args) == 1 and not isinstance(args[0], _builtins.int):
            return tensor(args[0], dtype=dt)
        return zeros(*args, dtype=dt)
    return make_typed


FloatTensor = _typed(float32)
DoubleTensor = _typed(float64)
LongTensor = _typed(int64)
IntTensor = _typed(int32)
BoolTensor = _typed(bool)
ByteTensor = _typed(uint8)


from funcgrad.torch import special  # noqa: E402  (torch.special, over the functions above)
igamma = special.gammainc
igammac = special.gammaincc
Tensor.igamma = special.gammainc
Tensor.igammac = special.gammaincc
