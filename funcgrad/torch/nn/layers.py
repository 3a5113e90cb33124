"""The layer modules: Linear and Bilinear (PyTorch's initialisation), activations, the
dropout family, Flatten/Unflatten and Embedding, each a thin Module around
`funcgrad.torch.nn.functional` (containers, losses, convolutions, norms and attention have
modules of their own)."""
from __future__ import annotations

import math
from typing import Any

from funcgrad.torch import _factories
from funcgrad.torch._tensor import Tensor
from funcgrad.torch._runtime import grad_mode
from funcgrad.torch.nn import functional as F
from funcgrad.torch.nn import init
from funcgrad.torch.nn.module import Module
from funcgrad.torch.nn.parameter import Parameter

__all__ = ["Linear", "Identity", "ReLU", "Tanh", "Sigmoid", "LeakyReLU", "GELU", "SiLU",
           "Softplus", "Softmax", "LogSoftmax", "ELU", "CELU", "SELU", "ReLU6", "Hardtanh",
           "Hardswish", "Hardsigmoid", "Mish", "LogSigmoid", "Softsign", "Tanhshrink",
           "Softshrink", "Hardshrink", "Threshold", "GLU", "Softmin", "Softmax2d", "PReLU",
           "Dropout", "Dropout1d", "Dropout2d", "Dropout3d", "AlphaDropout",
           "FeatureAlphaDropout", "Flatten", "Unflatten", "Embedding"]


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


def _activation(name: str, fn: Any, params: tuple = (), extra: str = "") -> type:
    """A parameter-free Module calling ``fn(input, **its params)``; its repr is ``extra``
    formatted with the params, then ", inplace=True" when it has that flag set."""
    def __init__(self: Module, *args: Any, **kwargs: Any) -> None:
        Module.__init__(self)
        values = dict(zip([p for p, _ in params], args))
        for p, default in params:
            object.__setattr__(self, p, kwargs.get(p, values.get(p, default)))

    def forward(self: Module, input: Tensor) -> Tensor:
        return fn(input, **{p: getattr(self, p) for p, _ in params})

    def extra_repr(self: Module) -> str:
        text = extra.format(**{p: getattr(self, p) for p, _ in params})
        if getattr(self, "inplace", False):
            text += (", " if text else "") + "inplace=True"
        return text
    return type(name, (Module,), {"__init__": __init__, "forward": forward,
                                  "extra_repr": extra_repr,
                                  "__doc__": f"Module form of F.{fn.__name__}."})


_INPLACE = ("inplace", False)
ReLU = _activation("ReLU", F.relu, (_INPLACE,))
Tanh = _activation("Tanh", F.tanh)
Sigmoid = _activation("Sigmoid", F.sigmoid)
LeakyReLU = _activation("LeakyReLU", F.leaky_relu, (("negative_slope", 0.01), _INPLACE),
                        "negative_slope={negative_slope}")
GELU = _activation("GELU", F.gelu, (("approximate", "none"),), "approximate='{approximate}'")
SiLU = _activation("SiLU", F.silu, (_INPLACE,))
Softplus = _activation("Softplus", F.softplus, (("beta", 1.0), ("threshold", 20.0)),
                       "beta={beta}, threshold={threshold}")
Softmax = _activation("Softmax", F.softmax, (("dim", None),), "dim={dim}")
LogSoftmax = _activation("LogSoftmax", F.log_softmax, (("dim", None),), "dim={dim}")
Softmin = _activation("Softmin", F.softmin, (("dim", None),), "dim={dim}")
ELU = _activation("ELU", F.elu, (("alpha", 1.0), _INPLACE), "alpha={alpha}")
CELU = _activation("CELU", F.celu, (("alpha", 1.0), _INPLACE), "alpha={alpha}")
SELU = _activation("SELU", F.selu, (_INPLACE,))
ReLU6 = _activation("ReLU6", F.relu6, (_INPLACE,))
Hardtanh = _activation("Hardtanh", F.hardtanh, (("min_val", -1.0), ("max_val", 1.0),
                                                 _INPLACE), "min_val={min_val}, max_val={max_val}")
