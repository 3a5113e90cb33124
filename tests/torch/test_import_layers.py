"""The facade's import layering: a runtime floor under `Tensor`, and no import circles.

PyTorch's tensor core knows a small autograd interface, never the engine. funcgrad.torch
keeps the same shape: `funcgrad.torch._runtime` (dtypes, storage, grad mode, anomaly mode,
graph nodes, forward-mode levels, profiler state) imports nothing of the facade above it;
`_tensor` imports only the runtime (and its own data base class); the op layer, the engine,
printing and the factories sit above and attach what they add from above. These tests read
the import statements (module level: what runs at import time) and fail on any circle of
more than two modules, on a runtime module importing upwards, and on in-function imports
beyond the few whose reason is the facade's whole namespace or a double-backward call.
"""
from __future__ import annotations

import ast
import pathlib
from collections import defaultdict

import pytest

import funcgrad.torch

PACKAGE = pathlib.Path(funcgrad.torch.__file__).parent
PREFIX = "funcgrad.torch"
MOST_FUNCTION_IMPORTS = 10


def _modules() -> dict:
    mods = {}
    for path in PACKAGE.rglob("*.py"):
        parts = list(path.relative_to(PACKAGE).with_suffix("").parts)
        if parts[-1] == "__init__":
            parts = parts[:-1]
        mods[".".join([PREFIX, *parts])] = path
    return mods


MODULES = _modules()


def _base(module: str, path: pathlib.Path, node: ast.ImportFrom) -> str:
    if node.level == 0:
        return node.module or ""
    parts = module.split(".")
    if path.name != "__init__.py":
        parts = parts[:-1]
    parts = parts[:len(parts) - node.level + 1]
    return ".".join(parts + ([node.module] if node.module else []))


def _targets(module: str, path: pathlib.Path, node: ast.AST) -> list:
    """The facade modules an import statement loads (a name that is a submodule counts as
    that module, else as the package it is taken from)."""
    if isinstance(node, ast.Import):
        names = [a.name for a in node.names]
    else:
        base = _base(module, path, node)
        names = [f"{base}.{a.name}" if f"{base}.{a.name}" in MODULES else base
                 for a in node.names]
    return [n for n in names if n in MODULES]


def _imports() -> tuple:
    """(module-level edges, in-function imports as (module, line, targets, source line))."""
    edges: dict = defaultdict(set)
    in_functions = []
    for module, path in MODULES.items():
        source = path.read_text()
        lines = source.splitlines()

        def visit(node: ast.AST, in_function: bool) -> None:
            for child in ast.iter_child_nodes(node):
                inner = in_function or isinstance(
                    child, (ast.FunctionDef, ast.AsyncFunctionDef, ast.Lambda))
                if isinstance(child, (ast.Import, ast.ImportFrom)):
                    targets = _targets(module, path, child)
                    if in_function and targets:
                        in_functions.append((module, child.lineno, targets,
                                             lines[child.lineno - 1]))
                    elif not in_function:
                        edges[module].update(targets)
                visit(child, inner)
        visit(ast.parse(source), False)
    # importing into a subpackage from outside it first runs the subpackage's __init__
    for module in list(edges):
        for target in list(edges[module]):
            parts = target.split(".")
            for i in range(3, len(parts)):
                package = ".".join(parts[:i])
                if package in MODULES and not (module + ".").startswith(package + "."):
                    edges[module].add(package)
    return edges, in_functions


EDGES, IN_FUNCTIONS = _imports()


def _circles(edges: dict, nodes: list) -> list:
    """The strongly connected components of more than one module (Tarjan's algorithm)."""
    index: dict = {}
    low: dict = {}
    stack: list = []
    on_stack: set = set()
    found: list = []

    def connect(v: str) -> None:
        index[v] = low[v] = len(index)
        stack.append(v)
        on_stack.add(v)
        for w in edges.get(v, ()):
            if w not in index:
                connect(w)
                low[v] = min(low[v], low[w])
            elif w in on_stack:
                low[v] = min(low[v], index[w])
        if low[v] == index[v]:
            component = []
            while True:
                w = stack.pop()
                on_stack.discard(w)
                component.append(w)
                if w == v:
                    break
            if len(component) > 1:
                found.append(sorted(component))

    for v in nodes:
        if v not in index:
            connect(v)
    return found


def test_no_import_circle_over_two_modules():
    big = [c for c in _circles(EDGES, list(MODULES)) if len(c) > 2]
    assert not big, f"import circles: {big}"


def test_circle_finder_sees_a_circle():
    edges = {"a": {"b"}, "b": {"c"}, "c": {"a"}, "d": {"a"}}
    assert _circles(edges, ["a", "b", "c", "d"]) == [["a", "b", "c"]]


RUNTIME = f"{PREFIX}._runtime"


@pytest.mark.parametrize("module", sorted(m for m in MODULES if m.startswith(RUNTIME)))
def test_runtime_imports_nothing_above_it(module):
    above = {t for t in EDGES[module] if not t.startswith(RUNTIME)}
    assert not above, f"{module} imports {above}: the runtime floor sits under the facade"


def test_tensor_imports_only_the_runtime():
    allowed = {f"{PREFIX}._tensor_data"}
    for module in (f"{PREFIX}._tensor", f"{PREFIX}._tensor_data"):
        above = {t for t in EDGES[module] if not t.startswith(RUNTIME)} - allowed
        assert not above, f"{module} imports {above}"


def test_in_function_imports_are_few_and_give_their_reason():
    assert len(IN_FUNCTIONS) <= MOST_FUNCTION_IMPORTS, "\n".join(
        f"{m}:{line}: {src.strip()}" for m, line, _, src in IN_FUNCTIONS)
    unexplained = [f"{m}:{line}" for m, line, _, src in IN_FUNCTIONS if "#" not in src]
    assert not unexplained, f"in-function imports without a reason: {unexplained}"


def test_layers_above_attach_to_the_tensor():
    """What the tensor gets from above is there once the package is imported."""
    torch = funcgrad.torch
    t = torch.Tensor(2, 3)
    assert t.shape == (2, 3) and float(t.sum()) == 0.0
    x = torch.ones(3, requires_grad=True)
    (x * 2).sum().backward()
    assert x.grad.tolist() == [2.0, 2.0, 2.0]
    assert repr(torch.nn.Parameter(torch.ones(1))).startswith("Parameter containing:\n")
    from funcgrad.torch._runtime.grad_mode import no_grad
    from funcgrad.torch._runtime.profiler import record_function
    assert no_grad is torch.no_grad and record_function is torch.profiler.record_function
