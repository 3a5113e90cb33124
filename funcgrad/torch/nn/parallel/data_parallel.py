"""`DataParallel`: PyTorch's single-process multi-GPU wrapper.

PyTorch splits each batch over ``device_ids``, runs a replica of the module on each GPU
and gathers the outputs on ``output_device``; without a GPU it just calls the module. The
result is the module's result on the whole batch either way (the replicas share the
parameters), so here the whole batch runs on ``device_ids[0]`` and the output is moved to
``output_device``: the same values and gradients, without the speed-up. Without a GPU the
wrapper calls the module, as PyTorch's does.
"""
from __future__ import annotations

from typing import Any, Sequence

from funcgrad.torch import cuda
from funcgrad.torch._runtime import dtypes as D
from funcgrad.torch._tensor import Tensor
from funcgrad.torch.nn.module import Module

__all__ = ["DataParallel"]


def _index(d: Any) -> int:
    return d if isinstance(d, int) else (D.device(d).index or 0)


def _moved(value: Any, device: D.device) -> Any:
    """``value`` (tensors nested in tuples, lists and dicts) on ``device``."""
    if isinstance(value, Tensor):
        return value.to(device)
    if isinstance(value, (tuple, list)):
        return type(value)(_moved(v, device) for v in value)
    if isinstance(value, dict):
        return {k: _moved(v, device) for k, v in value.items()}
    return value


class DataParallel(Module):
    """``DataParallel(module, device_ids=None, output_device=None, dim=0)``."""

    def __init__(self, module: Module, device_ids: Sequence[Any] | None = None,
                 output_device: Any = None, dim: int = 0) -> None:
        super().__init__()
        self.module = module
        if not cuda.is_available():
            self.device_ids: list = []
            return
        ids = list(range(cuda.device_count())) if device_ids is None else device_ids
        self.dim = dim
        self.device_ids = [_index(d) for d in ids]
        self.output_device = _index(self.device_ids[0] if output_device is None
                                    else output_device)
        self.src_device_obj = D.device("cuda", self.device_ids[0])
        self.module.to(self.src_device_obj)

    def forward(self, *inputs: Any, **kwargs: Any) -> Any:
        if not self.device_ids:
            return self.module(*inputs, **kwargs)
        for t in [*self.module.parameters(), *self.module.buffers()]:
            if t.device != self.src_device_obj:
                raise RuntimeError("module must have its parameters and buffers on device "
                                   f"{self.src_device_obj} (device_ids[0]) but found one of "
                                   f"them on device: {t.device}")
        out = self.module(*_moved(inputs, self.src_device_obj),
                          **_moved(kwargs, self.src_device_obj))
        return _moved(out, D.device("cuda", self.output_device))
