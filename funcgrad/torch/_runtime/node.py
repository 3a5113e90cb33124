"""Graph nodes: what a tensor's ``grad_fn`` is.

A `Node` has ``next_functions`` (one ``(node, input_nr)`` edge per differentiable input,
``(None, 0)`` where the input does not require grad), a sequence number (the engine runs
later-created nodes first), hooks, and ``apply(grads) -> grads``. Node classes are named as
PyTorch names them (``MulBackward0``); one class per name is created on first use so that
``type(y.grad_fn).__name__`` is that name.

`SavedRef` is one tensor a node saved: it remembers the tensor's version counter and the
version at save time, and raises PyTorch's in-place error if they differ on use.
"""
from __future__ import annotations

import itertools
import re
import threading
import weakref
from types import MappingProxyType
from typing import Any, Callable, Mapping

from funcgrad.torch._runtime import anomaly, grad_mode
from funcgrad.torch._runtime.dtypes import tensor_type_name, to_torch_dtype

__all__ = ["Node", "GraphRoot", "AccumulateGrad", "SavedRef", "RemovableHandle",
           "node_class", "setup", "sequence_number", "meta_of", "FREED_ERROR",
           "LEAF_INPLACE_ERROR", "VIEW_OF_LEAF_ERROR", "NO_GRAD_VIEW_ERROR",
           "NO_GRAD_VIEW_WRITTEN_ERROR"]

# PyTorch's refusals of in-place ops (its exact texts)
VIEW_OF_LEAF_ERROR = ("a view of a leaf Variable that requires grad is being used in an "
                      "in-place operation.")
NO_GRAD_VIEW_ERROR = (
    "A view was created in no_grad mode and is being modified inplace with grad mode "
    "enabled. Given that this use case is ambiguous and error-prone, it is forbidden. You "
    "can clarify your code by moving both the view and the inplace either both inside the "
    "no_grad block (if you don't want the inplace to be tracked) or both outside (if you "
    "want the inplace to be tracked).")
NO_GRAD_VIEW_WRITTEN_ERROR = (
    "A view was created in no_grad mode and its base or another view of its base has been "
    "modified inplace with grad mode enabled. Given that this use case is ambiguous and "
    "error-prone, it is forbidden. You can clarify your code by moving both the view and "
    "the inplace either both inside the no_grad block (if you don't want the inplace to be "
    "tracked) or both outside (if you want the inplace to be tracked).")
FREED_ERROR = (
    "Trying to backward through the graph a second time (or directly access saved tensors "
    "after they have already been freed). Saved intermediate values of the graph are freed "
    "when you call .backward() or autograd.grad(). Specify retain_graph=True if you need to "
    "backward through the graph a second time or if you need to access saved tensors after "
    "calling backward.")
LEAF_INPLACE_ERROR = "a leaf Variable that requires grad is being used in an in-place operation."

# nodes PyTorch writes by hand in C++ (their name() is namespaced; the generated
# XBackward0 nodes' is not)
_CPP_NODES = frozenset({"AccumulateGrad", "CopySlices", "CopyBackwards", "GraphRoot",
                        "NotImplemented", "Error", "DelayedError"})

# the creation counter: the engine runs nodes with larger numbers first (one counter for
# all threads, so numbers still grow along each thread's graph)
_sequence = itertools.count()


class RemovableHandle:
    """What ``register_hook`` returns: ``handle.remove()`` unregisters the hook."""

    _ids = itertools.count()

    def __init__(self, hooks: dict):
        self._hooks = hooks
        self.id = next(RemovableHandle._ids)

    def remove(self) -> None:
        self._hooks.pop(self.id, None)

    def __enter__(self) -> "RemovableHandle":
        return self

    def __exit__(self, *exc: Any) -> None:
        self.remove()


def add_hook(hooks: dict, fn: Callable) -> RemovableHandle:
    handle = RemovableHandle(hooks)
    hooks[handle.id] = fn
    return handle


