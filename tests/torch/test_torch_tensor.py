"""Tensors: factories, dtypes, printing (PyTorch's exact format), conversions, op values
against numpy, and the grad_fn names of the ops."""
import numpy as np
import pytest

import funcgrad.torch as torch
import funcgrad.torch.nn.functional as F


# -- dtypes and factories --------------------------------------------------------------------

def test_dtype_objects():
    assert repr(torch.float32) == "torch.float32" and torch.float is torch.float32
    assert torch.double is torch.float64 and torch.long is torch.int64
    assert torch.float32.is_floating_point and not torch.int64.is_floating_point
    assert torch.complex64.is_complex
    assert repr(torch.Size([2, 3])) == "torch.Size([2, 3])"
    assert repr(torch.device("cpu")) == "device(type='cpu')"
    assert str(torch.device("cuda", 1)) == "cuda:1"
    assert torch.promote_types(torch.int64, torch.float32) is torch.float32


def test_inferred_dtypes():
    assert torch.tensor([1.0, 2.0]).dtype is torch.float32
    assert torch.tensor([1, 2]).dtype is torch.int64
    assert torch.tensor([True]).dtype is torch.bool
    assert torch.tensor(np.array([1.0])).dtype is torch.float64
    assert torch.tensor([1 + 2j]).dtype is torch.complex64
    assert torch.arange(3).dtype is torch.int64 and torch.arange(3.0).dtype is torch.float32
    assert torch.full((2,), 7).dtype is torch.int64
    assert torch.zeros(2).dtype is torch.float32
    assert torch.randint(0, 5, (3,)).dtype is torch.int64


def test_set_default_dtype():
    try:
        torch.set_default_dtype(torch.float64)
        assert torch.tensor([1.0]).dtype is torch.float64
        assert torch.randn(2).dtype is torch.float64
        assert repr(torch.tensor([1.0])) == "tensor([1.])"
        assert repr(torch.tensor([1.0], dtype=torch.float32)) == \
            "tensor([1.], dtype=torch.float32)"
    finally:
        torch.set_default_dtype(torch.float32)


def test_factories():
    assert torch.zeros(2, 3).shape == (2, 3) and torch.ones((2,)).tolist() == [1.0, 1.0]
    assert torch.full((2,), 1.5).tolist() == [1.5, 1.5]
    assert torch.eye(2).tolist() == [[1.0, 0.0], [0.0, 1.0]]
    assert torch.arange(1, 7, 2).tolist() == [1, 3, 5]
    assert torch.linspace(0, 1, 3).tolist() == [0.0, 0.5, 1.0]
    x = torch.tensor([[1.0, 2.0]], dtype=torch.float64)
    assert torch.zeros_like(x).dtype is torch.float64 and torch.ones_like(x).shape == (1, 2)
    assert torch.full_like(x, 3).tolist() == [[3.0, 3.0]]
    assert torch.empty(2).shape == (2,)
    assert torch.from_numpy(np.arange(3)).dtype is torch.int64
    assert torch.as_tensor(x) is x


def test_manual_seed_reproducible():
    torch.manual_seed(5)
    a = (torch.rand(3), torch.randn(3), torch.randint(0, 9, (3,)), torch.randperm(4))
    torch.manual_seed(5)
    b = (torch.rand(3), torch.randn(3), torch.randint(0, 9, (3,)), torch.randperm(4))
    for u, v in zip(a, b):
        assert u.tolist() == v.tolist()
    r = torch.rand(1000)
    assert 0 <= r.min().item() and r.max().item() < 1
    assert sorted(torch.randperm(5).tolist()) == [0, 1, 2, 3, 4]


def test_basic_accessors():
    x = torch.tensor([[1.0, 2.0, 3.0], [4.0, 5.0, 6.0]])
    assert x.shape == torch.Size([2, 3]) and x.size() == (2, 3) and x.size(1) == 3
    assert x.dim() == 2 and x.ndim == 2 and x.numel() == 6 and len(x) == 2
    assert x.device == torch.device("cpu") and x.device.type == "cpu"
    assert x.tolist() == [[1.0, 2.0, 3.0], [4.0, 5.0, 6.0]]
    assert x[1, 2].item() == 6.0 and float(x[0, 0]) == 1.0 and int(x[0, 1]) == 2
    assert isinstance(x.numpy(), np.ndarray) and x.numpy().dtype == np.float32
    assert x.to(torch.float64).dtype is torch.float64 and x.double().dtype is torch.float64
    assert x.long().dtype is torch.int64 and x.to("cpu") is x and x.cpu() is x
    assert f"{torch.tensor(2.5):.2f}" == "2.50"
    with pytest.raises(RuntimeError, match="a Tensor with 6 elements cannot be converted to "
                                           "Scalar"):
        x.item()
    with pytest.raises(RuntimeError, match="Boolean value of Tensor with more than one value "
                                           "is ambiguous"):
        bool(x)


