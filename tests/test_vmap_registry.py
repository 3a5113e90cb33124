"""Every primitive in the registry under `vmap`: each sampler's case, applied to a batch of
examples (the case's arguments, slightly rescaled per example), equals the stack of the
per-example results, for several ``in_axes`` (every argument mapped at axis 0, one
argument mapped and the others shared, the batch axis last), and so do the per-example
gradients (for the same ``in_axes``) and Hessian-vector products (every argument mapped):
first and second order. Every primitive has a
batching rule, or a listed reason why it cannot have one, which vmap then raises."""
import numpy as np
import pytest
from hypothesis import given, settings, strategies as st

import funcgrad
import funcgrad.distributed as dist
import funcgrad.numpy as fnp
from funcgrad.primitives.binary import floored_quotient
from funcgrad.primitives import registry
from funcgrad.transforms.linear import linear_call, linear_call_multiple
from funcgrad.tree_util import tree_leaves
from funcgrad.torch._compiled_random import draw_p, state_bytes



def _own_primitives() -> dict:
    """funcgrad's primitives (those its modules declare): test modules declare their own,
    without batching rules, which are not the registry's business here."""
    import sys
    from funcgrad.core import Primitive
    found = {}
    for name, module in list(sys.modules.items()):
        if name.split(".")[0] == "funcgrad":
            for value in list(vars(module).values()):
                if isinstance(value, Primitive) and registry().get(value.name) is value:
                    found[value.name] = value
    return found


