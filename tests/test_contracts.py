"""Issue 39: no silent wrong answers. Each user-function contract of the lax constructs and
each transform argument is checked eagerly and under jit alike, with JAX's exception type
(and text where it has one): every case runs in funcgrad and, where JAX is installed, in
JAX, and both must raise the same type."""
import sys

import numpy as np
import pytest

import funcgrad as fg
import funcgrad.numpy as fnp
from funcgrad import lax, tree_util

jax = pytest.importorskip("jax")
jnp, jlax = jax.numpy, jax.lax


def _cases(np_, lx, jit, grad, vmap, checkpoint):
    """(name, thunk, exception type, message substring) over one library's API."""
    one = np_.ones(1)
    return [
        ("cond tree", lambda: lx.cond(True, lambda x: x, lambda x: (x, x), one),
         TypeError, "branch outputs must have the same pytree structure"),
        ("cond dtype", lambda: lx.cond(False, lambda x: x, lambda x: x.astype(np.int32), one),
         TypeError, "branches must have equal output types"),
        ("cond shape jit", lambda: jit(lambda x: lx.cond(True, lambda x: x,
                                                         lambda x: np_.ones(3), x))(one),
         TypeError, "branches must have equal output types"),
        ("switch shape", lambda: lx.switch(0, [lambda x: x, lambda x: np_.ones(3)], one),
         TypeError, "switch branches must have equal output types"),
        ("switch empty", lambda: lx.switch(0, [], one), ValueError, "Empty branch sequence"),
        ("while carry shape", lambda: lx.while_loop(lambda c: c.sum() < 3,
                                                   lambda c: np_.concatenate([c, c]), one),
         TypeError, "carry input and carry output must have equal types"),
        ("while carry tree", lambda: lx.while_loop(lambda c: c.sum() < 3,
                                                  lambda c: (c, c), one),
         TypeError, "must have the same pytree structure"),
        ("while cond float", lambda: lx.while_loop(lambda c: 3.0 - c.sum(),
                                                  lambda c: c + 1, one),
         TypeError, "cond_fun must return a boolean scalar"),
        ("while cond vector jit", lambda: jit(lambda x: lx.while_loop(
            lambda c: c < 3, lambda c: c + 1, x))(np_.ones(2)),
         TypeError, "cond_fun must return a boolean scalar"),
        ("scan not a pair", lambda: lx.scan(lambda c, x: c + x, 0.0, np_.ones(3)),
         TypeError, "scan body output must be a pair"),
        ("scan carry shape", lambda: lx.scan(lambda c, x: (c[None], x), np_.zeros(()),
                                            np_.ones(3)),
         TypeError, "scan body function carry input and carry output must have equal"),
        ("scan carry tree", lambda: lx.scan(lambda c, x: ((c,), x), np_.zeros(()),
                                           np_.ones(3)),
         TypeError, "must have the same pytree structure"),
        ("scan carry jit", lambda: jit(lambda c, xs: lx.scan(
            lambda c, x: (c[:1], x), c, xs))(np_.ones(2), np_.ones(3)),
         TypeError, "carry input and carry output must have equal types"),
        ("fori carry dtype", lambda: lx.fori_loop(0, 3, lambda i, c: c.astype(np.int32),
                                                 np_.ones(())),
         TypeError, "carry input and carry output must have equal types"),
        ("map not a function", lambda: lx.map(None, np_.ones(3)), TypeError, None),
        ("jit static_argnums", lambda: jit(lambda x: x, static_argnums=3),
         ValueError, "static_argnums=(3,), but only accepts 1 positional arguments"),
        ("jit static_argnames", lambda: jit(lambda x: x, static_argnames={"zz"}),
         ValueError, "invalid argnames {'zz'} in static_argnames"),
        ("jit donate_argnums", lambda: jit(lambda x: x, donate_argnums=3),
         ValueError, "donate_argnums=(3,)"),
        ("checkpoint static_argnums", lambda: checkpoint(lambda x: x, static_argnums=3)(1.0),
         ValueError, "can only take integer values greater than or equal to `-len(args)`"),
        ("grad argnums", lambda: grad(lambda x: x, argnums=3)(1.0), TypeError, "argnums=3"),
        ("vmap in_axes length", lambda: vmap(lambda x: x, in_axes=(0, 0))(np_.ones(2)),
         ValueError, "vmap in_axes must be an int, None, or a tuple"),
        ("vmap in_axes rank", lambda: vmap(lambda x: x, in_axes=2)(np_.ones(2)),
         ValueError, None),
        ("vmap out_axes", lambda: vmap(lambda x: x, out_axes=2)(np_.ones(2)),
         ValueError, None),
        ("lax.add dtypes", lambda: lx.add(np_.ones(2, np.int32), np_.ones(2, np.float32)),
         TypeError, "lax.add requires arguments to have the same dtypes"),
        ("lax.add kinds of numbers", lambda: lx.add(1, 1.0), TypeError,
         "lax.add requires arguments to have the same dtypes"),
        ("lax.max dtypes", lambda: lx.max(np_.ones(2, np.int32), np_.ones(2, np.int16)),
         TypeError, "lax.max requires arguments to have the same dtypes, got int32, int16"),
        ("array None", lambda: np_.array([1.0, None]), ValueError,
         "None is not a valid value for jnp.array"),
        ("array too large", lambda: np_.array(2**64), OverflowError,
         "Python int 18446744073709551616 too large to convert to int"),
        ("array strings", lambda: np_.array(["a"]), TypeError,
         "is not a valid JAX array type"),
        ("jit object array", lambda: jit(lambda x: x)(np.array([1, None], dtype=object)),
         TypeError if np_ is jnp else ValueError, None),
        ("format spec of a traced value", lambda: jit(lambda x: format(x, ".2f"))(1.0),
         TypeError, "unsupported format string passed to"),
        ("traced reshape size", lambda: jit(lambda x, n: x.reshape(n))(np_.ones(4), 4),
         TypeError, None),
    ]


