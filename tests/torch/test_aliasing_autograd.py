"""Aliasing under autograd, checked differentially against PyTorch (the `aliasing` fixture,
tests/torch/conftest.py): gradients through in-place writes on views (float64, to 1e-12),
second derivatives, the saved-tensor version errors with PyTorch's whole messages, the
idioms users write (`.data[...]` writes, `grad[...].zero_()`, in-place optimizers,
`zero_grad`), and threads sharing leaves and modules. The view x in-place table is in
test_aliasing.py.
"""
import sys
import threading

import numpy as np
import pytest

pytest.importorskip("torch")


def graph(fn):
    """A node and the class names of the nodes it feeds into."""
    return None if fn is None else ((type(fn).__name__, fn.name()),
                                    [None if f is None else type(f).__name__
                                     for f, _ in fn.next_functions])


def leaf(T, *shape, scale=7.0):
    """A float64 leaf requiring grad with distinct, non-integer entries."""
    n = int(np.prod(shape))
    return (T.arange(n, dtype=T.float64).reshape(shape) / scale + 0.5).requires_grad_()


def backward_facts(loss, y, view, inputs):
    """Run backward, then record the graph around the in-place write and every gradient."""
    facts = {"y": y.tolist, "view": view.tolist, "y.grad_fn": lambda: graph(y.grad_fn),
             "view.grad_fn": lambda: graph(view.grad_fn), "y._version": lambda: y._version,
             "backward": lambda: loss(y).backward()}
    facts.update({f"{name}.grad": (lambda t=t: t.grad) for name, t in inputs.items()})
    return facts


def rows_times_w(T):
    x, w = leaf(T, 4, 6), leaf(T, 6, scale=3.0)
    y = x.clone()
    view = y[:2]
    view.mul_(w)
    return backward_facts(lambda y: y.sum(), y, view, {"x": x, "w": w})


def transposed_row_plus_z(T):
    x, z = leaf(T, 4, 6), leaf(T, 4, scale=5.0)
    y = x.clone()
    view = y.t()[0]
    view.add_(z)
    return backward_facts(lambda y: (y * y).sum(), y, view, {"x": x, "z": z})


def diagonal_copied_from_d(T):
    x, d = leaf(T, 4, 6), leaf(T, 4, scale=2.0)
    y = x.clone()
    view = y.diagonal()
    view.copy_(d.exp())
    return backward_facts(lambda y: (y * y.sin()).sum(), y, view, {"x": x, "d": d})


def chain_of_views(T):
    x, w = leaf(T, 4, 6), leaf(T, 3, scale=2.0)
    y = x * 1
    view = y[1:][:, ::2]
    view.mul_(w)
    return backward_facts(lambda y: (y ** 3).sum(), y, view, {"x": x, "w": w})


def view_taken_before_base_write(T):
    """The view's grad_fn is regenerated after its base is written in place."""
    x, s = leaf(T, 4, 6), T.tensor(1.5, dtype=T.float64, requires_grad=True)
    y = x.clone()
    view = y[:, 1]
    y.mul_(s)
    return backward_facts(lambda y: (view * view).sum(), y, view, {"x": x, "s": s})


def several_writes(T):
    x, w, z = leaf(T, 4, 6), leaf(T, 4, scale=3.0), leaf(T, 6, scale=4.0)
    y = x.clone()
    y[0].add_(1)
    y.mul_(2)
    y[:, 1].mul_(w)
    y.t()[2].sub_(w.exp())
    view = y[3]
    view.copy_(z)
    y[y > 3] = 0.25 * y[y > 3]
    return backward_facts(lambda y: (y ** 3).sum(), y, view, {"x": x, "w": w, "z": z})


def setitem_with_grad_values(T):
    x, v = leaf(T, 4, 6), leaf(T, 2, 3)
    y = x.sin()  # saves x, not its output: writing y is allowed
    y[1:3, ::2] = v * v
    view = y[1:3]
    return backward_facts(lambda y: (y * y).sum(), y, view, {"x": x, "v": v})


