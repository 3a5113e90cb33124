"""torch.nn.utils.rnn: variable-length batches of sequences for the recurrent layers.

A `PackedSequence` holds the time steps of a batch of sequences sorted by decreasing
length, step after step: ``data`` stacks, for each step t, the rows of the
``batch_sizes[t]`` sequences still running at t (so the batch shrinks as sequences end),
with ``sorted_indices`` / ``unsorted_indices`` mapping the caller's batch order to the
sorted one and back. Packing and padding are gathers (`index_select`) of rows, so gradients
flow back to the padded or packed tensor; index arithmetic is done on the host, from the
lengths, which PyTorch too requires on the CPU.
"""
from __future__ import annotations

from typing import Any, Iterable, NamedTuple, Sequence

import numpy as np

from funcgrad.torch import _factories
from funcgrad.torch._ops_basic import FUNCTIONS
from funcgrad.torch._tensor import Tensor

__all__ = ["PackedSequence", "invert_permutation", "pad_sequence", "pack_padded_sequence",
           "pad_packed_sequence", "pack_sequence", "unpad_sequence", "unpack_sequence"]


def _index_tensor(values: Any, device: Any = "cpu") -> Tensor:
    return _factories.tensor(np.asarray(values, dtype=np.int64), device=device)


def _host_ints(values: Any) -> np.ndarray:
    if isinstance(values, Tensor):
        return np.asarray(values.detach().cpu().numpy()).astype(np.int64)
    return np.asarray(values, dtype=np.int64)


def invert_permutation(permutation: Tensor | None) -> Tensor | None:
    """The permutation ``q`` with ``q[permutation[i]] == i`` (None stays None)."""
    if permutation is None:
        return None
    perm = _host_ints(permutation)
    inverse = np.empty_like(perm)
    inverse[perm] = np.arange(perm.size)
    return _index_tensor(inverse, permutation.device)


class _PackedFields(NamedTuple):
    data: Tensor
    batch_sizes: Tensor
    sorted_indices: Tensor | None
    unsorted_indices: Tensor | None


class PackedSequence(_PackedFields):
    """The packed steps of a batch of sequences (see the module's docstring); built by
    `pack_padded_sequence` / `pack_sequence`, accepted and returned by nn.RNN, nn.LSTM and
    nn.GRU. ``PackedSequence(data, batch_sizes)`` with ``unsorted_indices`` left None
    derives it from ``sorted_indices``, as PyTorch."""

    def __new__(cls, data: Tensor, batch_sizes: Tensor | None = None,
                sorted_indices: Tensor | None = None,
                unsorted_indices: Tensor | None = None) -> "PackedSequence":
        if unsorted_indices is None:
            unsorted_indices = invert_permutation(sorted_indices)
        if batch_sizes is None:  # PackedSequence(*a_packed_sequence_tuple)
            if not isinstance(data, (list, tuple)) or len(data) != 2:
                raise TypeError("PackedSequence: expected (data, batch_sizes), got "
                                f"{type(data).__name__}")
            data, batch_sizes = data
        if batch_sizes.device.type != "cpu":
            raise ValueError("batch_sizes should always be on CPU. Instances of "
                             "PackedSequence should never be created manually. They should "
                             "be instantiated by functions like pack_sequence and "
                             "pack_padded_sequences in nn.utils.rnn. "
                             "https://pytorch.org/docs/stable/nn.html#torch.nn.utils.rnn."
                             "pack_sequence")
        return super().__new__(cls, data, batch_sizes, sorted_indices, unsorted_indices)

    def to(self, *args: Any, **kwargs: Any) -> "PackedSequence":
        """``data.to(...)``, the indices following to data's device (batch_sizes stays on
        the CPU); self when nothing changes."""
        data = self.data.to(*args, **kwargs)
        if data is self.data:
            return self
        move = (lambda t: None if t is None else t.to(data.device))
        return type(self)(data, self.batch_sizes, move(self.sorted_indices),
                          move(self.unsorted_indices))

    def cuda(self, *args: Any, **kwargs: Any) -> "PackedSequence":
        return self.to(self.data.cuda(*args, **kwargs).device)

    def cpu(self) -> "PackedSequence":
        return self.to("cpu")

    def _cast(self, dtype_name: str) -> "PackedSequence":
        return self.to(dtype=getattr(self.data, dtype_name)().dtype)

    def double(self) -> "PackedSequence":
        return self._cast("double")

    def float(self) -> "PackedSequence":
        return self._cast("float")

    def half(self) -> "PackedSequence":
        return self._cast("half")

    def long(self) -> "PackedSequence":
        return self._cast("long")

    def int(self) -> "PackedSequence":
        return self._cast("int")

    def short(self) -> "PackedSequence":
        return self._cast("short")

    def char(self) -> "PackedSequence":
        return self._cast("char")

    def byte(self) -> "PackedSequence":
        return self._cast("byte")

    @property
    def is_cuda(self) -> bool:
        return self.data.is_cuda

    def is_pinned(self) -> bool:
        return False

    def pin_memory(self) -> "PackedSequence":
        return self


