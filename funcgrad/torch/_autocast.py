"""Autocast's state and its hook on the facade ops (the public API is `funcgrad.torch.amp`).

The state is per thread, as PyTorch's: for each device type ("cpu", "cuda") whether
autocast is on and its low dtype, whether casts are cached, how deep the regions nest.
`autocast_op(name)` is applied where an op is declared (`_ops_basic.op` does it for every
op table entry; the nn functions carry it as a decorator); it returns the op itself when
no device type lists ``name`` (`_autocast_lists`), so unlisted ops cost nothing. A listed
op checks one thread-local flag; only inside an enabled region does it cast its floating
tensor arguments (differentiably, with ``Tensor.to``) by its policy and run with autocast
excluded, so that the ops it is made of are not cast again (PyTorch's
ExcludeDispatchKeyGuard). A call with an explicit ``dtype=`` is not eligible, as in
PyTorch.

Cast cache: inside the outermost region, the low-precision cast of a float32 leaf that
requires grad (a parameter) is made once and reused by every op that reads it (while the
leaf is unchanged); the cache is emptied when the outermost region exits.
"""
from __future__ import annotations

import contextlib
import functools
import inspect
import threading
from typing import Any, Callable, Iterator

from funcgrad.torch._runtime import dtypes as D
from funcgrad.torch._autocast_lists import BANNED_BINARY_CROSS_ENTROPY, listed, policy_of
from funcgrad.torch._tensor import Tensor, tensors_in
from funcgrad.torch._runtime import grad_mode

__all__ = ["autocast_op", "state", "excluded", "set_enabled", "is_enabled", "get_dtype",
           "set_dtype", "DEVICE_TYPES", "cast_tree"]

DEVICE_TYPES = ("cpu", "cuda")


class _State(threading.local):
    def __init__(self) -> None:
        self.enabled = {"cpu": False, "cuda": False}
        self.dtype = {"cpu": D.bfloat16, "cuda": D.float16}
        self.cache_enabled = True
        self.nesting = 0
        self.excluded = 0
        self.active = False  # some device type enabled and not excluded: the one check
        self.cache: dict = {}

    def refresh(self) -> None:
        self.active = not self.excluded and (self.enabled["cpu"] or self.enabled["cuda"])


state = _State()


def _check_device_type(device_type: str) -> str:
    if device_type not in DEVICE_TYPES:
        raise RuntimeError(f"User specified an unsupported autocast device_type "
                           f"'{device_type}'")
    return device_type


def is_enabled(device_type: str) -> bool:
    return state.enabled[_check_device_type(device_type)]


def set_enabled(device_type: str, enabled: bool) -> None:
    state.enabled[_check_device_type(device_type)] = bool(enabled)
    state.refresh()


def get_dtype(device_type: str) -> D.dtype:
    return state.dtype[_check_device_type(device_type)]


def set_dtype(device_type: str, dtype: D.dtype) -> None:
    state.dtype[_check_device_type(device_type)] = D.to_torch_dtype(dtype)


@contextlib.contextmanager
def excluded() -> Iterator[None]:
    """Ops inside run as if autocast were off (what a listed op does for its body)."""
    state.excluded += 1
    state.active = False
    try:
        yield
    finally:
        state.excluded -= 1
        state.refresh()


# -- casting -------------------------------------------------------------------------------

def _eligible(x: Any, device_type: str) -> bool:
    """A floating tensor on ``device_type`` other than float64 (which autocast leaves)."""
    if not isinstance(x, Tensor):
        return False
    d = x.dtype
    return d.is_floating_point and d is not D.float64 and x.device.type == device_type


def _cast(x: Tensor, dtype: D.dtype) -> Tensor:
    if x.dtype is dtype:
        return x
    cacheable = (state.cache_enabled and x.is_leaf and x.requires_grad
                 and x.dtype is D.float32 and dtype is not D.float32)
    if not cacheable:
        return x.to(dtype)
    key = (id(x), dtype, grad_mode.state.enabled)  # a cast made under no_grad has no graph
    hit = state.cache.get(key)
    if hit is not None and hit[0] is x and hit[1] == x._version:
        return hit[2]
    out = x.to(dtype)
    state.cache[key] = (x, x._version, out)
    return out


def cast_tree(value: Any, device_type: str, dtype: D.dtype) -> Any:
    """``value`` with its eligible tensors (inside lists, tuples and dicts too) cast."""
    if isinstance(value, Tensor):
        return _cast(value, dtype) if _eligible(value, device_type) else value
    if isinstance(value, (list, tuple)):
        return type(value)(cast_tree(v, device_type, dtype) for v in value)
    if isinstance(value, dict):
        return {k: cast_tree(v, device_type, dtype) for k, v in value.items()}
    return value


def _widest(tensors: list, device_type: str) -> D.dtype:
    """PyTorch's promote policy, argument by argument: float32 once an eligible argument is
    float32, else the low dtype; another 16-bit dtype before any float32 is an error
    (float64 arguments are left alone and do not count)."""
    low = state.dtype[device_type]
    out = low
    for t in tensors:
        if not _eligible(t, device_type):
            continue
        if out is D.float32 or t.dtype is D.float32:
            out = D.float32
        elif t.dtype is not low:
            raise RuntimeError("Unexpected floating ScalarType in at::autocast::prioritize")
    return out


def _autocast_call(name: str, fn: Callable, dtype_at: int | None, args: tuple,
                   kwargs: dict) -> Any:
    tensors = list(tensors_in((*args, *kwargs.values())))
    if not tensors:
        return fn(*args, **kwargs)
    device_type = tensors[0].device.type
    explicit = kwargs.get("dtype") if dtype_at is None or len(args) <= dtype_at else \
        args[dtype_at]
    if not state.enabled.get(device_type) or explicit is not None:
        return fn(*args, **kwargs)
    policy = policy_of(device_type, name, args, kwargs)
    if policy is None:
        return fn(*args, **kwargs)
    if policy == "banned":
        raise RuntimeError(BANNED_BINARY_CROSS_ENTROPY)
    dtype = {"lower": state.dtype[device_type], "fp32": D.float32}.get(policy) or _widest(
        tensors, device_type)
    args = cast_tree(args, device_type, dtype)
    kwargs = cast_tree(kwargs, device_type, dtype)
    with excluded():
        return fn(*args, **kwargs)


def _dtype_position(signature_of: Callable) -> int | None:
    try:
        params = list(inspect.signature(signature_of).parameters.values())
    except (TypeError, ValueError):
        return None
    for i, p in enumerate(params):
        if p.name == "dtype":
            return i if p.kind is p.POSITIONAL_OR_KEYWORD else None
    return None


def autocast_op(name: str, signature_of: Callable | None = None) -> Callable:
    """Decorator for the op ``name``: the op itself when no autocast list has it, else
    the op under autocast's policy for it. ``signature_of``: the function whose
    parameters the op takes (to find a positional ``dtype``), when not the op itself."""
    def decorate(fn: Callable) -> Callable:
        if not listed(name):
            return fn
        dtype_at = _dtype_position(signature_of or fn)

        @functools.wraps(fn)
        def op(*args: Any, **kwargs: Any) -> Any:
            if not state.active:
                return fn(*args, **kwargs)
            return _autocast_call(name, fn, dtype_at, args, kwargs)
        return op
    return decorate
