"""The backward engine: values, PyTorch's errors, accumulation, hooks, order, grad modes,
``autograd.grad`` and double backward."""
import threading
import warnings

import numpy as np
import pytest

import funcgrad.numpy as fnp
import funcgrad.torch as torch
import funcgrad.torch.nn.functional as F


def leaf(values, dtype=None):
    return torch.tensor(values, dtype=dtype, requires_grad=True)


# -- values -----------------------------------------------------------------------------------

def test_backward_values_and_next_functions():
    x = leaf([1.0, 2.0, 3.0])
    y = x * 2
    acc, nr = y.grad_fn.next_functions[0]
    assert type(acc).__name__ == "AccumulateGrad" and acc.variable is x and nr == 0
    assert y.grad_fn.next_functions[1] == (None, 0)
    (y * x).sum().backward()
    np.testing.assert_allclose(x.grad.numpy(), [4.0, 8.0, 12.0])


def test_float32_stays_float32_through_backward():
    x = leaf([1.0, 2.0])
    (x.exp() * 3).sum().backward()
    assert x.grad.dtype is torch.float32
    x64 = leaf([1.0, 2.0], dtype=torch.float64)
    (x64 * 2).sum().backward()
    assert x64.grad.dtype is torch.float64


def test_multiple_roots_with_gradients():
    x = leaf([1.0, 2.0])
    y1, y2 = x * 2, x ** 2
    torch.autograd.backward([y1, y2], [torch.ones(2), torch.tensor([1.0, 0.5])])
    np.testing.assert_allclose(x.grad.numpy(), [2 + 2.0, 2 + 2.0])


# -- errors -------------------------------------------------------------------------------------

def test_implicit_grad_needs_scalar():
    with pytest.raises(RuntimeError, match="^grad can be implicitly created only for scalar "
                                           "outputs$"):
        (leaf([1.0, 2.0]) * 2).backward()


def test_root_without_grad():
    with pytest.raises(RuntimeError, match="^element 0 of tensors does not require grad and "
                                           "does not have a grad_fn$"):
        torch.tensor([1.0]).sum().backward()
    x = leaf([1.0])
    with pytest.raises(RuntimeError, match="element 1 of tensors does not require grad"):
        torch.autograd.backward([x.sum(), torch.ones(())])


def test_second_backward_raises_then_retain_graph_allows_it():
    x = leaf([1.0, 2.0])
    y = x.exp().sum()
    y.backward(retain_graph=True)
    y.backward()
    np.testing.assert_allclose(x.grad.numpy(), 2 * np.exp([1.0, 2.0]), rtol=1e-6)
    with pytest.raises(RuntimeError) as e:
        y.backward()
    assert str(e.value) == (
        "Trying to backward through the graph a second time (or directly access saved "
        "tensors after they have already been freed). Saved intermediate values of the graph "
        "are freed when you call .backward() or autograd.grad(). Specify retain_graph=True if "
        "you need to backward through the graph a second time or if you need to access saved "
        "tensors after calling backward.")


def test_nodes_that_save_nothing_can_run_twice():
    x = leaf([1.0, 2.0])
    y = (x + 1).reshape(2, 1) - x  # AddBackward0, ViewBackward0, SubBackward0 save nothing
    y.sum().backward()
    y.sum().backward()
    np.testing.assert_allclose(x.grad.numpy(), [0.0, 0.0])
    z = x * 3  # MulBackward0 saves the (wrapped) scalar, as in PyTorch
    z.sum().backward()
    with pytest.raises(RuntimeError, match="Trying to backward through the graph a second"):
        z.sum().backward()


