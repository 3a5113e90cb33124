"""ATen's lower-level ``torch.*`` names that real programs and exported graphs call: the
``native_*`` ops with their extra outputs (``native_layer_norm``'s mean and rstd,
``native_batch_norm``'s saved statistics, ``native_dropout``'s mask), ``convolution``,
``constant_pad_nd``, ``grid_sampler`` with its integer modes, the RNN cells, the
synchronised batch norm's statistics (``batch_norm_stats``, ``batch_norm_gather_stats``...),
``frobenius_norm``/``nuclear_norm``/``norm_except_dim``, the in-place and feature dropouts,
``empty_permuted``, ``histogramdd``; eager ``torch.cond`` and ``torch.while_loop``; and the
build flags and aliases of the namespace.

Each is a composition of the facade's functions: they record what those record.
"""
from __future__ import annotations

from typing import Any, Callable, Sequence

import numpy as np

from funcgrad.torch import cpu, cuda, futures
from funcgrad.torch._autocast import autocast_op
from funcgrad.torch._factories import (empty, from_numpy, full, full_like, ones, rand_like,
                                       tensor)
from funcgrad.torch._ops_basic import FUNCTIONS
from funcgrad.torch._runtime import dtypes as D, grad_mode
from funcgrad.torch._tensor import Tensor
from funcgrad.torch.nn import functional as F
from funcgrad.torch.nn import _rnn_functional as rnn
from funcgrad.torch.nn._dropout import _dropout
from funcgrad.torch.utils.dlpack import to_dlpack

__all__ = ["install", "OutOfMemoryError", "AcceleratorError"]


class AcceleratorError(RuntimeError):
    """An accelerator's runtime error (PyTorch's ``torch.AcceleratorError``)."""


class OutOfMemoryError(RuntimeError):
    """Device memory ran out (``torch.OutOfMemoryError``, ``torch.cuda.OutOfMemoryError``)."""


# -- native ops with their extra outputs ---------------------------------------------------

@autocast_op("native_layer_norm")
def native_layer_norm(input: Tensor, normalized_shape: Sequence[int], weight: Any,
                      bias: Any, eps: float) -> tuple:
    """(output, mean, rstd): the statistics over the normalised trailing dims, kept as
    size-1 dims."""
    dims = tuple(range(input.ndim - len(normalized_shape), input.ndim))
    mean = input.mean(dims, keepdim=True)
    rstd = (input.var(dims, unbiased=False, keepdim=True) + eps).rsqrt()
    return F.layer_norm(input, tuple(normalized_shape), weight, bias, eps), mean, rstd


def native_group_norm(input: Tensor, weight: Any, bias: Any, N: int, C: int, HxW: int,
                      group: int, eps: float) -> tuple:
    """(output, mean, rstd), the statistics of each (sample, group): (N, group)."""
    grouped = input.reshape(N, group, -1)
    mean = grouped.mean(-1)
    rstd = (grouped.var(-1, unbiased=False) + eps).rsqrt()
    return F.group_norm(input, group, weight, bias, eps), mean, rstd


def _channel_axes(input: Tensor) -> tuple:
    return (0,) + tuple(range(2, input.ndim))


def native_batch_norm(input: Tensor, weight: Any, bias: Any, running_mean: Any,
                      running_var: Any, training: bool, momentum: float, eps: float) -> tuple:
    """(output, save_mean, save_invstd): the batch's statistics in training (the running
    ones updated), empty tensors in evaluation."""
    out = F.batch_norm(input, running_mean, running_var, weight, bias, training, momentum,
                       eps)
    if not training:
        return out, empty(0, dtype=input.dtype), empty(0, dtype=input.dtype)
    axes = _channel_axes(input)
    mean = input.mean(axes)
    invstd = (input.var(axes, unbiased=False) + eps).rsqrt()
    return out, mean, invstd


def native_dropout(input: Tensor, p: float, train: bool | None) -> tuple:
    """(output, mask): the kept elements scaled by 1 / (1 - p) in training."""
    if not train or p == 0:
        return input.clone(), ones(tuple(input.shape), dtype=D.bool)
    mask = rand_like(input) >= p
    return input * mask / (1 - p), mask


