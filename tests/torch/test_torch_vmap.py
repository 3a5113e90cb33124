"""funcgrad.torch.vmap / torch.func.vmap against PyTorch's: in_dims/out_dims, PyTorch's
error texts, randomness modes, chunk_size, and the per-sample-gradients and
model-ensembling recipes of the torch.func tutorials, run as written."""
import numpy as np
import pytest

import funcgrad.torch as torch
from funcgrad.torch.func import functional_call, grad, stack_module_state, vmap

real = pytest.importorskip("torch")


def same(ours, theirs, tol=1e-6):
    np.testing.assert_allclose(ours.detach().numpy(), theirs.detach().numpy(), rtol=tol,
                               atol=tol)


def test_in_dims_and_out_dims_match_pytorch():
    rng = np.random.RandomState(0)
    x = rng.rand(3, 4).astype(np.float32)
    cases = [((0, 0), 0, rng.rand(3).astype(np.float32)),
             ((1, None), 1, rng.rand(3).astype(np.float32)),
             ((0, None), -1, rng.rand(4).astype(np.float32))]
    for in_dims, out_dims, y in cases:
        ours = torch.vmap(lambda a, b: a * b + a.sum(), in_dims=in_dims, out_dims=out_dims)(
            torch.tensor(x), torch.tensor(y))
        theirs = real.vmap(lambda a, b: a * b + a.sum(), in_dims=in_dims, out_dims=out_dims)(
            real.tensor(x), real.tensor(y))
        same(ours, theirs)


def _message(call, exc):
    with pytest.raises(exc) as info:
        call()
    return str(info.value)


@pytest.mark.parametrize("case", ["sizes", "dims", "rank", "out_none", "randomness", "none"])
def test_errors_match_pytorch(case):
    def f(x, y=None):
        return x

    def run(lib):
        a, b = lib.ones(2, 3), lib.ones(3, 3)
        calls = {"sizes": lambda: lib.vmap(lambda x, y: x + y)(a, b),
                 "dims": lambda: lib.vmap(f, in_dims=(0, 0))(a),
                 "rank": lambda: lib.vmap(f, in_dims=3)(a),
                 "out_none": lambda: lib.vmap(f, out_dims=None)(a),
                 "randomness": lambda: lib.vmap(f, randomness="bad")(a),
                 "none": lambda: lib.vmap(f, in_dims=None)(a)}
        return calls[case]
    exc = RuntimeError if case == "randomness" else ValueError
    ours, theirs = _message(run(torch), exc), _message(run(real), exc)
    if case == "dims":  # the tree specs print differently
        ours, theirs = ours.split(" in_dims has")[0], theirs.split(" in_dims has")[0]
    assert ours == theirs


def test_randomness_modes():
    x = torch.ones(2, 3)
    with pytest.raises(RuntimeError, match="randomness error mode"):
        torch.vmap(lambda v: v + torch.randn(3))(x)
    out = torch.vmap(lambda v: v + torch.randn(3), randomness="same")(x)
    same(out[0], out[1])
    with pytest.raises(RuntimeError, match="randomness='different' is not supported"):
        torch.vmap(lambda v: v + torch.randn(3), randomness="different")(x)
    same(torch.vmap(lambda v: v * 2, randomness="different")(x), 2 * x)


def test_chunk_size_gives_the_same_result():
    x = torch.arange(30.0).reshape(5, 6)
    for chunk in (1, 2, 5, 7):
        same(torch.vmap(lambda v: (v ** 2).sum(), in_dims=1, chunk_size=chunk)(x),
             (x ** 2).sum(0))




_NETS: dict = {}


def _net(lib):
    """A two-layer net of the library's nn (one class per library)."""
    if lib in _NETS:
        return _NETS[lib]()

    class Net(lib.nn.Module):
        def __init__(self):
            super().__init__()
            self.fc1 = lib.nn.Linear(8, 16)
            self.fc2 = lib.nn.Linear(16, 4)

        def forward(self, x):
            return self.fc2(self.fc1(x).relu())
    _NETS[lib] = Net
    return Net()


def _copy_into(ours, theirs):
    for (_, p), (_, q) in zip(ours.named_parameters(), theirs.named_parameters()):
        with real.no_grad():
            q.copy_(real.tensor(p.detach().numpy()))


def test_per_sample_gradients_recipe():
    """The torch.func tutorial's per-sample gradients, as written, against PyTorch."""
    torch.manual_seed(0)
    model, ref = _net(torch), _net(real)
    _copy_into(model, ref)
    data = np.random.RandomState(2).rand(6, 8).astype(np.float32)
    targets = np.random.RandomState(3).randint(0, 4, 6)

    def recipe(lib, module, fgrad, fvmap, fcall):
        params = {k: v.detach() for k, v in module.named_parameters()}
        buffers = {k: v.detach() for k, v in module.named_buffers()}

        def compute_loss(params, buffers, sample, target):
            batch = sample.unsqueeze(0)
            targets = target.unsqueeze(0)
            predictions = fcall(module, (params, buffers), (batch,))
            return lib.nn.functional.cross_entropy(predictions, targets)
        ft_compute_sample_grad = fvmap(fgrad(compute_loss), in_dims=(None, None, 0, 0))
        return ft_compute_sample_grad(params, buffers, lib.tensor(data), lib.tensor(targets))
    ours = recipe(torch, model, grad, vmap, functional_call)
    theirs = recipe(real, ref, real.func.grad, real.func.vmap, real.func.functional_call)
    assert set(ours) == set(theirs)
    for k in ours:
        same(ours[k], theirs[k], 1e-5)


def test_model_ensembling_recipe():
    """The torch.func tutorial's model ensembling, as written, against PyTorch."""
    models = [_net(torch) for _ in range(3)]
    refs = [_net(real) for _ in range(3)]
    for m, r in zip(models, refs):
        _copy_into(m, r)
    minibatch = np.random.RandomState(4).rand(5, 8).astype(np.float32)

    def recipe(lib, nets, stack, fvmap, fcall):
        params, buffers = stack(nets)
        base = _net(lib).to("meta") if lib is real else _net(lib)

        def fmodel(params, buffers, x):
            return fcall(base, (params, buffers), (x,))
        return fvmap(fmodel, in_dims=(0, 0, None))(params, buffers, lib.tensor(minibatch))
    ours = recipe(torch, models, stack_module_state, vmap, functional_call)
    theirs = recipe(real, refs, real.func.stack_module_state, real.func.vmap,
                    real.func.functional_call)
    same(ours, theirs, 1e-5)
    for i, m in enumerate(models):
        same(ours[i], m(torch.tensor(minibatch)), 1e-6)


def test_stack_module_state_errors():
    with pytest.raises(RuntimeError, match="Expected at least one model"):
        stack_module_state([])
