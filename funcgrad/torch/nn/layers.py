"""The layer modules: Linear (PyTorch's initialisation), containers, activations, Dropout
and loss modules, each a thin Module around `funcgrad.torch.nn.functional`."""
from __future__ import annotations

import math
from collections import OrderedDict
from typing import Any, Iterable, Iterator

from funcgrad.torch import _factories
from funcgrad.torch._tensor import Tensor
from funcgrad.torch.nn import functional as F
from funcgrad.torch.nn import init
from funcgrad.torch.nn.module import Module
from funcgrad.torch.nn.parameter import Parameter

__all__ = ["Linear", "Identity", "Sequential", "ModuleList", "ModuleDict", "ReLU", "Tanh",
           "Sigmoid", "LeakyReLU", "GELU", "SiLU", "Softplus", "Softmax", "LogSoftmax",
           "Dropout", "Flatten", "Embedding", "MSELoss", "L1Loss", "CrossEntropyLoss",
           "NLLLoss", "BCELoss", "BCEWithLogitsLoss"]


class Linear(Module):
    """``y = x W^T + b`` with W of shape (out_features, in_features), initialised by
    ``kaiming_uniform_(a=sqrt(5))`` and b by U(-1/sqrt(in), 1/sqrt(in)), as PyTorch."""

    def __init__(self, in_features: int, out_features: int, bias: bool = True,
                 device: Any = None, dtype: Any = None) -> None:
        super().__init__()
        self.in_features = in_features
        self.out_features = out_features
        self.weight = Parameter(_factories.empty(out_features, in_features, device=device,
                                                 dtype=dtype))
        if bias:
            self.bias = Parameter(_factories.empty(out_features, device=device, dtype=dtype))
        else:
            self.register_parameter("bias", None)
        self.reset_parameters()

    def reset_parameters(self) -> None:
        init.kaiming_uniform_(self.weight, a=math.sqrt(5))
        if self.bias is not None:
            fan_in, _ = init._calculate_fan_in_and_fan_out(self.weight)
            bound = 1 / math.sqrt(fan_in) if fan_in > 0 else 0
            init.uniform_(self.bias, -bound, bound)

    def forward(self, input: Tensor) -> Tensor:
        return F.linear(input, self.weight, self.bias)

    def extra_repr(self) -> str:
        return (f"in_features={self.in_features}, out_features={self.out_features}, "
                f"bias={self.bias is not None}")


class Identity(Module):
    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__()

    def forward(self, input: Tensor) -> Tensor:
        return input


class Sequential(Module):
    """Modules applied in order; index, slice, iterate and append like a list."""

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
            return Sequential(OrderedDict(items[idx]))
        if not -len(items) <= idx < len(items):
            raise IndexError(f"index {idx} is out of range")
        return items[idx][1]

    def __len__(self) -> int:
        return len(self._modules)

    def __iter__(self) -> Iterator[Module]:
        return iter(self._modules.values())

    def append(self, module: Module) -> "Sequential":
        self.add_module(str(len(self)), module)
        return self


class ModuleList(Module):
    def __init__(self, modules: Iterable[Module] | None = None) -> None:
        super().__init__()
        for m in modules or ():
            self.append(m)

    def append(self, module: Module) -> "ModuleList":
        self.add_module(str(len(self)), module)
        return self

    def extend(self, modules: Iterable[Module]) -> "ModuleList":
        for m in modules:
            self.append(m)
        return self

    def __getitem__(self, idx: Any) -> Any:
        items = list(self._modules.values())
        return ModuleList(items[idx]) if isinstance(idx, slice) else items[idx]

    def __len__(self) -> int:
        return len(self._modules)

    def __iter__(self) -> Iterator[Module]:
        return iter(self._modules.values())


class ModuleDict(Module):
    def __init__(self, modules: dict | None = None) -> None:
        super().__init__()
        for k, m in (modules or {}).items():
            self.add_module(k, m)

    def __getitem__(self, key: str) -> Module:
        return self._modules[key]

    def __setitem__(self, key: str, module: Module) -> None:
        self.add_module(key, module)

    def __len__(self) -> int:
        return len(self._modules)

    def __iter__(self) -> Iterator[str]:
        return iter(self._modules)

    def keys(self) -> Iterable[str]:
        return self._modules.keys()

    def values(self) -> Iterable[Module]:
        return self._modules.values()

    def items(self) -> Iterable[tuple]:
        return self._modules.items()