def test_graphs_are_freed_by_reference_counting(garbage_cycles):
    """A training step (and a checkpointed backward) leaves no reference cycles: nodes and
    saved arrays go as soon as the step's tensors do, not when the garbage collector next
    runs. Saved inputs are freed by backward itself (a node -> saved ref -> node cycle once
    kept every step's activations alive until gc)."""
    import weakref
    from funcgrad.torch.utils.checkpoint import checkpoint
    model = torch.nn.Sequential(torch.nn.Linear(4, 3), torch.nn.ReLU(), torch.nn.Linear(3, 2))
    opt = torch.optim.SGD(model.parameters(), lr=0.1)
    x, y = torch.randn(5, 4), torch.tensor([0, 1, 1, 0, 1])

    def step() -> None:
        opt.zero_grad()
        F.cross_entropy(checkpoint(model, x, use_reentrant=False), y).backward()
        F.cross_entropy(model(x), y).backward()
        opt.step()

    assert garbage_cycles(step) == []
    h = leaf([1.0, 2.0]).exp()  # ExpBackward0 saves its result...
    z = (h * h).sum()           # ...and MulBackward0 saves h twice
    saved = weakref.ref(h._a)
    del h
    z.backward()
    assert saved() is None      # freed by backward, with no collection needed


def test_gradient_shape_mismatch():
    x = leaf([1.0, 2.0])
    with pytest.raises(RuntimeError, match=r"^Mismatch in shape: grad_output\[0\] has a shape "
                                           r"of torch.Size\(\[3\]\) and output\[0\] has a "
                                           r"shape of torch.Size\(\[2\]\).$"):
        (x * 2).backward(torch.ones(3))


def test_grad_unused_input_messages():
    u, v = leaf([1.0]), leaf([2.0])
    with pytest.raises(RuntimeError, match=r"^The differentiated Tensor at index 1 appears to "
                                           r"not have been used in the graph. Set "
                                           r"allow_unused=True if this is the desired "
                                           r"behavior.$"):
        torch.autograd.grad((u * 2).sum(), [u, v])
    gu, gv = torch.autograd.grad((u * 2).sum(), [u, v], allow_unused=True)
    assert gv is None and gu.tolist() == [2.0]
    gu, gv = torch.autograd.grad((u * 2).sum(), [u, v], materialize_grads=True)
    assert gv.tolist() == [0.0]
    with pytest.raises(RuntimeError, match="One of the differentiated Tensors does not "
                                           "require grad"):
        torch.autograd.grad((u * 2).sum(), [torch.ones(1)])


def test_requires_grad_errors():
    with pytest.raises(RuntimeError, match="^Only Tensors of floating point and complex dtype "
                                           "can require gradients$"):
        torch.tensor([1, 2], requires_grad=True)
    t = torch.tensor([1, 2])
    with pytest.raises(RuntimeError, match="^only Tensors of floating point and complex "
                                           "dtype can require gradients$"):
        t.requires_grad = True
    y = leaf([1.0]) * 2
    with pytest.raises(RuntimeError, match="you can only change requires_grad flags of leaf "
                                           "variables. If you want to use a computed "
                                           "variable in a subgraph"):
        y.requires_grad = False


def test_non_leaf_grad_access_warns():
    y = leaf([1.0]) * 2
    with pytest.warns(UserWarning, match="The .grad attribute of a Tensor that is not a leaf "
                                         "Tensor is being accessed"):
        assert y.grad is None


# -- accumulation -------------------------------------------------------------------------------

def test_accumulates_in_place_into_the_same_tensor():
    w = leaf([1.0, 2.0])
    (w * 2).sum().backward()
    g = w.grad
    v0 = g._version
    (w * 3).sum().backward()
    assert w.grad is g and g._version == v0 + 1
    assert g.tolist() == [5.0, 5.0]


def test_create_graph_accumulates_out_of_place_with_graph():
    w = leaf([1.0, 2.0])
    (w ** 3).sum().backward(create_graph=True)
    g = w.grad
    assert g.grad_fn is not None and g.grad_fn.name() == "CloneBackward0"
    (w ** 3).sum().backward(create_graph=True)
    assert w.grad is not g
    np.testing.assert_allclose(w.grad.detach().numpy(), [6.0, 24.0])


def test_zero_grad_patterns():
    w = leaf([1.0])
    (w * 2).sum().backward()
    w.grad.zero_()
    (w * 2).sum().backward()
    assert w.grad.tolist() == [2.0]
    w.grad = None
    (w * 2).sum().backward()
    assert w.grad.tolist() == [2.0]


