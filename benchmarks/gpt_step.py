"""``python -m benchmarks.gpt_step [--steps N] [--rounds R]``: a small GPT's training step
(2 layers, 2 heads, width 32, block 16, batch 8; AdamW, gradient clipping) through
funcgrad.torch eagerly and under ``torch.compile(model)``, beside PyTorch eager: paired
CPU-time ratios (the three alternate in one process, each round timing ``--steps`` steps
of each; the median of the rounds' ratios is reported), numpy's BLAS on one thread as
PyTorch's (the ``bench`` extra's threadpoolctl). Issue 42's target: compiled at most 1.5x
PyTorch eager.
"""
from __future__ import annotations

import argparse
import statistics
import time
from typing import Any

import numpy as np

from .harness import single_threaded_blas

VOCAB, BLOCK, WIDTH, HEADS, LAYERS, BATCH = 64, 16, 32, 2, 2, 8


def build(torch: Any) -> Any:
    nn, F = torch.nn, torch.nn.functional

    class Block(nn.Module):
        def __init__(self) -> None:
            super().__init__()
            self.ln1, self.ln2 = nn.LayerNorm(WIDTH), nn.LayerNorm(WIDTH)
            self.qkv, self.proj = nn.Linear(WIDTH, 3 * WIDTH), nn.Linear(WIDTH, WIDTH)
            self.up, self.down = nn.Linear(WIDTH, 4 * WIDTH), nn.Linear(4 * WIDTH, WIDTH)

        def forward(self, x: Any) -> Any:
            b, t, c = x.shape
            q, k, v = self.qkv(self.ln1(x)).split(WIDTH, dim=2)
            q, k, v = (z.view(b, t, HEADS, c // HEADS).transpose(1, 2) for z in (q, k, v))
            y = F.scaled_dot_product_attention(q, k, v, is_causal=True)
            x = x + self.proj(y.transpose(1, 2).reshape(b, t, c))
            return x + self.down(F.gelu(self.up(self.ln2(x))))

    class GPT(nn.Module):
        def __init__(self) -> None:
            super().__init__()
            self.tok, self.pos = nn.Embedding(VOCAB, WIDTH), nn.Embedding(BLOCK, WIDTH)
            self.blocks = nn.ModuleList([Block() for _ in range(LAYERS)])
            self.ln, self.head = nn.LayerNorm(WIDTH), nn.Linear(WIDTH, VOCAB)

        def forward(self, idx: Any) -> Any:
            x = self.tok(idx) + self.pos(torch.arange(idx.shape[1]))
            for block in self.blocks:
                x = block(x)
            return self.head(self.ln(x))

    return GPT()


def make_step(torch: Any, compiled: bool) -> Any:
    """A training-step function of (inputs, targets) for a fresh model of ``torch``."""
    torch.manual_seed(0)
    model = build(torch)
    run = torch.compile(model) if compiled else model
    opt = torch.optim.AdamW(model.parameters(), lr=1e-3)

    def step(x: Any, y: Any) -> float:
        logits = run(x)
        loss = torch.nn.functional.cross_entropy(logits.view(-1, VOCAB), y.view(-1))
        opt.zero_grad()
        loss.backward()
        torch.nn.utils.clip_grad_norm_(model.parameters(), 1.0)
        opt.step()
        return loss.item()
    return step


def main(argv: list | None = None) -> dict:
    import torch as real

    import funcgrad.torch as ft
    parser = argparse.ArgumentParser()
    parser.add_argument("--steps", type=int, default=10)
    parser.add_argument("--rounds", type=int, default=7)
    args = parser.parse_args(argv)
    data = np.random.RandomState(0).randint(VOCAB, size=(BATCH, BLOCK + 1))
    modes = {"pytorch": (real, False), "facade": (ft, False), "facade_compiled": (ft, True)}
    steps, batches = {}, {}
    for name, (lib, compiled) in modes.items():
        steps[name] = make_step(lib, compiled)
        batches[name] = (lib.tensor(data[:, :-1]), lib.tensor(data[:, 1:]))
        for _ in range(3):  # warm-up (and the compile's traces)
            steps[name](*batches[name])
    times: dict = {name: [] for name in modes}
    with single_threaded_blas():
        real.set_num_threads(1)
        for _ in range(args.rounds):
            for name in modes:
                t0 = time.process_time()
                for _ in range(args.steps):
                    steps[name](*batches[name])
                times[name].append((time.process_time() - t0) / args.steps)
    ratios = {name: statistics.median(t / p for t, p in zip(times[name], times["pytorch"]))
              for name in ("facade", "facade_compiled")}
    for name in modes:
        print(f"{name:16s} {1e3 * statistics.median(times[name]):7.2f} ms per step"
              + (f"   {ratios[name]:.2f}x PyTorch eager" if name in ratios else ""))
    return ratios


if __name__ == "__main__":
    main()
