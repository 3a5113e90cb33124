"""torch.nn.functional.linear (its own module: the attention functions build on it)."""
from __future__ import annotations

from funcgrad.torch._ops_basic import FUNCTIONS, METHODS
from funcgrad.torch._tensor import Tensor
from funcgrad.torch._autocast import autocast_op

__all__ = ["linear"]


@autocast_op("linear")
def linear(input: Tensor, weight: Tensor, bias: Tensor | None = None) -> Tensor:
    """``input @ weight.T + bias`` (AddmmBackward0 for a matrix input with bias)."""
    wt = FUNCTIONS["t"](weight)
    if bias is not None and input.ndim == 2:
        return FUNCTIONS["addmm"](bias, input, wt)
    if bias is not None and input.ndim != 2:
        lead = tuple(input.shape[:-1])
        flat = FUNCTIONS["addmm"](bias, METHODS["reshape"](input, -1, input.shape[-1]), wt)
        return METHODS["view"](flat, *lead, weight.shape[0])
    out = FUNCTIONS["matmul"](input, wt)
    return out if bias is None else out + bias
