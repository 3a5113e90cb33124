"""The 'meta' device of funcgrad.torch, checked differentially: each program runs on real
PyTorch and on funcgrad.torch, and what it returns (a repr, shapes, devices) or the error
it raises (type and text) must agree.

Meta tensors have shapes and dtypes and no values: factories, modules built on the meta
device (or inside ``with torch.device('meta')``), forward and backward through them, views
(with PyTorch's strides and offsets) and in-place ops (versions counted, CopySlices
recorded), `to_empty`, `skip_init`, loading a state dict, custom ops' fakes, and the
refusals to read values.
"""
import warnings

import pytest

torch = pytest.importorskip("torch")
import funcgrad.torch as ftorch  # noqa: E402


def empty(T, *shape, **kw):
    return T.empty(*shape, device="meta", **kw)


def cnn_step(T):
    nn, F = T.nn, T.nn.functional
    m = nn.Sequential(nn.Conv2d(3, 8, 3, padding=1), nn.BatchNorm2d(8), nn.ReLU(),
                      nn.MaxPool2d(2), nn.Flatten(), nn.Linear(8 * 16 * 16, 10)).to("meta")
    out = m(empty(T, 4, 3, 32, 32))
    loss = F.cross_entropy(out, empty(T, 4, dtype=T.long))
    loss.backward()
    return out.shape, loss, m[0].weight.grad.shape, m[0].weight.grad.device


def inplace_through_view(T):
    w = empty(T, 4, 3, requires_grad=True)
    h = w * 2
    h[:2].mul_(3)
    h.sum().backward()
    return w.grad, h._version, type(h.grad_fn).__name__.replace("torch::autograd::", "")


def write_through_view(T):
    t = T.zeros(3, device="meta")
    t[:1].fill_(2.0)
    return t._version, t


def to_empty_then_init(T):
    with T.device("meta"):
        m = T.nn.Sequential(T.nn.Linear(3, 4), T.nn.ReLU(), T.nn.Linear(4, 2))
    assert m[0].weight.device == T.device("meta")
    m.to_empty(device="cpu")
    for layer in m:
        if hasattr(layer, "reset_parameters"):
            layer.reset_parameters()
    return m(T.ones(1, 3)).shape, m[0].weight.device, type(m[0].weight).__name__


def load_state_dict(T, assign):
    m, src = T.nn.Linear(3, 2, device="meta"), T.nn.Linear(3, 2)
    m.load_state_dict(src.state_dict(), assign=assign)
    return m.weight.device, m.weight.shape


def adam_step(T):
    m = T.nn.Linear(2, 2, device="meta")
    opt = T.optim.Adam(m.parameters())
    m(empty(T, 3, 2)).sum().backward()
    opt.step()
    return m.weight, opt.state[m.weight]["exp_avg"]


def encoder_layer(T):
    layer = T.nn.TransformerEncoderLayer(16, 2, 32, batch_first=True, device="meta")
    return layer(empty(T, 2, 5, 16)).shape


