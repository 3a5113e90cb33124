"""Recurrent layers: nn.RNN, nn.LSTM, nn.GRU (over RNNBase) and their cells, with
PyTorch's constructors, parameter names (``weight_ih_l0``, ``bias_hh_l1_reverse``,
``weight_hr_l0``...), initialisation (every parameter U(-1/sqrt(hidden), 1/sqrt(hidden))),
shapes (batched or unbatched, ``batch_first``, PackedSequence in and out) and error texts.
The recurrences themselves are in `_rnn_functional`.
"""
from __future__ import annotations

import math
import numbers
import warnings
from typing import Any

from funcgrad.torch import _factories
from funcgrad.torch._tensor import Tensor
from funcgrad.torch.nn import _rnn_functional as R
from funcgrad.torch.nn import init
from funcgrad.torch.nn.module import Module
from funcgrad.torch.nn.parameter import Parameter
from funcgrad.torch.nn.utils.rnn import PackedSequence

__all__ = ["RNNBase", "RNN", "LSTM", "GRU", "RNNCellBase", "RNNCell", "LSTMCell", "GRUCell"]

_GATES = {"LSTM": 4, "GRU": 3, "RNN_TANH": 1, "RNN_RELU": 1}
_LAYER_NAME = {"LSTM": "LSTM", "GRU": "GRU", "RNN_TANH": "RNN", "RNN_RELU": "RNN"}


def _check_sizes(hidden_size: Any, num_layers: int, dropout: Any, proj_size: int) -> None:
    if not isinstance(dropout, numbers.Number) or isinstance(dropout, bool) \
            or not 0 <= dropout <= 1:
        raise ValueError("dropout should be a number in range [0, 1] representing the "
                         "probability of an element being zeroed")
    if dropout > 0 and num_layers == 1:
        warnings.warn("dropout option adds dropout after all but last recurrent layer, so "
                      "non-zero dropout expects num_layers greater than 1, but got "
                      f"dropout={dropout} and num_layers={num_layers}", stacklevel=3)
    if not isinstance(hidden_size, int):
        raise TypeError(f"hidden_size should be of type int, got: {type(hidden_size).__name__}")
    if hidden_size <= 0:
        raise ValueError("hidden_size must be greater than zero")
    if num_layers <= 0:
        raise ValueError("num_layers must be greater than zero")
    if proj_size < 0:
        raise ValueError("proj_size should be a positive integer or zero to disable "
                         "projections")
    if proj_size >= hidden_size:
        raise ValueError("proj_size has to be smaller than hidden_size")


def _check_hidden(hx: Tensor, expected: tuple, msg: str = "Expected hidden size {}, got {}"
                  ) -> None:
    if tuple(hx.shape) != expected:
        raise RuntimeError(msg.format(expected, list(hx.shape)))


