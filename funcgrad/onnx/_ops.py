"""Each funcgrad primitive's ONNX form: one emitter per primitive, in tables by family.

An emitter reads its record (inputs by name through `Graph.inputs`, params) and adds the
nodes computing its outputs. Max pooling and sum pooling are recorded as two records each
(``window_argmax`` then ``window_gather``; ``sliding_windows`` then ``reduce_sum`` over the
window axes): the first is deferred and the second writes the one ONNX pooling node.
"""
from __future__ import annotations

from typing import Any, Callable

import numpy as np

from funcgrad.onnx._graph import Graph
from funcgrad.primitives.indexing import Ref, Slice

__all__ = ["EMITTERS"]

Emitter = Callable[[Graph, Any], None]

UNARY = {"exp": "Exp", "log": "Log", "tanh": "Tanh", "expit": "Sigmoid", "relu": "Relu",
         "sqrt": "Sqrt", "erf": "Erf", "neg": "Neg", "abs": "Abs", "sin": "Sin", "cos": "Cos",
         "tan": "Tan", "floor": "Floor", "ceil": "Ceil", "sign": "Sign", "round": "Round",
         "reciprocal": "Reciprocal", "logical_not": "Not", "stop_gradient": "Identity",
         "copy": "Identity", "isnan": "IsNaN", "sinh": "Sinh", "cosh": "Cosh",
         "arcsin": "Asin", "arccos": "Acos", "arctan": "Atan", "arcsinh": "Asinh",
         "arccosh": "Acosh", "arctanh": "Atanh", "rint": "Round"}
ARITHMETIC = {"add": "Add", "sub": "Sub", "mul": "Mul", "div": "Div", "maximum": "Max",
              "minimum": "Min", "power": "Pow", "matmul": "MatMul"}
COMPARISON = {"greater": "Greater", "less": "Less", "equal": "Equal",
              "greater_equal": "GreaterOrEqual", "less_equal": "LessOrEqual",
              "logical_and": "And", "logical_or": "Or", "logical_xor": "Xor"}
REDUCTIONS = {"reduce_sum": "ReduceSum", "reduce_max": "ReduceMax", "reduce_min": "ReduceMin",
              "reduce_prod": "ReduceProd"}


def _out_dtype(g: Graph, rec: Any) -> Any:
    return g.aval(rec.out_vars[0])[1]


def _unary(op: str) -> Emitter:
    return lambda g, rec: g.emit(rec, op, g.inputs(rec, _out_dtype(g, rec)))


def _arithmetic(op: str) -> Emitter:
    def emit(g: Graph, rec: Any) -> None:
        dtype = _out_dtype(g, rec)
        g.emit(rec, op, [_as(g, rec, i, name, dtype) for i, name in
                         enumerate(g.inputs(rec, dtype))])
    return emit


def _comparison(op: str) -> Emitter:
    def emit(g: Graph, rec: Any) -> None:
        dtypes = [g.aval(v)[1] for v in rec.in_vars if v >= 0]
        common = np.result_type(*dtypes) if dtypes else None
        g.emit(rec, op, [_as(g, rec, i, name, common) for i, name in
                         enumerate(g.inputs(rec, common))])
    return emit


def _as(g: Graph, rec: Any, i: int, name: str, dtype: Any) -> str:
    """Input ``i`` of ``rec`` as ``dtype`` (ONNX has no implicit promotion)."""
    var = rec.in_vars[i]
    if var < 0 or dtype is None or g.aval(var)[1] == dtype:
        return name
    return g.cast(name, dtype)


def _not_equal(g: Graph, rec: Any) -> None:
    _comparison("Equal")(g, rec)
    g.emit(rec, "Not", [g.name(rec.out_vars[0])])


def _square(g: Graph, rec: Any) -> None:
    x = g.inputs(rec)[0]
    g.emit(rec, "Mul", [x, x])


def _where(g: Graph, rec: Any) -> None:
    dtype = _out_dtype(g, rec)
    cond, a, b = g.inputs(rec, dtype)
    cond = _as(g, rec, 0, cond, np.bool_) if rec.in_vars[0] >= 0 else g.cast(cond, np.bool_)
    g.emit(rec, "Where", [cond, _as(g, rec, 1, a, dtype), _as(g, rec, 2, b, dtype)])


def _addmm(g: Graph, rec: Any) -> None:
    bias, a, b = g.inputs(rec, _out_dtype(g, rec))
    g.emit(rec, "Gemm", [a, b, bias])


def _transpose(g: Graph, rec: Any) -> None:
    g.emit(rec, "Transpose", g.inputs(rec), perm=list(rec.params["axes"]))


