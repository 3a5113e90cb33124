"""nn layers against real PyTorch: normalisation (running statistics over several steps),
embedding, dropout, activations, containers, conv/pool modules (parameters copied from
PyTorch's modules: values, input and parameter gradients, node names, reprs, state_dict
keys), and initialisation bounds."""
import math
import warnings

import numpy as np
import pytest

RNG = np.random.RandomState(0)


def rand(*shape):
    return RNG.uniform(-1, 1, shape)


def twin(peer, make):
    """The same module in both libraries, our parameters and buffers copied from PyTorch's."""
    real, ours = make(peer.real), make(peer.ours)
    state = {k: peer.ours.tensor(v.detach().numpy()) for k, v in real.state_dict().items()}
    ours.load_state_dict(state)
    assert list(ours.state_dict()) == list(real.state_dict())
    assert repr(ours) == repr(real)
    return real, ours


def compare_module(peer, make, *inputs, train=True, steps=1, rtol=1e-7, call=None):
    real, ours = twin(peer, make)
    for m in (real, ours):
        m.train(train)
        for p in m.parameters():
            p.data = p.data.double()
        for name, b in list(m.named_buffers()):
            if b is not None and b.is_floating_point():
                m.get_submodule(name.rpartition(".")[0])._buffers[name.rpartition(".")[2]] = \
                    b.double()
    pick = {peer.real: real, peer.ours: ours}
    call = call or (lambda m, *a: m(*a))
    for _ in range(steps):
        for m in (real, ours):
            m.zero_grad()
        peer.check(lambda T, *a: call(pick[T], *a), *inputs, rtol=rtol)
        for (n1, p1), (n2, p2) in zip(real.named_parameters(), ours.named_parameters()):
            assert n1 == n2
            if p1.grad is not None:
                np.testing.assert_allclose(p2.grad.numpy(), p1.grad.numpy(), rtol=rtol,
                                           atol=1e-9, err_msg=n1)
        for (n1, b1), (n2, b2) in zip(real.named_buffers(), ours.named_buffers()):
            np.testing.assert_allclose(b2.numpy(), b1.numpy(), rtol=rtol, atol=1e-9,
                                       err_msg=n1)
    return real, ours


@pytest.mark.parametrize("kw", [dict(), dict(momentum=None), dict(affine=False),
                                dict(track_running_stats=False), dict(momentum=0.3, eps=1e-3)])
@pytest.mark.parametrize("train", [True, False])
def test_batchnorm2d(peer, kw, train):
    compare_module(peer, lambda T: T.nn.BatchNorm2d(3, **kw), rand(4, 3, 5, 2), train=train,
                   steps=3)


def test_batchnorm1d_two_and_three_dims(peer):
    compare_module(peer, lambda T: T.nn.BatchNorm1d(4), rand(6, 4), steps=2)
    compare_module(peer, lambda T: T.nn.BatchNorm1d(4, momentum=None), rand(3, 4, 5), steps=3)


def test_norm_errors_are_pytorchs(peer):
    peer.raises(lambda T: T.nn.functional.batch_norm(T.zeros(1, 4), T.zeros(4), T.ones(4),
                                                     training=True))
    peer.raises(lambda T: T.nn.BatchNorm2d(4)(T.zeros(2, 4, 3)))
    peer.raises(lambda T: T.nn.BatchNorm1d(4)(T.zeros(2, 4, 3, 3)))
    peer.raises(lambda T: T.nn.functional.batch_norm(T.zeros(2, 4, 3), T.zeros(3), T.ones(3)))
    peer.raises(lambda T: T.nn.functional.layer_norm(T.zeros(2, 4, 8), (7,)))
    peer.raises(lambda T: T.nn.functional.group_norm(T.zeros(2, 4, 8), 3))
    peer.raises(lambda T: T.nn.functional.rms_norm(T.zeros(2, 4, 8), (7,)))
    peer.raises(lambda T: T.nn.GroupNorm(3, 4))


