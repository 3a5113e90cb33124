"""Mixed-precision training, the seed's cure for "CUDA out of memory" (its troubleshooting
table: look at ``torch.cuda.memory_summary()``, free cached blocks with
``torch.cuda.empty_cache()``, train with mixed precision - ``torch.cuda.amp`` /
``torch.autocast`` with a ``GradScaler`` - and evaluate under ``torch.no_grad()``).

The seed names the tools and shows no code; this is the standard PyTorch loop they make,
run on funcgrad.torch: a small classifier trained in float32 and again under autocast
(float16 with a GradScaler on a GPU; bfloat16 on the CPU, where the scaler is harmless and
kept so that the loop is the same). The parameters, their gradients and the optimizer
stay float32; only the matrix products run in the low dtype. It reports the final
losses, the dtypes autocast chose, the scaler's scale and, on a GPU, cupy's pool
statistics through ``torch.cuda.max_memory_allocated``.

Run it: ``python examples/mixed_precision_training.py`` (tests/torch/test_torch_amp.py
runs it on the CPU and, under the ``gpu`` marker, on a GPU).
"""
from __future__ import annotations

import numpy as np

import funcgrad.torch as torch
import funcgrad.torch.nn.functional as F
from funcgrad.torch import nn


def make_data(n: int = 256, features: int = 16, classes: int = 4, seed: int = 0) -> tuple:
    """Gaussian blobs: one centre per class."""
    rng = np.random.default_rng(seed)
    centres = rng.standard_normal((classes, features)).astype(np.float32) * 0.5
    labels = rng.integers(0, classes, n)
    x = centres[labels] + rng.standard_normal((n, features)).astype(np.float32)
    return torch.tensor(x), torch.tensor(labels)


def make_model(features: int = 16, classes: int = 4) -> nn.Module:
    torch.manual_seed(0)
    return nn.Sequential(nn.Linear(features, 64), nn.ReLU(), nn.Linear(64, 64), nn.ReLU(),
                         nn.Linear(64, classes))


def train(device: str, use_amp: bool, epochs: int = 30) -> dict:
    """Full-batch training; returns the final loss, accuracy and what autocast did."""
    x, y = make_data()
    x, y = x.to(device), y.to(device)
    model = make_model().to(device)
    optimizer = torch.optim.SGD(model.parameters(), lr=0.1, momentum=0.9)
    low = torch.float16 if device == "cuda" else torch.bfloat16
    scaler = torch.amp.GradScaler(device, enabled=use_amp)
    if device == "cuda":
        torch.cuda.reset_peak_memory_stats()
    dtypes = set()
    for _ in range(epochs):
        optimizer.zero_grad()
        with torch.autocast(device_type=device, dtype=low, enabled=use_amp):
            logits = model(x)                   # Linear layers: the low dtype
            loss = F.cross_entropy(logits, y)   # losses: float32
        dtypes.add((str(logits.dtype), str(loss.dtype)))
        scaler.scale(loss).backward()           # the gradients come back in float32
        scaler.unscale_(optimizer)              # real gradients, before clipping
        nn.utils.clip_grad_norm_(model.parameters(), 5.0)
        scaler.step(optimizer)                  # skipped if a gradient overflowed
        scaler.update()
    with torch.no_grad():                       # evaluation keeps no graph
        logits = model(x)
        final = float(F.cross_entropy(logits, y))
        accuracy = float((logits.argmax(1) == y).float().mean())
    report = {"loss": final, "accuracy": accuracy, "dtypes": sorted(dtypes),
              "grad_dtypes": sorted({str(p.grad.dtype) for p in model.parameters()}),
              "scale": scaler.get_scale()}
    if device == "cuda":
        report["peak_bytes"] = torch.cuda.max_memory_allocated()
        torch.cuda.empty_cache()                # give cached blocks back to the driver
        report["reserved_after_empty_cache"] = torch.cuda.memory_reserved()
    return report


def main(device: str | None = None) -> dict:
    device = device or ("cuda" if torch.cuda.is_available() else "cpu")
    results = {"float32": train(device, use_amp=False), "mixed": train(device, use_amp=True)}
    for name, r in results.items():
        print(f"{device} {name:8s} loss {r['loss']:.4f}  accuracy {r['accuracy']:.3f}  "
              f"(logits, loss) dtypes {r['dtypes']}  grads {r['grad_dtypes']}  "
              f"scale {r['scale']:g}")
    if device == "cuda":
        print(torch.cuda.memory_summary())
    return results


if __name__ == "__main__":
    main()