def native_channel_shuffle(input: Tensor, groups: int) -> Tensor:
    return F.channel_shuffle(input, groups)


# -- convolution, padding, sampling --------------------------------------------------------

@autocast_op("convolution")
def convolution(input: Tensor, weight: Tensor, bias: Any, stride: Sequence[int],
                padding: Sequence[int], dilation: Sequence[int], transposed: bool,
                output_padding: Sequence[int], groups: int) -> Tensor:
    """ATen's one convolution: ``conv{n}d`` or ``conv_transpose{n}d`` by the weight's rank."""
    n = weight.ndim - 2
    if transposed:
        fn = getattr(F, f"conv_transpose{n}d")
        return fn(input, weight, bias, stride, padding, output_padding, groups, dilation)
    return getattr(F, f"conv{n}d")(input, weight, bias, stride, padding, dilation, groups)


def constant_pad_nd(input: Tensor, pad: Sequence[int], value: float = 0) -> Tensor:
    return F.pad(input, list(pad), "constant", value)


_INTERPOLATION = ("bilinear", "nearest", "bicubic")
_PADDING = ("zeros", "border", "reflection")


@autocast_op("grid_sampler")
def grid_sampler(input: Tensor, grid: Tensor, interpolation_mode: int, padding_mode: int,
                 align_corners: bool) -> Tensor:
    """``grid_sample`` with ATen's integer modes."""
    return F.grid_sample(input, grid, _INTERPOLATION[interpolation_mode],
                         _PADDING[padding_mode], align_corners)


def affine_grid_generator(theta: Tensor, size: Sequence[int], align_corners: bool) -> Tensor:
    return F.affine_grid(theta, list(size), align_corners)


# -- synchronised batch norm's statistics ---------------------------------------------------

def batch_norm_stats(input: Tensor, eps: float) -> tuple:
    """(mean, invstd) of each channel over this process's batch."""
    axes = _channel_axes(input)
    return input.mean(axes), (input.var(axes, unbiased=False) + eps).rsqrt()


def batch_norm_elemt(input: Tensor, weight: Any, bias: Any, mean: Tensor, invstd: Tensor,
                     eps: float) -> Tensor:
    """Normalise with given statistics (the eps is already in ``invstd``)."""
    shape = (1, -1) + (1,) * (input.ndim - 2)
    out = (input - mean.reshape(shape)) * invstd.reshape(shape)
    if weight is not None:
        out = out * weight.reshape(shape)
    return out + bias.reshape(shape) if bias is not None else out


def _update_running(running_mean: Any, running_var: Any, mean: Tensor, var: Tensor,
                    momentum: float, count: Any) -> None:
    with grad_mode.no_grad():
        if running_mean is not None:
            running_mean.mul_(1 - momentum).add_(mean.detach() * momentum)
        if running_var is not None:
            unbiased = var.detach() * (count / (count - 1))
            running_var.mul_(1 - momentum).add_(unbiased * momentum)


def batch_norm_gather_stats_with_counts(input: Tensor, mean: Tensor, invstd: Tensor,
                                        running_mean: Any, running_var: Any, momentum: float,
                                        eps: float, counts: Tensor) -> tuple:
    """(mean, invstd) of all processes' batches from each one's (mean, invstd, count),
    the running statistics updated (their variance unbiased over the total count)."""
    weights = counts.to(mean.dtype).reshape(-1, 1)
    total = weights.sum()
    global_mean = (mean * weights).sum(0) / total
    var_each = (invstd ** -2 - eps) + (mean - global_mean) ** 2
    global_var = (var_each * weights).sum(0) / total
    _update_running(running_mean, running_var, global_mean, global_var, momentum,
                    float(total))
    return global_mean, (global_var + eps).rsqrt()


def batch_norm_gather_stats(input: Tensor, mean: Tensor, invstd: Tensor, running_mean: Any,
                            running_var: Any, momentum: float, eps: float,
                            count: int) -> tuple:
    counts = tensor([count] * mean.shape[0], dtype=mean.dtype)
    return batch_norm_gather_stats_with_counts(input, mean, invstd, running_mean,
                                               running_var, momentum, eps, counts)


