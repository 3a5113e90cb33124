"""The direct path of a compiled call under autograd (`_compiled_call.Recorded`): once a
signature has run forward and backward, later calls run the raw programs; each check that
sends a call back to the general path (shapes, dtypes, cotangents, debug_nans, non-tensor
inputs) and the engine's checks (in-place changes, freed graphs, double backward, hooks)
must hold on the direct path too, with eager's values."""
import numpy as np
import pytest

import funcgrad
import funcgrad.torch as torch
import funcgrad.torch.nn as nn
import funcgrad.torch.nn.functional as F


def setup():
    torch.manual_seed(0)
    model = nn.Sequential(nn.Linear(4, 8), nn.ReLU(), nn.Linear(8, 3))
    x, y = torch.randn(6, 4), torch.tensor([0, 1, 2, 1, 0, 2])
    return model, x, y


def grads(model, loss):
    model.zero_grad()
    loss.backward()
    return [p.grad.clone() for p in model.parameters()]


def compiled_node(t):
    """The CompiledFunctionBackward node of ``t``'s graph."""
    node = t.grad_fn
    while type(node).__name__ != "CompiledFunctionBackward":
        node = node.next_functions[0][0]
    return node


def warm(fn, *args):
    """Two calls with a backward each: the second leaves the signature's direct path."""
    for _ in range(2):
        fn(*args).sum().backward()


@pytest.mark.parametrize("kind", ["loss", "model"])
def test_direct_calls_are_eager_bit_for_bit(kind):
    model, x, y = setup()
    if kind == "loss":
        run = torch.compile(lambda x, y: F.cross_entropy(model(x), y))
    else:
        compiled = torch.compile(model)
        run = lambda x, y: F.cross_entropy(compiled(x), y)  # noqa: E731
    eager = grads(model, F.cross_entropy(model(x), y))
    for _ in range(4):  # general, then direct calls
        loss = run(x, y)
        assert torch.equal(loss, F.cross_entropy(model(x), y))
        node = compiled_node(loss)
        got = grads(model, loss)
        for e, g in zip(eager, got):
            assert e.dtype == g.dtype and torch.equal(e, g)
    assert node._recorded is not None  # (the last calls took the direct path)


def test_changed_shape_dtype_or_argument_kind_takes_the_general_path():
    w = torch.randn(3, requires_grad=True)
    f = torch.compile(lambda x, w: (x * w).sin())
    x = torch.randn(3)
    warm(f, x, w)
    for other in (torch.randn(2, 3), x.double(), x.float()):
        out = f(other, w)
        w.grad = None
        out.sum().backward()
        assert torch.allclose(out, (other * w).sin())
        expect = other * (other * w).cos()
        assert torch.allclose(w.grad, expect.sum(0) if other.ndim == 2 else expect)
    assert torch.equal(f(3.0, w), (3.0 * w).sin())  # a Python number where a tensor was


def test_cotangent_of_another_dtype_and_debug_nans():
    w = torch.randn(4, dtype=torch.float64, requires_grad=True)
    f = torch.compile(lambda w: (w * w).sum())
    warm(f, w)
    w.grad = None
    f(w).backward(torch.tensor(2.0, dtype=torch.float32))  # not the program's cotangent
    assert torch.allclose(w.grad, 4 * w.detach())
    w.grad = None
    f(w).backward()
    assert torch.equal(w.grad, 2 * w.detach())
    h = torch.compile(lambda w: torch.log(w - 10.0).sum())
    warm(h, w)
    with funcgrad.debug_nans(True):
        with pytest.raises(FloatingPointError):
            h(w)


def test_engine_checks_on_the_direct_path():
    model, x, y = setup()
    run = torch.compile(lambda x, y: F.cross_entropy(model(x), y))
    warm(run, x, y)
    loss = run(x, y)
    assert loss.grad_fn._recorded is not None
    loss.backward(retain_graph=True)
    loss.backward()
    with pytest.raises(RuntimeError, match="backward through the graph a second time"):
        loss.backward()
    loss = run(x, y)
    with torch.no_grad():
        model[0].weight.mul_(1.0)
    with pytest.raises(RuntimeError, match="modified by an inplace operation"):
        loss.backward()
    xg = x.clone().requires_grad_()
    warm(run, xg, y)
    (g,) = torch.autograd.grad(run(xg, y), xg, create_graph=True)
    assert g.requires_grad
    with pytest.raises(RuntimeError, match="does not currently support double backward"):
        g.sum().backward()


def test_leaf_hooks_and_saved_tensors_on_the_direct_path():
    model, x, y = setup()
    run = torch.compile(lambda x, y: F.cross_entropy(model(x), y))
    warm(run, x, y)
    seen = []
    weight = model[0].weight
    handle = weight.register_hook(lambda g: seen.append(g.clone()) or g * 0)
    post = weight.register_post_accumulate_grad_hook(lambda p: seen.append("post"))
    weight.grad = None
    loss = run(x, y)
    loss.backward()
    assert len(seen) == 2 and seen[1] == "post"
    assert torch.equal(weight.grad, torch.zeros_like(weight))
    handle.remove(), post.remove()
    loss = run(x, y)
    refs = loss.grad_fn.saved_refs()
    assert len(refs) == 6 and refs[0].tensor is model[0].weight
    assert all(isinstance(a, funcgrad.Array) for a in loss.grad_fn.saved_arrays())
    assert np.isfinite(loss.item())
