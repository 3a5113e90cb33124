"""The compiled training step's later calls replay the last one while nothing its state
was found from has changed (`_step_replay`): each change between calls (a learning rate,
a replaced layer, another optimizer in the closure, grad mode, a parameter's ``.data``,
an argument's shape) is seen, and every call's results, parameters, gradients and
version counters are eager mode's."""
import numpy as np
import pytest

import funcgrad.torch as torch
import funcgrad.torch.nn as nn
import funcgrad.torch.nn.functional as F

X = torch.tensor(np.random.RandomState(0).randn(8, 4).astype(np.float32))
Y = torch.tensor([0, 1, 2, 1, 0, 2, 2, 1])


def _model(seed=0):
    torch.manual_seed(seed)
    return nn.Sequential(nn.Linear(4, 6), nn.ReLU(), nn.Linear(6, 3))


def _changes():
    """name -> what is done to (state, k) before call k; state: model, opt, holder."""
    def lr(s, k):
        s["opt"].param_groups[0]["lr"] = 0.1 / (k + 1)

    def layer(s, k):
        if k == 2:
            s["model"][2] = nn.Linear(6, 3)
            s["opt"].add_param_group({"params": s["model"][2].parameters()})

    def optimizer(s, k):
        if k == 2:
            s["holder"][0] = torch.optim.SGD(s["model"].parameters(), lr=0.05,
                                             momentum=0.9)

    def data(s, k):
        if k == 2:
            w = s["model"][0].weight
            w.data = w.detach().clone() * 0.5

    def train_mode(s, k):
        s["model"].train(k % 2 == 0)

    def grads_kept(s, k):
        s["set_to_none"][0] = k < 2

    return {"lr": lr, "layer": layer, "optimizer": optimizer, "data": data,
            "train_mode": train_mode, "grads_kept": grads_kept}


def _sgd_step(model, opt):
    """The training step of the tests: zero_grad, cross-entropy, backward, step."""
    def step(x, y):
        opt.zero_grad()
        loss = F.cross_entropy(model(x), y)
        loss.backward()
        opt.step()
        return loss
    return step


def _run(compiled, change, steps=5):
    model = _model()
    opt = torch.optim.SGD(model.parameters(), lr=0.1, momentum=0.5)
    state = {"model": model, "opt": opt, "holder": [opt], "set_to_none": [True]}
    holder, set_to_none = state["holder"], state["set_to_none"]

    def step(x, y):
        holder[0].zero_grad(set_to_none=set_to_none[0])
        loss = F.cross_entropy(model(x), y)
        loss.backward()
        holder[0].step()
        return loss
    run = torch.compile(step) if compiled else step
    seen = []
    for k in range(steps):
        change(state, k)
        loss = run(X, Y)
        seen.append((loss.item(), [p.detach().clone() for p in model.parameters()],
                     [None if p.grad is None else p.grad.detach().clone()
                      for p in model.parameters()],
                     [p._version for p in model.parameters()], X._version, Y._version))
    return seen, run


@pytest.mark.parametrize("name", list(_changes()))
def test_a_change_between_calls_is_seen(name):
    eager, _ = _run(False, _changes()[name])
    compiled, run = _run(True, _changes()[name])
    for k, (a, b) in enumerate(zip(eager, compiled)):
        assert a[0] == b[0], (name, k)
        for xs, ys in ((a[1], b[1]), (a[2], b[2])):
            assert len(xs) == len(ys)
            for x, y in zip(xs, ys):
                assert (x is None) == (y is None) and (x is None or torch.equal(x, y))
        assert a[3:] == b[3:], (name, k, "versions")
    assert run._program.step.eager_reason is None


def test_calls_after_the_first_ones_replay():
    """Once the state is steady (the gradients and momentum buffers exist) every call is
    a replay: the state is not searched again."""
    model = _model()
    step = torch.compile(_sgd_step(model, torch.optim.SGD(model.parameters(), lr=0.1,
                                                          momentum=0.9)))
    for _ in range(3):
        step(X, Y)
    program = step._program.step
    searched = []
    original = program._call
    program._call = lambda *a: searched.append(1) or original(*a)
    for _ in range(3):
        step(X, Y)
    assert not searched and program._replay is not None
    step(X[:4], Y[:4])  # another input shape: searched (and traced) again
    assert searched == [1]


def test_a_tensor_only_read_keeps_its_version_and_numpy_sees_the_update():
    w = np.random.RandomState(2).randn(4, 3).astype(np.float32)
    param = torch.from_numpy(w).requires_grad_()  # the parameter is w's memory
    scale = torch.tensor(2.0)
    opt = torch.optim.SGD([param], lr=0.1)

    @torch.compile
    def step():
        opt.zero_grad()
        F.cross_entropy(X @ param * scale, Y).backward()
        opt.step()
    before = w.copy()
    versions = (scale._version, X._version)
    for k in range(4):
        step()
        assert param._version == k + 1
    assert (scale._version, X._version) == versions
    assert not np.array_equal(w, before)
    np.testing.assert_array_equal(w, param.detach().numpy())


