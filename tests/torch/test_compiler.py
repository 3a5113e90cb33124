"""torch.compiler against PyTorch: is_compiling inside a compiled function, disable
(a graph break running the function eagerly; fullgraph=True refuses it), wrap_numpy."""
from __future__ import annotations

import pytest

import funcgrad.torch as F


def _facts(m):
    calls = []

    @m.compiler.disable
    def eager(x):
        calls.append(m.compiler.is_compiling())
        return x * 2

    def f(x):
        return eager(x.sin()).cos()

    def g(x):  # (another function: PyTorch caches f's compiled code)
        return eager(x.sin()).cos()

    x = m.ones(3)
    compiled = m.compile(f)(x)
    inside = m.compile(lambda t: t + (10 if m.compiler.is_compiling() else 0))(x)
    with pytest.raises(Exception) as info:
        m.compile(g, fullgraph=True)(x)
    m.compiler.reset()
    return [compiled.tolist() == f(x).tolist(), calls, inside.tolist(),
            type(info.value).__name__, m.compiler.is_compiling(),
            m.compiler.wrap_numpy(lambda a, b: a + b)(m.ones(2), m.ones(2)).tolist(),
            hasattr(eager, "__wrapped__")]


def test_compiler_matches_pytorch(real):
    assert _facts(F) == _facts(real)
