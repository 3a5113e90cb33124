"""`Tensor`: a PyTorch-style handle on a funcgrad Array, with autograd metadata.

A concrete tensor's Array wraps a numpy (or cupy) ndarray, and that memory is the tensor's
storage (`funcgrad.torch._runtime.storage`): ``from_numpy``, ``numpy()``, views (``view``,
slicing, ``t()``, ``expand``, ``diagonal``...) and ``detach()`` share it, as in PyTorch. A view
remembers its base and how it was made (`ViewOf`) and shares the base's version counter.
In-place ops (`funcgrad.torch._dispatch.inplace`) compute the new values with funcgrad,
then write them into the memory and bump the counter; under autograd an in-place op on a
view is recorded on the base as PyTorch records it (``CopySlices``).

A tensor holding a tracer (inside ``torch.func`` transforms, ``torch.compile``) has no
memory: in-place ops rebind it to the new value instead.

The operator and op methods are installed from the op tables (`funcgrad.torch._ops`); the
shape, memory and conversion methods are `funcgrad.torch._tensor_data.TensorData`'s.
"""
from __future__ import annotations

import copy
import operator
import warnings
import weakref
from typing import Any, Callable, Iterator

import numpy as np

from funcgrad.array import Array, WeakArray, strengthened
from funcgrad.torch._runtime import dtypes as D, dual, grad_mode, storage as _storage
from funcgrad.torch._runtime.node import (AccumulateGrad, LEAF_INPLACE_ERROR, NO_ENTRIES,
                                          NO_GRAD_VIEW_ERROR, NO_GRAD_VIEW_WRITTEN_ERROR,
                                          VIEW_OF_LEAF_ERROR, add_hook)
import funcgrad.numpy as fnp
from funcgrad.torch._tensor_data import TensorData

__all__ = ["Tensor", "ViewOf", "make", "borrowing", "array_of", "as_array", "grad_of",
           "is_tensor", "tensors_in", "of_other_kind"]


class _Version:
    """A version counter, shared by a tensor, its views and its ``detach()``-ed aliases."""

    __slots__ = ("v",)

    def __init__(self) -> None:
        self.v = 0


class _Borrowed(_Version):
    """The version counter of a tensor holding memory that values elsewhere may share (a
    gradient the backward pass computed, stored as ``.grad`` without a copy): the first
    write or alias of it copies the memory first (`Tensor._own`)."""

    __slots__ = ()


class ViewOf:
    """How a view tensor was made: ``base``, the tensor whose storage it views (the first
    one: a view of a view points to the same base, as PyTorch's ``_base``); ``fn``, base
    array -> view array (the view ops, composed), which autograd needs to record an
    in-place write through the view on the base; ``grad_enabled``, grad mode when it was
    made; ``multi``, (op name, output number) when its op returned several views;
    ``version``, the shared version counter's value when the view's graph was made (a
    write into the storage since then means its graph must be made again off the base's,
    as PyTorch regenerates it: `Tensor._refresh_view`); ``node``, the name of that
    regenerated node (PyTorch's ``AsStridedBackward0``, or the view op's own node where
    the view changes the dtype)."""

    __slots__ = ("base", "fn", "grad_enabled", "multi", "version", "node")

    def __init__(self, base: "Tensor", fn: Callable, grad_enabled: bool,
                 multi: tuple | None = None, node: str = "AsStridedBackward0"):
        self.base = base
        self.fn = fn
        self.node = node
        self.grad_enabled = grad_enabled
        self.multi = multi
        self.version = base._vc.v


def of_other_kind(values: Any) -> "Tensor | None":
    """The first of ``values`` that is a tensor of another kind than a dense one
    (``Tensor._refuses``: a placeholder, a sparse tensor), or None. Such a tensor's
    ``_kind_op(op, args, kwargs)`` runs op ``op`` for it, or raises its refusal."""
    for v in values:
        if isinstance(v, Tensor) and v._refuses:
            return v
    return None