PROGRAMS = [rows_times_w, transposed_row_plus_z, diagonal_copied_from_d, chain_of_views,
            view_taken_before_base_write, several_writes, setitem_with_grad_values]


@pytest.mark.parametrize("program", PROGRAMS, ids=lambda p: p.__name__)
def test_gradients_through_inplace_on_views(aliasing, program):
    facts = aliasing.same(program, rtol=1e-12)
    if program is rows_times_w:  # what PyTorch 2.13 says (view replay is off by default)
        assert facts["y.grad_fn"][0] == ("CopySlices", "torch::autograd::CopySlices")
        assert facts["view.grad_fn"][0] == ("AsStridedBackward0", "AsStridedBackward0")


def double_backward(T):
    x, w = leaf(T, 4, 6), leaf(T, 6, scale=3.0)
    y = x * x
    y[:2].mul_(w)
    y.t()[1].add_(w[:4] ** 2)
    gx, gw = T.autograd.grad((y * y.sin()).sum(), (x, w), create_graph=True)
    return {"gx": gx.tolist, "gw": gw.tolist, "gx.grad_fn": lambda: gx.grad_fn is not None,
            "backward": lambda: (gx.pow(2).sum() + (gw * gw.cos()).sum()).backward(),
            "x.grad": lambda: x.grad, "w.grad": lambda: w.grad}


def test_double_backward_through_inplace_on_views(aliasing):
    aliasing.same(double_backward, rtol=1e-12)


# --- the saved-tensor version errors -----------------------------------------------------

def linear_step_between_backwards(T, x_requires_grad):
    """`nn.Linear` saves `weight.t()` (when the input needs a gradient); an optimizer step
    writes the weight in place; the second backward must refuse (PyTorch's whole text)."""
    T.manual_seed(0)
    lin = T.nn.Linear(4, 6)
    opt = T.optim.SGD(lin.parameters(), lr=0.1)
    x = T.ones(3, 4, requires_grad=x_requires_grad)
    loss = lin(x).sum()
    return {"first": lambda: loss.backward(retain_graph=True), "step": opt.step,
            "second": loss.backward, "weight._version": lambda: lin.weight._version}


@pytest.mark.parametrize("x_requires_grad", [True, False], ids=["x-needs-grad", "x-plain"])
def test_optimizer_step_between_backwards(aliasing, x_requires_grad):
    facts = aliasing.same(linear_step_between_backwards, x_requires_grad)
    assert (type(facts["second"]).__name__ == "Raised") == x_requires_grad


def saved_output_written_through_view(T):
    x = T.ones(3, 4, requires_grad=True)
    y = x.exp()  # saves its output
    y[0].mul_(2)
    return {"backward": y.sum().backward}


def saved_view_then_base_written(T):
    x = T.ones(3, 4, requires_grad=True)
    y = x * 1
    z = y.t()
    s = (z * z).sum()  # saves z, a view of y
    y[0].mul_(2)
    return {"backward": s.backward}


def saved_leaf_written_under_no_grad(T):
    w = T.ones(4, requires_grad=True)
    loss = (w * w).sum()
    with T.no_grad():
        w[:2].mul_(2)
    return {"backward": loss.backward, "w._version": lambda: w._version}


def saved_leaf_written_through_detach(T):
    w = T.ones(4, requires_grad=True)
    loss = (w * w).sum()
    w.detach()[1:].add_(1)
    return {"backward": loss.backward, "w._version": lambda: w._version}


def saved_leaf_written_through_data(T):
    """`.data` writes are not tracked: no error, and backward reads the new values (the saved
    tensor is the same memory)."""
    w = T.ones(4, requires_grad=True)
    loss = (w * w * w).sum()
    w.data[:2].mul_(2)
    return {"backward": loss.backward, "w.grad": lambda: w.grad,
            "w._version": lambda: w._version}


@pytest.mark.parametrize("program", [
    saved_output_written_through_view, saved_view_then_base_written,
    saved_leaf_written_under_no_grad, saved_leaf_written_through_detach,
    saved_leaf_written_through_data], ids=lambda p: p.__name__)
def test_saved_tensor_version_errors(aliasing, program):
    aliasing.same(program)


