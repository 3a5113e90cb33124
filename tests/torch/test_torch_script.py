"""torch.jit.script: funcgrad's scripted functions and modules against real PyTorch's
(values, gradients, the graph's op kinds, the compiler's errors)."""
import re
import types
from typing import List, Optional, Tuple

import numpy as np
import pytest

import funcgrad.torch as torch
from funcgrad.torch import nn

real = pytest.importorskip("torch")


def _real(fn):
    """``fn`` with ``torch`` meaning real PyTorch (same source, for its own script)."""
    g = dict(fn.__globals__, torch=real, nn=real.nn)
    return types.FunctionType(fn.__code__, g, fn.__name__, fn.__defaults__)


def _kinds(graph) -> set:
    return set(re.findall(r"= ((?:aten|prim)::\w+)", str(graph)))


def _both(fn, *arrays, extra=()):
    """(ours, theirs): each script's output and the inputs' gradients."""
    out = []
    for lib, scripted in ((torch, torch.jit.script(fn)), (real, real.jit.script(_real(fn)))):
        xs = [lib.tensor(a, requires_grad=True) for a in arrays]
        y = scripted(*xs, *extra)
        y.sum().backward()
        out.append((y.detach().numpy(), [x.grad.numpy() for x in xs], scripted.graph))
    return out


def double(x):
    return x * 2


def loop_if(x, n: int):
    y = x
    for i in range(n):
        if bool(y.sum() > 0):
            y = y - 1.5
        else:
            y = y * 2 + double(x)
    while bool(y.max() > 10):
        y = y / 2
        if n == 3:
            break
    return torch.relu(y)


def early(x, k: int):
    if k > 2:
        return x * 3
    for i in range(k):
        x = x + i
        if i == 1:
            continue
        x = x * 1.5
    return x


def lists(x, w: Optional[float]):
    out: List[torch.Tensor] = []
    for i, row in enumerate(x):
        out.append(row * i)
    if w is not None:
        out.append(x.sum(0) * w)
    acc = out[0]
    for a, b in zip(out, out):
        acc = acc + a * b
    return acc, len(out)


@pytest.mark.parametrize("n", [1, 4])
def test_loops_and_ifs_match_pytorch(n):
    x = np.array([0.5, -1.0, 3.0], np.float32)
    (y, g, graph), (ry, rg, rgraph) = _both(loop_if, x, extra=(n,))
    np.testing.assert_allclose(y, ry, rtol=1e-6)
    np.testing.assert_allclose(g[0], rg[0], rtol=1e-6)
    assert _kinds(graph) == _kinds(rgraph)


@pytest.mark.parametrize("k", [1, 2, 3])
def test_early_return_and_continue(k):
    x = np.array([0.5, -1.0], np.float32)
    (y, g, _), (ry, rg, _) = _both(early, x, extra=(k,))
    np.testing.assert_allclose(y, ry, rtol=1e-6)
    np.testing.assert_allclose(g[0], rg[0], rtol=1e-6)


@pytest.mark.parametrize("w", [None, 0.5])
def test_lists_optional_enumerate_zip(w):
    x = np.arange(6, dtype=np.float32).reshape(3, 2)
    ours, theirs = torch.jit.script(lists), real.jit.script(_real(lists))
    (a, n), (ra, rn) = ours(torch.tensor(x), w), theirs(real.tensor(x), w)
    np.testing.assert_allclose(a.numpy(), ra.numpy())
    assert n == rn
    assert "int" in str(ours.graph) and "Tensor?" not in str(ours.graph)
    assert re.search(r"%w\.\d+ : float\?", str(ours.graph))


class Net:
    @staticmethod
    def make(lib):
        class Block(lib.nn.Module):
            def __init__(self):
                super().__init__()
                self.lin = lib.nn.Linear(3, 3)
                self.scale: float = 0.5

            def forward(self, x):
                return self.helper(self.lin(x)) * self.scale

            def helper(self, x):
                return x.tanh()

        class M(lib.nn.Module):
            def __init__(self):
                super().__init__()
                self.blocks = lib.nn.ModuleList([Block() for _ in range(2)])
                self.head = lib.nn.Linear(3, 1)

            def forward(self, x, steps: int):
                for b in self.blocks:
                    x = b(x)
                for _ in range(steps):
                    if bool(x.mean() > 0):
                        x = x - 0.1
                return self.head(x)
        return M()


