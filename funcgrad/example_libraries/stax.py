"""JAX's ``example_libraries.stax`` on funcgrad: neural networks as (init_fun, apply_fun)
pairs.

    init_random_params, predict = stax.serial(stax.Dense(512), stax.Relu, stax.Dense(10),
                                              stax.LogSoftmax)
    out_shape, params = init_random_params(funcgrad.random.PRNGKey(0), (-1, 784))
    logits = predict(params, inputs)

``init_fun(rng, input_shape) -> (output_shape, params)`` and
``apply_fun(params, inputs, **kwargs) -> outputs``; keys come from funcgrad.random (JAX's
API), the default initializers from funcgrad.nn.initializers. Conv, ConvTranspose and the
pooling layers are not provided: funcgrad has no convolution primitive yet.
"""
from __future__ import annotations

import functools
import operator
from typing import Any, Callable

import numpy as np

import funcgrad.numpy as fnp
from funcgrad import nn
from funcgrad.nn.initializers import glorot_normal, normal, ones, zeros

__all__ = ["Dense", "elementwise", "Tanh", "Relu", "Exp", "LogSoftmax", "Softmax", "Softplus",
           "Sigmoid", "Elu", "LeakyRelu", "Selu", "Gelu", "Flatten", "Identity", "FanOut",
           "FanInSum", "FanInConcat", "Dropout", "BatchNorm", "serial", "parallel",
           "shape_dependent"]

Layer = tuple  # (init_fun, apply_fun)


def _random() -> Any:
    # funcgrad.random is a sibling package built on its own branch (h/random): imported
    # when a layer needs keys, so that this module imports without it
    from funcgrad import random
    return random


def Dense(out_dim: int, W_init: Callable = glorot_normal(), b_init: Callable = normal()) -> Layer:
    """A fully connected layer: inputs @ W + b."""
    def init_fun(rng: Any, input_shape: tuple) -> tuple:
        output_shape = tuple(input_shape[:-1]) + (out_dim,)
        k1, k2 = _random().split(rng)
        return output_shape, (W_init(k1, (input_shape[-1], out_dim)), b_init(k2, (out_dim,)))

    def apply_fun(params: tuple, inputs: Any, **kwargs: Any) -> Any:
        w, b = params
        return fnp.dot(inputs, w) + b
    return init_fun, apply_fun


def elementwise(fun: Callable, **fun_kwargs: Any) -> Layer:
    """A parameterless layer applying ``fun(inputs, **fun_kwargs)``."""
    init_fun = lambda rng, input_shape: (input_shape, ())  # noqa: E731
    apply_fun = lambda params, inputs, **kwargs: fun(inputs, **fun_kwargs)  # noqa: E731
    return init_fun, apply_fun


Tanh = elementwise(fnp.tanh)
Relu = elementwise(nn.relu)
Exp = elementwise(fnp.exp)
LogSoftmax = elementwise(nn.log_softmax, axis=-1)
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
        return [f(p, x, rng=r, **kwargs) for f, p, x, r in zip(apply_funs, params, inputs, rngs)]
    return init_fun, apply_fun


def shape_dependent(make_layer: Callable[[tuple], Layer]) -> Layer:
    """A layer built from the shape of its input by ``make_layer(input_shape)``."""
    def init_fun(rng: Any, input_shape: tuple) -> tuple:
        return make_layer(input_shape)[0](rng, input_shape)

    def apply_fun(params: Any, inputs: Any, **kwargs: Any) -> Any:
        return make_layer(inputs.shape)[1](params, inputs, **kwargs)
    return init_fun, apply_fun
