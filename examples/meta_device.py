"""The 'meta' device: plan a model before it exists.

A 300-million-parameter transformer is built on the meta device (no parameter memory), its
parameters are counted and its forward and backward are run for their shapes; then a small
model is built the same way, materialised with ``to_empty`` and initialised, and trained for
a few steps. Runs unchanged under ``import torch`` and ``import funcgrad.torch as torch``::

    python examples/meta_device.py
"""
from __future__ import annotations

from typing import Any


def model(torch: Any, width: int, layers: int, vocab: int) -> Any:
    nn = torch.nn
    block = nn.TransformerEncoderLayer(width, 8, 4 * width, dropout=0.0, batch_first=True)
    return nn.Sequential(nn.Embedding(vocab, width), nn.TransformerEncoder(
        block, layers, enable_nested_tensor=False), nn.Linear(width, vocab))


def plan(torch: Any) -> dict:
    """Shapes of a model too large to hold here, from the meta device alone."""
    with torch.device("meta"):
        big = model(torch, width=1024, layers=24, vocab=32000)
    tokens = torch.zeros(2, 16, dtype=torch.long, device="meta")
    logits = big(tokens)
    loss = torch.nn.functional.cross_entropy(logits.flatten(0, 1), tokens.flatten())
    loss.backward()
    head = big[2].weight
    return {"parameters": sum(p.numel() for p in big.parameters()),
            "logits": tuple(logits.shape), "loss": str(loss.device),
            "head grad": (tuple(head.grad.shape), str(head.grad.device))}


def materialise_and_train(torch: Any, steps: int = 5) -> dict:
    """A small model built on meta, moved to the CPU uninitialised, initialised, trained."""
    with torch.device("meta"):
        small = model(torch, width=32, layers=2, vocab=50)
    small.to_empty(device="cpu")
    torch.manual_seed(0)
    for module in small.modules():
        if hasattr(module, "_reset_parameters"):
            module._reset_parameters()  # MultiheadAttention's initialiser
        elif hasattr(module, "reset_parameters"):
            module.reset_parameters()
    opt = torch.optim.Adam(small.parameters(), lr=3e-3)
    tokens = torch.arange(64).reshape(4, 16) % 50
    losses = []
    for _ in range(steps):
        loss = torch.nn.functional.cross_entropy(small(tokens).flatten(0, 1),
                                                 tokens.flatten())
        opt.zero_grad()
        loss.backward()
        opt.step()
        losses.append(float(loss))
    return {"device": str(small[2].weight.device), "losses": losses}


if __name__ == "__main__":
    import funcgrad.torch as torch
    print(plan(torch))
    print(materialise_and_train(torch))