class RNNBase(Module):
    """What RNN, LSTM and GRU share: the stacked (bidirectional) parameters, their names
    and initialisation, and the input/state shape handling of ``forward``."""

    def __init__(self, mode: str, input_size: int, hidden_size: int, num_layers: int = 1,
                 bias: bool = True, batch_first: bool = False, dropout: float = 0.0,
                 bidirectional: bool = False, proj_size: int = 0, device: Any = None,
                 dtype: Any = None) -> None:
        super().__init__()
        if mode not in _GATES:
            raise ValueError("Unrecognized RNN mode: " + mode)
        _check_sizes(hidden_size, num_layers, dropout, proj_size)
        self.mode, self.input_size, self.hidden_size = mode, input_size, hidden_size
        self.num_layers, self.bias, self.batch_first = num_layers, bias, batch_first
        self.dropout, self.bidirectional = float(dropout), bidirectional
        self.proj_size = proj_size
        directions = 2 if bidirectional else 1
        gate_size = _GATES[mode] * hidden_size
        real_hidden = proj_size if proj_size > 0 else hidden_size
        self._flat_weights_names: list = []
        self._all_weights: list = []
        for layer in range(num_layers):
            for direction in range(directions):
                layer_input = input_size if layer == 0 else real_hidden * directions
                shapes = [(gate_size, layer_input), (gate_size, real_hidden)]
                names = ["weight_ih_l{}{}", "weight_hh_l{}{}"]
                if bias:
                    shapes += [(gate_size,), (gate_size,)]
                    names += ["bias_ih_l{}{}", "bias_hh_l{}{}"]
                if proj_size > 0:
                    shapes.append((proj_size, hidden_size))
                    names.append("weight_hr_l{}{}")
                suffix = "_reverse" if direction == 1 else ""
                names = [n.format(layer, suffix) for n in names]
                for name, shape in zip(names, shapes):
                    setattr(self, name, Parameter(_factories.empty(*shape, device=device,
                                                                   dtype=dtype)))
                self._flat_weights_names.extend(names)
                self._all_weights.append(names)
        self.reset_parameters()

    @property
    def _flat_weights(self) -> list:
        return [getattr(self, name) for name in self._flat_weights_names]

    @property
    def all_weights(self) -> list:
        """The parameters of each (layer, direction), in PyTorch's order."""
        return [[getattr(self, name) for name in names] for names in self._all_weights]

    def flatten_parameters(self) -> None:
        """A no-op: PyTorch packs the weights into one buffer for cuDNN; funcgrad has no
        such buffer to keep."""

    def reset_parameters(self) -> None:
        stdv = 1.0 / math.sqrt(self.hidden_size) if self.hidden_size > 0 else 0
        for weight in self.parameters():
            init.uniform_(weight, -stdv, stdv)

    def extra_repr(self) -> str:
        s = f"{self.input_size}, {self.hidden_size}"
        if self.proj_size != 0:
            s += f", proj_size={self.proj_size}"
        if self.num_layers != 1:
            s += f", num_layers={self.num_layers}"
        if self.bias is not True:
            s += f", bias={self.bias}"
        if self.batch_first is not False:
            s += f", batch_first={self.batch_first}"
        if self.dropout != 0:
            s += f", dropout={self.dropout}"
        if self.bidirectional is not False:
            s += f", bidirectional={self.bidirectional}"
        return s

    # -- shapes ------------------------------------------------------------------------------

    def _state_shape(self, batch: int, cell: bool = False) -> tuple:
        size = self.proj_size if self.proj_size > 0 and not cell else self.hidden_size
        return (self.num_layers * (2 if self.bidirectional else 1), batch, size)

    def check_input(self, input: Tensor, batch_sizes: Any) -> None:
        weight = self._flat_weights[0]
        if input.dtype != weight.dtype:
            raise ValueError(f"RNN input dtype ({input.dtype}) does not match weight dtype "
                             f"({weight.dtype}). Convert input: input.to({weight.dtype}), or "
                             f"convert model: model.to({input.dtype})")
        expected = 2 if batch_sizes is not None else 3
        if input.ndim != expected:
            raise RuntimeError(f"input must have {expected} dimensions, got {input.ndim}")
        if self.input_size != input.shape[-1]:
            raise RuntimeError(f"input.size(-1) must be equal to input_size. Expected "
                               f"{self.input_size}, got {input.shape[-1]}")

    def check_forward_args(self, input: Tensor, hidden: Any, batch: int,
                           batch_sizes: Any) -> None:
        self.check_input(input, batch_sizes)
        if self.mode == "LSTM":
            _check_hidden(hidden[0], self._state_shape(batch), "Expected hidden[0] size {}, got {}")
            _check_hidden(hidden[1], self._state_shape(batch, True),
                          "Expected hidden[1] size {}, got {}")
        else:
            _check_hidden(hidden, self._state_shape(batch))

    @staticmethod
    def permute_hidden(hx: Any, permutation: Tensor | None) -> Any:
        """The state's batch (dim 1) in the order ``permutation`` (None: unchanged)."""
        if permutation is None:
            return hx
        if isinstance(hx, tuple):
            return tuple(h.index_select(1, permutation) for h in hx)
        return hx.index_select(1, permutation)

    def _unbatched_hidden(self, hx: Any, batched: bool) -> Any:
        """``hx`` checked against the input's batchedness, given a batch dim if not."""
        want = 3 if batched else 2
        kind = "batched 3-D" if batched else "unbatched 2-D"
        if self.mode == "LSTM":
            if hx[0].ndim != want or hx[1].ndim != want:
                raise RuntimeError(f"For {kind} input, hx and cx should also be {want}-D but "
                                   f"got ({hx[0].ndim}-D, {hx[1].ndim}-D) tensors")
            return tuple(hx) if batched else (hx[0].unsqueeze(1), hx[1].unsqueeze(1))
        if hx.ndim != want:
            raise RuntimeError(f"For {kind} input, hx should also be {want}-D but got "
                               f"{hx.ndim}-D tensor")
        return hx if batched else hx.unsqueeze(1)

    def _zero_state(self, like: Tensor, batch: int) -> Any:
        def zeros(shape: tuple) -> Tensor:
            return _factories.zeros(*shape, dtype=like.dtype, device=like.device)
        if self.mode == "LSTM":
            return zeros(self._state_shape(batch)), zeros(self._state_shape(batch, True))
        return zeros(self._state_shape(batch))

    # -- forward -----------------------------------------------------------------------------

    def forward(self, input: Any, hx: Any = None) -> tuple:
        if isinstance(input, PackedSequence):
            return self._forward_packed(input, hx)
        if input.ndim not in (2, 3):
            tail = " tensor" if self.mode.startswith("RNN") else ""
            raise ValueError(f"{_LAYER_NAME[self.mode]}: Expected input to be 2D or 3D, got "
                             f"{input.ndim}D{tail} instead")
        batched = input.ndim == 3
        batch_dim = 0 if self.batch_first else 1
        if not batched:
            input = input.unsqueeze(batch_dim)
        if hx is not None:
            hx = self._unbatched_hidden(hx, batched)
        batch = input.shape[batch_dim]
        if hx is None:
            hx = self._zero_state(input, batch)
        self.check_forward_args(input, hx, batch, None)
        steps = input.transpose(0, 1) if self.batch_first else input
        length = steps.shape[0]
        data = steps.reshape(length * batch, steps.shape[2])
        out, hidden = self._run(data, [batch] * length, hx)
        output = out.reshape(length, batch, out.shape[-1])
        if self.batch_first:
            output = output.transpose(0, 1)
        if not batched:
            output = output.squeeze(batch_dim)
            hidden = tuple(h.squeeze(1) for h in hidden) if isinstance(hidden, tuple) \
                else hidden.squeeze(1)
        return output, hidden

    def _forward_packed(self, packed: PackedSequence, hx: Any) -> tuple:
        data, batch_sizes, sorted_indices, unsorted_indices = packed
        sizes = [int(n) for n in batch_sizes.tolist()]
        if hx is None:
            hx = self._zero_state(data, sizes[0])
        else:
            hx = self.permute_hidden(tuple(hx) if self.mode == "LSTM" else hx, sorted_indices)
        self.check_forward_args(data, hx, sizes[0], batch_sizes)
        out, hidden = self._run(data, sizes, hx)
        return (PackedSequence(out, batch_sizes, sorted_indices, unsorted_indices),
                self.permute_hidden(hidden, unsorted_indices))

    def _run(self, data: Tensor, sizes: list, hx: Any) -> tuple:
        return R.run_layers(self.mode, data, sizes, hx, self.all_weights, self.num_layers,
                            2 if self.bidirectional else 1, self.bias, self.dropout,
                            self.training)


