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
