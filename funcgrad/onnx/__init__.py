"""A traced funcgrad program (a jit `Tape`) as an ONNX model, for ONNX runtimes.

`tape_to_model` writes one ONNX node (or a few) per record of the tape, by the table of
`funcgrad.onnx._ops` (one emitter per primitive); the tape's constants and the values the
caller names as initializers (a model's parameters) are stored in the graph. The facade's
``torch.onnx.export`` traces a module and calls it; functional code exports a lowered jit
program: ``tape_to_model(funcgrad.jit(f).lower(x).tape, ["x"], ["y"])``.

Needs the ``onnx`` package (``pip install 'funcgrad[onnx]'``, which also brings
``onnxruntime`` to run the result). A primitive without an emitter raises naming it.
"""
from __future__ import annotations

from typing import Any, Sequence

import numpy as np

from funcgrad.onnx._graph import Graph, require_onnx
from funcgrad.onnx._ops import EMITTERS

__all__ = ["tape_to_model", "initializers_as_inputs", "OPSET"]

OPSET = 17


def tape_to_model(tape: Any, input_names: Sequence[str], output_names: Sequence[str],
                  initializers: dict | None = None, dynamic_axes: dict | None = None,
                  opset: int = OPSET, graph_name: str = "funcgrad") -> Any:
    """The ONNX ``ModelProto`` of ``tape``. Its inputs are named ``input_names`` in
    order, except those given values in ``initializers`` (name -> array: stored in the
    model, as parameters are); ``dynamic_axes``: name -> {axis: symbolic name} (or a list
    of axes) for inputs and outputs whose sizes vary."""
    onnx = require_onnx()
    if opset < OPSET:
        raise ValueError(f"funcgrad exports ONNX opset {OPSET} or later, got {opset}")
    if len(input_names) != len(tape.in_vars) or len(output_names) != len(tape.out_vars):
        raise ValueError(f"the program has {len(tape.in_vars)} inputs and "
                         f"{len(tape.out_vars)} outputs; got {len(input_names)} input names "
                         f"and {len(output_names)} output names")
    initializers = initializers or {}
    dynamic = {k: _axes_of(v) for k, v in (dynamic_axes or {}).items()}
    g = Graph(tape)
    inputs = []
    for var, name in zip(tape.in_vars, input_names):
        g.bind(var, name)
        if name in initializers:
            g.initializer(name, np.asarray(initializers[name]))
        else:
            inputs.append(g.value_info(name, tape.var_avals[var], dynamic.get(name, {})))
    for rec in tape.records:
        emit = EMITTERS.get(rec.prim.name)
        if emit is None:
            raise NotImplementedError(f"ONNX export: no ONNX form of the primitive "
                                      f"{rec.prim.name!r} yet")
        emit(g, rec)
    outputs = []
    for var, const, name in zip(tape.out_vars, tape.out_consts, output_names):
        source = g.constant(np.asarray(const)) if var < 0 else g.name(var)
        g.node("Identity", [source], [name])
        aval = tape.var_avals[var] if var >= 0 else (np.shape(const), np.asarray(const).dtype)
        outputs.append(g.value_info(name, aval, dynamic.get(name, {})))
    used = {name for node in g.nodes for name in node.input}
    kept = [init for init in g.initializers if init.name in used]  # (constants no op read)
    graph = onnx.helper.make_graph(g.nodes, graph_name, inputs, outputs, kept)
    model = onnx.helper.make_model(graph, producer_name="funcgrad",
                                   opset_imports=[onnx.helper.make_opsetid("", opset)])
    onnx.checker.check_model(model)
    return model


def _axes_of(spec: Any) -> dict:
    """``dynamic_axes``' entry as {axis: symbolic name} (a list of axes gets names)."""
    if isinstance(spec, dict):
        return {int(k): str(v) for k, v in spec.items()}
    return {int(a): f"dim_{a}" for a in spec}


def initializers_as_inputs(model: Any) -> None:
    """List every initializer of ``model`` among its graph's inputs too (older runtimes'
    layout, PyTorch's ``keep_initializers_as_inputs``)."""
    onnx = require_onnx()
    graph = model.graph
    have = {i.name for i in graph.input}
    for init in graph.initializer:
        if init.name not in have:
            graph.input.append(onnx.helper.make_tensor_value_info(
                init.name, init.data_type, list(init.dims)))