class Node:
    """A backward function of the graph (PyTorch's ``torch.autograd.graph.Node``)."""

    __slots__ = ("_next", "_seq", "_pre_hooks", "_post_hooks", "_tensor_hooks",
                 "_retains", "_hooked", "_meta", "_trace", "_metadata", "__weakref__")

    def __init__(self, next_edges: tuple = (), seq: int | None = None,
                 meta: list | None = None):
        setup(self, next_edges, next(_sequence) if seq is None else seq,
              [] if meta is None else meta)

    def _table(self, name: str) -> dict:
        """The hook table ``name`` (``"_retains"``...) of this node, made writable."""
        table = getattr(self, name)
        if table is NO_ENTRIES:
            table = {}
            setattr(self, name, table)
            self._hooked = True
        return table

    @property
    def metadata(self) -> dict:
        """A dict for the user's own annotations of this node."""
        if self._metadata is None:
            self._metadata = {}
        return self._metadata

    # -- PyTorch's Node interface ------------------------------------------------------------
    def name(self) -> str:
        """The class name; PyTorch's hand-written nodes carry their C++ namespace."""
        name = type(self).__name__
        return "torch::autograd::" + name if name in _CPP_NODES else name

    @property
    def next_functions(self) -> tuple:
        return tuple(self._next)

    def register_hook(self, fn: Callable) -> RemovableHandle:
        """``fn(grad_inputs, grad_outputs)`` runs after this node; it may return new
        grad_inputs."""
        return add_hook(self._table("_post_hooks"), fn)

    def register_prehook(self, fn: Callable) -> RemovableHandle:
        """``fn(grad_outputs)`` runs before this node; it may return new grad_outputs."""
        return add_hook(self._table("_pre_hooks"), fn)

    def _sequence_nr(self) -> int:
        return self._seq

    def __repr__(self) -> str:
        return f"<{type(self).__name__} object at {hex(id(self))}>"

    def __call__(self, *grads: Any) -> Any:
        out = self.apply(list(grads), False)
        return out[0] if len(out) == 1 else tuple(out)

    # -- engine interface ----------------------------------------------------------------------
    # whether the engine may call `apply_arrays` (outside create_graph, without hooks)
    takes_arrays = False

    @property
    def num_outputs(self) -> int:
        return len(self._meta)

    def apply(self, grads: list, create_graph: bool) -> list:
        """Gradients for ``next_functions`` given the gradients of this node's outputs."""
        raise NotImplementedError

    def apply_arrays(self, grads: list) -> list:
        """`apply` without create_graph, from gradients that are tensors or funcgrad arrays
        (None for zero) to funcgrad arrays: what the engine passes between nodes that take
        arrays (no tensor made per gradient). Nodes with ``takes_arrays`` define it."""
        raise NotImplementedError

    def release(self) -> None:
        """Free saved values (after a backward without retain_graph)."""

    def saved_refs(self) -> list:
        return []

    def saved_arrays(self) -> list:
        """The arrays this node keeps for its backward (for memory reports)."""
        return []


def setup(node: Any, next_edges: tuple, seq: Any, meta: Any) -> Any:
    """Fill in a new node's `Node` fields and return it (`Node.__init__`'s, and the
    facade's for the node of each recorded op, made without ``type.__call__``:
    ``setup(object.__new__(cls), edges, sequence_number(), meta)``, the caller filling in
    the fields of its class)."""
    node._next = next_edges
    node._seq = seq
    # hook tables: most nodes never get a hook, so they share one empty read-only mapping
    # until `_table` gives them their own and sets ``_hooked`` (the engine's one check)
    node._pre_hooks = node._post_hooks = NO_ENTRIES
    node._tensor_hooks = NO_ENTRIES   # output_nr -> {id: hook} (hooks of non-leaf tensors)
    node._retains = NO_ENTRIES        # output_nr -> (weakref of a retain_grad tensor,)
    node._hooked = False
    node._meta = meta  # per output: (shape, dtype, device)
    node._trace = anomaly.forward_trace() if anomaly._mode["enabled"] else None
    node._metadata = None
    return node


# a new node's sequence number
sequence_number = _sequence.__next__
_new = object.__new__


def meta_of(a: Any) -> tuple:
    """(shape, dtype, device) of a funcgrad array or tracer."""
    return a.shape, a.dtype, a.device


_CLASSES: dict = {}
# the hook tables of tensors and nodes that have none: one shared read-only empty mapping
# (few get hooks, every op result is a tensor with a node); the first hook gets a dict
NO_ENTRIES: Mapping = MappingProxyType({})


def node_class(name: str, base: type) -> type:
    """The node class called ``name`` (created once), so that nodes print as PyTorch's."""
    key = (name, base)
    cls = _CLASSES.get(key)
    if cls is None:
        cls = _CLASSES[key] = type(name, (base,), {"__slots__": ()})
        cls.__module__ = "torch.autograd.graph"
    return cls


class GraphRoot(Node):
    """The engine's starting node: its edges are the roots, it outputs their gradients."""

    __slots__ = ("grads",)

    def __init__(self, edges: tuple, grads: list):
        super().__init__(edges, seq=float("inf"))
        self.grads = grads

    def apply(self, grads: list, create_graph: bool) -> list:
        return list(self.grads)


_ACCUMULATE_LOCK = threading.Lock()  # PyTorch locks each AccumulateGrad likewise