# -- hooks ---------------------------------------------------------------------------------------

def test_tensor_hook_replaces_gradient_and_runs_before_retain_grad():
    x = leaf([1.0, 2.0])
    y = x * 2
    seen = []
    y.retain_grad()
    y.register_hook(lambda g: seen.append(("y", g.tolist())) or g * 10)
    x.register_hook(lambda g: seen.append(("x", g.tolist())))
    x.register_post_accumulate_grad_hook(lambda t: seen.append(("post", t.grad.tolist())))
    y.sum().backward()
    assert seen == [("y", [1.0, 1.0]), ("x", [20.0, 20.0]), ("post", [20.0, 20.0])]
    assert y.grad.tolist() == [10.0, 10.0] and y.retains_grad
    assert x.grad.tolist() == [20.0, 20.0]


def test_hook_handles_remove():
    x = leaf([1.0])
    calls = []
    handle = x.register_hook(lambda g: calls.append(1))
    (x * 2).sum().backward()
    handle.remove()
    (x * 2).sum().backward()
    assert calls == [1]
    with pytest.raises(RuntimeError, match="cannot register a hook on a tensor that doesn't "
                                           "require gradient"):
        torch.ones(1).register_hook(lambda g: g)


def test_node_pre_and_post_hooks():
    x = leaf([1.0, 2.0])
    y = x * 3
    seen = []
    y.grad_fn.register_prehook(lambda gout: seen.append(("pre", gout[0].tolist())))
    y.grad_fn.register_hook(lambda gin, gout: seen.append(("post", gin[0].tolist())))
    y.sum().backward()
    assert seen == [("pre", [1.0, 1.0]), ("post", [3.0, 3.0])]


def test_hooks_on_autograd_grad_inputs():
    x = leaf([1.0])
    x.register_hook(lambda g: g * 2)
    (g,) = torch.autograd.grad((x * 3).sum(), x)
    assert g.tolist() == [6.0] and x.grad is None


# -- engine order -------------------------------------------------------------------------------

def test_nodes_run_latest_first():
    order = []
    x = leaf(1.0)
    a = x * 2          # created first
    b = x * 3
    c = a * b          # depends on both
    d = c + a          # a feeds two nodes: it runs only after both
    for name, t in [("a", a), ("b", b), ("c", c), ("d", d)]:
        t.grad_fn.register_prehook(lambda g, name=name: order.append(name))
    d.backward()
    assert order == ["d", "c", "b", "a"]
    assert x.grad.item() == pytest.approx(12 + 2)  # d = 6x^2 + 2x


def test_independent_branches_run_by_creation_order():
    order = []
    x = leaf(1.0)
    branches = [x * k for k in (1.0, 2.0, 3.0)]
    for k, t in enumerate(branches):
        t.grad_fn.register_prehook(lambda g, k=k: order.append(k))
    torch.autograd.backward(branches)
    assert order == [2, 1, 0]


# -- inputs= and autograd.grad -------------------------------------------------------------------

def test_backward_inputs_only_accumulates_there():
    a, b = leaf([1.0]), leaf([2.0])
    y = a * b
    y.backward(inputs=[a])
    assert a.grad.tolist() == [2.0] and b.grad is None
    with pytest.raises(RuntimeError, match="`inputs` argument to `backward\\(\\)` cannot be "
                                           "empty."):
        (a * b).backward(inputs=[])


def test_backward_inputs_non_leaf_gets_grad():
    a = leaf([1.0, 2.0])
    h = a * 2
    (h * h).sum().backward(inputs=[h])
    assert h.grad.tolist() == [4.0, 8.0] and a.grad is None


def test_autograd_grad_leaves_dot_grad_alone():
    a = leaf([1.0, 2.0])
    h = a.exp()
    (ga, gh) = torch.autograd.grad((h * a).sum(), [a, h], retain_graph=True)
    np.testing.assert_allclose(gh.numpy(), [1.0, 2.0])
    np.testing.assert_allclose(ga.numpy(), np.exp([1.0, 2.0]) * [2.0, 3.0], rtol=1e-6)
    assert a.grad is None and not ga.requires_grad


