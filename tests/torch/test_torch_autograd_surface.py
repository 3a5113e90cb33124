"""torch.autograd.functional, autograd.Variable and the torch-level queries (equal, select,
default device, backends, accelerator, rng state) against PyTorch and on their own."""
import warnings

import numpy as np
import pytest

import funcgrad.torch as fg
from funcgrad.torch.autograd import functional as AF


def _values(x):
    """Nested tuples/lists of tensors as nested lists of arrays (structure kept)."""
    if isinstance(x, (tuple, list)):
        return (type(x).__name__, [_values(v) for v in x])
    return ("tensor", tuple(x.shape), x.detach().numpy().astype(np.float64))


def _assert_same(a, b):
    assert a[0] == b[0]
    if a[0] in ("tuple", "list"):
        assert len(a[1]) == len(b[1])
        for x, y in zip(a[1], b[1]):
            _assert_same(x, y)
    else:
        assert a[1] == b[1]
        np.testing.assert_allclose(a[2], b[2], rtol=1e-10, atol=1e-12)


def _inputs(T, two):
    x = T.tensor([0.5, -1.0, 2.0], dtype=T.float64)
    y = T.tensor([[1.5, 0.2], [0.3, -0.7]], dtype=T.float64)
    return (x, y) if two else x


def scalar_one(T, x):
    return (x.sin() * x.exp()).sum()


def scalar_two(T, x, y):
    return (x.pow(3).sum() * y.tanh()).sum() + (y @ y).trace()


def vector_one(T, x):
    return x.exp() * x[0]


def vector_two(T, x, y):
    return (x[:2] * y.sum(0), (y * x[2]).sin())


FUNCS = {"scalar-one": (scalar_one, False), "scalar-two": (scalar_two, True),
         "vector-one": (vector_one, False), "vector-two": (vector_two, True)}


def _v_like(T, out):
    if isinstance(out, tuple):
        return tuple(_v_like(T, o) for o in out)
    return T.linspace(-1.0, 1.0, out.numel(), dtype=T.float64).reshape(out.shape)


ANY_FUNCTION = ["vjp", "jvp", "jacobian", "jacobian-vectorize", "jacobian-forward"]
SCALAR_ONLY = ["hessian", "hessian-vectorize", "hessian-forward", "hvp", "vhp"]
PAIRS = [(name, kind) for name in sorted(FUNCS)
         for kind in ANY_FUNCTION + (SCALAR_ONLY if name.startswith("scalar") else [])]


@pytest.mark.parametrize("name,kind", PAIRS)
def test_functional_matches_pytorch(real, name, kind):
    f, two = FUNCS[name]
    results = []
    for T in (real, fg):
        F = T.autograd.functional
        inputs = _inputs(T, two)
        fn = lambda *a: f(T, *a)  # noqa: E731
        if kind == "vjp":
            res = F.vjp(fn, inputs, _v_like(T, fn(*(inputs if two else (inputs,)))))
        elif kind in ("jvp", "hvp", "vhp"):
            res = getattr(F, kind)(fn, inputs, _v_like(T, inputs))
        elif kind.startswith("jacobian"):
            res = F.jacobian(fn, inputs, vectorize=kind != "jacobian",
                             strategy="forward-mode" if kind.endswith("forward")
                             else "reverse-mode")
        else:
            res = F.hessian(fn, inputs, vectorize=kind != "hessian",
                            outer_jacobian_strategy="forward-mode" if kind.endswith("forward")
                            else "reverse-mode")
        results.append(_values(res))
    _assert_same(results[1], results[0])


def test_create_graph_results_differentiate_again(real):
    """create_graph=True: a Hessian-vector product that is itself differentiated (the
    third derivative), with the same values as PyTorch's."""
    grads = []
    for T in (real, fg):
        x = T.tensor([0.5, -1.0, 2.0], dtype=T.float64, requires_grad=True)
        v = T.tensor([1.0, 0.5, -0.5], dtype=T.float64)
        _, hv = T.autograd.functional.hvp(lambda a: (a ** 4).sum(), x, v, create_graph=True)
        assert hv.requires_grad
        hv.sum().backward()
        jac = T.autograd.functional.jacobian(lambda a: a ** 3, x, create_graph=True)
        jac.trace().backward()
        grads.append(x.grad.numpy().copy())
    np.testing.assert_allclose(grads[1], grads[0], rtol=1e-12)


def test_results_are_detached_without_create_graph():
    x = fg.tensor([1.0, 2.0], requires_grad=True)
    out, g = AF.vjp(lambda a: (a * a).sum(), x)
    assert not out.requires_grad and not g.requires_grad and g.tolist() == [2.0, 4.0]
    assert not AF.hessian(lambda a: (a ** 3).sum(), x).requires_grad


