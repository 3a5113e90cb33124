"""``safetensors.torch`` on the facade's tensors: `save_file`, `load_file`, `save`, `load`.

The same names, checks and error texts as the ``safetensors`` package's torch module, so
code that saves a ``state_dict`` with it runs unchanged; the bytes are the package's (via
`funcgrad.safetensors`), so files go both ways between funcgrad and PyTorch.
"""
from __future__ import annotations

import os
from typing import Any

from funcgrad import safetensors as core
from funcgrad.torch._factories import from_numpy
from funcgrad.torch._tensor import Tensor

__all__ = ["save_file", "load_file", "save", "load"]


def _checked(tensors: Any) -> dict:
    """The host arrays to write, after ``safetensors.torch``'s checks of ``tensors``."""
    if not isinstance(tensors, dict):
        raise ValueError(f"Expected a dict of [str, torch.Tensor] but received "
                         f"{type(tensors)}")
    for k, v in tensors.items():
        if not isinstance(v, Tensor):
            raise ValueError(f"Key `{k}` is invalid, expected torch.Tensor but received "
                             f"{type(v)}")
    shared = _sharing(tensors)
    if shared:
        raise RuntimeError(
            "\n            Some tensors share memory, this will lead to duplicate memory on "
            "disk and potential differences when loading them again: "
            f"{shared}.\n            A potential way to correctly save your model is to use "
            "`save_model`.\n            More information at "
            "https://huggingface.co/docs/safetensors/torch_shared_tensors\n            ")
    for k, v in tensors.items():
        if not v.is_contiguous():
            raise ValueError(
                f"You are trying to save a non contiguous tensor: `{k}` which is not "
                "allowed. It either means you are trying to save tensors which are reference "
                "of each other in which case it's recommended to save only the full tensors, "
                "and reslice at load time, or simply call `.contiguous()` on your tensor to "
                "pack it before saving.")
    return {k: v.detach().numpy(force=True) for k, v in tensors.items()}


def _sharing(tensors: dict) -> list:
    """The groups of names whose tensors overlap in memory."""
    spans = sorted((t.untyped_storage().data_ptr(), t.data_ptr(),
                    t.data_ptr() + t.numel() * t.element_size(), name)
                   for name, t in tensors.items() if t.device.type != "meta" and t.numel())
    groups: list = []
    for i, (storage, start, end, name) in enumerate(spans):
        if i and spans[i - 1][0] == storage and start < group_end:
            groups[-1].add(name)
            group_end = max(group_end, end)
        else:
            groups.append({name})
            group_end = end
    return [g for g in groups if len(g) > 1]


def save(tensors: dict[str, Tensor], metadata: dict[str, str] | None = None) -> bytes:
    """The safetensors bytes of ``tensors``."""
    return core.save(_checked(tensors), metadata)


def save_file(tensors: dict[str, Tensor], filename: str | os.PathLike,
              metadata: dict[str, str] | None = None) -> None:
    """Write ``tensors`` (contiguous, none sharing memory) to ``filename``."""
    core.save_file(_checked(tensors), filename, metadata)


def _tensors(arrays: dict, device: Any) -> dict[str, Tensor]:
    out = {k: from_numpy(a) for k, a in arrays.items()}
    if str(device) != "cpu":
        out = {k: t.to(device) for k, t in out.items()}
    return out


def load(data: bytes) -> dict[str, Tensor]:
    """The tensors of safetensors bytes."""
    return _tensors(core.read_arrays(data), "cpu")


def load_file(filename: str | os.PathLike, device: Any = "cpu") -> dict[str, Tensor]:
    """The tensors of safetensors file ``filename``, on ``device``."""
    return _tensors(core.read_file(filename), device)
