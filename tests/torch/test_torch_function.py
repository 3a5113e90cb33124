"""Custom autograd.Function: both styles, ctx features, corner cases and errors."""
import numpy as np
import pytest

import funcgrad.torch as torch
from funcgrad.torch.autograd.function import once_differentiable


def leaf(values, dtype=None):
    return torch.tensor(values, dtype=dtype, requires_grad=True)


class Mul(torch.autograd.Function):
    """setup_context style, with a non-tensor argument."""

    @staticmethod
    def forward(a, b, k):
        return a * b * k

    @staticmethod
    def setup_context(ctx, inputs, output):
        a, b, k = inputs
        ctx.save_for_backward(a, b)
        ctx.k = k

    @staticmethod
    def backward(ctx, g):
        a, b = ctx.saved_tensors
        return g * b * ctx.k, g * a * ctx.k, None


def test_setup_context_style_and_node():
    a, b = leaf([1.0, 2.0]), leaf([3.0, 4.0])
    out = Mul.apply(a, b, 2.0)
    assert out.grad_fn.name() == "MulBackward" and repr(out).endswith("grad_fn=<MulBackward>)")
    assert [type(n).__name__ for n, _ in out.grad_fn.next_functions] == ["AccumulateGrad"] * 2
    out.sum().backward()
    assert a.grad.tolist() == [6.0, 8.0] and b.grad.tolist() == [2.0, 4.0]


def test_needs_input_grad():
    seen = []

    class F(torch.autograd.Function):
        @staticmethod
        def forward(ctx, a, b, n):
            seen.append(ctx.needs_input_grad)
            return a + b

        @staticmethod
        def backward(ctx, g):
            return g, None, None
    F.apply(leaf([1.0]), torch.ones(1), 3).sum().backward()
    assert seen == [(True, False, False)]


def test_forward_runs_without_grad_and_outputs_get_the_node():
    inside = []

    class F(torch.autograd.Function):
        @staticmethod
        def forward(ctx, x):
            y = x * 2
            inside.append((torch.is_grad_enabled(), y.requires_grad))
            return y

        @staticmethod
        def backward(ctx, g):
            return g * 2
    y = F.apply(leaf([1.0]))
    assert inside == [(False, False)] and y.requires_grad and not y.is_leaf


def test_no_graph_when_no_input_requires_grad():
    y = Mul.apply(torch.ones(2), torch.ones(2), 1.0)
    assert y.grad_fn is None and not y.requires_grad
    with torch.no_grad():
        assert Mul.apply(leaf([1.0]), leaf([1.0]), 1.0).grad_fn is None


def test_wrong_number_of_gradients():
    class Bad(torch.autograd.Function):
        @staticmethod
        def forward(ctx, a, b):
            return a * b

        @staticmethod
        def backward(ctx, g):
            return g
    with pytest.raises(RuntimeError, match=r"^function BadBackward returned an incorrect "
                                           r"number of gradients \(expected 2, got 1\)$"):
        Bad.apply(leaf([1.0]), leaf([2.0])).sum().backward()


def test_trailing_nones_are_allowed_and_non_tensor_gradient_is_refused():
    class Extra(torch.autograd.Function):
        @staticmethod
        def forward(ctx, a, k):
            return a * k

        @staticmethod
        def backward(ctx, g):
            return g, None, None
    a = leaf([1.0])
    Extra.apply(a, 2).sum().backward()
    assert a.grad.tolist() == [1.0]

    class NotNone(torch.autograd.Function):
        @staticmethod
        def forward(ctx, a, k):
            return a * k

        @staticmethod
        def backward(ctx, g):
            return g, g
    with pytest.raises(RuntimeError, match="returned a gradient different than None at "
                                           "position 2, but the corresponding forward input "
                                           "was not a Variable"):
        NotNone.apply(a, 2).sum().backward()


def test_invalid_gradient_shape():
    class Shape(torch.autograd.Function):
        @staticmethod
        def forward(ctx, a):
            return a * 1

        @staticmethod
        def backward(ctx, g):
            return torch.ones(5)
    with pytest.raises(RuntimeError, match=r"Function ShapeBackward returned an invalid "
                                           r"gradient at index 0 - got \[5\] but expected "
                                           r"shape compatible with \[3\]"):
        Shape.apply(leaf([1.0, 2.0, 3.0])).sum().backward()


def test_saved_tensors_are_version_checked_and_freed():
    a, b = leaf([1.0, 2.0]), leaf([3.0, 4.0])
    c = a * 1
    out = Mul.apply(c, b, 1.0)
    c.add_(1)
    with pytest.raises(RuntimeError, match="which is output 0 of Add, is at version "
                                           "1; expected version 0"):
        out.sum().backward()
    out = Mul.apply(a, b, 1.0)
    out.sum().backward()
    with pytest.raises(RuntimeError, match="Trying to backward through the graph a second "
                                           "time"):
        out.grad_fn.saved_tensors


def test_saved_input_is_the_same_object():
    got = []

    class Keep(torch.autograd.Function):
        @staticmethod
        def forward(ctx, x):
            ctx.save_for_backward(x)
            return x * 2

        @staticmethod
        def backward(ctx, g):
            got.append(ctx.saved_tensors[0])
            return g * 2
    x = leaf([1.0])
    Keep.apply(x).sum().backward()
    assert got[0] is x


