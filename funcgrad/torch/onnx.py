"""``torch.onnx.export``: a module or function of tensors as an ONNX model file.

The model is traced (`torch.jit.trace`'s program: one path through its Python, as
TorchScript tracing and PyTorch's ``dynamo=False`` exporter take it) and written by
`funcgrad.onnx.tape_to_model`: its parameters and buffers are initializers named as in
its ``state_dict``, its inputs ``input_names`` (``input_0``... by default).
``dynamic_axes`` marks sizes that vary (a leading size flows through flattenings). Run the
file with ``onnxruntime`` (the ``onnx`` extra installs both).
"""
from __future__ import annotations

import os
from typing import Any, Sequence

from funcgrad import onnx as _onnx
from funcgrad.torch import jit
from funcgrad.torch._tensor import Tensor

__all__ = ["export", "is_in_onnx_export"]

_exporting = [False]


def is_in_onnx_export() -> bool:
    """Whether an export is tracing the model now."""
    return _exporting[0]


def export(model: Any, args: Any = (), f: Any = None, *, kwargs: dict | None = None,
           export_params: bool = True, verbose: Any = None,
           input_names: Sequence[str] | None = None,
           output_names: Sequence[str] | None = None, opset_version: int | None = None,
           dynamic_axes: dict | None = None, keep_initializers_as_inputs: bool = False,
           dynamo: bool = False, **options: Any) -> Any:
    """Trace ``model`` on ``args`` (a tensor or a tuple of them; a trailing dict is its
    keyword arguments) and write the ONNX model to ``f`` (a path or a binary file); the
    ``ModelProto`` is returned too. ``export_params=False`` makes the parameters inputs
    (keep_initializers_as_inputs: initializers that are also inputs)."""
    args = args if isinstance(args, tuple) else (args,)
    if args and isinstance(args[-1], dict) and kwargs is None:
        args, kwargs = args[:-1], args[-1]
    _exporting[0] = True
    try:
        traced = jit.trace(model, args, example_kwarg_inputs=kwargs) if kwargs else \
            jit.trace(model, args)
        tape, names, state = traced.program_for(*args, **(kwargs or {}))
    finally:
        _exporting[0] = False
    n_inputs = len(tape.in_vars) - len(names)
    inputs = list(input_names or [])
    inputs += [f"input_{i}" for i in range(len(inputs), n_inputs)]
    outputs = list(output_names or [])
    outputs += [f"output_{i}" for i in range(len(outputs), len(tape.out_vars))]
    values = {n: t.detach().numpy(force=True) for n, t in zip(names, state)
              if isinstance(t, Tensor)} if export_params else {}
    proto = _onnx.tape_to_model(tape, list(names) + inputs[:n_inputs], outputs,
                                initializers=values, dynamic_axes=dynamic_axes,
                                opset=opset_version or _onnx.OPSET,
                                graph_name=type(model).__name__)
    if keep_initializers_as_inputs and export_params:
        _onnx.initializers_as_inputs(proto)
    if f is not None:
        data = proto.SerializeToString()
        if isinstance(f, (str, os.PathLike)):
            with open(f, "wb") as out:
                out.write(data)
        else:
            f.write(data)
    return proto
