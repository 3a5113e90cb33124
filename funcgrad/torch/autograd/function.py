"""`torch.autograd.Function`: user-defined forward and backward.

This is the one place where the facade runs derivative code it did not get from the
primitive registry: the user's own ``backward``. As in PyTorch, ``ctx`` *is* the graph node
(class ``<Name>Backward``); ``forward`` runs with grad mode off; the outputs get the node as
``grad_fn``. Both styles work: ``forward(ctx, *args)``, or ``forward(*args)`` plus
``setup_context(ctx, inputs, output)``.

Under ``create_graph=True`` the user's backward runs on tensors with grad mode on, so the
ops it uses are recorded and can be differentiated again; `once_differentiable` marks a
backward that must not be.
"""
from __future__ import annotations

import functools
import warnings
from typing import Any, Callable

import numpy as np

from funcgrad.torch._tensor import Tensor, make
from funcgrad.torch.autograd import forward_ad
from funcgrad.torch._runtime import dual
from funcgrad.torch._runtime import grad_mode
from funcgrad.torch._runtime.node import (FREED_ERROR, LEAF_INPLACE_ERROR, Node, SavedRef,
                                          node_class)
from funcgrad.torch._op_node import zeros_of

__all__ = ["Function", "FunctionCtx", "BackwardCFunction", "once_differentiable",
           "InplaceFunction"]


class FunctionCtx:
    """The methods ``ctx`` offers in ``forward``/``setup_context``."""

    def save_for_backward(self, *tensors: Any) -> None:
        """Save tensors (or None) for backward; they are version-checked on use."""
        for t in tensors:
            if t is not None and not isinstance(t, Tensor):
                raise TypeError("save_for_backward can only save variables, but argument "
                                f"{tensors.index(t)} is of type {type(t).__name__}")
        self._to_save = tensors

    def save_for_forward(self, *tensors: Any) -> None:
        self._to_save_forward = tensors

    def mark_dirty(self, *tensors: Tensor) -> None:
        """Declare inputs that ``forward`` modified in place (and returns)."""
        self._dirty = tensors

    def mark_non_differentiable(self, *tensors: Tensor) -> None:
        """Declare outputs that have no gradient (indices, masks...)."""
        self._non_diff = tensors

    def set_materialize_grads(self, value: bool) -> None:
        """With False, backward receives None (not zeros) for outputs without gradient."""
        self.materialize_grads = bool(value)


class BackwardCFunction(Node, FunctionCtx):
    """The node (and ctx) of one call of a custom Function."""

    _forward_cls: type = None  # type: ignore[assignment]
    # a Python class in PyTorch (not a C++ node): the default repr, with its module
    __repr__ = object.__repr__

    def __init__(self) -> None:
        super().__init__(())
        self._to_save: tuple = ()
        self._dirty: tuple = ()
        self._non_diff: tuple = ()
        self._saved: list | None = None
        self._arg_meta: list = []
        self._tensor_pos: list = []
        self._out_layout: list = []
        self.materialize_grads = True
        self.needs_input_grad: tuple = ()

    # -- saved tensors ---------------------------------------------------------------------
    def _resolve_saved(self, outputs: list) -> None:
        saved = []
        for t in self._to_save:
            if t is None:
                saved.append(None)
                continue
            k = next((i for i, o in enumerate(outputs) if o is t), None)
            if k is not None and t._grad_fn is self:
                saved.append(("out", SavedRef(t, is_output=True, output_nr=t._output_nr,
                                              keep=False), t._a, t._output_nr))
            else:
                saved.append(("tensor", SavedRef(t), t))
        self._saved = saved
        self._to_save = ()

    @property
    def saved_tensors(self) -> tuple:
        if self._saved is None:
            if self._to_save is not None:
                return tuple(self._to_save)
            raise RuntimeError(FREED_ERROR)
        out = []
        for entry in self._saved:
            if entry is None:
                out.append(None)
                continue
            entry[1].check(self)
            if entry[0] == "out":
                out.append(make(entry[2], grad_fn=self, output_nr=entry[3], vc=entry[1].vc))
            else:
                out.append(entry[2])
        return tuple(out)

    def saved_arrays(self) -> list:
        """The arrays kept for backward (for memory reports)."""
        if not self._saved:
            return []
        return [e[2] if e[0] == "out" else e[2]._a for e in self._saved if e is not None]

    def saved_refs(self) -> list:
        return [e[1] for e in self._saved or () if e is not None]

    def release(self) -> None:
        if self._saved:
            self._saved = None
            self._to_save = None

    # -- backward ----------------------------------------------------------------------------
    def apply(self, grads: list, create_graph: bool) -> list:
        full = []
        for entry in self._out_layout:  # None, or (output slot or None, meta)
            if entry is None:
                full.append(None)
                continue
            k, m = entry
            g = grads[k] if k is not None and k < len(grads) else None
            if g is None and self.materialize_grads:
                g = make(zeros_of(m))
            full.append(g)
        result = self._forward_cls.backward(self, *full)
        if not isinstance(result, tuple):
            result = (result,)
        n = len(self._arg_meta)
        if len(result) != n:
            if len(result) > n and all(r is None for r in result[n:]):
                result = result[:n]
            else:
                raise RuntimeError(f"function {self.name()} returned an incorrect number of "
                                   f"gradients (expected {n}, got {len(result)})")
        out = []
        for i, (g, meta) in enumerate(zip(result, self._arg_meta)):
            if meta is None:
                if g is not None:
                    raise RuntimeError(f"function {self.name()} returned a gradient different "
                                       f"than None at position {i + 1}, but the "
                                       "corresponding forward input was not a Variable")
                continue
            out.append(self._validate(i, g, meta))
        return out

    def _validate(self, i: int, g: Any, meta: tuple) -> Any:
        if g is None:
            return None
        if not isinstance(g, Tensor):
            raise TypeError(f"function {self.name()} returned a gradient of type "
                            f"{type(g).__name__} at position {i + 1}; expected a Tensor or "
                            "None")
        shape, dtype = meta
        if tuple(g.shape) != shape:
            lead = g.ndim - len(shape)
            try:
                if np.broadcast_shapes(shape, tuple(g.shape)) != tuple(g.shape):
                    raise ValueError
                axes = tuple(range(lead)) + tuple(lead + j for j, s in enumerate(shape)
                                                  if s == 1 and g.shape[lead + j] != 1)
                g = g.sum(dim=axes, keepdim=True) if axes else g
                g = g.reshape(shape)
            except ValueError:
                raise RuntimeError(f"Function {self.name()} returned an invalid gradient at "
                                   f"index {i} - got {list(g.shape)} but expected shape "
                                   f"compatible with {list(shape)}") from None
        if g.dtype != dtype:
            g = g.to(dtype)
        return g


