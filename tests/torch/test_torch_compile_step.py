"""torch.compile of a whole training step (zero_grad, forward, backward, optimizer step)
as one program: losses, parameters, ``.grad`` and optimizer state are eager mode's bit for
bit, step after step; what the program cannot replay runs eagerly, with eager's results."""
import numpy as np
import pytest

import funcgrad
import funcgrad.numpy as fnp
import funcgrad.torch as torch
import funcgrad.torch.nn as nn
from funcgrad.primitives.reductions import nll_loss
import funcgrad.torch.nn.functional as F


def _setup(make_opt, seed=0, batchnorm=False, dropout=False):
    torch.manual_seed(seed)
    layers = [nn.Linear(4, 6)] + ([nn.BatchNorm1d(6)] if batchnorm else []) + [
        nn.ReLU()] + ([nn.Dropout(0.5)] if dropout else []) + [nn.Linear(6, 3)]
    model = nn.Sequential(*layers)
    return model, make_opt(model.parameters())


X = torch.tensor(np.random.RandomState(0).randn(8, 4).astype(np.float32))
Y = torch.tensor([0, 1, 2, 1, 0, 2, 2, 1])


def _run(compiled, make_opt, steps=4, set_to_none=True, **kw):
    """Losses, then parameters, gradients and optimizer state tensors after ``steps``."""
    model, opt = _setup(make_opt, **kw)

    def step(x, y):
        opt.zero_grad(set_to_none=set_to_none)
        loss = F.cross_entropy(model(x), y)
        loss.backward()
        opt.step()
        return loss
    run = torch.compile(step) if compiled else step
    losses = [run(X, Y).item() for _ in range(steps)]
    state = [v for p in model.parameters() for v in opt.state[p].values()
             if isinstance(v, torch.Tensor)]
    buffers = list(model.buffers())
    return (losses, list(model.parameters()), [p.grad for p in model.parameters()], state,
            buffers, run)


def _same(a, b):
    assert a[0] == b[0]
    for name, xs, ys in zip(("parameter", "grad", "state", "buffer"), a[1:5], b[1:5]):
        assert len(xs) == len(ys), name
        for x, y in zip(xs, ys):
            assert x.dtype == y.dtype and torch.equal(x.detach(), y.detach()), name


SGDS = {
    "plain": lambda ps: torch.optim.SGD(ps, lr=0.1),
    "momentum": lambda ps: torch.optim.SGD(ps, lr=0.1, momentum=0.9, dampening=0.1),
    "nesterov+wd": lambda ps: torch.optim.SGD(ps, lr=0.1, momentum=0.9, nesterov=True,
                                              weight_decay=0.01),
    "maximize": lambda ps: torch.optim.SGD(ps, lr=0.05, momentum=0.5, maximize=True),
    # Adam's bias corrections come from its step count, a value of the program
    "adam": lambda ps: torch.optim.Adam(ps, lr=0.01),
    "adam weight decay amsgrad maximize": lambda ps: torch.optim.Adam(
        ps, lr=0.01, weight_decay=0.1, amsgrad=True, maximize=True),
    "adamw": lambda ps: torch.optim.AdamW(ps, lr=0.01, weight_decay=0.1),
    "rmsprop centered momentum": lambda ps: torch.optim.RMSprop(ps, lr=0.01, momentum=0.5,
                                                                centered=True),
}


@pytest.mark.parametrize("name", list(SGDS))
def test_step_compiles_and_is_eager_bit_for_bit(name):
    eager = _run(False, SGDS[name])
    compiled = _run(True, SGDS[name])
    _same(eager, compiled)
    program = compiled[-1]._program.step
    assert program.eager_reason is None  # one program (a second once the buffers exist)
    code = compiled[-1].code_for(X, Y)
    assert code.startswith("def program(") and "addmm" in code


def test_gradients_zeroed_in_place_and_batchnorm_statistics_are_threaded():
    """zero_grad(set_to_none=False) keeps the .grad tensors (written in place); BatchNorm's
    running statistics, updated in place in training mode, come out of the program."""
    make = SGDS["momentum"]
    eager = _run(False, make, set_to_none=False, batchnorm=True)
    compiled = _run(True, make, set_to_none=False, batchnorm=True)
    _same(eager, compiled)
    assert compiled[-1]._program.step.eager_reason is None
    model, opt = _setup(make)
    grads = []

    @torch.compile
    def step():
        opt.zero_grad(set_to_none=False)
        F.cross_entropy(model(X), Y).backward()
        opt.step()
    step()
    grads = [p.grad for p in model.parameters()]
    step()
    assert all(g is p.grad for g, p in zip(grads, model.parameters()))


