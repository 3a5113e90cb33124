"""torch.optim: every optimizer's trajectory and state_dict against PyTorch, plus the
Optimizer protocol (groups, hooks, zero_grad, load_state_dict, errors) on its own."""
import pickle
import warnings

import numpy as np
import pytest

import funcgrad.torch as fg


CASES = [
    ("SGD", dict(lr=0.1)),
    ("SGD", dict(lr=0.1, momentum=0.9, dampening=0.1, weight_decay=0.01)),
    ("SGD", dict(lr=0.1, momentum=0.9, nesterov=True, maximize=True)),
    ("Adam", dict(lr=0.1)),
    ("Adam", dict(lr=0.05, betas=(0.8, 0.99), amsgrad=True, weight_decay=0.1)),
    ("Adam", dict(lr=0.05, weight_decay=0.1, decoupled_weight_decay=True, maximize=True)),
    ("AdamW", dict(lr=0.05)),
    ("AdamW", dict(lr=0.05, amsgrad=True, weight_decay=0.2)),
    ("RMSprop", dict(lr=0.01)),
    ("RMSprop", dict(lr=0.01, alpha=0.9, momentum=0.5, centered=True, weight_decay=0.1)),
    ("Adagrad", dict(lr=0.1)),
    ("Adagrad", dict(lr=0.1, lr_decay=0.01, initial_accumulator_value=0.1,
                     weight_decay=0.1, maximize=True)),
    ("Adamax", dict(lr=0.1)),
    ("Adamax", dict(lr=0.1, betas=(0.8, 0.9), weight_decay=0.1, maximize=True)),
]


def _train(T, name, kw, steps=6, dtype="float64"):
    """Two parameter groups (the second with its own lr), a quadratic loss whose target
    moves each step."""
    dt = getattr(T, dtype)
    w = T.tensor([[1.0, -2.0], [0.5, 0.3]], dtype=dt, requires_grad=True)
    b = T.tensor([0.1, -0.1], dtype=dt, requires_grad=True)
    opt = getattr(T.optim, name)([{"params": [w]}, {"params": [b], "lr": 0.02}], **kw)
    x = T.tensor([1.0, 2.0], dtype=dt)
    for k in range(steps):
        opt.zero_grad()
        ((w @ x + b - k) ** 2).sum().backward()
        opt.step()
    return w, b, opt


def _layout(sd):
    """A state dict as comparable plain data: keys in order, tensors as (dtype, values)."""
    def value(v):
        if hasattr(v, "detach"):
            return (str(v.dtype).replace("torch.", ""), v.detach().numpy().tolist())
        return v
    state = {k: [(kk, value(vv)) for kk, vv in s.items()] for k, s in sd["state"].items()}
    return list(sd), state, [list(g.items()) for g in sd["param_groups"]]


@pytest.mark.parametrize("name,kw", CASES, ids=[f"{n}-{i}" for i, (n, _) in enumerate(CASES)])
def test_trajectory_and_state_dict_match_pytorch(real, name, kw):
    w1, b1, o1 = _train(real, name, kw)
    w2, b2, o2 = _train(fg, name, kw)
    np.testing.assert_allclose(w2.detach().numpy(), w1.detach().numpy(), rtol=1e-13)
    np.testing.assert_allclose(b2.detach().numpy(), b1.detach().numpy(), rtol=1e-13)
    keys1, state1, groups1 = _layout(o1.state_dict())
    keys2, state2, groups2 = _layout(o2.state_dict())
    assert keys2 == keys1 and groups2 == groups1
    assert list(state2) == list(state1)
    for k in state1:
        assert [kk for kk, _ in state2[k]] == [kk for kk, _ in state1[k]]
        for (kk, (d1, v1)), (_, (d2, v2)) in zip(state1[k], state2[k]):
            assert d2 == d1, kk
            np.testing.assert_allclose(v2, v1, rtol=1e-13, err_msg=kk)