def test_autograd_grad_of_an_intermediate_runs_only_the_nodes_after_it():
    # as PyTorch's: the node of ``h`` is reached (its gradient captured) but not run, so it
    # keeps what it saved for a later backward without retain_graph
    x = leaf([1.0, 2.0])
    h = x.exp()
    (gh,) = torch.autograd.grad(h.sin().sum(), h)
    np.testing.assert_allclose(gh.numpy(), np.cos(np.exp([1.0, 2.0])), rtol=1e-6)
    assert x.grad is None
    h.sum().backward()
    np.testing.assert_allclose(x.grad.numpy(), np.exp([1.0, 2.0]), rtol=1e-6)


def test_autograd_grad_with_grad_outputs():
    a = leaf([1.0, 2.0])
    (g,) = torch.autograd.grad(a * a, a, grad_outputs=torch.tensor([1.0, 10.0]))
    assert g.tolist() == [2.0, 40.0]


# -- double backward ------------------------------------------------------------------------------

def test_second_derivative_by_grad_and_by_backward():
    x = leaf([1.0, 2.0, 3.0])
    (g,) = torch.autograd.grad((x ** 3).sum(), x, create_graph=True)
    assert g.requires_grad
    (h,) = torch.autograd.grad(g.sum(), x)
    np.testing.assert_allclose(h.numpy(), [6.0, 12.0, 18.0])
    x.grad = None
    (x ** 3).sum().backward(create_graph=True)
    x.grad.sum().backward()  # adds d/dx sum(3x^2) = 6x into x.grad (a new tensor)
    np.testing.assert_allclose(x.grad.detach().numpy(), [3 + 6, 12 + 12, 27 + 18])


def test_third_derivative():
    x = leaf(2.0, dtype=torch.float64)
    (g1,) = torch.autograd.grad(x.sin(), x, create_graph=True)
    (g2,) = torch.autograd.grad(g1, x, create_graph=True)
    (g3,) = torch.autograd.grad(g2, x)
    assert g3.item() == pytest.approx(-np.cos(2.0))


D = torch.float64
_W = torch.tensor(np.random.default_rng(1).standard_normal((4, 2)), dtype=D,
                  requires_grad=True)
_T = torch.tensor([0, 1, 1])


def _setitem(x):
    y = x * 1
    y[0] = x[1] ** 2
    return y


DOUBLE_BACKWARD = {
    "mul": lambda x: x * x, "div": lambda x: x / (x * x + 1), "exp": torch.exp,
    "log": lambda x: (x * x + 1).log(), "tanh": torch.tanh, "sigmoid": torch.sigmoid,
    "pow": lambda x: x ** 3, "sqrt": lambda x: (x * x + 1).sqrt(),
    "sum_dim": lambda x: (x * x).sum(1), "mean": lambda x: (x * x).mean(),
    "max": lambda x: x.max(1).values * x.max(), "matmul": lambda x: x @ _W,
    "mm": lambda x: x.t().mm(x), "softmax": lambda x: F.softmax(x, 1),
    "log_softmax": lambda x: F.log_softmax(x, 1), "cross_entropy": lambda x: F.cross_entropy(x, _T),
    "mse_loss": lambda x: F.mse_loss(x * x, torch.ones(3, 4, dtype=D)),
    "linear": lambda x: F.linear(x, _W.t(), torch.ones(2, dtype=D)),
    "view": lambda x: x.view(12) * x.reshape(12), "transpose": lambda x: x.transpose(0, 1) * x.t(),
    "index": lambda x: x[1:, torch.tensor([0, 2])] ** 2, "cat": lambda x: torch.cat([x, x * x], 1),
    "stack": lambda x: torch.stack([x, x * x]), "split": lambda x: x.split(2, 1)[1] ** 2,
    "where": lambda x: torch.where(x > 0, x * x, -x), "clamp": lambda x: x.clamp(-0.5, 0.5) * x,
    "abs": lambda x: x.abs() * x, "var": lambda x: x.var(1), "std": lambda x: x.std(),
    "norm": lambda x: x.norm(), "relu": lambda x: torch.relu(x) * x,
    "logsumexp": lambda x: x.logsumexp(1), "cumsum": lambda x: (x * x).cumsum(1),
    "prod": lambda x: x.prod(1), "sort": lambda x: x.sort(1).values ** 2,
    "gather": lambda x: x.gather(1, torch.tensor([[0], [1], [2]])) ** 2,
    "squeeze": lambda x: x.unsqueeze(0).squeeze() ** 2, "setitem": _setitem,
    "expand": lambda x: x[:, :1].expand(3, 4) * x, "sub_rsub": lambda x: (1 - x) * (x - 2),
    "neg": lambda x: -x * x, "permute": lambda x: x.permute(1, 0) ** 2,
    "inplace": lambda x: (x * 1).mul_(x).add_(x),
}


