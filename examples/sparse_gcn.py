"""A graph convolutional network on a sparse adjacency matrix, after Kipf and Welling's
``pygcn``: node classification on a synthetic two-community graph, in a few seconds.

PyTorch code throughout: the normalised adjacency D^-1/2 (A + I) D^-1/2 is a
``torch.sparse_coo_tensor`` (never densified), each layer is ``torch.spmm(adj, x @ W)``,
and the node features are one-hot word ids looked up by an ``nn.Embedding(sparse=True)``
whose sparse gradient SparseAdam updates, while Adam updates the dense weights. Run it
with ``python examples/sparse_gcn.py``; the same `train` runs on real PyTorch (pass
``torch`` itself), which is how the test suite checks both give the same losses.
"""
from __future__ import annotations

from typing import Any

import numpy as np


def make_graph(nodes: int = 60, seed: int = 0) -> tuple:
    """(edges (2, E) both directions, labels, feature ids): two communities, dense
    inside and sparse across; each node's feature is a word id mostly from its
    community's half of the vocabulary."""
    rng = np.random.RandomState(seed)
    labels = np.arange(nodes) % 2
    same = labels[:, None] == labels[None, :]
    p = np.where(same, 0.15, 0.01)
    upper = np.triu(rng.rand(nodes, nodes) < p, 1)
    rows, cols = np.nonzero(upper | upper.T)
    words = np.where(rng.rand(nodes) < 0.7, labels * 5 + rng.randint(0, 5, nodes),
                     rng.randint(0, 10, nodes))
    return np.stack([rows, cols]), labels, words


def normalized_adjacency(torch: Any, edges: np.ndarray, nodes: int) -> Any:
    """D^-1/2 (A + I) D^-1/2 as a sparse COO tensor."""
    loops = np.arange(nodes)
    rows = np.concatenate([edges[0], loops])
    cols = np.concatenate([edges[1], loops])
    degree = np.bincount(rows, minlength=nodes).astype(np.float32)
    values = 1.0 / np.sqrt(degree[rows] * degree[cols])
    return torch.sparse_coo_tensor(torch.tensor(np.stack([rows, cols])),
                                   torch.tensor(values, dtype=torch.float32),
                                   (nodes, nodes)).coalesce()


def build(torch: Any, vocabulary: int = 10, hidden: int = 8, classes: int = 2) -> Any:
    nn = torch.nn

    class GCN(nn.Module):
        def __init__(self) -> None:
            super().__init__()
            self.features = nn.Embedding(vocabulary, 16, sparse=True)
            self.w1 = nn.Linear(16, hidden, bias=False)
            self.w2 = nn.Linear(hidden, classes, bias=False)

        def forward(self, adj: Any, words: Any) -> Any:
            x = self.features(words)
            x = torch.relu(torch.spmm(adj, self.w1(x)))
            return torch.log_softmax(torch.spmm(adj, self.w2(x)), dim=1)

    return GCN()


def train(torch: Any, epochs: int = 30, state: dict | None = None) -> dict:
    """Train from ``state`` (numpy arrays by state_dict key) or a fresh initialisation:
    {'losses', 'accuracy' (on the nodes held out), 'initial_state'}."""
    edges, labels, words = make_graph()
    nodes = len(labels)
    adj = normalized_adjacency(torch, edges, nodes)
    model = build(torch)
    if state is not None:
        model.load_state_dict({k: torch.tensor(v) for k, v in state.items()})
    initial = {k: v.detach().numpy().copy() for k, v in model.state_dict().items()}
    sparse_opt = torch.optim.SparseAdam(list(model.features.parameters()), lr=0.05)
    dense_opt = torch.optim.Adam(list(model.w1.parameters()) + list(model.w2.parameters()),
                                 lr=0.05)
    train_nodes = torch.tensor(np.arange(0, nodes, 3))
    held_out = torch.tensor(np.setdiff1d(np.arange(nodes), np.arange(0, nodes, 3)))
    target, ids = torch.tensor(labels), torch.tensor(words)
    losses = []
    for _ in range(epochs):
        sparse_opt.zero_grad()
        dense_opt.zero_grad()
        out = model(adj, ids)
        loss = torch.nn.functional.nll_loss(out[train_nodes], target[train_nodes])
        loss.backward()
        sparse_opt.step()
        dense_opt.step()
        losses.append(loss.item())
    with torch.no_grad():
        predicted = model(adj, ids).argmax(1)
        accuracy = float((predicted[held_out] == target[held_out]).float().mean().item())
    return {"losses": losses, "accuracy": accuracy, "initial_state": initial}


if __name__ == "__main__":
    import funcgrad.torch as torch
    torch.manual_seed(0)
    result = train(torch)
    for epoch in range(0, len(result["losses"]), 10):
        print(f"epoch {epoch:3d}  loss {result['losses'][epoch]:.4f}")
    print(f"held-out node accuracy: {result['accuracy']:.3f}")
