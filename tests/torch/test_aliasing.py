"""Aliasing as PyTorch has it, checked differentially: each program runs on real PyTorch
and on funcgrad.torch (the `aliasing` fixture, tests/torch/conftest.py) and every fact it
records must agree: values, version counters, `_is_view()`/`_base`, storage pointers,
offsets and strides, and the exact error texts where PyTorch refuses.

- the table: every view op x every in-place op, and writes into a base seen by its views;
- ops that copy (they must not alias) and ops that return the tensor itself;
- views of tensors that require grad: the errors, and in-place writes through each view
  differentiated (CopySlices);
- memory shared with numpy (`from_numpy`, `numpy()`, `as_tensor`).
The explicit autograd programs, the optimizer idioms and the threads are in
test_aliasing_autograd.py.
"""
import operator
import warnings

import numpy as np
import pytest

pytest.importorskip("torch")


def grid(T, double=False):
    return T.arange(24., dtype=T.float64 if double else T.float32).reshape(4, 6)


def row(T, double=False):
    return T.arange(6., dtype=T.float64 if double else T.float32)


def cube(T, double=False):
    return grid(T, double).reshape(2, 3, 4)


def column(T, double=False):
    return grid(T, double).reshape(4, 1, 6)


def complex_grid(T, double=False):
    return T.tensor([[complex(3 * r + k, r - k) for k in range(3)] for r in range(4)],
                    dtype=T.complex128 if double else T.complex64)


# name: (the base, the view of it). grid, cube and column are themselves views of an
# arange: a view's `_base` is that root, not the base it was taken from (the facts check).
VIEWS = {
    "view": (grid, lambda T, b: b.view(3, 8)),
    "view(-1)": (grid, lambda T, b: b.view(-1)),
    "reshape": (grid, lambda T, b: b.reshape(6, 4)),
    "flatten": (cube, lambda T, b: b.flatten(1)),
    "slice": (grid, lambda T, b: b[1:3]),
    "slice-step": (grid, lambda T, b: b[:, 1::2]),
    "slice-of-slice": (grid, lambda T, b: b[1:][:, ::2]),
    "int-index": (grid, lambda T, b: b[2]),
    "none-ellipsis": (grid, lambda T, b: b[None, ..., 3]),
    "t": (grid, lambda T, b: b.t()),
    "transpose": (cube, lambda T, b: b.transpose(0, 2)),
    "permute": (cube, lambda T, b: b.permute(2, 0, 1)),
    "mT": (cube, lambda T, b: b.mT),
    "expand": (row, lambda T, b: b.expand(4, 6)),
    "narrow": (grid, lambda T, b: b.narrow(1, 2, 3)),
    "select": (grid, lambda T, b: b.select(1, 2)),
    "unsqueeze": (grid, lambda T, b: b.unsqueeze(1)),
    "squeeze": (column, lambda T, b: b.squeeze(1)),
    "diagonal": (grid, lambda T, b: b.diagonal()),
    "diagonal-offset": (cube, lambda T, b: b.diagonal(1, 1, 2)),
    "unfold": (grid, lambda T, b: b.unfold(1, 2, 2)),
    "unfold-overlapping": (grid, lambda T, b: b.unfold(1, 3, 1)),
    "as_strided": (grid, lambda T, b: b.as_strided((3, 3), (6, 1), 1)),
    "view_as_real": (complex_grid, lambda T, b: T.view_as_real(b)),
    "real": (complex_grid, lambda T, b: b.real),
    "imag": (complex_grid, lambda T, b: b.imag),
    "detach": (grid, lambda T, b: b.detach()),
    "data": (grid, lambda T, b: b.data),
    "split": (grid, lambda T, b: b.split(2)[1]),
    "chunk": (grid, lambda T, b: b.chunk(3, dim=1)[1]),
    "unbind": (grid, lambda T, b: b.unbind(1)[2]),
}

WRITES = {
    "add_": lambda T, v: v.add_(100),
    "mul_": lambda T, v: v.mul_(-2),
    "+=": lambda T, v: operator.iadd(v, 1),
    "copy_": lambda T, v: v.copy_(T.arange(v.numel()).reshape(v.shape).neg()),
    "fill_": lambda T, v: v.fill_(-1),
    "zero_": lambda T, v: v.zero_(),
    "clamp_": lambda T, v: v.clamp_(3, 10),
    "v[0]=": lambda T, v: v.__setitem__(0, -5.0),
    "v[mask]=": lambda T, v: v.__setitem__(v > 7, 0.5),
    "out=": lambda T, v: T.add(T.ones(v.shape, dtype=v.dtype), 5, out=v),
}


