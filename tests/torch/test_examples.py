"""The examples/ training runs: each learns its task under funcgrad.torch and, where
PyTorch is installed, gives PyTorch's losses step by step from the same initial weights."""
import importlib.util
from pathlib import Path

import numpy as np
import pytest

import funcgrad.torch

EXAMPLES = Path(__file__).resolve().parents[2] / "examples"


def load(name):
    spec = importlib.util.spec_from_file_location(f"example_{name}", EXAMPLES / f"{name}.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def real_torch():
    try:
        import torch
    except ImportError:
        return None
    return torch if hasattr(torch, "tensor") else None  # not this folder as a namespace


@pytest.mark.parametrize("name,steps,accuracy", [("cnn_classifier", 30, 0.8),
                                                 ("transformer_lm", 30, 0.5)])
def test_example_learns_and_matches_pytorch(name, steps, accuracy):
    example = load(name)
    funcgrad.torch.manual_seed(0)
    ours = example.train(funcgrad.torch, steps=steps)
    losses = ours["losses"]
    assert np.mean(losses[-5:]) < 0.7 * np.mean(losses[:3])
    assert ours["accuracy"] >= accuracy
    torch = real_torch()
    if torch is None:
        pytest.skip("PyTorch is not installed: the losses were not compared")
    threads = torch.get_num_threads()
    torch.set_num_threads(1)  # small ops: one thread, no spinning on a shared machine
    try:
        theirs = example.train(torch, steps=steps, state=ours["initial_state"])
    finally:
        torch.set_num_threads(threads)
    np.testing.assert_allclose(losses, theirs["losses"], rtol=2e-3, atol=2e-4)
    assert abs(ours["accuracy"] - theirs["accuracy"]) <= 0.02