def _check_lengths(lengths: Any) -> np.ndarray:
    if isinstance(lengths, Tensor):
        if lengths.ndim != 1 or lengths.device.type != "cpu":
            kind = lengths.type().rsplit(".", 1)[-1].replace("Tensor", "")
            raise RuntimeError(f"'lengths' argument should be a 1D CPU int64 tensor, but got "
                               f"{lengths.ndim}D {lengths.device.type} {kind} tensor")
    return _host_ints(lengths).reshape(-1)


def _batch_sizes(lengths: np.ndarray) -> np.ndarray:
    """How many of the (sorted) sequences are still running at each step."""
    steps = np.arange(int(lengths[0]))
    return (lengths[None, :] > steps[:, None]).sum(1).astype(np.int64)


def pack_padded_sequence(input: Tensor, lengths: Any, batch_first: bool = False,
                         enforce_sorted: bool = True) -> PackedSequence:
    """Pack a padded batch (T, B, *) (or (B, T, *) with ``batch_first``) of sequences
    of the given ``lengths`` (a list or a CPU int64 tensor); unless ``enforce_sorted``,
    the batch is sorted by decreasing length first and the order is recorded."""
    raw = _check_lengths(lengths)
    sorted_indices = None
    if not enforce_sorted:
        order = np.argsort(-raw, kind="stable")
        raw = raw[order]
        sorted_indices = _index_tensor(order, input.device)
        input = input.index_select(0 if batch_first else 1, sorted_indices)
    batch_dim, time_dim = (0, 1) if batch_first else (1, 0)
    batch = input.shape[batch_dim]
    if raw.size != batch:
        raise RuntimeError(f"Expected `len(lengths)` to be equal to batch_size, but got "
                           f"{raw.size} (batch_size={batch})")
    if raw.size and raw.min() <= 0:
        raise RuntimeError("Length of all samples has to be greater than 0, but found an "
                           "element in 'lengths' that is <= 0")
    if enforce_sorted and np.any(np.diff(raw) > 0):
        raise RuntimeError("`lengths` array must be sorted in decreasing order when "
                           "`enforce_sorted` is True. You can pass `enforce_sorted=False` to "
                           "pack_padded_sequence and/or pack_sequence to sidestep this "
                           "requirement if you do not need ONNX exportability.")
    if raw[0] > input.shape[time_dim]:
        raise RuntimeError(f"pack_padded_sequence: the longest length ({int(raw[0])}) is "
                           f"greater than the padded input's {input.shape[time_dim]} steps")
    sizes = _batch_sizes(raw)
    steps = input if not batch_first else input.transpose(0, 1)
    rows = np.concatenate([t * batch + np.arange(n) for t, n in enumerate(sizes)])
    flat = steps.reshape(-1, *steps.shape[2:])
    data = flat.index_select(0, _index_tensor(rows, input.device))
    return PackedSequence(data, _index_tensor(sizes), sorted_indices, None)


def pad_packed_sequence(sequence: PackedSequence, batch_first: bool = False,
                        padding_value: float = 0.0,
                        total_length: int | None = None) -> tuple[Tensor, Tensor]:
    """The inverse of `pack_padded_sequence`: (padded (T, B, *) or (B, T, *), lengths),
    in the batch order the sequence was packed from; ``total_length`` pads to that many
    steps."""
    sizes = _host_ints(sequence.batch_sizes)
    steps = sizes.size
    if total_length is not None:
        if total_length < steps:
            raise ValueError(f"Expected total_length to be at least the length of the "
                             f"longest sequence in input, but got total_length={total_length}"
                             f" and max sequence length being {steps}")
        steps = total_length
    batch = int(sizes[0])
    data = sequence.data
    pad_row = int(data.shape[0])
    index = np.full((steps, batch), pad_row, dtype=np.int64)
    start = 0
    for t, n in enumerate(sizes):
        index[t, :n] = np.arange(start, start + n)
        start += n
    filler = _factories.full((1, *data.shape[1:]), padding_value, dtype=data.dtype,
                             device=data.device)
    rows = FUNCTIONS["cat"]([data, filler], 0).index_select(
        0, _index_tensor(index.reshape(-1), data.device))
    padded = rows.reshape(steps, batch, *data.shape[1:])
    if batch_first:
        padded = padded.transpose(0, 1)
    lengths = (sizes[None, :] > np.arange(batch)[:, None]).sum(1).astype(np.int64)
    if sequence.unsorted_indices is not None:
        order = _host_ints(sequence.unsorted_indices)
        padded = padded.index_select(0 if batch_first else 1, sequence.unsorted_indices)
        lengths = lengths[order]
    return padded, _index_tensor(lengths)