def returned(result, tensor):
    """What an in-place call gave back: the tensor itself, None (setitem) or another."""
    return "self" if result is tensor else "None" if result is None else "another tensor"


def layout(base, view):
    """The facts a write through a view (or into its base) must leave as PyTorch does."""
    return {
        "base": base.tolist, "view": view.tolist,
        "base._version": lambda: base._version, "view._version": lambda: view._version,
        "view._is_view()": lambda: view._is_view(), "base._is_view()": lambda: base._is_view(),
        "view._base is base": lambda: view._base is base,
        "view._base is base._base": lambda: view._base is base._base,
        "same storage": lambda: (view.untyped_storage().data_ptr()
                                 == base.untyped_storage().data_ptr()),
        "storage_offset": lambda: view.storage_offset(), "stride": lambda: tuple(view.stride()),
        "is_contiguous": lambda: view.is_contiguous(), "shape": lambda: tuple(view.shape),
        "dtype": lambda: str(view.dtype),
    }


def write_through_view(T, view_name, write_name):
    make_base, make_view = VIEWS[view_name]
    base = make_base(T)
    view = make_view(T, base)
    return {"write": lambda: returned(WRITES[write_name](T, view), view), **layout(base, view)}


def write_into_base(T, view_name):
    make_base, make_view = VIEWS[view_name]
    base = make_base(T)
    view = make_view(T, base)
    return {"write": lambda: returned(base.mul_(-3), base), **layout(base, view)}


# Writing a result computed from overlapping windows back into them is undefined in
# PyTorch (the values depend on its loop order); funcgrad.torch refuses it with PyTorch's
# overlap error instead, leaving the memory untouched.
UNDEFINED_IN_PYTORCH = {("unfold-overlapping", w)
                        for w in ("add_", "mul_", "+=", "copy_", "clamp_", "out=")}


@pytest.mark.filterwarnings("ignore:Use of .* on expanded tensors is deprecated")
@pytest.mark.parametrize("write", WRITES)
@pytest.mark.parametrize("view", VIEWS)
def test_write_through_view(aliasing, view, write):
    if (view, write) not in UNDEFINED_IN_PYTORCH:
        aliasing.same(write_through_view, view, write)
        return
    import funcgrad.torch as ours
    make_base, make_view = VIEWS[view]
    base = make_base(ours)
    before = base.tolist()
    with pytest.raises(RuntimeError, match="more than one element of the written-to tensor"):
        WRITES[write](ours, make_view(ours, base))
    assert base.tolist() == before and base._version == 0


@pytest.mark.parametrize("view", VIEWS)
def test_write_into_base_is_seen_by_view(aliasing, view):
    aliasing.same(write_into_base, view)


# --- ops that copy, and ops that return the tensor itself ---------------------------------

COPIES = {
    "clone": lambda T, b: b.clone(),
    "contiguous-of-t": lambda T, b: b.t().contiguous(),
    "flip": lambda T, b: b.flip(0),
    "roll": lambda T, b: b.roll(1, 0),
    "b[[0, 2]]": lambda T, b: b[[0, 2]],
    "b[mask]": lambda T, b: b[b > 10],
    "index_select": lambda T, b: b.index_select(0, T.tensor([0, 2])),
    "reshape-of-t": lambda T, b: b.t().reshape(24),
    "flatten-of-t": lambda T, b: b.t().flatten(),
    "to(float64)": lambda T, b: b.to(T.float64),
    "double": lambda T, b: b.double(),
    "to(copy=True)": lambda T, b: b.to(T.float32, copy=True),
    "tensor(t)": lambda T, b: T.tensor(b),
    "as_tensor-new-dtype": lambda T, b: T.as_tensor(b, dtype=T.float64),
}


def warning_texts(caught):
    """Category and text of each warning, without PyTorch's C++ source location."""
    return [(w.category.__name__, str(w.message).split(" (Triggered internally at")[0])
            for w in caught]