def test_numpy_of_tensor_requiring_grad():
    x = torch.ones(2, requires_grad=True)
    with pytest.raises(RuntimeError, match=r"Can't call numpy\(\) on Tensor that requires "
                                           r"grad. Use tensor.detach\(\).numpy\(\) instead."):
        x.numpy()
    assert x.detach().numpy().tolist() == [1.0, 1.0]


def test_cuda_availability_matches_backend():
    from funcgrad.backend import cupy_available
    assert torch.cuda.is_available() == cupy_available()
    if not cupy_available():
        with pytest.raises(AssertionError, match="Torch not compiled with CUDA enabled"):
            torch.ones(2).cuda()


@pytest.mark.gpu
def test_cuda_round_trip_with_gradient():
    x = torch.tensor([1.0, 2.0], requires_grad=True)
    y = x.cuda()
    assert y.is_cuda and y.device == torch.device("cuda", 0)
    assert repr(y * 2).endswith("device='cuda:0', grad_fn=<MulBackward0>)")
    (y * y).sum().backward()
    assert x.grad.tolist() == [2.0, 4.0] and not x.grad.is_cuda


# -- printing -----------------------------------------------------------------------------------

REPRS = [
    (lambda: torch.tensor([1.0, 2.0, 3.0], requires_grad=True),
     "tensor([1., 2., 3.], requires_grad=True)"),
    (lambda: torch.tensor([1, 2]), "tensor([1, 2])"),
    (lambda: torch.tensor([1.0, 2.0], dtype=torch.float64), "tensor([1., 2.], dtype=torch.float64)"),
    (lambda: torch.tensor([1, 2], dtype=torch.int32), "tensor([1, 2], dtype=torch.int32)"),
    (lambda: torch.tensor(True), "tensor(True)"),
    (lambda: torch.tensor([True, False]), "tensor([ True, False])"),
    (lambda: torch.tensor([]), "tensor([])"),
    (lambda: torch.zeros(0, 3), "tensor([], size=(0, 3))"),
    (lambda: torch.tensor([], dtype=torch.int64), "tensor([], dtype=torch.int64)"),
    (lambda: torch.tensor([1.5, -2.25]), "tensor([ 1.5000, -2.2500])"),
    (lambda: torch.tensor([2 / 3] * 3), "tensor([0.6667, 0.6667, 0.6667])"),
    (lambda: torch.tensor([1e-5, 1.0]), "tensor([1.0000e-05, 1.0000e+00])"),
    (lambda: torch.tensor([1e10, 1.0]), "tensor([1.0000e+10, 1.0000e+00])"),
    (lambda: torch.tensor([float("nan"), 1.0]), "tensor([nan, 1.])"),
    (lambda: torch.tensor([float("inf"), 1.5]), "tensor([   inf, 1.5000])"),
    (lambda: torch.tensor(10.0).log(), "tensor(2.3026)"),
    (lambda: torch.tensor(10.0, requires_grad=True).log(), "tensor(2.3026, grad_fn=<LogBackward0>)"),
    (lambda: torch.tensor([[1.0, 2.0], [3.0, 4.0]]), "tensor([[1., 2.],\n        [3., 4.]])"),
    (lambda: torch.ones(2, 1, 2), "tensor([[[1., 1.]],\n\n        [[1., 1.]]])"),
    (lambda: torch.arange(10), "tensor([0, 1, 2, 3, 4, 5, 6, 7, 8, 9])"),
    (lambda: torch.tensor([1 + 2j]), "tensor([1.+2.j])"),
    (lambda: torch.ones(2, dtype=torch.float64, requires_grad=True),
     "tensor([1., 1.], dtype=torch.float64, requires_grad=True)"),
    (lambda: torch.nn.Parameter(torch.tensor([1.0, 2.0])),
     "Parameter containing:\ntensor([1., 2.], requires_grad=True)"),
    (lambda: torch.arange(16.0),
     "tensor([ 0.,  1.,  2.,  3.,  4.,  5.,  6.,  7.,  8.,  9., 10., 11., 12., 13.,\n"
     "        14., 15.])"),
    (lambda: torch.arange(2000.0),
     "tensor([0.0000e+00, 1.0000e+00, 2.0000e+00,  ..., 1.9970e+03, 1.9980e+03,\n"
     "        1.9990e+03])"),
]