Hardswish = _activation("Hardswish", F.hardswish, (_INPLACE,))
Hardsigmoid = _activation("Hardsigmoid", F.hardsigmoid, (_INPLACE,))
Mish = _activation("Mish", F.mish, (_INPLACE,))
LogSigmoid = _activation("LogSigmoid", F.logsigmoid)
Softsign = _activation("Softsign", F.softsign)
Tanhshrink = _activation("Tanhshrink", F.tanhshrink)
Softshrink = _activation("Softshrink", F.softshrink, (("lambd", 0.5),), "{lambd}")
Hardshrink = _activation("Hardshrink", F.hardshrink, (("lambd", 0.5),), "{lambd}")
Threshold = _activation("Threshold", F.threshold, (("threshold", None), ("value", None),
                                                   _INPLACE),
                        "threshold={threshold}, value={value}")
GLU = _activation("GLU", F.glu, (("dim", -1),), "dim={dim}")


class Softmax2d(Module):
    """Softmax over the channels of (N, C, H, W) or (C, H, W)."""

    def forward(self, input: Tensor) -> Tensor:
        if input.ndim not in (3, 4):
            raise ValueError(f"Softmax2d: expected input to be 3D or 4D, got {input.ndim}D "
                             "instead")
        return F.softmax(input, -3)


class PReLU(Module):
    """x where x > 0, else a x, with a learned ``a`` (one, or one per channel)."""

    def __init__(self, num_parameters: int = 1, init: float = 0.25, device: Any = None,
                 dtype: Any = None) -> None:
        super().__init__()
        self.num_parameters, self.init = num_parameters, init
        self.weight = Parameter(_factories.empty(num_parameters, device=device, dtype=dtype))
        self.reset_parameters()

    def reset_parameters(self) -> None:
        init.constant_(self.weight, self.init)

    def forward(self, input: Tensor) -> Tensor:
        return F.prelu(input, self.weight)

    def extra_repr(self) -> str:
        return f"num_parameters={self.num_parameters}"


class _DropoutNd(Module):
    """Dropout modules: ``p`` and ``inplace``; the identity in eval mode."""
    _fn = staticmethod(F.dropout)

    def __init__(self, p: float = 0.5, inplace: bool = False) -> None:
        super().__init__()
        if p < 0 or p > 1:
            raise ValueError(f"dropout probability has to be between 0 and 1, but got {p}")
        self.p, self.inplace = p, inplace

    def forward(self, input: Tensor) -> Tensor:
        return type(self)._fn(input, self.p, self.training, self.inplace)

    def extra_repr(self) -> str:
        return f"p={self.p}, inplace={self.inplace}"


class Dropout(_DropoutNd):
    """Zeroes elements with probability ``p`` in training mode."""
    _fn = staticmethod(F.dropout)


class Dropout1d(_DropoutNd):
    """Zeroes whole channels of (N, C, L) in training mode."""
    _fn = staticmethod(F.dropout1d)


class Dropout2d(_DropoutNd):
    """Zeroes whole channels of (N, C, H, W) in training mode."""
    _fn = staticmethod(F.dropout2d)


class Dropout3d(_DropoutNd):
    _fn = staticmethod(F.dropout3d)


class AlphaDropout(_DropoutNd):
    """Dropout keeping SELU's self-normalising statistics."""
    _fn = staticmethod(F.alpha_dropout)


class FeatureAlphaDropout(_DropoutNd):
    _fn = staticmethod(F.feature_alpha_dropout)


class Flatten(Module):
    """Flattens dims ``start_dim`` to ``end_dim`` into one (ViewBackward0)."""

    def __init__(self, start_dim: int = 1, end_dim: int = -1) -> None:
        super().__init__()
        self.start_dim, self.end_dim = start_dim, end_dim

    def forward(self, input: Tensor) -> Tensor:
        return input.flatten(self.start_dim, self.end_dim)

    def extra_repr(self) -> str:
        return f"start_dim={self.start_dim}, end_dim={self.end_dim}"


