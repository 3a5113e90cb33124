"""``torch.save`` / ``torch.load``: PyTorch's checkpoint formats, safe by default.

``save`` writes the zip archive PyTorch 2.x writes (real ``torch.load`` reads it, with
``weights_only=True``); tensors viewing one storage are saved once and load as views of one
storage again. ``load`` reads that archive (written by the facade or by real PyTorch, no
PyTorch needed) and PyTorch's legacy format. As in PyTorch 2.6 and later, ``load`` unpickles
through an allow-list (``weights_only=True``, the default): a file someone hands you cannot
run code; ``weights_only=False`` is the explicit opt-in to full pickle, for files you trust.
A ``.safetensors`` path loads through `funcgrad.torch.safetensors`.
"""
from __future__ import annotations

import os
import pickle
import warnings
import zipfile
import zlib
from typing import Any

from funcgrad.torch import safetensors
from funcgrad.torch.serialization._format import DOCS_MESSAGE, UNSAFE_MESSAGE
from funcgrad.torch.serialization._reader import (MapLocationError, read_checkpoint,
                                                  restorer, source_name, zip_pickle_bytes)
from funcgrad.torch.serialization._rebuild import CorruptCheckpoint
from funcgrad.torch.serialization._unpickler import (FullUnpickler, RefusedGlobal,
                                                     WeightsUnpickler, add_safe_globals,
                                                     clear_safe_globals, get_safe_globals,
                                                     safe_globals, unsafe_globals_in)
from funcgrad.torch.serialization._writer import write_legacy, write_zip

__all__ = ["save", "load", "add_safe_globals", "safe_globals", "get_safe_globals",
           "clear_safe_globals", "get_unsafe_globals_in_checkpoint", "DEFAULT_PROTOCOL"]

DEFAULT_PROTOCOL = 2
_TRUE = ("1", "y", "yes", "true")


def save(obj: Any, f: Any, pickle_module: Any = pickle, pickle_protocol: int = DEFAULT_PROTOCOL,
         _use_new_zipfile_serialization: bool = True,
         _disable_byteorder_record: bool = False) -> None:
    """Write ``obj`` (tensors, state dicts, containers of them, or any picklable object) to
    a path or a binary file, as PyTorch's ``torch.save`` does."""
    if pickle_module is not pickle:
        raise ValueError("funcgrad.torch.save writes with its own pickler: pass no "
                         "pickle_module")
    opened = open(f, "wb") if isinstance(f, (str, os.PathLike)) else f
    try:
        if _use_new_zipfile_serialization:
            prefix = (os.path.splitext(os.path.basename(os.fspath(f)))[0]
                      if isinstance(f, (str, os.PathLike)) else "archive")
            write_zip(obj, opened, pickle_protocol, prefix or "archive")
        else:
            write_legacy(obj, opened, pickle_protocol)
    finally:
        if opened is not f:
            opened.close()


