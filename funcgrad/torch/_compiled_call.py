"""A compiled function's call under autograd (`funcgrad.torch.jit`): one
`CompiledFunctionBackward` node, whose forward is the program returning the outputs and
the residuals of their VJP, and whose backward is the program of that VJP on them.

A call through ``funcgrad.jit`` pays for a general signature check (the arguments'
structure, shapes and dtypes, the static arguments hashed), for a funcgrad Array per result
and for a tensor per residual and gradient; for a small model that costs more than the
programs themselves. So a `Recorded`, one per signature (the state found, the inputs'
tree, which inputs want gradients), keeps the two compiled programs
(`Jitted.executable`) with the shapes and dtypes they were compiled for: a later call
checks each input against those, runs the forward program on the raw arrays, keeps the
residuals raw, and the node's backward runs the backward program on them and on the
outputs' cotangents (checked the same way) directly. Anything else (a new shape or dtype,
a cotangent of another dtype, debug_nans, memory off the host) takes the general path,
through the jitted functions.
"""
from __future__ import annotations

from typing import Any, Sequence

import numpy as np

import funcgrad
from funcgrad import tree_util
from funcgrad._config import float_checks
from funcgrad.array import Array, buffer_of, new_array
from funcgrad.core import is_inexact
from funcgrad.torch import func
from funcgrad.torch._op_node import zeros_of
from funcgrad.torch._tensor import Tensor, make
from funcgrad.torch._runtime.node import FREED_ERROR, Node, SavedRef, meta_of, node_class

__all__ = ["CompiledFunctionBackward", "Recorded", "call_recorded", "avals_of",
           "DOUBLE_BACKWARD_ERROR"]

DOUBLE_BACKWARD_ERROR = ("torch.compile with aot_autograd does not currently support "
                         "double backward")


def avals_of(leaves: Sequence) -> tuple:
    """What the jitted programs' signatures say of the leaves (the key of a tape): a
    Python number's type (also for its tracer, weakly typed), else shape and dtype."""
    return tuple((getattr(x, "scalar_type", None) or (tuple(x.shape), x.dtype))
                 if isinstance(x, funcgrad.Array) else type(x) for x in leaves)


def _raws(values: Sequence, avals: Sequence) -> list | None:
    """The host (numpy) arrays of ``values`` (tensors or funcgrad Arrays) if each has
    the (shape, dtype) of ``avals``, in order; else None (the general path decides)."""
    if len(values) != len(avals):  # (another program of the signature: one that draws)
        return None
    raws = []
    for v, (shape, dtype) in zip(values, avals):
        a = v._a if isinstance(v, Tensor) else v
        if type(a) is not Array:
            return None
        raw = buffer_of(a)
        if type(raw) is not np.ndarray or raw.shape != shape or (
                raw.dtype is not dtype and raw.dtype != dtype):  # (mostly the same object)
            return None
        raws.append(raw)
    return raws


def _on_host(arrays: list) -> bool:
    return all(type(a) is Array and type(buffer_of(a)) is np.ndarray for a in arrays)


class Recorded:
    """One signature's recorded call, compiled: ``forward`` (the raw program of the
    outputs and residuals) for inputs of ``avals``, what its outputs are (``n_out``,
    their metas, which are differentiable, their tree), and once a backward has run,
    ``backward`` (the raw program of the VJP) for cotangents of ``ct_avals``."""

    __slots__ = ("forward", "key", "avals", "n_out", "metas", "inexact", "out_tree",
                 "single", "backward", "ct_avals")

    def __init__(self, forward: Any, key: tuple, arrays: list, outs: list, out_tree: Any):
        self.forward = forward.fn
        self.key = key  # (the jitted programs' static arguments)
        self.avals = [(buffer_of(a).shape, buffer_of(a).dtype) for a in arrays]
        self.n_out = len(outs)
        self.metas = [meta_of(o) for o in outs]
        self.inexact = [is_inexact(o.dtype) for o in outs]
        self.out_tree = out_tree
        self.single = tree_util.treedef_is_leaf(out_tree) and self.n_out == 1
        self.backward: Any = None
        self.ct_avals: list = []

    @staticmethod
    def of(program: Any, key: tuple, tensors: list, outs: list, out_tree: Any
           ) -> "Recorded | None":
        """The record of a call that just ran the general path, or None where later calls
        cannot take the direct one (an input not a host tensor or array, a program that
        could not be compiled)."""
        arrays = func.to_array(tensors)
        if not (all(isinstance(t, (Tensor, Array)) for t in tensors) and _on_host(arrays)):
            return None
        forward = program.forward_saving.executable(*key[:-1], *arrays)
        return None if forward is None else Recorded(forward, key, arrays, outs, out_tree)

    def outputs(self, flat: list) -> Any:
        """The call's result, in its tree."""
        return flat[0] if self.single else self.out_tree.unflatten(flat)


