"""torch.utils.checkpoint for funcgrad.torch, built on `funcgrad.checkpoint`.

A checkpointed call is one facade op (node ``CheckpointFunctionBackward``) whose function
is the user's function made pure: its tensor arguments and every tensor that requires grad
it reads from its closure (module parameters) become explicit array inputs, and the
function runs with the facade's graph recording off, its ops reading the traced arrays in
place of those tensors' (`substituting`: the tensors themselves, which other threads may be
using, are never touched). `funcgrad.checkpoint` then keeps only those inputs and replays the rest in
the backward pass, so the node saves the inputs and nothing in between.

The closure's tensors are found by running the function once under ``no_grad`` (the
facade's random stream is restored afterwards, so dropout draws the same values as without
checkpointing); the replay re-applies the recorded operations, so it sees the forward
pass's random values by construction (``preserve_rng_state`` always holds).
Differences from PyTorch: the output's ``grad_fn`` is always ``CheckpointFunctionBackward``
(PyTorch's non-reentrant variant shows the last inner op), and the forward runs twice.
"""
from __future__ import annotations

from typing import Any, Callable

import funcgrad
from funcgrad import tree_util
from funcgrad.torch import _factories
from funcgrad.transforms.checkpoint import compose
from funcgrad.torch._dispatch import apply
from funcgrad.torch._scopes import capture_inputs, substituting
from funcgrad.torch._tensor import Tensor
from funcgrad.torch._runtime.grad_mode import no_grad

__all__ = ["checkpoint", "checkpoint_sequential"]


def _closure_tensors(function: Callable, args: tuple, kwargs: dict) -> list[Tensor]:
    """Tensors requiring grad that ``function`` reads besides its arguments."""
    state = _factories.default_generator.rng.bit_generator.state
    with capture_inputs() as seen, no_grad():
        function(*args, **kwargs)
    _factories.default_generator.rng.bit_generator.state = state
    own = {id(a) for a in tree_util.tree_leaves((args, kwargs)) if isinstance(a, Tensor)}
    return [t for k, t in seen.items() if k not in own and t.requires_grad]


def checkpoint(function: Callable, *args: Any, use_reentrant: bool | None = None,
               preserve_rng_state: bool = True, **kwargs: Any) -> Any:
    """``function(*args, **kwargs)``, keeping only its inputs for the backward pass and
    recomputing its intermediates there. ``use_reentrant`` and ``preserve_rng_state`` are
    accepted for compatibility: both variants behave the same here (see the module doc)."""
    leaves, tree = tree_util.tree_flatten((args, kwargs))
    arg_tensors = [x for x in leaves if isinstance(x, Tensor)]
    inputs = arg_tensors + _closure_tensors(function, args, kwargs)
    out_tree: list = []

    def pure(*arrays: Any) -> tuple:
        with substituting({id(t): a for t, a in zip(inputs, arrays)}), no_grad():
            out = function(*args, **kwargs)
        out_leaves, treedef = tree_util.tree_flatten(out)
        out_tree.append(treedef)
        return tuple(o._a if isinstance(o, Tensor) else o for o in out_leaves)

    outs = apply("CheckpointFunctionBackward", funcgrad.checkpoint(pure), inputs, multi=True)
    return out_tree[-1].unflatten(list(outs))


def checkpoint_sequential(functions: Any, segments: int, input: Any,
                          use_reentrant: bool | None = None, **kwargs: Any) -> Any:
    """Run ``functions`` (a list or an ``nn.Sequential``) in ``segments`` chunks, each
    checkpointed except the last (as PyTorch does: its activations are needed at once)."""
    fns = list(functions.children()) if hasattr(functions, "children") else list(functions)
    size = max(1, -(-len(fns) // max(1, segments)))

    starts = list(range(0, len(fns), size))
    x = input
    for k, start in enumerate(starts):
        chunk = compose(fns[start:start + size])
        x = chunk(x) if k == len(starts) - 1 else checkpoint(chunk, x)
    return x
