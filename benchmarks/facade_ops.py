"""``python -m benchmarks.facade_ops [--grad-only] [--number N]``: the per-op cost of the
funcgrad.torch facade beside PyTorch eager's, op by op, on 10x10 float32 tensors.

Workload 1 measures one small-op chain (mul, add, tanh); real programs call many more ops,
and an op whose facade function is traced (a composition of primitives) rather than
recorded as one primitive call costs several times more. This table finds them: each op
forward only, under ``no_grad`` and with an input that requires grad (recording its node),
the best of 5 repeats of ``--number`` calls, funcgrad.torch and PyTorch alternating in one
process, sorted by the with-grad ratio. It has no target; issue 20's target is workload 1.
"""
from __future__ import annotations

import argparse
import timeit
from typing import Any

from .harness import single_threaded_blas

# name -> expression of ``a`` (the input), ``w`` (10x10), ``b`` (10), ``y`` (10 labels), ``L``
OPS = {
    "x*2.0": "a * 2.0", "x+w": "a + w", "x/w": "a / w", "x+b": "a + b", "neg": "-a",
    "x.sum()": "a.sum()", "sum(dim)": "a.sum(dim=0)", "mean()": "a.mean()",
    "mean(1)": "a.mean(1)", "var": "a.var()", "norm": "a.norm()", "amax": "a.amax(1)",
    "max(1)": "a.max(1)", "argmax": "a.argmax(1)",
    "relu": "a.relu()", "exp": "a.exp()", "tanh": "a.tanh()", "sigmoid": "a.sigmoid()",
    "pow2": "a ** 2", "sqrt(abs)": "a.abs().sqrt()", "clamp": "a.clamp(-1, 1)",
    "gt": "a > 0", "where": "L.where(a > 0, a, w)", "masked_fill": "a.masked_fill(a > 0, 0.0)",
    "x@w": "a @ w", "mm": "L.mm(a, w)", "linear": "L.nn.functional.linear(a, w, b)",
    "view": "a.view(100)", "reshape": "a.reshape(5, 20)", "flatten": "a.flatten()",
    "t()": "a.t()", "transpose": "a.transpose(0, 1)", "permute": "a.permute(1, 0)",
    "unsqueeze": "a.unsqueeze(0)", "expand": "b.expand(10, 10)", "x[0]": "a[0]",
    "x[:, 1:3]": "a[:, 1:3]", "item": "a[0, 0].item()", "cat": "L.cat([a, w])",
    "stack": "L.stack([a, w])", "chunk": "a.chunk(2)", "contiguous": "a.t().contiguous()",
    "clone": "a.clone()", "detach": "a.detach()",
    "softmax": "a.softmax(-1)", "log_softmax": "L.log_softmax(a, -1)",
    "cross_entropy": "L.nn.functional.cross_entropy(a, y)",
    "mse": "L.nn.functional.mse_loss(a, w)", "layer_norm": "L.nn.functional.layer_norm(a, (10,))",
    "gelu": "L.nn.functional.gelu(a)",
}


def _per_call(fn: Any, number: int) -> float:
    return min(timeit.repeat(fn, number=number, repeat=5)) / number


def measure(lib: Any, number: int, grad_only: bool = False) -> dict[str, tuple]:
    """Per op: (seconds a call under no_grad or None, seconds a call recording grad)."""
    x, w, b = lib.randn(10, 10), lib.randn(10, 10), lib.randn(10)
    y = lib.randint(0, 10, (10,))
    xg = x.clone().requires_grad_(True)
    out = {}
    for name, expr in OPS.items():
        f = eval("lambda a: " + expr, {"L": lib, "w": w, "b": b, "y": y})  # noqa: S307
        no_grad = None
        if not grad_only:
            with lib.no_grad():
                no_grad = _per_call(lambda: f(x), number)
        out[name] = (no_grad, _per_call(lambda: f(xg), number))
    return out


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(prog="python -m benchmarks.facade_ops", description=__doc__)
    parser.add_argument("--number", type=int, default=2000, help="calls per repeat")
    parser.add_argument("--grad-only", action="store_true", help="skip the no_grad column")
    args = parser.parse_args(argv)
    import funcgrad.torch as ft
    import torch
    with single_threaded_blas():
        ours = measure(ft, args.number, args.grad_only)
        theirs = measure(torch, args.number, args.grad_only)
    print("| op | funcgrad.torch no_grad | torch | ratio | funcgrad.torch grad | torch | ratio |")
    print("|---|---|---|---|---|---|---|")
    for name in sorted(OPS, key=lambda k: -ours[k][1] / theirs[k][1]):
        (a0, a1), (b0, b1) = ours[name], theirs[name]
        plain = ("| - | - | -" if a0 is None else
                 f"| {a0 * 1e6:.1f} us | {b0 * 1e6:.1f} us | {a0 / b0:.1f}x")
        print(f"| {name} {plain} | {a1 * 1e6:.1f} us | {b1 * 1e6:.1f} us | {a1 / b1:.1f}x |")


if __name__ == "__main__":
    main()