def copy_then_write_both(T, name):
    base = grid(T)
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        copy = COPIES[name](T, base)
    return {
        "warnings": warning_texts(caught),
        "copy._is_view()": lambda: copy._is_view(),
        "copy._base is None": lambda: copy._base is None,
        "same storage": lambda: (copy.untyped_storage().data_ptr()
                                 == base.untyped_storage().data_ptr()),
        "write base": lambda: returned(base.add_(1000), base),
        "copy after": copy.tolist,
        "write copy": lambda: returned(copy.mul_(-1), copy),
        "base after": base.tolist,
        "base._version": lambda: base._version, "copy._version": lambda: copy._version,
    }


@pytest.mark.parametrize("name", COPIES)
def test_copies_do_not_alias(aliasing, name):
    facts = aliasing.same(copy_then_write_both, name)
    assert facts["same storage"] is False


def same_objects(T):
    f = grid(T)
    return {
        "to(f.dtype)": lambda: f.to(f.dtype) is f, "to(float32)": lambda: f.to(T.float32) is f,
        "to('cpu')": lambda: f.to("cpu") is f, "cpu()": lambda: f.cpu() is f,
        "contiguous()": lambda: f.contiguous() is f, "float()": lambda: f.float() is f,
        "type(float32)": lambda: f.type(T.float32) is f,
        "requires_grad_(False)": lambda: f.requires_grad_(False) is f,
        "to(copy=True)": lambda: f.to(f.dtype, copy=True) is f,
        "double()": lambda: f.double() is f, "detach()": lambda: f.detach() is f,
        "t().contiguous()": lambda: f.t().contiguous() is f,
        "view_as(f)": lambda: f.view_as(f) is f,
        "reshape(f.shape)": lambda: f.reshape(f.shape) is f,
    }


def test_ops_that_return_the_tensor_itself(aliasing):
    facts = aliasing.same(same_objects)
    assert facts["to(f.dtype)"] and facts["contiguous()"] and not facts["double()"]


# --- layout errors ---------------------------------------------------------------------

def layout_errors(T):
    t = grid(T).t()
    return {
        "t.view(24)": lambda: t.view(24).tolist(),
        "t.view(-1)": lambda: t.view(-1).tolist(),
        "t.view(2, 12)": lambda: t.view(2, 12).tolist(),
        "t.view(6, 2, 2)": lambda: t.view(6, 2, 2).tolist(),
        "t.reshape(24)": lambda: t.reshape(24).tolist(),
        "stepped.view(12)": lambda: grid(T)[:, ::2].view(12).tolist(),
        "stepped.view(4, 3)": lambda: grid(T)[:, ::2].view(4, 3).tolist(),
        "view(5, 5)": lambda: grid(T).view(5, 5),
        "as_strided out of bounds": lambda: grid(T).as_strided((10, 10), (6, 1)),
        "expanded.view(24)": lambda: row(T).expand(4, 6).view(24).tolist(),
        "expanded.view(4, 6)": lambda: row(T).expand(4, 6).view(4, 6).stride(),
    }


def test_layout_errors_are_pytorchs(aliasing):
    facts = aliasing.same(layout_errors)
    assert type(facts["t.view(24)"]).__name__ == type(facts["view(5, 5)"]).__name__ == "Raised"


# --- views of tensors that require grad ------------------------------------------------

def write_leaf(T, write_name):
    leaf = grid(T).clone().requires_grad_()
    return {"write": lambda: returned(WRITES[write_name](T, leaf), leaf),
            "leaf": leaf.tolist, "leaf._version": lambda: leaf._version,
            "is_leaf": lambda: leaf.is_leaf, "grad_fn": lambda: leaf.grad_fn}


@pytest.mark.parametrize("write", WRITES)
def test_inplace_on_leaf_requiring_grad_raises(aliasing, write):
    facts = aliasing.same(write_leaf, write)
    assert facts["write"] != "self"


def write_view_of_leaf(T, view_name):
    make_base, make_view = VIEWS[view_name]
    leaf = make_base(T).clone().requires_grad_()
    view = make_view(T, leaf)
    return {"write": lambda: returned(view.add_(1), view),
            "leaf": leaf.tolist, "leaf._version": lambda: leaf._version,
            "view.requires_grad": lambda: view.requires_grad,
            "view.grad_fn": lambda: view.grad_fn, "leaf.grad_fn": lambda: leaf.grad_fn}


@pytest.mark.parametrize("view", VIEWS)
def test_inplace_on_view_of_leaf_requiring_grad(aliasing, view):
    aliasing.same(write_view_of_leaf, view)