def test_module_recursive_matches_pytorch():
    ours, theirs = Net.make(torch), Net.make(real)
    theirs.load_state_dict({k: real.tensor(v.detach().numpy())
                            for k, v in ours.state_dict().items()})
    s, rs = torch.jit.script(ours), real.jit.script(theirs)
    x = np.random.default_rng(0).normal(size=(4, 3)).astype(np.float32)
    y, ry = s(torch.tensor(x), 3), rs(real.tensor(x), 3)
    np.testing.assert_allclose(y.detach().numpy(), ry.detach().numpy(), rtol=1e-5)
    y.sum().backward()
    ry.sum().backward()
    for (name, p), (_, rp) in zip(ours.named_parameters(), theirs.named_parameters()):
        np.testing.assert_allclose(p.grad.numpy(), rp.grad.numpy(), rtol=1e-5, atol=1e-6,
                                   err_msg=name)
    assert {"prim::GetAttr", "prim::CallMethod", "prim::Loop"} <= _kinds(s.graph)
    assert "prim::CallMethod" in _kinds(rs.graph)


def _message(fn, lib):
    with pytest.raises(Exception) as info:
        lib.jit.script(fn if lib is torch else _real(fn))
    return [c.__name__ for c in type(info.value).__mro__], str(info.value)


def branch_types(x, c: bool):
    if c:
        y = x
    else:
        y = 1
    return y


def return_types(x, c: bool):
    if c:
        return x
    return 1


def with_try(x):
    try:
        x = x + 1
    except Exception:
        pass
    return x


def star(x, *args):
    return x


def half_defined(x, c: bool):
    if c:
        y = x
    return y


@pytest.mark.parametrize("fn", [branch_types, return_types, with_try, star, half_defined])
def test_errors_like_torchscript(fn):
    kind, msg = _message(fn, torch)
    rkind, rmsg = _message(fn, real)
    assert rkind[0] in kind
    first = lambda m: m.strip().splitlines()[0].replace(" (inferred)", "")  # noqa: E731
    assert first(msg) == first(rmsg)
    assert "<--- HERE" in msg and f'line {fn.__code__.co_firstlineno}' not in msg.split(
        "\n")[0]


def test_ignore_unused_export_is_scripting():
    calls = []

    @torch.jit.ignore
    def side(x):
        calls.append(1)
        return x + 1

    @torch.jit.unused
    def never(x):
        return x

    def f(x, use: bool):
        if torch.jit.is_scripting():
            x = side(x)
        if use:
            x = never(x)
        return x

    s = torch.jit.script(f)
    assert s(torch.ones(2), False).tolist() == [2.0, 2.0] and calls == [1]
    with pytest.raises(RuntimeError, match="marked unused"):
        s(torch.ones(2), True)

    class M(nn.Module):
        def forward(self, x):
            return x

        @torch.jit.export
        def twice(self, x):
            return x * 2

    assert torch.jit.script(M()).twice(torch.ones(1)).item() == 2.0


def test_compile_stages_tensor_control_flow():
    def f(x, n: int):
        for i in range(n):
            x = x * 0.5 + 1.0
        if bool(x.sum() > 3):
            x = x * 2
        else:
            x = -x
        return x

    s = torch.jit.script(f)
    c = torch.compile(lambda x: s(x, 4))
    for v in ([1.0, 2.0], [-5.0, 0.0]):
        x = torch.tensor(v, requires_grad=True)
        y = c(x)
        y.sum().backward()
        x2 = torch.tensor(v, requires_grad=True)
        s(x2, 4).sum().backward()
        np.testing.assert_allclose(y.detach().numpy(), s(torch.tensor(v), 4).numpy())
        np.testing.assert_allclose(x.grad.numpy(), x2.grad.numpy())