def test_updates_are_written_into_the_parameters_memory():
    model, opt = _setup(SGDS["plain"])
    weight = model[0].weight
    alias = weight.detach().numpy()  # shares the parameter's memory
    version = weight._version

    @torch.compile
    def step():
        opt.zero_grad()
        F.cross_entropy(model(X), Y).backward()
        opt.step()
    for _ in range(3):
        step()
    assert model[0].weight is weight
    np.testing.assert_array_equal(alias, weight.detach().numpy())
    assert weight._version > version


def test_a_scheduler_changing_the_learning_rate_retraces():
    def run(compiled):
        model, opt = _setup(SGDS["momentum"])
        sched = torch.optim.lr_scheduler.StepLR(opt, step_size=2, gamma=0.5)

        def step():
            opt.zero_grad()
            loss = F.cross_entropy(model(X), Y)
            loss.backward()
            opt.step()
            return loss
        run_step = torch.compile(step) if compiled else step
        losses = []
        for _ in range(6):
            losses.append(run_step().item())
            sched.step()
        return losses, [p.detach().clone() for p in model.parameters()]
    eager, compiled = run(False), run(True)
    assert eager[0] == compiled[0]
    assert all(torch.equal(a, b) for a, b in zip(eager[1], compiled[1]))


def test_bound_method_and_a_raw_leaf_optimized_directly():
    w0 = torch.tensor(np.random.RandomState(1).randn(4, 3).astype(np.float32))

    class Trainer:
        def __init__(self):
            self.w = w0.clone().requires_grad_()
            self.opt = torch.optim.SGD([self.w], lr=0.1, momentum=0.9)

        def step(self, x, y):
            self.opt.zero_grad()
            loss = F.cross_entropy(x @ self.w, y)
            loss.backward()
            self.opt.step()
            return loss
    a, b = Trainer(), Trainer()
    compiled = torch.compile(b.step)
    for _ in range(3):
        assert a.step(X, Y).item() == compiled(X, Y).item()
    assert torch.equal(a.w, b.w) and torch.equal(a.w.grad, b.w.grad)
    assert compiled._program.step.eager_reason is None


@pytest.mark.parametrize("case", ["adagrad", "item", "dropout"])
def test_what_cannot_be_replayed_runs_eagerly_with_eager_results(case):
    """Adagrad reads its step count in Python, ``loss.item()`` reads a traced value,
    dropout draws random numbers: these steps run eagerly (PyTorch's graph break)."""
    make = (lambda ps: torch.optim.Adagrad(ps, lr=0.1, lr_decay=0.01)) if (
        case == "adagrad") else SGDS["plain"]

    def run(compiled):
        model, opt = _setup(make, dropout=case == "dropout")
        torch.manual_seed(1)
        seen = []

        def step():
            opt.zero_grad()
            loss = F.cross_entropy(model(X), Y)
            loss.backward()
            opt.step()
            if case == "item":
                seen.append(loss.item())
            return loss
        run_step = torch.compile(step) if compiled else step
        losses = [run_step().item() for _ in range(3)]
        return losses, seen, [p.detach().clone() for p in model.parameters()], run_step
    eager, compiled = run(False), run(True)
    assert eager[0] == compiled[0] and eager[1] == compiled[1]
    assert all(torch.equal(a, b) for a, b in zip(eager[2], compiled[2]))
    assert compiled[3]._program.step.eager_reason is not None


def test_matches_pytorch():
    """The compiled facade step against PyTorch's own eager step (float32 tolerance)."""
    real = pytest.importorskip("torch")
    compiled = _run(True, SGDS["nesterov+wd"])
    real.manual_seed(0)
    model = real.nn.Sequential(real.nn.Linear(4, 6), real.nn.ReLU(), real.nn.Linear(6, 3))
    ours, _ = _setup(SGDS["nesterov+wd"])
    with real.no_grad():
        for p, q in zip(model.parameters(), ours.parameters()):
            p.copy_(real.tensor(q.detach().numpy()))
    opt = real.optim.SGD(model.parameters(), lr=0.1, momentum=0.9, nesterov=True,
                         weight_decay=0.01)
    x, y = real.tensor(X.numpy()), real.tensor(Y.numpy())
    losses = []
    for _ in range(4):
        opt.zero_grad()
        loss = real.nn.functional.cross_entropy(model(x), y)
        loss.backward()
        opt.step()
        losses.append(loss.item())
    np.testing.assert_allclose(compiled[0], losses, rtol=1e-5)
    for p, q in zip(model.parameters(), compiled[1]):
        np.testing.assert_allclose(q.detach().numpy(), p.detach().numpy(), rtol=1e-4,
                                   atol=1e-6)


