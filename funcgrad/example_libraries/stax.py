"""JAX's ``example_libraries.stax`` on funcgrad: neural networks as (init_fun, apply_fun)
pairs.

    init_random_params, predict = stax.serial(stax.Dense(512), stax.Relu, stax.Dense(10),
                                              stax.LogSoftmax)
    out_shape, params = init_random_params(funcgrad.random.PRNGKey(0), (-1, 784))
    logits = predict(params, inputs)

``init_fun(rng, input_shape) -> (output_shape, params)`` and
``apply_fun(params, inputs, **kwargs) -> outputs``; keys come from funcgrad.random (JAX's
API), the default initializers from funcgrad.nn.initializers. The convolution and pooling
layers (GeneralConv, Conv, GeneralConvTranspose, ConvTranspose, Conv1DTranspose,
MaxPool, SumPool, AvgPool) compute with funcgrad.lax (conv_general_dilated,
conv_transpose, reduce_window), as JAX's use jax.lax.
"""
from __future__ import annotations

import functools
import operator
from typing import Any, Callable

import numpy as np

import funcgrad.numpy as fnp
from funcgrad import lax, nn
from funcgrad.nn.initializers import glorot_normal, normal, ones, zeros

__all__ = ["Dense", "GeneralConv", "Conv", "GeneralConvTranspose", "ConvTranspose",
           "Conv1DTranspose", "MaxPool", "SumPool", "AvgPool", "elementwise", "Tanh",
           "Relu", "Exp", "LogSoftmax", "Softmax", "Softplus", "Sigmoid", "Elu",
           "LeakyRelu", "Selu", "Gelu", "Flatten", "Identity", "FanOut", "FanInSum",
           "FanInConcat", "Dropout", "BatchNorm", "serial", "parallel", "shape_dependent",
           "logsoftmax"]

Layer = tuple  # (init_fun, apply_fun)


def _random() -> Any:
    # funcgrad.random is a sibling package built on its own branch (h/random): imported
    # when a layer needs keys, so that this module imports without it
    from funcgrad import random
    return random


def Dense(out_dim: int, W_init: Callable = glorot_normal(),
          b_init: Callable = normal()) -> Layer:
    """A fully connected layer: inputs @ W + b."""
    def init_fun(rng: Any, input_shape: tuple) -> tuple:
        output_shape = tuple(input_shape[:-1]) + (out_dim,)
        k1, k2 = _random().split(rng)
        return output_shape, (W_init(k1, (input_shape[-1], out_dim)), b_init(k2, (out_dim,)))

    def apply_fun(params: tuple, inputs: Any, **kwargs: Any) -> Any:
        w, b = params
        return fnp.dot(inputs, w) + b
    return init_fun, apply_fun


def _pads(in_spatial: tuple, window: tuple, strides: tuple, padding: Any) -> list:
    if isinstance(padding, str):
        return list(lax.padtype_to_pads(in_spatial, window, strides, padding))
    return [tuple(p) for p in padding]


def _window_out(size: int, window: int, stride: int, pad: tuple) -> int:
    """Outputs of a window along one axis (-1 stays -1: a batch placeholder)."""
    if size < 0:
        return size
    return (size + pad[0] + pad[1] - window) // stride + 1


def GeneralConv(dimension_numbers: tuple, out_chan: int, filter_shape: tuple,
                strides: tuple | None = None, padding: Any = "VALID",
                W_init: Callable | None = None, b_init: Callable = normal(1e-6)) -> Layer:
    """A convolution with ``out_chan`` filters of ``filter_shape`` and a bias, the axes
    named by ``dimension_numbers`` = (input spec, kernel spec, output spec), e.g.
    ('NHWC', 'HWIO', 'NHWC')."""
    lhs_spec, rhs_spec, out_spec = dimension_numbers
    one = (1,) * len(filter_shape)
    strides = tuple(strides or one)
    W_init = W_init or glorot_normal(rhs_spec.index("I"), rhs_spec.index("O"))

    def init_fun(rng: Any, input_shape: tuple) -> tuple:
        sizes = iter(filter_shape)
        kernel_shape = [out_chan if c == "O" else input_shape[lhs_spec.index("C")]
                        if c == "I" else next(sizes) for c in rhs_spec]
        spatial = [c for c in lhs_spec if c not in "NC"]
        in_spatial = tuple(input_shape[lhs_spec.index(c)] for c in spatial)
        window = tuple(kernel_shape[rhs_spec.index(c)] for c in spatial)
        pads = _pads(in_spatial, window, strides, padding)
        out = {"N": input_shape[lhs_spec.index("N")], "C": out_chan}
        for c, n, k, st, pad in zip(spatial, in_spatial, window, strides, pads):
            out[c] = _window_out(n, k, st, pad)
        bias_shape = [out_chan if c == "C" else 1 for c in out_spec]
        k1, k2 = _random().split(rng)
        return tuple(out[c] for c in out_spec), (W_init(k1, kernel_shape),
                                                b_init(k2, bias_shape))

    def apply_fun(params: tuple, inputs: Any, **kwargs: Any) -> Any:
        w, b = params
        return lax.conv_general_dilated(inputs, w, strides, padding, one, one,
                                           dimension_numbers=dimension_numbers) + b
    return init_fun, apply_fun