def batch_norm_update_stats(input: Tensor, running_mean: Any, running_var: Any,
                            momentum: float) -> tuple:
    """(mean, biased variance) of the batch, the running statistics updated."""
    axes = _channel_axes(input)
    mean, var = input.mean(axes), input.var(axes, unbiased=False)
    count = input.numel() // input.shape[1]
    _update_running(running_mean, running_var, mean, var, momentum, count)
    return mean, var


# -- norms and dropouts ---------------------------------------------------------------------

@autocast_op("frobenius_norm")
def frobenius_norm(input: Tensor, dim: Sequence[int] = (), keepdim: bool = False) -> Tensor:
    return FUNCTIONS["norm"](input, "fro", tuple(dim) or None, keepdim)


@autocast_op("nuclear_norm")
def nuclear_norm(input: Tensor, dim: Any = None, keepdim: bool = False) -> Tensor:
    if isinstance(dim, bool):  # nuclear_norm(input, keepdim)
        dim, keepdim = None, dim
    return FUNCTIONS["norm"](input, "nuc", (-2, -1) if dim is None else tuple(dim), keepdim)


def norm_except_dim(v: Tensor, pow: float = 2, dim: int = 0) -> Tensor:
    """The norm of each slice along ``dim`` (all of ``v`` for dim -1), shaped to broadcast
    against ``v`` (weight normalisation's)."""
    if dim == -1:
        return FUNCTIONS["norm"](v, pow)
    axes = tuple(d for d in range(v.ndim) if d != dim % v.ndim)
    return FUNCTIONS["norm"](v, pow, axes, True)


def dropout_(input: Tensor, p: float, train: bool) -> Tensor:
    return F.dropout(input, p, train, inplace=True)


def alpha_dropout_(input: Tensor, p: float, train: bool) -> Tensor:
    return F.alpha_dropout(input, p, train, inplace=True)


def feature_dropout(input: Tensor, p: float, train: bool) -> Tensor:
    return _dropout(input, p, train, False, True, False)


def feature_dropout_(input: Tensor, p: float, train: bool) -> Tensor:
    return _dropout(input, p, train, True, True, False)


def feature_alpha_dropout_(input: Tensor, p: float, train: bool) -> Tensor:
    return _dropout(input, p, train, True, True, True)


# -- creation, histograms, control flow -----------------------------------------------------

def empty_permuted(size: Sequence[int], physical_layout: Sequence[int], *, dtype: Any = None,
                   device: Any = None, requires_grad: bool = False, **unused: Any) -> Tensor:
    """An uninitialised tensor of ``size`` whose memory holds its dims in the order
    ``physical_layout`` (outermost first)."""
    physical = empty(*[size[d] for d in physical_layout], dtype=dtype, device=device)
    inverse = sorted(range(len(physical_layout)), key=lambda k: physical_layout[k])
    return physical.permute(*inverse).requires_grad_(requires_grad)


def histogramdd(input: Tensor, bins: Any = 10, range: Any = None, weight: Any = None,
                density: bool = False) -> tuple:
    """(hist, bin_edges) of the rows of ``input`` (N, D), as numpy's; not differentiable,
    as PyTorch's."""
    values = input.numpy(force=True)
    ranges = None if range is None else list(zip(range[0::2], range[1::2]))
    w = None if weight is None else weight.numpy(force=True)
    edges_in = [b.numpy(force=True) for b in bins] if isinstance(bins, (list, tuple)) and \
        bins and isinstance(bins[0], Tensor) else bins
    hist, edges = np.histogramdd(values, edges_in, ranges, density=density, weights=w)
    dtype = input.dtype
    return (tensor(hist, dtype=dtype), [tensor(e, dtype=dtype) for e in edges])


def _is_true(pred: Any) -> bool:
    if isinstance(pred, Tensor):
        if pred.numel() != 1:
            raise RuntimeError(f"Expected pred to be bool or single-element tensor, but got "
                               f"Tensor of shape {list(pred.shape)}.")
        return bool(pred)  # (traced: the compiled program breaks its graph here)
    if not isinstance(pred, (bool, int)):
        raise RuntimeError(f"Expected pred to be bool or tensor, but got {pred}.")
    return bool(pred)


