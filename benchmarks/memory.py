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
while one segment is differentiated, its ceil(n/k) recomputed activations, so it needs at
least (k + ceil(n/k)) activation buffers; the minimum, at k ~ sqrt(n), is ~2 sqrt(n)
(16 buffers for 64 layers, against 64 without checkpointing).

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
    layers = [(lambda w, b: lambda h: torch.tanh(h * w + b))(torch.from_numpy(w), torch.from_numpy(b))
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
    """The plot-ready table: layers vs peak memory, with and without checkpointing."""
    layer = n * 8
    head = ("| layers | no checkpoint (MiB) | 8 segments (MiB) | sqrt(n) segments: k | "
            "sqrt(n) segments (MiB) | bound k + ceil(n/k) (MiB) | measured / bound |")
    if torch is not None:
        head += " torch no ckpt (MiB) | torch 8 segments (MiB) |"
    lines = [head, "|" + "---|" * (head.count("|") - 1)]
    for depth in depths:
        x, ws, bs = chain.make(n, depth)
        peaks = {k: traced_peak(f) for k, f in _funcgrad(x, ws, bs, SEGMENTS).items()}
        k = sqrt_segments(depth)
        bound = bound_layers(depth, k) * layer
        line = (f"| {depth} | {peaks['no checkpoint'] / 2**20:.2f} | "
                f"{peaks[f'{SEGMENTS} segments'] / 2**20:.2f} | {k} | {peaks['sqrt(n) segments'] / 2**20:.2f}"
                f" | {bound / 2**20:.2f} | {peaks['sqrt(n) segments'] / bound:.2f} |")
        if torch is not None:
            t = {key: torch_cpu_peak(f) for key, f in _torch(torch, x, ws, bs, SEGMENTS).items()}
            line += f" {t['no checkpoint'] / 2**20:.2f} | {t[f'{SEGMENTS} segments'] / 2**20:.2f} |"
        lines.append(line)
    return "\n".join(lines)


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
    add("numpy", {"no checkpoint": traced_peak(lambda: chain.numpy_grad(x, ws, bs))},
        "tracemalloc, hand-written")
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
            "XLA memory_analysis: temp + output")
        report.rows.append(skipped_row(5, case, "jax eager",
                                       "not measurable: the CPU device has no memory_stats()"))

    k = sqrt_segments(depth)
    bound = bound_layers(depth, k)
    measured = fg_peaks["sqrt(n) segments"] / layer
    report.targets.append(ratio_target(
        f"W5: funcgrad checkpointed peak <= 1.2x sqrt bound ({k} + {math.ceil(depth / k)} = "
        f"{bound} layers; measured {measured:.1f})", measured / bound, 1.2))
    report.sections.append(f"### Workload 5 by depth (n={n:.0e}; plot-ready)\n\n"
                           + _by_depth(n, depths, torch))
    return report
