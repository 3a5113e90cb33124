"""PyTorch's "Optimizing Model Parameters" tutorial, run by funcgrad.torch.

The program is the tutorial's, written against the PyTorch API; the one line that differs
is the import (``import torch`` runs it on PyTorch itself: the test suite does, and checks
that both print the same losses and accuracies). The data is a small synthetic
FashionMNIST look-alike instead of the download, and the network starts from weights
drawn with numpy, so that both libraries start from the same point. After the tutorial's
SGD loop, the same model is trained with the other optimizers the tutorial mentions
(Adam, RMSprop, ...) under learning-rate schedules, and an optimizer checkpoint is saved
and restored mid-training.

    python examples/torch_optimization_tutorial.py
"""
import io

import numpy as np

import funcgrad.torch as torch

nn = torch.nn
Dataset = torch.utils.data.Dataset
DataLoader = torch.utils.data.DataLoader
lr_scheduler = torch.optim.lr_scheduler


class SyntheticFashion(Dataset):
    """(image [1, 28, 28] in [0, 1], label) pairs: a blurry template per class plus noise."""

    def __init__(self, n, seed):
        templates = np.random.default_rng(0).uniform(0, 1, (10, 28, 28)).astype(np.float32)
        rng = np.random.default_rng(seed)
        self.labels = rng.integers(0, 10, n)
        noise = rng.normal(0, 0.3, (n, 28, 28)).astype(np.float32)
        self.images = np.clip(templates[self.labels] + noise, 0, 1)[:, None]

    def __len__(self):
        return len(self.labels)

    def __getitem__(self, idx):
        return torch.from_numpy(self.images[idx]), int(self.labels[idx])


class NeuralNetwork(nn.Module):
    def __init__(self):
        super().__init__()
        self.flatten = nn.Flatten()
        self.linear_relu_stack = nn.Sequential(
            nn.Linear(28 * 28, 512),
            nn.ReLU(),
            nn.Linear(512, 512),
            nn.ReLU(),
            nn.Linear(512, 10),
        )

    def forward(self, x):
        x = self.flatten(x)
        logits = self.linear_relu_stack(x)
        return logits


def same_start(model, seed=0):
    """Uniform(-1/sqrt(fan_in), 1/sqrt(fan_in)) weights from numpy (nn.Linear's range),
    identical under any library."""
    rng = np.random.default_rng(seed)
    with torch.no_grad():
        for p in model.parameters():
            fan_in = p.shape[-1] if p.dim() > 1 else p.shape[0]
            bound = 1 / np.sqrt(fan_in)
            p.copy_(torch.tensor(rng.uniform(-bound, bound, tuple(p.shape)),
                                 dtype=torch.float32))
    return model


def train_loop(dataloader, model, loss_fn, optimizer, scheduler=None, report_every=2):
    size = len(dataloader.dataset)
    model.train()
    for batch, (X, y) in enumerate(dataloader):
        pred = model(X)
        loss = loss_fn(pred, y)
        loss.backward()
        optimizer.step()
        optimizer.zero_grad()
        if scheduler is not None:
            scheduler.step()
        if batch % report_every == 0:
            loss, current = loss.item(), batch * dataloader.batch_size + len(X)
            print(f"loss: {loss:>7f}  [{current:>5d}/{size:>5d}]")


def test_loop(dataloader, model, loss_fn):
    model.eval()
    size = len(dataloader.dataset)
    num_batches = len(dataloader)
    test_loss, correct = 0, 0
    with torch.no_grad():
        for X, y in dataloader:
            pred = model(X)
            test_loss += loss_fn(pred, y).item()
            correct += (pred.argmax(1) == y).type(torch.float).sum().item()
    test_loss /= num_batches
    correct /= size
    print(f"Test Error: \n Accuracy: {(100 * correct):>0.1f}%, Avg loss: {test_loss:>8f} \n")
    return correct


def main():
    training_data = SyntheticFashion(128, seed=1)
    test_data = SyntheticFashion(64, seed=2)
    learning_rate = 1e-1
    batch_size = 32
    epochs = 3
    train_dataloader = DataLoader(training_data, batch_size=batch_size)
    test_dataloader = DataLoader(test_data, batch_size=batch_size)

    # The tutorial's loop: SGD on the cross-entropy loss
    model = same_start(NeuralNetwork())
    loss_fn = nn.CrossEntropyLoss()
    optimizer = torch.optim.SGD(model.parameters(), lr=learning_rate)
    for t in range(epochs):
        print(f"Epoch {t + 1}\n-------------------------------")
        train_loop(train_dataloader, model, loss_fn, optimizer)
        test_loop(test_dataloader, model, loss_fn)
    print("Done!")

    # Other optimizers, each with a learning-rate schedule stepped after every batch
    steps = len(train_dataloader)
    setups = {
        "SGD momentum + StepLR": (lambda p: torch.optim.SGD(p, lr=0.05, momentum=0.9),
                                  lambda o: lr_scheduler.StepLR(o, step_size=2, gamma=0.5)),
        "Adam + OneCycleLR": (lambda p: torch.optim.Adam(p, lr=1e-3),
                              lambda o: lr_scheduler.OneCycleLR(o, max_lr=3e-3,
                                                                total_steps=steps)),
        "AdamW + CosineAnnealingLR": (lambda p: torch.optim.AdamW(p, lr=1e-3),
                                      lambda o: lr_scheduler.CosineAnnealingLR(o, T_max=steps)),
        "RMSprop + ExponentialLR": (lambda p: torch.optim.RMSprop(p, lr=1e-3),
                                    lambda o: lr_scheduler.ExponentialLR(o, gamma=0.9)),
        "Adagrad + LinearLR": (lambda p: torch.optim.Adagrad(p, lr=1e-2),
                               lambda o: lr_scheduler.LinearLR(o, start_factor=0.5,
                                                               total_iters=2)),
    }
    for name, (make_optimizer, make_scheduler) in setups.items():
        print(f"{name}\n-------------------------------")
        model = same_start(NeuralNetwork())
        optimizer = make_optimizer(model.parameters())
        scheduler = make_scheduler(optimizer)
        train_loop(train_dataloader, model, loss_fn, optimizer, scheduler)
        print(f"last lr: {scheduler.get_last_lr()[0]:.6f}")
        test_loop(test_dataloader, model, loss_fn)

    # Checkpoint the optimizer half-way and resume: the same result as without the break
    def run(resume_after):
        model = same_start(NeuralNetwork())
        optimizer = torch.optim.Adam(model.parameters(), lr=1e-3)
        batches = list(train_dataloader)
        for i, (X, y) in enumerate(batches):
            if i == resume_after:
                buffer = io.BytesIO()
                torch.save({"model": model.state_dict(), "optim": optimizer.state_dict()},
                           buffer)
                buffer.seek(0)
                checkpoint = torch.load(buffer)
                model = NeuralNetwork()
                model.load_state_dict(checkpoint["model"])
                optimizer = torch.optim.Adam(model.parameters(), lr=1e-3)
                optimizer.load_state_dict(checkpoint["optim"])
            loss_fn(model(X), y).backward()
            optimizer.step()
            optimizer.zero_grad()
        return model
    straight, resumed = run(None), run(2)
    same = all(torch.equal(a, b) for a, b in zip(straight.parameters(), resumed.parameters()))
    print(f"Resumed from a checkpoint: identical parameters: {same}")


if __name__ == "__main__":
    main()