@pytest.mark.parametrize("make,expected", REPRS)
def test_repr_matches_pytorch(make, expected):
    assert repr(make()) == expected


def test_node_repr_and_name():
    y = torch.tensor([1.0], requires_grad=True) * 2
    assert repr(y.grad_fn).startswith("<MulBackward0 object at 0x")
    assert type(y.grad_fn).__name__ == "MulBackward0" == y.grad_fn.name()


# -- op values ------------------------------------------------------------------------------------

A = np.array([[0.5, -1.0, 2.0], [1.5, 0.25, -0.75]], dtype=np.float32)

VALUES = [
    (lambda t: t + 1, lambda a: a + 1), (lambda t: 1 - t, lambda a: 1 - a),
    (lambda t: t * t, lambda a: a * a), (lambda t: t / 2, lambda a: a / 2),
    (lambda t: 2 / t, lambda a: 2 / a), (lambda t: t ** 2, lambda a: a ** 2),
    (lambda t: t.exp(), np.exp), (lambda t: t.abs().log(), lambda a: np.log(np.abs(a))),
    (lambda t: t.tanh(), np.tanh), (lambda t: t.sigmoid(), lambda a: 1 / (1 + np.exp(-a))),
    (lambda t: t.relu(), lambda a: np.maximum(a, 0)),
    (lambda t: t.clamp(-0.5, 0.5), lambda a: np.clip(a, -0.5, 0.5)),
    (lambda t: t.sum(), np.sum), (lambda t: t.sum(1), lambda a: a.sum(1)),
    (lambda t: t.mean(0, keepdim=True), lambda a: a.mean(0, keepdims=True)),
    (lambda t: t.max(), np.max), (lambda t: t.max(1).values, lambda a: a.max(1)),
    (lambda t: t.max(1).indices, lambda a: a.argmax(1)), (lambda t: t.argmax(), np.argmax),
    (lambda t: t.min(0)[0], lambda a: a.min(0)),
    (lambda t: t.var(1), lambda a: a.var(1, ddof=1)), (lambda t: t.std(), lambda a: a.std(ddof=1)),
    (lambda t: t @ t.t(), lambda a: a @ a.T), (lambda t: t.T, lambda a: a.T),
    (lambda t: t.view(3, 2), lambda a: a.reshape(3, 2)),
    (lambda t: t.reshape(-1), lambda a: a.reshape(-1)),
    (lambda t: t.permute(1, 0), lambda a: a.T), (lambda t: t.unsqueeze(1), lambda a: a[:, None]),
    (lambda t: t[None].squeeze(0), lambda a: a),
    (lambda t: torch.cat([t, t], 1), lambda a: np.concatenate([a, a], 1)),
    (lambda t: torch.stack([t, t], 2), lambda a: np.stack([a, a], 2)),
    (lambda t: t.split([1, 2], 1)[1], lambda a: a[:, 1:]),
    (lambda t: t.chunk(3, 1)[2], lambda a: a[:, 2:]),
    (lambda t: torch.where(t > 0, t, -t), np.abs), (lambda t: t[:, ::2], lambda a: a[:, ::2]),
    (lambda t: t[torch.tensor([1, 0])], lambda a: a[[1, 0]]), (lambda t: t[t > 0], lambda a: a[a > 0]),
    (lambda t: t.sort(1).values, lambda a: np.sort(a, 1)),
    (lambda t: t.sort(1, descending=True).indices, lambda a: np.argsort(-a, 1)),
    (lambda t: t.topk(2, 1).values, lambda a: -np.sort(-a, 1)[:, :2]),
    (lambda t: t.cumsum(1), lambda a: a.cumsum(1)), (lambda t: t.prod(), np.prod),
    (lambda t: t.norm(), np.linalg.norm), (lambda t: t.logsumexp(1),
                                           lambda a: np.log(np.exp(a).sum(1))),
    (lambda t: F.softmax(t, 1), lambda a: np.exp(a) / np.exp(a).sum(1, keepdims=True)),
    (lambda t: t.gather(1, torch.tensor([[2], [0]])), lambda a: a[[0, 1], [2, 0]][:, None]),
    (lambda t: t.masked_fill(t < 0, 0.0), lambda a: np.where(a < 0, 0, a)),
    (lambda t: t.expand(2, 2, 3), lambda a: np.broadcast_to(a, (2, 2, 3))),
    (lambda t: t.repeat(1, 2), lambda a: np.tile(a, (1, 2))), (lambda t: t.flip(1), lambda a: a[:, ::-1]),
    (lambda t: t.transpose(0, 1).contiguous().view(-1), lambda a: a.T.reshape(-1)),
    (lambda t: t.flatten(), lambda a: a.reshape(-1)), (lambda t: t.clone(), lambda a: a),
    (lambda t: t.tril(), np.tril), (lambda t: torch.maximum(t, t * 0), lambda a: np.maximum(a, 0)),
]


