"""In-place view ops: ``x.unsqueeze_(0)``, ``x.t_()``, ``x.transpose_(0, 1)``,
``x.squeeze_()``... change the tensor's shape, not its values.

PyTorch keeps the tensor object and its storage and changes its sizes and strides; under
autograd the tensor's ``grad_fn`` becomes the op's in-place node (``UnsqueezeBackward1``,
``TBackward1``, ``TransposeBackward1``, ``SqueezeBackward3/4/5``) and its version counter
is bumped. Here the out-of-place view op runs (its derivative is the view primitive's, as
for the out-of-place op) and the tensor is rebound to the result, a view of the same
memory; a view stays a view of its base.
"""
from __future__ import annotations

from typing import Any, Callable

from funcgrad.torch._dispatch import apply
from funcgrad.torch._ops_basic import METHODS, Spec
from funcgrad.torch._ops_shape import _squeeze, _t, _transpose, _unsqueeze
from funcgrad.torch._tensor import Tensor

__all__ = ["INPLACE_VIEW_NODES"]

# the out-of-place op's node -> the in-place op's (PyTorch's names)
INPLACE_VIEW_NODES = {"UnsqueezeBackward0": "UnsqueezeBackward1",
                      "TBackward0": "TBackward1", "TransposeBackward0": "TransposeBackward1",
                      "SqueezeBackward0": "SqueezeBackward3",
                      "SqueezeBackward1": "SqueezeBackward4",
                      "SqueezeBackward2": "SqueezeBackward5"}


def _inplace_view(spec: Callable) -> Callable:
    """The in-place method of view op ``spec``: PyTorch's in-place refusals (a leaf that
    requires grad...), then ``self`` holds the view's memory and graph position."""
    def method(self: Tensor, *args: Any, **kwargs: Any) -> Tensor:
        self._check_inplace()
        s: Spec = spec(self, *args, **kwargs)
        result = apply(INPLACE_VIEW_NODES[s.name], s.f, s.slots)
        was_view = self._view is not None
        self._rebind(result)
        # a view stays a view of its base (the result's steps from it); a tensor that was
        # no view stays none (the result is a view of it, not of another tensor)
        self._view = result._view if was_view else None
        if self._view is not None:
            self._view.version = self._vc.v  # its graph is the one just recorded
        return self
    method.__name__ = spec.__name__.strip("_") + "_"
    return method


METHODS["unsqueeze_"] = _inplace_view(_unsqueeze)
METHODS["squeeze_"] = _inplace_view(_squeeze)


def _t_(input: Tensor) -> Spec:
    """``t`` with the in-place method's name in PyTorch's error."""
    if input.ndim > 2:
        raise RuntimeError(f"t_() expects a tensor with <= 2 dimensions, but self is "
                           f"{input.ndim}D")
    return _t(input)


METHODS["t_"] = _inplace_view(_t_)
METHODS["transpose_"] = METHODS["swapdims_"] = METHODS["swapaxes_"] = \
    _inplace_view(_transpose)
