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


class layout:
    """A layout, printed and compared by name as PyTorch's (``torch.strided``)."""

    __slots__ = ("name",)

    def __init__(self, name: str) -> None:
        self.name = name

    def __repr__(self) -> str:
        return f"torch.{self.name}"

    def __reduce__(self) -> tuple:
        return (_by_name, (self.name,))


strided, sparse_coo, sparse_csr, sparse_csc, sparse_bsr, sparse_bsc, _mkldnn, jagged = (
    layout(name) for name in ("strided", "sparse_coo", "sparse_csr", "sparse_csc",
                              "sparse_bsr", "sparse_bsc", "_mkldnn", "jagged"))
LAYOUTS = {x.name: x for x in (strided, sparse_coo, sparse_csr, sparse_csc, sparse_bsr,
                               sparse_bsc, _mkldnn, jagged)}


def _by_name(name: str) -> layout:
    return LAYOUTS[name]


class memory_format:
    """A memory format, printed and compared by name as PyTorch's."""

    __slots__ = ("name",)

    def __init__(self, name: str) -> None:
        self.name = name

    def __repr__(self) -> str:
        return f"torch.{self.name}"

    def __reduce__(self) -> tuple:
        return (_format_by_name, (self.name,))


contiguous_format, channels_last, channels_last_3d, preserve_format, \
    legacy_contiguous_format = (memory_format(name) for name in (
        "contiguous_format", "channels_last", "channels_last_3d", "preserve_format",
        "legacy_contiguous_format"))
_FORMATS = {f.name: f for f in (contiguous_format, channels_last, channels_last_3d,
                                preserve_format, legacy_contiguous_format)}


def _format_by_name(name: str) -> memory_format:
    return _FORMATS[name]


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