CASES = {
    "repr": lambda T: empty(T, 2, 3),
    "repr int64": lambda T: T.ones(2, dtype=T.int64, device="meta"),
    "repr requires_grad": lambda T: T.ones(2, device="meta", requires_grad=True),
    "facts": lambda T: (empty(T, 2, 3).is_meta, empty(T, 2).device, empty(T, 2).data_ptr(),
                        empty(T, 2, 3).untyped_storage().nbytes()),
    "0-dim cpu operand": lambda T: empty(T, 2, 3) + T.tensor(1.0),
    "cpu operand": lambda T: empty(T, 2, 3) + T.ones(2, 3),
    "item": lambda T: empty(T, 1).item(),
    "bool": lambda T: bool(empty(T, 1)),
    "float": lambda T: float(empty(T, 1)),
    "numpy": lambda T: empty(T, 2).numpy(),
    "tolist": lambda T: empty(T, 2).tolist(),
    "to cpu": lambda T: empty(T, 2).to("cpu"),
    "cpu()": lambda T: empty(T, 2).cpu(),
    "copy out": lambda T: T.ones(2).copy_(empty(T, 2)),
    "copy in": lambda T: empty(T, 2).copy_(T.ones(2)),
    "to meta": lambda T: T.ones(2).to("meta"),
    "clone": lambda T: empty(T, 2, 3).clone(),
    "inv": lambda T: T.linalg.inv(empty(T, 3, 3)),
    "cholesky": lambda T: T.linalg.cholesky(empty(T, 3, 3)),
    "solve": lambda T: T.linalg.solve(empty(T, 3, 3), empty(T, 3, 2)).shape,
    "randn": lambda T: T.randn(2, device="meta"),
    "arange": lambda T: T.arange(5, device="meta"),
    "tensor": lambda T: T.tensor([1.0, 2.0], device="meta"),
    "any": lambda T: empty(T, 2, 3).any(),
    "max": lambda T: empty(T, 2, 3).max(),
    "argmax": lambda T: empty(T, 4, 4).argmax(1),
    "where": lambda T: T.where(empty(T, 3) > 0, 1.0, 0.0),
    "index": lambda T: empty(T, 5, 3)[T.tensor([0, 2], device="meta")].shape,
    "gather": lambda T: empty(T, 5, 3).gather(0, T.zeros(2, 3, dtype=T.long,
                                                           device="meta")).shape,
    "matmul": lambda T: (empty(T, 2, 3) @ empty(T, 3, 4)).shape,
    "softmax": lambda T: T.softmax(empty(T, 2, 3), -1).shape,
    "cat": lambda T: T.cat([empty(T, 2, 3), empty(T, 2, 3)]).shape,
    "view": lambda T: (empty(T, 2, 3).view(6).shape, empty(T, 2, 3).t()._is_view()),
    "expand": lambda T: empty(T, 2, 3)[:1].expand(4, 3).shape,
    "mul_": lambda T: (lambda t: (t.mul_(2), t._version))(T.zeros(3, device="meta")),
    "uniform_": lambda T: empty(T, 3).uniform_(),
    "write through view": write_through_view,
    "in-place through view, backward": inplace_through_view,
    "backward": lambda T: (lambda w: ((w * 2).sum().backward(), w.grad))(
        empty(T, 3, requires_grad=True)),
    "zeros_like": lambda T: T.zeros_like(empty(T, 2, 3)),
    "empty_like cpu": lambda T: T.empty_like(empty(T, 2, 3), device="cpu").shape,
    "new_zeros": lambda T: empty(T, 2).new_zeros(4),
    "to float64": lambda T: empty(T, 2, 3).to(T.float64),
    "requires_grad_": lambda T: empty(T, 2, 3).requires_grad_(),
    "huge": lambda T: empty(T, 100000, 100000).numel(),
    "linear": lambda T: T.nn.Linear(4, 5, device="meta").weight,
    "linear forward": lambda T: T.nn.Linear(4, 5, device="meta")(empty(T, 2, 4)).shape,
    "huge linear": lambda T: T.nn.Linear(30000, 30000, device="meta").weight.shape,
    "init": lambda T: [f(empty(T, 300, 300)) for f in (
        T.nn.init.trunc_normal_, T.nn.init.orthogonal_, T.nn.init.kaiming_uniform_,
        T.nn.init.xavier_normal_, T.nn.init.eye_)],
    "module to cpu": lambda T: T.nn.Linear(2, 2, device="meta").to("cpu"),
    "to_empty": to_empty_then_init,
    "load_state_dict": lambda T: load_state_dict(T, False),
    "load_state_dict assign": lambda T: load_state_dict(T, True),
    "state_dict": lambda T: list(T.nn.Linear(2, 2, device="meta").state_dict().values()),
    "embedding": lambda T: T.nn.Embedding(10, 3, device="meta")(
        T.zeros(2, 4, dtype=T.long, device="meta")).shape,
    "layer norm": lambda T: T.nn.LayerNorm(8, device="meta")(empty(T, 2, 8)).shape,
    "attention": lambda T: T.nn.functional.scaled_dot_product_attention(
        *[empty(T, 2, 4, 5, 8)] * 3, is_causal=True).shape,
    "dropout": lambda T: T.nn.functional.dropout(empty(T, 4, 4), 0.5).shape,
    "bernoulli": lambda T: T.bernoulli(empty(T, 2, 3)),
    "multinomial": lambda T: T.multinomial(empty(T, 2, 5), 3),
    "cnn step": cnn_step,
    "encoder layer": encoder_layer,
    "adam step": adam_step,
}