@pytest.mark.parametrize("make", [
    lambda T: T.nn.LayerNorm(5), lambda T: T.nn.LayerNorm((4, 5), elementwise_affine=False),
    lambda T: T.nn.LayerNorm(5, bias=False, eps=1e-3), lambda T: T.nn.GroupNorm(2, 4),
    lambda T: T.nn.GroupNorm(4, 4, affine=False), lambda T: T.nn.RMSNorm(5),
    lambda T: T.nn.RMSNorm((4, 5), eps=1e-4), lambda T: T.nn.InstanceNorm1d(4, affine=True),
])
def test_layer_group_rms_instance_norms(peer, make):
    compare_module(peer, make, rand(3, 4, 5))


def test_instance_norm_running_stats(peer):
    compare_module(peer, lambda T: T.nn.InstanceNorm2d(3, track_running_stats=True),
                   rand(2, 3, 4, 4), steps=2)


def test_embedding(peer):
    idx = np.array([[1, 3, 0], [3, 3, 2]])
    compare_module(peer, lambda T: T.nn.Embedding(5, 3), idx)
    compare_module(peer, lambda T: T.nn.Embedding(5, 3, padding_idx=3), idx)
    compare_module(peer, lambda T: T.nn.Embedding(5, 3, padding_idx=-2,
                                                  scale_grad_by_freq=True), idx)
    real, ours = compare_module(peer, lambda T: T.nn.Embedding(5, 3, max_norm=0.5), idx)
    np.testing.assert_allclose(ours.weight.detach().numpy(), real.weight.detach().numpy())
    pre = peer.ours.tensor(rand(4, 2))
    e = peer.ours.nn.Embedding.from_pretrained(pre)
    assert not e.weight.requires_grad and repr(e) == "Embedding(4, 2)"
    assert peer.ours.nn.Embedding(4, 2, padding_idx=1).weight[1].abs().sum().item() == 0


def test_embedding_errors_are_pytorchs(peer):
    peer.raises(lambda T: T.nn.functional.embedding(T.tensor([5]), T.zeros(4, 3)))
    peer.raises(lambda T: T.nn.functional.embedding(T.tensor([1.0]), T.zeros(4, 3)))
    peer.raises(lambda T: T.nn.Embedding(4, 3, padding_idx=4))


@pytest.mark.parametrize("name,shape", [("dropout", (50, 40)), ("dropout1d", (30, 20, 8)),
                                        ("dropout2d", (20, 30, 3, 3)),
                                        ("dropout3d", (10, 30, 2, 2, 2)),
                                        ("alpha_dropout", (50, 40))])
def test_dropout_family(peer, name, shape):
    T = peer.ours
    x = T.ones(*shape, requires_grad=True)
    y = getattr(T.nn.functional, name)(x, 0.3, training=True)
    assert y.grad_fn.name() == ("AddBackward0" if name == "alpha_dropout" else "MulBackward0")
    kept = (y != 0) if name != "alpha_dropout" else (y > 0)
    rate = 1 - kept.float().mean().item()
    assert 0.2 < rate < 0.4
    if name.startswith("dropout") and name != "dropout":
        per_channel = kept.reshape(shape[0], shape[1], -1).float()
        assert ((per_channel.amin(-1) == per_channel.amax(-1)).all()).item()
    if name != "alpha_dropout":
        np.testing.assert_allclose(np.unique(y.detach().numpy()), [0.0, 1 / 0.7], rtol=1e-6)
    assert getattr(T.nn.functional, name)(x, 0.3, training=False) is x
    peer.raises(lambda T: getattr(T.nn.functional, name)(T.zeros(*shape), 1.5))


def test_dropout_modules_and_warnings(peer):
    for T in (peer.real, peer.ours):
        assert repr(T.nn.Dropout2d(0.2)) == "Dropout2d(p=0.2, inplace=False)"
        with pytest.warns(UserWarning, match="Received a 3D input to dropout2d"):
            T.nn.functional.dropout2d(T.ones(2, 3, 4))
    peer.raises(lambda T: T.nn.functional.dropout1d(T.ones(2, 3, 4, 5)))


