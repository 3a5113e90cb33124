"""The recurrences of nn.RNN / nn.LSTM / nn.GRU and their cells, as compositions of
facade ops (linear, sigmoid, tanh, chunk, cat...), so autograd differentiates them like
any other program and they run on every device the ops do.

One step of each cell, with ``gx = x W_ih^T + b_ih`` and ``gh = h W_hh^T + b_hh``:

    RNN   h' = tanh(gx + gh)               (or relu)
    LSTM  i, f, g, o = chunks of gx + gh  (PyTorch's gate order)
          c' = sigmoid(f) c + sigmoid(i) tanh(g),   h' = sigmoid(o) tanh(c')
          with a projection:  h' = h' W_hr^T
    GRU   r, z, n chunks of gx and of gh  (gate order r, z, n)
          r = sigmoid(gx_r + gh_r),  z = sigmoid(gx_z + gh_z)
          n = tanh(gx_n + r * gh_n),  h' = (1 - z) n + z h

A layer runs over a *packed* sequence: ``data`` (sum of the batch sizes, features) holding
each step's rows one step after the other, and the batch size of each step (decreasing).
A padded batch (T, B, F) is the packed sequence whose steps all have B rows, so one loop
serves both. The input projection of a whole layer is one matrix product before the loop;
a direction running backwards visits the steps last to first, and each step updates only
the leading rows of the state (the sequences still running), the others keeping theirs.
"""
from __future__ import annotations

from typing import Any, Callable, Sequence

from funcgrad.torch._ops_basic import FUNCTIONS
from funcgrad.torch._tensor import Tensor
from funcgrad.torch.nn._dropout import dropout
from funcgrad.torch.nn._linear import linear

__all__ = ["rnn_tanh_cell", "rnn_relu_cell", "lstm_cell", "gru_cell", "run_layers"]

State = Any  # one tensor (RNN, GRU) or a tuple (h, c) (LSTM)


def _rnn_step(activation: Callable) -> Callable:
    """An Elman step with ``activation``; every step takes (gx, state, w_hh, b_hh, w_hr),
    only the LSTM's uses w_hr."""
    def step(gx: Tensor, h: Tensor, w_hh: Tensor, b_hh: Tensor | None,
             w_hr: Tensor | None = None) -> Tensor:
        return activation(gx + linear(h, w_hh, b_hh))
    return step


def _lstm_step(gx: Tensor, state: tuple, w_hh: Tensor, b_hh: Tensor | None,
               w_hr: Tensor | None = None) -> tuple:
    h, c = state
    i, f, g, o = (gx + linear(h, w_hh, b_hh)).chunk(4, 1)
    c_next = f.sigmoid() * c + i.sigmoid() * g.tanh()
    h_next = o.sigmoid() * c_next.tanh()
    if w_hr is not None:
        h_next = linear(h_next, w_hr)
    return h_next, c_next


def _gru_step(gx: Tensor, h: Tensor, w_hh: Tensor, b_hh: Tensor | None,
              w_hr: Tensor | None = None) -> Tensor:
    x_r, x_z, x_n = gx.chunk(3, 1)
    h_r, h_z, h_n = linear(h, w_hh, b_hh).chunk(3, 1)
    r = (x_r + h_r).sigmoid()
    z = (x_z + h_z).sigmoid()
    n = (x_n + r * h_n).tanh()
    return n + z * (h - n)


STEPS: dict[str, Callable] = {"RNN_TANH": _rnn_step(lambda t: t.tanh()),
                              "RNN_RELU": _rnn_step(lambda t: t.relu()),
                              "LSTM": _lstm_step, "GRU": _gru_step}


def rnn_tanh_cell(input: Tensor, hx: Tensor, w_ih: Tensor, w_hh: Tensor,
                  b_ih: Tensor | None = None, b_hh: Tensor | None = None) -> Tensor:
    """One step of an Elman RNN with tanh (torch.rnn_tanh_cell): (B, F), (B, H) -> (B, H)."""
    return STEPS["RNN_TANH"](linear(input, w_ih, b_ih), hx, w_hh, b_hh)


