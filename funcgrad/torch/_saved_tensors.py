"""``grad_fn._saved_<name>`` and ``grad_fn._raw_saved_<name>``: the tensors a node saved
for its backward, under the names PyTorch's derivative formulas give the op's arguments
(``self``, ``other``, ``mat1``... and ``result`` for a saved output).

Which values are saved is what funcgrad's rules read (the tape's residuals), so a node
lists the saved tensors its rules need; PyTorch also lists the scalars and sizes its
formulas keep (``_saved_alpha``, ``_saved_self_sym_sizes``), which funcgrad keeps as
static parameters instead.
"""
from __future__ import annotations

from typing import Any, Callable

from funcgrad.torch._runtime.node import FREED_ERROR
from funcgrad.torch._tensor import proxy

__all__ = ["attribute", "attribute_names", "install", "SavedTensor", "REGISTER_FREED_ERROR"]

REGISTER_FREED_ERROR = (
    "Calling register_hooks on a saved tensor after it has been freed. Saved intermediate "
    "values of the graph are freed when you call .backward() or autograd.grad(). Specify "
    "retain_graph=True if you need to backward through the graph a second time or if you "
    "need to access saved variables after calling backward.")
_HOOKS_SET_ERROR = ("Calling register_hooks on a saved tensor whose hooks have already been "
                    "set. Hint: only one pair of hooks is allowed at a time.")

_BINARY = ("self", "other")
# the argument names of PyTorch's derivative formulas, per node (others: self, other)
ARGUMENT_NAMES = {
    "PowBackward0": ("self", "exponent"), "PowBackward1": ("self", "exponent"),
    "PowBackward2": ("self", "exponent"),
    "MmBackward0": ("self", "mat2"), "BmmBackward0": ("self", "mat2"),
    "AddmmBackward0": ("self", "mat1", "mat2"), "MvBackward0": ("self", "vec"),
    "DotBackward0": ("self", "tensor"), "WhereBackward0": ("condition", "self", "other"),
    "AddcmulBackward0": ("self", "tensor1", "tensor2"),
    "AddcdivBackward0": ("self", "tensor1", "tensor2"),
    "LerpBackward0": ("self", "end"), "LerpBackward1": ("self", "end", "weight"),
    "ClampBackward1": ("self", "min", "max"), "MseLossBackward0": ("self", "target"),
    "L1LossBackward0": ("self", "target"), "HuberLossBackward0": ("self", "target"),
    "NllLossBackward0": ("self", "target", "weight"),
    "BinaryCrossEntropyBackward0": ("self", "target", "weight"),
    "ConvolutionBackward0": ("input", "weight", "bias"),
    "EmbeddingBackward0": ("weight", "indices"),
    "NativeLayerNormBackward0": ("input", "weight", "bias"),
}


# how many inputs (``_saved_arg<k>``) and outputs (``_saved_result<k>``) the attributes
# cover: far more than any op saves
_MOST = 64


def _all_names() -> list:
    """Every argument name a node's saved tensor can have (`_name_of`)."""
    names = {n for names in ARGUMENT_NAMES.values() for n in names} | set(_BINARY)
    names |= {"result"} | {f"result{k}" for k in range(1, _MOST)}
    return sorted(names | {f"arg{k}" for k in range(_MOST)})


def install(cls: type) -> None:
    """Give node class ``cls`` the ``_saved_<arg>`` and ``_raw_saved_<arg>`` attributes
    (`attribute`), as properties: a ``__getattr__`` would make CPython look up every
    attribute of every node through it (about 200 instructions a read instead of 15:
    4% of the small-op chain's backward())."""
    for arg in _all_names():
        for attr in (f"_saved_{arg}", f"_raw_saved_{arg}"):
            setattr(cls, attr, property(lambda node, attr=attr: attribute(node, attr)))


def _name_of(node: Any, ref: Any) -> str:
    if ref.is_output:
        return "result" if ref.output_nr == 0 else f"result{ref.output_nr}"
    names = ARGUMENT_NAMES.get(node.name(), _BINARY)
    return names[ref.position] if ref.position < len(names) else f"arg{ref.position}"


def attribute_names(node: Any) -> list:
    """The ``_saved_*`` and ``_raw_saved_*`` attributes ``node`` has (of those `install`
    gave its class)."""
    names = [_name_of(node, ref) for ref in node.saved_refs()]
    return [f"_saved_{n}" for n in names] + [f"_raw_saved_{n}" for n in names]


def _find(node: Any, arg: str) -> Any:
    for ref in node.saved_refs():
        if _name_of(node, ref) == arg:
            return ref
    return None


def attribute(node: Any, attr: str) -> Any:
    """``node._saved_<arg>`` (the saved tensor, version-checked) or ``_raw_saved_<arg>``
    (a `SavedTensor`)."""
    if node.is_released():
        raise RuntimeError(FREED_ERROR)
    raw = attr.startswith("_raw_saved_")
    ref = _find(node, attr[len("_raw_saved_" if raw else "_saved_"):])
    if ref is None:
        raise AttributeError(f"'{node.name()}' object has no attribute '{attr}'")
    return SavedTensor(node, ref) if raw else SavedTensor(node, ref).unpack()


class SavedTensor:
    """One value a node saved (PyTorch's ``torch._C._autograd.SavedTensor``)."""

    def __init__(self, node: Any, ref: Any):
        self._node = node
        self._ref = ref

    def _saved(self) -> Any:
        """The tensor whose value was saved (None: a saved output no longer alive)."""
        ref = self._ref
        return ref.tensor() if ref.is_output else ref.tensor

    def unpack(self) -> Any:
        """The saved tensor: the input itself, or for a saved output a new tensor with the
        output's value whose ``grad_fn`` is the node (as PyTorch gives it); through the
        unpack hook if one was registered."""
        ref, node = self._ref, self._node
        ref.check(node)  # PyTorch's error if it changed in place since
        t = self._saved()
        if t is None:
            raise RuntimeError(FREED_ERROR)
        hooked = node.unpack_saved(t._data)
        if hooked is not None:
            return hooked
        if not ref.is_output:
            return t
        return proxy(t._data, (node, ref.output_nr))

    def register_hooks(self, pack_hook: Callable, unpack_hook: Callable) -> None:
        """``pack_hook(tensor)`` now, ``unpack_hook(packed)`` whenever the value is used
        (by backward, or reading ``_saved_<name>``)."""
        t = self._saved()
        if t is None or self._node.is_released():
            raise RuntimeError(REGISTER_FREED_ERROR)
        if not self._node.pack_saved(t._data, t, (pack_hook, unpack_hook)):
            raise RuntimeError(_HOOKS_SET_ERROR)
