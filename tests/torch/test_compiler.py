"""torch.compile's public face (torch.compiler) against PyTorch: is_compiling inside a
compiled function, disable (a graph break running the function eagerly; fullgraph=True
refuses it), wrap_numpy. PyTorch's side runs in a subprocess: its compiler installs
frame-evaluation hooks and switches (distribution argument validation off) that would
outlive the test in this process."""
from __future__ import annotations

import json
import subprocess
import sys

import pytest

import funcgrad.torch as F

FACTS = '''
def facts(m):
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
    try:
        m.compile(g, fullgraph=True)(x)
        raised = None
    except Exception as e:  # noqa: BLE001 - its type is the fact
        raised = type(e).__name__
    m.compiler.reset()
    return [compiled.tolist() == f(x).tolist(), calls, inside.tolist(), raised,
            m.compiler.is_compiling(),
            m.compiler.wrap_numpy(lambda a, b: a + b)(m.ones(2), m.ones(2)).tolist(),
            hasattr(eager, "__wrapped__")]
'''


def test_compiler_matches_pytorch(real):
    namespace: dict = {}
    exec(FACTS, namespace)
    program = FACTS + "\nimport json, torch\nprint(json.dumps(facts(torch)))\n"
    run = subprocess.run([sys.executable, "-c", program], capture_output=True, text=True,
                         timeout=300)
    if run.returncode:
        pytest.fail(run.stderr[-2000:])
    theirs = json.loads(run.stdout.strip().splitlines()[-1])
    assert json.loads(json.dumps(namespace["facts"](F))) == theirs
