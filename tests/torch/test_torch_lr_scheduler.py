"""torch.optim.lr_scheduler: every scheduler's learning rates, momenta and state_dict against
PyTorch's, its warnings, and the scheduler protocol on its own."""
import math
import warnings

import numpy as np
import pytest

import funcgrad.torch as fg


class Decay:
    """A callable object: its attributes are saved by LambdaLR.state_dict()."""

    def __init__(self):
        self.k = 0.9

    def __call__(self, epoch):
        return self.k ** epoch


SCHEDULERS = {
    "StepLR": ("SGD", lambda L, o: L.StepLR(o, 3, 0.5)),
    "MultiStepLR": ("SGD", lambda L, o: L.MultiStepLR(o, [2, 4, 4], 0.5)),
    "ExponentialLR": ("SGD", lambda L, o: L.ExponentialLR(o, 0.9)),
    "CosineAnnealingLR": ("SGD", lambda L, o: L.CosineAnnealingLR(o, 4, 0.001)),
    "OneCycleLR": ("SGD", lambda L, o: L.OneCycleLR(o, [1.0, 0.5], total_steps=14)),
    "OneCycleLR-three-phase": ("Adam", lambda L, o: L.OneCycleLR(
        o, 1.0, epochs=3, steps_per_epoch=5, three_phase=True, anneal_strategy="linear")),
    "LambdaLR": ("SGD", lambda L, o: L.LambdaLR(o, [lambda e: 0.9 ** e, Decay()])),
    "MultiplicativeLR": ("SGD", lambda L, o: L.MultiplicativeLR(o, lambda e: 0.95)),
    "LinearLR": ("SGD", lambda L, o: L.LinearLR(o, 0.2, 0.9, 4)),
    "ConstantLR": ("SGD", lambda L, o: L.ConstantLR(o, 0.5, 3)),
    "PolynomialLR": ("SGD", lambda L, o: L.PolynomialLR(o, 5, 2.0)),
    "CosineAnnealingWarmRestarts": ("SGD", lambda L, o: L.CosineAnnealingWarmRestarts(
        o, 3, 2, 0.01)),
    "CyclicLR": ("SGD", lambda L, o: L.CyclicLR(o, 0.01, 0.1, step_size_up=3,
                                                mode="triangular2")),
    "CyclicLR-exp-range": ("SGD", lambda L, o: L.CyclicLR(
        o, 0.01, 0.1, step_size_up=2, step_size_down=3, mode="exp_range", gamma=0.9)),
    "SequentialLR": ("SGD", lambda L, o: L.SequentialLR(
        o, [L.LinearLR(o, 0.1, total_iters=3), L.CosineAnnealingLR(o, 5)], [3])),
    "ChainedScheduler": ("SGD", lambda L, o: L.ChainedScheduler(
        [L.ConstantLR(o, 0.5, 2), L.ExponentialLR(o, 0.9)])),
}


def _run(T, opt_name, make, steps=14):
    """A two-group optimizer stepped with its scheduler; the lrs (and momenta) after each
    step, the scheduler's and the optimizer's state dicts."""
    p = T.tensor([1.0], requires_grad=True)
    q = T.tensor([2.0], requires_grad=True)
    kw = dict(lr=0.1, momentum=0.9) if opt_name == "SGD" else dict(lr=0.1)
    opt = getattr(T.optim, opt_name)([{"params": [p]}, {"params": [q], "lr": 0.05}], **kw)
    sched = make(T.optim.lr_scheduler, opt)
    lrs, momenta = [sched.get_last_lr()], []
    for _ in range(steps):
        opt.zero_grad()
        (p * 2 + q).sum().backward()
        opt.step()
        sched.step()
        lrs.append(sched.get_last_lr())
        momenta.append([g.get("momentum", g.get("betas")) for g in opt.param_groups])
    return lrs, momenta, sched.state_dict(), opt.state_dict()["param_groups"]


@pytest.mark.parametrize("name", sorted(SCHEDULERS))
def test_schedule_and_state_dict_match_pytorch(real, name):
    opt_name, make = SCHEDULERS[name]
    lrs1, mom1, sd1, groups1 = _run(real, opt_name, make)
    lrs2, mom2, sd2, groups2 = _run(fg, opt_name, make)
    assert lrs2 == lrs1  # the same recursions: bit-identical
    assert mom2 == mom1
    assert repr(sd2) == repr(sd1)  # keys in PyTorch's order, nested schedulers included
    assert [list(g.items()) for g in groups2] == [list(g.items()) for g in groups1]