def _is_setup_context_style(cls: type) -> bool:
    return cls.setup_context is not Function.setup_context


_LEGACY_ERROR = ("Legacy autograd function with non-static forward method is deprecated. "
                 "Please use new-style autograd function with static forward method. "
                 "(Example: https://pytorch.org/docs/stable/autograd.html"
                 "#torch.autograd.Function)")


class Function(FunctionCtx):
    """Subclass with ``@staticmethod forward(ctx, *args)`` and ``@staticmethod
    backward(ctx, *grad_outputs)``; call with ``MyFunction.apply(*args)``."""

    _backward_cls: type

    def __init_subclass__(cls, **kwargs: Any) -> None:
        super().__init_subclass__(**kwargs)
        # a class of its own (not one per name: two Functions may share a name)
        cls._backward_cls = type(f"{cls.__name__}Backward", (BackwardCFunction,),
                                 {"__slots__": (), "_forward_cls": cls,
                                  "__module__": "torch.autograd.function"})

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        warnings.warn(f"{type(self)} should not be instantiated. Methods on autograd "
                      "functions are all static, so you should invoke them on the class "
                      "itself. Instantiating an autograd function will raise an error in a "
                      "future version of PyTorch.", DeprecationWarning, stacklevel=2)

    def __call__(self, *args: Any, **kwargs: Any) -> Any:
        raise RuntimeError(_LEGACY_ERROR)

    @staticmethod
    def forward(ctx: Any, *args: Any, **kwargs: Any) -> Any:
        raise NotImplementedError("You must implement the forward function for custom "
                                  "autograd.Function.")

    @staticmethod
    def setup_context(ctx: Any, inputs: tuple, output: Any) -> Any:
        raise NotImplementedError("setup_context is not implemented.")

    @staticmethod
    def backward(ctx: Any, *grad_outputs: Any) -> Any:
        raise NotImplementedError("You must implement either the backward or vjp method for "
                                  "your custom autograd.Function to use it with backward "
                                  "mode AD.")

    @staticmethod
    def vjp(ctx: Any, *grad_outputs: Any) -> Any:
        return Function.backward(ctx, *grad_outputs)

    @staticmethod
    def jvp(ctx: Any, *grad_inputs: Any) -> Any:
        """The forward-mode rule: tangents of the outputs from those of the inputs."""
        raise NotImplementedError(_NO_JVP)

    @classmethod
    def apply(cls, *args: Any, **kwargs: Any) -> Any:
        if cls is Function:
            raise RuntimeError(_LEGACY_ERROR)
        ctx = cls._backward_cls()
        ctx.needs_input_grad = tuple(isinstance(a, Tensor) and a.requires_grad for a in args)
        tangents = forward_ad.dual_tangents(args)
        if tangents is not None:  # forward AD: forward on the primals, then the jvp rule
            if cls.jvp is Function.jvp:
                raise NotImplementedError(_NO_JVP)
            args = tuple(forward_ad.primal_of(a) for a in args)
        with grad_mode.no_grad():
            if _is_setup_context_style(cls):
                outputs = cls.forward(*args, **kwargs)
                cls.setup_context(ctx, args, outputs)
            else:
                outputs = cls.forward(ctx, *args, **kwargs)
        executable = grad_mode.state.enabled and any(ctx.needs_input_grad)
        results = _wrap_outputs(ctx, args, outputs, executable)
        if tangents is not None:
            _attach_output_tangents(results, cls.jvp(ctx, *tangents))
        return results


