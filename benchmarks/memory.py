"""Workload 5: peak memory of the gradient of the 64-layer chain on 1e5-element float64
arrays, with and without checkpointing.

How each library is measured (peak above what was allocated when the gradient call began;
the returned gradient, one layer's worth, is included everywhere):
- funcgrad, hand-written numpy, HIPS autograd: tracemalloc (numpy reports its buffers to it).
- PyTorch: its CPU allocator is invisible to tracemalloc, so the profiler records every
  allocation and free (profile_memory=True) and the peak of their running sum is taken.
- JAX jit: XLA's buffer assignment of the compiled gradient (temporaries + output, from
  ``memory_analysis()``). JAX eager on CPU exposes no allocator statistics: not measured.

The sqrt(n) bound: checkpointing n layers in k segments keeps the k segment inputs and,
while one segment is differentiated, its ceil(n/k) recomputed activations: (k + ceil(n/k))
activation buffers, least at k ~ sqrt(n), ~2 sqrt(n) (16 for 64 layers, against 64 without
checkpointing). The cotangent and the backward rules' temporaries come on top: hand-written
numpy checkpointing (the floor, in the table) needs about 3 buffers more.

Target: funcgrad's checkpointed peak within 1.2x of that bound.
"""
from __future__ import annotations

import math
from typing import Any, Callable

import numpy as np

from . import chain
from .harness import (Config, Report, Row, missing_note, peer, ratio_target, skipped_row,
                      torch_cpu_peak, traced_peak)

N, DEPTH, SEGMENTS, DEPTHS = 100_000, 64, 8, (8, 16, 32, 64)
QUICK = (1_000, 16, 4, (8, 16))


def sqrt_segments(depth: int) -> int:
    """funcgrad.checkpoint_sequential's default number of segments."""
    return max(1, round(math.sqrt(depth)))


def bound_layers(depth: int, segments: int) -> int:
    """Activation buffers any k-segment checkpointing of the chain must hold."""
    return segments + math.ceil(depth / segments)


def numpy_checkpointed_grad(x: np.ndarray, ws: list, bs: list, segments: int) -> np.ndarray:
    """Hand-written checkpointing, the floor: the forward pass keeps only each segment's
    input; the backward pass recomputes one segment at a time and differentiates it."""
    size = math.ceil(len(ws) / segments)
    starts, inputs, h = range(0, len(ws), size), [], x
    for s in starts:
        inputs.append(h)
        for w, b in zip(ws[s:s + size], bs[s:s + size]):
            h = np.tanh(h * w + b)
    g = np.ones_like(h)
    del h
    for s in reversed(starts):
        g = chain.numpy_grad(inputs.pop(), ws[s:s + size], bs[s:s + size], g)
    return g


def _funcgrad(x: np.ndarray, ws: list, bs: list, segments: int) -> dict[str, Callable]:
    import funcgrad
    import funcgrad.numpy as fnp
    fx = fnp.asarray(x)
    layers = [(lambda w, b: lambda h: fnp.tanh(h * w + b))(fnp.asarray(w), fnp.asarray(b))
              for w, b in zip(ws, bs)]

    def plain(h):
        for f in layers:
            h = f(h)
        return fnp.sum(h)

    def segmented(k: int | None) -> Callable:
        g = funcgrad.grad(lambda h: fnp.sum(funcgrad.checkpoint_sequential(layers, k, h)))
        return lambda: g(fx)
    plain_grad = funcgrad.grad(plain)
    return {"no checkpoint": lambda: plain_grad(fx), f"{segments} segments": segmented(segments),
            "sqrt(n) segments": segmented(None)}


def _autograd(autograd: Any, x: np.ndarray, ws: list, bs: list, segments: int) -> dict:
    import autograd.numpy as anp

    def run(h, pairs):
        for w, b in pairs:
            h = anp.tanh(h * w + b)
        return h
    pairs = list(zip(ws, bs))
    size = math.ceil(len(pairs) / segments)
    chunks = [pairs[i:i + size] for i in range(0, len(pairs), size)]

    def checkpointed(h):
        for chunk in chunks:
            h = autograd.checkpoint(lambda h, chunk=chunk: run(h, chunk))(h)
        return anp.sum(h)
    plain, ckpt = autograd.grad(lambda h: anp.sum(run(h, pairs))), autograd.grad(checkpointed)
    return {"no checkpoint": lambda: plain(x), f"{segments} segments": lambda: ckpt(x)}


def _torch(torch: Any, x: np.ndarray, ws: list, bs: list, segments: int) -> dict:
    from torch.utils.checkpoint import checkpoint_sequential
    tx = torch.from_numpy(x)
    layers = [(lambda w, b: lambda h: torch.tanh(h * w + b))(torch.from_numpy(w),
                                                             torch.from_numpy(b))
              for w, b in zip(ws, bs)]

    def grad(through: Callable) -> Callable:
        def run():
            xt = tx.detach().requires_grad_(True)
            through(xt).sum().backward()
            return xt.grad
        return run

    def plain(h):
        for f in layers:
            h = f(h)
        return h
    return {"no checkpoint": grad(plain),
            f"{segments} segments": grad(lambda h: checkpoint_sequential(
                layers, segments, h, use_reentrant=False))}


