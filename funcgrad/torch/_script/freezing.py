"""``torch.jit.freeze``: a scripted module in eval mode with its parameters and attributes
made constants of its program.

The module is first copied through the save format (`saving.describe` / `saving.read`),
so the frozen module shares no state with the original. Then ``forward``'s graph is
rewritten as TorchScript's freezing pass does: calls of the scripted submodules' methods
are inlined, a ``prim::GetAttr`` of a parameter, buffer or attribute becomes a
``prim::Constant`` holding its value, and the submodule reads left unused are removed.
The facade's own ``nn`` modules are run by their forward (not compiled), so reads of them
stay; their parameters in the copy stop requiring gradients.
"""
from __future__ import annotations

from typing import Any, Iterator

from funcgrad.torch._script import ScriptModule
from funcgrad.torch._script.archive import GraphReader, TensorStore, graph_to_data
from funcgrad.torch._script.ir import Block, Graph, Node
from funcgrad.torch._script.saving import describe, read
from funcgrad.torch._script.stored import StoredModule, StoredProgram
from funcgrad.torch._tensor import Tensor
from funcgrad.torch.nn.module import Module

__all__ = ["freeze"]


class _Freezer:
    """Rewrites blocks in order; ``objs`` are the values known to be modules, ``sub`` the
    values replaced (an inlined call's result by the callee's)."""

    def __init__(self, prog: StoredProgram, store: TensorStore):
        self.prog, self.store = prog, store
        self.reader = GraphReader(store, set(prog.graphs), lambda name: True)
        self.objs: dict = {}
        self.sub: dict = {}

    def block(self, block: Block) -> None:
        nodes = []
        for node in block.nodes:
            nodes.extend(self.node(node))
        block.nodes = nodes
        block.returns = [self.sub.get(v, v) for v in block.returns]

    def node(self, node: Node) -> list:
        node.inputs = [self.sub.get(v, v) for v in node.inputs]
        target = self.objs.get(node.inputs[0]) if node.inputs else None
        if node.kind == "prim::GetAttr" and target is not None:
            value = getattr(target, node.attrs["name"])
            if isinstance(value, Module):
                self.objs[node.output] = value
            else:
                node.kind, node.inputs = "prim::Constant", []
                node.attrs = {"value": value.detach() if isinstance(value, Tensor) else value}
            return [node]
        if node.kind == "prim::CallMethod" and target is not None:
            graph = self.prog.method(target, node.attrs["name"])
            if graph is not None:
                return self.inline(graph, node)
        for b in node.blocks:
            self.block(b)
        return [node]

    def inline(self, graph: Graph, call: Node) -> list:
        """The callee's nodes, its parameters bound to the call's inputs (a copy read
        back from its data)."""
        body = graph_to_data(graph, self.store)["body"]
        scope = {p[0]: v for p, v in zip(body["params"], call.inputs)}
        block = Block()
        self.reader.fill(block, body, scope)
        self.block(block)
        self.sub[call.output] = block.returns[0]
        return block.nodes


def _blocks(block: Block) -> Iterator[Block]:
    yield block
    for node in block.nodes:
        for b in node.blocks:
            yield from _blocks(b)


def _drop_unused_reads(graph: Graph) -> None:
    """Remove ``prim::GetAttr`` nodes whose results nothing uses (until none is left)."""
    while True:
        used: set = set()
        for b in _blocks(graph.block):
            used.update(b.returns)
            for n in b.nodes:
                used.update(n.inputs)
        removed = False
        for b in _blocks(graph.block):
            keep = [n for n in b.nodes if n.kind != "prim::GetAttr" or n.output in used]
            removed |= len(keep) != len(b.nodes)
            b.nodes = keep
        if not removed:
            return


def freeze(mod: Any, preserved_attrs: list | None = None,
           optimize_numerics: bool = True) -> ScriptModule:
    """A copy of scripted ``mod`` (in eval mode) whose ``forward`` reads its parameters
    and attributes as constants."""
    if not isinstance(mod, ScriptModule):
        raise RuntimeError("Freezing expects a ScriptModule as input. Please use "
                           "torch.jit.script or torch.jit.trace to script your 'nn.Module'.")
    if mod.training:
        raise RuntimeError("Freezing is currently only implemented for modules in eval "
                           "mode. Please call .eval() on your module before freezing.")
    store = TensorStore()
    copy = read(describe(mod, store), store)
    prog, root = copy._ctx, copy._orig
    graph = prog.method(root, "forward")
    freezer = _Freezer(prog, store)
    freezer.objs[graph.block.params[0]] = root
    freezer.block(graph.block)
    _drop_unused_reads(graph)
    frozen = StoredProgram()
    for g in prog.graphs.values():
        frozen.add_function(g)
    frozen.add_method(root, "forward", graph)
    for m in root.modules():
        if isinstance(m, StoredModule):
            m._parameters.clear()
            m._buffers.clear()
    for p in root.parameters():
        p.requires_grad_(False)
    return ScriptModule(root, frozen, ["forward"]).eval()