def test_unused_inputs_give_zeros_or_strict_errors():
    x, y = fg.tensor([1.0, 2.0]), fg.tensor([3.0])
    jac = AF.jacobian(lambda a, b: a * 2, (x, y))
    assert jac[1].tolist() == [[0.0], [0.0]]
    with pytest.raises(RuntimeError, match="Output 0 of the user-provided function is "
                                           "independent of input 1. This is not allowed in "
                                           "strict mode."):
        AF.jacobian(lambda a, b: a * 2, (x, y), strict=True)
    with pytest.raises(RuntimeError, match="Output 0 of the user-provided function does not "
                                           "require gradients"):
        AF.vjp(lambda a: fg.ones(2), x, fg.ones(2), strict=True)
    with pytest.raises(RuntimeError, match="The jacobian of the user-provided function with "
                                           "respect to input 0 is independent|the jacobian "
                                           "of the user-provided function with respect to "
                                           "input 0 is independent"):
        AF.hessian(lambda a: a.sum(), x, strict=True)


def test_functional_argument_errors():
    x = fg.tensor([1.0, 2.0])
    with pytest.raises(TypeError, match="The inputs given to jacobian must be either a Tensor "
                                        "or a tuple of Tensors"):
        AF.jacobian(lambda a: a, [x])
    with pytest.raises(RuntimeError, match="The vector v can only be None if the user-provided "
                                           "function returns a single Tensor with a single "
                                           "element."):
        AF.vjp(lambda a: a * 2, x)
    with pytest.raises(RuntimeError, match="v has invalid size: should be torch.Size\\(\\[2\\]\\)"
                                           " but got torch.Size\\(\\[3\\]\\)."):
        AF.jvp(lambda a: a * 2, x, fg.ones(3))
    with pytest.raises(RuntimeError, match="The function given to hessian should return a "
                                           "single Tensor"):
        AF.hessian(lambda a: (a.sum(), a.sum()), x)
    with pytest.raises(RuntimeError, match="should contain a single element"):
        AF.hvp(lambda a: a * 2, x, x)
    with pytest.raises(RuntimeError, match="`strict=True` and `vectorized=True` are not "
                                           "supported together"):
        AF.jacobian(lambda a: a, x, strict=True, vectorize=True)
    with pytest.raises(NotImplementedError, match="only implemented for `vectorize=True`"):
        AF.jacobian(lambda a: a, x, strategy="forward-mode")
    with pytest.raises(NotImplementedError, match="`create_graph=True` and "
                                                  "`strategy=\"forward-mode\"`"):
        AF.jacobian(lambda a: a, x, strategy="forward-mode", create_graph=True)
    with pytest.raises(AssertionError, match="Expected strategy to be either"):
        AF.jacobian(lambda a: a, x, strategy="sideways")


def test_variable_is_the_legacy_constructor(real):
    for T in (real, fg):
        Variable = T.autograd.Variable
        t = T.ones(2)
        v = Variable(t, requires_grad=True)
        assert type(v) is T.Tensor and v.requires_grad and v.is_leaf and not t.requires_grad
        assert isinstance(t, Variable) and not isinstance(1, Variable)
        t.add_(1)
        assert v.tolist() == [2.0, 2.0]  # shares t's storage
        y = v * 2
        assert Variable(y).grad_fn is None and not Variable(y).requires_grad
        assert type(Variable(T.nn.Parameter(T.ones(1)))) is T.Tensor
        assert Variable().shape == (0,)
        with pytest.raises(TypeError, match="Variable data has to be a tensor, but got list"):
            Variable([1, 2])
        with pytest.raises(RuntimeError, match="Only Tensors of floating point and complex "
                                               "dtype can require gradients"):
            Variable(T.ones(2, dtype=T.int64), requires_grad=True)
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always")
            Variable(t, volatile=True)
        assert [str(w.message) for w in caught] == [
            "volatile was removed and now has no effect. Use `with torch.no_grad():` "
            "instead."]


def test_equal_returns_a_bool(real):
    pairs = [([1, 2], [1, 2]), ([1, 2], [1.0, 2.0]), ([1, 2], [[1, 2]]),
             ([float("nan")], [float("nan")]), ([1, 2], [1, 3])]
    for a, b in pairs:
        expected = real.equal(real.tensor(a), real.tensor(b))
        got = fg.equal(fg.tensor(a), fg.tensor(b))
        assert type(got) is bool and got == expected
        assert fg.tensor(a).equal(fg.tensor(b)) is expected
    with pytest.raises(TypeError, match="equal\\(\\): argument 'other' \\(position 2\\) must "
                                        "be Tensor, not list"):
        fg.equal(fg.tensor([1]), [1])


