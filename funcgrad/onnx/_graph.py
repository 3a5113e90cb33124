"""The ONNX graph being written: names of the tape's variables, nodes, initializers.

Each emitter of `funcgrad.onnx._ops` reads its record's inputs by name (`Graph.inputs`:
a tape variable's name, or a constant the record holds, stored as an initializer of the
dtype its other operand has) and adds nodes (`Graph.node`).
"""
from __future__ import annotations

from typing import Any

import numpy as np

__all__ = ["Graph", "require_onnx"]

_MISSING = ("ONNX export needs the onnx package: pip install 'funcgrad[onnx]' (onnx, and "
            "onnxruntime to run the exported model)")


def require_onnx() -> Any:
    try:
        import onnx  # (an optional dependency: imported on first use)
    except ImportError:
        raise ImportError(_MISSING) from None
    return onnx


class Graph:
    """Nodes and initializers of one export, and the ONNX name of each tape variable."""

    def __init__(self, tape: Any):
        self.onnx = require_onnx()
        self.tape = tape
        self.nodes: list = []
        self.initializers: list = []
        self._names: dict[int, str] = {}
        self._count = 0
        self.deferred: dict[int, tuple] = {}  # var -> (kind, record): fused with its user

    def fresh(self, hint: str) -> str:
        self._count += 1
        return f"{hint}_{self._count}"

    def bind(self, var: int, name: str) -> None:
        self._names[var] = name

    def name(self, var: int) -> str:
        return self._names[var]

    def aval(self, var: int) -> tuple:
        return self.tape.var_avals[var]

    def initializer(self, name: str, value: np.ndarray) -> str:
        value = value if value.flags.c_contiguous else value.copy()  # (0-d stays 0-d)
        self.initializers.append(self.onnx.numpy_helper.from_array(value, name))
        return name

    def constant(self, value: Any, dtype: Any = None) -> str:
        """An initializer holding ``value`` (as ``dtype``)."""
        arr = np.asarray(value if not hasattr(value, "concrete") else value.concrete())
        return self.initializer(self.fresh("const"), arr.astype(dtype or arr.dtype))

    def ints(self, values: Any) -> str:
        """An int64 initializer (shapes, axes)."""
        return self.constant(np.asarray(values, np.int64))

    def inputs(self, rec: Any, dtype: Any = None) -> list[str]:
        """The names of ``rec``'s inputs; its constants as ``dtype`` (the result's, by
        default: weakly typed numbers take their operand's type)."""
        out = []
        for i, var in enumerate(rec.in_vars):
            if var >= 0:
                out.append(self.name(var))
            else:
                value = np.asarray(getattr(rec.saved[i], "concrete", lambda: rec.saved[i])())
                want = dtype if dtype is not None else value.dtype
                out.append(self.constant(value, want))
        return out

    def node(self, op: str, inputs: list[str], outputs: list[str] | None = None,
             **attrs: Any) -> list[str]:
        outputs = outputs or [self.fresh(op.lower())]
        self.nodes.append(self.onnx.helper.make_node(op, inputs, outputs, **attrs))
        return outputs

    def output(self, rec: Any, name: str, k: int = 0) -> None:
        """Name output ``k`` of ``rec``: what ``name`` holds."""
        self._names[rec.out_vars[k]] = name

    def emit(self, rec: Any, op: str, inputs: list[str], **attrs: Any) -> None:
        """One node computing ``rec``'s (single) output."""
        self.output(rec, self.node(op, inputs, **attrs)[0])

    def cast(self, name: str, dtype: Any) -> str:
        return self.node("Cast", [name], to=self.elem_type(dtype))[0]

    def elem_type(self, dtype: Any) -> int:
        return self.onnx.helper.np_dtype_to_tensor_dtype(np.dtype(dtype))

    def value_info(self, name: str, aval: tuple, dynamic: dict) -> Any:
        shape, dtype = aval
        dims = [dynamic.get(i, n) for i, n in enumerate(shape)]
        return self.onnx.helper.make_tensor_value_info(name, self.elem_type(dtype), dims)