@pytest.mark.parametrize("name", sorted(DOUBLE_BACKWARD))
def test_double_backward_matches_finite_differences(name):
    x = torch.tensor(np.random.default_rng(0).uniform(-1, 1, (3, 4)), dtype=D,
                     requires_grad=True)
    assert torch.autograd.gradgradcheck(DOUBLE_BACKWARD[name], (x,))


# -- grad modes ------------------------------------------------------------------------------------

def test_grad_modes():
    x = leaf([1.0])
    with torch.no_grad():
        assert not (x * 2).requires_grad
        with torch.enable_grad():
            assert (x * 2).requires_grad
    with torch.set_grad_enabled(False):
        assert not torch.is_grad_enabled()
    assert torch.is_grad_enabled()
    torch.set_grad_enabled(False)
    try:
        assert not (x * 2).requires_grad
    finally:
        torch.set_grad_enabled(True)

    @torch.no_grad()
    def f(t):
        return t * 2

    @torch.enable_grad()
    def g(t):
        return t * 2

    @torch.no_grad
    def h(t):
        return t * 2
    assert not f(x).requires_grad and not h(x).requires_grad
    with torch.no_grad():
        assert g(x).requires_grad
    with torch.inference_mode():
        y = x * 2
    assert not y.requires_grad and y.is_inference()
    with pytest.raises(RuntimeError, match="Inference tensors cannot be saved for backward"):
        x * y


def test_grad_mode_is_per_thread():
    seen = []

    def worker():
        seen.append(torch.is_grad_enabled())
    with torch.no_grad():
        t = threading.Thread(target=worker)
        t.start()
        t.join()
        assert not torch.is_grad_enabled()
    assert seen == [True]


def test_no_grad_decorates_generators():
    x = leaf([1.0])

    @torch.no_grad()
    def gen():
        yield x * 2
        yield x * 3
    assert [t.requires_grad for t in gen()] == [False, False]


def test_warnings_are_not_raised_by_plain_backward():
    x = leaf([1.0, 2.0])
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        (x * x).sum().backward()


def test_complex_gradients_follow_pytorchs_convention():
    # PyTorch's gradient of a real loss of z is the conjugate Wirtinger one: |z|^2 -> 2z
    z = torch.tensor([1 + 1j, 2 - 1j], requires_grad=True)
    (z.abs() ** 2).sum().backward()
    np.testing.assert_allclose(z.grad.numpy(), [2 + 2j, 4 - 2j], rtol=1e-6)
    z.grad = None
    (z * z.conj()).real.sum().backward()
    np.testing.assert_allclose(z.grad.numpy(), [2 + 2j, 4 - 2j], rtol=1e-6)
    (g,) = torch.autograd.grad((z.abs() ** 2).sum(), z, create_graph=True)
    np.testing.assert_allclose(g.detach().numpy(), [2 + 2j, 4 - 2j], rtol=1e-6)
    with pytest.raises(RuntimeError, match="grad can be implicitly created only for real "
                                           "scalar outputs but got torch.complex64"):
        (z * 2).sum().backward()