@pytest.mark.parametrize("op,ref", VALUES)
def test_op_values_match_numpy(op, ref):
    out = op(torch.tensor(A))
    expected = np.asarray(ref(A))
    np.testing.assert_allclose(np.asarray(out.tolist()), expected, rtol=1e-5, atol=1e-6)


def test_type_promotion():
    i = torch.tensor([1, 2])
    f = torch.tensor([1.0, 2.0])
    assert (i + 1).dtype is torch.int64 and (i + 1.5).dtype is torch.float32
    assert (i / 2).dtype is torch.float32 and (f * 2).dtype is torch.float32
    assert (f + torch.tensor(1.0, dtype=torch.float64)).dtype is torch.float32  # 0-dim
    assert (f + torch.ones(2, dtype=torch.float64)).dtype is torch.float64
    assert (i + torch.tensor(1.5, dtype=torch.float64)).dtype is torch.float64
    assert (i > 1).dtype is torch.bool and (i == i).tolist() == [True, True]
    assert torch.tensor([True, False]).sum().item() == 1
    assert torch.exp(i).dtype is torch.float32
    with pytest.raises(RuntimeError, match="mean\\(\\): could not infer output dtype. Input "
                                           "dtype must be either a floating point or complex "
                                           "dtype. Got: Long"):
        i.mean()


def test_tensors_are_hashable_by_identity():
    a, b = torch.ones(1), torch.ones(1)
    assert len({a, b}) == 2 and {a: 1}[a] == 1


# -- node names ---------------------------------------------------------------------------------

NAMES = [
    (lambda x: x * 2, "MulBackward0"), (lambda x: x + x, "AddBackward0"),
    (lambda x: x - 1, "SubBackward0"), (lambda x: 1 - x, "RsubBackward1"),
    (lambda x: x / 2, "DivBackward0"), (lambda x: -x, "NegBackward0"),
    (lambda x: x ** 2, "PowBackward0"), (lambda x: x ** x, "PowBackward1"),
    (lambda x: 2 ** x, "PowBackward2"), (lambda x: x.sum(), "SumBackward0"),
    (lambda x: x.sum(0), "SumBackward1"), (lambda x: x.mean(), "MeanBackward0"),
    (lambda x: x.mean(1), "MeanBackward1"), (lambda x: x.max(), "MaxBackward1"),
    (lambda x: x.max(0)[0], "MaxBackward0"), (lambda x: x.min(), "MinBackward1"),
    (lambda x: x.exp(), "ExpBackward0"), (lambda x: x.log(), "LogBackward0"),
    (lambda x: x.tanh(), "TanhBackward0"), (lambda x: x.sigmoid(), "SigmoidBackward0"),
    (lambda x: x.relu(), "ReluBackward0"), (lambda x: F.relu(x), "ReluBackward0"),
    (lambda x: x.sqrt(), "SqrtBackward0"), (lambda x: x.abs(), "AbsBackward0"),
    (lambda x: x.clamp(min=0), "ClampBackward1"), (lambda x: x @ x.t(), "MmBackward0"),
    (lambda x: x.mm(x.t()), "MmBackward0"), (lambda x: x[0] @ x[1], "DotBackward0"),
    (lambda x: x @ x[0], "MvBackward0"), (lambda x: x.t(), "TBackward0"),
    (lambda x: x.view(-1), "ViewBackward0"), (lambda x: x.reshape(3, 2), "ViewBackward0"),
    (lambda x: x.transpose(0, 1), "TransposeBackward0"), (lambda x: x.permute(1, 0), "PermuteBackward0"),
    (lambda x: x.T, "PermuteBackward0"), (lambda x: x[None].squeeze(), "SqueezeBackward0"),
    (lambda x: x[None].squeeze(0), "SqueezeBackward1"), (lambda x: x.unsqueeze(0), "UnsqueezeBackward0"),
    (lambda x: torch.cat([x, x]), "CatBackward0"), (lambda x: torch.stack([x, x]), "StackBackward0"),
    (lambda x: x.split(1)[0], "SplitBackward0"), (lambda x: x.split([1, 1])[0], "SplitWithSizesBackward0"),
    (lambda x: x[0], "SelectBackward0"), (lambda x: x[:, 1:], "SliceBackward0"),
    (lambda x: x[torch.tensor([0])], "IndexBackward0"), (lambda x: x.clone(), "CloneBackward0"),
    (lambda x: torch.where(x > 0, x, x * 0), "WhereBackward0"), (lambda x: x.sort()[0], "SortBackward0"),
    (lambda x: x.expand(2, 2, 3), "ExpandBackward0"), (lambda x: x.cumsum(0), "CumsumBackward0"),
    (lambda x: x.var(), "VarBackward0"), (lambda x: x.std(), "StdBackward0"),
    (lambda x: x.prod(), "ProdBackward0"), (lambda x: F.softmax(x, 1), "SoftmaxBackward0"),
    (lambda x: F.log_softmax(x, 1), "LogSoftmaxBackward0"),
    (lambda x: F.cross_entropy(x, torch.tensor([0, 1])), "NllLossBackward0"),
    (lambda x: F.mse_loss(x, torch.zeros(2, 3)), "MseLossBackward0"),
    (lambda x: F.linear(x, torch.ones(4, 3), torch.ones(4)), "AddmmBackward0"),
    (lambda x: F.linear(x, torch.ones(4, 3)), "MmBackward0"),
    (lambda x: x.gather(1, torch.tensor([[0], [1]])), "GatherBackward0"),
    (lambda x: x.to(torch.float64), "ToCopyBackward0"), (lambda x: torch.maximum(x, x), "MaximumBackward0"),
    (lambda x: x.norm(), "LinalgVectorNormBackward0"), (lambda x: x.logsumexp(0), "LogsumexpBackward0"),
    (lambda x: x.flip(0), "FlipBackward0"), (lambda x: x.repeat(2, 1), "RepeatBackward0"),
]


