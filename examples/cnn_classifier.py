"""A small CNN learns to tell bars from crosses in noisy 16x16 images, in a few seconds.

PyTorch code throughout: Conv2d, BatchNorm2d (running statistics, eval mode for the
held-out accuracy), MaxPool2d, Flatten, Linear, cross_entropy and Adam. Run it with ``python examples/cnn_classifier.py``; the
same `train` runs on real PyTorch too (pass ``torch`` itself), which is how the test
suite checks that both libraries give the same losses from the same initial weights.
"""
from __future__ import annotations

from typing import Any

import numpy as np

CLASSES = ("horizontal bar", "vertical bar", "cross")


def make_data(n: int, seed: int = 0) -> tuple:
    """``n`` noisy 1x16x16 images of the three classes, and their labels (numpy)."""
    rng = np.random.RandomState(seed)
    images = rng.normal(0.0, 0.3, (n, 1, 16, 16)).astype(np.float32)
    labels = rng.randint(len(CLASSES), size=n)
    for img, label in zip(images, labels):
        r, c = rng.randint(3, 13, size=2)
        if label in (0, 2):
            img[0, r, 2:14] += 1.5
        if label in (1, 2):
            img[0, 2:14, c] += 1.5
    return images, labels.astype(np.int64)


def build(torch: Any) -> Any:
    nn = torch.nn
    return nn.Sequential(
        nn.Conv2d(1, 8, 3, padding=1), nn.BatchNorm2d(8), nn.ReLU(), nn.MaxPool2d(2),
        nn.Conv2d(8, 16, 3, padding=1), nn.BatchNorm2d(16), nn.ReLU(), nn.MaxPool2d(2),
        nn.Flatten(), nn.Linear(16 * 4 * 4, len(CLASSES)))


def train(torch: Any, steps: int = 40, batch: int = 32, state: dict | None = None) -> dict:
    """Train from ``state`` (numpy arrays by state_dict key) or a fresh initialisation:
    {'losses', 'accuracy' (held-out, eval mode), 'initial_state', 'model'}."""
    F = torch.nn.functional
    model = build(torch)
    if state is not None:
        model.load_state_dict({k: torch.tensor(v) for k, v in state.items()})
    initial = {k: v.detach().numpy().copy() for k, v in model.state_dict().items()}
    x_all, y_all = make_data(steps * batch, seed=0)
    x_test, y_test = make_data(256, seed=1)
    opt = torch.optim.Adam(model.parameters(), lr=0.005)
    losses = []
    model.train()
    for step in range(steps):
        x = torch.tensor(x_all[step * batch:(step + 1) * batch])
        y = torch.tensor(y_all[step * batch:(step + 1) * batch])
        opt.zero_grad()
        loss = F.cross_entropy(model(x), y)
        loss.backward()
        opt.step()
        losses.append(loss.item())
    model.eval()
    with torch.no_grad():
        predicted = model(torch.tensor(x_test)).argmax(1).numpy()
    return {"losses": losses, "accuracy": float((predicted == y_test).mean()),
            "initial_state": initial, "model": model}


if __name__ == "__main__":
    import funcgrad.torch as torch
    torch.manual_seed(0)
    result = train(torch)
    print(result["model"])
    for step in range(0, len(result["losses"]), 5):
        print(f"step {step:3d}  loss {result['losses'][step]:.4f}")
    print(f"held-out accuracy: {result['accuracy']:.3f}")