def test_grad_mode_and_argument_requiring_grad_are_seen():
    model = _model()
    opt = torch.optim.SGD(model.parameters(), lr=0.1)

    @torch.compile
    def update():
        opt.step()
    F.cross_entropy(model(X), Y).backward()
    update()
    update()
    with torch.no_grad():
        update()
    assert update._program.step.eager_reason is None
    eager = _model()
    eager_opt = torch.optim.SGD(eager.parameters(), lr=0.1)
    F.cross_entropy(eager(X), Y).backward()
    for _ in range(3):
        eager_opt.step()
    assert all(torch.equal(a, b) for a, b in zip(eager.parameters(), model.parameters()))


def test_a_compiled_model_or_loss_sees_its_modules_change():
    """torch.compile(model) and of a loss function keep the state they found while their
    guard sees no change: a replaced layer, a rebound closure variable, a parameter
    made to require grad are seen."""
    model = _model()
    holder = {"model": model}
    compiled = torch.compile(model)
    loss_of = torch.compile(lambda x, y: F.cross_entropy(holder["model"](x), y))
    for _ in range(2):
        assert torch.equal(compiled(X), model(X))
        assert loss_of(X, Y).item() == F.cross_entropy(model(X), Y).item()
    model[2] = nn.Linear(6, 3)
    assert torch.equal(compiled(X), model(X))
    holder["model"] = other = _model(seed=3)
    assert loss_of(X, Y).item() == F.cross_entropy(other(X), Y).item()
    loss_of(X, Y).backward()
    assert all(p.grad is not None for p in other.parameters())
    offset = torch.zeros(3)
    shifted = torch.compile(lambda x: model(x) + offset)
    shifted(X)
    offset.requires_grad_()
    shifted(X).sum().backward()  # now an input that gets its gradient
    assert offset.grad.tolist() == [float(len(X))] * 3


def test_gradients_discarded_unread_are_freed_before_the_program_runs():
    """A step that zeroes the gradients (set_to_none) first drops them before its program
    computes the new ones, as eager ``zero_grad()`` does: the old gradients' memory is
    free while the new ones are made; one that accumulates into them keeps them."""
    import weakref
    for set_to_none, dropped in ((True, True), (False, False)):
        model = _model()
        opt = torch.optim.SGD(model.parameters(), lr=0.1)

        @torch.compile
        def step(x, y):
            opt.zero_grad(set_to_none=set_to_none)
            F.cross_entropy(model(x), y).backward()
            opt.step()
        eager = _model()
        eager_opt = torch.optim.SGD(eager.parameters(), lr=0.1)
        for _ in range(3):
            step(X, Y)
            eager_opt.zero_grad(set_to_none=set_to_none)
            F.cross_entropy(eager(X), Y).backward()
            eager_opt.step()
        replay = step._program.step._replay
        old = [weakref.ref(p.grad) for p in model.parameters()]
        alive = []
        program = replay.program

        def spied(*raws):  # which old gradients are alive while the program runs
            alive.append([r() is not None for r in old])
            return program(*raws)
        replay.program = spied
        step(X, Y)
        eager_opt.zero_grad(set_to_none=set_to_none)
        F.cross_entropy(eager(X), Y).backward()
        eager_opt.step()
        assert alive == [[not dropped] * 4], set_to_none
        for p, q in zip(model.parameters(), eager.parameters()):
            assert torch.equal(p, q) and torch.equal(p.grad, q.grad)


def test_a_table_filled_in_a_module_that_had_none_is_seen():
    """The guard checks a module's empty tables by their truth alone: a buffer, a
    parameter or a submodule added to one (the ReLU's, the Linear's buffers) is seen,
    the state searched again, and the results stay eager's."""
    def run(compiled):
        model = _model()
        step = _sgd_step(model, torch.optim.SGD(model.parameters(), lr=0.1))
        fn = torch.compile(step) if compiled else step
        searched = []
        for k, change in enumerate([None, None, None,
                                    lambda: model[1].register_buffer("b", torch.ones(1)),
                                    None,
                                    lambda: model[0].register_buffer("b", torch.ones(2)),
                                    lambda: setattr(model[1], "inner", nn.Identity())]):
            if change is not None:
                change()
            if compiled and k == 3:
                program = fn._program.step
                original = program._call
                program._call = lambda *a: searched.append(k) or original(*a)
            fn(X, Y)
        return [p.detach().clone() for p in model.parameters()], searched
    eager, _ = run(False)
    compiled, searched = run(True)
    assert searched == [3, 5, 6]
    assert all(torch.equal(a, b) for a, b in zip(eager, compiled))


def test_small_parameters_are_updated_in_their_own_memory():
    """Every parameter's update, a bias's too, is written by the program into the
    parameter's memory (no copy back after it); a view of a bias sees each update."""
    model = _model()
    opt = torch.optim.SGD(model.parameters(), lr=0.1)
    bias = model[2].bias
    alias = bias.detach().numpy()

    @torch.compile
    def step(x, y):
        opt.zero_grad()
        F.cross_entropy(model(x), y).backward()
        opt.step()
    for _ in range(4):
        before, version = alias.copy(), bias._version
        step(X, Y)
        assert not np.array_equal(alias, before) and bias._version > version
    np.testing.assert_array_equal(alias, bias.detach().numpy())
    replay = step._program.step._replay
    source = step._program.step.jitted._cache  # the programs compiled, donated
    assert replay is not None and replay.donated
    assert all(text.count("out=v") >= 4 for text in
               (e.program.as_text() for e in source.values()))