def test_reduce_lr_on_plateau_matches_pytorch(real):
    results = []
    for T in (real, fg):
        p = T.tensor([1.0], requires_grad=True)
        opt = T.optim.SGD([{"params": [p]}, {"params": [T.ones(1, requires_grad=True)]}],
                          lr=0.1)
        sched = T.optim.lr_scheduler.ReduceLROnPlateau(opt, patience=1, cooldown=1,
                                                       factor=0.5, min_lr=[0.01, 0.02])
        lrs = []
        for metric in [5, 4, 4, 4, 4, 4, 3.9999, 4, 4, 4, 4, 4, 4]:
            opt.step()
            sched.step(T.tensor(metric))
            lrs.append(sched.get_last_lr())
        results.append((lrs, sched.state_dict()))
    assert results[1] == results[0]


def test_schedule_resumes_from_state_dict():
    def make(o):
        return fg.optim.lr_scheduler.OneCycleLR(o, 1.0, total_steps=20)
    p = fg.ones(1, requires_grad=True)
    opt = fg.optim.SGD([p], lr=0.1, momentum=0.9)
    sched = make(opt)
    for _ in range(7):
        opt.step()
        sched.step()
    saved_opt, saved_sched = opt.state_dict(), sched.state_dict()
    rest = []
    for _ in range(5):
        opt.step()
        sched.step()
        rest.append(sched.get_last_lr())
    opt2 = fg.optim.SGD([fg.ones(1, requires_grad=True)], lr=0.1, momentum=0.9)
    sched2 = make(opt2)
    opt2.load_state_dict(saved_opt)
    sched2.load_state_dict(saved_sched)
    resumed = []
    for _ in range(5):
        opt2.step()
        sched2.step()
        resumed.append(sched2.get_last_lr())
    assert resumed == rest


def _caught(fn):
    with warnings.catch_warnings(record=True) as w:
        warnings.simplefilter("always")
        fn()
    return [str(x.message) for x in w]


def test_warnings():
    p = fg.ones(1, requires_grad=True)
    opt = fg.optim.SGD([p], lr=0.1)
    sched = fg.optim.lr_scheduler.StepLR(opt, 2)
    (message,) = _caught(sched.step)
    assert message.startswith("Detected call of `lr_scheduler.step()` before "
                              "`optimizer.step()`.")
    (message,) = _caught(sched.get_lr)
    assert message == ("To get the last learning rate computed by the scheduler, please use "
                       "`get_last_lr()`.")
    (message,) = _caught(lambda: sched.step(5))
    assert message.startswith("The epoch parameter in `scheduler.step()` was not necessary")
    assert sched.last_epoch == 5 and sched.get_last_lr() == [pytest.approx(0.1 * 0.1 ** 2)]
    opt2 = fg.optim.SGD([p], lr=0.1)
    sched2 = fg.optim.lr_scheduler.StepLR(opt2, 2)
    opt2.step = lambda closure=None: None
    opt2.step()
    (message,) = _caught(sched2.step)
    assert message.startswith("Seems like `optimizer.step()` has been overridden")
    opt3 = fg.optim.SGD([p], lr=0.1)
    sched3 = fg.optim.lr_scheduler.StepLR(opt3, 2)
    opt3.step()
    assert _caught(sched3.step) == []


def test_closed_form_matches_recursion():
    """step(epoch) (deprecated) jumps with the closed form; stepping one by one with the
    recursion reaches the same rates."""
    for make in [lambda o: fg.optim.lr_scheduler.CosineAnnealingLR(o, 10, 0.01),
                 lambda o: fg.optim.lr_scheduler.LinearLR(o, 0.25, 1.0, 6),
                 lambda o: fg.optim.lr_scheduler.PolynomialLR(o, 8, 3.0)]:
        o1 = fg.optim.SGD([fg.ones(1, requires_grad=True)], lr=0.2)
        o2 = fg.optim.SGD([fg.ones(1, requires_grad=True)], lr=0.2)
        s1, s2 = make(o1), make(o2)
        for _ in range(7):
            o1.step()
            s1.step()
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            s2.step(7)
        assert s2.get_last_lr()[0] == pytest.approx(s1.get_last_lr()[0], rel=1e-12)


