"""torch.nn.utils.parametrize: a tensor of a module computed from other parameters.

``register_parametrization(module, "weight", P)`` moves the weight into
``module.parametrizations.weight`` (a ParametrizationList holding ``original``, or
``original0``, ``original1``... when ``P.right_inverse`` splits it) and gives the module a
class ``Parametrized<Class>`` whose ``weight`` property computes ``P(*originals)`` on every
access; assigning to it goes through the right inverse. state_dict keys and reprs are
PyTorch's.
"""
from __future__ import annotations

from typing import Any

from funcgrad.torch._tensor import Tensor
from funcgrad.torch._runtime import grad_mode
from funcgrad.torch.nn._containers import ModuleDict, ModuleList
from funcgrad.torch.nn.module import Module
from funcgrad.torch.nn.parameter import Parameter

__all__ = ["register_parametrization", "remove_parametrizations", "is_parametrized",
           "ParametrizationList"]


class ParametrizationList(ModuleList):
    """The parametrizations of one tensor, and the original tensor(s) they start from."""

    def __init__(self, modules: list, original: Tensor, unsafe: bool = False) -> None:
        super().__init__(modules)
        self.unsafe = unsafe
        with grad_mode.no_grad():
            new: Any = original
            for module in reversed(list(self)):
                if hasattr(module, "right_inverse"):
                    new = module.right_inverse(new)
        requires_grad = original.requires_grad
        if isinstance(new, Tensor):
            self.is_tensor = True
            self.register_parameter("original", Parameter(new.detach(), requires_grad))
        else:
            self.is_tensor = False
            self.ntensors = len(new)
            for i, t in enumerate(new):
                self.register_parameter(f"original{i}", Parameter(t.detach(), requires_grad))

    def _originals(self) -> tuple:
        if self.is_tensor:
            return (self.original,)
        return tuple(getattr(self, f"original{i}") for i in range(self.ntensors))

    def right_inverse(self, value: Tensor) -> None:
        """Set the originals so that the parametrized tensor becomes ``value``."""
        with grad_mode.no_grad():
            for module in reversed(list(self)):
                if hasattr(module, "right_inverse"):
                    value = module.right_inverse(value)
            values = (value,) if self.is_tensor else tuple(value)
            for target, v in zip(self._originals(), values):
                target.copy_(v)

    def forward(self) -> Tensor:
        x = self[0](*self._originals())
        for module in list(self)[1:]:
            x = module(x)
        return x


def is_parametrized(module: Module, tensor_name: str | None = None) -> bool:
    """Whether ``module`` has parametrizations (for ``tensor_name``, if given)."""
    parametrizations = getattr(module, "parametrizations", None)
    if not isinstance(parametrizations, ModuleDict):
        return False
    return len(parametrizations) > 0 if tensor_name is None else \
        tensor_name in parametrizations


def _inject_property(module: Module, tensor_name: str) -> None:
    def get(self: Module) -> Tensor:
        return self.parametrizations[tensor_name]()

    def set_(self: Module, value: Tensor) -> None:
        self.parametrizations[tensor_name].right_inverse(value)
    setattr(type(module), tensor_name, property(get, set_))


def register_parametrization(module: Module, tensor_name: str, parametrization: Module, *,
                             unsafe: bool = False) -> Module:
    """Compute ``module.<tensor_name>`` as ``parametrization(original)`` from now on."""
    if is_parametrized(module, tensor_name):
        module.parametrizations[tensor_name].append(parametrization)
        return module
    if tensor_name not in module._parameters and tensor_name not in module._buffers:
        raise ValueError(f"Module '{module}' does not have a parameter, a buffer, or a "
                         f"parametrized element with name '{tensor_name}'")
    original = getattr(module, tensor_name)
    plist = ParametrizationList([parametrization], original, unsafe)
    delattr(module, tensor_name)
    if not is_parametrized(module):
        cls = type(module)
        module.__class__ = type(f"Parametrized{cls.__name__}", (cls,), {})
        module.parametrizations = ModuleDict()
    _inject_property(module, tensor_name)
    module.parametrizations[tensor_name] = plist
    return module


def remove_parametrizations(module: Module, tensor_name: str,
                            leave_parametrized: bool = True) -> Module:
    """Make ``module.<tensor_name>`` a Parameter again: its current parametrized value, or
    (``leave_parametrized=False``) the original of a one-tensor parametrization."""
    if not is_parametrized(module, tensor_name):
        raise ValueError(f"Module {module} does not have a parametrization on {tensor_name}")
    plist = module.parametrizations[tensor_name]
    if leave_parametrized:
        with grad_mode.no_grad():
            value = getattr(module, tensor_name)
    elif plist.is_tensor:
        value = plist.original
    else:
        raise ValueError("Cannot leave unparametrized (`leave_parametrized=False`) a tensor "
                         "that is parametrized in terms of a sequence of tensors.")
    delattr(type(module), tensor_name)
    del module.parametrizations[tensor_name]
    module.register_parameter(tensor_name, Parameter(value.detach(), value.requires_grad
                                                     or leave_parametrized))
    if not is_parametrized(module):
        delattr(module, "parametrizations")
        module.__class__ = type(module).__bases__[0]
    return module
