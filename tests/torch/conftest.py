"""The `peer` fixture: run one function on real PyTorch and on funcgrad.torch and compare
values, the output's node name, gradients and error messages (skipped without PyTorch)."""
from __future__ import annotations

from typing import Any, Callable

import numpy as np
import pytest


class Peer:
    """``check(fn, *args)`` runs ``fn(T, *tensors)`` with ``T`` each library; numpy
    arguments become tensors (floats require grad), others pass through."""

    def __init__(self, real: Any, ours: Any):
        self.real, self.ours = real, ours

    def _tensors(self, T: Any, args: tuple, dtype: str, grad: bool) -> list:
        out = []
        for a in args:
            if isinstance(a, np.ndarray):
                floating = a.dtype.kind == "f"
                t = T.tensor(a, dtype=getattr(T, dtype) if floating else None)
                out.append(t.requires_grad_(True) if grad and floating else t)
            else:
                out.append(a)
        return out

    def run(self, T: Any, fn: Callable, args: tuple, dtype: str, grad: bool) -> tuple:
        ts = self._tensors(T, args, dtype, grad)
        out = fn(T, *ts)
        outs = list(out) if isinstance(out, (tuple, list)) else [out]
        first = outs[0]
        name = type(first.grad_fn).__name__ if first.grad_fn is not None else None
        grads = []
        if grad and first.requires_grad:
            proj = np.random.RandomState(1).uniform(-1, 1, tuple(first.shape))
            (first * T.tensor(proj, dtype=first.dtype)).sum().backward()
            grads = [None if t.grad is None else t.grad.numpy() for t in ts
                     if hasattr(t, "requires_grad") and t.requires_grad]
        return [o.detach().numpy() if hasattr(o, "detach") else o for o in outs], name, grads

    def check(self, fn: Callable, *args: Any, dtype: str = "float64", grad: bool = True,
              rtol: float = 1e-7, atol: float = 1e-9, names: bool = True) -> list:
        (v1, n1, g1), (v2, n2, g2) = (self.run(T, fn, args, dtype, grad)
                                      for T in (self.real, self.ours))
        assert len(v1) == len(v2)
        for a, b in zip(v1, v2):
            if a is None or b is None:
                assert a is None and b is None
                continue
            a, b = np.asarray(a), np.asarray(b)
            assert a.shape == b.shape, (a.shape, b.shape)
            assert a.dtype == b.dtype, (a.dtype, b.dtype)
            np.testing.assert_allclose(b, a, rtol=rtol, atol=atol)
        if names:
            assert n2 == n1
        assert len(g1) == len(g2)
        for a, b in zip(g1, g2):
            assert (a is None) == (b is None)
            if a is not None:
                np.testing.assert_allclose(b, a, rtol=rtol, atol=atol)
        return v2

    def raises(self, fn: Callable, *args: Any, dtype: str = "float32") -> str:
        """Both raise the same exception type with the same first line of message."""
        messages = []
        for T in (self.real, self.ours):
            with pytest.raises(Exception) as info:
                fn(T, *self._tensors(T, args, dtype, False))
            messages.append((type(info.value).__name__, str(info.value).split("\n")[0]))
        assert messages[1] == messages[0]
        return messages[0][1]


@pytest.fixture(scope="session")
def peer() -> Peer:
    real = pytest.importorskip("torch")
    if not hasattr(real, "tensor"):  # this folder itself, seen as a namespace package
        pytest.skip("PyTorch is not installed")
    import funcgrad.torch
    return Peer(real, funcgrad.torch)


class Raised:
    """What a step raised, compared by exception type and whole message."""

    def __init__(self, error: BaseException):
        self.kind, self.message = type(error).__name__, str(error)

    def __eq__(self, other: object) -> bool:
        return isinstance(other, Raised) and (self.kind, self.message) == (other.kind,
                                                                           other.message)

    def __repr__(self) -> str:
        return f"Raised({self.kind}: {self.message!r})"


class Aliasing:
    """``same(program, *args)`` runs ``program(T, *args)`` with ``T`` each library and
    compares the facts it returns: a dict whose values are data or zero-argument callables,
    called in order (so a step such as a write comes before the reads that follow it);
    tensors and arrays become nested lists, autograd nodes their class name and ``name()``;
    what a callable raises is recorded as a fact (``Raised``), and so is what the program
    itself raises. Returns PyTorch's facts; a difference fails the test with
    every mismatching fact listed."""

    def __init__(self, real: Any, ours: Any):
        self.real, self.ours = real, ours

    @staticmethod
    def facts(program: Callable, T: Any, *args: Any) -> Any:
        try:
            steps = program(T, *args)
        except Exception as error:  # the program failed before any fact: that is a fact
            return Raised(error)
        out = {}
        for name, step in steps.items():
            try:
                out[name] = _plain(step() if callable(step) else step)
            except Exception as error:
                out[name] = Raised(error)
        return out

    def same(self, program: Callable, *args: Any, rtol: float = 0.0) -> Any:
        expected = self.facts(program, self.real, *args)
        assert not isinstance(expected, Raised), f"the program fails on PyTorch: {expected}"
        actual = self.facts(program, self.ours, *args)
        problems = _differences(expected, actual, rtol, "")
        assert not problems, "funcgrad.torch differs from PyTorch:\n" + "\n".join(problems)
        return expected


def _plain(value: Any) -> Any:
    """A fact as data both libraries can be compared on."""
    if hasattr(value, "next_functions"):
        return (type(value).__name__, value.name())
    if hasattr(value, "tolist") and hasattr(value, "dtype"):
        return value.tolist()
    return value


def _differences(expected: Any, actual: Any, rtol: float, path: str) -> list:
    """Each place where ``actual`` differs from ``expected``: dicts key by key, numbers
    within ``rtol`` (exactly when it is 0), everything else by equality."""
    if isinstance(expected, dict) and isinstance(actual, dict):
        return [p for key in {**expected, **actual}
                for p in _differences(expected.get(key, "<missing>"),
                                      actual.get(key, "<missing>"), rtol, f"{path}.{key}")]
    if rtol and _numeric(expected) and _numeric(actual):
        a, b = np.asarray(expected), np.asarray(actual)
        if a.shape == b.shape and np.allclose(b, a, rtol=rtol, atol=rtol):
            return []
    elif type(expected) is type(actual) and expected == actual:
        return []
    return [f"  {path or 'result'}: PyTorch {expected!r}, funcgrad {actual!r}"]


def _numeric(value: Any) -> bool:
    """A number or a (nested) list of numbers, not of bools."""
    if isinstance(value, bool) or not isinstance(value, (int, float, complex, list, tuple)):
        return False
    try:
        return np.asarray(value).dtype.kind in "iufc"
    except ValueError:  # ragged lists
        return False


@pytest.fixture(scope="session")
def aliasing(peer: Peer) -> Aliasing:
    return Aliasing(peer.real, peer.ours)


@pytest.fixture(scope="module")
def real():
    """Real PyTorch (the peer of the differential tests); they skip without it."""
    torch = pytest.importorskip("torch")
    if not hasattr(torch, "tensor"):  # the tests/torch folder itself, seen as a namespace
        pytest.skip("PyTorch is not installed")
    return torch
