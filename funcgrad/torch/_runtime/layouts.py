"""`torch.layout`: how a tensor's values are laid out (``torch.strided`` for dense tensors,
``torch.sparse_coo`` / ``torch.sparse_csr`` for the sparse tensors of `funcgrad.torch.sparse`);
and `torch.memory_format`: the order of a dense tensor's elements in memory
(``contiguous_format``, ``channels_last``: NHWC strides for an NCHW tensor, ...).

The other layouts PyTorch names exist as values, so that code comparing layouts runs; the
facade builds tensors of the first three only.
"""
from __future__ import annotations

__all__ = ["layout", "strided", "sparse_coo", "sparse_csr", "sparse_csc", "sparse_bsr",
           "sparse_bsc", "jagged", "LAYOUTS", "memory_format", "contiguous_format",
           "channels_last", "channels_last_3d", "preserve_format", "legacy_contiguous_format",
           "dims_order"]


class _Named:
    """A constant printed as PyTorch's (``torch.strided``), one object per name (so that
    ``is`` compares it, unpickled ones included)."""

    __slots__ = ("name",)
    _registry: dict

    def __init__(self, name: str) -> None:
        self.name = name
        type(self)._registry[name] = self

    def __repr__(self) -> str:
        return f"torch.{self.name}"

    def __reduce__(self) -> tuple:
        return (_by_name, (type(self), self.name))


def _by_name(kind: type, name: str) -> "_Named":
    return kind._registry[name]


class layout(_Named):
    """A tensor layout: strided (dense) or one of the sparse ones."""

    __slots__ = ()
    _registry: dict = {}


strided, sparse_coo, sparse_csr, sparse_csc, sparse_bsr, sparse_bsc, _mkldnn, jagged = (
    layout(name) for name in ("strided", "sparse_coo", "sparse_csr", "sparse_csc",
                              "sparse_bsr", "sparse_bsc", "_mkldnn", "jagged"))
LAYOUTS = layout._registry


class memory_format(_Named):
    """The order of a dense tensor's elements in memory."""

    __slots__ = ()
    _registry: dict = {}


contiguous_format, channels_last, channels_last_3d, preserve_format, \
    legacy_contiguous_format = (memory_format(name) for name in (
        "contiguous_format", "channels_last", "channels_last_3d", "preserve_format",
        "legacy_contiguous_format"))

def dims_order(fmt: memory_format | None, ndim: int) -> tuple | None:
    """The order of the dims from outermost to innermost in memory for format ``fmt`` of
    an ``ndim``-dim tensor (channels last: N, spatial dims, C), None for row-major or
    ``preserve_format``; PyTorch's error for a channels-last format of another rank."""
    if fmt is channels_last or fmt is channels_last_3d:
        want = 4 if fmt is channels_last else 5
        if ndim != want:
            raise RuntimeError(f"required rank {want} tensor to use {fmt.name} format")
        return (0, *range(2, ndim), 1)
    return None
