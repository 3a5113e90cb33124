"""Every registered primitive under `jit` gives bit-identical results to eager, on the
inputs its own sampler draws: the compiled program calls the same implementations in the
same order, so values, dtypes and shapes (NaNs and signed zeros included) must match
exactly. The same holds for the jitted pullback (the VJP with ones cotangents) of every
differentiable primitive against the eager pullback: the compiled backward runs the rules'
operations in the tape's order, and none of the passes (no-op removal, CSE, DCE, ``out=``
buffer reuse) reassociates arithmetic."""
import numpy as np
import pytest
from hypothesis import given, settings, strategies as st

import funcgrad
import funcgrad.numpy as fnp
from funcgrad import jit, vjp
from funcgrad.primitives import registry
from funcgrad.tree_util import tree_leaves, tree_map

SAMPLED = sorted(n for n, p in registry().items() if p.sample is not None)
DIFFERENTIABLE = sorted(n for n, p in registry().items()
                        if p.differentiable and p.sample is not None)
# each example traces and compiles a program: half the loaded profile's examples (4 for
# CI's "ci" profile) keeps the file at about a minute
FEWER = settings(max_examples=max(2, settings.default.max_examples // 2))


def assert_identical(expected, got, what):
    """Same tree of leaves, each with the same dtype, shape and bits (NaN-aware, and
    -0.0 is not 0.0)."""
    e_leaves, g_leaves = tree_leaves(expected), tree_leaves(got)
    assert len(e_leaves) == len(g_leaves), f"{what}: {len(g_leaves)} leaves, expected " \
                                           f"{len(e_leaves)}"
    for k, (e, g) in enumerate(zip(e_leaves, g_leaves)):
        e, g = np.asarray(e), np.asarray(g)
        assert g.dtype == e.dtype, f"{what} leaf {k}: dtype {g.dtype}, eager {e.dtype}"
        assert g.shape == e.shape, f"{what} leaf {k}: shape {g.shape}, eager {e.shape}"
        if e.dtype.kind in "fc":
            assert np.array_equal(e, g, equal_nan=True), f"{what} leaf {k}: {g} != {e}"
            assert np.array_equal(np.signbit(e.real), np.signbit(g.real)), \
                f"{what} leaf {k}: signed zeros differ: {g} vs {e}"
        else:
            assert np.array_equal(e, g), f"{what} leaf {k}: {g} != {e}"


def _canonical(args):
    """numpy scalars as 0-d arrays: eager funcgrad hands a numpy scalar to the
    implementation as it is, and numpy's scalar loops round differently from its array
    loops in the last bit (complex ``square``: ``np.square(np.complex128(z))`` differs
    from ``np.square(np.asarray(z))``). jit traces and runs on 0-d arrays; comparing it
    with eager on 0-d arrays compares funcgrad with itself, not numpy with itself."""
    return tuple(np.asarray(a) if isinstance(a, np.generic) else a for a in args)


def _compiled(fun, args):
    """The jitted function's results on its second call (the compiled program; the first
    call returns the tracing run's values), checked to come from the cache."""
    jitted = jit(fun)
    first = jitted(*args)
    second = jitted(*args)
    assert jitted._cache_size() == 1, "the second call retraced"
    return first, second


@pytest.mark.parametrize("name", SAMPLED)
@FEWER
@given(data=st.data())
def test_primitive_under_jit_is_bit_identical_to_eager(name, data):
    prim = registry()[name]
    for case in prim.sample(prim, data.draw):
        args = _canonical(case.args)
        eager = case.fun(*args)
        first, second = _compiled(case.fun, args)
        assert_identical(eager, first, f"{name} {case.label} (tracing call)")
        assert_identical(eager, second, f"{name} {case.label} (compiled)")


def _pullback(fun):
    """The VJP of ``fun`` with ones cotangents, for every input."""
    def pullback(*args):
        out, f_vjp = vjp(fun, *args)
        return f_vjp(tree_map(fnp.ones_like, out))
    return pullback


def _inexact(tree):
    return all(np.asarray(x).dtype.kind in "fc" for x in tree_leaves(tree))


@pytest.mark.parametrize("name", DIFFERENTIABLE)
@FEWER
@given(data=st.data())
def test_jitted_pullback_is_bit_identical_to_eager(name, data):
    prim = registry()[name]
    for case in prim.sample(prim, data.draw):
        if not _inexact(case.fun(*case.args)):
            continue  # integer outputs: nothing to pull back
        pullback, args = _pullback(case.fun), _canonical(case.args)
        eager = pullback(*args)
        first, second = _compiled(pullback, args)
        assert_identical(eager, first, f"{name} {case.label} pullback (tracing call)")
        assert_identical(eager, second, f"{name} {case.label} pullback (compiled)")


@pytest.mark.parametrize("name", DIFFERENTIABLE[::7])
@FEWER
@given(data=st.data())
def test_grad_of_jit_is_bit_identical_to_eager(name, data):
    """A jitted primitive differentiated from outside (one jit_call node whose VJP is a
    compiled program): every seventh primitive, for time."""
    prim = registry()[name]
    for case in prim.sample(prim, data.draw):
        if not _inexact(case.fun(*case.args)):
            continue
        args = _canonical(case.args)
        eager = _pullback(case.fun)(*args)
        through_jit = _pullback(jit(case.fun))
        assert_identical(eager, through_jit(*args), f"{name} {case.label} vjp(jit)")
        assert_identical(eager, through_jit(*args), f"{name} {case.label} again")


def test_the_parametrisation_covers_the_registry():
    """Every sampled primitive is parametrised here (that each differentiable primitive
    declares a sampler is tests/test_registry_grads.py's check)."""
    assert len(SAMPLED) > 100 and set(DIFFERENTIABLE) <= set(SAMPLED)
    assert funcgrad.jit is jit
