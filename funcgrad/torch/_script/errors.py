"""Script-time errors in TorchScript's form: the message, then the source of the function
with the offending node underlined (``~~~ <--- HERE``), as ``torch.jit.frontend`` prints
them, so a user sees which line the compiler refused."""
from __future__ import annotations

import ast
import inspect
import textwrap
from typing import Any

__all__ = ["Source", "FrontendError", "NotSupportedError", "UnsupportedNodeError",
           "ScriptCompileError"]


class Source:
    """A function's source as the compiler parsed it: its file, first line and lines."""

    def __init__(self, fn: Any):
        try:
            lines, first = inspect.getsourcelines(fn)
        except (OSError, TypeError) as e:
            raise OSError(f"Can't get source for {fn}. TorchScript requires source access "
                          "in order to carry out compilation, make sure original .py files "
                          "are available.") from e
        self.text = textwrap.dedent("".join(lines))
        self.lines = self.text.splitlines()
        self.file = inspect.getsourcefile(fn) or "<unknown>"
        self.first = first if first else 1

    def parse(self) -> ast.FunctionDef:
        tree = ast.parse(self.text)
        fn = tree.body[0]
        if not isinstance(fn, (ast.FunctionDef, ast.AsyncFunctionDef)):
            raise RuntimeError("Expected a single top-level function")
        return fn

    def loc(self, node: ast.AST) -> tuple:
        """(file, line, column) of a node, as IR nodes carry it."""
        return (self.file, self.first + node.lineno - 1, node.col_offset)

    def highlight(self, node: ast.AST, width: int | None = None) -> str:
        """The source around ``node``, the node underlined."""
        line = node.lineno - 1
        start = node.col_offset
        if width is None:
            end = node.end_col_offset if node.end_lineno == node.lineno else len(
                self.lines[line])
            width = max(1, (end or start + 1) - start)
        out = [f'  File "{self.file}", line {self.first + line}']
        out += self.lines[max(0, line - 2):line + 1]
        out.append(" " * start + "~" * width + " <--- HERE")
        out += self.lines[line + 1:line + 3]
        return "\n".join(out) + "\n"


class FrontendError(Exception):
    """A construct the compiler cannot translate (``torch.jit.frontend.FrontendError``)."""

    def __init__(self, source: Source, node: ast.AST, msg: str, width: int | None = None):
        super().__init__(f"{msg}:\n{source.highlight(node, width)}")


class NotSupportedError(FrontendError):
    """Python TorchScript does not support (``torch.jit.frontend.NotSupportedError``)."""


class UnsupportedNodeError(NotSupportedError):
    """A statement or expression kind TorchScript does not support."""

    _WIDTHS = {ast.Try: 3, ast.Global: 6, ast.Nonlocal: 8, ast.Lambda: 1, ast.Yield: 1,
               ast.YieldFrom: 1, ast.With: 4, ast.Delete: 3, ast.Import: 6,
               ast.ImportFrom: 4, ast.ClassDef: 5, ast.FunctionDef: 3, ast.Await: 5}
    _NAMES = {ast.Try: "try blocks", ast.Global: "global variables",
              ast.Nonlocal: "nonlocal variables", ast.Lambda: "Lambda", ast.Yield: "Yield",
              ast.YieldFrom: "YieldFrom", ast.Delete: "del statements",
              ast.FunctionDef: "function definitions", ast.ClassDef: "class definitions",
              ast.Starred: "starred expressions", ast.DictComp: "dict comprehensions",
              ast.SetComp: "set comprehensions", ast.GeneratorExp: "generator expressions",
              ast.Set: "set literals"}

    def __init__(self, source: Source, node: ast.AST):
        kind = type(node)
        name = self._NAMES.get(kind, kind.__name__)
        super().__init__(source, node, f"{name} aren't supported", self._WIDTHS.get(kind))


class ScriptCompileError(RuntimeError):
    """A program TorchScript's type checking refuses (PyTorch raises RuntimeError)."""

    def __init__(self, source: Source, node: ast.AST, msg: str,
                 used: ast.AST | None = None):
        text = f"\n{msg}:\n{source.highlight(node)}"
        if used is not None:
            text += f"and was used here:\n{source.highlight(used)}"
        super().__init__(text)