def _jax_jit_bytes(jax: Any, x: np.ndarray, ws: list, bs: list, segments: int) -> dict:
    """XLA's planned temporaries + output of the jitted gradient, with and without
    jax.checkpoint around each segment."""
    import jax.numpy as jnp
    args = (jnp.asarray(x), [jnp.asarray(w) for w in ws], [jnp.asarray(b) for b in bs])
    size = math.ceil(len(ws) / segments)

    def run(h, ws, bs):
        for w, b in zip(ws, bs):
            h = jnp.tanh(h * w + b)
        return h

    def checkpointed(h, ws, bs):
        for i in range(0, len(ws), size):
            h = jax.checkpoint(run)(h, ws[i:i + size], bs[i:i + size])
        return jnp.sum(h)
    out = {}
    for name, f in (("no checkpoint", lambda h, ws, bs: jnp.sum(run(h, ws, bs))),
                    (f"{segments} segments", checkpointed)):
        stats = jax.jit(jax.grad(f)).lower(*args).compile().memory_analysis()
        out[name] = stats.temp_size_in_bytes + stats.output_size_in_bytes
    return out


def _by_depth(n: int, depths: tuple, torch: Any) -> str:
    """The plot-ready table: layers vs peak memory (MiB), with and without checkpointing."""
    def mib(nbytes: float) -> str:
        return f"{nbytes / 2**20:.2f}"
    rows = []
    for depth in depths:
        x, ws, bs = chain.make(n, depth)
        k = sqrt_segments(depth)
        fg = _funcgrad(x, ws, bs, SEGMENTS)
        peak, bound = traced_peak(fg["sqrt(n) segments"]), bound_layers(depth, k) * n * 8
        row = {"layers": str(depth), "no checkpoint": mib(traced_peak(fg["no checkpoint"])),
               f"{SEGMENTS} segments": mib(traced_peak(fg[f"{SEGMENTS} segments"])),
               "k = round(sqrt(layers))": str(k), "k segments": mib(peak),
               "bound k + ceil(layers/k)": mib(bound), "k segments / bound": f"{peak / bound:.2f}",
               "numpy by hand, k segments": mib(traced_peak(
                   lambda: numpy_checkpointed_grad(x, ws, bs, k)))}
        if torch is not None:
            t = _torch(torch, x, ws, bs, SEGMENTS)
            row["torch, no checkpoint"] = mib(torch_cpu_peak(t["no checkpoint"]))
            row[f"torch, {SEGMENTS} segments"] = mib(torch_cpu_peak(t[f"{SEGMENTS} segments"]))
        rows.append(row)
    lines = ["| " + " | ".join(rows[0]) + " |", "|" + "---|" * len(rows[0])]
    return "\n".join(lines + ["| " + " | ".join(row.values()) + " |" for row in rows])


def run(cfg: Config) -> Report:
    n, depth, segments, depths = QUICK if cfg.quick else (N, DEPTH, SEGMENTS, DEPTHS)
    x, ws, bs = chain.make(n, depth)
    expected = chain.numpy_grad(x, ws, bs)
    layer = n * 8
    case = f"peak memory, chain x{depth}, n={n:.0e}"
    report = Report()

    def add(impl: str, peaks: dict, how: str, fns: dict | None = None) -> None:
        """Rows for one library; checkpointed gradients are checked against numpy's."""
        for key, peak in peaks.items():
            if fns is not None:
                np.testing.assert_allclose(np.asarray(fns[key]()), expected, rtol=1e-10,
                                           err_msg=f"{impl} {key} gradient")
            ratio = None if key == "no checkpoint" else peak / peaks["no checkpoint"]
            report.rows.append(Row(5, case, f"{impl}, {key}", peak, "B", ratio,
                                   "" if ratio is None else "no ckpt",
                                   note=f"{peak / layer:.1f} layers; {how}"))

    fg = _funcgrad(x, ws, bs, segments)
    fg_peaks = {key: traced_peak(f) for key, f in fg.items()}
    add("funcgrad", fg_peaks, "tracemalloc", fg)
    np_fns = {"no checkpoint": lambda: chain.numpy_grad(x, ws, bs),
              f"{segments} segments": lambda: numpy_checkpointed_grad(x, ws, bs, segments)}
    add("numpy", {k: traced_peak(f) for k, f in np_fns.items()}, "tracemalloc, hand-written",
        np_fns)
    autograd, torch, jax = peer("autograd"), peer("torch"), peer("jax")
    if autograd is None:
        report.rows.append(skipped_row(5, case, "autograd", missing_note("autograd")))
    else:
        fns = _autograd(autograd, x, ws, bs, segments)
        add("autograd", {k: traced_peak(f) for k, f in fns.items()}, "tracemalloc", fns)
    if torch is None:
        report.rows.append(skipped_row(5, case, "torch", missing_note("torch")))
    else:
        fns = _torch(torch, x, ws, bs, segments)
        add("torch", {k: torch_cpu_peak(f) for k, f in fns.items()},
            "profiler allocation events (use_reentrant=False)", fns)
    if jax is None:
        report.rows.append(skipped_row(5, case, "jax", missing_note("jax")))
    else:
        add("jax jit", _jax_jit_bytes(jax, x, ws, bs, segments),
            "XLA memory_analysis (temp + output): XLA fuses this elementwise chain's forward "
            "and backward into one loop, storing no activations")
        report.rows.append(skipped_row(5, case, "jax eager",
                                       "not measurable: the CPU device has no memory_stats()"))

    k = sqrt_segments(depth)
    bound = bound_layers(depth, k)
    measured = fg_peaks["sqrt(n) segments"] / layer
    report.targets.append(ratio_target(
        f"W5: funcgrad checkpointed peak <= 1.2x sqrt bound ({k} + {math.ceil(depth / k)} = "
        f"{bound} layers; measured {measured:.1f})", measured / bound, 1.2))
    report.sections.append(f"### Workload 5 by depth: peak MiB, n={n:.0e} (plot-ready)\n\n"
                           + _by_depth(n, depths, torch))
    return report