def cond(pred: Any, true_fn: Callable, false_fn: Callable, operands: Any = ()) -> Any:
    """``torch.cond``: ``true_fn(*operands)`` if ``pred`` else ``false_fn(*operands)``,
    eagerly (only the taken branch runs; under ``torch.compile`` a traced ``pred`` ends the
    graph there and the branch runs eagerly)."""
    if not isinstance(operands, (tuple, list)):
        raise RuntimeError(f"Expect operands to be a tuple of possibly nested dict/list/tuple "
                           f"that only consists of tensor leaves, but got {operands}.")
    return (true_fn if _is_true(pred) else false_fn)(*operands)


def while_loop(cond_fn: Callable, body_fn: Callable, carried_inputs: Any) -> Any:
    """``torch.while_loop``: apply ``body_fn`` to the carried values while ``cond_fn``
    holds, eagerly; the body must return as many values as it takes."""
    if not isinstance(carried_inputs, (tuple, list)):
        raise RuntimeError(f"carried_inputs must be a tuple or list but got "
                           f"{type(carried_inputs)}")
    carried = tuple(carried_inputs)
    while _is_true(cond_fn(*carried)):
        out = body_fn(*carried)
        out = tuple(out) if isinstance(out, (tuple, list)) else (out,)
        if len(out) != len(carried):
            raise RuntimeError(f"body_fn should return the same number of elements as "
                               f"carried_inputs: got {len(out)}, expected {len(carried)}")
        carried = out
    return carried


def _recurrence(mode: str, input: Tensor, state: Any, params: Sequence[Tensor],
                has_biases: bool, num_layers: int, dropout: float, train: bool,
                bidirectional: bool, batch_first: bool) -> tuple:
    """ATen's whole-sequence RNN call: (output, final state) over a padded (T, B, F)
    input (B, T, F with ``batch_first``), ``params`` flat per (layer, direction)."""
    directions = 2 if bidirectional else 1
    groups = num_layers * directions
    stride = len(params) // groups
    weights = [list(params[k * stride:(k + 1) * stride]) for k in range(groups)]
    seq = input.transpose(0, 1) if batch_first else input
    steps, batch = seq.shape[0], seq.shape[1]
    data, final = rnn.run_layers(mode, seq.reshape(steps * batch, -1), [batch] * steps,
                                 state, weights, num_layers, directions, has_biases, dropout,
                                 train)
    out = data.reshape(steps, batch, -1)
    return (out.transpose(0, 1) if batch_first else out), final


def lstm(input: Tensor, hx: Sequence[Tensor], params: Sequence[Tensor], has_biases: bool,
         num_layers: int, dropout: float, train: bool, bidirectional: bool,
         batch_first: bool) -> tuple:
    """(output, h_n, c_n)."""
    out, (h, c) = _recurrence("LSTM", input, tuple(hx), params, has_biases, num_layers,
                              dropout, train, bidirectional, batch_first)
    return out, h, c


def _single_state(mode: str) -> Callable:
    def run(input: Tensor, hx: Tensor, params: Sequence[Tensor], has_biases: bool,
            num_layers: int, dropout: float, train: bool, bidirectional: bool,
            batch_first: bool) -> tuple:
        """(output, h_n)."""
        return _recurrence(mode, input, hx, params, has_biases, num_layers, dropout, train,
                           bidirectional, batch_first)
    run.__name__ = run.__qualname__ = mode.lower()
    return run


gru = _single_state("GRU")
rnn_tanh = _single_state("RNN_TANH")
rnn_relu = _single_state("RNN_RELU")


@autocast_op("conv_tbc")
def conv_tbc(input: Tensor, weight: Tensor, bias: Tensor, pad: int = 0) -> Tensor:
    """A 1-D convolution of (time, batch, channels) input with a (width, in, out) weight."""
    out = F.conv1d(input.permute(1, 2, 0), weight.permute(2, 1, 0), bias, padding=pad)
    return out.permute(2, 0, 1)


# an empty segment's value without ``initial``
_EMPTY_SEGMENT = {"sum": 0.0, "mean": float("nan"), "max": float("-inf"),
                  "min": float("inf"), "prod": 1.0}