ACTIVATIONS = [
    ("ELU", dict(alpha=0.5)), ("CELU", dict(alpha=1.5)), ("SELU", {}), ("ReLU6", {}),
    ("Hardtanh", dict(min_val=-0.5, max_val=0.25)), ("Hardswish", {}), ("Hardsigmoid", {}),
    ("Mish", {}), ("LogSigmoid", {}), ("Softsign", {}), ("Tanhshrink", {}),
    ("Softshrink", dict(lambd=0.3)), ("Hardshrink", dict(lambd=0.3)),
    ("Threshold", dict(threshold=0.1, value=-2.0)), ("GLU", dict(dim=1)),
    ("Softmin", dict(dim=1)), ("Softmax2d", {}), ("PReLU", {}), ("PReLU", dict(num_parameters=4)),
    ("GELU", dict(approximate="tanh")), ("SiLU", {}), ("Softplus", dict(beta=2.0)),
    ("LeakyReLU", dict(negative_slope=0.2)), ("Identity", {}), ("Flatten", {}),
    ("Unflatten", dict(dim=1, unflattened_size=(2, 2))),
]


@pytest.mark.parametrize("name,kw", ACTIVATIONS)
def test_activation_modules(peer, name, kw):
    compare_module(peer, lambda T: getattr(T.nn, name)(**kw), rand(2, 4, 3, 2) * 4)


def test_containers(peer):
    for T in (peer.real, peer.ours):
        lst = T.nn.ModuleList([T.nn.Linear(2, 2) for _ in range(3)] + [T.nn.ReLU()])
        lst.insert(1, T.nn.Tanh())
        del lst[0]
        lst.append(T.nn.Linear(2, 2))
        assert [k for k, _ in lst.named_parameters()] == ["1.weight", "1.bias", "2.weight",
                                                          "2.bias", "4.weight", "4.bias"]
        seq = T.nn.Sequential(T.nn.Linear(2, 3), T.nn.ReLU())
        seq.insert(1, T.nn.Tanh())
        assert seq.pop(1).__class__.__name__ == "Tanh" and len(seq) == 2
        d = T.nn.ModuleDict({"a": T.nn.ReLU()})
        d.update({"b": T.nn.Tanh()})
        assert list(d.keys()) == ["a", "b"] and "a" in d and d.pop("a") is not None
    for make in [
        lambda T: T.nn.ModuleList([T.nn.Linear(2, 2), T.nn.Linear(2, 2), T.nn.ReLU()]),
        lambda T: T.nn.ParameterList([T.nn.Parameter(T.zeros(2, 3)), T.zeros(4)]),
        lambda T: T.nn.ParameterDict({"b": T.zeros(1, 2), "a": T.nn.Parameter(T.zeros(2))}),
        lambda T: T.nn.Sequential(T.nn.Conv2d(1, 2, 3), T.nn.MaxPool2d(2)),
    ]:
        assert repr(make(peer.ours)) == repr(make(peer.real))
    pl = peer.ours.nn.ParameterList([peer.ours.zeros(2)])
    assert isinstance(pl[0], peer.ours.nn.Parameter) and pl[0].requires_grad
    pd = peer.ours.nn.ParameterDict({"b": peer.ours.zeros(1), "a": peer.ours.zeros(1)})
    assert [k for k, _ in pd.named_parameters()] == ["a", "b"]


