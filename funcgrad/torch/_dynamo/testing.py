"""``torch._dynamo.testing``: `CompileCounter`, the backend PyTorch's tests count
compilations with."""
from __future__ import annotations

from typing import Any

__all__ = ["CompileCounter"]


class CompileCounter:
    """A ``torch.compile`` backend that counts the graphs compiled (``frame_count``) and
    their operations (``op_count``); funcgrad calls it with each program traced (its
    `funcgrad.jit` `Lowered`) and the example inputs, and compiles the program itself."""

    def __init__(self) -> None:
        self.frame_count = 0
        self.op_count = 0

    def __call__(self, graph: Any, example_inputs: list) -> Any:
        self.frame_count += 1
        self.op_count += sum(1 for line in graph.as_text().splitlines() if " = " in line)
        return graph

    def clear(self) -> None:
        self.frame_count = 0
        self.op_count = 0
