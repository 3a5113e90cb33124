"""In-place ops: compute anew, rebind, bump the version; PyTorch's version-counter errors;
safe in-place that re-points grad_fn; aliases that share storage; the view limitation."""
import numpy as np
import pytest

import funcgrad.torch as torch

HINT = ("Hint: enable anomaly detection to find the operation that failed to compute its "
        "gradient, with torch.autograd.set_detect_anomaly(True, check_nan=False).")


def leaf(values):
    return torch.tensor(values, requires_grad=True)


def test_every_inplace_op_bumps_the_version():
    t = torch.zeros(3)
    versions = [t._version]
    for op in (lambda: t.add_(1), lambda: t.mul_(2), lambda: t.sub_(1), lambda: t.div_(2),
               lambda: t.zero_(), lambda: t.fill_(3), lambda: t.copy_(torch.ones(3)),
               lambda: t.clamp_(0, 2), lambda: t.__setitem__(0, 5.0), lambda: t.exp_()):
        op()
        versions.append(t._version)
    assert versions == list(range(11))


def test_inplace_ops_return_self_and_compute():
    t = torch.tensor([1.0, -2.0, 3.0])
    assert t.add_(1) is t and t.tolist() == [2.0, -1.0, 4.0]
    t.mul_(torch.tensor([1.0, 2.0, 0.5]))
    assert t.tolist() == [2.0, -2.0, 2.0]
    t.clamp_(min=0)
    assert t.tolist() == [2.0, 0.0, 2.0]
    t += 1
    t *= 2
    assert t.tolist() == [6.0, 2.0, 6.0]
    t.copy_(torch.tensor([1, 2, 3]))
    assert t.tolist() == [1.0, 2.0, 3.0] and t.dtype is torch.float32
    t.zero_()
    assert t.tolist() == [0.0, 0.0, 0.0]


def test_inplace_cannot_change_dtype_category():
    i = torch.tensor([1, 2])
    with pytest.raises(RuntimeError, match="result type Float can't be cast to the desired "
                                           "output type Long"):
        i.add_(1.5)
    f = torch.tensor([1.0])
    f.add_(torch.tensor([1.0], dtype=torch.float64))
    assert f.dtype is torch.float32


def test_leaf_requiring_grad_inplace_raises_unless_no_grad():
    w = leaf([1.0, 2.0])
    with pytest.raises(RuntimeError, match="^a leaf Variable that requires grad is being used "
                                           "in an in-place operation.$"):
        w.add_(1)
    with pytest.raises(RuntimeError, match="a leaf Variable that requires grad"):
        w[0] = 3.0
    with torch.no_grad():
        w.add_(1)
        w -= 0.5
    assert w.tolist() == [1.5, 2.5] and w.is_leaf and w.requires_grad


def test_modified_saved_output_raises_pytorchs_error():
    x = leaf([1.0, 2.0, 3.0])
    y = x.sigmoid()  # SigmoidBackward0 saves its output
    y.mul_(2)
    with pytest.raises(RuntimeError) as e:
        y.sum().backward()
    assert str(e.value) == (
        "one of the variables needed for gradient computation has been modified by an "
        "inplace operation: [torch.FloatTensor [3]], which is output 0 of Sigmoid, "
        f"is at version 1; expected version 0 instead. {HINT}")


def test_modified_saved_input_names_its_current_grad_fn():
    x = leaf([1.0, 2.0])
    b = x * 1
    c = b * b  # saves b (version 0)
    b.add_(1)  # b is now output 0 of AddBackward0 ("Add" in the message), version 1
    with pytest.raises(RuntimeError, match=r"\[torch.FloatTensor \[2\]\], which is output 0 of "
                                           r"Add, is at version 1; expected version 0"):
        c.sum().backward()


def test_modified_saved_leaf_has_no_which_clause():
    w = leaf([[1.0, 2.0]])
    x = torch.ones(2, 2)
    y = w @ x  # saves x for w's gradient
    x.mul_(3)
    with pytest.raises(RuntimeError, match=r"inplace operation: \[torch.FloatTensor \[2, 2\]\] "
                                           r"is at version 1; expected version 0 instead."):
        y.sum().backward()


def test_anomaly_mode_changes_the_hint():
    x = leaf([1.0])
    y = x.exp()
    y.add_(1)
    with pytest.warns(UserWarning):
        with torch.autograd.detect_anomaly():
            with pytest.raises(RuntimeError, match="Hint: the backtrace further above shows "
                                                   "the operation that failed"):
                y.sum().backward()


def test_safe_inplace_repoints_grad_fn():
    x = leaf([1.0, 2.0])
    y = x * 2
    first = y.grad_fn
    y.add_(1)
    assert y.grad_fn is not first and y.grad_fn.name() == "AddBackward0"
    assert y.grad_fn.next_functions[0] == (first, 0) and y._version == 1
    y.exp_()
    assert y.grad_fn.name() == "ExpBackward0"
    y.sum().backward()
    np.testing.assert_allclose(x.grad.numpy(), 2 * np.exp([3.0, 5.0]), rtol=1e-6)


def test_inplace_on_plain_tensor_with_grad_operand_makes_it_non_leaf():
    w = leaf([1.0, 2.0])
    acc = torch.zeros(2)
    acc.add_(w * 3)
    assert not acc.is_leaf and acc.requires_grad and acc.grad_fn.name() == "AddBackward0"
    acc.sum().backward()
    assert w.grad.tolist() == [3.0, 3.0]


def test_setitem_is_copyslices_and_differentiable():
    x = leaf([1.0, 2.0, 3.0])
    v = leaf([10.0])
    y = x * 1
    y[1:2] = v * v
    assert y.grad_fn.name() == "torch::autograd::CopySlices" and y.tolist() == [1.0, 100.0, 3.0]
    y.sum().backward()
    assert x.grad.tolist() == [1.0, 0.0, 1.0] and v.grad.tolist() == [20.0]
    m = torch.zeros(2, 3)
    m[:, 0] = 1.0
    m[m == 0] = 2.0
    assert m.tolist() == [[1.0, 2.0, 2.0], [1.0, 2.0, 2.0]]


def test_detach_shares_storage_and_version():
    x = leaf([1.0, 2.0])
    d = x.detach()
    assert d._version == x._version
    d.add_(1)  # d does not require grad: allowed, and x sees it
    assert x.tolist() == [2.0, 3.0] and x._version == 1


def test_data_shares_storage_not_version():
    w = leaf([1.0, 2.0])
    w.data.mul_(10)
    assert w.tolist() == [10.0, 20.0] and w._version == 0
    w.data = torch.tensor([0.0, 1.0])
    assert w.tolist() == [0.0, 1.0] and w.requires_grad


def test_version_error_after_optimizer_style_update_of_saved_leaf():
    w = leaf([1.0, 2.0])
    y = (w * w).sum()
    with torch.no_grad():
        w.sub_(0.1)
    with pytest.raises(RuntimeError, match="is at version 1; expected version 0"):
        y.backward()


def test_writes_through_views_reach_the_base():
    x = torch.zeros(2, 2)
    row = x[0]
    row.fill_(1.0)  # PyTorch writes into x, and so do we
    assert x.tolist() == [[1.0, 1.0], [0.0, 0.0]] and row.tolist() == [1.0, 1.0]
    assert x._version == row._version == 1 and row._base is x
    x.t()[1].add_(2.0)  # a view's view writes into the first base
    assert x.tolist() == [[1.0, 3.0], [0.0, 2.0]] and row.tolist() == [1.0, 3.0]