@pytest.mark.parametrize("name", ["SGD", "Adam", "AdamW", "RMSprop", "Adagrad", "Adamax"])
def test_defaults_and_repr_match_pytorch(real, name):
    p1 = real.ones(2, requires_grad=True)
    p2 = fg.ones(2, requires_grad=True)
    o1, o2 = getattr(real.optim, name)([p1]), getattr(fg.optim, name)([p2])
    assert list(o2.defaults.items()) == list(o1.defaults.items())
    assert list(o2.param_groups[0]) == list(o1.param_groups[0])
    assert repr(o2) == repr(o1)


def test_float32_step_state_matches_pytorch(real):
    _, _, o1 = _train(real, "Adam", dict(lr=0.1), dtype="float32")
    _, _, o2 = _train(fg, "Adam", dict(lr=0.1), dtype="float32")
    keys1, state1, groups1 = _layout(o1.state_dict())
    keys2, state2, groups2 = _layout(o2.state_dict())
    assert (keys2, groups2) == (keys1, groups1)
    for k in state1:
        for (kk, (d1, v1)), (kk2, (d2, v2)) in zip(state1[k], state2[k]):
            assert (kk2, d2) == (kk, d1)
            np.testing.assert_allclose(v2, v1, rtol=1e-6)
    step = o2.state_dict()["state"][0]["step"]
    assert isinstance(step, fg.Tensor) and step.dtype == fg.float32 and step.item() == 6.0


@pytest.mark.parametrize("name,kw", [("SGD", dict(lr=0.1, momentum=0.9)),
                                     ("SGD", dict(lr=0.1, momentum=0.9, nesterov=True,
                                                  weight_decay=0.1)),
                                     ("Adam", dict(lr=0.1)),
                                     ("RMSprop", dict(lr=0.1, momentum=0.5)),
                                     ("Adagrad", dict(lr=0.1)), ("NAdam", dict(lr=0.1)),
                                     ("RAdam", dict(lr=0.1)), ("Adadelta", dict(lr=0.5)),
                                     ("ASGD", dict(lr=0.1))])
def test_differentiable_step_matches_pytorch(real, name, kw):
    """``differentiable=True``: the updates are recorded, so the final parameters can be
    differentiated with respect to where they started (a meta-learning pattern). (Not
    Rprop: PyTorch's own backward fails there, its clamp_ output being written again by
    the next step's mul_.)"""
    results = []
    for T in (real, fg):
        w0 = T.tensor([1.0, -2.0], dtype=T.float64, requires_grad=True)
        p = w0.clone()
        opt = getattr(T.optim, name)([p], differentiable=True, **kw)
        for k in range(3):
            g, = T.autograd.grad(((p - k) ** 2).sum(), p, create_graph=True)
            p.grad = g
            opt.step()
        p.sum().backward()
        results.append((p.detach().numpy().copy(), w0.grad.numpy().copy()))
    # PyTorch's differentiable Adam computes its bias corrections on a float32 step tensor
    np.testing.assert_allclose(results[1][0], results[0][0], rtol=1e-5)
    np.testing.assert_allclose(results[1][1], results[0][1], rtol=1e-5)


def test_load_state_dict_continues_the_trajectory(real):
    """Checkpoint after 3 steps, restore into a fresh optimizer, run 3 more: the same
    parameters as 6 uninterrupted steps, on both libraries."""
    for T in (real, fg):
        w, b, opt = _train(T, "Adam", dict(lr=0.1, amsgrad=True), steps=3)
        sd = pickle.loads(pickle.dumps(opt.state_dict()))
        w2 = w.detach().clone().requires_grad_()
        b2 = b.detach().clone().requires_grad_()
        opt2 = T.optim.Adam([{"params": [w2]}, {"params": [b2], "lr": 0.5}], lr=1.0)
        opt2.load_state_dict(sd)
        assert [g["lr"] for g in opt2.param_groups] == [0.1, 0.02]
        x = T.tensor([1.0, 2.0], dtype=T.float64)
        for k in range(3, 6):
            opt2.zero_grad()
            ((w2 @ x + b2 - k) ** 2).sum().backward()
            opt2.step()
        w_ref, _, _ = _train(T, "Adam", dict(lr=0.1, amsgrad=True))
        np.testing.assert_allclose(w2.detach().numpy(), w_ref.detach().numpy(), rtol=1e-13)


