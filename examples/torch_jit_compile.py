"""TorchScript-style tracing and torch.compile with funcgrad.torch (the seed's section 6.2):
trace a model once on example inputs, print its IR (``.graph``) and the Python program it
was compiled to (``.code``), then train it through ``torch.compile``: forward and backward
run as compiled programs, and the gradients equal eager mode's.

Only the import differs from the PyTorch program: ``torch`` -> ``funcgrad.torch``.

    python examples/torch_jit_compile.py
"""
import numpy as np

import funcgrad.torch as torch
import funcgrad.torch.nn as nn
import funcgrad.torch.nn.functional as F


class MLP(nn.Module):
    def __init__(self, d_in=8, hidden=16, classes=3):
        super().__init__()
        self.fc1 = nn.Linear(d_in, hidden)
        self.fc2 = nn.Linear(hidden, classes)

    def forward(self, x):
        return self.fc2(torch.tanh(self.fc1(x)))


def main(verbose=True, steps=50):
    torch.manual_seed(0)
    model = MLP()
    x = torch.randn(64, 8)
    y = (x[:, 0] > 0).long() + (x[:, 1] > 0.5).long()

    # 1. tracing: run once on an example, record the operations, print the IR and code
    traced = torch.jit.trace(model, (x,))
    if verbose:
        print("traced graph (IR):")
        print(traced.graph)
        print("\ngenerated code:")
        print(traced.code)
    assert torch.equal(traced(x), model(x))

    # 2. the traced module's gradients are eager mode's (to the last bit of float32: the
    # compiled program keeps weight.T as a view where eager mode copies it, and BLAS may
    # round the weight gradient's product differently for the two layouts)
    F.cross_entropy(traced(x), y).backward()
    compiled_grads = [p.grad.clone() for p in model.parameters()]
    model.zero_grad()
    F.cross_entropy(model(x), y).backward()
    assert all(torch.allclose(a, p.grad, rtol=1e-6, atol=1e-8)
               for a, p in zip(compiled_grads, model.parameters()))
    model.zero_grad()

    # 3. training through torch.compile: the optimizer updates the original parameters
    compiled = torch.compile(model)
    opt = torch.optim.SGD(compiled.parameters(), lr=0.5)
    losses = []
    for _ in range(steps):
        opt.zero_grad()
        loss = F.cross_entropy(compiled(x), y)
        loss.backward()
        opt.step()
        losses.append(loss.item())
    accuracy = (compiled(x).argmax(dim=1) == y).float().mean().item()
    if verbose:
        print(f"\nloss {losses[0]:.3f} -> {losses[-1]:.3f}, train accuracy {accuracy:.2f}")
    return {"losses": np.array(losses), "accuracy": accuracy}


if __name__ == "__main__":
    main()
