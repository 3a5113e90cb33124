"""torch.optim's Adadelta, ASGD, NAdam, RAdam, Rprop, Adafactor, LBFGS and SparseAdam against
PyTorch: per-step losses and parameters, state_dict layout, loading PyTorch's state
dicts, defaults, repr and error texts."""
import numpy as np
import pytest

import funcgrad.torch as fg


RNG = np.random.default_rng(0)
W0, B0 = RNG.normal(size=(3, 4)), RNG.normal(size=3)
X, Y = RNG.normal(size=(6, 4)), RNG.normal(size=(6, 3))

CASES = [
    ("Adadelta", dict()),
    ("Adadelta", dict(lr=0.5, rho=0.8, eps=1e-5, weight_decay=0.1, maximize=True)),
    ("ASGD", dict(lr=0.05)),
    ("ASGD", dict(lr=0.05, lambd=1e-2, alpha=0.5, t0=3, weight_decay=0.1)),
    ("ASGD", dict(lr=0.05, t0=0, maximize=True)),
    ("NAdam", dict(lr=0.05)),
    ("NAdam", dict(lr=0.05, betas=(0.8, 0.95), weight_decay=0.1, momentum_decay=0.01)),
    ("NAdam", dict(lr=0.05, weight_decay=0.1, decoupled_weight_decay=True, maximize=True)),
    ("RAdam", dict(lr=0.05)),
    ("RAdam", dict(lr=0.05, betas=(0.5, 0.6), weight_decay=0.1)),  # rho_t > 5 at step 2
    ("RAdam", dict(lr=0.05, betas=(0.6, 0.7), weight_decay=0.1, decoupled_weight_decay=True,
                   maximize=True)),
    ("Rprop", dict(lr=0.05)),
    ("Rprop", dict(lr=0.2, etas=(0.3, 1.7), step_sizes=(1e-3, 0.3), maximize=True)),
    ("Adafactor", dict()),  # the (3, 4) weight factored, the bias a plain second moment
    ("Adafactor", dict(lr=0.3, beta2_decay=-0.5, eps=(1e-4, 1e-2), d=1.5, weight_decay=0.1,
                       maximize=True)),
]
IDS = [f"{n}-{i}" for i, (n, _) in enumerate(CASES)]


def _model(T, dtype):
    dt = getattr(T, dtype)
    return (T.tensor(W0, dtype=dt, requires_grad=True),
            T.tensor(B0, dtype=dt, requires_grad=True))


def _loss(T, w, b, k):
    x, y = T.tensor(X, dtype=w.dtype), T.tensor(Y, dtype=w.dtype)
    return ((x @ w.T + b - y * (1 + 0.1 * k)) ** 2).mean()


def _run(T, opt, w, b, steps, start=0):
    """Losses and parameters after each of ``steps`` steps."""
    out = []
    for k in range(start, start + steps):
        opt.zero_grad()
        loss = _loss(T, w, b, k)
        loss.backward()
        opt.step()
        out.append((loss.item(), w.detach().numpy().copy(), b.detach().numpy().copy()))
    return out


def _make(T, name, kw, dtype="float64"):
    w, b = _model(T, dtype)
    return w, b, getattr(T.optim, name)([{"params": [w]}, {"params": [b], "lr": 0.03}], **kw)


def _compare(got, want, rtol):
    for (l2, w2, b2), (l1, w1, b1) in zip(got, want):
        np.testing.assert_allclose(l2, l1, rtol=rtol)
        np.testing.assert_allclose(w2, w1, rtol=rtol, atol=rtol * 1e-2)
        np.testing.assert_allclose(b2, b1, rtol=rtol, atol=rtol * 1e-2)


def _layout(sd):
    def value(v):
        if hasattr(v, "detach"):
            return (str(v.dtype).replace("torch.", ""), tuple(v.shape))
        if isinstance(v, list):
            return [value(x) for x in v]
        return type(v).__name__
    state = {k: [(kk, value(vv)) for kk, vv in s.items()] for k, s in sd["state"].items()}
    return list(sd), state, [list(g.items()) for g in sd["param_groups"]]


def _to_fg(v):
    """A PyTorch state dict's values as funcgrad.torch's."""
    if hasattr(v, "detach"):
        return fg.tensor(v.detach().numpy().copy())
    if isinstance(v, dict):
        return {k: _to_fg(x) for k, x in v.items()}
    if isinstance(v, list):
        return [_to_fg(x) for x in v]
    return v


