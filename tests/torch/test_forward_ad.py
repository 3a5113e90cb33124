"""``torch.autograd.forward_ad`` on funcgrad.torch against PyTorch: the forward-mode AD
tutorial's programs (a function, a module's parameters as duals), errors and printing."""
import numpy as np
import pytest

import funcgrad.torch as ftorch

torch = pytest.importorskip("torch")
BOTH = pytest.mark.parametrize("m", [ftorch, torch], ids=["funcgrad", "torch"])


def _fn(m, x, y):
    return (x ** 2 + m.sin(y) * x).sum(dim=0) / (1 + m.exp(-x[0]))


def _tutorial_jvp(m):
    rng = np.random.default_rng(0)
    primal = m.tensor(rng.normal(size=(4, 3)))
    tangent = m.tensor(rng.normal(size=(4, 3)))
    other = m.tensor(rng.normal(size=(4, 3)))
    with m.autograd.forward_ad.dual_level():
        dual_input = m.autograd.forward_ad.make_dual(primal, tangent)
        dual_output = _fn(m, dual_input, other)
        unpacked = m.autograd.forward_ad.unpack_dual(dual_output)
        return unpacked.primal.numpy(), unpacked.tangent.numpy(), dual_output


def test_jvp_of_a_function_matches_pytorch():
    got = _tutorial_jvp(ftorch)
    want = _tutorial_jvp(torch)
    np.testing.assert_allclose(got[0], want[0], rtol=1e-12)
    np.testing.assert_allclose(got[1], want[1], rtol=1e-12)
    # after the level the output is a plain tensor again
    assert ftorch.autograd.forward_ad.unpack_dual(got[2]).tangent is None
    np.testing.assert_allclose(got[2].numpy(), want[2].numpy(), rtol=1e-12)


def _module_jvp(m):
    m.manual_seed(0)
    model = m.nn.Linear(5, 3)
    with m.no_grad():  # the same parameters on both sides
        model.weight.copy_(m.tensor(np.linspace(-1, 1, 15).reshape(3, 5), dtype=m.float32))
        model.bias.copy_(m.tensor([0.1, -0.2, 0.3]))
    x = m.tensor(np.linspace(0, 1, 10).reshape(2, 5), dtype=m.float32)
    tangents = {name: m.ones_like(p) * 0.5 for name, p in model.named_parameters()}
    fwAD = m.autograd.forward_ad
    with fwAD.dual_level():
        for name, p in list(model.named_parameters()):
            delattr(model, name)
            setattr(model, name, fwAD.make_dual(p, tangents[name]))
        out = m.tanh(model(x))
        return fwAD.unpack_dual(out).tangent.detach().numpy()


def test_module_parameters_as_duals_match_pytorch():
    np.testing.assert_allclose(_module_jvp(ftorch), _module_jvp(torch), rtol=1e-5, atol=1e-6)


@BOTH
def test_forward_ad_errors_as_pytorch(m):
    fwAD = m.autograd.forward_ad
    with pytest.raises(RuntimeError, match="^Trying to create a dual Tensor for forward AD but "
                       r"no level exists, make sure to enter_dual_level\(\) first\.$"):
        fwAD.make_dual(m.ones(2), m.ones(2))
    with fwAD.dual_level():
        with pytest.raises(RuntimeError, match=r"Tensor is of size \[2\] while the given "
                           r"forward gradient is of size \[3\]\.$"):
            fwAD.make_dual(m.ones(2), m.ones(3))
        with pytest.raises(ValueError, match="^Expected tangent to be floating point or "
                           "complex, but got: torch.int64$"):
            fwAD.make_dual(m.ones(2), m.ones(2, dtype=m.long))
        with pytest.raises(RuntimeError, match="^Nested forward mode AD is not supported at "
                           "the moment$"):
            fwAD.dual_level().__enter__()
        assert fwAD.unpack_dual(m.ones(2)).tangent is None


@BOTH
def test_dual_tensor_prints_its_tangent_and_views_a_leaf(m):
    fwAD = m.autograd.forward_ad
    with fwAD.dual_level():
        d = fwAD.make_dual(m.ones(2), m.full((2,), 3.0))
        assert repr(d) == "tensor([1., 1.], tangent=tensor([3., 3.]))"
        p = m.ones(2, requires_grad=True)
        dp = fwAD.make_dual(p, m.ones(2))
        assert dp.requires_grad and dp.grad_fn.name() == "ViewBackward0"
        (dp * dp).sum().backward()
    np.testing.assert_array_equal(p.grad.detach().numpy(), [2.0, 2.0])
    assert repr(d) == "tensor([1., 1.])"


class _Exp:
    """The tutorial's custom Function with a jvp rule (and one without)."""

    @staticmethod
    def make(m, with_jvp=True):
        class Fn(m.autograd.Function):
            calls = []

            @staticmethod
            def forward(ctx, foo):
                result = m.exp(foo)
                ctx.result = result
                return result

            if with_jvp:
                @staticmethod
                def jvp(ctx, gI):
                    Fn.calls.append("jvp")
                    gO = gI * ctx.result
                    del ctx.result
                    return gO
        return Fn


@BOTH
def test_custom_function_jvp_and_gradcheck_forward(m):
    fwAD = m.autograd.forward_ad
    Fn = _Exp.make(m)
    primal = m.tensor(np.linspace(-1, 1, 6).reshape(2, 3), requires_grad=True)
    tangent = m.tensor(np.full((2, 3), 0.5))
    with fwAD.dual_level():
        dual = fwAD.make_dual(primal, tangent)
        assert fwAD.unpack_dual(dual).tangent is tangent  # the tangent itself, not a copy
        out = Fn.apply(dual)
        jvp = fwAD.unpack_dual(out).tangent
    assert Fn.calls == ["jvp"]
    np.testing.assert_allclose(jvp.detach().numpy(), 0.5 * np.exp(primal.detach().numpy()))
    assert m.autograd.gradcheck(Fn.apply, (primal,), check_forward_ad=True,
                                check_backward_ad=False, check_undefined_grad=False,
                                check_batched_grad=False)
    NoJvp = _Exp.make(m, with_jvp=False)
    with fwAD.dual_level():
        with pytest.raises(NotImplementedError, match="^You must implement the jvp function "
                           "for custom autograd.Function to use it with forward mode AD.$"):
            NoJvp.apply(fwAD.make_dual(primal, tangent))


def test_gradcheck_forward_ad_finds_a_wrong_jvp():
    class Wrong(ftorch.autograd.Function):
        @staticmethod
        def forward(ctx, x):
            return x * 2

        @staticmethod
        def jvp(ctx, g):
            return g * 3

    x = ftorch.ones(2, dtype=ftorch.float64, requires_grad=True)
    with pytest.raises(RuntimeError, match="^Jacobian computed with forward mode mismatch "
                       "for output 0 with respect to input 0"):
        ftorch.autograd.gradcheck(Wrong.apply, (x,), check_forward_ad=True,
                                  check_backward_ad=False)
