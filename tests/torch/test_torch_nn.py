"""nn: Module registration and traversal, state dicts, Linear's initialisation, layers,
functional losses against numpy formulas."""
import copy
import math

import numpy as np
import pytest

import funcgrad.torch as torch
import funcgrad.torch.nn as nn
import funcgrad.torch.nn.functional as F


class Net(nn.Module):
    def __init__(self):
        super().__init__()
        self.backbone = nn.Sequential(nn.Linear(3, 4), nn.ReLU())
        self.head = nn.Linear(4, 2, bias=False)
        self.register_buffer("steps", torch.zeros(()))
        self.scale = 2.0

    def forward(self, x):
        return self.head(self.backbone(x)) * self.scale


def test_registration_and_traversal():
    net = Net()
    names = [n for n, _ in net.named_parameters()]
    assert names == ["backbone.0.weight", "backbone.0.bias", "head.weight"]
    assert [n for n, _ in net.named_children()] == ["backbone", "head"]
    assert [type(m).__name__ for m in net.modules()] == ["Net", "Sequential", "Linear", "ReLU",
                                                         "Linear"]
    assert [n for n, _ in net.named_buffers()] == ["steps"]
    assert net.head.bias is None and net.scale == 2.0
    assert all(isinstance(p, nn.Parameter) and p.requires_grad for p in net.parameters())
    with pytest.raises(AttributeError, match="'Net' object has no attribute 'missing'"):
        net.missing
    with pytest.raises(TypeError, match=r"cannot assign 'torch.FloatTensor' as parameter "
                                        r"'weight' \(torch.nn.Parameter or None expected\)"):
        net.head.weight = torch.ones(2, 4)


def test_shared_parameters_are_listed_once():
    lin = nn.Linear(2, 2)
    seq = nn.Sequential(lin, nn.ReLU(), lin)
    assert len(list(seq.parameters())) == 2


def test_train_eval_zero_grad_requires_grad():
    net = Net()
    net.eval()
    assert not net.training and not net.backbone[0].training
    net.train()
    assert net.backbone[1].training
    net(torch.randn(5, 3)).sum().backward()
    assert all(p.grad is not None for p in net.parameters())
    net.zero_grad()
    assert all(p.grad is None for p in net.parameters())
    net(torch.randn(5, 3)).sum().backward()
    g = net.head.weight.grad
    net.zero_grad(set_to_none=False)
    assert net.head.weight.grad is g and g.abs().sum().item() == 0
    net.requires_grad_(False)
    assert not any(p.requires_grad for p in net.parameters())


def test_state_dict_round_trip_and_errors():
    a, b = Net(), Net()
    sd = a.state_dict()
    # PyTorch's order: a module's own parameters and buffers, then its children's
    assert list(sd) == ["steps", "backbone.0.weight", "backbone.0.bias", "head.weight"]
    assert not any(t.requires_grad for t in sd.values())
    keys = b.load_state_dict(sd)
    assert repr(keys) == "<All keys matched successfully>"
    for (n1, p1), (n2, p2) in zip(a.named_parameters(), b.named_parameters()):
        assert n1 == n2 and p1.tolist() == p2.tolist()
    bad = dict(sd)
    del bad["head.weight"]
    bad["extra"] = torch.ones(1)
    with pytest.raises(RuntimeError) as e:
        b.load_state_dict(bad)
    assert str(e.value) == ('Error(s) in loading state_dict for Net:\n\tMissing key(s) in '
                            'state_dict: "head.weight". \n\tUnexpected key(s) in state_dict: '
                            '"extra". ')
    result = b.load_state_dict(bad, strict=False)
    assert result.missing_keys == ["head.weight"] and result.unexpected_keys == ["extra"]
    bad = dict(sd, **{"head.weight": torch.ones(3, 3)})
    with pytest.raises(RuntimeError, match=r"size mismatch for head.weight: copying a param "
                                           r"with shape torch.Size\(\[3, 3\]\) from "
                                           r"checkpoint, the shape in current model is "
                                           r"torch.Size\(\[2, 4\]\)."):
        b.load_state_dict(bad)


