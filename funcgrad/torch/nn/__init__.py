"""torch.nn for funcgrad.torch: Module, Parameter, layers, functional, init, utils,
parallel."""
from funcgrad.torch.nn.parameter import (Parameter, Buffer, UninitializedBuffer,
                                         UninitializedParameter)
from funcgrad.torch.nn.module import Module
from funcgrad.torch.nn import _containers, _conv_modules, _loss_modules, _norm_modules
from funcgrad.torch.nn import _adaptive, _lazy, _more_layers, _rnn, _transformer, layers
from funcgrad.torch.nn.layers import *  # noqa: F401,F403
from funcgrad.torch.nn._containers import *  # noqa: F401,F403
from funcgrad.torch.nn._conv_modules import *  # noqa: F401,F403
from funcgrad.torch.nn._loss_modules import *  # noqa: F401,F403
from funcgrad.torch.nn._norm_modules import *  # noqa: F401,F403
from funcgrad.torch.nn._transformer import *  # noqa: F401,F403
from funcgrad.torch.nn._rnn import *  # noqa: F401,F403
from funcgrad.torch.nn._more_layers import *  # noqa: F401,F403
from funcgrad.torch.nn._lazy import *  # noqa: F401,F403
from funcgrad.torch.nn._adaptive import *  # noqa: F401,F403
from funcgrad.torch.nn._fractional_pool import FractionalMaxPool2d, FractionalMaxPool3d
from funcgrad.torch.nn import _fractional_pool, _sync_batchnorm
from funcgrad.torch.nn._sync_batchnorm import SyncBatchNorm
from funcgrad.torch.nn import functional, grad, init, utils, parallel
from funcgrad.torch.nn.parallel import DataParallel

__all__ = ["Parameter", "Buffer", "Module", "functional", "init", "utils", "parallel",
           "DataParallel",
           *layers.__all__, *_containers.__all__, *_conv_modules.__all__,
           *_loss_modules.__all__, *_norm_modules.__all__, *_transformer.__all__,
           *_rnn.__all__, *_more_layers.__all__, *_lazy.__all__, *_adaptive.__all__,
           *_fractional_pool.MODULES, *_sync_batchnorm.__all__,
           "UninitializedParameter", "UninitializedBuffer"]
from funcgrad.torch.nn import modules  # noqa: E402,F401  (torch.nn.modules.<file> paths)
