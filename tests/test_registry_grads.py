"""Every differentiable primitive in the registry, checked against central finite
differences in float64 to second order, in reverse and forward mode, on shapes drawn by its
own sampler (scalars, broadcasting and size-0 arrays included), and its forward- and
reverse-mode Jacobians compared. A primitive is covered the day it is declared: the
parametrisation is read from the registry."""
import numpy as np
import pytest
from hypothesis import given, settings, strategies as st

import funcgrad.numpy as fnp
from funcgrad import jacfwd, jacrev
from funcgrad.primitives import registry
from funcgrad.test_util import check_grads
from funcgrad.tree_util import tree_leaves

DIFFERENTIABLE = sorted(n for n, p in registry().items() if p.differentiable)
# the rules' edge cases (shapes of size 0 and 1, broadcasting, keepdims, axes) hide here:
# 4x the examples of the loaded profile (32 for CI's derandomised "ci", 100 for "dev")
EXPLORE = settings(max_examples=4 * settings.default.max_examples)


@pytest.mark.parametrize("name", DIFFERENTIABLE)
def test_primitive_declares_a_sampler(name):
    prim = registry()[name]
    assert prim.sample is not None, (
        f"primitive {name!r} is differentiable but declares no sampler; pass sample= "
        "(see funcgrad.primitives.sampling) so that its rules are tested")


@pytest.mark.parametrize("name", DIFFERENTIABLE)
@EXPLORE
@given(data=st.data())
def test_reverse_mode_matches_finite_differences(name, data):
    prim = registry()[name]
    if prim.sample is None:
        pytest.fail(f"{name} has no sampler")
    for case in prim.sample(prim, data.draw):
        check_grads(case.fun, case.args, order=2, modes=("rev",))


@pytest.mark.parametrize("name", DIFFERENTIABLE)
@EXPLORE
@given(data=st.data())
def test_forward_mode_matches_finite_differences(name, data):
    prim = registry()[name]
    for case in prim.sample(prim, data.draw):
        check_grads(case.fun, case.args, order=2, modes=("fwd",))


def _real_and_imaginary_parts(fun):
    def parts(*args):
        return [(fnp.real(o), fnp.imag(o)) for o in tree_leaves(fun(*args))]
    return parts


@pytest.mark.parametrize("name", DIFFERENTIABLE)
@EXPLORE
@given(data=st.data())
def test_jacfwd_equals_jacrev(name, data):
    prim = registry()[name]
    for case in prim.sample(prim, data.draw):
        if any(np.iscomplexobj(a) for a in case.args):
            continue  # a non-holomorphic complex Jacobian is not one complex matrix
        fun = case.fun
        if any(np.iscomplexobj(np.asarray(o)) for o in tree_leaves(fun(*case.args))):
            fun = _real_and_imaginary_parts(fun)  # real -> complex (rfft): two real maps
        argnums = tuple(range(len(case.args)))
        forward = jacfwd(fun, argnums)(*case.args)
        reverse = jacrev(fun, argnums)(*case.args)
        for f, r in zip(tree_leaves(forward), tree_leaves(reverse)):
            np.testing.assert_allclose(np.asarray(f), np.asarray(r), rtol=1e-10, atol=1e-12)
