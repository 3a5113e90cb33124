"""Functions that read a value of an enclosing transform from their closure instead of taking
it as an argument, inside every construct (checkpoint, nested checkpoints, jit, vmap, the lax
loops and cond), under grad, jit(grad) and jacfwd: each derivative equals that of the same
function written without the construct. (A checkpoint's or an inner jit's closure over a
differentiated value raised EscapedTracerError in the backward pass.)"""
import numpy as np
import pytest

import funcgrad as fg
import funcgrad.lax as lax
import funcgrad.numpy as fnp

X = np.linspace(0.1, 1.0, 5)
W = np.linspace(1.0, 2.0, 5)


def _twice(x, w):
    return fnp.sum(fnp.sin(fnp.sin(x * w) * w))


def _layer(w):
    return lambda a: fnp.sin(fnp.sin(a * w) * w)


CONSTRUCTS = {
    "checkpoint": lambda x, w: fnp.sum(fg.checkpoint(_layer(w))(x)),
    "nested checkpoints": lambda x, w: fnp.sum(
        fg.checkpoint(lambda a: fg.checkpoint(_layer(w))(a))(x)),
    "inner jit": lambda x, w: fnp.sum(fg.jit(_layer(w))(x)),
    "inner vmap": lambda x, w: fnp.sum(fg.vmap(_layer(w))(fnp.stack([x, x]))) / 2,
    "cond": lambda x, w: fnp.sum(lax.cond(True, _layer(w), lambda a: a, x)),
    "scan": lambda x, w: fnp.sum(lax.scan(lambda c, _: (fnp.sin(c * w), None), x, None,
                                          length=2)[0]),
    "fori_loop": lambda x, w: fnp.sum(lax.fori_loop(0, 2, lambda i, c: fnp.sin(c * w), x)),
    # (its trip count is known to Python even under jit: it runs as a loop, so reverse
    # mode applies)
    "while_loop": lambda x, w: fnp.sum(lax.while_loop(
        lambda c: c[0] < 2, lambda c: (c[0] + 1, fnp.sin(c[1] * w)), (0, x))[1]),
}
LOOPS = {"scan", "fori_loop", "while_loop"}  # sin(sin(x w) w) without the outer factor


def _loop_reference(x, w):
    return fnp.sum(fnp.sin(fnp.sin(x * w) * w))


TRANSFORMS = {
    "grad": lambda f: fg.grad(f, argnums=(0, 1)),
    "jit(grad)": lambda f: fg.jit(fg.grad(f, argnums=(0, 1))),
    "jacfwd": lambda f: fg.jacfwd(f, argnums=(0, 1)),
    "hessian": lambda f: fg.hessian(f, argnums=1),
}


@pytest.mark.parametrize("transform", TRANSFORMS)
@pytest.mark.parametrize("construct", CONSTRUCTS)
def test_closure_over_an_enclosing_transforms_value(construct, transform):
    reference = _loop_reference if construct in LOOPS else _twice
    got = TRANSFORMS[transform](CONSTRUCTS[construct])(X, W)
    want = TRANSFORMS[transform](reference)(X, W)
    for g, e in zip(got if isinstance(got, tuple) else (got,),
                    want if isinstance(want, tuple) else (want,)):
        np.testing.assert_allclose(g, e, rtol=1e-11, atol=1e-13)


def test_an_inner_jit_closing_over_a_tracer_still_compiles_without_one():
    """The fallback (op by op under the enclosing transform) is for calls whose closure holds
    a tracer; the same jitted function on concrete values is compiled and cached."""
    w = fnp.asarray(W)
    inner = fg.jit(_layer(w))
    np.testing.assert_allclose(fg.grad(lambda x: fnp.sum(inner(x)))(X),
                               fg.grad(lambda x: _twice(x, W))(X), rtol=1e-12)
    inner(X)
    assert inner._cache_size() == 1