class CompiledFunctionBackward(Node):
    """One call of a compiled program as one autograd node, as PyTorch's: the forward
    program returned the outputs and the residuals, the backward program turns the
    residuals and the outputs' cotangents into the inputs' gradients (no recomputation).
    The inputs are kept only for the engine's checks (in-place changes since the call, a
    second backward): the residuals may be views of their memory. The residuals are raw
    arrays where the call took `Recorded`'s direct path (``_recorded``), funcgrad Arrays
    otherwise."""

    __slots__ = ("_program", "_key", "_residuals", "_inputs", "_versions", "_recorded")
    takes_arrays = True

    def saved_refs(self) -> list:
        return [SavedRef.restored(t, vc, v, k, t._a) for k, (t, (vc, v)) in
                enumerate(zip(self._inputs, self._versions))]

    def saved_arrays(self) -> list:
        return [r if isinstance(r, Array) else new_array(r) for r in self._residuals or ()]

    def release(self) -> None:
        self._residuals = None
        self._inputs = self._versions = ()

    def apply(self, grads: list, create_graph: bool) -> list:
        out = [None if g is None else make(g) for g in self.apply_arrays(grads)]
        if create_graph:  # differentiable once, as PyTorch's compiled backward
            needs = [g for g in grads if g is not None and g.requires_grad]
            stop = node_class("CompiledFunctionBackwardBackward", _NoDoubleBackward)(
                tuple(g._edge() for g in needs) + self._next)
            stop._meta = [None]
            out = [None if g is None else make(func.to_array(g), grad_fn=stop)
                   for g in out]
        return out

    def apply_arrays(self, grads: list) -> list:
        """The inputs' gradients (funcgrad Arrays; one per edge: the wanted inputs)."""
        if self._residuals is None:
            raise RuntimeError(FREED_ERROR)
        for vc, v in self._versions:
            if vc.v != v:
                for ref in self.saved_refs():
                    ref.check(self)  # raises PyTorch's in-place error
        cts = [zeros_of(m) if g is None else g._a if isinstance(g, Tensor) else g
               for g, m in zip(grads, self._meta)]
        rec = self._recorded
        if rec is not None and rec.backward is not None and not float_checks.on:
            raws = _raws(cts, rec.ct_avals)
            if raws is not None:
                return [new_array(g) for g in rec.backward(*self._residuals, *raws)]
        residuals = [r if isinstance(r, Array) else new_array(r) for r in self._residuals]
        jitted = self._program.backward
        got = jitted(*self._key, *residuals, *cts)
        if rec is not None and rec.backward is None and _on_host(cts):
            program = jitted.executable(*self._key, *residuals, *cts)
            if program is not None:
                rec.ct_avals = [(buffer_of(c).shape, buffer_of(c).dtype) for c in cts]
                rec.backward = program.fn
        return got


class _NoDoubleBackward(Node):
    """What gradients computed by a compiled backward under ``create_graph`` lead to
    (named as PyTorch names it): differentiating them again raises PyTorch's error."""

    __slots__ = ()

    def apply(self, grads: list, create_graph: bool) -> list:
        raise RuntimeError(DOUBLE_BACKWARD_ERROR)


def call_recorded(program: Any, static: tuple, tensors: list, wanted: tuple, known: dict
                  ) -> Any:
    """The result of the saving forward program on ``tensors`` (in its tree), given one
    `CompiledFunctionBackward` node for those at the positions ``wanted`` (which require
    grad). ``known``: the `Recorded` calls of this state, by (input tree, wanted inputs),
    filled in here."""
    rec = known.get((static[1], wanted))
    raws = None if rec is None or float_checks.on else _raws(tensors, rec.avals)
    if raws is None:
        return _call_general(program, static, tensors, wanted, known)
    both = rec.forward(*raws)
    node = CompiledFunctionBackward(tuple([tensors[i]._edge() for i in wanted]), None,
                                    rec.metas)
    _fill(node, program, rec.key, tensors, rec)
    node._residuals = [r if type(r) is np.ndarray else np.asarray(r)
                       for r in both[rec.n_out:]]
    return rec.outputs([make(new_array(o), grad_fn=node, output_nr=k) if f else
                        make(new_array(o)) for k, (o, f) in
                        enumerate(zip(both[:rec.n_out], rec.inexact))])


def _call_general(program: Any, static: tuple, tensors: list, wanted: tuple,
                  known: dict) -> Any:
    """`call_recorded` through the jitted saving program (which traces a new signature);
    the call is recorded for the direct path of the next ones where it can be."""
    arrays = func.to_array(tensors)
    both = program.forward_saving(*static, wanted, *arrays)
    out_tree = program.out_trees[static]
    outs = both[:out_tree.num_leaves]
    key = (*static, wanted, avals_of(arrays))
    if (static[1], wanted) not in known or known[static[1], wanted] is not None and len(
            known[static[1], wanted].avals) != len(tensors):
        known[static[1], wanted] = Recorded.of(program, key, tensors, outs, out_tree)
    node = CompiledFunctionBackward(tuple([tensors[i]._edge() for i in wanted]), None,
                                    [meta_of(o) for o in outs])
    _fill(node, program, key, tensors, None)
    node._residuals = both[out_tree.num_leaves:]
    return out_tree.unflatten([make(o, grad_fn=node, output_nr=k) if is_inexact(o.dtype)
                               else make(o) for k, o in enumerate(outs)])


def _fill(node: CompiledFunctionBackward, program: Any, key: tuple, tensors: list,
          rec: Recorded | None) -> None:
    node._program, node._key, node._recorded = program, key, rec
    node._inputs = [t for t in tensors if isinstance(t, Tensor)]
    node._versions = [(t._vc, t._vc.v) for t in node._inputs]
