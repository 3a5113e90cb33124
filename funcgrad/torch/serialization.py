"""torch.save / torch.load: pickle, with tensors stored as numpy arrays.

Enough for ``torch.save(model.state_dict(), path)`` and back; ``map_location`` moves the
loaded tensors to a device.
"""
from __future__ import annotations

import os
import pickle
from typing import Any

from funcgrad.torch._tensor import Tensor

__all__ = ["save", "load"]


def save(obj: Any, f: Any, pickle_protocol: int = 2) -> None:
    """Pickle ``obj`` (state dicts, tensors, containers of them) to a path or file."""
    if isinstance(f, (str, os.PathLike)):
        with open(f, "wb") as fh:
            pickle.dump(obj, fh, protocol=pickle_protocol)
    else:
        pickle.dump(obj, f, protocol=pickle_protocol)


def load(f: Any, map_location: Any = None, weights_only: bool = False, **kwargs: Any) -> Any:
    """Unpickle what `save` wrote; with ``map_location`` move every tensor there."""
    if isinstance(f, (str, os.PathLike)):
        with open(f, "rb") as fh:
            obj = pickle.load(fh)
    else:
        obj = pickle.load(f)
    if map_location is None:
        return obj
    return _move(obj, map_location)


def _move(obj: Any, device: Any) -> Any:
    if isinstance(obj, Tensor):
        return obj.to(device)
    if isinstance(obj, dict):
        return type(obj)((k, _move(v, device)) for k, v in obj.items())
    if isinstance(obj, (list, tuple)):
        return type(obj)(_move(v, device) for v in obj)
    return obj