def load(f: Any, map_location: Any = None, pickle_module: Any = None, *,
         weights_only: bool | None = None, mmap: bool | None = None,
         **pickle_load_args: Any) -> Any:
    """Read what ``torch.save`` wrote (the facade's or PyTorch's) from a path or a binary
    file. ``weights_only`` (default True) allows only tensors, containers, numbers and the
    globals `add_safe_globals` allows; ``map_location`` moves the storages (a device, its
    name, a dict of names, or ``(storage, location) -> storage``); ``mmap=True`` maps the
    storages from the file (copy-on-write) instead of reading them."""
    weights_only = _weights_only(weights_only)
    if weights_only and pickle_module is not None:
        raise RuntimeError("Can not safely load weights when explicit pickle_module is "
                           "specified")
    if pickle_load_args and weights_only:
        warnings.warn("pickle_load_args only works if `weights_only=False`.", stacklevel=2)
    if isinstance(f, (str, os.PathLike)) and os.fspath(f).endswith(".safetensors"):
        return _load_safetensors(os.fspath(f), map_location)
    encoding = pickle_load_args.pop("encoding", "utf-8")
    if weights_only:
        def unpickler(file: Any, persistent_load: Any) -> pickle.Unpickler:
            return WeightsUnpickler(file, persistent_load, encoding=encoding)
    else:
        def unpickler(file: Any, persistent_load: Any) -> pickle.Unpickler:
            return FullUnpickler(file, persistent_load, encoding=encoding,
                                 **pickle_load_args)
    if mmap and not isinstance(f, (str, os.PathLike)):
        raise ValueError("f must be a file path in order to use the mmap argument")
    restore = restorer(map_location)
    try:
        return read_checkpoint(f, unpickler, restore, bool(mmap))
    except MapLocationError:
        raise
    except RefusedGlobal as e:
        raise pickle.UnpicklingError(_weights_only_message(str(e))) from None
    except (CorruptCheckpoint, zipfile.BadZipFile, zlib.error, NotImplementedError) as e:
        raise CorruptCheckpoint(f"{source_name(f)} cannot be loaded: {e}. The file is "
                                "truncated or corrupted, or was not written by torch.save."
                                ) from None
    except (pickle.UnpicklingError, EOFError, MemoryError, OverflowError, ValueError,
            TypeError, KeyError, IndexError, AttributeError, UnicodeDecodeError) as e:
        raise pickle.UnpicklingError(
            f"{source_name(f)} cannot be loaded: unpickling failed ({type(e).__name__}: "
            f"{e or 'no details'}). The file may be truncated or corrupted, or not written "
            "by torch.save.") from e


def _weights_only(weights_only: bool | None) -> bool:
    """PyTorch's choice: True unless said otherwise; the two environment variables
    ``TORCH_FORCE_WEIGHTS_ONLY_LOAD`` and ``TORCH_FORCE_NO_WEIGHTS_ONLY_LOAD`` override."""
    force = os.getenv("TORCH_FORCE_WEIGHTS_ONLY_LOAD", "0").lower() in _TRUE
    force_no = os.getenv("TORCH_FORCE_NO_WEIGHTS_ONLY_LOAD", "0").lower() in _TRUE
    if force and force_no:
        raise RuntimeError("Only one of `TORCH_FORCE_WEIGHTS_ONLY_LOAD` or "
                           "`TORCH_FORCE_NO_WEIGHTS_ONLY_LOAD` should be set, but both were "
                           "set.")
    if force:
        return True
    if force_no and weights_only is None:
        warnings.warn("Environment variable TORCH_FORCE_NO_WEIGHTS_ONLY_LOAD detected, since "
                      "the`weights_only` argument was not explicitly passed to `torch.load`, "
                      "forcing weights_only=False.", UserWarning, stacklevel=3)
        return False
    return True if weights_only is None else bool(weights_only)


def _weights_only_message(message: str) -> str:
    """PyTorch's wording around a weights-only refusal."""
    if "was not an allowed global by default" in message:
        return ("Weights only load failed. This file can still be loaded, to do so you have "
                "two options, \033[1mdo those steps only if you trust the source of the "
                f"checkpoint\033[0m. \n\t(1) {UNSAFE_MESSAGE}\n\t(2) Alternatively, to load "
                "with `weights_only=True` please check the recommended steps in the "
                "following error message.\n\tWeightsUnpickler error: " + message
                + DOCS_MESSAGE)
    return f"Weights only load failed. {UNSAFE_MESSAGE}\n\n\n{message}{DOCS_MESSAGE}"


def get_unsafe_globals_in_checkpoint(f: Any) -> list[str]:
    """The globals checkpoint ``f`` names that a ``weights_only`` load would refuse (read
    from the pickle's opcodes; nothing in the file is run)."""
    return unsafe_globals_in(zip_pickle_bytes(f))


def _load_safetensors(path: str, map_location: Any) -> Any:
    if isinstance(map_location, dict) or callable(map_location):
        raise RuntimeError("Loading safetensors file with dict or callable map_location is "
                           "not supported. Use a device string or torch.device instead.")
    return safetensors.load_file(path, device=str(map_location or "cpu"))