Conv = functools.partial(GeneralConv, ("NHWC", "HWIO", "NHWC"))


def GeneralConvTranspose(dimension_numbers: tuple, out_chan: int, filter_shape: tuple,
                         strides: tuple | None = None, padding: Any = "VALID",
                         W_init: Callable | None = None,
                         b_init: Callable = normal(1e-6)) -> Layer:
    """The transposed convolution (lax.conv_transpose): the gradient of a convolution with
    respect to its input, used to upsample."""
    lhs_spec, rhs_spec, out_spec = dimension_numbers
    one = (1,) * len(filter_shape)
    strides = tuple(strides or one)
    W_init = W_init or glorot_normal(rhs_spec.index("I"), rhs_spec.index("O"))

    def init_fun(rng: Any, input_shape: tuple) -> tuple:
        sizes = iter(filter_shape)
        kernel_shape = [out_chan if c == "O" else input_shape[lhs_spec.index("C")]
                        if c == "I" else next(sizes) for c in rhs_spec]
        spatial = [c for c in lhs_spec if c not in "NC"]
        out = {"N": input_shape[lhs_spec.index("N")], "C": out_chan}
        for c, st in zip(spatial, strides):
            n, k = input_shape[lhs_spec.index(c)], kernel_shape[rhs_spec.index(c)]
            out[c] = n if n < 0 else _transposed_size(n, k, st, padding)
        bias_shape = [out_chan if c == "C" else 1 for c in out_spec]
        k1, k2 = _random().split(rng)
        return tuple(out[c] for c in out_spec), (W_init(k1, kernel_shape),
                                                b_init(k2, bias_shape))

    def apply_fun(params: tuple, inputs: Any, **kwargs: Any) -> Any:
        w, b = params
        return lax.conv_transpose(inputs, w, strides, padding,
                                     dimension_numbers=dimension_numbers) + b
    return init_fun, apply_fun


def _transposed_size(n: int, k: int, stride: int, padding: Any) -> int:
    """lax.conv_transpose's output size along one axis: n * stride for 'SAME',
    n * stride + max(k - stride, 0) for 'VALID'."""
    if padding == "SAME":
        return n * stride
    if padding == "VALID":
        return n * stride + max(k - stride, 0)
    raise ValueError(f"stax's transposed convolutions take padding 'SAME' or 'VALID', got "
                     f"{padding!r}")


ConvTranspose = functools.partial(GeneralConvTranspose, ("NHWC", "HWIO", "NHWC"))
Conv1DTranspose = functools.partial(GeneralConvTranspose, ("NHC", "HIO", "NHC"))