@pytest.mark.parametrize("op,name", NAMES)
def test_grad_fn_names_are_pytorchs(op, name):
    x = torch.tensor([[0.5, 1.0, 2.0], [1.5, 0.25, 0.75]], requires_grad=True)
    assert op(x).grad_fn.name() == name


def test_legacy_constructors():
    assert torch.Tensor([1, 2]).dtype is torch.float32
    assert torch.Tensor(2, 3).shape == (2, 3)
    assert torch.LongTensor([1, 2]).dtype is torch.int64
    assert torch.FloatTensor(2).tolist() == [0.0, 0.0]
    assert isinstance(torch.Tensor([1.0]), torch.Tensor)


def test_relu_keeps_nan_and_has_zero_gradient_at_zero():
    """PyTorch's relu is clamp_min(x, 0) (nan stays nan) and its backward is
    threshold_backward (gradient 0 at x == 0, passed through at nan)."""
    x = torch.tensor([-1.0, 0.0, 2.0, float("nan")], requires_grad=True)
    y = torch.relu(x)
    np.testing.assert_array_equal(y.detach().numpy(), [0.0, 0.0, 2.0, np.nan])
    y.backward(torch.ones(4))
    np.testing.assert_array_equal(x.grad.numpy(), [0.0, 0.0, 1.0, 1.0])


def test_every_is_flag_and_size_keyword_of_pytorch():
    """Every ``is_*`` attribute of PyTorch's tensors exists with PyTorch's value for a
    dense CPU tensor; the factories take ``size=`` as PyTorch's do."""
    real = pytest.importorskip("torch")
    if not hasattr(real, "tensor"):
        pytest.skip("PyTorch is not installed")
    ours, theirs = torch.ones(1), real.ones(1)  # (one element: is_nonzero answers)
    for name in (n for n in dir(theirs) if n.startswith("is_")):
        value = getattr(theirs, name)
        if callable(value):
            if name in ("is_set_to", "is_same_size"):
                assert getattr(ours, name)(ours) == value(theirs), name
            elif name == "is_coalesced":
                with pytest.raises(RuntimeError, match="expected sparse coordinate tensor"):
                    ours.is_coalesced()
            else:
                assert getattr(ours, name)() == value(), name
        else:
            assert getattr(ours, name) == value, name
    for factory in ("empty", "zeros", "ones", "rand", "randn"):
        assert getattr(torch, factory)(size=(2, 3)).shape == (2, 3)
    with pytest.raises(TypeError, match="multiple values for argument 'size'"):
        torch.zeros(2, size=(3,))