def rnn_relu_cell(input: Tensor, hx: Tensor, w_ih: Tensor, w_hh: Tensor,
                  b_ih: Tensor | None = None, b_hh: Tensor | None = None) -> Tensor:
    """One step of an Elman RNN with relu (torch.rnn_relu_cell)."""
    return STEPS["RNN_RELU"](linear(input, w_ih, b_ih), hx, w_hh, b_hh)


def lstm_cell(input: Tensor, hx: Sequence[Tensor], w_ih: Tensor, w_hh: Tensor,
              b_ih: Tensor | None = None, b_hh: Tensor | None = None) -> tuple:
    """One LSTM step (torch.lstm_cell): (B, F), ((B, H), (B, H)) -> (h', c')."""
    return _lstm_step(linear(input, w_ih, b_ih), tuple(hx), w_hh, b_hh)


def gru_cell(input: Tensor, hx: Tensor, w_ih: Tensor, w_hh: Tensor,
             b_ih: Tensor | None = None, b_hh: Tensor | None = None) -> Tensor:
    """One GRU step (torch.gru_cell)."""
    return _gru_step(linear(input, w_ih, b_ih), hx, w_hh, b_hh)


def _map_state(fn: Callable, *states: State) -> State:
    """``fn`` applied to the tensor(s) of one or more states, part by part."""
    if isinstance(states[0], tuple):
        return tuple(fn(*parts) for parts in zip(*states))
    return fn(*states)


def _direction(step: Callable, gates: Sequence[Tensor], sizes: Sequence[int], state: State,
               weights: tuple, reverse: bool) -> tuple[list, State]:
    """Run one direction of one layer over the per-step input projections ``gates``:
    the output of each step (in time order) and the final state. Rows past a step's batch
    size keep their state (their sequence has ended, or going backwards, not begun)."""
    outputs: list = [None] * len(gates)
    order = range(len(gates) - 1, -1, -1) if reverse else range(len(gates))
    batch = sizes[0]
    for t in order:
        n = sizes[t]
        running = state if n == batch else _map_state(lambda s: s[:n], state)
        new = step(gates[t], running, *weights)
        outputs[t] = new[0] if isinstance(new, tuple) else new
        state = new if n == batch else _map_state(
            lambda a, s: FUNCTIONS["cat"]([a, s[n:]], 0), new, state)
    return outputs, state


def run_layers(mode: str, data: Tensor, sizes: Sequence[int], state: State,
               weights: Sequence[Sequence[Tensor]], layers: int, directions: int,
               has_bias: bool, dropout_p: float, training: bool) -> tuple[Tensor, State]:
    """The stacked, maybe bidirectional, recurrence over a packed sequence.

    ``data`` (sum(sizes), F); ``state`` (layers * directions, B, H) (a pair for LSTM);
    ``weights`` the parameter lists of each (layer, direction) in PyTorch's order
    (w_ih, w_hh[, b_ih, b_hh][, w_hr]). Returns the last layer's output, packed the same
    way (sum(sizes), directions * H_out), and the final states stacked as the initial."""
    step = STEPS[mode]
    finals = []
    for layer in range(layers):
        outs = []
        for d in range(directions):
            k = layer * directions + d
            w = list(weights[k])
            w_ih, w_hh = w[0], w[1]
            b_ih, b_hh = (w[2], w[3]) if has_bias else (None, None)
            w_hr = w[-1] if len(w) in (3, 5) else None
            gates = linear(data, w_ih, b_ih).split(list(sizes), 0)
            initial = _map_state(lambda s: s[k], state)
            out, final = _direction(step, gates, sizes, initial, (w_hh, b_hh, w_hr), d == 1)
            outs.append(FUNCTIONS["cat"](out, 0))
            finals.append(final)
        data = outs[0] if directions == 1 else FUNCTIONS["cat"](outs, 1)
        if dropout_p and training and layer < layers - 1:
            data = dropout(data, dropout_p, True)
    stacked = _map_state(lambda *parts: FUNCTIONS["stack"](list(parts), 0), *finals)
    return data, stacked