OWN = _own_primitives()
SAMPLED = sorted(n for n, p in OWN.items() if p.sample is not None)
BATCH = 3
FEW = settings(max_examples=max(2, settings.default.max_examples // 2))

# primitives that cannot be batched, and the fact that makes it so (vmap raises it)
UNBATCHABLE = {
    "nonzero": "its result's shape depends on the values",
    "unique_positions": "the number of unique values depends on the values",
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
    prim = OWN[name]
    for case in prim.sample(prim, data.draw):
        _check_case(case.fun, case.args)


@pytest.mark.parametrize("name", sorted(n for n in SAMPLED if OWN[n].differentiable))
@FEW
@given(data=st.data())
def test_vmap_of_grad_and_hvp_equals_stacked_examples(name, data):
    prim = OWN[name]
    for case in prim.sample(prim, data.draw):
        if any(np.iscomplexobj(a) for a in case.args):
            continue  # grad of a function of complex inputs is not the real gradient
        f = _scalar(case.fun)
        argnums = tuple(range(len(case.args)))
        grad = funcgrad.grad(f, argnums)

        def hvp(*xs):  # forward over reverse: the Hessian times the inputs themselves
            return funcgrad.jvp(lambda *ys: grad(*ys), xs, xs)[1]
        everything = [((True,) * len(case.args), 0)]
        for g, choices in ((grad, _in_axes_choices(case.args)), (hvp, everything)):
            for mapped, axis in choices:
                in_axes = tuple(axis if m else None for m in mapped)
                batched = funcgrad.vmap(g, in_axes=in_axes)(*_stacked(case.args, mapped, axis))
                singles = [g(*_per_example(case.args, mapped, k)) for k in range(BATCH)]
                _assert_stacked(batched, singles)


@pytest.mark.parametrize("name", sorted(OWN))
def test_every_primitive_has_a_batching_rule(name):
    prim = OWN[name]
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


# -- the primitives without samplers (not differentiable): one case each ----------------------

def _ints(*shape, lo=0, hi=7):
    return np.random.RandomState(sum(shape) + 1).randint(lo, hi, shape)


def _floats(*shape):
    return np.random.RandomState(sum(shape) + 2).uniform(-2, 2, shape)


def _windows_argmax(x):
    from funcgrad.primitives.conv import window_argmax
    return window_argmax(x, window_dimensions=(2, 2), window_strides=(1, 2),
                         padding=((0, 1), (1, 0)), base_dilation=(1, 1),
                         window_dilation=(1, 1), fill=-np.inf, kind="max")


def _bitcast(x):
    from funcgrad.primitives.random import bitcast_convert_type
    return bitcast_convert_type(x, new_dtype=np.dtype(np.int64))


def _threefry(k, x):
    from funcgrad.primitives.random import threefry2x32
    return threefry2x32(k[0], k[1], x, x + np.uint32(1))


def _gamma_draws(keys, a):
    from funcgrad.primitives.random import random_gamma
    return random_gamma(keys, a, log_space=False)


def _poisson_draws(key, lam):
    from funcgrad.primitives.random import random_poisson
    return random_poisson(key, lam)


def _gamma_cdf(a, x):
    from funcgrad.primitives.random import random_gamma_cdf
    return random_gamma_cdf(a, fnp.log(x))


def _set_winners(idx):
    from funcgrad.primitives.indexing import Index, Ref, set_winners
    return set_winners(idx[None], index=Index((Ref(0),)), shape=(5,))


def _tie_weights(x):
    from funcgrad.primitives.reductions import tie_weights
    return tie_weights(x, fnp.max(x, axis=1, keepdims=True), axis=(1,))


def _staged(which):
    """A function replaying a jit program that holds a switch, while_loop or scan record."""
    from funcgrad import lax

    def switch(x):
        return lax.switch(fnp.argmax(x) % 2, [fnp.sin, fnp.cos], x)

    def while_loop(x):
        return lax.while_loop(lambda c: c[0] < fnp.sum(c[2] > 0),
                              lambda c: (c[0] + 1, c[1] * 2, c[2]), (0, x, x))[1]

    def scan(x):
        return lax.scan(lambda c, xi: (c + xi, c * xi), fnp.sum(x), x)
    program = funcgrad.make_jaxpr({"switch": switch, "while_loop": while_loop,
                                   "scan": scan}[which])(_floats(4))
    return lambda x: program(x)  # replaying the program binds the staged record


def _linear_use(multiple: bool):
    """A JAX-style primitive's use on a linear tape (`funcgrad.transforms.linear`): its
    batching rule is the primitive's."""
    p = funcgrad.extend.core.Primitive(f"test_linear_use_{multiple}")
    p.multiple_results = multiple
    p.def_impl(lambda x: (2 * x, 3 * x) if multiple else 2 * x)
    funcgrad.interpreters.batching.primitive_batchers[p] = lambda xs, dims: (
        p.bind(*xs), (dims[0], dims[0]) if multiple else dims[0])
    call = linear_call_multiple if multiple else linear_call
    return lambda x: call.bind(x, prim=p, linear=(True,), prim_params={})


UNSAMPLED = {
    "argmax": (lambda x: fnp.argmax(x, axis=1), (_floats(3, 4),)),
    "argmin": (lambda x: fnp.argmin(x), (_floats(3, 4),)),
    "argsort": (lambda x: fnp.argsort(x, axis=0), (_floats(3, 4),)),
    "bitcast_convert_type": (lambda x: _bitcast(x), (_floats(4),)),
    "bitwise_and": (fnp.bitwise_and, (_ints(3), _ints(2, 3))),
    "floored_quotient": (lambda x, y: floored_quotient(x, y), (_floats(3), _floats(2, 3))),
    "bitwise_or": (fnp.bitwise_or, (_ints(3), _ints(2, 3))),
    "bitwise_xor": (fnp.bitwise_xor, (_ints(3), _ints(2, 3))),
    "bitwise_count": (fnp.bitwise_count, (_ints(2, 3),)),
    "invert": (fnp.invert, (_ints(2, 3),)),
    "left_shift": (fnp.left_shift, (_ints(3), _ints(2, 3, hi=3))),
    "right_shift": (fnp.right_shift, (_ints(3), _ints(2, 3, hi=3))),
    "gcd": (fnp.gcd, (_ints(3), _ints(2, 3))),
    "lcm": (fnp.lcm, (_ints(3), _ints(2, 3))),
    "equal": (fnp.equal, (_ints(3), _ints(2, 3))),
    "not_equal": (fnp.not_equal, (_ints(3), _ints(2, 3))),
    "less": (fnp.less, (_floats(3), _floats(2, 3))),
    "less_equal": (fnp.less_equal, (_floats(3), _floats(2, 3))),
    "greater": (fnp.greater, (_floats(3), _floats(2, 3))),
    "greater_equal": (fnp.greater_equal, (_floats(3), _floats(2, 3))),
    "logical_and": (lambda x, y: fnp.logical_and(x > 0, y > 0), (_floats(3), _floats(2, 3))),
    "logical_or": (lambda x, y: fnp.logical_or(x > 0, y > 0), (_floats(3), _floats(2, 3))),
    "logical_xor": (lambda x, y: fnp.logical_xor(x > 0, y > 0), (_floats(3), _floats(2, 3))),
    "logical_not": (lambda x: fnp.logical_not(x > 0), (_floats(2, 3),)),
    "isfinite": (lambda x: fnp.isfinite(1 / x), (_floats(2, 3),)),
    "isinf": (lambda x: fnp.isinf(1 / fnp.round(x)), (_floats(2, 3),)),
    "isnan": (lambda x: fnp.isnan(fnp.log(x)), (_floats(2, 3),)),
    "signbit": (fnp.signbit, (_floats(2, 3),)),
    "frexp_exponent": (lambda x: fnp.frexp(x)[1], (_floats(2, 3),)),
    "reduce_all": (lambda x: fnp.all(x > -1, axis=0), (_floats(3, 4),)),
    "reduce_any": (lambda x: fnp.any(x > 1), (_floats(3, 4),)),
    "tie_weights": (_tie_weights, (np.round(_floats(3, 4)),)),
    "isin": (fnp.isin, (_ints(2, 3), _ints(4))),
    "searchsorted": (fnp.searchsorted, (np.sort(_floats(5)), _floats(3))),
    "digitize": (fnp.digitize, (_floats(3), np.sort(_floats(5)))),
    "lexsort": (lambda a, b: fnp.lexsort((a, b)), (_ints(6, hi=3), _ints(6, hi=3))),
    "set_winners": (_set_winners, (_ints(4, hi=5),)),
    "window_argmax": (_windows_argmax, (_floats(4, 5),)),
    "threefry2x32": (_threefry, (_ints(2, hi=2**31).astype(np.uint32),
                                 _ints(3, hi=2**31).astype(np.uint32))),
    "random_gamma": (_gamma_draws, (_ints(3, 2, hi=2**31).astype(np.uint32),
                                    np.abs(_floats(3)) + 0.5)),
    "random_poisson": (_poisson_draws, (_ints(2, hi=2**31).astype(np.uint32),
                                        np.array([0.5, 3.0, 12.0, 40.0], np.float32))),
    "random_gamma_cdf": (_gamma_cdf, (np.abs(_floats(3)) + 0.5, np.abs(_floats(3)) + 0.1)),
    "stop_gradient": (funcgrad.stop_gradient, (_floats(2, 3),)),
    "axis_index": (lambda x: funcgrad.vmap(lambda y: y * dist.axis_index("j"),
                                           axis_name="j")(x), (_floats(3, 2),)),
    # (what each example's call sees is tests/test_debug.py's check)
    "debug_callback": (lambda x: (funcgrad.debug.callback(lambda v: None, x), x + 1)[1],
                       (_floats(3),)),
    "pure_callback": (lambda x: funcgrad.pure_callback(
        np.sin, funcgrad.ShapeDtypeStruct.like(x), x, vmap_method="sequential"),
        (_floats(3),)),
    "io_callback": (lambda x: funcgrad.experimental.io_callback(
        np.cos, funcgrad.ShapeDtypeStruct.like(x), x), (_floats(3),)),
    "torch_generator_draw": (lambda state: draw_p.bind(state, method="random", args=(3,),
                                                       kwargs=()),
                             (np.frombuffer(state_bytes(0, np.random.default_rng(1)),
                                            np.uint8).copy(),)),
    "switch": (_staged("switch"), (_floats(4),)),
    "while_loop": (_staged("while_loop"), (_floats(4),)),
    "scan": (_staged("scan"), (_floats(4),)),
    "linear_call": (_linear_use(False), (_floats(3),)),
    "linear_call_multiple": (_linear_use(True), (_floats(3),)),
}


@pytest.mark.parametrize("name", sorted(n for n in OWN if OWN[n].sample is None
                                        and n not in UNBATCHABLE))
def test_vmap_of_unsampled_primitive_equals_stacked_examples(name):
    assert name in UNSAMPLED, f"give primitive {name!r} a case here (it has no sampler)"
    fun, args = UNSAMPLED[name]
    _check_case(fun, args)