def test_select_matches_pytorch(real):
    for dim, index in [(0, 1), (1, -1), (-1, 0), (2, 2)]:
        results = []
        for T in (real, fg):
            x = T.arange(24.0).reshape(2, 3, 4).requires_grad_()
            y = T.select(x, dim, index)
            (y * T.arange(float(y.numel())).reshape(y.shape)).sum().backward()
            results.append((y.detach().numpy(), x.grad.numpy(), y.grad_fn.name(),
                            x.select(dim, index).tolist()))
        np.testing.assert_array_equal(results[1][0], results[0][0])
        np.testing.assert_array_equal(results[1][1], results[0][1])
        assert results[1][2:] == results[0][2:]
    x = fg.arange(6).reshape(2, 3)
    with pytest.raises(IndexError, match="select\\(\\): index 3 out of range for tensor of size "
                                         "\\[2, 3\\] at dimension 1"):
        fg.select(x, 1, 3)
    with pytest.raises(IndexError, match="select\\(\\) cannot be applied to a 0-dim tensor."):
        fg.tensor(3).select(0, 0)


def test_default_device():
    assert fg.get_default_device() == fg.device("cpu")
    fg.set_default_device("cpu")
    with fg.device("cpu"):
        assert fg.ones(1).device == fg.device("cpu")
    fg.set_default_device(None)
    assert fg.get_default_device() == fg.device("cpu")
    if fg.cuda.is_available():
        return
    on_cpu = fg.tensor([1.0])
    with fg.device("cuda"):
        assert fg.get_default_device() == fg.device("cuda", 0)
        with pytest.raises(AssertionError, match="Torch not compiled with CUDA enabled"):
            fg.zeros(2)
        assert fg.zeros_like(on_cpu).device == fg.device("cpu")  # the input's device
    assert fg.get_default_device() == fg.device("cpu")


@pytest.mark.gpu
def test_default_device_cuda():
    with fg.device("cuda"):
        assert fg.randn(2).device == fg.device("cuda", 0)
        model = fg.nn.Linear(2, 2)
    assert model.weight.device == fg.device("cuda", 0)
    assert fg.ones(1).device == fg.device("cpu")


def test_backends_and_accelerator_are_truthful():
    from funcgrad.backend import cupy_available
    gpu = cupy_available()
    assert fg.accelerator.is_available() is gpu is fg.cuda.is_available()
    assert fg.accelerator.current_accelerator() == (fg.device("cuda") if gpu else None)
    assert fg.accelerator.device_count() == fg.cuda.device_count()
    assert not fg.backends.mps.is_available() and not fg.backends.cudnn.is_available()
    assert fg.backends.cudnn.version() is None and not fg.backends.mkldnn.is_available()
    assert isinstance(fg.backends.mkl.is_available(), bool)
    capability = fg.backends.cpu.get_cpu_capability()
    assert capability in ("AVX512", "AVX2", "VSX", "Z VECTOR", "DEFAULT")
    fg.backends.cudnn.benchmark = True  # PyTorch programs set these; they change nothing
    fg.backends.cudnn.benchmark = False
    if not gpu:
        with pytest.raises(RuntimeError, match="Cannot access accelerator device when none is "
                                               "available."):
            fg.accelerator.current_device_index()
    torch = pytest.importorskip("torch")
    assert capability == torch.backends.cpu.get_cpu_capability()


@pytest.mark.gpu
def test_accelerator_on_gpu():
    assert fg.accelerator.current_device_index() == 0
    fg.accelerator.set_device_index(0)
    fg.accelerator.synchronize()


def test_rng_state_round_trip():
    fg.manual_seed(5)
    state = fg.get_rng_state()
    assert state.dtype == fg.uint8
    a = fg.rand(4)
    fg.set_rng_state(state)
    assert fg.equal(fg.rand(4), a) and fg.initial_seed() == 5
    g = fg.Generator().manual_seed(9)
    s = g.get_state()
    b = fg.randn(3, generator=g)
    assert fg.equal(fg.randn(3, generator=g.set_state(s)), b)
    with pytest.raises(TypeError, match="RNG state must be a torch.ByteTensor"):
        fg.set_rng_state(fg.ones(3))
    with pytest.raises(RuntimeError, match="Expected a funcgrad generator state of size 80"):
        g.set_state(fg.ones(3, dtype=fg.uint8))