def make(data: Any, requires_grad: bool = False, grad_fn: Any = None, output_nr: int = 0,
         cls: type | None = None, vc: _Version | None = None, view: ViewOf | None = None
         ) -> "Tensor":
    """A new tensor on funcgrad array ``data`` (no copy, no checks). Every op result is
    made here, so the objects are filled in directly rather than through constructors.
    A weakly typed Array (from funcgrad.numpy on Python numbers) is held strong: PyTorch's
    tensors have no weak types, and the storage shares only strong Arrays' memory."""
    t = _new(cls or Tensor)
    t._a = strengthened(data) if type(data) is WeakArray else data
    if vc is None:
        vc = _new(_Version)
        vc.v = 0
    t._vc = vc
    t._view = view
    t._rg = requires_grad
    t._grad_fn = grad_fn
    t._output_nr = output_nr
    t._grad = None
    t._hooks = NO_ENTRIES
    t._post_hooks = NO_ENTRIES
    t._acc = None
    if grad_mode.special.open:  # some thread is in inference mode or forward AD
        state = grad_mode.state
        t._inference = state.inference
        if state.dual_levels and type(data) is not Array:  # maybe a dual tensor's result
            dual.track(t)
    else:
        t._inference = False
    return t


_new = object.__new__

# The package's reads of a tensor's fields where they run per tensor on every call (the
# optimizers' fused updates, a compiled training step): C getters, cheaper than a property.
array_of = operator.attrgetter("_a")    # its funcgrad Array (a tracer while traced)
grad_of = operator.attrgetter("_grad")  # its .grad, without the property's warning


def proxy(data: Any, edge: tuple) -> "Tensor":
    """A tensor holding ``data`` that feeds gradients into ``edge`` (for double backward)."""
    node, nr = edge
    return make(data, requires_grad=node is not None, grad_fn=node, output_nr=nr)


def borrowing(data: Any) -> "Tensor":
    """A new tensor on ``data`` borrowing that memory (`Tensor._borrowing`): a gradient
    computed elsewhere, stored as ``.grad`` without a copy."""
    return make(data, vc=_Borrowed())


def as_array(value: Any) -> Any:
    """The funcgrad array of a tensor, or ``value`` itself (an array already)."""
    return value._a if isinstance(value, Tensor) else value


def is_tensor(obj: Any) -> bool:
    return isinstance(obj, Tensor)


def tensors_in(values: Any) -> Iterator["Tensor"]:
    """The tensors among ``values`` and inside their lists and tuples (``cat``'s)."""
    for v in values:
        if isinstance(v, Tensor):
            yield v
        elif isinstance(v, (list, tuple)):
            yield from tensors_in(v)


def _size_args(size: tuple) -> tuple:
    if len(size) == 1 and isinstance(size[0], (tuple, list)):
        size = tuple(size[0])
    return tuple(int(s) for s in size)