def _pooling_layer(reducer: str, init_val: float, average: bool = False) -> Callable:
    """A pooling layer factory: ``reducer`` (lax.max or lax.add, named) over windows;
    ``average`` divides by the number of elements in each window (padding excluded)."""
    def PoolingLayer(window_shape: tuple, strides: tuple | None = None,
                     padding: str = "VALID", spec: str | None = None) -> Layer:
        strides = tuple(strides or (1,) * len(window_shape))
        window_shape = tuple(window_shape)
        non_spatial = (0, len(window_shape) + 1) if spec is None else (
            spec.index("N"), spec.index("C"))
        full_window, full_strides = window_shape, strides
        for i in sorted(non_spatial):
            full_window = full_window[:i] + (1,) + full_window[i:]
            full_strides = full_strides[:i] + (1,) + full_strides[i:]

        def init_fun(rng: Any, input_shape: tuple) -> tuple:
            pads = _pads(tuple(input_shape), full_window, full_strides, padding)
            return tuple(_window_out(n, k, st, pad) for n, k, st, pad in
                         zip(input_shape, full_window, full_strides, pads)), ()

        def apply_fun(params: tuple, inputs: Any, **kwargs: Any) -> Any:
            out = lax.reduce_window(inputs, init_val, getattr(lax, reducer), full_window,
                                    full_strides, padding)
            if not average:
                return out
            spatial = tuple(n for i, n in enumerate(inputs.shape) if i not in non_spatial)
            counts = lax.reduce_window(fnp.ones(spatial, dtype=inputs.dtype), 0.0, lax.add,
                                       window_shape, strides, padding)
            for i in sorted(non_spatial):
                counts = fnp.expand_dims(counts, i)
            return out / counts
        return init_fun, apply_fun
    return PoolingLayer


MaxPool = _pooling_layer("max", -np.inf)
SumPool = _pooling_layer("add", 0.0)
AvgPool = _pooling_layer("add", 0.0, average=True)


def elementwise(fun: Callable, **fun_kwargs: Any) -> Layer:
    """A parameterless layer applying ``fun(inputs, **fun_kwargs)``."""
    init_fun = lambda rng, input_shape: (input_shape, ())  # noqa: E731
    apply_fun = lambda params, inputs, **kwargs: fun(inputs, **fun_kwargs)  # noqa: E731
    return init_fun, apply_fun


Tanh = elementwise(fnp.tanh)
Relu = elementwise(nn.relu)
Exp = elementwise(fnp.exp)
LogSoftmax = elementwise(nn.log_softmax, axis=-1)
logsoftmax = nn.log_softmax  # (JAX's stax keeps this older name of the function)
Softmax = elementwise(nn.softmax, axis=-1)
Softplus = elementwise(nn.softplus)
Sigmoid = elementwise(nn.sigmoid)
Elu = elementwise(nn.elu)
LeakyRelu = elementwise(nn.leaky_relu)
Selu = elementwise(nn.selu)
Gelu = elementwise(nn.gelu)


def _flatten() -> Layer:
    """Flatten every axis but the first (the batch)."""
    def init_fun(rng: Any, input_shape: tuple) -> tuple:
        return (input_shape[0], functools.reduce(operator.mul, input_shape[1:], 1)), ()

    def apply_fun(params: tuple, inputs: Any, **kwargs: Any) -> Any:
        return fnp.reshape(inputs, (inputs.shape[0], -1))
    return init_fun, apply_fun


Flatten = _flatten()


def _identity() -> Layer:
    return (lambda rng, input_shape: (input_shape, ()),
            lambda params, inputs, **kwargs: inputs)


Identity = _identity()


def FanOut(num: int) -> Layer:
    """``num`` copies of the input, for `parallel`."""
    return (lambda rng, input_shape: ([input_shape] * num, ()),
            lambda params, inputs, **kwargs: [inputs] * num)


def _fan_in_sum() -> Layer:
    """The sum of a list of inputs."""
    return (lambda rng, input_shape: (input_shape[0], ()),
            lambda params, inputs, **kwargs: sum(inputs))


FanInSum = _fan_in_sum()


def FanInConcat(axis: int = -1) -> Layer:
    """The concatenation of a list of inputs along ``axis``."""
    def init_fun(rng: Any, input_shape: list) -> tuple:
        ax = axis % len(input_shape[0])
        size = sum(shape[ax] for shape in input_shape)
        return tuple(input_shape[0][:ax]) + (size,) + tuple(input_shape[0][ax + 1:]), ()

    def apply_fun(params: tuple, inputs: list, **kwargs: Any) -> Any:
        return fnp.concatenate(inputs, axis)
    return init_fun, apply_fun