def test_state_dict_tensors_share_storage_with_parameters():
    lin = nn.Linear(2, 2)
    sd = lin.state_dict()
    with torch.no_grad():
        lin.weight.fill_(1.0)
    assert sd["weight"].tolist() == [[1.0, 1.0], [1.0, 1.0]]


def test_deepcopy_module():
    net = Net()
    twin = copy.deepcopy(net)
    assert twin.head.weight is not net.head.weight
    assert twin.head.weight.tolist() == net.head.weight.tolist()
    assert isinstance(twin.head.weight, nn.Parameter)
    with torch.no_grad():
        twin.head.weight.add_(1)
    assert twin.head.weight.tolist() != net.head.weight.tolist()


def test_linear_init_matches_pytorchs_bounds():
    torch.manual_seed(0)
    lin = nn.Linear(50, 40)
    bound = 1 / math.sqrt(50)  # kaiming_uniform_(a=sqrt(5)) gives 1/sqrt(fan_in)
    w, b = lin.weight.detach().numpy(), lin.bias.detach().numpy()
    assert w.shape == (40, 50) and b.shape == (40,)
    assert np.abs(w).max() <= bound and np.abs(w).max() > 0.9 * bound
    assert np.abs(b).max() <= bound
    assert abs(w.std() - bound / math.sqrt(3)) < 0.01  # U(-b, b) has std b/sqrt(3)
    assert repr(lin) == "Linear(in_features=50, out_features=40, bias=True)"


def test_linear_forward_forms():
    lin = nn.Linear(3, 2)
    W, b = lin.weight.detach().numpy(), lin.bias.detach().numpy()
    for shape, name in [((4, 3), "AddmmBackward0"), ((3,), "ViewBackward0"),
                        ((2, 4, 3), "ViewBackward0")]:
        x = torch.randn(*shape)
        out = lin(x)
        assert out.grad_fn.name() == name
        np.testing.assert_allclose(out.detach().numpy(), x.numpy() @ W.T + b, rtol=1e-5,
                                   atol=1e-6)


def test_sequential_and_module_repr():
    seq = nn.Sequential(nn.Linear(2, 3), nn.ReLU(), nn.Dropout(0.2), nn.Linear(3, 1))
    assert len(seq) == 4 and isinstance(seq[1], nn.ReLU) and len(seq[1:]) == 3
    assert repr(seq) == ("Sequential(\n"
                         "  (0): Linear(in_features=2, out_features=3, bias=True)\n"
                         "  (1): ReLU()\n"
                         "  (2): Dropout(p=0.2, inplace=False)\n"
                         "  (3): Linear(in_features=3, out_features=1, bias=True)\n"
                         ")")
    assert repr(Net()) == ("Net(\n"
                           "  (backbone): Sequential(\n"
                           "    (0): Linear(in_features=3, out_features=4, bias=True)\n"
                           "    (1): ReLU()\n"
                           "  )\n"
                           "  (head): Linear(in_features=4, out_features=2, bias=False)\n"
                           ")")


def test_dropout_train_and_eval():
    torch.manual_seed(0)
    drop = nn.Dropout(0.5)
    x = torch.ones(1000, requires_grad=True)
    y = drop(x)
    vals = set(np.round(y.detach().numpy(), 5).tolist())
    assert vals == {0.0, 2.0} and 0.4 < (y == 0).float().mean().item() < 0.6
    assert y.grad_fn.name() == "MulBackward0"  # PyTorch 2.13 on the CPU (native_dropout on GPUs)
    y.sum().backward()
    assert set(x.grad.numpy().tolist()) == {0.0, 2.0}
    drop.eval()
    assert drop(x) is x


def test_activation_modules():
    x = torch.tensor([-1.0, 0.0, 2.0])
    assert nn.ReLU()(x).tolist() == [0.0, 0.0, 2.0]
    np.testing.assert_allclose(nn.Tanh()(x).numpy(), np.tanh([-1.0, 0.0, 2.0]), rtol=1e-6)
    np.testing.assert_allclose(nn.Sigmoid()(x).numpy(), 1 / (1 + np.exp([1.0, 0.0, -2.0])),
                               rtol=1e-6)
    assert nn.LeakyReLU(0.1)(x).tolist() == pytest.approx([-0.1, 0.0, 2.0])
    np.testing.assert_allclose(nn.Softmax(dim=0)(x).sum().item(), 1.0, rtol=1e-6)


