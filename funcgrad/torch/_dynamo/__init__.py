"""``torch._dynamo``: what PyTorch's users reach of torch.compile's front end.

``config.recompile_limit`` (programs per compiled function before new guards run eagerly),
``reset()`` (forget every compiled program), ``explain(f)(*args)`` (the graphs and graph
breaks a call makes), ``exc.Unsupported`` (a graph break under ``fullgraph=True``),
``is_compiling()``, ``mark_dynamic(t, dim)`` (`funcgrad.torch._compiled_shapes`),
``testing.CompileCounter``. A function with graph breaks runs as compiled segments with eager
Python between them (`funcgrad.torch._graph_split`): its graphs are the segments that ran
compiled, its breaks the eager statements its call reached.
"""
from __future__ import annotations

from typing import Any, Callable

from funcgrad.torch import jit as _jit
from funcgrad.torch._compile_state import config, reset
from funcgrad.torch._compiled_shapes import mark_dynamic
from funcgrad.torch._dynamo import exc, testing

__all__ = ["config", "reset", "explain", "exc", "is_compiling", "ExplainOutput",
           "mark_dynamic", "testing"]


def is_compiling() -> bool:
    """Whether a torch.compile trace is running."""
    return _jit.is_tracing()


class ExplainOutput:
    """What `explain` found: ``graphs`` (their IR), ``graph_count``,
    ``graph_break_count``, ``break_reasons`` (each with ``reason`` and ``user_stack``),
    ``op_count``, ``ops_per_graph``; prints as PyTorch's report."""

    def __init__(self, graphs: list, breaks: list):
        self.graphs = graphs
        self.graph_count = len(graphs)
        self.graph_break_count = len(breaks)
        self.break_reasons = [_BreakReason(b.reason, [b.where] if b.where else [])
                              for b in breaks]
        self.ops_per_graph = [[line.strip() for line in str(g).splitlines()
                               if " = " in line] for g in graphs]
        self.op_count = sum(map(len, self.ops_per_graph))

    def __str__(self) -> str:
        lines = [f"Graph Count: {self.graph_count}",
                 f"Graph Break Count: {self.graph_break_count}",
                 f"Op Count: {self.op_count}", "Break Reasons:"]
        for i, r in enumerate(self.break_reasons, 1):
            lines += [f"  Break Reason {i}:", f"    Reason: {r.reason}", "    User Stack:"]
            lines += [f"      {where}" for where in r.user_stack]
        lines.append("Ops per Graph:")
        for i, ops in enumerate(self.ops_per_graph, 1):
            lines += [f"  Ops {i}:"] + [f"    {op}" for op in ops]
        return "\n".join(lines) + "\n"

    __repr__ = __str__


class _BreakReason:
    def __init__(self, reason: str, user_stack: list):
        self.reason, self.user_stack = reason, user_stack

    def __repr__(self) -> str:
        return f"GraphCompileReason(reason={self.reason!r}, user_stack={self.user_stack})"


def explain(f: Callable, *extra_args: Any, **extra_kwargs: Any) -> Callable[..., ExplainOutput]:
    """``explain(f)(*args, **kwargs)``: compile ``f`` afresh, call it once, and report
    its graphs and graph breaks."""
    def inner(*args: Any, **kwargs: Any) -> ExplainOutput:
        args, kwargs = extra_args + args, {**extra_kwargs, **kwargs}
        compiled = _jit.compile(f)
        compiled(*args, **kwargs)
        return ExplainOutput(*compiled.explained(*args, **kwargs))
    return inner
