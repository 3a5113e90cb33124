"""funcgrad.torch.jit.trace and funcgrad.torch.compile (the seed's section 6.2): the traced
IR and generated code print, calls run compiled programs, and forward values, gradients
and ``.grad`` are eager mode's bit for bit; what a compiled program cannot replay (random
draws, in-place buffer updates, value-dependent control flow) is a graph break under
torch.compile (the call runs eagerly) and an error under torch.jit.trace."""
import runpy
from pathlib import Path

import numpy as np
import pytest

import funcgrad.torch as torch
import funcgrad.torch.nn as nn
import funcgrad.torch.nn.functional as F
from funcgrad.core import ConcretizationTypeError

EXAMPLES = Path(__file__).resolve().parents[2] / "examples"


def model_and_data():
    torch.manual_seed(0)
    model = nn.Sequential(nn.Linear(4, 8), nn.Tanh(), nn.Linear(8, 3))
    return model, torch.randn(6, 4), torch.tensor([0, 1, 2, 1, 0, 2])


def grads_of(model, run, x, y):
    model.zero_grad()
    F.cross_entropy(run(x), y).backward()
    return [p.grad.clone() for p in model.parameters()]


def test_trace_prints_graph_and_code():
    model, x, _ = model_and_data()
    traced = torch.jit.trace(model, (x,))
    graph = str(traced.graph)
    assert graph.startswith("{ lambda a:f32[8,4] b:f32[8] c:f32[3,8] d:f32[3] e:f32[6,4]")
    assert "addmm" in graph and "tanh" in graph
    assert traced.code.startswith("def program(") and "tanh_" in traced.code
    assert "return (" in traced.code
    assert isinstance(traced, nn.Module)


def test_traced_module_is_eager_bit_for_bit():
    model, x, y = model_and_data()
    traced = torch.jit.trace(model, x)
    assert torch.equal(traced(x), model(x))
    out = traced(x)
    assert type(out.grad_fn).__name__ == "CompiledFunctionBackward"
    eager = grads_of(model, model, x, y)
    compiled = grads_of(model, traced, x, y)
    for e, c in zip(eager, compiled):
        assert e.dtype == c.dtype and torch.equal(e, c)


def test_grad_accumulates_and_inputs_get_gradients():
    model, x, y = model_and_data()
    compiled = torch.compile(model)
    xe, xc = x.clone().requires_grad_(), x.clone().requires_grad_()
    model.zero_grad()
    for _ in range(2):  # .grad accumulates over two backward passes
        F.cross_entropy(model(xe), y).backward()
    eager = [p.grad.clone() for p in model.parameters()]
    model.zero_grad()
    for _ in range(2):
        F.cross_entropy(compiled(xc), y).backward()
    for e, p in zip(eager, model.parameters()):
        assert torch.equal(e, p.grad)
    assert torch.equal(xe.grad, xc.grad)


def test_compile_trains_like_eager():
    model_a, x, y = model_and_data()
    model_b, _, _ = model_and_data()
    compiled = torch.compile(model_b)
    opt_a = torch.optim.SGD(model_a.parameters(), lr=0.3, momentum=0.9)
    opt_b = torch.optim.SGD(compiled.parameters(), lr=0.3, momentum=0.9)
    for _ in range(5):
        for opt, run in ((opt_a, model_a), (opt_b, compiled)):
            opt.zero_grad()
            F.cross_entropy(run(x), y).backward()
            opt.step()
    for a, b in zip(model_a.parameters(), model_b.parameters()):
        assert torch.equal(a, b)
    assert set(compiled.state_dict()) == {"_orig_mod." + k for k in model_b.state_dict()}