class Unflatten(Module):
    """Splits dim ``dim`` into ``unflattened_size``."""

    def __init__(self, dim: int | str, unflattened_size: Any) -> None:
        super().__init__()
        if not isinstance(dim, int):
            raise TypeError("invalid argument type for dim parameter, expected `int` but got "
                            f"{type(dim)}")
        if not isinstance(unflattened_size, (tuple, list)):
            raise TypeError("unflattened_size must be tuple of ints, but found type "
                            f"{type(unflattened_size).__name__}")
        self.dim, self.unflattened_size = dim, unflattened_size

    def forward(self, input: Tensor) -> Tensor:
        return input.unflatten(self.dim, self.unflattened_size)

    def extra_repr(self) -> str:
        return f"dim={self.dim}, unflattened_size={self.unflattened_size}"


class Embedding(Module):
    """A lookup table of ``num_embeddings`` vectors of size ``embedding_dim``, initialised
    from N(0, 1) with the ``padding_idx`` row zeroed, as PyTorch."""

    def __init__(self, num_embeddings: int, embedding_dim: int, padding_idx: int | None = None,
                 max_norm: float | None = None, norm_type: float = 2.0,
                 scale_grad_by_freq: bool = False, sparse: bool = False,
                 _weight: Tensor | None = None, _freeze: bool = False, device: Any = None,
                 dtype: Any = None) -> None:
        super().__init__()
        self.num_embeddings, self.embedding_dim = num_embeddings, embedding_dim
        if padding_idx is not None:
            if padding_idx > 0 and padding_idx >= num_embeddings:
                raise AssertionError("Padding_idx must be within num_embeddings")
            if padding_idx < 0:
                if padding_idx < -num_embeddings:
                    raise AssertionError("Padding_idx must be within num_embeddings")
                padding_idx = num_embeddings + padding_idx
        self.padding_idx, self.max_norm, self.norm_type = padding_idx, max_norm, norm_type
        self.scale_grad_by_freq, self.sparse = scale_grad_by_freq, sparse
        if _weight is None:
            self.weight = Parameter(_factories.empty(num_embeddings, embedding_dim,
                                                     device=device, dtype=dtype),
                                    requires_grad=not _freeze)
            self.reset_parameters()
        else:
            if tuple(_weight.shape) != (num_embeddings, embedding_dim):
                raise AssertionError("Shape of weight does not match num_embeddings and "
                                     "embedding_dim")
            self.weight = Parameter(_weight, requires_grad=not _freeze)

    def reset_parameters(self) -> None:
        init.normal_(self.weight)
        if self.padding_idx is not None:
            with grad_mode.no_grad():
                self.weight[self.padding_idx] = 0.0  # (item assignment: views do not write back)

    def forward(self, input: Tensor) -> Tensor:
        return F.embedding(input, self.weight, self.padding_idx, self.max_norm,
                           self.norm_type, self.scale_grad_by_freq, self.sparse)

    def extra_repr(self) -> str:
        s = f"{self.num_embeddings}, {self.embedding_dim}"
        if self.padding_idx is not None:
            s += f", padding_idx={self.padding_idx}"
        if self.max_norm is not None:
            s += f", max_norm={self.max_norm}"
        if self.norm_type != 2:
            s += f", norm_type={self.norm_type}"
        if self.scale_grad_by_freq:
            s += ", scale_grad_by_freq=True"
        if self.sparse:
            s += ", sparse=True"
        return s

    @classmethod
    def from_pretrained(cls, embeddings: Tensor, freeze: bool = True,
                        padding_idx: int | None = None, max_norm: float | None = None,
                        norm_type: float = 2.0, scale_grad_by_freq: bool = False,
                        sparse: bool = False) -> "Embedding":
        """An Embedding holding ``embeddings`` (frozen unless ``freeze=False``)."""
        if embeddings.ndim != 2:
            raise AssertionError("Embeddings parameter is expected to be 2-dimensional")
        rows, cols = embeddings.shape
        return cls(rows, cols, padding_idx, max_norm, norm_type, scale_grad_by_freq, sparse,
                   _weight=embeddings, _freeze=freeze)
