"""An LSTM part-of-speech tagger, after PyTorch's "Sequence Models and LSTM Networks"
tutorial, trained on a toy grammar in a few seconds.

Sentences come from two templates ("the dog ate the apple": DET NN V DET NN, and
"everybody read that book": NN V DET NN) over a small vocabulary in which "book" and
"saw" are both nouns and verbs, so a word's tag depends on where it stands: the tagger
has to use its context. PyTorch code throughout: Embedding, a bidirectional LSTM over a
PackedSequence (pack_padded_sequence of a variable-length batch, enforce_sorted=False),
Linear, log_softmax and nll_loss on the packed steps, Adam. Run it with
``python examples/lstm_sequence_tagger.py``; the same `train` runs on real PyTorch (pass
``torch`` itself), which is how the test suite checks that both give the same losses from
the same initial weights.
"""
from __future__ import annotations

from typing import Any

import numpy as np

TAGS = ["DET", "NN", "V"]
WORDS = {"DET": ["the", "a", "that"], "NN": ["dog", "apple", "book", "saw", "man"],
         "V": ["ate", "read", "saw", "book", "took"]}
SUBJECTS = ["everybody", "he", "she"]
VOCAB = sorted({w for words in WORDS.values() for w in words} | set(SUBJECTS))
INDEX = {w: i for i, w in enumerate(VOCAB)}


def make_data(n: int, seed: int = 0) -> list:
    """``n`` (word ids, tag ids) sentences drawn from the two templates."""
    rng = np.random.RandomState(seed)
    pick = (lambda options: options[rng.randint(len(options))])
    sentences = []
    for _ in range(n):
        if rng.rand() < 0.5:
            tags = ["DET", "NN", "V", "DET", "NN"]
            words = [pick(WORDS[t]) for t in tags]
        else:
            tags = ["NN", "V", "DET", "NN"]
            words = [pick(SUBJECTS)] + [pick(WORDS[t]) for t in tags[1:]]
        sentences.append((np.array([INDEX[w] for w in words]),
                          np.array([TAGS.index(t) for t in tags])))
    return sentences


def build(torch: Any, embedding_dim: int = 8, hidden_dim: int = 8) -> Any:
    nn = torch.nn

    class LSTMTagger(nn.Module):
        def __init__(self) -> None:
            super().__init__()
            self.word_embeddings = nn.Embedding(len(VOCAB), embedding_dim)
            self.lstm = nn.LSTM(embedding_dim, hidden_dim, batch_first=True,
                                bidirectional=True)
            self.hidden2tag = nn.Linear(2 * hidden_dim, len(TAGS))

        def forward(self, words: Any, lengths: list) -> Any:
            """Tag scores of each packed step: (sum(lengths), tags)."""
            packed = nn.utils.rnn.pack_padded_sequence(self.word_embeddings(words), lengths,
                                                       batch_first=True, enforce_sorted=False)
            out, _ = self.lstm(packed)
            return torch.log_softmax(self.hidden2tag(out.data), dim=1), out

    return LSTMTagger()


def batch_of(torch: Any, sentences: list) -> tuple:
    """(padded word ids (B, T), lengths, tags packed as the model packs its steps)."""
    R = torch.nn.utils.rnn
    words = R.pad_sequence([torch.tensor(w) for w, _ in sentences], batch_first=True)
    tags = R.pad_sequence([torch.tensor(t) for _, t in sentences], batch_first=True)
    lengths = [len(w) for w, _ in sentences]
    packed_tags = R.pack_padded_sequence(tags, lengths, batch_first=True,
                                         enforce_sorted=False)
    return words, lengths, packed_tags.data


def train(torch: Any, steps: int = 40, batch: int = 8, state: dict | None = None) -> dict:
    """Train from ``state`` (numpy arrays by state_dict key) or a fresh initialisation:
    {'losses', 'accuracy' (held-out, per word), 'initial_state', 'model'}."""
    F = torch.nn.functional
    model = build(torch)
    if state is not None:
        model.load_state_dict({k: torch.tensor(v) for k, v in state.items()})
    initial = {k: v.detach().numpy().copy() for k, v in model.state_dict().items()}
    data, held_out = make_data(steps * batch, seed=0), make_data(64, seed=1)
    opt = torch.optim.Adam(model.parameters(), lr=0.05)
    losses = []
    for step in range(steps):
        words, lengths, tags = batch_of(torch, data[step * batch:(step + 1) * batch])
        scores, _ = model(words, lengths)
        loss = F.nll_loss(scores, tags)
        opt.zero_grad()
        loss.backward()
        opt.step()
        losses.append(loss.item())
    with torch.no_grad():
        words, lengths, tags = batch_of(torch, held_out)
        scores, _ = model(words, lengths)
        accuracy = float((scores.argmax(1) == tags).float().mean().item())
    return {"losses": losses, "accuracy": accuracy, "initial_state": initial, "model": model}


if __name__ == "__main__":
    import funcgrad.torch as torch
    torch.manual_seed(0)
    result = train(torch)
    for step in range(0, len(result["losses"]), 10):
        print(f"step {step:3d}  loss {result['losses'][step]:.4f}")
    print(f"held-out tagging accuracy: {result['accuracy']:.3f}")