@pytest.mark.parametrize("dtype,rtol", [("float64", 1e-12), ("float32", 1e-5)])
@pytest.mark.parametrize("name,kw", CASES, ids=IDS)
def test_trajectory_and_state_dict_match_pytorch(real, name, kw, dtype, rtol):
    w1, b1, o1 = _make(real, name, kw, dtype)
    w2, b2, o2 = _make(fg, name, kw, dtype)
    _compare(_run(fg, o2, w2, b2, 10), _run(real, o1, w1, b1, 10), rtol)
    assert _layout(o2.state_dict()) == _layout(o1.state_dict())
    for k, s in o1.state_dict()["state"].items():
        for key, v in s.items():
            want = v.numpy()  # (float32: the gradients' matmuls round differently)
            np.testing.assert_allclose(o2.state_dict()["state"][k][key].numpy(), want,
                                       rtol=rtol, atol=rtol * np.abs(want).max(), err_msg=key)


@pytest.mark.parametrize("name,kw", CASES[1::2], ids=IDS[1::2])
def test_loading_a_pytorch_state_dict_continues_its_trajectory(real, name, kw):
    w1, b1, o1 = _make(real, name, kw)
    _run(real, o1, w1, b1, 4)
    sd = _to_fg(o1.state_dict())
    w2 = fg.tensor(w1.detach().numpy().copy(), requires_grad=True)
    b2 = fg.tensor(b1.detach().numpy().copy(), requires_grad=True)
    o2 = getattr(fg.optim, name)([{"params": [w2]}, {"params": [b2], "lr": 9.0}], **kw)
    o2.load_state_dict(sd)
    assert o2.param_groups[1]["lr"] == 0.03
    # the reference loads it too: loading casts scalar state (mu_product, eta...) to the
    # parameters' dtype, which changes later roundings
    o1.load_state_dict(o1.state_dict())
    _compare(_run(fg, o2, w2, b2, 4, start=4), _run(real, o1, w1, b1, 4, start=4), 1e-12)


NAMES = ["Adadelta", "ASGD", "NAdam", "RAdam", "Rprop", "LBFGS", "SparseAdam", "Adafactor",
         "Muon"]


@pytest.mark.parametrize("name", NAMES)
def test_defaults_and_repr_match_pytorch(real, name):
    shape = (2, 2) if name == "Muon" else (2,)  # (Muon takes matrices only)
    o1 = getattr(real.optim, name)([real.ones(*shape, requires_grad=True)])
    o2 = getattr(fg.optim, name)([fg.ones(*shape, requires_grad=True)])
    assert list(o2.defaults.items()) == list(o1.defaults.items())
    assert list(o2.param_groups[0]) == list(o1.param_groups[0])
    assert repr(o2) == repr(o1)


BAD = [
    ("Adadelta", dict(lr=-1)), ("Adadelta", dict(rho=1.5)), ("Adadelta", dict(eps=-1)),
    ("Adadelta", dict(weight_decay=-1)), ("ASGD", dict(lr=-0.1)),
    ("ASGD", dict(weight_decay=-1)), ("NAdam", dict(betas=(1.0, 0.9))),
    ("NAdam", dict(betas=(0.9, -0.1))), ("NAdam", dict(momentum_decay=-1)),
    ("NAdam", dict(eps=-1)), ("RAdam", dict(weight_decay=-2)), ("RAdam", dict(lr=-2)),
    ("Rprop", dict(etas=(1.1, 1.2))), ("Rprop", dict(etas=(0.5, 0.9))),
    ("LBFGS", dict(lr=-1)), ("SparseAdam", dict(lr=0.0)), ("SparseAdam", dict(eps=0.0)),
    ("SparseAdam", dict(betas=(0.9, 1.0))), ("Adafactor", dict(lr=-1)),
    ("Adafactor", dict(beta2_decay=0.1)), ("Adafactor", dict(eps=(-1, 1e-3))),
    ("Adafactor", dict(eps=(None, -1))), ("Adafactor", dict(d=0.5)),
    ("Adafactor", dict(weight_decay=-1)),
]


@pytest.mark.parametrize("name,kw", BAD)
def test_validation_errors_match_pytorch(real, name, kw):
    with pytest.raises(Exception) as want:
        getattr(real.optim, name)([real.ones(2, requires_grad=True)], **kw)
    with pytest.raises(type(want.value)) as got:
        getattr(fg.optim, name)([fg.ones(2, requires_grad=True)], **kw)
    assert str(got.value) == str(want.value)


# -- LBFGS ------------------------------------------------------------------------------