class Tensor(TensorData):
    """A PyTorch-style tensor. Build one with `torch.tensor`, the factories, or ops (its
    shape, memory and conversions: `TensorData`)."""

    __slots__ = ("_a", "_vc", "_view", "_rg", "_grad_fn", "_output_nr", "_grad", "_hooks",
                 "_post_hooks", "_acc", "_inference", "__weakref__", "__dict__")
    __hash__ = object.__hash__
    __array_priority__ = 1000
    # True for tensors the dense ops refuse: placeholders (nn.UninitializedParameter) and
    # sparse tensors; such a class's ``_refusal(op)`` is the error to raise, and its
    # ``_kind_op`` runs the ops it has (`of_other_kind`)
    _refuses = False

    # What the layers above give the tensor is attached from above (`_methods.install`):
    # the legacy constructor ``Tensor(2, 3)`` (the factories), ``backward`` (the engine),
    # the replay of a written view's graph (the op layer) and ``repr`` (printing).

    def __reduce_ex__(self, protocol: int) -> tuple:
        return (_rebuild, (type(self), self.detach().numpy(force=True), self._rg))

    def as_subclass(self, cls: type) -> "Tensor":
        """A ``cls`` instance on this tensor's memory, version counter and graph
        (PyTorch's ``Tensor.as_subclass``)."""
        if not (isinstance(cls, type) and issubclass(cls, Tensor)):
            raise TypeError(f"as_subclass: expected a subclass of torch.Tensor, got {cls!r}")
        return make(self._a, self._rg, self._grad_fn, self._output_nr, cls=cls, vc=self._vc,
                    view=self._view)

    def __deepcopy__(self, memo: dict) -> "Tensor":
        if not self.is_leaf:
            raise RuntimeError("Only Tensors created explicitly by the user (graph leaves) "
                               "support the deepcopy protocol at the moment.  If you were "
                               "attempting to deepcopy a module, this may be because of a "
                               "torch.nn.utils.weight_norm usage, see "
                               "https://github.com/pytorch/pytorch/pull/103001")
        if id(self) in memo:
            return memo[id(self)]
        new = make(self._copied_array(), self._rg, cls=type(self))
        memo[id(self)] = new
        if self._grad is not None:
            new._grad = copy.deepcopy(self._grad, memo)
        new.__dict__.update(copy.deepcopy(self.__dict__, memo))
        return new

    # -- autograd metadata -------------------------------------------------------------
    @property
    def requires_grad(self) -> bool:
        view = self._view
        if view is not None and view.version != self._vc.v:
            self._refresh_view()
        return self._rg or self._grad_fn is not None

    @requires_grad.setter
    def requires_grad(self, value: bool) -> None:
        if self._grad_fn is not None:
            raise RuntimeError(_leaf_error(bool(value)))
        if value and not (self.dtype.is_floating_point or self.dtype.is_complex):
            raise RuntimeError("only Tensors of floating point and complex dtype can "
                               "require gradients")
        self._rg = bool(value)

    def requires_grad_(self, requires_grad: bool = True) -> "Tensor":
        if self._grad_fn is not None:
            if not requires_grad:
                raise RuntimeError(_leaf_error(False))
            return self
        if requires_grad and not (self.dtype.is_floating_point or self.dtype.is_complex):
            raise RuntimeError("Only Tensors of floating point and complex dtype can "
                               "require gradients")
        self._rg = bool(requires_grad)
        return self

    @property
    def is_leaf(self) -> bool:
        return self._grad_fn is None

    @property
    def grad_fn(self) -> Any:
        view = self._view
        if view is not None and view.version != self._vc.v:
            if not view.grad_enabled and view.base.requires_grad:
                raise RuntimeError(NO_GRAD_VIEW_WRITTEN_ERROR)
            self._refresh_view()
        return self._grad_fn

    @property
    def output_nr(self) -> int:
        return self._output_nr

    @property
    def grad(self) -> "Tensor | None":
        if self._grad_fn is not None and not self.retains_grad and self._grad is None:
            warnings.warn(
                "The .grad attribute of a Tensor that is not a leaf Tensor is being "
                "accessed. Its .grad attribute won't be populated during "
                "autograd.backward(). If you indeed want the .grad field to be populated "
                "for a non-leaf Tensor, use .retain_grad() on the non-leaf Tensor. If you "
                "access the non-leaf Tensor by mistake, make sure you access the leaf "
                "Tensor instead. See github.com/pytorch/pytorch/pull/30531 for more "
                "informations.", UserWarning, stacklevel=2)
        return self._grad

    @grad.setter
    def grad(self, value: "Tensor | None") -> None:
        if value is not None:
            if not isinstance(value, Tensor):
                raise TypeError(f"assigned grad expected to be a Tensor or None but got "
                                f"grad of type {type(value).__name__}")
            if value.dtype != self.dtype:
                raise RuntimeError("attempting to assign a gradient with dtype "
                                   f"'{value.dtype.name}' to a tensor with dtype "
                                   f"'{self.dtype.name}'. Please ensure that the gradient "
                                   "and the tensor have the same dtype")
            if tuple(value.shape) != tuple(self.shape):
                raise RuntimeError("assigned grad has data of a different size")
        self._grad = value

    @grad.deleter
    def grad(self) -> None:
        self._grad = None

    @property
    def retains_grad(self) -> bool:
        fn = self._grad_fn
        if fn is None:
            return False
        ref = fn._retains.get(self._output_nr)
        return ref is not None and ref[0]() is self

    def retain_grad(self) -> None:
        """Keep this non-leaf tensor's gradient in ``.grad`` during backward."""
        if not self.requires_grad:
            raise RuntimeError("can't retain_grad on Tensor that has requires_grad=False")
        if self._grad_fn is None or self.retains_grad:
            return
        self._grad_fn._table("_retains")[self._output_nr] = (weakref.ref(self),)

    def register_hook(self, hook: Callable) -> Any:
        """``hook(grad)`` runs when this tensor's gradient is computed; a returned tensor
        replaces the gradient. Returns a handle with ``remove()``."""
        if not self.requires_grad:
            raise RuntimeError("cannot register a hook on a tensor that doesn't require "
                               "gradient")
        if self._grad_fn is None:
            if self._hooks is NO_ENTRIES:
                self._hooks = {}
            return add_hook(self._hooks, hook)
        hooks = self._grad_fn._table("_tensor_hooks").setdefault(self._output_nr, {})
        return add_hook(hooks, hook)

    def register_post_accumulate_grad_hook(self, hook: Callable) -> Any:
        """``hook(tensor)`` runs after a gradient was accumulated into this leaf's .grad."""
        if self._grad_fn is not None:
            raise RuntimeError("post accumulate grad hooks cannot be registered on non-leaf "
                               "tensors")
        if not self.requires_grad:
            raise RuntimeError("cannot register a hook on a tensor that doesn't require "
                               "gradient")
        if self._post_hooks is NO_ENTRIES:
            self._post_hooks = {}
        return add_hook(self._post_hooks, hook)

    def _accumulator(self) -> AccumulateGrad:
        """This leaf's AccumulateGrad node (kept alive by the graphs that point to it)."""
        node = self._acc() if self._acc is not None else None
        if node is None:
            node = AccumulateGrad(self)
            self._acc = weakref.ref(node)
        return node

    def _edge(self) -> tuple:
        view = self._view
        if view is not None:
            if not view.grad_enabled:
                return (None, 0)  # a view made under no_grad: requires grad, feeds no one
            if view.version != self._vc.v:
                self._refresh_view()
        if self._grad_fn is not None:
            return (self._grad_fn, self._output_nr)
        if self._rg:
            return (self._accumulator(), 0)
        return (None, 0)

    def detach(self) -> "Tensor":
        """The same values and memory, cut from the graph; shares the version counter."""
        self._own()
        return make(self._a, vc=self._vc)

    def detach_(self) -> "Tensor":
        self._grad_fn = None
        self._rg = False
        self._output_nr = 0
        return self

    @property
    def data(self) -> "Tensor":
        """An alias of the memory that autograd does not track (its own version counter,
        so writes through it are not seen by the checks of saved tensors)."""
        self._own()
        return make(self._a)

    @data.setter
    def data(self, value: "Tensor") -> None:
        """Hold ``value``'s memory from now on (views made before keep the old one)."""
        self._a = value._a

    # -- in-place support -------------------------------------------------------------------
    def _borrowing(self) -> "Tensor":
        """A detached tensor on this tensor's array without a copy, copying it only when
        it is first written or aliased (a gradient stored as ``.grad``: most are only
        read, by the optimizer, before the next ``zero_grad``)."""
        return make(self._a, vc=_Borrowed())

    def _is_borrowed(self) -> bool:
        """Whether this tensor's memory is borrowed (`_borrowing`): not to be written."""
        return type(self._vc) is _Borrowed

    def _bump_version(self, n: int = 1) -> None:
        """Count ``n`` in-place writes made into this tensor's memory by others (a fused
        optimizer update, a compiled step's program), as its in-place ops count theirs."""
        self._vc.v += n

    def _hold(self, a: Any, version: int | None = None) -> None:
        """Hold array ``a`` (and set the version counter to ``version``): a compiled
        step's trace swaps traced values in, then puts the arrays and versions back."""
        self._a = a
        if version is not None:
            self._vc.v = version

    def _set_grad(self, grad: "Tensor | None") -> None:
        """``.grad`` set without the setter's checks (a value the trace checked)."""
        self._grad = grad

    def _own(self, values: Any = None) -> None:
        """Hold memory of this tensor's own, if it was borrowing (`_borrowing`): a copy,
        or ``values`` (a new array of its own, replacing the values)."""
        vc = self._vc
        if type(vc) is _Borrowed:
            if values is not None:
                self._a = values
            elif type(self._a) is Array:
                self._a = _storage.snapshot(self._a)
            own = _new(_Version)
            own.v = vc.v
            self._vc = own

    def _copied_array(self) -> Any:
        """This tensor's values in memory of their own (tracers are values, not memory)."""
        return _storage.snapshot(self._a) if type(self._a) is Array else self._a

    def _check_inplace(self) -> None:
        """PyTorch's refusals of an in-place op on this tensor under grad mode."""
        if not grad_mode.state.enabled:
            return
        view = self._view
        if view is None:
            if self._grad_fn is None and self._rg:
                raise RuntimeError(LEAF_INPLACE_ERROR)
            return
        base = view.base
        if not view.grad_enabled and base.requires_grad:
            raise RuntimeError(NO_GRAD_VIEW_ERROR)
        if view.multi is not None and base.requires_grad:
            name, k = view.multi
            raise RuntimeError(
                f"Output {k} of {name} is a view and is being modified inplace. This view "
                "is the output of a function that returns multiple views. Such functions "
                "do not allow the output views to be modified inplace. You should replace "
                "the inplace operation by an out-of-place one.")
        if base._grad_fn is None and base._rg:
            raise RuntimeError(VIEW_OF_LEAF_ERROR)

    def _take_graph(self, result: "Tensor") -> None:
        """Take ``result``'s place in the graph (its node, output number, retained grad)."""
        fn = result._grad_fn
        if fn is None:
            return
        old = self._grad_fn
        if old is not None and old._retains.get(self._output_nr, (None,))[0] is not None:
            ref = old._retains.pop(self._output_nr)
            if ref[0]() is self:
                fn._table("_retains")[result._output_nr] = ref
        self._grad_fn = fn
        self._output_nr = result._output_nr

    def _rebind(self, result: "Tensor") -> "Tensor":
        """Hold ``result``'s value (cast to this dtype) and graph position, bump the
        version: an in-place op on a traced tensor, which has no memory to write."""
        result = self._cast_result(result)
        self._a = result._a
        self._vc.v += 1
        self._take_graph(result)
        return self

    def _cast_result(self, result: "Tensor") -> "Tensor":
        if result._a.dtype == self._a.dtype:
            return result
        if not D.can_cast(result.dtype, self.dtype):
            raise RuntimeError(f"result type {_type_word(result.dtype)} can't be cast "
                               f"to the desired output type {_type_word(self.dtype)}")
        return result.to(self.dtype)

    def _accumulate_grad(self, g: Any) -> None:
        """Add gradient ``g`` (a tensor or a funcgrad array) into ``.grad`` without graph:
        in place, or the first one kept without a copy (borrowed, as `_borrowing` does: the
        engine's gradient may share memory)."""
        if self._grad is None:  # (as_array written out: this runs once per leaf and step)
            self._grad = make(g._a if isinstance(g, Tensor) else g, vc=_Borrowed())
        else:
            self._grad._assign_array(self._grad._a + as_array(g))

    def _accumulate_graph_grad(self, g: "Tensor") -> None:
        """Add gradient tensor ``g`` into ``.grad`` as a new tensor (``create_graph``: the
        gradient's graph is kept, so nothing is written in place)."""
        self._grad = g.clone() if self._grad is None else self._grad + g

    def _assign_array(self, a: Any) -> None:
        """Write funcgrad array ``a`` (cast to this tensor's dtype) into this tensor's
        memory and bump the version: an in-place update that records nothing, for the
        engine's gradient accumulation and the optimizers' updates."""
        dtype = self._a.dtype
        a = a if a.dtype == dtype else a.astype(dtype)
        if type(self._vc) is _Borrowed and type(a) is Array:  # the new values: no copy
            self._own(a if not _storage.same_storage(a, self._a) else _storage.snapshot(a))
        elif type(self._a) is Array and type(a) is Array:
            _storage.write(self._a, a)
        else:  # a traced value on either side: no memory to write
            self._a = a
        self._vc.v += 1

    def _add_scaled(self, a: Any, alpha: Any) -> None:
        """``self += alpha * a`` (funcgrad array ``a``) in this tensor's memory, recording
        nothing, and bump the version: the optimizers' parameter update, written in place
        as PyTorch's ``add_(a, alpha=alpha)`` (`_assign_array` for a traced value or
        borrowed memory, which get a new array anyway)."""
        if type(self._vc) is _Borrowed or type(self._a) is not Array or type(a) is not Array:
            self._assign_array(self._a + alpha * a)
            return
        _storage.add_scaled(self._a, a, alpha)
        self._vc.v += 1


def _leaf_error(requires_grad: bool) -> str:
    msg = "you can only change requires_grad flags of leaf variables."
    if not requires_grad:
        msg += (" If you want to use a computed variable in a subgraph that doesn't require "
                "differentiation use var_no_grad = var.detach().")
    return msg


def _type_word(d: D.dtype) -> str:
    return {"float32": "Float", "float64": "Double", "float16": "Half", "int64": "Long",
            "int32": "Int", "int16": "Short", "int8": "Char", "uint8": "Byte",
            "bool": "Bool", "complex64": "ComplexFloat",
            "complex128": "ComplexDouble"}[d.name]


def _rebuild(cls: type, values: np.ndarray, requires_grad: bool) -> Tensor:
    return make(fnp.asarray(values), requires_grad, cls=cls)