def _like_first(s: Tensor, trailing: tuple, dtype: Any) -> Tensor:
    """A sequence in the first one's dtype and trailing shape, broadcast to it as PyTorch
    copies it there (so a size-1 dim stretches; any other mismatch is its error)."""
    if s.ndim - 1 != len(trailing):
        raise RuntimeError(f"pad_sequence: expected every sequence to have "
                           f"{len(trailing) + 1} dimensions like the first, got {s.ndim}")
    for dim, (a, b) in enumerate(zip(trailing, tuple(s.shape[1:])), 1):
        if a != b and 1 not in (a, b):
            raise RuntimeError(f"The size of tensor a ({a}) must match the size of tensor "
                               f"b ({b}) at non-singleton dimension {dim}")
    if np.broadcast_shapes(trailing, tuple(s.shape[1:])) != trailing:
        slot = [int(s.shape[0]), *trailing]
        wide = [int(s.shape[0]), *np.broadcast_shapes(trailing, tuple(s.shape[1:]))]
        raise RuntimeError(f"output with shape {slot} doesn't match the broadcast shape "
                           f"{wide}")
    if tuple(s.shape[1:]) != trailing:
        s = s.expand(s.shape[0], *trailing)
    return s if s.dtype == dtype else s.to(dtype)


def pad_sequence(sequences: Iterable[Tensor], batch_first: bool = False,
                 padding_value: float = 0.0, padding_side: str = "right") -> Tensor:
    """Stack sequences of shapes (L_i, *) into (max L, B, *) (or (B, max L, *)), padded
    with ``padding_value`` on the right (or the left), in the first sequence's dtype."""
    if padding_side not in ("left", "right"):
        raise RuntimeError(f"Expected padding_side to be one of left or right, but got "
                           f"{padding_side}.")
    seqs = list(sequences)
    if not seqs:
        raise RuntimeError("received an empty list of sequences")
    longest = max(int(s.shape[0]) for s in seqs)
    trailing, dtype = tuple(seqs[0].shape[1:]), seqs[0].dtype
    padded = []
    for s in seqs:
        s = _like_first(s, trailing, dtype)
        missing = longest - int(s.shape[0])
        if missing:
            filler = _factories.full((missing, *s.shape[1:]), padding_value, dtype=s.dtype,
                                     device=s.device)
            s = FUNCTIONS["cat"]([s, filler] if padding_side == "right" else [filler, s], 0)
        padded.append(s)
    return FUNCTIONS["stack"](padded, 0 if batch_first else 1)


def pack_sequence(sequences: Sequence[Tensor], enforce_sorted: bool = True) -> PackedSequence:
    """Pack a list of sequences (L_i, *) (by decreasing length unless not
    ``enforce_sorted``)."""
    if not len(sequences):
        raise RuntimeError("received an empty list of sequences")
    lengths = [int(s.shape[0]) for s in sequences]
    return pack_padded_sequence(pad_sequence(sequences), lengths,
                                enforce_sorted=enforce_sorted)


def unpad_sequence(padded_sequences: Tensor, lengths: Any,
                   batch_first: bool = False) -> list[Tensor]:
    """The list of sequences a padded batch holds, each cut to its length."""
    if not batch_first:
        padded_sequences = padded_sequences.transpose(0, 1)
    return [padded_sequences[i, :int(n)] for i, n in enumerate(_host_ints(lengths))]


def unpack_sequence(packed_sequences: PackedSequence) -> list[Tensor]:
    """The list of sequences a PackedSequence holds, in their original order."""
    padded, lengths = pad_packed_sequence(packed_sequences, batch_first=True)
    return unpad_sequence(padded, lengths, batch_first=True)