def test_trace_and_compile_functions():
    def f(a, b):
        return (a * b).sin().sum(), a.exp()
    a = torch.randn(3, requires_grad=True)
    b = torch.randn(3)
    traced = torch.jit.trace(f, (a, b))
    assert "sin" in str(traced.graph) and "exp" in str(traced.graph)
    s, e = traced(a, b)
    s_ref, e_ref = f(a, b)
    assert torch.equal(s, s_ref) and torch.equal(e, e_ref)
    (s + e.sum()).backward()
    g = a.grad.clone()
    a.grad = None
    (s_ref + e_ref.sum()).backward()
    assert torch.equal(a.grad, g)

    @torch.compile
    def g2(u):
        return (u * u).sum()
    u = torch.ones(3, requires_grad=True)
    g2(u).backward()
    assert torch.equal(u.grad, torch.full((3,), 2.0))
    assert torch.compile(f, disable=True) is f



def _train(loss_of, model, x, y, steps=4):
    """Losses and final parameters of SGD steps on ``loss_of(x, y)``."""
    opt = torch.optim.SGD(model.parameters(), lr=0.3, momentum=0.9)
    losses = []
    for _ in range(steps):
        opt.zero_grad()
        loss = loss_of(x, y)
        loss.backward()
        opt.step()
        losses.append(loss.item())
    return losses, [p.detach().clone() for p in model.parameters()]


class _Trainer:
    def __init__(self, model):
        self.model = model

    def loss(self, x, y):
        return F.cross_entropy(self.model(x), y)


def test_compiled_loss_function_lifts_the_modules_it_reads():
    """torch.compile of a function that uses a model from its closure, or from the object
    of a bound method: the model's parameters are inputs of the compiled program, so
    gradients reach them and every step sees the updated values, as in eager mode."""
    model_a, x, y = model_and_data()
    eager = _train(lambda u, v: F.cross_entropy(model_a(u), v), model_a, x, y)
    model_b, _, _ = model_and_data()
    compiled = torch.compile(lambda u, v: F.cross_entropy(model_b(u), v))
    got = _train(compiled, model_b, x, y)
    np.testing.assert_allclose(got[0], eager[0], rtol=1e-6)
    for a, b in zip(eager[1], got[1]):
        np.testing.assert_allclose(b.numpy(), a.numpy(), rtol=1e-5, atol=1e-7)
    assert "cross_entropy" in str(compiled.graph) or "log_softmax" in str(compiled.graph)
    model_c, _, _ = model_and_data()
    trainer = _Trainer(model_c)
    got = _train(torch.compile(trainer.loss), model_c, x, y)
    np.testing.assert_allclose(got[0], eager[0], rtol=1e-6)


def test_compiled_function_lifts_a_captured_tensor_that_requires_grad():
    w = torch.randn(4, 3, requires_grad=True)
    x = torch.randn(2, 4)
    compiled = torch.compile(lambda u: (u @ w).sum())
    compiled(x).backward()  # an input of the program, as PyTorch lifts it
    got = w.grad.clone()
    w.grad = None
    (x @ w).sum().backward()
    assert torch.equal(got, w.grad)
    with torch.no_grad():
        w.mul_(2.0)  # its current value is read on every call
    assert torch.allclose(compiled(x), (x @ w).sum())
    mask = torch.ones(3)  # a captured constant is fine
    assert torch.equal(torch.compile(lambda u, v: ((u @ v) * mask).sum())(x, w),
                       ((x @ w) * mask).sum())
    with pytest.raises(RuntimeError, match="requires grad.*Pass it as an argument"):
        torch.jit.trace(lambda u: (u @ w).sum(), x)  # tracing bakes what it reads


def test_new_shapes_retrace_and_no_grad_runs_forward_only():
    model, x, _ = model_and_data()
    compiled = torch.compile(model)
    with torch.no_grad():
        out = compiled(x)
        assert out.grad_fn is None and torch.equal(out, model(x))
    x2 = torch.randn(2, 4)
    assert torch.equal(compiled(x2), model(x2))
    assert "f32[2,4]" in str(compiled.graph_for(x2))


