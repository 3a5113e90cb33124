"""In-place ops: funcgrad computes the new values, then they are written into memory.

An in-place op on a concrete tensor runs its funcgrad function out of place (recorded like
any op under autograd), writes the result into the tensor's memory (`_storage.write`) and
bumps the version counter its views share. Through a view under autograd the write is
recorded on the base, as PyTorch records it (`_inplace_on_view`: ``CopySlices``). A traced
tensor (inside a funcgrad transform) has no memory: it is rebound to the result.
"""
from __future__ import annotations

from typing import Any, Callable, Sequence

import numpy as np

import funcgrad
import funcgrad.numpy as fnp
from funcgrad.array import Array
from funcgrad.meta import ShapeDtypeStruct, is_meta, to_meta
from funcgrad.primitives import elementwise as elementwise_prims
from funcgrad.torch._runtime import dtypes as D, storage as _storage
from funcgrad.torch._dispatch import apply, const_like
from funcgrad.torch._tensor import Tensor, _type_word, make
from funcgrad.torch._runtime import grad_mode

__all__ = ["inplace"]


def inplace(target: Tensor, name: str, f: Callable, others: Sequence = (), *,
            region: Any = None, overlap_ok: bool = False) -> Tensor:
    """``target`` op= ``others``: compute ``f(target, *others)`` with funcgrad, write it
    into ``target``'s memory (cast to its dtype) and bump the version counter it shares
    with its views. Under autograd the op's node becomes ``target``'s ``grad_fn``; on a
    view, the write is recorded on the base (`_inplace_on_view`). ``region``: the index of
    the only elements ``f`` changes (``x[idx] = v``), the only ones written; ``overlap_ok``:
    the op may write into memory that several elements share (an ``expand``-ed tensor),
    as PyTorch's fills and index assignments may."""
    target._check_inplace()
    dtype, shape = target._a.dtype, target._a.shape

    def f_cast(*a: Any) -> Any:
        r = f(*a)
        if r.shape != shape:
            raise RuntimeError(f"Bad in-place call: input tensor size {list(shape)} and "
                               f"output tensor size {list(r.shape)} should match")
        if r.dtype != dtype:
            rd, td = D.to_torch_dtype(r.dtype), D.to_torch_dtype(dtype)
            if not D.can_cast(rd, td):
                raise RuntimeError(f"result type {_type_word(rd)} can't be cast to the "
                                   f"desired output type {_type_word(td)}")
            r = fnp.astype(r, dtype)
        return r

    recording = grad_mode.state.enabled and (target.requires_grad or any(
        isinstance(o, Tensor) and o.requires_grad for o in others))
    target._own()
    if recording and target._view is not None and (type(target._a) is Array or
                                                   is_meta(target._a)):
        return _inplace_on_view(target, f_cast, others, overlap_ok or region is not None)
    if is_meta(target._a):
        return _inplace_on_meta(target, name, f_cast, others)
    result = apply(name, f_cast, [target, *others], target=target)
    if type(target._a) is not Array or type(result._a) is not Array:
        # a traced value on either side: no memory to write, the tensor is rebound
        if target._view is not None:
            raise NotImplementedError(_TRACED_VIEW_ERROR)
        return target._rebind(result)
    _storage.write(target._a, result._a, region, overlap_ok or region is not None)
    target._vc.v += 1
    target._take_graph(result)
    return target


def _inplace_on_meta(target: Tensor, name: str, f: Callable, others: Sequence) -> Tensor:
    """An in-place op on a meta tensor: there are no values to write, so the tensor holds
    the op's (meta) result, recorded under autograd, and the version counter it shares
    with its views counts the write, as PyTorch's meta tensors count it. Through a view
    nothing reaches the base: the base has no values to change."""
    result = apply(name, lambda *a: funcgrad.device_put(f(*a), "meta"), [target, *others],
                   target=target)
    return target._rebind(result)


_TRACED_VIEW_ERROR = (
    "an in-place op on a view of a tensor that a funcgrad transform is tracing "
    "(torch.func, torch.compile, torch.jit.trace): traced values have no memory, so the "
    "write could not reach the view's base. Use the out-of-place op, or write into the "
    "base itself (x[idx] = value).")


def _inplace_on_view(view: Tensor, f: Callable, others: Sequence, overlap_ok: bool
                     ) -> Tensor:
    """An in-place op through ``view`` under autograd, recorded as PyTorch records it:
    the base gets a ``CopySlices`` node (the base with the view's elements replaced by
    the op's result) and the view an ``AsStridedBackward0`` node reading it off the new
    base. The elements are found by running the view's ops on positions (`_positions`)."""
    base, fn = view._view.base, view._view.fn
    meta = is_meta(base._a)  # no memory: the base is rebound to the op's result
    if not (overlap_ok or meta) and _storage.overlapping(view._a):
        raise RuntimeError(_storage.OVERLAP_ERROR)
    positions = _positions(base, fn)

    def through_view(b: Any, *o: Any) -> Any:
        reals, new = _as_reals(b), _as_reals(f(fn(b), *o))
        flat = fnp.reshape(reals, (-1,)).at[positions].set(fnp.reshape(new, (-1,)))
        out = fnp.reshape(flat, reals.shape)
        return out if out.dtype == b.dtype else elementwise_prims.view_as_complex(out)

    # the op reads the base's old value: give it a snapshot, the write below changes it
    old = make(base._a if meta else _storage.snapshot(base._a), False, base._grad_fn,
               base._output_nr)
    new = apply("CopySlices", through_view, [old, *others])
    if meta:
        base._a = new._a
    else:
        _storage.write(base._a, new._a)
    base._vc.v += 1
    base._take_graph(new)
    view._take_graph(apply(view._view.node, fn, [base]))
    view._view.version = base._vc.v
    return view


def _as_reals(x: Any) -> Any:
    """``x``, or a complex ``x`` as (..., 2) reals."""
    return elementwise_prims.view_as_real(x) if fnp.iscomplexobj(x) else x


def _positions(base: Tensor, fn: Callable) -> Any:
    """Where the elements of view ``fn(base)`` are among the base's reals (a complex base
    counted as (..., 2) reals, so that ``.real``, ``.imag`` and ``view_as_real`` views
    are index views too): ``fn`` run on the reals' positions."""
    if is_meta(base._a):  # no values to place: the positions' shape is all a meta scatter reads
        return to_meta(ShapeDtypeStruct((_as_reals(fn(base._a)).size,), np.intp))
    n = base.numel()
    if base.is_complex():
        grid = elementwise_prims.view_as_complex(fnp.asarray(
            np.arange(2 * n, dtype=np.float64).reshape(tuple(base.shape) + (2,))))
    else:
        grid = fnp.asarray(np.arange(n, dtype=np.float64).reshape(tuple(base.shape)))
    where = np.asarray(_as_reals(fn(grid))).reshape(-1).astype(np.intp)
    return const_like(where, base)