def test_tensors_sharing_memory_run_eagerly_and_state_dicts_keep_their_identity():
    """A step reading a parameter and a view of it (the trace would not see the update
    through the view) runs eagerly; the optimizer's per-parameter state dicts stay the
    same objects across compiled calls."""
    def run(compiled):
        model, opt = _setup(SGDS["momentum"])
        view = model[0].weight.detach()[:2]  # shares the weight's memory

        def step():
            opt.zero_grad()
            F.cross_entropy(model(X), Y).backward()
            opt.step()
            return view.sum()
        run_step = torch.compile(step) if compiled else step
        return [run_step().item() for _ in range(3)], run_step
    eager, compiled = run(False), run(True)
    assert eager[0] == compiled[0]
    assert "share memory" in compiled[1]._program.step.eager_reason
    model, opt = _setup(SGDS["momentum"])

    @torch.compile
    def step():
        opt.zero_grad()
        F.cross_entropy(model(X), Y).backward()
        opt.step()
    step()
    dicts = [opt.state[p] for p in model.parameters()]
    step()
    step()
    assert step._program.step.eager_reason is None
    assert all(d is opt.state[p] for d, p in zip(dicts, model.parameters()))


def test_an_update_alone_compiled_before_its_optimizer_exists():
    """A function that only steps an optimizer (made after torch.compile, the backward
    pass outside) is a training step too: it reads the current gradients every call."""
    def run(compiled):
        model, _ = _setup(SGDS["plain"])

        def update():
            opt.step()
        run_update = torch.compile(update) if compiled else update
        opt = torch.optim.SGD(model.parameters(), lr=0.1, momentum=0.9)
        for k in range(3):
            opt.zero_grad()
            F.cross_entropy(model(X * (k + 1)), Y).backward()
            run_update()
        return [p.detach().clone() for p in model.parameters()], run_update
    eager, (compiled, run_update) = run(False)[0], run(True)
    assert all(torch.equal(a, b) for a, b in zip(eager, compiled))
    assert run_update._program.step is not None
    assert run_update._program.step.eager_reason is None


def test_modules_used_through_a_helper_function_are_state():
    """The step calls a loss function that uses the model (with BatchNorm's running
    statistics, updated in place): its parameters and buffers are the program's state."""
    def run(compiled):
        model, opt = _setup(SGDS["momentum"], batchnorm=True)

        def loss_of(x, y):
            return F.cross_entropy(model(x), y)

        def step():
            opt.zero_grad()
            loss = loss_of(X, Y)
            loss.backward()
            opt.step()
            return loss
        run_step = torch.compile(step) if compiled else step
        losses = [run_step().item() for _ in range(3)]
        return losses, list(model.parameters()) + list(model.buffers()), run_step
    eager, compiled = run(False), run(True)
    assert eager[0] == compiled[0]
    assert all(torch.equal(a.detach(), b.detach()) for a, b in zip(eager[1], compiled[1]))
    assert compiled[2]._program.step.eager_reason is None


@pytest.mark.parametrize("label", [-1, 3])
def test_a_label_outside_the_classes_raises_in_compiled_code_as_in_eager(label):
    """The compiled program knows the labels only when it runs: the loss's kernel checks
    them there (numpy's indexing would silently take class -1 as the last)."""
    model, opt = _setup(lambda ps: torch.optim.SGD(ps, lr=0.1))
    bad = torch.tensor([0, 1, 2, 1, 0, 2, 2, label])

    def loss_of(x, y):
        return F.cross_entropy(model(x), y)

    def step(x, y):
        opt.zero_grad()
        loss = loss_of(x, y)
        loss.backward()
        opt.step()
        return loss
    for fn in (loss_of, torch.compile(loss_of), torch.compile(step)):
        fn(X, Y)  # traced and compiled with good labels first
        with pytest.raises(IndexError, match=f"Target {label} is out of bounds."):
            fn(X, bad)
    jitted = funcgrad.jit(lambda z, y: nll_loss(z, y, 1.0, axis=1, reduction="mean"))
    jitted(fnp.zeros((2, 3)), fnp.asarray([0, 1]))
    with pytest.raises(IndexError, match=f"Target {label} is out of bounds."):
        jitted(fnp.zeros((2, 3)), fnp.asarray([0, label]))
