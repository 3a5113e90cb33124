"""torch.nn for funcgrad.torch: Module, Parameter, layers, functional, init, utils."""
from funcgrad.torch.nn.parameter import Parameter, Buffer
from funcgrad.torch.nn.module import Module
from funcgrad.torch.nn.layers import *  # noqa: F401,F403
from funcgrad.torch.nn.layers import __all__ as _layers
from funcgrad.torch.nn._conv_modules import *  # noqa: F401,F403
from funcgrad.torch.nn._conv_modules import __all__ as _conv_modules
from funcgrad.torch.nn import functional, init, utils

__all__ = ["Parameter", "Buffer", "Module", "functional", "init", "utils", *_layers,
           *_conv_modules]
