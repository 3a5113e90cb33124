"""``torch.nn.modules.<file>.<Class>``: the paths under which PyTorch defines its layers.

Pickles of whole models and ``isinstance`` checks in real programs name classes by these
paths (``torch.nn.modules.linear.Linear``). Each submodule here holds the facade's classes
of PyTorch's file of that name (the same objects as ``funcgrad.torch.nn.<Class>``); the
table is PyTorch 2.13's layout, for the classes the facade has.
"""
from __future__ import annotations

import sys
import types

from funcgrad.torch import nn as _nn

__all__ = list(("activation adaptive batchnorm channelshuffle container conv distance dropout flatten "
                "fold instancenorm linear loss module normalization padding pixelshuffle "
                "pooling rnn sparse transformer upsampling").split())

_FILES = {
    "activation": "CELU ELU GELU GLU Hardshrink Hardsigmoid Hardswish Hardtanh LeakyReLU "
                  "LogSigmoid LogSoftmax Mish MultiheadAttention PReLU RReLU ReLU ReLU6 SELU "
                  "SiLU Sigmoid Softmax Softmax2d Softmin Softplus Softshrink Softsign Tanh "
                  "Tanhshrink Threshold",
    "adaptive": "AdaptiveLogSoftmaxWithLoss",
    "batchnorm": "BatchNorm1d BatchNorm2d BatchNorm3d LazyBatchNorm1d LazyBatchNorm2d "
                 "LazyBatchNorm3d SyncBatchNorm",
    "channelshuffle": "ChannelShuffle",
    "container": "ModuleDict ModuleList ParameterDict ParameterList Sequential",
    "conv": "Conv1d Conv2d Conv3d ConvTranspose1d ConvTranspose2d ConvTranspose3d LazyConv1d "
            "LazyConv2d LazyConv3d LazyConvTranspose1d LazyConvTranspose2d LazyConvTranspose3d",
    "distance": "CosineSimilarity PairwiseDistance",
    "dropout": "AlphaDropout Dropout Dropout1d Dropout2d Dropout3d FeatureAlphaDropout",
    "flatten": "Flatten Unflatten",
    "fold": "Fold Unfold",
    "instancenorm": "InstanceNorm1d InstanceNorm2d InstanceNorm3d LazyInstanceNorm1d "
                    "LazyInstanceNorm2d LazyInstanceNorm3d",
    "linear": "Bilinear Identity LazyLinear Linear",
    "loss": "BCELoss BCEWithLogitsLoss CosineEmbeddingLoss CrossEntropyLoss GaussianNLLLoss "
            "HingeEmbeddingLoss HuberLoss KLDivLoss L1Loss MSELoss MarginRankingLoss "
            "MultiLabelMarginLoss MultiLabelSoftMarginLoss MultiMarginLoss NLLLoss "
            "PoissonNLLLoss SmoothL1Loss SoftMarginLoss TripletMarginLoss "
            "TripletMarginWithDistanceLoss",
    "module": "Module",
    "normalization": "GroupNorm LayerNorm LocalResponseNorm RMSNorm",
    "padding": "CircularPad1d CircularPad2d CircularPad3d ConstantPad1d ConstantPad2d "
               "ConstantPad3d ReflectionPad1d ReflectionPad2d ReflectionPad3d "
               "ReplicationPad1d ReplicationPad2d ReplicationPad3d ZeroPad1d ZeroPad2d "
               "ZeroPad3d",
    "pixelshuffle": "PixelShuffle PixelUnshuffle",
    "pooling": "AdaptiveAvgPool1d AdaptiveAvgPool2d AdaptiveAvgPool3d AdaptiveMaxPool1d "
               "AdaptiveMaxPool2d AvgPool1d AvgPool2d AvgPool3d FractionalMaxPool2d "
               "FractionalMaxPool3d LPPool1d LPPool2d MaxPool1d MaxPool2d MaxPool3d",
    "rnn": "GRU GRUCell LSTM LSTMCell RNN RNNBase RNNCell RNNCellBase",
    "sparse": "Embedding EmbeddingBag",
    "transformer": "Transformer TransformerDecoder TransformerDecoderLayer TransformerEncoder "
                   "TransformerEncoderLayer",
    "upsampling": "Upsample UpsamplingBilinear2d UpsamplingNearest2d",
}


def _file_module(file: str, names: str) -> types.ModuleType:
    """The submodule ``file``: the facade's classes of that PyTorch file, importable by
    its dotted name (pickles import it)."""
    module = types.ModuleType(f"{__name__}.{file}", f"torch.nn.modules.{file}'s classes")
    for name in names.split():
        setattr(module, name, getattr(_nn, name))
        globals()[name] = getattr(_nn, name)
    module.__all__ = names.split()
    sys.modules[module.__name__] = module
    return module


for _file, _names in _FILES.items():
    globals()[_file] = _file_module(_file, _names)