def test_mark_dirty_and_leaf_check():
    class AddOne(torch.autograd.Function):
        @staticmethod
        def forward(ctx, x):
            x.add_(1)
            ctx.mark_dirty(x)
            return x

        @staticmethod
        def backward(ctx, g):
            return g
    a = leaf([1.0, 2.0])
    d = a.clone()
    e = AddOne.apply(d)
    assert e is d and d.grad_fn.name() == "AddOneBackward" and d.tolist() == [2.0, 3.0]
    e.sum().backward()
    assert a.grad.tolist() == [1.0, 1.0]
    with pytest.raises(RuntimeError, match="a leaf Variable that requires grad is being used "
                                           "in an in-place operation."):
        AddOne.apply(leaf([1.0]))


def test_returning_an_input_gives_an_alias():
    class Ident(torch.autograd.Function):
        @staticmethod
        def forward(ctx, x):
            return x

        @staticmethod
        def backward(ctx, g):
            return g * 3
    x = leaf([1.0])
    y = Ident.apply(x)
    assert y is not x and y.grad_fn.name() == "IdentBackward"
    y.sum().backward()
    assert x.grad.tolist() == [3.0]


def test_mark_non_differentiable_and_materialize_grads():
    seen = []

    class Sort(torch.autograd.Function):
        @staticmethod
        def forward(ctx, x):
            v, i = x.sort()
            ctx.mark_non_differentiable(i)
            ctx.save_for_backward(i)
            return v, i

        @staticmethod
        def backward(ctx, gv, gi):
            seen.append(gi.tolist())
            (i,) = ctx.saved_tensors
            out = torch.zeros_like(gv)
            out[i] = gv
            return out
    x = leaf([3.0, 1.0, 2.0])
    v, i = Sort.apply(x)
    assert not i.requires_grad and v.requires_grad
    (v * torch.tensor([1.0, 2.0, 3.0])).sum().backward()
    assert x.grad.tolist() == [3.0, 1.0, 2.0] and seen == [[0, 0, 0]]

    class NoMat(torch.autograd.Function):
        @staticmethod
        def forward(ctx, x):
            ctx.set_materialize_grads(False)
            return x * 2, x * 3

        @staticmethod
        def backward(ctx, g1, g2):
            seen.append(g2)
            return g1 * 2
    a, _ = NoMat.apply(x)
    a.sum().backward()
    assert seen[-1] is None


def test_double_backward_through_custom_function():
    a, b = leaf([1.0, 2.0]), leaf([3.0, 4.0])
    (ga,) = torch.autograd.grad(Mul.apply(a, b, 2.0).sum(), a, create_graph=True)
    assert ga.tolist() == [6.0, 8.0] and ga.requires_grad
    (gb,) = torch.autograd.grad(ga.sum(), b)
    assert gb.tolist() == [2.0, 2.0]


def test_custom_function_gradcheck_and_gradgradcheck():
    x = torch.randn(4, dtype=torch.float64, requires_grad=True)
    y = torch.randn(4, dtype=torch.float64, requires_grad=True)
    assert torch.autograd.gradcheck(lambda p, q: Mul.apply(p, q, 3.0), (x, y))
    assert torch.autograd.gradgradcheck(lambda p, q: Mul.apply(p, q, 3.0), (x, y))


def test_once_differentiable():
    class Square(torch.autograd.Function):
        @staticmethod
        def forward(ctx, x):
            ctx.save_for_backward(x)
            return x ** 2

        @staticmethod
        @once_differentiable
        def backward(ctx, g):
            (x,) = ctx.saved_tensors
            return 2 * x * g
    x = leaf([1.0, 2.0])
    Square.apply(x).sum().backward()
    assert x.grad.tolist() == [2.0, 4.0]
    g_out = torch.ones(2, requires_grad=True)
    (g,) = torch.autograd.grad(Square.apply(x), x, g_out, create_graph=True)
    assert g.grad_fn.name() == "torch::autograd::Error"  # as PyTorch 2.13 names it
    with pytest.raises(RuntimeError, match="trying to differentiate twice a function that was "
                                           "marked with @once_differentiable"):
        g.sum().backward()


def test_function_is_reentrant_inside_backward():
    class Inner(torch.autograd.Function):
        @staticmethod
        def forward(ctx, x):
            ctx.save_for_backward(x)
            return x.exp()

        @staticmethod
        def backward(ctx, g):
            (x,) = ctx.saved_tensors
            with torch.enable_grad():
                xx = x.detach().requires_grad_()
                (d,) = torch.autograd.grad(xx.exp().sum(), xx)
            return g * d
    x = leaf([0.0, 1.0])
    Inner.apply(x).sum().backward()
    np.testing.assert_allclose(x.grad.numpy(), np.exp([0.0, 1.0]), rtol=1e-6)


def test_functions_of_one_name_keep_their_own_backward():
    """Two custom Functions called alike (in different scopes) each run their own rules."""
    def make(k):
        class Scale(torch.autograd.Function):
            @staticmethod
            def forward(ctx, x):
                return x * k

            @staticmethod
            def backward(ctx, g):
                return g * k
        return Scale

    x = torch.ones(2, requires_grad=True)
    make(2.0).apply(x).sum().backward()
    make(3.0).apply(x).sum().backward()
    assert x.grad.tolist() == [5.0, 5.0]