# -- functional losses ------------------------------------------------------------------------

LOGITS = np.array([[1.0, 2.0, 0.5], [0.1, -1.0, 3.0], [2.0, 2.0, 2.0], [0.0, 1.0, -1.0]],
                  dtype=np.float32)
TARGET = np.array([1, 2, 0, 2])


def np_log_softmax(a):
    a = a - a.max(1, keepdims=True)
    return a - np.log(np.exp(a).sum(1, keepdims=True))


def test_cross_entropy_and_nll_against_numpy():
    x, t = torch.tensor(LOGITS, requires_grad=True), torch.tensor(TARGET)
    logp = np_log_softmax(LOGITS)
    picked = logp[np.arange(4), TARGET]
    assert F.cross_entropy(x, t).item() == pytest.approx(-picked.mean(), rel=1e-6)
    assert F.cross_entropy(x, t, reduction="sum").item() == pytest.approx(-picked.sum(), rel=1e-6)
    np.testing.assert_allclose(F.cross_entropy(x, t, reduction="none").detach().numpy(),
                               -picked, rtol=1e-5)
    w = np.array([1.0, 2.0, 0.5], dtype=np.float32)
    expected = -(picked * w[TARGET]).sum() / w[TARGET].sum()
    assert F.cross_entropy(x, t, weight=torch.tensor(w)).item() == pytest.approx(expected,
                                                                                rel=1e-6)
    t_ignored = torch.tensor([1, -100, 0, 2])
    keep = [0, 2, 3]
    assert F.cross_entropy(x, t_ignored).item() == pytest.approx(-picked[keep].mean(), rel=1e-6)
    assert F.nll_loss(F.log_softmax(x, 1), t).item() == pytest.approx(-picked.mean(), rel=1e-6)
    F.cross_entropy(x, t).backward()
    probs = np.exp(logp)
    onehot = np.eye(3)[TARGET]
    np.testing.assert_allclose(x.grad.numpy(), (probs - onehot) / 4, rtol=1e-5, atol=1e-7)
    with pytest.raises(IndexError, match="Target 5 is out of bounds."):
        F.cross_entropy(x, torch.tensor([5, 0, 0, 0]))
    with pytest.raises(IndexError, match="Target -1 is out of bounds."):
        F.cross_entropy(x, torch.tensor([0, -1, -100, 0]))
    with pytest.raises(ValueError, match=r"Expected input batch_size \(4\) to match target "
                                         r"batch_size \(3\)\."):
        F.cross_entropy(x, torch.tensor([0, 1, 2]))
    with pytest.raises(RuntimeError, match="0D or 1D target tensor expected, multi-target "
                                           "not supported"):
        F.nll_loss(x, torch.tensor([[0], [1], [2], [0]]))


def test_nll_loss_spatial_and_unbatched():
    """(N, C, d...) inputs with (N, d...) targets, and a (C,) input with a 0-d target."""
    rng = np.random.RandomState(1)
    logp = rng.randn(2, 3, 4, 5).astype(np.float32)
    t = rng.randint(3, size=(2, 4, 5))
    t[0, 0, 0] = -100
    w = np.array([0.5, 1.0, 2.0], dtype=np.float32)
    n, i, j = np.meshgrid(*map(np.arange, t.shape), indexing="ij")
    valid = t != -100
    picked = logp[n, np.where(valid, t, 0), i, j]
    wt = w[np.where(valid, t, 0)] * valid
    x = torch.tensor(logp, requires_grad=True)
    loss = F.nll_loss(x, torch.tensor(t), weight=torch.tensor(w))
    assert loss.item() == pytest.approx(-(picked * wt).sum() / wt.sum(), rel=1e-5)
    np.testing.assert_allclose(F.nll_loss(x, torch.tensor(t), reduction="none").detach().numpy(),
                               -picked * valid, rtol=1e-6)
    loss.backward()
    expected = np.zeros_like(logp)
    expected[n, np.where(valid, t, 0), i, j] = -wt / wt.sum()
    np.testing.assert_allclose(x.grad.numpy(), expected, rtol=1e-5, atol=1e-7)
    v = torch.tensor(logp[0, :, 0, 0])
    assert F.nll_loss(v, torch.tensor(2)).item() == pytest.approx(-logp[0, 2, 0, 0])


