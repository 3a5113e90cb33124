"""torch.compile regressions found running real models."""
from __future__ import annotations

import numpy as np

import funcgrad.torch as torch


def test_compiled_layer_norm_backward_does_not_write_into_a_broadcast():
    """The compiled backward reused a dead buffer for an elementwise result; the buffer
    was a broadcast (zero strides, read-only), which must never be written: "output array
    is read-only" on the first backward of a compiled LayerNorm (a small GPT's)."""
    torch.manual_seed(0)
    norm = torch.nn.LayerNorm(32)
    compiled = torch.compile(norm)
    x = torch.randn(8, 16, 32, requires_grad=True)
    for _ in range(2):
        x.grad = None
        norm.weight.grad = None
        compiled(x).pow(2).sum().backward()
        got = (x.grad.clone(), norm.weight.grad.clone())
        x.grad = None
        norm.weight.grad = None
        norm(x).pow(2).sum().backward()
        np.testing.assert_allclose(got[0].numpy(), x.grad.numpy(), rtol=1e-5, atol=1e-6)
        np.testing.assert_allclose(got[1].numpy(), norm.weight.grad.numpy(), rtol=1e-5,
                                   atol=1e-5)