# --- users' idioms -----------------------------------------------------------------------

def module_data_writes(T):
    T.manual_seed(0)
    lin = T.nn.Linear(4, 5)
    bias, before = lin.bias, lin.bias.tolist()
    lin.bias.data[:2].fill_(1.0)
    lin.weight.data.t()[0].zero_()
    return {"bias[:2]": lambda: lin.bias[:2].tolist(),
            "bias[2:] unchanged": lambda: lin.bias[2:].tolist() == before[2:],
            "same bias": lambda: lin.bias is bias,
            "weight[:, 0]": lambda: lin.weight[:, 0].tolist(),
            "bias._version": lambda: lin.bias._version,
            "bias.requires_grad": lambda: lin.bias.requires_grad}


def grad_slice_zeroed(T):
    x = leaf(T, 4)
    (x * x).sum().backward()
    g = x.grad
    x.grad[:2].zero_()
    return {"x.grad": lambda: x.grad, "same grad": lambda: x.grad is g,
            "accumulate": lambda: (x * x).sum().backward(), "x.grad after": lambda: x.grad}


def leaf_view_written_under_no_grad(T):
    w = T.ones(4, requires_grad=True)
    with T.no_grad():
        view = w[:2]
        view.mul_(2)
        inside = view.requires_grad
    return {"w": w.tolist, "w._version": lambda: w._version, "view inside no_grad": inside,
            "w.is_leaf": lambda: w.is_leaf, "w.grad_fn": lambda: w.grad_fn,
            "backward": lambda: (w * w).sum().backward(), "w.grad": lambda: w.grad}


def no_grad_view_after_its_write(T):
    """PyTorch refuses to give the grad_fn of a view made under no_grad once its base was
    written in place (even when the write was under no_grad too)."""
    w = T.ones(4, requires_grad=True)
    with T.no_grad():
        view = w[:2]
        view.mul_(2)
    return {"view.grad_fn": lambda: view.grad_fn, "view": view.tolist}


@pytest.mark.parametrize("program", [module_data_writes, grad_slice_zeroed,
                                     leaf_view_written_under_no_grad,
                                     no_grad_view_after_its_write], ids=lambda p: p.__name__)
def test_idioms(aliasing, program):
    aliasing.same(program, rtol=1e-12)


OPTIMIZERS = {
    "SGD": lambda T, ps: T.optim.SGD(ps, lr=0.1),
    "SGD-momentum": lambda T, ps: T.optim.SGD(ps, lr=0.1, momentum=0.9, weight_decay=0.01),
    "Adam": lambda T, ps: T.optim.Adam(ps, lr=0.1),
    "AdamW": lambda T, ps: T.optim.AdamW(ps, lr=0.1),
    "RMSprop": lambda T, ps: T.optim.RMSprop(ps, lr=0.01),
    "Adagrad": lambda T, ps: T.optim.Adagrad(ps, lr=0.1),
}


def optimizer_updates_in_place(T, name):
    p = T.nn.Parameter(T.tensor([1.0, -2.0, 3.0, 0.5], dtype=T.float64))
    p_before, ptr = p, p.data_ptr()
    data_view, grad_view = p.data[1:3], p[1:3]
    opt = OPTIMIZERS[name](T, [p])
    for _ in range(3):
        opt.zero_grad()
        (p * p * T.tensor([1.0, 2.0, 3.0, 4.0], dtype=T.float64)).sum().backward()
        opt.step()
    g, g_view = p.grad, p.grad[:2]
    return {"p": p.tolist, "same p": lambda: p is p_before,
            "same ptr": lambda: p.data_ptr() == ptr,
            "p.data view": data_view.tolist, "p view": grad_view.tolist,
            "p._version moved": lambda: p._version > 0, "is_leaf": lambda: p.is_leaf,
            "zero_grad(set_to_none=False)": lambda: opt.zero_grad(set_to_none=False),
            "same grad": lambda: p.grad is g, "grad view": g_view.tolist,
            "zero_grad()": opt.zero_grad, "grad after zero_grad()": lambda: p.grad is None}


