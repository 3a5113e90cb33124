"""Containers: Sequential, ModuleList, ModuleDict, ParameterList, ParameterDict.

List-like containers register their items under the names "0", "1", ... (renumbered
after a deletion or insertion), so ``named_parameters`` and ``state_dict`` keys are
PyTorch's; ModuleList prints runs of identical modules as ``(0-2): 3 x Linear(...)``;
the parameter containers turn plain tensors into Parameters and print their dtype and
size, as PyTorch does (a plain dict given to ParameterDict is taken in sorted key order).
"""
from __future__ import annotations

from collections import OrderedDict
from typing import Any, Iterable, Iterator, Mapping

from funcgrad.torch._tensor import Tensor
from funcgrad.torch.nn.module import Module, _addindent
from funcgrad.torch.nn.parameter import Parameter

__all__ = ["Sequential", "ModuleList", "ModuleDict", "ParameterList", "ParameterDict"]


def _index(idx: Any, n: int) -> int:
    """A non-negative position in a container of ``n`` items (PyTorch's IndexError)."""
    idx = int(idx)
    if not -n <= idx < n:
        raise IndexError(f"index {idx} is out of range")
    return idx % n


class _ListMixin:
    """Registration helpers of the containers whose items are named by position."""

    _store = "_modules"

    def _items(self) -> list:
        return list(getattr(self, self._store).values())

    def _reset(self, items: list) -> None:
        store = getattr(self, self._store)
        store.clear()
        for i, item in enumerate(items):
            store[str(i)] = item

    def __len__(self) -> int:
        return len(getattr(self, self._store))

    def __getitem__(self, idx: Any) -> Any:
        """An item by position, or a container of the same kind for a slice."""
        items = self._items()
        if isinstance(idx, slice):
            return type(self)(items[idx])
        return items[_index(idx, len(items))]


class Sequential(_ListMixin, Module):
    """Modules applied in order; index, slice, iterate, append, insert, pop like a list."""

    def __init__(self, *args: Any) -> None:
        super().__init__()
        if len(args) == 1 and isinstance(args[0], OrderedDict):
            for key, module in args[0].items():
                self.add_module(key, module)
        else:
            for idx, module in enumerate(args):
                self.add_module(str(idx), module)

    def forward(self, input: Any) -> Any:
        for module in self._modules.values():
            input = module(input)
        return input

    def __getitem__(self, idx: Any) -> Any:
        items = list(self._modules.items())
        if isinstance(idx, slice):
            return type(self)(OrderedDict(items[idx]))
        return items[_index(idx, len(items))][1]

    def __setitem__(self, idx: int, module: Module) -> None:
        key = list(self._modules)[_index(idx, len(self))]
        self.add_module(key, module)

    def __delitem__(self, idx: Any) -> None:
        keys = list(self._modules)
        for key in (keys[idx] if isinstance(idx, slice) else [keys[_index(idx, len(keys))]]):
            del self._modules[key]
        self._reset(self._items())

    def __iter__(self) -> Iterator[Module]:
        return iter(self._modules.values())

    def __add__(self, other: "Sequential") -> "Sequential":
        if not isinstance(other, Sequential):
            raise ValueError("add operator supports only objects of Sequential class, but "
                             f"{type(other)} is given.")
        return Sequential(*self, *other)

    def __iadd__(self, other: "Sequential") -> "Sequential":
        return self.extend(other)

    def append(self, module: Module) -> "Sequential":
        self.add_module(str(len(self)), module)
        return self

    def insert(self, index: int, module: Module) -> "Sequential":
        if not isinstance(module, Module):
            raise AssertionError(f"module should be of type: {Module}")
        items = self._items()
        n = len(items)
        if not -n <= index <= n:
            raise IndexError(f"Index out of range: {index}")
        items.insert(index % (n + 1) if index < 0 else index, module)
        self._reset(items)
        return self

    def extend(self, sequential: Iterable[Module]) -> "Sequential":
        for m in sequential:
            self.append(m)
        return self

    def pop(self, key: int | slice) -> Module:
        v = self[key]
        del self[key]
        return v


class ModuleList(_ListMixin, Module):
    """Submodules in a list (registered, so their parameters are the container's)."""

    def __init__(self, modules: Iterable[Module] | None = None) -> None:
        super().__init__()
        if modules is not None:
            self.extend(modules)

    def __setitem__(self, idx: int, module: Module) -> None:
        self.add_module(str(_index(idx, len(self))), module)

    def __delitem__(self, idx: Any) -> None:
        items = self._items()
        del items[idx if isinstance(idx, slice) else _index(idx, len(items))]
        self._reset(items)

    def __iter__(self) -> Iterator[Module]:
        return iter(self._modules.values())

    def __iadd__(self, modules: Iterable[Module]) -> "ModuleList":
        return self.extend(modules)

    def __add__(self, other: Iterable[Module]) -> "ModuleList":
        return ModuleList([*self, *other])

    def append(self, module: Module) -> "ModuleList":
        self.add_module(str(len(self)), module)
        return self

    def insert(self, index: int, module: Module) -> None:
        items = self._items()
        items.insert(index, module)
        self._reset(items)

    def extend(self, modules: Iterable[Module]) -> "ModuleList":
        if not isinstance(modules, Iterable):
            raise TypeError("ModuleList.extend should be called with an iterable, but got "
                            + type(modules).__name__)
        for m in modules:
            self.append(m)
        return self

    def pop(self, key: int | slice) -> Module:
        v = self[key]
        del self[key]
        return v

    def __repr__(self) -> str:
        """Consecutive modules with the same repr are printed once, with their range."""
        reprs = [repr(m) for m in self]
        if not reprs:
            return self._get_name() + "()"
        runs: list = []  # [first, last, repr]
        for i, r in enumerate(reprs):
            if runs and runs[-1][2] == r:
                runs[-1][1] = i
            else:
                runs.append([i, i, r])
        lines = [_addindent(f"({a}): {r}" if a == b else f"({a}-{b}): {b - a + 1} x {r}", 2)
                 for a, b, r in runs]
        return self._get_name() + "(\n  " + "\n  ".join(lines) + "\n)"


