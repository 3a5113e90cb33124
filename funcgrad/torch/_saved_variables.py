"""What PyTorch's derivative formulas save, per node: the tensors saved-tensor hooks see.

Under ``torch.autograd.graph.saved_tensors_hooks(pack, unpack)`` PyTorch calls ``pack`` once
per tensor its derivative formula for the op saves (``derivatives.yaml``), in the formula's
order, and only for the formulas of inputs that require grad: ``a * b`` packs ``b`` then
``a``, ``a * 2.0`` nothing, ``mm(w, w)`` packs ``w`` twice, ``exp`` its result. funcgrad's
rules read their own residuals (``div``'s reads its output, ``gelu``'s composition reads
intermediates), so for the nodes listed here the facade packs PyTorch's tensors instead
(`funcgrad.torch._saved_hooks.pack_declared`): a residual that is one of them is unpacked
through the hooks for backward; any other (an intermediate of a composition) stays in memory.

Each row: per saved tensor, in PyTorch's order, (the node's input position, or "result";
the input positions whose gradient formula reads it). The rows are facts read off PyTorch
2.13 (``tests/torch/test_saved_tensors_vs_pytorch.py`` compares them with it); tensors a
PyTorch kernel makes inside an op and saves (``native_layer_norm``'s mean and rstd) have no
counterpart here. In-place ops keep funcgrad's residuals.
"""
from __future__ import annotations

from typing import Sequence

from funcgrad.torch._tensor import Tensor

__all__ = ["SAVED", "declared"]

SAVED: dict = {
    "AbsBackward0": ((0, (0,)),),
    "AcosBackward0": ((0, (0,)),),
    "AddBackward0": (),
    "AddcdivBackward0": ((1, (2,)), (2, (0, 1, 2))),
    "AddcmulBackward0": ((1, (2,)), (2, (1,))),
    "AddmmBackward0": ((1, (2,)), (2, (1,))),
    "AmaxBackward0": ((0, (0,)), ('result', (0,))),
    "AsinBackward0": ((0, (0,)),),
    "AsinhBackward0": ((0, (0,)),),
    "Atan2Backward0": ((1, (0, 1)), (0, (0, 1))),
    "AtanBackward0": ((0, (0,)),),
    "BmmBackward0": ((1, (0,)), (0, (1,))),
    "CatBackward0": (),
    "ClampBackward1": ((0, (0,)),),
    "ConvolutionBackward0": ((0, (0, 1)), (1, (0, 1))),
    "CosBackward0": ((0, (0,)),),
    "CoshBackward0": ((0, (0,)),),
    "CumprodBackward0": ((0, (0,)), ('result', (0,))),
    "CumsumBackward0": (),
    "DiagEmbedBackward0": (),
    "DivBackward0": ((1, (0, 1)), (0, (1,))),
    "DotBackward0": ((0, (1,)), (1, (0,))),
    "EluBackward0": ((0, (0,)),),
    "ErfBackward0": ((0, (0,)),),
    "ErfcBackward0": ((0, (0,)),),
    "ExpBackward0": (('result', (0,)),),
    "ExpandBackward0": (),
    "Expm1Backward0": (('result', (0,)),),
    "FloorBackward0": (),
    "GeluBackward0": ((0, (0,)),),
    "HardtanhBackward0": ((0, (0,)),),
    "HuberLossBackward0": ((0, (0, 1)), (1, (0, 1))),
    "HypotBackward0": ((1, (1,)), (0, (0,)), ('result', (0, 1))),
    "LeakyReluBackward0": ((0, (0,)),),
    "LerpBackward0": (),
    "LinalgVectorNormBackward0": ((0, (0,)), ('result', (0,))),
    "Log10Backward0": ((0, (0,)),),
    "Log1PBackward0": ((0, (0,)),),
    "Log2Backward0": ((0, (0,)),),
    "LogBackward0": ((0, (0,)),),
    "LogSigmoidBackward0": ((0, (0,)),),
    "LogSoftmaxBackward0": (('result', (0,)),),
    "LogsumexpBackward0": ((0, (0,)), ('result', (0,))),
    "MaxBackward1": ((0, (0,)), ('result', (0,))),
    "MaximumBackward0": ((1, (0, 1)), (0, (0, 1))),
    "MeanBackward0": (),
    "MeanBackward1": (),
    "MinBackward1": ((0, (0,)), ('result', (0,))),
    "MinimumBackward0": ((1, (0, 1)), (0, (0, 1))),
    "MishBackward0": ((0, (0,)),),
    "MmBackward0": ((1, (0,)), (0, (1,))),
    "MseLossBackward0": ((0, (0, 1)), (1, (0, 1))),
    "MulBackward0": ((1, (0,)), (0, (1,))),
    "MvBackward0": ((0, (1,)), (1, (0,))),
    "NativeLayerNormBackward0": ((2, (0, 1, 2)), (0, (0, 1, 2)), (1, (0, 1, 2))),
    "NegBackward0": (),
    "PowBackward0": ((0, (0,)),),
    "PowBackward1": ((1, (0, 1)), (0, (0, 1)), ('result', (0, 1))),
    "ProdBackward0": ((0, (0,)), ('result', (0,))),
    "ReciprocalBackward0": (('result', (0,)),),
    "ReluBackward0": (('result', (0,)),),
    "RsqrtBackward0": (('result', (0,)),),
    "SelectBackward0": (),
    "SigmoidBackward0": (('result', (0,)),),
    "SignBackward0": (),
    "SiluBackward0": ((0, (0,)),),
    "SinBackward0": ((0, (0,)),),
    "SinhBackward0": ((0, (0,)),),
    "SmoothL1LossBackward0": ((0, (0, 1)), (1, (0, 1))),
    "SoftmaxBackward0": (('result', (0,)),),
    "SoftplusBackward0": ((0, (0,)),),
    "SqrtBackward0": (('result', (0,)),),
    "StackBackward0": (),
    "StdBackward0": ((0, (0,)), ('result', (0,))),
    "SubBackward0": (),
    "SumBackward0": (),
    "SumBackward1": (),
    "TBackward0": (),
    "TanBackward0": (('result', (0,)),),
    "TanhBackward0": (('result', (0,)),),
    "TraceBackward0": (),
    "TransposeBackward0": (),
    "VarBackward0": ((0, (0,)),),
    "ViewBackward0": (),
}


def declared(name: str, inputs: Sequence, result: Tensor, diff: Sequence[int]
             ) -> list | None:
    """The tensors PyTorch saves for node ``name`` with the inputs at ``diff`` requiring
    grad, in its order (None: no row, the node's own residuals are packed)."""
    row = SAVED.get(name)
    if row is None:
        return None
    wanted = set(diff)
    saved = []
    for var, read_by in row:
        if not wanted.intersection(read_by):
            continue
        if var == "result":
            saved.append(result)
        elif var < len(inputs) and isinstance(inputs[var], Tensor):
            saved.append(inputs[var])
    return saved
