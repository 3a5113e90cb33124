"""A tiny causal transformer learns to continue counting sequences, in a few seconds.

Each training sequence counts upward by a random step modulo the vocabulary (3 7 11 15
2 6 ...): predicting the next token needs the previous two, so the model must attend.
PyTorch code throughout: Embedding, TransformerEncoder(Layer) with norm_first and
batch_first, a causal mask from Transformer.generate_square_subsequent_mask, Linear,
cross_entropy, Adam and gradient clipping. Run it with ``python examples/transformer_lm.py``;
the same `train` runs on real PyTorch (pass ``torch`` itself), which is how the test suite
checks that both give the same losses from the same initial weights.
"""
from __future__ import annotations

import warnings
from typing import Any

import numpy as np

VOCAB, LENGTH = 17, 12


def make_data(n: int, seed: int = 0) -> np.ndarray:
    """``n`` counting sequences (start and step random, modulo VOCAB), (n, LENGTH + 1)."""
    rng = np.random.RandomState(seed)
    start = rng.randint(VOCAB, size=(n, 1))
    step = rng.randint(1, 5, size=(n, 1))
    return ((start + step * np.arange(LENGTH + 1)) % VOCAB).astype(np.int64)


def build(torch: Any, d_model: int = 32) -> Any:
    nn = torch.nn

    class TinyLM(nn.Module):
        def __init__(self) -> None:
            super().__init__()
            self.tokens = nn.Embedding(VOCAB, d_model)
            self.positions = nn.Embedding(LENGTH, d_model)
            layer = nn.TransformerEncoderLayer(d_model, nhead=4, dim_feedforward=64,
                                               dropout=0.0, batch_first=True, norm_first=True)
            with warnings.catch_warnings():  # PyTorch's note on nested tensors (norm_first)
                warnings.simplefilter("ignore")
                self.encoder = nn.TransformerEncoder(layer, num_layers=2,
                                                     norm=nn.LayerNorm(d_model))
            self.head = nn.Linear(d_model, VOCAB)

        def forward(self, ids: Any) -> Any:
            n = ids.shape[1]
            pos = torch.arange(n).unsqueeze(0)
            h = self.tokens(ids) + self.positions(pos)
            mask = nn.Transformer.generate_square_subsequent_mask(n)
            return self.head(self.encoder(h, mask=mask, is_causal=True))
    return TinyLM()


def train(torch: Any, steps: int = 40, batch: int = 32, state: dict | None = None) -> dict:
    """Train from ``state`` (numpy arrays by state_dict key) or a fresh initialisation:
    {'losses', 'accuracy' (next-token, held-out), 'initial_state', 'model'}."""
    F = torch.nn.functional
    model = build(torch)
    if state is not None:
        model.load_state_dict({k: torch.tensor(v) for k, v in state.items()})
    initial = {k: v.detach().numpy().copy() for k, v in model.state_dict().items()}
    data, held_out = make_data(steps * batch, seed=0), make_data(128, seed=1)
    opt = torch.optim.Adam(model.parameters(), lr=3e-3)
    losses = []
    for step in range(steps):
        seq = torch.tensor(data[step * batch:(step + 1) * batch])
        logits = model(seq[:, :-1])
        loss = F.cross_entropy(logits.reshape(-1, VOCAB), seq[:, 1:].reshape(-1))
        opt.zero_grad()
        loss.backward()
        torch.nn.utils.clip_grad_norm_(model.parameters(), 1.0)
        opt.step()
        losses.append(loss.item())
    model.eval()
    with torch.no_grad():
        seq = torch.tensor(held_out)
        predicted = model(seq[:, :-1]).argmax(-1).numpy()
    # the first two tokens do not determine the step yet: score positions 2 onwards
    accuracy = float((predicted[:, 2:] == held_out[:, 3:]).mean())
    return {"losses": losses, "accuracy": accuracy, "initial_state": initial,
            "model": model}


if __name__ == "__main__":
    import funcgrad.torch as torch
    torch.manual_seed(0)
    result = train(torch, steps=80)
    for step in range(0, len(result["losses"]), 10):
        print(f"step {step:3d}  loss {result['losses'][step]:.4f}")
    print(f"held-out next-token accuracy: {result['accuracy']:.3f}")
