"""`torch.layout`: how a tensor's values are laid out (``torch.strided`` for dense tensors,
``torch.sparse_coo`` / ``torch.sparse_csr`` for the sparse tensors of `funcgrad.torch.sparse`).

The other layouts PyTorch names exist as values, so that code comparing layouts runs; the
facade builds tensors of the first three only.
"""
from __future__ import annotations

__all__ = ["layout", "strided", "sparse_coo", "sparse_csr", "sparse_csc", "sparse_bsr",
           "sparse_bsc", "jagged", "LAYOUTS"]


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