class RNN(RNNBase):
    """Elman RNN: h_t = tanh(x_t W_ih^T + b_ih + h_{t-1} W_hh^T + b_hh) (or relu).

    ``RNN(input_size, hidden_size, num_layers=1, nonlinearity='tanh', bias=True,
    batch_first=False, dropout=0.0, bidirectional=False, device=None, dtype=None)``."""

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        if "proj_size" in kwargs:
            raise ValueError("proj_size argument is only supported for LSTM, not RNN or GRU")
        if len(args) > 3:
            nonlinearity = args[3]
            args = args[:3] + args[4:]
        else:
            nonlinearity = kwargs.pop("nonlinearity", "tanh")
        modes = {"tanh": "RNN_TANH", "relu": "RNN_RELU"}
        if nonlinearity not in modes:
            raise ValueError(f"Unknown nonlinearity '{nonlinearity}'. Select from 'tanh' "
                             "or 'relu'.")
        super().__init__(modes[nonlinearity], *args, **kwargs)
        self.nonlinearity = nonlinearity


class LSTM(RNNBase):
    """Long short-term memory, gates (i, f, g, o); with ``proj_size > 0`` the hidden state
    is projected to ``proj_size`` by ``weight_hr_l{k}``. Takes and returns (h, c)."""

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__("LSTM", *args, **kwargs)


class GRU(RNNBase):
    """Gated recurrent unit, gates (r, z, n) with n = tanh(W_in x + b_in + r (W_hn h +
    b_hn))."""

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        if "proj_size" in kwargs:
            raise ValueError("proj_size argument is only supported for LSTM, not RNN or GRU")
        super().__init__("GRU", *args, **kwargs)


# -- cells -----------------------------------------------------------------------------------

