"""``python -m benchmarks.mixed_precision [--quick] [--output PATH]``: bfloat16 against
float32 on the CPU, speed and memory of one training step (issue 24).

The step: value and gradient of ``mean((relu(x @ w1) @ w2 - y) ** 2)`` and an SGD update,
batch 256, 512-1024-512 (quick: 32-64-32). Implementations, each in float32 and bfloat16:
- numpy: the two forward products alone (numpy's own matmul; ml_dtypes' bfloat16 has no
  BLAS, so this is the cost floor of a 16-bit product on numpy);
- funcgrad: ``funcgrad.value_and_grad`` with parameters and data in the dtype;
- funcgrad.torch: the facade's loop, float32, and under ``torch.autocast("cpu")`` with
  float32 parameters (the products in bfloat16, the loss in float32);
- PyTorch: the same facade code on real PyTorch (the peer).

Memory (tracemalloc: numpy reports its buffers to it), bfloat16 against float32:
- held: the bytes a step holds at its fullest, what grows with the model and the batch
  and runs out on a GPU - what the forward pass keeps for the backward (activations)
  plus the gradients, measured with ``funcgrad.vjp``'s closure and the gradients alive.
  Target: bfloat16's at most 0.55x float32's (it must halve).
- peak: the highest the step's allocations reach, transients included. numpy has no
  bfloat16 BLAS, so a 16-bit product casts its operands to float32, multiplies there and
  rounds once (as PyTorch's CPU kernels accumulate): those float32 copies live for one
  product and keep the peak ratio above one half.
Speed is reported honestly as ratios to float32 in the same run: for the same reason
funcgrad's bfloat16 products are slower, not faster, than float32 on the CPU. On a GPU (cupy) float16 products run on
the tensor cores; that is measured by tests/torch/test_torch_cuda_memory.py's peak check,
not timed here.
"""
from __future__ import annotations

import argparse
import sys
from pathlib import Path
from typing import Any, Callable

import numpy as np

from .harness import Config, peer, time_all, traced_peak

SIZES, BATCH = (512, 1024, 512), 256
QUICK_SIZES, QUICK_BATCH = (32, 64, 32), 16
LR = 1e-3
MEMORY_TARGET = 0.55


def _arrays(sizes: tuple, batch: int, dtype: Any) -> dict:
    rng = np.random.default_rng(0)
    d, h, o = sizes
    return {"x": rng.standard_normal((batch, d)).astype(dtype),
            "y": rng.standard_normal((batch, o)).astype(dtype),
            "w1": (rng.standard_normal((d, h)) / np.sqrt(d)).astype(dtype),
            "w2": (rng.standard_normal((h, o)) / np.sqrt(h)).astype(dtype)}


def _numpy_products(a: dict) -> Callable[[], Any]:
    def forward() -> Any:
        return np.maximum(a["x"] @ a["w1"], 0) @ a["w2"]
    return forward


def _funcgrad_step(a: dict) -> Callable[[], Any]:
    import funcgrad
    import funcgrad.numpy as fnp

    def loss(params: tuple, x: Any, y: Any) -> Any:
        w1, w2 = params
        return fnp.mean(fnp.square(fnp.matmul(fnp.maximum(fnp.matmul(x, w1), 0), w2) - y))
    vg = funcgrad.value_and_grad(loss)
    x, y = fnp.asarray(a["x"]), fnp.asarray(a["y"])
    state = [(fnp.asarray(a["w1"]), fnp.asarray(a["w2"]))]

    def step() -> Any:
        value, grads = vg(state[0], x, y)
        state[0] = tuple(p - LR * g for p, g in zip(state[0], grads))
        return value
    return step


def _torch_like_step(T: Any, a: dict, autocast: bool) -> Callable[[], Any]:
    """The same PyTorch code for funcgrad.torch and PyTorch; float32 parameters."""
    x, y = T.tensor(a["x"]), T.tensor(a["y"])
    w1 = T.tensor(a["w1"], requires_grad=True)
    w2 = T.tensor(a["w2"], requires_grad=True)
    opt = T.optim.SGD([w1, w2], lr=LR)

    def step() -> Any:
        opt.zero_grad()
        with T.autocast("cpu", dtype=T.bfloat16, enabled=autocast):
            out = T.relu(x @ w1) @ w2
            loss = T.nn.functional.mse_loss(out.float(), y)
        loss.backward()
        opt.step()
        return loss
    return step