FG = _cases(fnp, lax, fg.jit, fg.grad, fg.vmap, fg.checkpoint)
JAX = {c[0]: c for c in _cases(jnp, jlax, jax.jit, jax.grad, jax.vmap, jax.checkpoint)}


@pytest.mark.parametrize("case", FG, ids=[c[0] for c in FG])
def test_contract_raises_like_jax(case):
    name, thunk, exc, text = case
    with pytest.raises(exc) as info:
        thunk()
    if text is not None:
        assert text in str(info.value)
    _, jax_thunk, jax_exc, _ = JAX[name]
    with pytest.raises(jax_exc):
        jax_thunk()


def test_valid_calls_still_run_like_jax():
    """What JAX accepts stays accepted: weakly typed numbers, the taken branch's value."""
    assert float(lax.add(fnp.ones((), "float32"), 1.0)) == 2.0
    assert float(lax.fori_loop(0, 3, lambda i, c: c + 0.5, 0)) == \
        float(jlax.fori_loop(0, 3, lambda i, c: c + 0.5, 0))
    assert float(lax.cond(False, lambda x: x + 1, lambda x: x * 2, fnp.ones(()))) == 2.0
    c, ys = lax.scan(lambda c, x: (c + x, c), 0.0, fnp.arange(3.0))
    assert float(c) == 3.0 and ys.tolist() == [0.0, 0.0, 1.0]


def test_untaken_branch_leaves_no_records_under_grad_and_jit():
    """The branch not taken is checked on meta arrays; what it reads from its closure
    under grad or jit must not reach their tapes."""
    w = fnp.asarray(2.0)

    def f(x, w):
        return lax.cond(True, lambda a: a * w, lambda a: a + w * 3.0, x).sum()
    g = fg.grad(f, argnums=(0, 1))(fnp.ones(3), w)
    np.testing.assert_allclose(g[0], [2.0, 2.0, 2.0])
    np.testing.assert_allclose(g[1], 3.0)
    text = fg.jit(lambda x, w: lax.cond(True, lambda a: a * w, lambda a: a + w * 3.0, x)
                  ).lower(fnp.ones(3), w).as_text()
    assert "add" not in text and "mul" in text


def test_donated_input_returned_as_output_is_intact():
    f = fg.jit(lambda x: (x * 2, x), donate_argnums=0)
    for _ in range(3):  # the first (traced) call and the compiled ones
        doubled, same = f(fnp.arange(3.0))
        assert doubled.tolist() == [0.0, 2.0, 4.0] and same.tolist() == [0.0, 1.0, 2.0]


def test_formatting_a_traced_value_matches_str():
    seen = []
    fg.jit(lambda x: seen.append((f"{x}", str(x))) or x)(fnp.ones(3))
    assert seen[0][0] == seen[0][1] and "3" in seen[0][0]


def test_deep_pytree_under_jit():
    tree = 1.0
    for _ in range(500):
        tree = [tree]
    leaves, treedef = tree_util.tree_flatten(tree)
    assert len(leaves) == 1 and tree_util.tree_flatten(treedef.unflatten(leaves))[1] == treedef
    out = fg.jit(lambda t: t)(tree)
    for _ in range(500):
        out = out[0]
    assert float(out) == 1.0


def _nested_conds(depth: int):
    def f(x):
        if depth == 0:
            return x * 3.0
        return lax.cond(x > 0, _nested_conds(depth - 1), lambda y: y - 1.0, x)
    return f


def _nested_loops(depth: int):
    def f(x):
        if depth == 0:
            return x * 1.5
        return lax.while_loop(lambda c: c < 0.0, lambda c: c + 1.0, _nested_loops(depth - 1)(x))
    return f


def test_a_hundred_nested_conds_stage_and_compile():
    """Staging and compiling recurse per level (Python allows 100 indentation levels: the
    deepest sub-programs are hoisted to the top level); JAX runs this program."""
    limit = sys.getrecursionlimit()
    f = _nested_conds(101)
    assert float(fg.jit(f)(1.0)) == 3.0 and float(f(1.0)) == 3.0
    np.testing.assert_array_equal(fg.vmap(fg.jit(f))(fnp.array([1.0, -1.0])), [3.0, -2.0])
    assert float(fg.jit(_nested_loops(101))(2.0)) == 3.0
    assert sys.getrecursionlimit() == limit  # put back after


def test_differentiating_nested_conds_makes_room_on_the_stack():
    """Differentiating stages and compiles the nested programs again, at every level. (A
    low limit stands in for a deep program: differentiating 100 levels takes minutes, the
    cost growing as the cube of the depth.)"""
    limit = sys.getrecursionlimit()
    sys.setrecursionlimit(250)
    try:
        f = _nested_conds(25)
        assert float(fg.grad(fg.jit(f))(1.0)) == 3.0
        assert float(fg.jit(fg.grad(f))(2.0)) == 3.0
    finally:
        sys.setrecursionlimit(limit)


@pytest.mark.parametrize("y", [-np.inf, 0.0])
def test_logaddexp_derivative_at_minus_infinity_matches_jax(y):
    with np.errstate(all="ignore"):
        ours = float(fg.grad(lambda x: fnp.logaddexp(x, y))(-np.inf))
    theirs = float(jax.grad(lambda x: jnp.logaddexp(x, y))(-np.inf))
    np.testing.assert_equal(ours, theirs)