@pytest.mark.parametrize("name", OPTIMIZERS)
def test_optimizers_update_in_place(aliasing, name):
    facts = aliasing.same(optimizer_updates_in_place, name, rtol=1e-12)
    assert facts["p view"] == facts["p"][1:3] and facts["grad view"] == [0.0, 0.0]


# --- threads -----------------------------------------------------------------------------

def run_threads(*works):
    """Run each work in its own thread, switching often so that races show at once;
    returns what they raised."""
    errors = []

    def guarded(work):
        try:
            work()
        except Exception as error:  # reported to the test, which fails on it
            errors.append(f"{type(error).__name__}: {error}")

    pool = [threading.Thread(target=guarded, args=(w,)) for w in works]
    interval = sys.getswitchinterval()
    sys.setswitchinterval(1e-5)
    try:
        for t in pool:
            t.start()
        for t in pool:
            t.join()
    finally:
        sys.setswitchinterval(interval)
    return errors


def shared_leaf_accumulation(T, calls):
    w = T.ones(4, requires_grad=True)
    barrier = threading.Barrier(8)

    def work(k):
        x = T.full((4,), float(k + 1))
        barrier.wait()
        for _ in range(calls):
            (w * x).sum().backward()

    errors = run_threads(*[lambda k=k: work(k) for k in range(8)])
    return {"errors": errors, "w.grad": w.grad}


def test_eight_threads_accumulate_into_one_leaf_exactly(aliasing):
    """Each thread k adds k + 1 per call to every entry: the sum is exact in float32. PyTorch
    runs a tenth of the calls: it checks the program, funcgrad the race."""
    def expected(calls):
        return {"errors": [], "w.grad": [float(calls * sum(range(1, 9)))] * 4}
    assert aliasing.facts(shared_leaf_accumulation, aliasing.real, 200) == expected(200)
    assert aliasing.facts(shared_leaf_accumulation, aliasing.ours, 2000) == expected(2000)


def checkpoint_beside_direct_use(T, calls):
    """One thread runs a module under `utils.checkpoint` while another runs it directly:
    both get the single-threaded results, and the module's parameters stay the same
    objects on the same memory throughout (checked inside every forward)."""
    from importlib import import_module  # `import torch` does not import utils.checkpoint
    checkpoint = import_module(T.__name__ + ".utils.checkpoint").checkpoint
    lin = T.nn.Linear(4, 4)
    with T.no_grad():
        lin.weight.copy_(T.arange(16.).reshape(4, 4) / 10 - 0.7)
        lin.bias.copy_(T.tensor([0.1, -0.2, 0.3, 0.0]))
    weight, ptr, replaced = lin.weight, lin.weight.data_ptr(), []

    def net(x):
        if lin.weight is not weight or lin.weight.data_ptr() != ptr:
            replaced.append(type(lin.weight).__name__)
        return T.tanh(lin(x)) * x

    inputs = {"checkpointed": T.linspace(-1, 1, 8).reshape(2, 4),
              "direct": T.linspace(2, -1, 8).reshape(2, 4)}
    runs = {"checkpointed": lambda x: checkpoint(net, x, use_reentrant=False), "direct": net}

    def once(kind):
        x = inputs[kind].clone().requires_grad_()
        out = runs[kind](x)
        out.sum().backward()
        return out.tolist(), x.grad.tolist()

    reference = {kind: once(kind) for kind in runs}
    wrong = []

    def work(kind):
        for _ in range(calls):
            got = once(kind)
            if not np.allclose(got, reference[kind], rtol=1e-6, atol=1e-7):
                wrong.append(kind)

    lin.zero_grad()
    errors = run_threads(*[lambda k=k: work(k) for k in runs])
    return {"errors": errors, "wrong results": wrong, "parameters replaced": replaced,
            "same weight": lin.weight is weight}


def test_checkpoint_in_one_thread_and_direct_use_in_another(aliasing):
    facts = aliasing.same(checkpoint_beside_direct_use, 50)
    assert facts == {"errors": [], "wrong results": [], "parameters replaced": [],
                     "same weight": True}