def outcome(T, fn):
    """What ``fn(T)`` gives, as text: its repr, or its error's type and first line."""
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        try:
            return repr(fn(T))
        except Exception as e:  # noqa: BLE001 - the error is the outcome compared
            return f"{type(e).__name__}: {str(e).splitlines()[0]}"


@pytest.mark.parametrize("name", sorted(CASES))
def test_meta_device_as_pytorch(name):
    assert outcome(ftorch, CASES[name]) == outcome(torch, CASES[name])


def test_value_shaped_ops_refuse_on_meta():
    """PyTorch's refusal text for nonzero is its own long one; funcgrad's names the op."""
    for T in (torch, ftorch):
        with pytest.raises(NotImplementedError):
            T.nonzero(empty(T, 3))
    with pytest.raises(NotImplementedError, match="nonzero: attempted to run this operator "
                                                  "with Meta tensors"):
        ftorch.nonzero(empty(ftorch, 3))


META_VIEWS = {
    "t": lambda x: x.t(), "slice": lambda x: x[1:, ::2], "select": lambda x: x[1],
    "expand": lambda x: x[:, :1].expand(4, 3, 2), "unsqueeze": lambda x: x.unsqueeze(1),
    "diagonal": lambda x: x[0].diagonal(), "permute": lambda x: x.permute(2, 0, 1),
    "view of a view": lambda x: x.transpose(0, 2)[1:].narrow(1, 1, 2),
    "unfold": lambda x: x[0, 0].unfold(0, 2, 1),
}


@pytest.mark.parametrize("name", sorted(META_VIEWS))
def test_meta_views_have_pytorch_layouts(name):
    def layout(T):
        v = META_VIEWS[name](empty(T, 4, 3, 2))
        return v.shape, v.stride(), v.storage_offset(), v.is_contiguous(), v._is_view()
    assert outcome(ftorch, layout) == outcome(torch, layout)


def custom_op_on_meta(T):
    """A custom op runs its fake on meta tensors, and refuses without one."""
    import numpy as np

    @T.library.custom_op("fgtest_meta::numpy_sin", mutates_args=())
    def numpy_sin(x: T.Tensor) -> T.Tensor:
        return T.from_numpy(np.sin(x.numpy()))

    @T.library.custom_op("fgtest_meta::halves", mutates_args=())
    def halves(x: T.Tensor) -> tuple[T.Tensor, T.Tensor]:
        return x[:1].clone(), x[1:].clone()

    halves.register_fake(lambda x: (x.new_empty(1), x.new_empty(x.shape[0] - 1)))
    without_fake = outcome(T, lambda T: numpy_sin(empty(T, 3)))
    numpy_sin.register_fake(lambda x: T.empty_like(x))
    return (without_fake, outcome(T, lambda T: numpy_sin(empty(T, 3))),
            outcome(T, lambda T: halves(empty(T, 5))), outcome(T, lambda T: numpy_sin(
                T.ones(2))))


def test_custom_ops_on_meta_as_pytorch():
    assert custom_op_on_meta(ftorch) == custom_op_on_meta(torch)


def test_example_meta_device_plans_as_pytorch_and_trains():
    """examples/meta_device.py: the 368M-parameter plan agrees with PyTorch's; the small
    model, materialised off the meta device, learns."""
    import importlib.util
    import pathlib
    path = pathlib.Path(__file__).resolve().parents[2] / "examples" / "meta_device.py"
    spec = importlib.util.spec_from_file_location("example_meta_device", path)
    example = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(example)
    assert example.plan(ftorch) == example.plan(torch)
    trained = example.materialise_and_train(ftorch)
    assert trained["device"] == "cpu"
    assert trained["losses"][-1] < 0.9 * trained["losses"][0]


def test_skip_init_as_pytorch():
    for T in (torch, ftorch):
        m = T.nn.utils.skip_init(T.nn.Linear, 5, 1)
        assert (type(m.weight).__name__, m.weight.device, tuple(m.weight.shape)) == \
            ("Parameter", T.device("cpu"), (1, 5))
    cases = {"not a module": lambda T: T.nn.utils.skip_init(int),
             "no device arg": lambda T: T.nn.utils.skip_init(T.nn.ReLU)}
    for fn in cases.values():
        assert outcome(ftorch, fn) == outcome(torch, fn)