# -- one-primitive ops: recorded without a trace ---------------------------------------------

def _tape_of(t):
    """What the node of ``t`` recorded: per record (primitive, params, in_vars, which inputs
    are saved, whether the output is kept), and the variables' avals."""
    tape = t.grad_fn._tape
    return ([(r.prim.name, r.params, r.in_vars, [s is not None for s in r.saved],
              r.out is not None) for r in tape.records], tape.var_avals, tape.out_vars)


@pytest.mark.parametrize("case", ["mul", "mul const", "mul scalar", "add", "exp", "sigmoid",
                                  "t", "reshape", "sum", "log_softmax", "where", "addmm",
                                  "nll_loss", "nll_loss weighted"])
def test_one_primitive_ops_record_what_tracing_records(case):
    """A `PrimCall` op builds its one-record tape directly; it must be the tape tracing the
    same call gives (same residuals), with the same gradients, double backward included."""
    from funcgrad.primitives import (binary, elementwise, linalg, reductions, select, shape,
                                     special)
    from funcgrad.torch._dispatch import PrimCall, apply
    rng = np.random.RandomState(0)
    a = leaf(rng.randn(3, 4))
    b = leaf(rng.randn(3, 4))
    c = torch.tensor(rng.randn(3, 4))  # requires no grad: a constant on the tape
    cond = torch.tensor(rng.rand(3, 4) < 0.5)
    prim, params, inputs = {
        "mul": (binary.mul, {}, [a, b]), "mul const": (binary.mul, {}, [a, c]),
        "mul scalar": (binary.mul, {}, [2.5, a]), "add": (binary.add, {}, [a, b]),
        "exp": (elementwise.exp, {}, [a]), "sigmoid": (special.expit, {}, [a]),
        "t": (shape.transpose, {"axes": (1, 0)}, [a]),
        "reshape": (shape.reshape, {"shape": (4, 3)}, [a]),
        "sum": (reductions.reduce_sum, {"axis": (1,), "keepdims": False}, [a]),
        "log_softmax": (reductions.log_softmax, {"axis": (1,)}, [a]),
        "where": (select.where, {}, [cond, a, c]),
        "addmm": (linalg.addmm, {}, [b[0], a, leaf(rng.randn(4, 4))]),
        "nll_loss": (reductions.nll_loss, {"axis": 1, "reduction": "mean"}, [a]),
        "nll_loss weighted": (reductions.nll_loss, {"axis": 1, "reduction": "sum"}, [a]),
    }[case]
    consts = ()  # arrays passed after the op's inputs (labels and weights)
    if case.startswith("nll_loss"):
        labels = fnp.asarray(np.array([3, 0, 2]))
        consts = (labels, 1.0 if case == "nll_loss" else fnp.asarray(rng.rand(3) + 0.5))
    direct = apply("X", PrimCall(prim, params, consts=consts), inputs)
    traced = apply("X", lambda *xs: prim(*xs, *consts, **params), inputs)
    assert _tape_of(direct) == _tape_of(traced)
    np.testing.assert_array_equal(direct.detach().numpy(), traced.detach().numpy())
    first, second = [], []
    for out in (direct, traced):  # gradient and gradient of gradient through the node
        g, = torch.autograd.grad((out * out.exp()).sum(), a, create_graph=True)
        gg, = torch.autograd.grad((g * g).sum(), a)
        first.append(g.detach().numpy())
        second.append(gg.numpy())
    np.testing.assert_allclose(first[0], first[1], rtol=1e-12)
    np.testing.assert_allclose(second[0], second[1], rtol=1e-12)
    assert np.abs(first[0]).sum() > 0


def test_one_primitive_ops_under_a_funcgrad_transform_are_traced():
    """Inside torch.func transforms tensors hold tracers: the direct path steps aside."""
    x = torch.tensor([0.5, -1.0, 2.0])
    g = torch.func.grad(lambda t: (t * t).exp().sum())(x)
    np.testing.assert_allclose(g.numpy(), 2 * x.numpy() * np.exp(x.numpy() ** 2), rtol=1e-6)