def _rosenbrock(T, x):
    return (100 * (x[1:] - x[:-1] ** 2) ** 2 + (1 - x[:-1]) ** 2).sum()


def _least_squares(T, x):
    a = T.tensor(X, dtype=x.dtype)
    return ((a @ x[:4] - T.tensor(Y[:, 0], dtype=x.dtype)) ** 2).sum() + (x[4:] ** 2).sum()


LBFGS_CASES = [
    (_rosenbrock, dict(lr=1, max_iter=5)),
    (_rosenbrock, dict(lr=1, max_iter=8, history_size=3, line_search_fn="strong_wolfe")),
    (_rosenbrock, dict(lr=0.5, max_iter=20, line_search_fn="strong_wolfe")),
    (_least_squares, dict(lr=0.3, max_iter=4, max_eval=6)),
    (_least_squares, dict(max_iter=3, line_search_fn="strong_wolfe", tolerance_change=1e-6)),
]


def _lbfgs(T, f, kw, dtype, steps=5):
    x = T.tensor([-1.2, 1.0, 0.5, -0.3, 0.8, 0.1], dtype=getattr(T, dtype),
                 requires_grad=True)
    opt = T.optim.LBFGS([x], **kw)
    calls = []

    def closure():
        opt.zero_grad()
        loss = f(T, x)
        loss.backward()
        calls.append(loss.item())
        return loss
    losses = [opt.step(closure).item() for _ in range(steps)]
    return losses, calls, x.detach().numpy().copy(), opt


# float32 on the least-squares problems only: the facade's float32 ``sum`` adds in
# another order than PyTorch's (161.0 vs 161.00002 at Rosenbrock's start), which
# Rosenbrock's valley amplifies over the iterations
LBFGS_RUNS = [(f, kw, dtype, rtol) for f, kw in LBFGS_CASES
              for dtype, rtol in [("float64", 1e-10), ("float32", 1e-5)]
              if dtype == "float64" or f is _least_squares]


@pytest.mark.parametrize("f,kw,dtype,rtol", LBFGS_RUNS,
                         ids=[f"{f.__name__}-{i}-{dtype}"
                              for i, (f, _, dtype, _) in enumerate(LBFGS_RUNS)])
def test_lbfgs_matches_pytorch(real, f, kw, dtype, rtol):
    l1, c1, x1, o1 = _lbfgs(real, f, kw, dtype)
    l2, c2, x2, o2 = _lbfgs(fg, f, kw, dtype)
    assert len(c2) == len(c1)  # the same closure calls (line-search evaluations)
    np.testing.assert_allclose(l2, l1, rtol=rtol)
    np.testing.assert_allclose(c2, c1, rtol=rtol, atol=rtol)
    np.testing.assert_allclose(x2, x1, rtol=rtol, atol=rtol)
    s1, s2 = o1.state_dict()["state"][0], o2.state_dict()["state"][0]
    assert list(s2) == list(s1)
    assert (s2["func_evals"], s2["n_iter"]) == (s1["func_evals"], s1["n_iter"])
    assert [len(s2[k]) for k in ("old_dirs", "old_stps", "ro", "al")] == \
        [len(s1[k]) for k in ("old_dirs", "old_stps", "ro", "al")]


def test_lbfgs_loads_a_pytorch_state_dict(real):
    kw = dict(max_iter=3, history_size=4, line_search_fn="strong_wolfe")
    _, _, x1, o1 = _lbfgs(real, _rosenbrock, kw, "float64", steps=2)
    x2 = fg.tensor(x1, requires_grad=True)
    o2 = fg.optim.LBFGS([x2], **kw)
    o2.load_state_dict(_to_fg(o1.state_dict()))
    xr = o1.param_groups[0]["params"][0]
    for T, x, opt in ((real, xr, o1), (fg, x2, o2)):
        def closure(T=T, x=x, opt=opt):
            opt.zero_grad()
            loss = _rosenbrock(T, x)
            loss.backward()
            return loss
        opt.step(closure)
    np.testing.assert_allclose(x2.detach().numpy(), xr.detach().numpy(), rtol=1e-10)


def test_lbfgs_errors_match_pytorch(real):
    for T in (real, fg):
        a, b = T.ones(2, requires_grad=True), T.ones(2, requires_grad=True)
        with pytest.raises(ValueError, match=r"LBFGS doesn't support per-parameter options "
                                             r"\(parameter groups\)"):
            T.optim.LBFGS([{"params": [a]}, {"params": [b]}])
        opt = T.optim.LBFGS([a], line_search_fn="armijo")

        def closure(a=a, opt=opt):
            opt.zero_grad()
            loss = (a ** 2).sum()
            loss.backward()
            return loss
        with pytest.raises(RuntimeError, match="only 'strong_wolfe' is supported"):
            opt.step(closure)