def Dropout(rate: float, mode: str = "train") -> Layer:
    """Keeps each input with probability ``rate`` (JAX's stax convention: the keep rate)
    and scales the kept ones by 1 / rate in mode 'train'; the identity otherwise."""
    def init_fun(rng: Any, input_shape: tuple) -> tuple:
        return input_shape, ()

    def apply_fun(params: tuple, inputs: Any, **kwargs: Any) -> Any:
        rng = kwargs.get("rng", None)
        if rng is None:
            raise ValueError("Dropout layer requires apply_fun to be called with a PRNG key "
                             "argument. That is, instead of `apply_fun(params, inputs)`, call "
                             "it like `apply_fun(params, inputs, rng)` where `rng` is a "
                             "PRNG key (e.g. from `funcgrad.random.key`).")
        if mode == "train":
            keep = _random().bernoulli(rng, rate, inputs.shape)
            return fnp.where(keep, inputs / rate, 0)
        return inputs
    return init_fun, apply_fun


def BatchNorm(axis: Any = (0, 1, 2), epsilon: float = 1e-5, center: bool = True,
              scale: bool = True, beta_init: Callable = zeros,
              gamma_init: Callable = ones) -> Layer:
    """Batch normalisation over ``axis`` (statistics of the current batch; no running
    averages, as in JAX's stax), then gamma z + beta with parameters over the other axes."""
    axis = (axis,) if np.isscalar(axis) else tuple(axis)

    def init_fun(rng: Any, input_shape: tuple) -> tuple:
        shape = tuple(d for i, d in enumerate(input_shape) if i not in axis)
        k1, k2 = _random().split(rng)
        beta = beta_init(k1, shape) if center else ()
        gamma = gamma_init(k2, shape) if scale else ()
        return input_shape, (beta, gamma)

    def apply_fun(params: tuple, x: Any, **kwargs: Any) -> Any:
        beta, gamma = params
        expand = tuple(None if i in axis else slice(None) for i in range(fnp.ndim(x)))
        z = nn.standardize(x, axis, epsilon=epsilon)
        if scale:
            z = gamma[expand] * z
        return z + beta[expand] if center else z
    return init_fun, apply_fun


def serial(*layers: Layer) -> Layer:
    """The composition of ``layers``, first to last; a key given as ``rng`` is split among
    them."""
    nlayers = len(layers)
    init_funs, apply_funs = zip(*layers) if layers else ((), ())

    def init_fun(rng: Any, input_shape: Any) -> tuple:
        params = []
        for init in init_funs:
            rng, layer_rng = _random().split(rng)
            input_shape, param = init(layer_rng, input_shape)
            params.append(param)
        return input_shape, params

    def apply_fun(params: list, inputs: Any, **kwargs: Any) -> Any:
        rng = kwargs.pop("rng", None)
        rngs = _random().split(rng, nlayers) if rng is not None else (None,) * nlayers
        for fun, param, layer_rng in zip(apply_funs, params, rngs):
            inputs = fun(param, inputs, rng=layer_rng, **kwargs)
        return inputs
    return init_fun, apply_fun


def parallel(*layers: Layer) -> Layer:
    """``layers`` applied side by side to a list of inputs (one each): for residual and
    multi-branch networks with `FanOut` and `FanInSum`/`FanInConcat`."""
    nlayers = len(layers)
    init_funs, apply_funs = zip(*layers) if layers else ((), ())

    def init_fun(rng: Any, input_shape: Any) -> tuple:
        rngs = _random().split(rng, nlayers)
        results = [init(r, shape) for init, r, shape in zip(init_funs, rngs, input_shape)]
        return tuple(r[0] for r in results), tuple(r[1] for r in results)

    def apply_fun(params: tuple, inputs: Any, **kwargs: Any) -> list:
        rng = kwargs.pop("rng", None)
        rngs = _random().split(rng, nlayers) if rng is not None else (None,) * nlayers
        return [f(p, x, rng=r, **kwargs)
                for f, p, x, r in zip(apply_funs, params, inputs, rngs)]
    return init_fun, apply_fun


def shape_dependent(make_layer: Callable[[tuple], Layer]) -> Layer:
    """A layer built from the shape of its input by ``make_layer(input_shape)``."""
    def init_fun(rng: Any, input_shape: tuple) -> tuple:
        return make_layer(input_shape)[0](rng, input_shape)

    def apply_fun(params: Any, inputs: Any, **kwargs: Any) -> Any:
        return make_layer(inputs.shape)[1](params, inputs, **kwargs)
    return init_fun, apply_fun