@pytest.mark.parametrize("make,shape", [
    (lambda T: T.nn.Conv2d(3, 4, 3, padding=1), (2, 3, 6, 5)),
    (lambda T: T.nn.Conv2d(4, 6, (3, 2), stride=2, groups=2, bias=False), (2, 4, 7, 6)),
    (lambda T: T.nn.Conv2d(3, 4, 3, padding="same", padding_mode="reflect"), (2, 3, 6, 5)),
    (lambda T: T.nn.Conv2d(3, 4, 3, padding=2, padding_mode="circular"), (2, 3, 6, 5)),
    (lambda T: T.nn.Conv2d(3, 4, 2, padding=1, dilation=2, padding_mode="replicate"),
     (2, 3, 6, 5)),
    (lambda T: T.nn.Conv1d(3, 4, 3, stride=2), (2, 3, 9)),
    (lambda T: T.nn.Conv3d(2, 2, 2), (1, 2, 3, 3, 3)),
    (lambda T: T.nn.ConvTranspose2d(3, 4, 3, stride=2, output_padding=1), (2, 3, 4, 4)),
    (lambda T: T.nn.ConvTranspose1d(4, 2, 3, groups=2, dilation=2), (2, 4, 5)),
    (lambda T: T.nn.MaxPool2d(3, 2, 1, ceil_mode=True), (2, 3, 7, 7)),
    (lambda T: T.nn.AvgPool2d(3, 2, 1, count_include_pad=False), (2, 3, 7, 7)),
    (lambda T: T.nn.AvgPool1d(3), (2, 3, 9)),
    (lambda T: T.nn.AdaptiveAvgPool2d((2, 3)), (2, 3, 7, 7)),
    (lambda T: T.nn.AdaptiveMaxPool2d(3), (2, 3, 7, 7)),
    (lambda T: T.nn.LPPool2d(2, 2), (2, 3, 6, 6)),
    (lambda T: T.nn.Upsample(scale_factor=2, mode="bilinear"), (2, 3, 4, 4)),
    (lambda T: T.nn.Upsample(size=(5, 3)), (2, 3, 4, 4)),
    (lambda T: T.nn.ReflectionPad2d((1, 2, 0, 1)), (2, 3, 4, 4)),
    (lambda T: T.nn.ConstantPad1d(2, 1.5), (2, 3, 4)),
    (lambda T: T.nn.ZeroPad2d(1), (2, 3, 4, 4)),
    (lambda T: T.nn.Unfold(2, stride=2), (2, 3, 4, 4)),
])
def test_conv_and_pool_modules(peer, make, shape):
    compare_module(peer, make, rand(*shape))


def test_conv_transpose_output_size(peer):
    compare_module(peer, lambda T: T.nn.ConvTranspose2d(3, 2, 3, stride=2), rand(1, 3, 4, 4),
                   call=lambda m, x: m(x, output_size=(10, 10)))
    peer.raises(lambda T: T.nn.ConvTranspose2d(3, 2, 3, stride=2)(T.zeros(1, 3, 4, 4),
                                                                    output_size=(12, 12)))
    peer.raises(lambda T: T.nn.Conv2d(3, 4, 3, groups=2))
    peer.raises(lambda T: T.nn.Conv2d(4, 4, 3, stride=2, padding="same"))
    # PyTorch formats a set literal here: its order varies with the hash seed and the pyc
    with pytest.raises(ValueError, match=r"padding_mode must be one of \{.*\}, but got "
                                         r"padding_mode='foo'") as info:
        peer.ours.nn.Conv2d(4, 4, 3, padding_mode="foo")
    assert all(m in str(info.value) for m in ("'zeros'", "'reflect'", "'replicate'",
                                              "'circular'"))


def test_initialisation_bounds():
    import funcgrad.torch as torch
    torch.manual_seed(0)
    conv = torch.nn.Conv2d(8, 16, 3)
    fan_in = 8 * 9
    w, b = conv.weight.detach().numpy(), conv.bias.detach().numpy()
    bound = 1 / math.sqrt(fan_in)  # kaiming_uniform_(a=sqrt(5)) and the bias rule agree
    assert np.abs(w).max() <= bound and np.abs(w).max() > 0.9 * bound
    assert np.abs(b).max() <= bound
    assert abs(w.std() - bound / math.sqrt(3)) < 0.05 * bound  # the std of U(-b, b)
    t = torch.nn.ConvTranspose2d(8, 4, 3)  # PyTorch's fan_in of a transposed weight
    assert np.abs(t.weight.detach().numpy()).max() <= 1 / math.sqrt(4 * 9)
    mha = torch.nn.MultiheadAttention(8, 2)
    assert mha.in_proj_bias.abs().sum().item() == 0
    assert np.abs(mha.in_proj_weight.detach().numpy()).max() <= math.sqrt(6 / (8 + 24))


def test_legacy_warnings_are_filtered_only_by_the_caller():
    import funcgrad.torch as torch
    with warnings.catch_warnings(record=True) as seen:
        warnings.simplefilter("always")
        torch.nn.MSELoss(size_average=False)
    assert "reduction='sum'" in str(seen[0].message)
