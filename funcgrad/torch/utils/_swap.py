"""``torch.utils.swap_tensors(t1, t2)``: two tensor objects exchange everything they are.

PyTorch swaps the Python objects' class, ``__dict__`` and slots and the C++ tensors they
point to, so that every reference to ``t1`` now sees what ``t2`` was (an optimizer's
parameter list keeps working after a module converted its parameters). Here a tensor's
state lives in the `Tensor` slots, so swapping the class, the ``__dict__`` and every slot
swaps all of it. A graph recorded before the swap holds the leaves' AccumulateGrad nodes:
PyTorch poisons them (running backward into one raises), and so does this.

PyTorch refuses a tensor that other objects hold (a Python weakref, a view); funcgrad's
graphs keep weak references of their own to the tensors they saved, so a weakref is no
sign of a user's reference here and is not refused.
"""
from __future__ import annotations

import copyreg

from funcgrad.torch._tensor import Tensor

__all__ = ["swap_tensors"]


def swap_tensors(t1: Tensor, t2: Tensor) -> None:
    """Exchange the contents of tensor objects ``t1`` and ``t2`` in place."""
    if not (isinstance(t1, Tensor) and isinstance(t2, Tensor)):
        raise TypeError("swap_tensors expects two Tensors, but got "
                        f"{type(t1).__name__} and {type(t2).__name__}")
    slots = set(copyreg._slotnames(type(t1)))
    if slots != set(copyreg._slotnames(type(t2))):
        raise RuntimeError("Cannot swap t1 and t2 if they have different slots")
    t1.__class__, t2.__class__ = t2.__class__, t1.__class__
    d1, d2 = dict(t1.__dict__), dict(t2.__dict__)
    t1.__dict__.clear()
    t1.__dict__.update(d2)
    t2.__dict__.clear()
    t2.__dict__.update(d1)
    missing = object()
    for slot in slots:
        v1, v2 = getattr(t1, slot, missing), getattr(t2, slot, missing)
        for target, value in ((t1, v2), (t2, v1)):
            if value is missing:
                if hasattr(target, slot):
                    delattr(target, slot)
            else:
                setattr(target, slot, value)
    for t in (t1, t2):  # a graph made before the swap must not run into the swapped leaf
        node = t._acc() if t._acc is not None else None
        if node is not None:
            node.register_prehook(_poisoned)
            t._acc = None


def _poisoned(grad_outputs: tuple) -> None:
    raise RuntimeError(
        "Trying to execute AccumulateGrad node that was poisoned by swap_tensors this can "
        "happen when you try to run backward on a tensor that was swapped. For a module m "
        "with `torch.__future__.set_swap_module_params_on_conversion(True)` you should not "
        "change the device or dtype of the module (e.g. `m.cpu()` or `m.half()`) between "
        "running forward and backward. To resolve this, please only change the device/dtype "
        "before running forward (or after both forward and backward).")
