"""The contracts of custom_jvp and custom_vjp rules (`funcgrad.transforms.contracts`),
differentially against JAX: a rule that breaks one raises JAX's exception type with JAX's
text, under the same transform. Where JAX compares a rule's primal output with the
function's only after tracing the function (under jit), funcgrad compares it where it has
run the function for the call (a tape replayed by checkpoint): both refuse with JAX's text.
"""
import numpy as np
import pytest

jax = pytest.importorskip("jax")
import jax.numpy as jnp  # noqa: E402

import funcgrad as fg  # noqa: E402
import funcgrad.numpy as fnp  # noqa: E402


def _custom_jvp(lib, m, rule):
    @lib.custom_jvp
    def h(x):
        return m.sin(x)
    h.defjvp(lambda p, t: rule(m, p[0], t[0]))
    return h


def _custom_vjp(lib, m, fwd, bwd):
    @lib.custom_vjp
    def f(x, y):
        return m.sin(x) * y
    f.defvjp(lambda x, y: fwd(m, x, y), lambda r, g: bwd(m, r, g))
    return f


def _fwd(m, x, y):
    return m.sin(x) * y, (x, y)


def _bwd(m, r, g):
    return g * m.cos(r[0]) * r[1], g * m.sin(r[0])


JVP_RULES = {  # name -> rule(m, x, t), run under jvp and grad
    "not_a_pair": lambda m, x, t: m.sin(x),
    "trees_differ": lambda m, x, t: (m.sin(x), (t,)),
    "tangent_shape": lambda m, x, t: (m.sin(x), t[:1]),
    "tangent_dtype": lambda m, x, t: (m.sin(x), t.astype("float16")),
    "two_tangents": lambda m, x, t: ((m.sin(x), m.cos(x)), (t[:1], t.astype("float16"))),
}
VJP_RULES = {  # name -> (fwd, bwd), run under grad
    "fwd_not_a_pair": (lambda m, x, y: m.sin(x) * y, _bwd),
    "bwd_not_a_tuple": (_fwd, lambda m, r, g: g),
    "bwd_too_short": (_fwd, lambda m, r, g: (g,)),
    "bwd_nested": (_fwd, lambda m, r, g: ((g,), g)),
    "bwd_shape": (_fwd, lambda m, r, g: (g[:1], g)),
    "bwd_not_an_array": (_fwd, lambda m, r, g: ("bad", g)),
}
# funcgrad's extension JAX refuses: None stands for a zero tangent (a whole subtree too)
ACCEPTED = {"tangent_none": lambda m, x, t: (m.sin(x), None)}


def _error(run):
    try:
        run()
    except (TypeError, ValueError) as e:
        return type(e), str(e)
    return None


def _x(m):
    return m.asarray(np.array([0.3, 0.5, 0.9], np.float32))


def _jvp_runs(lib, m, rule):
    h = _custom_jvp(lib, m, rule)
    return {"jvp": lambda: lib.jvp(h, (_x(m),), (_x(m),)),
            "grad": lambda: lib.grad(lambda x: m.sum(h(x)))(_x(m))}


def _scrub(text):
    """The text without what differs between the libraries' array reprs and names."""
    return text.split(", but got [")[0].split("but got Traced")[0]


@pytest.mark.parametrize("transform", ["jvp", "grad"])
@pytest.mark.parametrize("name", list(JVP_RULES))
def test_custom_jvp_rule_refused_as_jax(name, transform):
    got = _error(_jvp_runs(fg, fnp, JVP_RULES[name])[transform])
    want = _error(_jvp_runs(jax, jnp, JVP_RULES[name])[transform])
    assert want is not None and got is not None
    assert got[0] is want[0] and _scrub(got[1]) == _scrub(want[1])


@pytest.mark.parametrize("name", list(VJP_RULES))
def test_custom_vjp_rule_refused_as_jax(name):
    fwd, bwd = VJP_RULES[name]

    def run(lib, m):
        f = _custom_vjp(lib, m, fwd, bwd)
        return _error(lambda: lib.grad(lambda x: m.sum(f(x, m.ones(3, "float32"))))(_x(m)))
    got, want = run(fg, fnp), run(jax, jnp)
    assert want is not None and got is not None
    assert got[0] is want[0] and _scrub(got[1]) == _scrub(want[1])


PRIMAL_OUTPUTS = {  # rule(m, x, t) whose primal output is not the function's
    "structure": lambda m, x, t: ((m.sin(x),), (t,)),
    "shape": lambda m, x, t: (m.sin(x)[:1], t[:1]),
    "dtype": lambda m, x, t: (m.sin(x).astype("float16"), t.astype("float16")),
}


@pytest.mark.parametrize("name", list(PRIMAL_OUTPUTS))
def test_custom_jvp_primal_output_checked_where_the_function_ran(name):
    rule = PRIMAL_OUTPUTS[name]
    h, j_h = _custom_jvp(fg, fnp, rule), _custom_jvp(jax, jnp, rule)
    got = _error(lambda: fg.grad(fg.checkpoint(lambda x: fnp.sum(h(x)[0] if name ==
                                                                "structure" else h(x))))(_x(fnp)))
    want = _error(lambda: jax.grad(jax.jit(lambda x: jnp.sum(j_h(x)[0] if name ==
                                                            "structure" else j_h(x))))(_x(jnp)))
    assert want is not None and got == want


@pytest.mark.parametrize("name", list(ACCEPTED))
def test_none_tangent_is_zero(name):
    h = _custom_jvp(fg, fnp, ACCEPTED[name])
    _, t = fg.jvp(h, (_x(fnp),), (_x(fnp),))
    np.testing.assert_array_equal(np.asarray(t), 0)


def test_integer_output_takes_float0_or_its_own_dtype_as_tangent():
    for tangent in (lambda n: np.zeros(n.shape, fg.float0), lambda n: fnp.zeros_like(n)):
        @fg.custom_jvp
        def twice(n):
            return n * 2
        twice.defjvp(lambda p, t, tangent=tangent: (twice(p[0]), tangent(p[0])))
        out, _ = fg.jvp(twice, (fnp.arange(3),), (np.zeros(3, fg.float0),))
        np.testing.assert_array_equal(np.asarray(out), [0, 2, 4])