def test_load_state_dict_casts_state_to_the_parameters():
    p = fg.ones(2, dtype=fg.float64, requires_grad=True)
    opt = fg.optim.Adam([p], lr=0.1)
    p.grad = fg.ones(2, dtype=fg.float64)
    opt.step()
    q = fg.ones(2, dtype=fg.float32, requires_grad=True)
    opt2 = fg.optim.Adam([q], lr=0.1)
    opt2.load_state_dict(opt.state_dict())
    assert opt2.state[q]["exp_avg"].dtype == fg.float32
    assert opt2.state[q]["step"].dtype == fg.float32  # step keeps its own dtype


def test_load_state_dict_errors():
    a, b = fg.ones(2, requires_grad=True), fg.ones(2, requires_grad=True)
    sd = fg.optim.SGD([a, b], lr=0.1).state_dict()
    with pytest.raises(ValueError, match="different number of parameter groups"):
        fg.optim.SGD([{"params": [a]}, {"params": [b]}], lr=0.1).load_state_dict(sd)
    with pytest.raises(ValueError, match="doesn't match the size of optimizer's group"):
        fg.optim.SGD([a], lr=0.1).load_state_dict(sd)


def test_zero_grad_and_param_groups():
    a = fg.ones(2, requires_grad=True)
    b = fg.ones(2, requires_grad=True)
    opt = fg.optim.SGD([{"params": [a]}, {"params": b, "lr": 0.5}], lr=0.1)
    assert [g["lr"] for g in opt.param_groups] == [0.1, 0.5]
    (a + b).sum().backward()
    g = a.grad
    opt.zero_grad(set_to_none=False)
    assert a.grad is g and g.tolist() == [0.0, 0.0] and not g.requires_grad
    opt.zero_grad()
    assert a.grad is None and b.grad is None
    c = fg.ones(1, requires_grad=True)
    opt.add_param_group({"params": [c], "momentum": 0.9})
    assert opt.param_groups[2]["momentum"] == 0.9 and opt.param_groups[2]["lr"] == 0.1
    with pytest.raises(ValueError, match="some parameters appear in more than one"):
        opt.add_param_group({"params": [a]})


def test_named_parameters_give_param_names():
    model = fg.nn.Linear(2, 1)
    opt = fg.optim.SGD(model.named_parameters(), lr=0.1)
    assert opt.param_groups[0]["param_names"] == ["weight", "bias"]
    assert opt.state_dict()["param_groups"][0]["param_names"] == ["weight", "bias"]
    with pytest.raises(ValueError, match="all optimizer param groups should be with/without"):
        opt.add_param_group({"params": [fg.ones(1, requires_grad=True)]})


def test_step_hooks_and_closure():
    p = fg.tensor([1.0], requires_grad=True)
    opt = fg.optim.SGD([p], lr=0.5)
    calls = []
    pre = opt.register_step_pre_hook(lambda o, args, kwargs: calls.append("pre"))
    opt.register_step_post_hook(lambda o, args, kwargs: calls.append("post"))
    glob = fg.optim.optimizer.register_optimizer_step_pre_hook(
        lambda o, args, kwargs: calls.append("global"))

    def closure():
        opt.zero_grad()
        loss = (p * p).sum()
        loss.backward()
        calls.append("closure")
        return loss
    loss = opt.step(closure)
    assert loss.item() == 1.0 and p.item() == 0.0
    assert calls == ["global", "pre", "closure", "post"]
    pre.remove()
    glob.remove()
    calls.clear()
    opt.step(closure)
    assert calls == ["closure", "post"]


