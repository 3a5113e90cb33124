"""Every primitive in the registry under `vmap`: each sampler's case, applied to a batch of
examples (the case's arguments, slightly rescaled per example), equals the stack of the
per-example results, for several ``in_axes`` (every argument mapped at axis 0, one
argument mapped and the others shared, the batch axis last), and so do the per-example
gradients and Hessian-vector products (first and second order). Every primitive has a
batching rule, or a listed reason why it cannot have one, which vmap then raises."""
import numpy as np
import pytest
from hypothesis import given, settings, strategies as st

import funcgrad
import funcgrad.numpy as fnp
from funcgrad.primitives import registry
from funcgrad.tree_util import tree_leaves

SAMPLED = sorted(n for n, p in registry().items() if p.sample is not None)
BATCH = 3
FEW = settings(max_examples=max(2, settings.default.max_examples // 2))

# primitives that cannot be batched, and the fact that makes it so (vmap raises it)
UNBATCHABLE = {
    "nonzero": "its result's shape depends on the values",
    "unique_positions": "the number of unique values depends on the values",
    "random_poisson": "its kernel draws every element from one key",
}


def _examples(arg):
    """BATCH versions of one argument: floats rescaled by 1 + k/1000 (same signs, same
    order, inside the sampler's domain), anything else repeated."""
    a = np.asarray(arg)
    if a.dtype.kind in "fc":
        return [a * (1 + k / 1000) for k in range(BATCH)]
    return [a] * BATCH


def _stacked(args, mapped, axis):
    """The batch of each argument (stacked at ``axis`` when mapped, else example 0)."""
    out = []
    for a, m in zip(args, mapped):
        ex = _examples(a)
        if not m:
            out.append(fnp.asarray(ex[0]))
            continue
        st_ = np.stack(ex, axis=0)
        out.append(fnp.asarray(np.moveaxis(st_, 0, axis if axis >= 0 else st_.ndim + axis)))
    return out


def _per_example(args, mapped, k):
    return [fnp.asarray(_examples(a)[k] if m else _examples(a)[0]) for a, m in zip(args, mapped)]


def _assert_stacked(batched, singles):
    b_leaves = tree_leaves(batched)
    for i, leaf in enumerate(b_leaves):
        want = np.stack([np.asarray(tree_leaves(s)[i]) for s in singles])
        got = np.asarray(leaf)
        assert got.shape == want.shape, (got.shape, want.shape)
        np.testing.assert_allclose(got, want, rtol=1e-9, atol=1e-11, equal_nan=True)


def _in_axes_choices(args):
    n = len(args)
    choices = [((True,) * n, 0)]
    if n > 1:
        choices += [(tuple(i == j for j in range(n)), 0) for i in range(n)]
    if all(np.ndim(a) >= 0 for a in args):
        choices.append(((True,) * n, -1))
    return choices


def _check_case(fun, args):
    for mapped, axis in _in_axes_choices(args):
        in_axes = tuple(axis if m else None for m in mapped)
        batched = funcgrad.vmap(fun, in_axes=in_axes)(*_stacked(args, mapped, axis))
        singles = [fun(*_per_example(args, mapped, k)) for k in range(BATCH)]
        _assert_stacked(batched, singles)


def _scalar(fun):
    """A real scalar function of the case (for gradients)."""
    def total(*args):
        leaves = [o for o in tree_leaves(fun(*args)) if o.dtype.kind in "fc"]
        return sum(fnp.sum(fnp.real(o) * (1 + 0.1 * j)) for j, o in enumerate(leaves))
    return total


@pytest.mark.parametrize("name", SAMPLED)
@FEW
@given(data=st.data())
def test_vmap_equals_stacked_examples(name, data):
    prim = registry()[name]
    for case in prim.sample(prim, data.draw):
        _check_case(case.fun, case.args)


@pytest.mark.parametrize("name", sorted(n for n in SAMPLED if registry()[n].differentiable))
@FEW
@given(data=st.data())
def test_vmap_of_grad_and_hvp_equals_stacked_examples(name, data):
    prim = registry()[name]
    for case in prim.sample(prim, data.draw):
        if any(np.iscomplexobj(a) for a in case.args):
            continue  # grad of a function of complex inputs is not the real gradient
        f = _scalar(case.fun)
        argnums = tuple(range(len(case.args)))
        grad = funcgrad.grad(f, argnums)

        def hvp(*xs):  # forward over reverse: the Hessian times the inputs themselves
            return funcgrad.jvp(lambda *ys: grad(*ys), xs, xs)[1]
        for g in (grad, hvp):
            mapped = (True,) * len(case.args)
            batched = funcgrad.vmap(g)(*_stacked(case.args, mapped, 0))
            singles = [g(*_per_example(case.args, mapped, k)) for k in range(BATCH)]
            _assert_stacked(batched, singles)


@pytest.mark.parametrize("name", sorted(registry()))
def test_every_primitive_has_a_batching_rule(name):
    prim = registry()[name]
    assert prim.batch_rule is not None, (
        f"primitive {name!r} has no batching rule; declare one beside its other rules "
        "(see funcgrad.primitives.batching), or list why it cannot have one")
    why = getattr(prim.batch_rule, "unbatchable", None)
    assert (why is None) == (name not in UNBATCHABLE), (name, why)
    if why is not None:
        assert UNBATCHABLE[name] in why


def test_unbatchable_primitives_raise_their_reason():
    x = fnp.asarray(np.array([[1.0, 0.0, 2.0], [0.0, 0.0, 3.0]]))
    with pytest.raises(NotImplementedError, match="vmap cannot batch primitive 'nonzero'"):
        funcgrad.vmap(fnp.nonzero)(x)
    with pytest.raises(NotImplementedError, match="unique_positions"):
        funcgrad.vmap(fnp.unique)(x)


def test_a_primitive_without_a_rule_is_named():
    from funcgrad.primitives import Primitive
    p = Primitive("vmap_test_no_rule", lambda x: x * 2, replace=True)
    with pytest.raises(NotImplementedError, match="Batching rule for 'vmap_test_no_rule' "
                                                  "not implemented"):
        funcgrad.vmap(p)(fnp.ones(3))
    p.defbatch(lambda args, dims: (p(args[0]), dims[0]))
    np.testing.assert_array_equal(np.asarray(funcgrad.vmap(p)(fnp.ones(3))), 2 * np.ones(3))
