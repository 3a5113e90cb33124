"""Debugging tools: anomaly detection, gradcheck / gradgradcheck, saved-tensor hooks and
the memory report of live graphs."""
import warnings

import numpy as np
import pytest

import funcgrad.torch as torch


def test_detect_anomaly_nan_message_and_forward_trace():
    x = torch.tensor([0.0, 1.0], requires_grad=True)
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        with torch.autograd.detect_anomaly():
            y = (x / 0 * 0).sum()  # forward gives nan; DivBackward0 returns nan
            with pytest.raises(RuntimeError, match=r"^Function 'DivBackward0' returned nan "
                                                   r"values in its 0th output.$"):
                y.backward()
    messages = [str(w.message) for w in caught]
    assert messages[0].startswith("Anomaly Detection has been enabled.")
    trace = [m for m in messages if m.startswith("Error detected in DivBackward0. Traceback "
                                                 "of forward call that caused the error:")]
    assert trace and "test_torch_tools.py" in trace[0] and "x / 0 * 0" in trace[0]
    assert not torch.autograd.is_anomaly_enabled()


def test_set_detect_anomaly_and_failure_trace():
    class Boom(torch.autograd.Function):
        @staticmethod
        def forward(ctx, x):
            return x * 1

        @staticmethod
        def backward(ctx, g):
            raise ValueError("boom")
    torch.autograd.set_detect_anomaly(True)
    try:
        y = Boom.apply(torch.ones(1, requires_grad=True))
        with pytest.warns(UserWarning, match="Error detected in BoomBackward"):
            with pytest.raises(ValueError, match="boom"):
                y.sum().backward()
    finally:
        torch.autograd.set_detect_anomaly(False)
    # without anomaly mode no trace is recorded
    assert (torch.ones(1, requires_grad=True) * 2).grad_fn._trace is None


def fn(x, y):
    return (x * y).sin() + x ** 2


def inputs():
    torch.manual_seed(0)
    return (torch.randn(3, dtype=torch.float64, requires_grad=True),
            torch.randn(3, dtype=torch.float64, requires_grad=True))


def test_gradcheck_passes_in_both_modes():
    assert torch.autograd.gradcheck(fn, inputs())
    assert torch.autograd.gradcheck(fn, inputs(), fast_mode=True)
    assert torch.autograd.gradgradcheck(fn, inputs())
    assert torch.autograd.gradgradcheck(fn, inputs(), fast_mode=True)


class Wrong(torch.autograd.Function):
    @staticmethod
    def forward(ctx, x):
        ctx.save_for_backward(x)
        return x ** 2

    @staticmethod
    def backward(ctx, g):
        (x,) = ctx.saved_tensors
        return x * g  # should be 2 * x * g


def test_gradcheck_reports_the_mismatch():
    x = torch.tensor([1.0, 2.0], dtype=torch.float64, requires_grad=True)
    with pytest.raises(torch.autograd.GradcheckError) as e:
        torch.autograd.gradcheck(Wrong.apply, (x,))
    assert isinstance(e.value, RuntimeError)
    assert str(e.value) == (
        "Jacobian mismatch for output 0 with respect to input 0,\n"
        "numerical:tensor([[2.0000, 0.0000],\n        [0.0000, 4.0000]], dtype=torch.float64)\n"
        "analytical:tensor([[1., 0.],\n        [0., 2.]], dtype=torch.float64)\n")
    assert not torch.autograd.gradcheck(Wrong.apply, (x,), raise_exception=False)
    with pytest.raises(torch.autograd.GradcheckError, match="(?s)Jacobian mismatch for output 0 "
                                                            "with respect to input 0,.*computed "
                                                            ".*in fast mode"):
        torch.autograd.gradcheck(Wrong.apply, (x,), fast_mode=True)


def test_gradcheck_defaults_and_float32_warning():
    import inspect
    sig = inspect.signature(torch.autograd.gradcheck)
    assert (sig.parameters["eps"].default, sig.parameters["atol"].default,
            sig.parameters["rtol"].default) == (1e-6, 1e-5, 1e-3)
    x = torch.tensor([1.0, 2.0], requires_grad=True)
    with pytest.warns(UserWarning, match="Input #0 requires gradient and is not a double "
                                         "precision floating point"):
        torch.autograd.gradcheck(lambda t: t * 2, (x,), eps=1e-2, atol=1e-2)


def test_gradgradcheck_catches_a_wrong_second_derivative():
    class BadSecond(torch.autograd.Function):
        @staticmethod
        def forward(ctx, x):
            ctx.save_for_backward(x)
            return x ** 3

        @staticmethod
        def backward(ctx, g):
            (x,) = ctx.saved_tensors
            return 3 * x.detach() ** 2 * g  # right first derivative, no second
    x = torch.tensor([1.0, 2.0], dtype=torch.float64, requires_grad=True)
    assert torch.autograd.gradcheck(BadSecond.apply, (x,))
    with pytest.raises(torch.autograd.GradcheckError, match="Jacobian mismatch"):
        torch.autograd.gradgradcheck(BadSecond.apply, (x,))


def test_saved_tensors_hooks_pack_exactly_the_residuals():
    packed = []

    def pack(t):
        packed.append(tuple(t.shape))
        return ("box", t.detach().numpy())

    def unpack(p):
        return torch.tensor(p[1])
    a = torch.randn(3, requires_grad=True)
    b = torch.randn(3, requires_grad=True)
    with torch.autograd.graph.saved_tensors_hooks(pack, unpack):
        y = a * b       # saves a and b
        z = y.exp()     # saves its output
        w = z + a       # saves nothing
    assert packed == [(3,), (3,), (3,)]
    w.sum().backward()
    expected_a = (b * (a * b).exp() + 1).detach().numpy()
    np.testing.assert_allclose(a.grad.numpy(), expected_a, rtol=1e-6)


def test_saved_tensors_hooks_see_input_tensors_themselves():
    seen = []
    x = torch.randn(2, requires_grad=True)
    with torch.autograd.graph.saved_tensors_hooks(lambda t: seen.append(t) or t, lambda t: t):
        y = x.sin()
    assert seen[0] is x
    y.sum().backward()
    np.testing.assert_allclose(x.grad.numpy(), np.cos(x.detach().numpy()), rtol=1e-6)


def test_memory_summary_counts_what_graphs_keep():
    x = torch.randn(100, 100, requires_grad=True)
    h = x
    for _ in range(5):
        h = (h @ x).tanh()
    report = torch.autograd.graph.memory_summary(h)
    assert "TanhBackward0" in report and "MmBackward0" in report
    # x and the five tanh outputs, 40000 bytes each, each counted once
    assert torch.autograd.graph.saved_bytes(h) == 6 * 100 * 100 * 4
    h.sum().backward()
    assert torch.autograd.graph.saved_bytes(h) == 0  # freed by backward
    assert "autograd memory summary" in torch.cuda.memory_summary()