def test_training_mode_dropout_compiles_and_batchnorm_runs_eagerly_under_compile():
    """Random draws compile under torch.compile (the generator's state is an input of the
    program: eager's numbers) and are an error under torch.jit.trace; running statistics
    are a graph break (the call runs eagerly: eager's updates) and an error under
    torch.jit.trace."""
    torch.manual_seed(0)
    model = nn.Sequential(nn.Linear(4, 4), nn.Dropout(0.5))
    x = torch.randn(3, 4)
    torch.manual_seed(1)
    eager = model(x)
    compiled = torch.compile(model)
    torch.manual_seed(1)
    assert torch.equal(compiled(x), eager)
    assert compiled.graph_breaks == []
    with pytest.raises(RuntimeError, match="draws random numbers"):
        torch.jit.trace(model, x)
    model.eval()
    assert torch.equal(torch.compile(model)(x), model(x))
    bn = nn.Sequential(nn.Linear(4, 4), nn.BatchNorm1d(4))
    twin = nn.Sequential(nn.Linear(4, 4), nn.BatchNorm1d(4))
    twin.load_state_dict(bn.state_dict())
    x = torch.randn(5, 4)
    compiled = torch.compile(bn)
    for _ in range(2):
        assert torch.allclose(compiled(x), twin(x))
    assert torch.allclose(bn[1].running_mean, twin[1].running_mean)
    assert bn[1].num_batches_tracked.item() == 2
    with pytest.raises(RuntimeError, match="in place while being traced"):
        torch.jit.trace(bn, x)
    bn.eval()
    assert torch.allclose(torch.compile(bn)(x), bn(x))


def test_value_dependent_python_control_flow_is_a_concretization_error():
    def f(x):
        if x.sum() > 0:
            return x
        return -x
    with pytest.raises(ConcretizationTypeError, match="torch.compile|static_argnums|lax.cond"):
        torch.jit.trace(f, torch.ones(2))
    compiled = torch.compile(f)  # a graph break: eager's answer, both ways
    assert compiled(torch.ones(2)).tolist() == [1.0, 1.0]
    assert compiled(-torch.ones(2)).tolist() == [1.0, 1.0]


def test_errors():
    with pytest.raises(RuntimeError, match="example_kwarg_inputs or example_inputs must be "
                                           "provided"):
        torch.jit.trace(lambda x: x)
    with pytest.raises(TypeError, match="expected a Module or a callable"):
        torch.compile(3)
    with pytest.raises(RuntimeError, match="call it once"):
        torch.compile(lambda x: x).graph


def test_example_runs():
    result = runpy.run_path(str(EXAMPLES / "torch_jit_compile.py"))["main"](verbose=False,
                                                                           steps=20)
    assert result["losses"][-1] < result["losses"][0]
    assert np.isfinite(result["losses"]).all()


def test_engine_checks_apply_to_compiled_calls():
    model, x, y = model_and_data()
    compiled = torch.compile(model)
    loss = F.cross_entropy(compiled(x), y)
    loss.backward(retain_graph=True)
    loss.backward()
    with pytest.raises(RuntimeError, match="backward through the graph a second time"):
        loss.backward()
    loss = F.cross_entropy(compiled(x), y)
    with torch.no_grad():
        model[0].weight.mul_(2.0)
    with pytest.raises(RuntimeError, match="modified by an inplace operation"):
        loss.backward()


def test_double_backward_through_a_compiled_call_raises_pytorchs_error():
    """First-order gradients under create_graph are eager's; differentiating them again
    raises PyTorch's error (it once silently dropped the second-order term)."""
    f = torch.compile(lambda u: (u ** 3).sum())
    x = torch.tensor([1.0, 2.0], requires_grad=True)
    (g,) = torch.autograd.grad(f(x), x, create_graph=True)
    assert torch.equal(g.detach(), torch.tensor([3.0, 12.0])) and g.requires_grad
    with pytest.raises(RuntimeError, match="torch.compile with aot_autograd does not "
                                           "currently support double backward"):
        torch.autograd.grad(g.sum(), x)