class AccumulateGrad(Node):
    """The node of a leaf tensor: adds incoming gradients into ``variable.grad`` (in place,
    keeping the same tensor object, unless the graph of the gradient is being built)."""

    __slots__ = ("variable",)
    num_outputs = 1  # (no output meta to keep: a leaf's gradient is never materialised here)
    takes_arrays = True

    def __init__(self, variable: Any):
        super().__init__((), seq=float("inf"))
        self.variable = variable

    def apply(self, grads: list, create_graph: bool) -> list:
        g = grads[0]
        if g is None:
            return []
        if not grad_mode.is_grad_enabled():
            return self.apply_arrays(grads)
        var = self.variable
        with _ACCUMULATE_LOCK:  # threads running backward into one leaf add up exactly
            var._accumulate_graph_grad(g)
        self._post_accumulate()
        return []

    def apply_arrays(self, grads: list) -> list:
        """Accumulate into ``.grad`` in place (the first gradient is kept without a copy,
        borrowed: the engine's gradient may share memory)."""
        g = grads[0]
        if g is None:
            return []
        var = self.variable
        with _ACCUMULATE_LOCK:
            var._accumulate_grad(g)
        if var._post_hooks:  # (most leaves have none: no call for them)
            self._post_accumulate()
        return []

    def _post_accumulate(self) -> None:
        var = self.variable
        for hook in list(var._post_hooks.values()):
            hook(var)


class _AsStrided:
    """The name PyTorch's error gives the node of a view whose storage was written."""

    @staticmethod
    def name() -> str:
        return "AsStridedBackward0"


_AS_STRIDED = _AsStrided()


class SavedRef:
    """A saved tensor's version check (and, for saved outputs, how to rebuild it)."""

    __slots__ = ("vc", "version", "tensor", "is_output", "output_nr", "position", "array")

    def __init__(self, tensor: Any, is_output: bool = False, output_nr: int = 0,
                 version: int | None = None, keep: bool = True, position: int = 0):
        self.position = position  # which input of the op (for a saved input)
        self.vc = tensor._vc
        self.version = tensor._vc.v if version is None else version
        self.tensor = weakref.ref(tensor) if not keep else tensor
        # a saved output of the node that saves it (output ``output_nr``); the node is not
        # kept here: node -> ref -> node would be a cycle, keeping the whole graph and its
        # arrays alive until the garbage collector runs
        self.is_output = is_output
        self.output_nr = output_nr
        self.array = tensor._a  # the saved value (its shape and dtype: for the error message)

    @classmethod
    def restored(cls, held: Any, vc: Any, version: int, position: int, array: Any
                 ) -> "SavedRef":
        """The ref of a tensor saved as its parts: ``held`` (the tensor, or for a saved
        output, ``position`` -1, a weak reference to it), its version counter, its version
        and its array then."""
        ref = _new(cls)
        ref.vc, ref.version, ref.tensor, ref.array = vc, version, held, array
        ref.is_output = position < 0
        ref.output_nr = 0
        ref.position = max(position, 0)
        return ref

    def check(self, owner: Any) -> None:
        """Raise PyTorch's in-place error if the tensor changed since ``owner`` (the node
        holding this ref) saved it."""
        if self.vc.v == self.version:
            return
        shape, dtype, dev = meta_of(self.array)
        dtype = to_torch_dtype(dtype)
        t = self.tensor() if isinstance(self.tensor, weakref.ref) else self.tensor
        if self.is_output:
            fn, nr = owner, self.output_nr
        elif t is not None and t._view is not None and t._view.base.requires_grad:
            fn, nr = _AS_STRIDED, 0  # PyTorch names a written view's regenerated node
        elif t is not None and t._grad_fn is not None:
            fn, nr = t._grad_fn, t._output_nr
        else:
            fn = None
        which = f", which is output {nr} of {_op_name(fn.name())}," if fn is not None else ""
        if anomaly.is_anomaly_enabled():
            hint = ("Hint: the backtrace further above shows the operation that failed to "
                    "compute its gradient. The variable in question was changed in there or "
                    "anywhere later. Good luck!")
        else:
            hint = ("Hint: enable anomaly detection to find the operation that failed to "
                    "compute its gradient, with torch.autograd.set_detect_anomaly(True, "
                    "check_nan=False).")
        raise RuntimeError(
            "one of the variables needed for gradient computation has been modified by an "
            f"inplace operation: [{tensor_type_name(dtype, dev)} {list(shape)}]{which} is at "
            f"version {self.vc.v}; expected version {self.version} instead. {hint}")


def _op_name(node_name: str) -> str:
    """The operation a node's name stands for, as PyTorch's in-place error names it:
    ``MulBackward0`` -> ``Mul``, ``ClampBackward1`` -> ``Clamp1``; names of other forms
    (``CopySlices``) as they are."""
    return re.sub(r"Backward(\d+)$", lambda m: "" if m.group(1) == "0" else m.group(1),
                  node_name)