def test_cross_entropy_label_smoothing_and_probabilities():
    x = torch.tensor(LOGITS)
    logp = np_log_softmax(LOGITS)
    eps = 0.1
    smooth = (1 - eps) * -logp[np.arange(4), TARGET] + eps * -logp.mean(1)
    assert F.cross_entropy(x, torch.tensor(TARGET), label_smoothing=eps).item() == \
        pytest.approx(smooth.mean(), rel=1e-5)
    probs = np.full((4, 3), 1 / 3, dtype=np.float32)
    assert F.cross_entropy(x, torch.tensor(probs)).item() == \
        pytest.approx((-(logp * probs).sum(1)).mean(), rel=1e-5)


def test_regression_and_binary_losses():
    a = np.array([0.2, 0.7, 0.9], dtype=np.float32)
    b = np.array([0.0, 1.0, 1.0], dtype=np.float32)
    x, y = torch.tensor(a), torch.tensor(b)
    assert F.mse_loss(x, y).item() == pytest.approx(((a - b) ** 2).mean(), rel=1e-6)
    assert F.l1_loss(x, y, reduction="sum").item() == pytest.approx(np.abs(a - b).sum(), rel=1e-6)
    bce = -(b * np.log(a) + (1 - b) * np.log(1 - a)).mean()
    assert F.binary_cross_entropy(x, y).item() == pytest.approx(bce, rel=1e-5)
    z = np.log(a / (1 - a))
    assert F.binary_cross_entropy_with_logits(torch.tensor(z), y).item() == \
        pytest.approx(bce, rel=1e-5)
    assert nn.MSELoss(reduction="sum")(x, y).item() == pytest.approx(((a - b) ** 2).sum(),
                                                                    rel=1e-6)


def test_clip_grad_norm_returns_the_norm_before_clipping():
    p1 = torch.tensor([3.0, 0.0], requires_grad=True)
    p2 = torch.tensor([0.0, 4.0], requires_grad=True)
    (p1 * torch.tensor([3.0, 0.0])).sum().backward()
    (p2 * torch.tensor([0.0, 4.0])).sum().backward()
    total = nn.utils.clip_grad_norm_([p1, p2], max_norm=1.0)
    assert total.item() == pytest.approx(5.0)
    new = np.concatenate([p1.grad.numpy(), p2.grad.numpy()])
    assert np.linalg.norm(new) == pytest.approx(1.0, rel=1e-5)
    np.testing.assert_allclose(new, [3 / 5, 0, 0, 4 / 5], rtol=1e-5)
    again = nn.utils.clip_grad_norm_([p1, p2], max_norm=10.0)  # no clipping now
    assert again.item() == pytest.approx(1.0, rel=1e-5)
    assert np.linalg.norm(np.concatenate([p1.grad.numpy(), p2.grad.numpy()])) == \
        pytest.approx(1.0, rel=1e-5)
    inf_norm = nn.utils.clip_grad_norm_([p1, p2], max_norm=0.5, norm_type=float("inf"))
    assert inf_norm.item() == pytest.approx(0.8, rel=1e-5)


def test_save_and_load_state_dict(tmp_path):
    net = Net()
    path = tmp_path / "net.pt"
    torch.save(net.state_dict(), path)
    other = Net()
    other.load_state_dict(torch.load(path, map_location="cpu"))
    x = torch.randn(2, 3)
    assert torch.allclose(other(x), net(x))
    p = nn.Parameter(torch.ones(2))
    torch.save({"p": p}, path)
    q = torch.load(path)["p"]
    assert isinstance(q, nn.Parameter) and q.requires_grad and q.tolist() == [1.0, 1.0]