def _reshape(g: Graph, rec: Any) -> None:
    """A fixed shape, except that a leading size equal to the input's is copied from it
    at run time (ONNX's 0), so that a varying batch size flows through flattenings."""
    shape = list(rec.params["shape"])
    in_shape = g.aval(rec.in_vars[0])[0]
    if shape and in_shape and shape[0] == in_shape[0]:
        shape[0] = 0
    g.emit(rec, "Reshape", [g.inputs(rec)[0], g.ints(shape)])


def _broadcast_to(g: Graph, rec: Any) -> None:
    g.emit(rec, "Expand", [g.inputs(rec)[0], g.ints(g.aval(rec.out_vars[0])[0])])


def _convert(g: Graph, rec: Any) -> None:
    g.emit(rec, "Cast", g.inputs(rec)[:1], to=g.elem_type(_out_dtype(g, rec)))


def _concatenate(g: Graph, rec: Any) -> None:
    g.emit(rec, "Concat", g.inputs(rec, _out_dtype(g, rec)), axis=int(rec.params["axis"]))


def _log_softmax(g: Graph, rec: Any) -> None:
    axis = rec.params["axis"]
    axes = axis if isinstance(axis, tuple) else (axis,)
    if len(axes) != 1:
        raise NotImplementedError("ONNX export: log_softmax over several axes")
    g.emit(rec, "LogSoftmax", g.inputs(rec), axis=int(axes[0]))


def _reduction(op: str) -> Emitter:
    def emit(g: Graph, rec: Any) -> None:
        axis = rec.params.get("axis")
        ndim = len(g.aval(rec.in_vars[0])[0])
        axes = list(range(ndim)) if axis is None else [a % ndim for a in (
            axis if isinstance(axis, tuple) else (axis,))]
        keep = int(bool(rec.params.get("keepdims", False)))
        source = g.deferred.get(rec.in_vars[0])
        if op == "ReduceSum" and source is not None and source[0] == "windows":
            return _sum_pool(g, rec, source[1], axes)
        x = g.inputs(rec)[0]
        if op == "ReduceSum":  # (axes are an input from opset 13, an attribute before 18)
            g.emit(rec, op, [x, g.ints(axes)], keepdims=keep)
        else:
            g.emit(rec, op, [x], axes=axes, keepdims=keep)
    return emit


def _clamp(g: Graph, rec: Any) -> None:
    dtype = _out_dtype(g, rec)
    x = g.inputs(rec, dtype)[0]
    lo, hi = rec.params.get("lo"), rec.params.get("hi")
    bounds = ["" if v is None else g.constant(np.asarray(v, dtype)) for v in (lo, hi)]
    g.emit(rec, "Clip", [x, *bounds])


# -- convolution and pooling -----------------------------------------------------------------

def _pads(padding: Any) -> list[int]:
    return [int(lo) for lo, _ in padding] + [int(hi) for _, hi in padding]


def _conv(g: Graph, rec: Any) -> None:
    p = rec.params
    dn = p["dimension_numbers"]
    n = len(p["window_strides"])
    standard = tuple(range(n + 2))
    if (tuple(dn.lhs_spec), tuple(dn.rhs_spec), tuple(dn.out_spec)) != (standard,) * 3 or \
            any(d != 1 for d in p["lhs_dilation"]) or p["batch_group_count"] != 1:
        raise NotImplementedError("ONNX export: a convolution other than NC... layout with "
                                  "no input dilation (transposed convolutions)")
    x, w = g.inputs(rec)
    g.emit(rec, "Conv", [x, w], strides=list(p["window_strides"]),
           pads=_pads(p["padding"]), dilations=list(p["rhs_dilation"]),
           group=int(p["feature_group_count"]))


def _pool_attrs(p: dict) -> dict:
    """The spatial window of a pooling record (its first two axes, N and C, unpooled)."""
    window, strides = p["window_dimensions"], p["window_strides"]
    if tuple(window[:2]) != (1, 1) or tuple(strides[:2]) != (1, 1) or \
            any(d != 1 for d in p["base_dilation"]):
        raise NotImplementedError("ONNX export: pooling over the batch or channel axis")
    return dict(kernel_shape=list(window[2:]), strides=list(strides[2:]),
                pads=_pads(p["padding"][2:]), dilations=list(p["window_dilation"][2:]))


def _defer(kind: str) -> Emitter:
    def emit(g: Graph, rec: Any) -> None:
        g.deferred[rec.out_vars[0]] = (kind, rec)
    return emit