def measure(quick: bool = False) -> dict:
    """Timings, ratios and peaks; ``quick`` shrinks the sizes and repeats (smoke test)."""
    import ml_dtypes
    import funcgrad.torch as ft
    cfg = Config.make(quick)
    sizes, batch = (QUICK_SIZES, QUICK_BATCH) if quick else (SIZES, BATCH)
    f32, bf16 = (_arrays(sizes, batch, np.float32),
                 _arrays(sizes, batch, ml_dtypes.bfloat16))
    fns = {("numpy products", "float32"): _numpy_products(f32),
           ("numpy products", "bfloat16"): _numpy_products(bf16),
           ("funcgrad step", "float32"): _funcgrad_step(f32),
           ("funcgrad step", "bfloat16"): _funcgrad_step(bf16),
           ("funcgrad.torch step", "float32"): _torch_like_step(ft, f32, False),
           ("funcgrad.torch step", "bfloat16 autocast"): _torch_like_step(ft, f32, True)}
    torch = peer("torch")
    if torch is not None:
        fns[("PyTorch step", "float32")] = _torch_like_step(torch, f32, False)
        fns[("PyTorch step", "bfloat16 autocast")] = _torch_like_step(torch, f32, True)
    timings = time_all(fns, cfg)
    arrays = (("float32", f32), ("bfloat16", bf16))
    peaks = {dtype: traced_peak(_funcgrad_step(a)) for dtype, a in arrays}
    held = {dtype: _held_bytes(a) for dtype, a in arrays}
    return {"sizes": sizes, "batch": batch, "timings": timings, "peaks": peaks,
            "held": held, "memory_ratio": held["bfloat16"] / held["float32"]}


def _held_bytes(a: dict) -> int:
    """Bytes alive with the forward's residuals and the gradients held (tracemalloc)."""
    import tracemalloc
    import funcgrad
    import funcgrad.numpy as fnp

    def loss(params: tuple) -> Any:
        w1, w2 = params
        return fnp.mean(fnp.square(fnp.matmul(fnp.maximum(fnp.matmul(x, w1), 0), w2) - y))
    x, y = fnp.asarray(a["x"]), fnp.asarray(a["y"])
    params = (fnp.asarray(a["w1"]), fnp.asarray(a["w2"]))
    tracemalloc.start()
    try:
        base = tracemalloc.get_traced_memory()[0]
        value, pullback = funcgrad.vjp(loss, params)
        grads = pullback(fnp.ones_like(value))
        held = tracemalloc.get_traced_memory()[0] - base
    finally:
        tracemalloc.stop()
    del value, pullback, grads
    return held


def table(result: dict) -> str:
    t = result["timings"]
    lines = ["| implementation | dtype | median | x its float32 |", "|---|---|---|---|"]
    for (impl, dtype), timing in t.items():
        base = t[(impl, "float32")].median
        lines.append(f"| {impl} | {dtype} | {timing.median * 1e3:.3g} ms | "
                     f"{timing.median / base:.2f} |")
    met = "met" if result["memory_ratio"] <= MEMORY_TARGET else "MISSED"
    lines += ["", "| funcgrad step memory | float32 | bfloat16 | ratio |",
              "|---|---|---|---|"]
    for what, key in (("held (residuals + gradients)", "held"), ("peak", "peaks")):
        m = result[key]
        lines.append(f"| {what} | {m['float32'] / 2**20:.2f} MiB | "
                     f"{m['bfloat16'] / 2**20:.2f} MiB | {m['bfloat16'] / m['float32']:.2f} |")
    lines += ["", f"- Target: bfloat16's held memory at most {MEMORY_TARGET}x float32's: "
              f"{result['memory_ratio']:.2f} -> {met}"]
    return "\n".join(lines)


def main(argv: list[str] | None = None) -> str:
    parser = argparse.ArgumentParser(prog="python -m benchmarks.mixed_precision")
    parser.add_argument("--quick", action="store_true")
    parser.add_argument("--output", type=Path)
    args = parser.parse_args(argv)
    result = measure(args.quick)
    d, h, o = result["sizes"]
    text = (f"# Mixed precision on the CPU (issue 24)\n\nOne step, batch {result['batch']}, "
            f"{d}-{h}-{o}; medians of per-call times, implementations timed round-robin "
            f"in one process, BLAS on one thread.\n\n{table(result)}\n")
    print(text)
    if args.output:
        args.output.write_text(text)
    return text


if __name__ == "__main__":
    main(sys.argv[1:])
