"""Op results that share memory with an op's input: views, as PyTorch defines them.

Funcgrad's view primitives (reshape, transpose, slicing, broadcast_to, diagonal, the
windows of unfold...) return numpy views of their input's memory. `output` turns an op's
result into its tensor: a view of the input it shares memory with when PyTorch's op is a
view (`VIEW_NODES`: the view shares the base's version counter and remembers how it was
made, `ViewOf`), a copy when PyTorch's op copies (numpy made a view where PyTorch does not:
flip, clone of an identity...), or a tensor of its own memory otherwise.
"""
from __future__ import annotations

from typing import Any, Callable, Sequence

from funcgrad.array import Array, buffer_of
from funcgrad.meta import MetaTracer
from funcgrad.torch._runtime import storage as _storage
from funcgrad.torch._tensor import Tensor, ViewOf, make
from funcgrad.torch._runtime import grad_mode

__all__ = ["VIEW_NODES", "output", "as_view"]


# the nodes of the ops PyTorch defines as views (of their first tensor input): when
# funcgrad's result shares that input's memory, the output tensor is a view of it
VIEW_NODES = frozenset((
    "ViewBackward0", "AliasBackward0", "TBackward0", "TransposeBackward0",
    "PermuteBackward0", "ExpandBackward0", "SliceBackward0", "SelectBackward0",
    "UnsqueezeBackward0", "SqueezeBackward0", "SqueezeBackward1", "SqueezeBackward2",
    "DiagonalBackward0", "UnfoldBackward0", "AsStridedBackward0", "ViewAsRealBackward0",
    "ViewAsComplexBackward0", "SplitBackward0", "SplitWithSizesBackward0",
    "UnbindBackward0",
    # the in-place view ops (`_ops_inplace_views`)
    "UnsqueezeBackward1", "TBackward1", "TransposeBackward1", "SqueezeBackward3",
    "SqueezeBackward4", "SqueezeBackward5"))


def output(out: Any, name: str, f: Callable, inputs: Sequence, datas: list,
           grad_fn: Any = None, output_nr: int = 0, k: int | None = None) -> Tensor:
    """The tensor of op ``name``'s result ``out`` (output ``k`` of a multi-output op):
    a view of a tensor input whose memory it shares, if the op is a view in PyTorch; a
    copy if it is not (numpy made a view where PyTorch copies: flip, clone...)."""
    if type(out) is Array:
        raw = buffer_of(out)
        base = None if raw.base is None else _storage.owner(raw)
        i = 0
        for x in inputs:  # (memory of its own: an alias only if it is an input's array)
            if isinstance(x, Tensor):
                a = x._a
                if a is out or (base is not None and type(a) is Array
                                and _storage.owner(buffer_of(a)) is base):
                    return _alias(out, name, f, x, i, datas, grad_fn, output_nr, k)
            i += 1
    elif type(out) is MetaTracer:
        return _meta_output(out, name, f, inputs, datas, grad_fn, output_nr, k)
    return make(out, False, grad_fn, output_nr)


_DEVICE_MOVES = frozenset(("ToCopyBackward0", "CopyBackwards"))  # ops that take any device


def _meta_output(out: MetaTracer, name: str, f: Callable, inputs: Sequence, datas: list,
                 grad_fn: Any, output_nr: int, k: int | None) -> Tensor:
    """`output` on the meta device: PyTorch's device check (a meta op takes no CPU tensor
    but a 0-dim one), and a view of the first input for PyTorch's views (there is no
    memory to compare)."""
    first = None
    for i, x in enumerate(inputs):
        if isinstance(x, Tensor):
            if not x.is_meta and x.ndim and name not in _DEVICE_MOVES:
                raise RuntimeError(f"Tensor on device {x.device} is not on the expected "
                                   "device meta!")
            first = (i, x) if first is None else first
    if name in VIEW_NODES and first is not None and first[1].is_meta:
        return _alias(out, name, f, first[1], first[0], datas, grad_fn, output_nr, k)
    return make(out, False, grad_fn, output_nr)


def _alias(out: Array, name: str, f: Callable, x: Tensor, i: int, datas: list,
           grad_fn: Any, output_nr: int, k: int | None) -> Tensor:
    """`output` of a result sharing the memory of input ``x`` (input ``i`` of the op)."""
    if name not in VIEW_NODES:
        return make(_storage.snapshot(out), False, grad_fn, output_nr)
    step = _view_step(f, datas, i, k)
    borrowed = x._a
    x._own()
    if x._a is not borrowed:  # x held borrowed memory: the view reads x's own copy
        out = step(x._a)
    parent = x._view
    if parent is None:
        base, fn = x, step
    else:
        base, outer = parent.base, parent.fn
        fn = lambda b: step(outer(b))  # noqa: E731  (a view of a view: both steps)
    multi = None if k is None else (name.removesuffix("Backward0"), k)
    node = name if name in ("ViewAsRealBackward0", "ViewAsComplexBackward0") else \
        "AsStridedBackward0"  # PyTorch replays these two views, the others as_strided
    enabled = grad_mode.state.enabled
    view = ViewOf(base, fn, enabled, multi, node)
    # PyTorch's view made under no_grad says it requires grad (but feeds no gradient)
    return make(out, not enabled and x.requires_grad, grad_fn, output_nr, vc=x._vc,
                view=view)


def as_view(result: Tensor, base: Tensor, fn: Callable, memory: Array) -> Tensor:
    """``result`` (an op's output, computed by ``fn`` on ``base``) as a view holding
    ``memory``, the same values read in place from ``base``'s storage: for a view that
    funcgrad computes as a gather (``as_strided``)."""
    view = ViewOf(base, fn, grad_mode.state.enabled, None)
    out = make(memory, False, result._grad_fn, result._output_nr, vc=base._vc, view=view)
    out._rg = result._rg
    return out


def _view_step(f: Callable, datas: list, i: int, k: int | None) -> Callable:
    """The view op as a function of its viewed input's array alone."""
    if len(datas) == 1 and k is None:
        return f
    def step(a: Any) -> Any:
        args = list(datas)
        args[i] = a
        out = f(*args)
        return out if k is None else out[k]
    return step