def _window_gather(g: Graph, rec: Any) -> None:
    source = g.deferred.get(rec.in_vars[1])
    if source is None or source[0] != "argmax" or rec.params["fill"] != -np.inf:
        raise NotImplementedError("ONNX export: a window gather other than max pooling")
    g.emit(rec, "MaxPool", [g.name(rec.in_vars[0])], **_pool_attrs(rec.params))


def _sum_pool(g: Graph, rec: Any, windows: Any, axes: list) -> None:
    """``reduce_sum`` over the window axes of ``sliding_windows``: an average pool (the
    padding counted) times the window's size."""
    ndim = len(g.aval(windows.in_vars[0])[0])
    if sorted(axes) != list(range(ndim, 2 * ndim)) or windows.params["fill"] != 0:
        raise NotImplementedError("ONNX export: sliding windows reduced otherwise than "
                                  "summed over the whole window")
    attrs = _pool_attrs(windows.params)
    if any(d != 1 for d in attrs.pop("dilations")):  # (AveragePool has them from opset 19)
        raise NotImplementedError("ONNX export: a dilated average pool")
    x = g.inputs(windows)[0]
    mean = g.node("AveragePool", [x], count_include_pad=1, **attrs)[0]
    size = g.constant(np.asarray(np.prod(attrs["kernel_shape"]), _out_dtype(g, rec)))
    g.emit(rec, "Mul", [mean, size])


# -- indexing ----------------------------------------------------------------------------------

def _getitem(g: Graph, rec: Any) -> None:
    """Basic indexing (ints, slices, None, ...) as Slice, Squeeze and Unsqueeze; one
    integer-array index with full slices elsewhere as Gather."""
    index = list(rec.params["index"])
    shape = g.aval(rec.in_vars[0])[0]
    if Ellipsis in index:
        at = index.index(Ellipsis)
        real = sum(1 for e in index if e is not None and e is not Ellipsis)
        index[at:at + 1] = [Slice(None, None, None)] * (len(shape) - real)
    refs = [i for i, e in enumerate(index) if type(e) is Ref]
    x, idx = g.inputs(rec)
    if refs:
        return _gather(g, rec, index, refs, x, idx)
    starts, ends, axes, steps, squeeze, unsqueeze = [], [], [], [], [], []
    axis = out_axis = 0
    for e in index:
        if e is None:
            unsqueeze.append(out_axis)
            out_axis += 1
            continue
        if type(e) is Slice:
            start, stop, step = slice(*e).indices(shape[axis])
            if (start, stop, step) != (0, shape[axis], 1):
                stop = stop if stop >= 0 else -(2 ** 62)  # (a negative step to the start)
                starts.append(start), ends.append(stop), axes.append(axis), steps.append(step)
            out_axis += 1
        else:
            e = int(e) % shape[axis]
            starts.append(e), ends.append(e + 1), axes.append(axis), steps.append(1)
            squeeze.append(axis)
        axis += 1
    if starts:
        x = g.node("Slice", [x, g.ints(starts), g.ints(ends), g.ints(axes), g.ints(steps)])[0]
    if squeeze:
        x = g.node("Squeeze", [x, g.ints(squeeze)])[0]
    if unsqueeze:
        x = g.node("Unsqueeze", [x, g.ints(unsqueeze)])[0]
    g.emit(rec, "Identity", [x])


def _gather(g: Graph, rec: Any, index: list, refs: list, x: str, idx: str) -> None:
    if len(refs) != 1 or any(type(e) is not Slice or tuple(e) != (None, None, None)
                             for i, e in enumerate(index) if i != refs[0]):
        raise NotImplementedError("ONNX export: indexing with several integer arrays, or "
                                  "one mixed with slices")
    row = g.node("Gather", [idx, g.ints(index[refs[0]].row)], axis=0)[0]
    g.emit(rec, "Gather", [x, row], axis=refs[0])


EMITTERS: dict[str, Emitter] = {
    **{name: _unary(op) for name, op in UNARY.items()},
    **{name: _arithmetic(op) for name, op in ARITHMETIC.items()},
    **{name: _comparison(op) for name, op in COMPARISON.items()},
    **{name: _reduction(op) for name, op in REDUCTIONS.items()},
    "square": _square, "not_equal": _not_equal, "where": _where, "addmm": _addmm, "transpose": _transpose,
    "reshape": _reshape, "broadcast_to": _broadcast_to, "convert_element_type": _convert,
    "concatenate": _concatenate, "log_softmax": _log_softmax, "clamp": _clamp,
    "conv_general_dilated": _conv, "window_argmax": _defer("argmax"),
    "window_gather": _window_gather, "sliding_windows": _defer("windows"),
    "getitem": _getitem,
}