def test_custom_optimizer_subclass_gets_hooks_and_scheduler_tracking():
    """A PyTorch-style custom optimizer overriding step() runs the hooks around it."""
    class SignSGD(fg.optim.Optimizer):
        def __init__(self, params, lr=0.1):
            super().__init__(params, dict(lr=lr))

        @fg.no_grad()
        def step(self, closure=None):
            for group in self.param_groups:
                for p in group["params"]:
                    if p.grad is not None:
                        p.add_(p.grad.sign(), alpha=-group["lr"])

    p = fg.tensor([1.0, -1.0], requires_grad=True)
    opt = SignSGD([p])
    seen = []
    opt.register_step_post_hook(lambda o, a, k: seen.append(True))
    (p * 3).sum().backward()
    opt.step()
    assert p.tolist() == pytest.approx([0.9, -1.1]) and seen == [True]
    sched = fg.optim.lr_scheduler.StepLR(opt, 1)
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        sched.step()  # optimizer.step() ran: no "called before" warning


def test_option_errors():
    p = fg.ones(1, requires_grad=True)
    for cls, kw, message in [
            (fg.optim.SGD, dict(lr=-1), "Invalid learning rate: -1"),
            (fg.optim.SGD, dict(nesterov=True), "Nesterov momentum requires a momentum"),
            (fg.optim.Adam, dict(betas=(1.0, 0.9)), "Invalid beta parameter at index 0"),
            (fg.optim.Adam, dict(betas=(0, 0.9)), "betas must be either both floats"),
            (fg.optim.Adam, dict(eps=-1), "Invalid epsilon value: -1"),
            (fg.optim.RMSprop, dict(alpha=-0.1), "Invalid alpha value: -0.1"),
            (fg.optim.RMSprop, dict(momentum=-0.1), "Invalid momentum value"),
            (fg.optim.Adagrad, dict(lr_decay=-1), "Invalid lr_decay value: -1"),
            (fg.optim.Adagrad, dict(initial_accumulator_value=-1),
             "Invalid initial_accumulator_value value: -1"),
            (fg.optim.Adamax, dict(weight_decay=-1), "Invalid weight_decay value: -1")]:
        with pytest.raises(ValueError, match=message):
            cls([p], **kw)
    with pytest.raises(RuntimeError, match="`fused` does not support `differentiable`"):
        fg.optim.Adam([p], fused=True, differentiable=True)
    with pytest.raises(RuntimeError, match="`fused` and `foreach` cannot be `True` together"):
        fg.optim.SGD([p], fused=True, foreach=True)
    with pytest.raises(TypeError, match="should be an iterable of Tensors or dicts"):
        fg.optim.SGD(p, lr=0.1)
    with pytest.raises(TypeError, match="optimizer can only optimize Tensors, but one of the "
                                        "params is int"):
        fg.optim.SGD([1], lr=0.1)
    with pytest.raises(ValueError, match="can't optimize a non-leaf Tensor"):
        fg.optim.SGD([p * 2], lr=0.1)
    with pytest.raises(ValueError, match="optimizer got an empty parameter list"):
        fg.optim.Adam([])
    opt = fg.optim.Adam([p], capturable=True)
    p.grad = fg.ones(1)
    with pytest.raises(AssertionError, match="If capturable=True, params and state_steps"):
        opt.step()


def test_adagrad_state_exists_before_the_first_step():
    p = fg.ones(2, requires_grad=True)
    opt = fg.optim.Adagrad([p], initial_accumulator_value=0.5)
    assert opt.state[p]["sum"].tolist() == [0.5, 0.5] and opt.state[p]["step"].item() == 0


def test_required_option():
    class Needs(fg.optim.Optimizer):
        def __init__(self, params):
            super().__init__(params, dict(lr=fg.optim.optimizer.required))
    with pytest.raises(ValueError, match="didn't specify a value of required optimization "
                                         "parameter lr"):
        Needs([fg.ones(1, requires_grad=True)])
    assert repr(fg.optim.optimizer.required) == "<required parameter>"
