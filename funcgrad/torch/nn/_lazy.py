"""Lazy modules: LazyLinear, LazyConv{1,2,3}d, LazyConvTranspose{1,2,3}d,
LazyBatchNorm{1,2,3}d and LazyInstanceNorm{1,2,3}d take their input size (in_features,
in_channels, num_features) from the first input they see.

A lazy module is its target module built with that size 0, whose size-dependent
parameters and buffers are then replaced by ``UninitializedParameter``/``Buffer``
placeholders (every op refuses them, in PyTorch's words). The first call builds the real
module with the inferred size (so with PyTorch's initialisation), materialises each
placeholder and moves the real tensor's values into it, so an optimizer built before that
first call holds the live parameters, and turns the module into its target class
(PyTorch's ``cls_to_become``). Loading a state dict first materialises the placeholders
with the checkpoint's shapes (PyTorch's lazy load hook); the first call then keeps the
loaded values.
"""
from __future__ import annotations

from typing import Any, Callable

from funcgrad.torch._tensor import Tensor
from funcgrad.torch.nn import _conv_modules as C
from funcgrad.torch.nn import _norm_modules as N
from funcgrad.torch.nn.layers import Linear
from funcgrad.torch.nn.module import Module
from funcgrad.torch.nn.parameter import UninitializedBuffer, UninitializedParameter, is_lazy

__all__ = ["LazyLinear", "LazyConv1d", "LazyConv2d", "LazyConv3d", "LazyConvTranspose1d",
           "LazyConvTranspose2d", "LazyConvTranspose3d", "LazyBatchNorm1d", "LazyBatchNorm2d",
           "LazyBatchNorm3d", "LazyInstanceNorm1d", "LazyInstanceNorm2d",
           "LazyInstanceNorm3d"]

_MODULE_STATE = ("_parameters", "_buffers", "_modules", "_forward_hooks",
                 "_forward_pre_hooks", "_non_persistent", "training", "_lazy_args")


class _LazyMixin:
    """What every lazy module shares; ``_infer(input)`` gives the size to build with."""
    cls_to_become: type
    _infer: Callable[[Tensor], int]

    def _lazy_init(self, *args: Any, **kwargs: Any) -> None:
        self.cls_to_become.__init__(self, 0, *args, **kwargs)
        object.__setattr__(self, "_lazy_args", (args, kwargs))
        for store, placeholder in (("_parameters", UninitializedParameter),
                                   ("_buffers", UninitializedBuffer)):
            held = getattr(self, store)
            for name, value in held.items():
                # (as PyTorch's: every parameter, and the buffers but the step counter)
                if value is not None and (store == "_parameters" or value.is_floating_point()):
                    held[name] = placeholder(value.requires_grad, value.device, value.dtype)

    def _placeholders(self) -> list:
        return [(store, name, value) for store in ("_parameters", "_buffers")
                for name, value in getattr(self, store).items() if is_lazy(value)]

    def has_uninitialized_params(self) -> bool:
        return bool(self._placeholders())

    def _upgrade_state(self, state_dict: dict, prefix: str, version: int | None) -> None:
        """Before a load: materialise the placeholders with the checkpoint's shapes."""
        for _, name, value in self._placeholders():
            loaded = state_dict.get(prefix + name)
            if loaded is not None and not is_lazy(loaded):
                value.materialize(loaded.shape)
        super()._upgrade_state(state_dict, prefix, version)

    def reset_parameters(self) -> None:
        """Nothing to initialise until the first input gives the shapes."""
        if not hasattr(self, "_lazy_args"):  # (called by the target's __init__)
            return
        self.cls_to_become.reset_parameters(self)

    def initialize_parameters(self, input: Tensor) -> None:
        """Shape and initialise the placeholders for ``input``, in place (those a state
        dict loaded already keep their values)."""
        args, kwargs = self._lazy_args
        real = self.cls_to_become(type(self)._infer(input), *args, **kwargs)
        for store, name, held in self._placeholders():
            value = getattr(real, store)[name]
            held.materialize(value.shape)
            held.data = value.to(device=held.device, dtype=held.dtype
                                 if held.dtype.is_floating_point else value.dtype)
        for key, value in vars(real).items():
            if key not in _MODULE_STATE:
                object.__setattr__(self, key, value)
        object.__delattr__(self, "_lazy_args")

    def forward(self, input: Tensor, *args: Any, **kwargs: Any) -> Any:
        self.initialize_parameters(input)
        self.__class__ = self.cls_to_become
        return self.forward(input, *args, **kwargs)


def _lazy(target: type, infer: Callable[[Tensor], int], defaults: dict | None = None) -> type:
    """The lazy variant of ``target``: its constructor is target's without the first
    argument (with ``defaults`` where PyTorch's lazy class has other defaults)."""
    def __init__(self: Module, *args: Any, **kwargs: Any) -> None:
        self._lazy_init(*args, **{**(defaults or {}), **kwargs})
    name = "Lazy" + target.__name__
    return type(name, (_LazyMixin, target), {
        "__init__": __init__, "cls_to_become": target, "_infer": staticmethod(infer),
        "__doc__": f"{target.__name__} whose first size is taken from the first input.",
        "__module__": __name__})


def _last(input: Tensor) -> int:
    if input.ndim == 0:
        raise RuntimeError("LazyLinear: the input must have at least one dimension")
    return int(input.shape[-1])


def _channels(spatial: int) -> Callable[[Tensor], int]:
    """Channels: dim 0 of an unbatched input (spatial + 1 dims), else dim 1."""
    def infer(input: Tensor) -> int:
        if input.ndim < spatial + 1:
            raise ValueError(f"expected an input with at least {spatial + 1} dimensions "
                             f"(channels first), got {input.ndim}D")
        return int(input.shape[0] if input.ndim == spatial + 1 else input.shape[1])
    return infer


def _features(input: Tensor) -> int:
    if input.ndim < 2:
        raise ValueError(f"expected 2D or more input (got {input.ndim}D input)")
    return int(input.shape[1])


_NORM_DEFAULTS = {"affine": True, "track_running_stats": True}

LazyLinear = _lazy(Linear, _last)
LazyConv1d = _lazy(C.Conv1d, _channels(1))
LazyConv2d = _lazy(C.Conv2d, _channels(2))
LazyConv3d = _lazy(C.Conv3d, _channels(3))
LazyConvTranspose1d = _lazy(C.ConvTranspose1d, _channels(1))
LazyConvTranspose2d = _lazy(C.ConvTranspose2d, _channels(2))
LazyConvTranspose3d = _lazy(C.ConvTranspose3d, _channels(3))
LazyBatchNorm1d = _lazy(N.BatchNorm1d, _features, _NORM_DEFAULTS)
LazyBatchNorm2d = _lazy(N.BatchNorm2d, _features, _NORM_DEFAULTS)
LazyBatchNorm3d = _lazy(N.BatchNorm3d, _features, _NORM_DEFAULTS)
LazyInstanceNorm1d = _lazy(N.InstanceNorm1d, _channels(1), _NORM_DEFAULTS)
LazyInstanceNorm2d = _lazy(N.InstanceNorm2d, _channels(2), _NORM_DEFAULTS)
LazyInstanceNorm3d = _lazy(N.InstanceNorm3d, _channels(3), _NORM_DEFAULTS)