class ModuleDict(Module):
    """Submodules by name, in insertion order."""

    def __init__(self, modules: Mapping[str, Module] | Iterable | None = None) -> None:
        super().__init__()
        if modules is not None:
            self.update(modules)

    def __getitem__(self, key: str) -> Module:
        return self._modules[key]

    def __setitem__(self, key: str, module: Module) -> None:
        self.add_module(key, module)

    def __delitem__(self, key: str) -> None:
        del self._modules[key]

    def __len__(self) -> int:
        return len(self._modules)

    def __iter__(self) -> Iterator[str]:
        return iter(self._modules)

    def __contains__(self, key: str) -> bool:
        return key in self._modules

    def clear(self) -> None:
        self._modules.clear()

    def pop(self, key: str) -> Module:
        v = self[key]
        del self[key]
        return v

    def keys(self) -> Iterable[str]:
        return self._modules.keys()

    def items(self) -> Iterable[tuple]:
        return self._modules.items()

    def values(self) -> Iterable[Module]:
        return self._modules.values()

    def update(self, modules: Mapping[str, Module] | Iterable) -> None:
        items = modules.items() if isinstance(modules, Mapping) else modules
        for key, module in items:
            self[key] = module


def _as_parameter(value: Any) -> Any:
    return Parameter(value) if isinstance(value, Tensor) and not isinstance(
        value, Parameter) else value


def _describe(value: Any, type_name: str) -> str:
    if isinstance(value, Tensor):
        size = "x".join(str(s) for s in value.size())
        device = f" ({value.device})" if value.device.type == "cuda" else ""
        kind = "Parameter" if isinstance(value, Parameter) else "Tensor"
        return f"{kind} containing: [{type_name} of size {size}{device}]"
    return f"Object of type: {type(value).__name__}"


class ParameterList(_ListMixin, Module):
    """Parameters in a list (tensors become Parameters), registered as "0", "1", ..."""

    _store = "_parameters"

    def __init__(self, values: Iterable[Any] | None = None) -> None:
        super().__init__()
        if values is not None:
            self.extend(values)

    def __setitem__(self, idx: int, param: Any) -> None:
        self.register_parameter(str(_index(idx, len(self))), _as_parameter(param))

    def __iter__(self) -> Iterator[Any]:
        return iter(self._parameters.values())

    def __iadd__(self, parameters: Iterable[Any]) -> "ParameterList":
        return self.extend(parameters)

    def append(self, value: Any) -> "ParameterList":
        self.register_parameter(str(len(self)), _as_parameter(value))
        return self

    def extend(self, values: Iterable[Any]) -> "ParameterList":
        for v in values:
            self.append(v)
        return self

    def extra_repr(self) -> str:
        return "\n".join(f"  ({k}): {_describe(p, str(p.dtype))}" for k, p in enumerate(self))


class ParameterDict(Module):
    """Parameters by name (tensors become Parameters); a plain dict is taken sorted."""

    def __init__(self, parameters: Any = None) -> None:
        super().__init__()
        if parameters is not None:
            self.update(parameters)

    def __getitem__(self, key: str) -> Any:
        return self._parameters[key]

    def __setitem__(self, key: str, value: Any) -> None:
        self.register_parameter(key, _as_parameter(value))

    def __delitem__(self, key: str) -> None:
        del self._parameters[key]

    def __len__(self) -> int:
        return len(self._parameters)

    def __iter__(self) -> Iterator[str]:
        return iter(self._parameters)

    def __contains__(self, key: str) -> bool:
        return key in self._parameters

    def keys(self) -> Iterable[str]:
        return self._parameters.keys()

    def items(self) -> Iterable[tuple]:
        return self._parameters.items()

    def values(self) -> Iterable[Any]:
        return self._parameters.values()

    def get(self, key: str, default: Any = None) -> Any:
        return self._parameters.get(key, default)

    def pop(self, key: str) -> Any:
        v = self[key]
        del self[key]
        return v

    def clear(self) -> None:
        self._parameters.clear()

    def update(self, parameters: Any) -> None:
        if isinstance(parameters, (OrderedDict, ParameterDict)):
            items = list(parameters.items())
        elif isinstance(parameters, Mapping):
            items = sorted(parameters.items())
        else:
            items = list(parameters)
        for key, value in items:
            self[key] = value

    def extra_repr(self) -> str:
        return "\n".join(f"  ({k}): {_describe(p, p.type())}" for k, p in self.items())