# -- SparseAdam: dense gradients are refused, as PyTorch refuses them -----------------------

def test_sparse_adam_refuses_dense_gradients_as_pytorch(real):
    for T in (real, fg):
        emb = T.nn.Embedding(5, 3)
        opt = T.optim.SparseAdam(emb.parameters(), lr=0.1)
        assert opt.step() is None  # no gradient yet: nothing to refuse
        emb(T.tensor([1, 3])).sum().backward()
        with pytest.raises(RuntimeError, match="SparseAdam does not support dense gradients, "
                                               "please consider Adam instead"):
            opt.step()
        assert opt.state_dict()["state"] == {}


def test_every_pytorch_optimizer_and_scheduler_is_here(real):
    """All of PyTorch's ``torch.optim`` optimizers named in this module, and every
    ``lr_scheduler`` class, exist in the facade."""
    assert set(real.optim.lr_scheduler.__all__) <= set(fg.optim.lr_scheduler.__all__)
    assert set(NAMES) <= set(fg.optim.__all__)


# -- Muon (2-D parameters only; its Newton-Schulz iteration runs in bfloat16) -------------

MUON_CASES = [dict(lr=0.02), dict(lr=0.05, nesterov=False, weight_decay=0.0,
                                  adjust_lr_fn="match_rms_adamw"),
              dict(lr=0.03, momentum=0.5, ns_steps=3, ns_coefficients=(2.0, -1.5, 0.5))]


@pytest.mark.parametrize("shape", [(3, 4), (4, 3)])
@pytest.mark.parametrize("kw", MUON_CASES)
def test_muon_matches_pytorch(real, kw, shape):
    runs = []
    for T in (real, fg):
        w = T.tensor(W0.reshape(shape), dtype=T.float32,
                     requires_grad=True)
        opt = T.optim.Muon([w], **kw)
        steps = []
        for k in range(6):  # (elementwise gradients, exact in both: bfloat16 amplifies ulps)
            opt.zero_grad()
            target = T.tensor(np.cos(k + W0.reshape(shape)), dtype=T.float32)
            ((w - target) ** 2).sum().backward()
            opt.step()
            steps.append(w.detach().numpy().copy())
        runs.append((np.array(steps), opt.state_dict()["state"][0]["momentum_buffer"].numpy(),
                     repr(opt)))
    np.testing.assert_allclose(runs[1][0], runs[0][0], rtol=1e-6, atol=1e-7)
    np.testing.assert_allclose(runs[1][1], runs[0][1], rtol=1e-6, atol=1e-7)
    assert runs[1][2] == runs[0][2]


def test_muon_orthogonalizes_as_pytorch(real):
    """Newton-Schulz in bfloat16, every bit PyTorch's (its norms and addmm accumulate in
    float32 and round once; so do the facade's)."""
    from torch.optim._muon import _zeropower_via_newtonschulz as theirs
    from funcgrad.torch.optim.muon import orthogonalized as ours
    for seed in range(20):
        g = np.random.default_rng(seed).normal(size=(6, 4) if seed % 2 else (3, 5))
        a = theirs(real.tensor(g, dtype=real.float32), (3.4445, -4.7750, 2.0315), 5, 1e-7)
        b = ours(fg.tensor(g, dtype=fg.float32), (3.4445, -4.7750, 2.0315), 5, 1e-7)
        np.testing.assert_array_equal(b.float().numpy(), a.float().numpy())


@pytest.mark.parametrize("kw", [dict(lr=-1), dict(momentum=-0.1), dict(weight_decay=-1),
                                dict(adjust_lr_fn="sqrt")])
def test_muon_validation_matches_pytorch(real, kw):
    with pytest.raises(ValueError) as want:
        real.optim.Muon([real.ones(2, 2, requires_grad=True)], **kw)
    with pytest.raises(ValueError) as got:
        fg.optim.Muon([fg.ones(2, 2, requires_grad=True)], **kw)
    assert str(got.value) == str(want.value)


def test_muon_refuses_what_is_not_a_matrix(real):
    for T in (real, fg):
        with pytest.raises(ValueError, match=r"Muon only supports 2D parameters whereas we "
                                             r"found a parameter with size: torch.Size\(\[3\]\)"):
            T.optim.Muon([T.ones(3, requires_grad=True)])
