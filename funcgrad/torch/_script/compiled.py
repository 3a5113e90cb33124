"""A scripted function's calls through one compiled program, as TorchScript's executor
optimizes a graph after its first runs.

The graph's runner (`interp`) is traced by `funcgrad.jit` per argument signature (the
tensors' shapes and dtypes, the other arguments' values: a loop's trip count is one): on
traced values its control flow is staged (``lax.cond``, ``fori_loop``, ``while_loop``), so
the program keeps the loop instead of unrolling it, and later calls run the compiled
straight-line numpy program. What a program cannot do as the interpreter does runs
through the interpreter on every call: calls that record autograd (a tensor argument
requires grad in grad mode: eager autograd sees the path taken), graphs with effects
(random draws, prints, raised exceptions, warnings), arguments that are neither tensors nor
hashable values, and signatures whose trace failed.
"""
from __future__ import annotations

from typing import Any, Callable

import funcgrad
from funcgrad import tree_util
from funcgrad.torch import func
from funcgrad.torch._script.ir import Graph
from funcgrad.torch._tensor import Tensor
from funcgrad.torch._runtime import grad_mode

__all__ = ["CompiledRunner"]

# node kinds whose effect a compiled program would replay once or not at all (and any
# in-place op: its name ends with "_")
_EFFECTS = ("rand", "dropout", "bernoulli", "normal", "multinomial", "poisson", "seed",
            "Print", "RaiseException", "warn")
_TENSOR = object()  # (an argument's place in a signature: a tensor, an input)


def _effectful(graph: Graph) -> bool:
    """Whether a node of ``graph`` draws, prints, raises, warns or writes in place."""
    for node in graph.block.walk():
        name = node.kind.split("::")[-1]
        if name.endswith("_") or any(e in name for e in _EFFECTS):
            return True
    return False


class CompiledRunner:
    """``run`` (a graph's runner) called through `funcgrad.jit` where it can be."""

    def __init__(self, graph: Graph, run: Callable):
        self.run = run
        self.pure = not _effectful(graph)
        self.trees: dict = {}  # signature -> the output's tree
        self.refused: set = set()  # signatures whose trace failed
        self.jitted = funcgrad.jit(self._traced, static_argnums=(0,))

    def _traced(self, signature: tuple, *arrays: Any) -> list:
        inputs = iter(func.from_array(list(arrays)))
        out = self.run(*[next(inputs) if s is _TENSOR else s for s in signature])
        leaves, tree = tree_util.tree_flatten(out)
        if not all(isinstance(t, Tensor) for t in leaves):
            raise TypeError("a scripted function returning non-tensors runs interpreted")
        self.trees[signature] = tree
        return func.to_array(leaves)

    def __call__(self, *args: Any) -> Any:
        if not self.pure or grad_mode.state.enabled and any(
                isinstance(a, Tensor) and a.requires_grad for a in args):
            return self.run(*args)
        signature = tuple([_TENSOR if isinstance(a, Tensor) else a for a in args])
        try:
            if signature in self.refused:
                return self.run(*args)
        except TypeError:  # an unhashable argument (a list)
            return self.run(*args)
        tensors = [a for a in args if isinstance(a, Tensor)]
        try:
            outs = self.jitted(signature, *func.to_array(tensors))
        except Exception:  # noqa: BLE001 (the interpreter runs it: a real error is raised there)
            self.refused.add(signature)
            return self.run(*args)
        return self.trees[signature].unflatten(func.from_array(outs))