def _segment(part: Tensor, reduce: str, initial: Any) -> Tensor:
    """One segment (its elements along dim 0) reduced, ``initial`` taking part."""
    if part.shape[0] == 0:
        fill = _EMPTY_SEGMENT[reduce] if initial is None else initial
        return full(tuple(part.shape[1:]), fill, dtype=part.dtype)
    if reduce in ("max", "min"):
        value = getattr(part, f"a{reduce}")(0)
        if initial is not None:
            value = (FUNCTIONS["maximum"] if reduce == "max" else FUNCTIONS["minimum"])(
                value, full_like(value, initial))
        return value
    total = part.prod(0) if reduce == "prod" else part.sum(0)
    if initial is not None:
        total = total * initial if reduce == "prod" else total + initial
    return total / part.shape[0] if reduce == "mean" else total


def segment_reduce(data: Tensor, reduce: str, *, lengths: Any = None, indices: Any = None,
                   offsets: Any = None, axis: int = 0, unsafe: bool = False,
                   initial: Any = None) -> Tensor:
    """Reduce consecutive segments of ``data`` along ``axis`` (of the given ``lengths``, or
    between ``offsets``) by sum, mean, max, min or prod."""
    if reduce not in _EMPTY_SEGMENT:
        raise RuntimeError(f"segment_reduce(): unsupported reduction {reduce}")
    if lengths is None and offsets is None:
        raise RuntimeError("segment_reduce(): Either lengths or offsets must be defined")
    sizes = (lengths.tolist() if lengths is not None else
             np.diff(offsets.numpy(force=True)).tolist())
    moved = data.movedim(axis, 0)
    if not unsafe and sum(sizes) != moved.shape[0]:
        raise RuntimeError("segment_reduce(): Expected all rows of lengths along axis to sum "
                           "to data.size(lengths.dim()-1) when !unsafe.")
    starts = np.concatenate([[0], np.cumsum(sizes)[:-1]]).astype(int)
    parts = [_segment(moved[s:s + n], reduce, initial) for s, n in zip(starts, sizes)]
    return FUNCTIONS["stack"](parts).movedim(0, axis)


def from_file(filename: str, shared: bool | None = None, size: int = 0, *, dtype: Any = None,
              **unused: Any) -> Tensor:
    """``size`` elements of ``dtype`` read from the raw bytes of ``filename`` (with
    ``shared``, the tensor's memory is the file, mapped: writes reach it)."""
    np_dtype = (D.get_default_dtype() if dtype is None else D.to_torch_dtype(dtype)).np
    if shared:
        return from_numpy(np.memmap(filename, np_dtype, "r+", shape=(size,)))
    return tensor(np.fromfile(filename, np_dtype, count=size))


def get_device_module(device: Any = None) -> Any:
    """The module of a device type: ``torch.cuda``, ``torch.cpu``."""
    kind = "cpu" if device is None else str(getattr(device, "type", device)).split(":")[0]
    modules = {"cpu": cpu, "cuda": cuda}
    if kind not in modules:
        raise RuntimeError(f"Device '{kind}' does not have a corresponding module registered "
                           "as 'torch.{kind}'.")
    return modules[kind]


def compiled_with_cxx11_abi() -> bool:
    return True


def install(namespace: dict) -> None:
    """Add the names to the torch namespace."""
    own = {name: fn for name, fn in globals().items()
           if callable(fn) and not name.startswith("_") and getattr(fn, "__module__", None)
           == __name__ and name != "install" and not isinstance(fn, type)}
    namespace.update(own)
    namespace.update(
        rnn_tanh_cell=autocast_op("rnn_tanh_cell")(rnn.rnn_tanh_cell),
        rnn_relu_cell=autocast_op("rnn_relu_cell")(rnn.rnn_relu_cell),
        lstm_cell=autocast_op("lstm_cell")(rnn.lstm_cell),
        gru_cell=autocast_op("gru_cell")(rnn.gru_cell), grid_sampler_2d=grid_sampler,
        grid_sampler_3d=grid_sampler, fill_=FUNCTIONS.get("fill_") or Tensor.fill_,
        Future=futures.Future, to_dlpack=to_dlpack, has_lapack=True, has_mkl=False,
        has_openmp=False, has_spectral=True)
    cuda.OutOfMemoryError = OutOfMemoryError