def differentiate_write_through_view(T, view_name):
    """y = x.clone(); view(y).mul_(s); a weighted sum of y, backward: x.grad and s.grad."""
    make_base, make_view = VIEWS[view_name]
    x = make_base(T, double=True).clone().requires_grad_()
    s = T.tensor(3.0, dtype=T.float64, requires_grad=True)
    y = x.clone()
    view = make_view(T, y)

    def backward():
        loss = (y * T.arange(y.numel(), dtype=T.float64).reshape(y.shape)).sum()
        (loss.real + 2 * loss.imag if loss.is_complex() else loss).backward()

    return {"write": lambda: returned(view.mul_(s), view),
            "y.grad_fn": lambda: y.grad_fn, "view.grad_fn": lambda: view.grad_fn,
            "y": y.tolist, "view": view.tolist,
            "y._version": lambda: y._version, "view._version": lambda: view._version,
            "backward": backward, "x.grad": lambda: x.grad, "s.grad": lambda: s.grad}


@pytest.mark.parametrize("view", VIEWS)
def test_write_through_view_differentiates(aliasing, view):
    if (view, "mul_") not in UNDEFINED_IN_PYTORCH:
        aliasing.same(differentiate_write_through_view, view, rtol=1e-12)
        return
    import funcgrad.torch as ours
    facts = differentiate_write_through_view(ours, view)
    with pytest.raises(RuntimeError, match="more than one element of the written-to tensor"):
        facts["write"]()


# --- memory shared with numpy ----------------------------------------------------------

def numpy_sharing(T):
    a, b = np.ones(3), np.arange(4.0)
    t = T.from_numpy(a)
    shared, copied, cast = T.as_tensor(b), T.tensor(b), T.as_tensor(b, dtype=T.float32)
    x = T.arange(6.)
    xn = x.numpy()
    return {
        "a[0] = 5": lambda: a.__setitem__(0, 5.0), "t after a[0] = 5": t.tolist,
        "t.add_(1)": lambda: returned(t.add_(1), t), "a after t.add_(1)": a.tolist,
        "t._version": lambda: t._version,
        "t.numpy()[1] = 7": lambda: t.numpy().__setitem__(1, 7.0), "t after": t.tolist,
        "a after": a.tolist, "t.numpy() type": lambda: type(t.numpy()).__name__,
        "b[0] = -1": lambda: b.__setitem__(0, -1.0), "as_tensor sees b": shared.tolist,
        "tensor copied b": copied.tolist, "as_tensor(float32) copied b": cast.tolist,
        "from_numpy(b[::2])": lambda: (T.from_numpy(b[::2]).tolist(),
                                       tuple(T.from_numpy(b[::2]).stride())),
        "from_numpy(b[::-1])": lambda: T.from_numpy(b[::-1]),
        "x.mul_(2)": lambda: returned(x.mul_(2), x), "xn after x.mul_(2)": xn.tolist,
        "x[1:].numpy()[0] = 100": lambda: x[1:].numpy().__setitem__(0, 100.0),
        "x after": x.tolist, "x._version": lambda: x._version,
        "requires_grad.numpy()": lambda: T.ones(2, requires_grad=True).numpy(),
    }


def test_numpy_memory_is_shared(aliasing):
    aliasing.same(numpy_sharing)


READ_ONLY_WARNING = (
    "The given NumPy array is not writable, and PyTorch does not support non-writable "
    "tensors. This means writing to this tensor will result in undefined behavior. You may "
    "want to copy the array to protect its data or make it writable before converting it to "
    "a tensor. This type of warning will be suppressed for the rest of this program.")


def from_read_only_numpy(T):
    a = np.arange(3.0)
    a.flags.writeable = False
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        t = T.from_numpy(a)
    return {"warnings": warning_texts(caught), "t": t.tolist()}


def test_read_only_numpy_array_warns(aliasing):
    """PyTorch warns once per process (a C++ flag), so a run where an earlier test made it
    warn gives no text to compare: then the recorded text stands in for it."""
    ours = aliasing.facts(from_read_only_numpy, aliasing.ours)
    real = aliasing.facts(from_read_only_numpy, aliasing.real)
    expected = [("UserWarning", READ_ONLY_WARNING)]
    assert real["warnings"] in ([], expected)
    assert ours == {"warnings": expected, "t": [0.0, 1.0, 2.0]}
