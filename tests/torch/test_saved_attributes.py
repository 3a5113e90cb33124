"""``grad_fn._saved_<name>`` / ``_raw_saved_<name>`` as PyTorch's saved-tensor-hooks
tutorial uses them, run on funcgrad.torch and on PyTorch with the same assertions."""
import numpy as np
import pytest

import funcgrad.torch as ftorch

torch = pytest.importorskip("torch")
BOTH = pytest.mark.parametrize("m", [ftorch, torch], ids=["funcgrad", "torch"])


@BOTH
def test_saved_inputs_are_the_tensors_themselves(m):
    a = m.randn(5, requires_grad=True)
    b = m.ones(5, requires_grad=True)
    y = a * b
    assert y.grad_fn._saved_self is a and y.grad_fn._saved_other is b
    assert m.pow(a, 2).grad_fn._saved_self is a
    mat1, mat2 = m.randn(2, 3, requires_grad=True), m.randn(3, 4, requires_grad=True)
    lin = m.addmm(m.zeros(4), mat1, mat2)
    assert lin.grad_fn._saved_mat1 is mat1 and lin.grad_fn._saved_mat2 is mat2


@BOTH
def test_saved_output_is_a_new_tensor_of_the_node(m):
    x = m.randn(5, requires_grad=True)
    y = x.exp()
    saved = y.grad_fn._saved_result
    assert saved.equal(y) and saved is not y
    assert saved.grad_fn is y.grad_fn
    assert "_saved_result" in dir(y.grad_fn) and "_raw_saved_result" in dir(y.grad_fn)


@BOTH
def test_saved_values_after_backward_and_errors(m):
    a, b = m.randn(3, requires_grad=True), m.randn(3, requires_grad=True)
    y = a * b
    y.sum().backward(retain_graph=True)
    assert y.grad_fn._saved_self is a  # retained
    y = a * b
    y.sum().backward()
    with pytest.raises(RuntimeError, match="^Trying to backward through the graph a second "
                       r"time \(or directly access saved tensors after they have already "
                       r"been freed\)"):
        y.grad_fn._saved_self
    with pytest.raises(AttributeError, match="_saved_nothing"):
        (a * b).grad_fn._saved_nothing


@BOTH
def test_saved_input_modified_in_place_raises(m):
    a = m.randn(3, requires_grad=True)
    c = a * 1.0
    y = c * c
    with m.no_grad():
        c.add_(1)
    with pytest.raises(RuntimeError, match="modified by an inplace operation"):
        y.grad_fn._saved_self


@BOTH
def test_raw_saved_register_hooks(m):
    calls = []
    a, b = m.tensor([1.0, 2.0, 3.0], requires_grad=True), m.ones(3, requires_grad=True)

    def pack(x):
        calls.append("pack")
        with m.no_grad():
            return x * 2

    def unpack(x):
        calls.append("unpack")
        return x

    y = a * b
    y.grad_fn._raw_saved_self.register_hooks(pack, unpack)
    assert calls == ["pack"]
    np.testing.assert_array_equal(y.grad_fn._saved_self.detach().numpy(), [2.0, 4.0, 6.0])
    assert calls == ["pack", "unpack"]
    y.sum().backward()
    np.testing.assert_array_equal(b.grad.numpy(), [2.0, 4.0, 6.0])  # d/db used the packed a
    np.testing.assert_array_equal(a.grad.numpy(), [1.0, 1.0, 1.0])
    y = a * b
    raw = y.grad_fn._raw_saved_self
    raw.register_hooks(lambda x: x, lambda x: x)
    with pytest.raises(RuntimeError, match="^Calling register_hooks on a saved tensor whose "
                       "hooks have already been set"):
        y.grad_fn._raw_saved_self.register_hooks(lambda x: x, lambda x: x)
    y.sum().backward()
    with pytest.raises(RuntimeError, match="^Calling register_hooks on a saved tensor after "
                       "it has been freed"):
        raw.register_hooks(lambda x: x, lambda x: x)
