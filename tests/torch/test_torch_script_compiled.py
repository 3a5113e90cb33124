"""A scripted function's calls run one compiled program per signature
(`funcgrad.torch._script.compiled`): the interpreter's results, the loop kept as a loop;
calls that record autograd and graphs with effects run through the interpreter."""
from __future__ import annotations

import funcgrad.torch as torch


@torch.jit.script
def _loop(x: torch.Tensor, n: int) -> torch.Tensor:
    for i in range(n):
        x = torch.tanh(x * 0.9 + 0.1)
    return x


@torch.jit.script
def _noisy(x: torch.Tensor) -> torch.Tensor:
    return x + torch.rand_like(x)


def test_compiled_calls_equal_the_interpreter_and_keep_the_loop():
    x = torch.linspace(-1.0, 1.0, 5)
    for n in (0, 3, 7, 3):
        want = x
        for _ in range(n):
            want = torch.tanh(want * 0.9 + 0.1)
        assert torch.equal(_loop(x, n), want)
    runner = _loop._run
    assert len(runner.trees) == 3 and not runner.refused
    signature = [s for s in runner.trees if s[1] == 7][0]
    program = runner.jitted.lower(signature, x._a).as_text()
    assert "scan" in program and program.count("tanh") == 1  # a loop, not 7 copies


def test_autograd_and_random_draws_run_interpreted():
    x = torch.ones(3, requires_grad=True)
    out = _loop(x, 2)
    assert out.grad_fn is not None and type(out.grad_fn).__name__ == "TanhBackward0"
    torch.manual_seed(0)
    a = _noisy(torch.zeros(3))
    b = _noisy(torch.zeros(3))
    assert not torch.equal(a, b) and not _noisy._run.pure