def test_cosine_formula_and_warm_restarts():
    opt = fg.optim.SGD([fg.ones(1, requires_grad=True)], lr=1.0)
    sched = fg.optim.lr_scheduler.CosineAnnealingWarmRestarts(opt, T_0=2, T_mult=2)
    seen = []
    for _ in range(7):
        seen.append(sched.get_last_lr()[0])
        opt.step()
        sched.step()
    expected = [1.0, 0.5, 1.0, (1 + math.cos(math.pi / 4)) / 2, 0.5,
                (1 + math.cos(3 * math.pi / 4)) / 2, 1.0]
    np.testing.assert_allclose(seen, expected, atol=1e-12)


def test_scheduler_errors():
    opt = fg.optim.SGD([fg.ones(1, requires_grad=True)], lr=0.1)
    L = fg.optim.lr_scheduler
    with pytest.raises(TypeError, match="list is not an Optimizer"):
        L.StepLR([], 1)
    with pytest.raises(KeyError, match="param 'initial_lr' is not specified in "
                                       "param_groups\\[0\\]"):
        L.StepLR(fg.optim.SGD([fg.ones(1, requires_grad=True)], lr=0.1), 1, last_epoch=3)
    with pytest.raises(ValueError, match="Expected 1 lr_lambdas, but got 2"):
        L.LambdaLR(opt, [lambda e: 1, lambda e: 1])
    with pytest.raises(TypeError, match="lr_lambda should be a function, but got int"):
        L.MultiplicativeLR(opt, 3)
    with pytest.raises(ValueError, match="Constant multiplicative factor expected"):
        L.ConstantLR(opt, factor=2)
    with pytest.raises(ValueError, match="You must define either total_steps OR"):
        L.OneCycleLR(opt, 1.0)
    with pytest.raises(ValueError, match="Expected float between 0 and 1 pct_start"):
        L.OneCycleLR(opt, 1.0, total_steps=10, pct_start=1)
    adagrad = fg.optim.Adagrad([fg.ones(1, requires_grad=True)])
    with pytest.raises(ValueError, match="optimizer must support momentum or beta1"):
        L.OneCycleLR(adagrad, 1.0, total_steps=10)
    sgd = fg.optim.SGD([fg.ones(1, requires_grad=True)], lr=0.1, momentum=0.9)
    one = L.OneCycleLR(sgd, 1.0, total_steps=2)
    sgd.step()
    one.step()
    one.step()
    with pytest.raises(ValueError, match="Tried to step 3 times. The specified number of "
                                         "total steps is 2"):
        one.step()
    with pytest.raises(ValueError, match="Factor should be < 1.0."):
        L.ReduceLROnPlateau(opt, factor=1.0)
    with pytest.raises(ValueError, match="mode max2 is unknown!"):
        L.ReduceLROnPlateau(opt, mode="max2")
    with pytest.raises(ValueError, match="does not support `ReduceLROnPlateau`"):
        L.SequentialLR(opt, [L.ReduceLROnPlateau(opt), L.StepLR(opt, 1)], [2])
    with pytest.raises(ValueError, match="expects number of schedulers provided to be one "
                                         "more than the number of milestone points"):
        L.SequentialLR(opt, [L.StepLR(opt, 1)], [2])
    with pytest.raises(ValueError, match="Expected positive integer T_0, but got 0"):
        L.CosineAnnealingWarmRestarts(opt, 0)
    with pytest.raises(ValueError, match="mode is invalid and scale_fn is None"):
        L.CyclicLR(opt, 0.1, 1.0, mode="zigzag")


def test_lambda_state_dict_saves_only_callable_objects():
    opt = fg.optim.SGD([{"params": [fg.ones(1, requires_grad=True)]},
                        {"params": [fg.ones(1, requires_grad=True)]}], lr=0.1)
    decay = Decay()
    sched = fg.optim.lr_scheduler.LambdaLR(opt, [lambda e: 1.0, decay])
    sd = sched.state_dict()
    assert sd["lr_lambdas"] == [None, {"k": 0.9}]
    decay.k = 0.5
    sched.load_state_dict(sd)
    assert decay.k == 0.9 and "lr_lambdas" in sd
