"""``torch.nn.utils.skip_init``: a module built without running its initialisers."""
from __future__ import annotations

import inspect
from typing import Any

from funcgrad.torch.nn.module import Module

__all__ = ["skip_init"]


def skip_init(module_cls: type, *args: Any, **kwargs: Any) -> Module:
    """``module_cls(*args, **kwargs)`` with its parameters and buffers left uninitialised:
    the module is built on the meta device, where initialisers cost nothing, then given
    fresh memory on ``device`` (cpu unless given) with `Module.to_empty`. funcgrad's
    uninitialised memory holds zeros. The module must take a ``device`` argument and pass
    it to the tensors it makes, as PyTorch requires."""
    if not (isinstance(module_cls, type) and issubclass(module_cls, Module)):
        raise RuntimeError(f"Expected a Module; got {module_cls}")
    if "device" not in inspect.signature(module_cls).parameters:
        raise RuntimeError("Module must support a 'device' arg to skip initialization")
    device = kwargs.pop("device", "cpu")
    return module_cls(*args, device="meta", **kwargs).to_empty(device=device)
