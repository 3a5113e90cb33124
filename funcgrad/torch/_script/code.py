"""``.code``: a scripted graph printed back as Python-like source, as TorchScript prints
it (``torch.add(x, y)``, ``if``/``for``/``while``, the SSA values named by the variables
they came from)."""
from __future__ import annotations

from funcgrad.torch._script.ir import Block, Graph, Node, Value

__all__ = ["function_code"]

_INFIX = {"add": "+", "sub": "-", "mul": "*", "div": "/", "floordiv": "//",
          "remainder": "%", "pow": "**", "matmul": "@", "eq": "==", "ne": "!=", "lt": "<",
          "le": "<=", "gt": ">", "ge": ">=", "__is__": "is", "__isnot__": "is not",
          "__and__": "&", "__or__": "|"}


class _Printer:
    def __init__(self) -> None:
        self.names: dict = {}
        self.used: set = set()
        self.lines: list = []

    def name(self, v: Value) -> str:
        if v.id not in self.names:
            base = v.base.replace(".", "_") or "_"
            n, k = base, 0
            while n in self.used or n == "_":
                n, k = f"{base}{k}", k + 1
            self.used.add(n)
            self.names[v.id] = n
        return self.names[v.id]

    def ref(self, v: Value, consts: dict) -> str:
        return consts.get(v.id) or self.name(v)

    def block(self, block: Block, indent: str, consts: dict) -> None:
        for node in block.nodes:
            self.node(node, indent, consts)

    def node(self, node: Node, indent: str, consts: dict) -> None:
        kind = node.kind
        if kind == "prim::Constant":
            consts[node.output.id] = repr(node.attrs.get("value")) if "value" in \
                node.attrs else node.attrs.get("name", "None")
            return
        args = [self.ref(v, consts) for v in node.inputs]
        outs = ", ".join(self.name(v) for v in node.outputs)
        lhs = f"{outs} = " if outs else ""
        if kind == "prim::If":
            self.lines.append(f"{indent}if {args[0]}:")
            for i, b in enumerate(node.blocks):
                if i:
                    self.lines.append(f"{indent}else:")
                self.block(b, indent + "  ", consts)
                self.assign(node.outputs, b.returns, indent + "  ", consts)
            return
        if kind == "prim::Loop":
            b = node.blocks[0]
            self.assign(b.params[1:], node.inputs[2:], indent, consts)
            counted = b.returns[0] is node.inputs[1]
            if counted:
                self.lines.append(f"{indent}for {self.name(b.params[0])} in range({args[0]}):")
            else:
                go = self.name(b.returns[0])
                self.lines.append(f"{indent}{go} = {args[1]}")
                self.lines.append(f"{indent}while {go}:")
            self.block(b, indent + "  ", consts)
            self.assign(b.params[1:] if counted else [b.returns[0]] + b.params[1:],
                        b.returns[1:] if counted else b.returns, indent + "  ", consts)
            self.assign(node.outputs, b.params[1:], indent, consts)
            return
        self.lines.append(f"{indent}{lhs}{self.expr(node, args)}")

    def expr(self, node: Node, args: list) -> str:
        ns, op = node.kind.split("::", 1)
        if ns == "aten" and op in _INFIX and len(args) == 2 and "ns" not in node.attrs:
            return f"torch.{op}({args[0]}, {args[1]})"
        if node.kind == "prim::GetAttr":
            return f"{args[0]}.{node.attrs['name']}"
        if node.kind == "prim::CallMethod":
            return f"({args[0]}).{node.attrs['name']}({', '.join(args[1:])}, )"
        if node.kind == "prim::CallFunction":
            return f"{args[0]}({', '.join(args[1:])}, )"
        if node.kind == "prim::TupleConstruct":
            return f"({', '.join(args)}{',' if len(args) == 1 else ''})"
        if node.kind == "prim::ListConstruct":
            return f"[{', '.join(args)}]"
        if ns == "aten" and op in ("Bool", "Int", "Float"):
            return f"{op.lower()}({args[0]})"
        return f"{'torch' if ns == 'aten' else ns}.{op}({', '.join(args)})"

    def assign(self, targets: list, values: list, indent: str, consts: dict) -> None:
        pairs = [(self.name(t), self.ref(v, consts)) for t, v in zip(targets, values)]
        pairs = [(t, v) for t, v in pairs if t != v]
        if pairs:
            self.lines.append(f"{indent}{', '.join(t for t, _ in pairs)} = "
                              f"{', '.join(v for _, v in pairs)}")


def function_code(graph: Graph) -> str:
    p = _Printer()
    params = ",\n    ".join(f"{p.name(v)}: {v.type}" if v.base != "self" else p.name(v)
                            for v in graph.block.params)
    p.lines.append(f"def {graph.name}({params}) -> {graph.return_type}:")
    consts: dict = {}
    p.block(graph.block, "  ", consts)
    p.lines.append(f"  return {p.ref(graph.block.returns[0], consts)}")
    return "\n".join(p.lines) + "\n"
