"""Every differentiable primitive in the registry, checked against central finite
differences in float64 to second order, on shapes drawn by its own sampler (scalars,
broadcasting and size-0 arrays included). A primitive is covered the day it is declared:
the parametrisation is read from the registry."""
import pytest
from hypothesis import given, strategies as st

from funcgrad.primitives import registry
from funcgrad.test_util import check_grads

DIFFERENTIABLE = sorted(n for n, p in registry().items() if p.differentiable)


@pytest.mark.parametrize("name", DIFFERENTIABLE)
def test_primitive_declares_a_sampler(name):
    prim = registry()[name]
    assert prim.sample is not None, (
        f"primitive {name!r} is differentiable but declares no sampler; pass sample= "
        "(see funcgrad.primitives.sampling) so that its rules are tested")


@pytest.mark.parametrize("name", DIFFERENTIABLE)
@given(data=st.data())
def test_reverse_mode_matches_finite_differences(name, data):
    prim = registry()[name]
    if prim.sample is None:
        pytest.fail(f"{name} has no sampler")
    for case in prim.sample(prim, data.draw):
        check_grads(case.fun, case.args, order=2, modes=("rev",))