def _activation(name: str, fn: Any, params: tuple = (), extra: str = "") -> type:
    """A parameter-free Module calling ``fn(input, **its params)``."""
    def __init__(self: Module, *args: Any, **kwargs: Any) -> None:
        Module.__init__(self)
        values = dict(zip([p for p, _ in params], args))
        for p, default in params:
            object.__setattr__(self, p, kwargs.get(p, values.get(p, default)))

    def forward(self: Module, input: Tensor) -> Tensor:
        return fn(input, **{p: getattr(self, p) for p, _ in params})

    def extra_repr(self: Module) -> str:
        return extra.format(**{p: getattr(self, p) for p, _ in params}) if extra else ""
    return type(name, (Module,), {"__init__": __init__, "forward": forward,
                                  "extra_repr": extra_repr,
                                  "__doc__": f"Module form of F.{fn.__name__}."})


ReLU = _activation("ReLU", F.relu, (("inplace", False),))
ReLU.extra_repr = lambda self: "inplace=True" if self.inplace else ""
Tanh = _activation("Tanh", F.tanh)
Sigmoid = _activation("Sigmoid", F.sigmoid)
LeakyReLU = _activation("LeakyReLU", F.leaky_relu, (("negative_slope", 0.01),
                                                    ("inplace", False)),
                        "negative_slope={negative_slope}")
GELU = _activation("GELU", F.gelu, (("approximate", "none"),), "approximate='{approximate}'")
SiLU = _activation("SiLU", F.silu, (("inplace", False),))
Softplus = _activation("Softplus", F.softplus, (("beta", 1.0), ("threshold", 20.0)),
                       "beta={beta}, threshold={threshold}")
Softmax = _activation("Softmax", F.softmax, (("dim", None),), "dim={dim}")
LogSoftmax = _activation("LogSoftmax", F.log_softmax, (("dim", None),), "dim={dim}")


class Dropout(Module):
    """Zeroes elements with probability ``p`` in training mode; identity in eval mode."""

    def __init__(self, p: float = 0.5, inplace: bool = False) -> None:
        super().__init__()
        if p < 0 or p > 1:
            raise ValueError(f"dropout probability has to be between 0 and 1, but got {p}")
        self.p = p
        self.inplace = inplace

    def forward(self, input: Tensor) -> Tensor:
        return F.dropout(input, self.p, self.training, self.inplace)

    def extra_repr(self) -> str:
        return f"p={self.p}, inplace={self.inplace}"


class Flatten(Module):
    def __init__(self, start_dim: int = 1, end_dim: int = -1) -> None:
        super().__init__()
        self.start_dim, self.end_dim = start_dim, end_dim

    def forward(self, input: Tensor) -> Tensor:
        return input.flatten(self.start_dim, self.end_dim)

    def extra_repr(self) -> str:
        return f"start_dim={self.start_dim}, end_dim={self.end_dim}"


class Embedding(Module):
    def __init__(self, num_embeddings: int, embedding_dim: int, padding_idx: Any = None,
                 device: Any = None, dtype: Any = None) -> None:
        super().__init__()
        self.num_embeddings, self.embedding_dim = num_embeddings, embedding_dim
        self.padding_idx = padding_idx
        self.weight = Parameter(_factories.empty(num_embeddings, embedding_dim,
                                                 device=device, dtype=dtype))
        init.normal_(self.weight)

    def forward(self, input: Tensor) -> Tensor:
        return F.embedding(input, self.weight, self.padding_idx)

    def extra_repr(self) -> str:
        return f"{self.num_embeddings}, {self.embedding_dim}"


def _loss(name: str, fn: Any, params: tuple = ()) -> type:
    """A loss Module: ``reduction`` plus ``params`` stored, ``fn(input, target, ...)``."""
    def __init__(self: Module, *args: Any, reduction: str = "mean", **kwargs: Any) -> None:
        Module.__init__(self)
        self.reduction = reduction
        for p, default in params:
            value = kwargs.get(p, default)
            if isinstance(value, Tensor):
                self.register_buffer(p, value)
            else:
                object.__setattr__(self, p, value)

    def forward(self: Module, input: Tensor, target: Tensor) -> Tensor:
        return fn(input, target, reduction=self.reduction,
                  **{p: getattr(self, p) for p, _ in params})
    return type(name, (Module,), {"__init__": __init__, "forward": forward,
                                  "__doc__": f"Module form of F.{fn.__name__}."})


MSELoss = _loss("MSELoss", F.mse_loss)
L1Loss = _loss("L1Loss", F.l1_loss)
CrossEntropyLoss = _loss("CrossEntropyLoss", F.cross_entropy,
                         (("weight", None), ("ignore_index", -100), ("label_smoothing", 0.0)))
NLLLoss = _loss("NLLLoss", F.nll_loss, (("weight", None), ("ignore_index", -100)))
BCELoss = _loss("BCELoss", F.binary_cross_entropy, (("weight", None),))
BCEWithLogitsLoss = _loss("BCEWithLogitsLoss", F.binary_cross_entropy_with_logits,
                          (("weight", None), ("pos_weight", None)))