class RNNCellBase(Module):
    """One step of a recurrence: ``weight_ih`` (chunks * hidden, input), ``weight_hh``
    (chunks * hidden, hidden) and the two biases, initialised as RNNBase."""

    def __init__(self, input_size: int, hidden_size: int, bias: bool, num_chunks: int,
                 device: Any = None, dtype: Any = None) -> None:
        super().__init__()
        self.input_size, self.hidden_size, self.bias = input_size, hidden_size, bias

        def param(*shape: int) -> Parameter:
            return Parameter(_factories.empty(*shape, device=device, dtype=dtype))
        self.weight_ih = param(num_chunks * hidden_size, input_size)
        self.weight_hh = param(num_chunks * hidden_size, hidden_size)
        if bias:
            self.bias_ih = param(num_chunks * hidden_size)
            self.bias_hh = param(num_chunks * hidden_size)
        else:
            self.register_parameter("bias_ih", None)
            self.register_parameter("bias_hh", None)
        self.reset_parameters()

    def extra_repr(self) -> str:
        s = f"{self.input_size}, {self.hidden_size}"
        if self.bias is not True:
            s += f", bias={self.bias}"
        if getattr(self, "nonlinearity", "tanh") != "tanh":
            s += f", nonlinearity={self.nonlinearity}"
        return s

    def reset_parameters(self) -> None:
        stdv = 1.0 / math.sqrt(self.hidden_size) if self.hidden_size > 0 else 0
        for weight in self.parameters():
            init.uniform_(weight, -stdv, stdv)

    def _check(self, input: Tensor, states: list) -> None:
        """PyTorch's rnn cell checks of the input and each state (hidden0, hidden1)."""
        if input.shape[1] != self.input_size:
            raise RuntimeError(f"input has inconsistent input_size: got {input.shape[1]} "
                               f"expected {self.input_size}")
        for k, hx in enumerate(states):
            if input.shape[0] != hx.shape[0]:
                raise RuntimeError(f"Input batch size {input.shape[0]} doesn't match "
                                   f"hidden{k} batch size {hx.shape[0]}")
            if hx.shape[1] != self.hidden_size:
                raise RuntimeError(f"hidden{k} has inconsistent hidden_size: got "
                                   f"{hx.shape[1]}, expected {self.hidden_size}")

    def _prepare(self, input: Tensor, hx: Any, pair: bool) -> tuple:
        """(batched input, batched state(s), whether the input was batched)."""
        name = type(self).__name__
        if input.ndim not in (1, 2):
            raise ValueError(f"{name}: Expected input to be 1D or 2D, got {input.ndim}D "
                             "instead")
        states = list(hx) if pair and hx is not None else [] if hx is None else [hx]
        for k, h in enumerate(states):
            if h.ndim not in (1, 2):
                label = f"hx[{k}]" if pair else "hidden"
                raise ValueError(f"{name}: Expected {label} to be 1D or 2D, got {h.ndim}D "
                                 "instead")
        batched = input.ndim == 2
        if not batched:
            input = input.unsqueeze(0)
            states = [h.unsqueeze(0) for h in states]
        if not states:
            zeros = _factories.zeros(input.shape[0], self.hidden_size, dtype=input.dtype,
                                     device=input.device)
            states = [zeros, zeros] if pair else [zeros]
        self._check(input, states)
        return input, states, batched

    def _weights(self) -> tuple:
        return self.weight_ih, self.weight_hh, self.bias_ih, self.bias_hh


class RNNCell(RNNCellBase):
    """h' = tanh(x W_ih^T + b_ih + h W_hh^T + b_hh) (or relu)."""

    def __init__(self, input_size: int, hidden_size: int, bias: bool = True,
                 nonlinearity: str = "tanh", device: Any = None, dtype: Any = None) -> None:
        super().__init__(input_size, hidden_size, bias, 1, device, dtype)
        self.nonlinearity = nonlinearity

    def forward(self, input: Tensor, hx: Tensor | None = None) -> Tensor:
        input, (h,), batched = self._prepare(input, hx, False)
        cells = {"tanh": R.rnn_tanh_cell, "relu": R.rnn_relu_cell}
        if self.nonlinearity not in cells:
            raise RuntimeError(f"Unknown nonlinearity: {self.nonlinearity}")
        out = cells[self.nonlinearity](input, h, *self._weights())
        return out if batched else out.squeeze(0)


class LSTMCell(RNNCellBase):
    """One LSTM step: (input, (h, c)) -> (h', c')."""

    def __init__(self, input_size: int, hidden_size: int, bias: bool = True,
                 device: Any = None, dtype: Any = None) -> None:
        super().__init__(input_size, hidden_size, bias, 4, device, dtype)

    def forward(self, input: Tensor, hx: Any = None) -> tuple:
        input, states, batched = self._prepare(input, hx, True)
        h, c = R.lstm_cell(input, states, *self._weights())
        return (h, c) if batched else (h.squeeze(0), c.squeeze(0))


class GRUCell(RNNCellBase):
    """One GRU step: (input, h) -> h'."""

    def __init__(self, input_size: int, hidden_size: int, bias: bool = True,
                 device: Any = None, dtype: Any = None) -> None:
        super().__init__(input_size, hidden_size, bias, 3, device, dtype)

    def forward(self, input: Tensor, hx: Tensor | None = None) -> Tensor:
        input, (h,), batched = self._prepare(input, hx, False)
        out = R.gru_cell(input, h, *self._weights())
        return out if batched else out.squeeze(0)