_NO_JVP = ("You must implement the jvp function for custom autograd.Function to use it with "
           "forward mode AD.")


def _attach_output_tangents(results: Any, tangents: Any) -> None:
    """Give each tensor output its tangent from the Function's ``jvp``."""
    outs = results if isinstance(results, tuple) else (results,)
    tangents = tangents if isinstance(tangents, tuple) else (tangents,)
    for o, t in zip(outs, tangents):
        if isinstance(o, Tensor) and isinstance(t, Tensor):
            dual.attach_tangent(o, t)


def _wrap_outputs(ctx: BackwardCFunction, args: tuple, outputs: Any,
                  executable: bool) -> Any:
    """``forward``'s outputs as `Function.apply` returns them: with ``ctx`` as the node of
    each differentiable tensor output when ``executable`` (grad mode on, an input requires
    grad), and ``ctx`` made ready for backward (its edges, its saved tensors)."""
    is_tuple = isinstance(outputs, tuple)
    outs = list(outputs) if is_tuple else [outputs]
    if executable:
        _connect(ctx, args)
    dirty = {id(t) for t in ctx._dirty}
    non_diff = {id(t) for t in ctx._non_diff}
    results = []
    k = 0  # the number of the next differentiable output
    for o in outs:
        if not isinstance(o, Tensor):
            results.append(o)
            ctx._out_layout.append(None)
            continue
        o, was_dirty = _output_tensor(o, args, dirty, executable)
        meta = (tuple(o.shape), o.dtype.np, o._a.device)
        if executable and id(o) not in non_diff and (o.dtype.is_floating_point or
                                                     o.dtype.is_complex):
            o._grad_fn, o._output_nr, o._rg = ctx, k, False
            ctx._meta.append(meta)
            ctx._out_layout.append((k, meta))
            k += 1
        else:  # not differentiable: backward gets zeros (or None) for it
            ctx._out_layout.append((None, meta))
            if was_dirty:
                o._grad_fn = None
        results.append(o)
    if executable:
        ctx._resolve_saved(results)
    else:
        ctx._saved = [None if t is None else ("tensor", SavedRef(t), t)
                      for t in ctx._to_save]
    return tuple(results) if is_tuple else results[0]


def _connect(ctx: BackwardCFunction, args: tuple) -> None:
    """Give ``ctx`` its edges, one per tensor argument, and the shape and dtype of each
    argument's gradient (None for the others): what its backward checks and returns."""
    ctx._tensor_pos = [i for i, a in enumerate(args) if isinstance(a, Tensor)]
    ctx._next = tuple(args[i]._edge() for i in ctx._tensor_pos)
    ctx._arg_meta = [(tuple(a.shape), a.dtype) if isinstance(a, Tensor) else None
                     for a in args]


def _output_tensor(o: Tensor, args: tuple, dirty: set, executable: bool
                   ) -> tuple[Tensor, bool]:
    """A tensor output as it is returned, and whether it is a dirty input: that is
    returned itself (modified in place; not a leaf that requires grad, PyTorch's error);
    any other input, as an alias of it (PyTorch's view)."""
    is_input = any(o is a for a in args)
    if is_input and id(o) in dirty:
        if executable and o._grad_fn is None and o._rg:
            raise RuntimeError(LEAF_INPLACE_ERROR)
        return o, True
    if is_input:
        o._own()
        o = make(o._a, vc=o._vc)  # an alias of the input, as PyTorch's view
    return o, False


class InplaceFunction(Function):
    def __init__(self, inplace: bool = False):
        self.inplace = inplace


class _DelayedError(Node):
    __slots__ = ()

    def apply(self, grads: list, create_graph: bool) -> list:
        raise RuntimeError("trying to differentiate twice a function that was marked with "
                           "@once_differentiable")


def once_differentiable(fn: Callable) -> Callable:
    """Decorate ``backward`` when it cannot itself be differentiated: it runs without
    recording, and differentiating its results raises."""
    @functools.wraps(fn)
    def wrapper(ctx: Any, *args: Any) -> Any:
        with grad_mode.no_grad():
            outputs = fn(ctx, *args)
        if not grad_mode.state.enabled:
            return outputs
        needs = [a for a in args if isinstance(a, Tensor) and a.requires_grad]
        if not needs:
            return outputs
        # PyTorch 2.13 names this node torch::autograd::Error
        err = node_class("Error", _DelayedError)(tuple(a._edge() for a in needs))
        single = not isinstance(outputs, tuple)
        wrapped = tuple(make(o._a, grad_fn=err, output_nr=0) if isinstance(o, Tensor)
                        else o for o in ((outputs,) if single else outputs))
        err._meta = [None]
        return wrapped[0] if single else wrapped
    return wrapper
