"""The functional core: immutable Arrays, pytrees, nesting, escaped tracers, threads, tape
release, user primitives and error messages."""
import collections
import dataclasses
import gc
import subprocess
import sys
import threading
import weakref

import numpy as np
import pytest

import funcgrad
import funcgrad.numpy as fnp
from funcgrad import grad, value_and_grad, vjp, tree_util
import funcgrad.test_util
from funcgrad.primitives import Primitive, sampling


# -- immutability -----------------------------------------------------------------------

def test_item_assignment_raises_and_points_to_at():
    x = fnp.asarray([1.0, 2.0, 3.0])
    with pytest.raises(TypeError, match=r"x.at\[idx\].set"):
        x[0] = 5.0


def test_numpy_view_is_read_only():
    x = fnp.asarray([1.0, 2.0])
    view = np.asarray(x)
    assert not view.flags.writeable
    with pytest.raises(ValueError):
        view[0] = 3.0
    assert x.tolist() == [1.0, 2.0]


def test_input_numpy_array_is_copied():
    raw = np.array([1.0, 2.0])
    x = fnp.asarray(raw)
    raw[0] = 100.0
    assert x.tolist() == [1.0, 2.0]


def test_augmented_assignment_rebinds():
    x = fnp.asarray([1.0, 2.0])
    y = x
    y += 1
    assert x.tolist() == [1.0, 2.0] and y.tolist() == [2.0, 3.0]


def test_numpy_constants_are_referenced_not_copied():
    """A numpy array a function closes over is kept by reference for the backward pass
    (research code closes over numpy weights all the time: a copy per use would double the
    memory of a gradient). The contract, as for any zero-copy view: do not write into it
    while a transform holds it."""
    w = np.array([2.0, 3.0])
    tape = funcgrad.make_tape(lambda x: x * w)(fnp.asarray([1.0, 1.0]))
    assert any(r.value is w for r in tape.residuals())
    out, f_vjp = vjp(lambda x: x * w, fnp.asarray([1.0, 1.0]))
    np.testing.assert_allclose(np.asarray(f_vjp(fnp.ones(2))[0]), [2.0, 3.0])


def test_at_updates_return_new_arrays():
    x = fnp.zeros(3)
    y = x.at[1].set(5.0)
    assert x.tolist() == [0.0, 0.0, 0.0] and y.tolist() == [0.0, 5.0, 0.0]
    z = x.at[np.array([0, 0, 2])].add(1.0)
    assert z.tolist() == [2.0, 0.0, 1.0]


def test_array_metadata_and_methods():
    x = fnp.asarray(np.arange(6.0).reshape(2, 3))
    assert x.shape == (2, 3) and x.ndim == 2 and x.size == 6 and x.dtype == np.float64
    assert x.T.shape == (3, 2) and x.mT.shape == (3, 2)
    assert x.sum().item() == 15.0 and x.mean(axis=0).tolist() == [1.5, 2.5, 3.5]
    assert x.reshape(3, 2).shape == (3, 2) and x.astype(np.float32).dtype == np.float32
    assert (x @ x.T).shape == (2, 2) and x.device == "cpu"
    assert repr(fnp.asarray([1.0, 2.0])) == "Array([1., 2.], dtype=float64)"
    assert np.from_dlpack(x).tolist() == x.tolist()


def test_funcs_accept_numpy_scalars_and_lists():
    assert isinstance(fnp.sin([0.0, 1.0]), funcgrad.Array)
    assert isinstance(fnp.add(1.0, np.float64(2.0)), funcgrad.Array)
    assert fnp.multiply([[1, 2]], 2).tolist() == [[2, 4]]


# -- pytrees ---------------------------------------------------------------------------

Point = collections.namedtuple("Point", "x y")


@dataclasses.dataclass
class Params:
    w: object
    b: object


class Box:
    def __init__(self, value):
        self.value = value


tree_util.register_pytree_node(Box, lambda b: ((b.value,), None), lambda _, c: Box(c[0]))


def test_grad_over_pytrees():
    params = {"a": fnp.asarray(2.0), "list": [fnp.asarray(3.0), None],
              "pt": Point(fnp.asarray(1.0), fnp.asarray(4.0)),
              "dc": Params(fnp.asarray(5.0), fnp.asarray(6.0)), "box": Box(fnp.asarray(7.0))}

    def loss(p):
        return (p["a"] * p["list"][0] + p["pt"].x * p["pt"].y + p["dc"].w * p["dc"].b
                + p["box"].value ** 2)

    g = grad(loss)(params)
    assert float(g["a"]) == 3.0 and float(g["list"][0]) == 2.0 and g["list"][1] is None
    assert isinstance(g["pt"], Point) and float(g["pt"].x) == 4.0
    assert isinstance(g["dc"], Params) and float(g["dc"].b) == 5.0
    assert isinstance(g["box"], Box) and float(g["box"].value) == 14.0


def test_tree_util_functions():
    tree = {"b": [1, 2], "a": (3, None)}
    leaves, treedef = tree_util.tree_flatten(tree)
    assert leaves == [3, 1, 2]  # dict keys sorted
    assert tree_util.tree_unflatten(treedef, [30, 10, 20]) == {"b": [10, 20], "a": (30, None)}
    assert tree_util.tree_map(lambda x, y: x + y, tree, tree) == {"b": [2, 4], "a": (6, None)}
    assert tree_util.tree_leaves(None) == []
    with pytest.raises(ValueError, match="pytree structure error: different types"):
        tree_util.tree_map(lambda x, y: x, [1], (1,))


# -- nesting, closures, escaped tracers ----------------------------------------------------

def test_no_perturbation_confusion():
    def f(x):
        return x * grad(lambda y: x + y)(fnp.asarray(1.0))
    assert float(grad(f)(fnp.asarray(3.0))) == 1.0


def test_closure_over_outer_tracer():
    def outer(x):
        inner = grad(lambda y: fnp.sin(x * y))
        return inner(fnp.asarray(2.0))  # x cos(2x)
    x = 0.7
    expected = np.cos(2 * x) - 2 * x * np.sin(2 * x)
    assert np.isclose(float(grad(outer)(fnp.asarray(x))), expected)


def test_third_derivative():
    d3 = grad(grad(grad(fnp.sin)))
    assert np.isclose(float(d3(fnp.asarray(0.5))), -np.cos(0.5))


def test_escaped_tracer_raises_clear_error():
    leaked = []

    def f(x):
        leaked.append(x * 2)
        return fnp.sum(x * x)

    grad(f)(fnp.asarray([1.0, 2.0]))
    with pytest.raises(funcgrad.EscapedTracerError, match="escaped tracer"):
        fnp.sin(leaked[0])


def test_tracer_refuses_silent_conversion():
    def f(x):
        return fnp.asarray(float(x) * 2.0)
    with pytest.raises(TypeError, match="stop_gradient"):
        grad(f)(fnp.asarray(1.0))


def test_python_control_flow_on_traced_values():
    def f(x):
        return x * x if x > 0 else -x
    assert float(grad(f)(fnp.asarray(3.0))) == 6.0
    assert float(grad(f)(fnp.asarray(-3.0))) == -1.0


def test_stop_gradient():
    f = lambda x: x * funcgrad.stop_gradient(x)
    assert float(grad(f)(fnp.asarray(3.0))) == 3.0


# -- threads and memory -------------------------------------------------------------------

def test_threads_take_gradients_independently():
    results = {}

    def work(k):
        x = fnp.asarray(float(k))
        for _ in range(200):
            g = grad(lambda x: x ** 3 * k)(x)
        results[k] = float(g)

    threads = [threading.Thread(target=work, args=(k,)) for k in (1, 2, 3, 4)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert results == {k: 3.0 * k ** 3 for k in (1, 2, 3, 4)}


def test_tape_is_released_after_backward_without_gc():
    refs = []

    def f(x):
        h = fnp.tanh(x * 2.0)
        refs.append(weakref.ref(h._primal))
        return fnp.sum(h * h)

    gc.disable()
    try:
        g = grad(f)(fnp.ones(1000))
        assert refs[0]() is None
        out, f_vjp = vjp(f, fnp.ones(1000))
        assert refs[1]() is not None  # the vjp function keeps its residuals ...
        del f_vjp
        assert refs[1]() is None      # ... and only it
    finally:
        gc.enable()
    assert g.shape == (1000,)


# -- errors ---------------------------------------------------------------------------------

def test_grad_of_non_scalar_output():
    with pytest.raises(TypeError, match=r"Output had shape: \(3,\).*jacrev"):
        grad(lambda x: x * 2)(fnp.ones(3))


def test_grad_of_integer_input():
    with pytest.raises(TypeError, match="allow_int"):
        grad(lambda x: x * 2.0)(fnp.asarray(3))
    g = grad(lambda x, n: x * n, argnums=1, allow_int=True)(fnp.asarray(2.0), fnp.asarray(3))
    assert g.dtype == funcgrad.float0


def test_missing_rule_names_primitive_and_argument():
    p = Primitive("test_no_rule", lambda x, y: x * y, ("x", "y"),
                  sample=sampling.elementwise(2), replace=True)
    p.defvjp(lambda g, y: g * y)  # nothing for y
    assert float(grad(lambda x: p(x, 2.0))(fnp.asarray(1.0))) == 2.0
    with pytest.raises(NotImplementedError, match=r"'test_no_rule'.*argument 1 \('y'\)"):
        grad(lambda y: p(2.0, y))(fnp.asarray(1.0))


def test_rule_asking_for_unknown_name_fails_at_declaration():
    p = Primitive("test_bad_rule", np.sin, replace=True)
    with pytest.raises(TypeError, match="asks for 'z'"):
        p.defvjp(lambda g, z: g)


def test_argnums_and_has_aux():
    f = lambda x, y: (x * y ** 2, {"x": x})
    (value, aux), (gx, gy) = value_and_grad(f, argnums=(0, 1), has_aux=True)(
        fnp.asarray(2.0), fnp.asarray(3.0))
    assert float(value) == 18.0 and float(gx) == 9.0 and float(gy) == 12.0
    assert not isinstance(aux["x"], funcgrad.core.Tracer)
    with pytest.raises(TypeError, match="argnums"):
        grad(lambda x: x, argnums=3)(fnp.asarray(1.0))


def test_float32_is_preserved():
    x = fnp.asarray(np.array([0.5, 1.5], np.float32))
    f = lambda x: fnp.sum(fnp.tanh(x * 2.0 + 1.0) / fnp.exp(x))
    assert f(x).dtype == np.float32
    assert grad(f)(x).dtype == np.float32
    assert grad(grad(lambda x: fnp.sum(fnp.sin(x))))(fnp.asarray(np.float32(1.0))).dtype \
        == np.float32


# -- user-declared primitive ----------------------------------------------------------------

def test_user_primitive_and_its_second_derivative():
    softsign = Primitive("test_softsign", lambda x: x / (1 + np.abs(x)),
                         sample=sampling.elementwise(1, (0.2, 2.0), signed=True),
                         replace=True)
    softsign.defvjp(lambda g, x: g / (1 + fnp.abs(x)) ** 2)
    x = 0.5
    assert np.isclose(float(grad(softsign)(fnp.asarray(x))), 1 / (1 + x) ** 2)
    assert np.isclose(float(grad(grad(softsign))(fnp.asarray(x))), -2 / (1 + x) ** 3)
    # forward mode derived from the VJP rule
    _, t = funcgrad.jvp(softsign, (fnp.asarray(x),), (fnp.asarray(1.0),))
    assert np.isclose(float(t), 1 / (1 + x) ** 2)
    assert softsign.jvp_source == "derived from vjp"
    funcgrad.test_util.check_grads(softsign, (np.array([0.3, -0.8]),), order=2)


def test_duplicate_primitive_name_rejected():
    with pytest.raises(ValueError, match="already declared"):
        Primitive("sin", np.sin)


# -- tapes ------------------------------------------------------------------------------------

def test_make_tape_prints_and_reruns():
    f = lambda x, y: fnp.sum(fnp.sin(x) * y)
    tape = funcgrad.make_tape(f)(fnp.ones(3), fnp.ones(3))
    text = str(tape)
    assert "c:f64[3] = sin a" in text and "reduce_sum" in text
    assert tape.primitives == ["sin", "mul", "reduce_sum"]
    x, y = np.array([0.1, 0.2, 0.3]), np.array([1.0, 2.0, 3.0])
    assert np.isclose(float(tape(x, y)), float(f(x, y)))
    with pytest.raises(TypeError, match="shape"):
        tape(np.ones(4), np.ones(4))


def test_tape_of_a_gradient_marks_the_backward_pass():
    tape = funcgrad.make_tape(grad(lambda x: fnp.sum(fnp.tanh(x))))(fnp.ones(2))
    text = str(tape)
    assert "# --- backward pass ---" in text
    assert text.index("tanh") < text.index("backward pass")


def test_one_call_tape_api_matches_a_traced_call():
    """`record_call` (what the torch facade records an op with) keeps what tracing keeps:
    its `CallTape`, made later with `CallTape.of`, pulls back as `trace_flat`'s tape does,
    and `call_cotangents` gives the same cotangents without one."""
    from funcgrad.primitives import binary
    from funcgrad.transforms.tape import trace_flat
    from funcgrad.transforms.tape_call import CallTape, call_cotangents, record_call
    x, w = fnp.asarray([[1.0, -2.0, 3.0]]), fnp.asarray([0.5, 4.0, -1.5])
    g = fnp.asarray([[2.0, 1.0, -1.0]])
    out, rec, avals, positions, is_complex, reads, traced = record_call(
        binary.mul, {}, [x, w], [1])
    assert traced and not is_complex and positions == (1,) and avals == ((w.shape, w.dtype),)
    assert reads == ((0,), False)  # d(x * w)/dw reads x only
    np.testing.assert_array_equal(np.asarray(out), np.asarray(x) * np.asarray(w))
    traced_tape, _ = trace_flat(lambda w: binary.mul.bind(x, w), [w])
    expected = traced_tape.backward([g])
    got = call_cotangents(rec, g, avals)
    tape = CallTape.of(rec, avals, (out.shape, out.dtype), positions, is_complex, "mul")
    assert tape.var_avals == [(w.shape, w.dtype), (out.shape, out.dtype)]
    assert tape.in_vars == [0] and tape.out_vars == [1] and len(tape.records) == 1
    for cts in (got, tape.backward([g])):
        np.testing.assert_array_equal(np.asarray(cts[0]), np.asarray(expected[0]))
        assert cts[0].shape == (3,)  # summed back over the broadcast axis
    _, rec, _, _, _, _, traced = record_call(binary.mul, {}, [fnp.asarray([1, 2]),
                                                              fnp.asarray([3, 4])], [0])
    assert rec is None and not traced  # an integer product is no tape variable
    with pytest.raises(ValueError, match="ascending"):
        record_call(binary.mul, {}, [x, w], [1, 0])


# -- packaging ---------------------------------------------------------------------------------

def test_only_the_funcgrad_namespace_is_installed(tmp_path):
    code = ("import importlib.util as u; import funcgrad.transforms, funcgrad.primitives;"
            "print(u.find_spec('transforms'), u.find_spec('primitives'))")
    out = subprocess.run([sys.executable, "-c", code], cwd=tmp_path, capture_output=True,
                         text=True, check=True).stdout
    assert out.strip() == "None None"


def test_every_array_method_in_the_table_is_installed():
    from funcgrad.numpy import _methods
    names = [fn for fn in _methods._METHODS.values()]
    names += [fn for _, fn in _methods._OPERATORS + _methods._COMPARISONS + _methods._UNARY]
    names += list(_methods._PROPERTIES.values()) + ["reshape", "transpose", "getitem"]
    missing = [n for n in names if not hasattr(fnp, n)]
    assert not missing, f"funcgrad.numpy lacks {missing} used by Array methods"


def test_a_complex_cotangent_for_a_real_output_is_an_error():
    """A real output's cotangent is real: its imaginary part would be lost silently."""
    _, f_vjp = vjp(fnp.sin, fnp.asarray([1.0, 2.0]))
    with pytest.raises(TypeError, match="cotangent leaf 0 has complex dtype complex128, "
                                        "but the output is real"):
        f_vjp(fnp.asarray([1.0 + 1j, 0.5j]))


def test_a_replayed_gradient_tape_equals_grad_at_ties_of_maximum():
    """Rules are pure functions of their inputs: the tape of grad(f) recorded away from a
    tie of maximum, replayed at a tie, gives what grad gives there (half to each side)."""
    def f(x, y):
        return fnp.sum(fnp.maximum(x, y) * x)
    g = funcgrad.grad(f, argnums=(0, 1))
    tape = funcgrad.make_tape(g)(fnp.asarray([1.0, 3.0]), fnp.asarray([2.0, 0.5]))
    at_tie = (fnp.asarray([2.0, 1.0]), fnp.asarray([2.0, 1.0]))
    for got, want in zip(tape(*at_tie), g(*at_tie)):
        np.testing.assert_array_equal(np.asarray(got), np.asarray(want))
    np.testing.assert_array_equal(np.asarray(g(*at_tie)[1]), [1.0, 0.5])


@pytest.mark.parametrize("transform", ["grad", "value_and_grad", "jacrev", "jacfwd"])
def test_repeated_argnums_are_an_error(transform):
    fn = getattr(funcgrad, transform)(lambda x: x * x, argnums=(0, 0))
    with pytest.raises(ValueError, match=r"argnums=\(0, 0\) names an argument more than once"):
        fn(2.0)


def test_jacobians_of_python_numbers_and_dict_pytrees():
    np.testing.assert_allclose(np.asarray(funcgrad.jacobian(lambda x: x * x)(0.5)), 1.0)
    np.testing.assert_allclose(np.asarray(funcgrad.jacfwd(lambda x: x * x)(0.5)), 1.0)

    def f(d, y):
        return {"a": d["x"] * y, "b": fnp.sin(d["x"])}
    d, y = {"x": fnp.asarray([1.0, 2.0])}, fnp.asarray(3.0)
    for jac in (funcgrad.jacrev, funcgrad.jacfwd):
        out = jac(f, argnums=(0, 1))(d, y)
        np.testing.assert_allclose(np.asarray(out["a"][0]["x"]), 3 * np.eye(2))
        np.testing.assert_allclose(np.asarray(out["a"][1]), [1.0, 2.0])
        np.testing.assert_allclose(np.asarray(out["b"][0]["x"]), np.diag(np.cos([1.0, 2.0])),
                                   atol=1e-15)


def test_test_util_is_loaded_with_funcgrad_and_checks_pytrees():
    check = funcgrad.test_util.check_grads
    check(lambda d: fnp.sum(d["a"] * fnp.sin(d["b"][0])),
          ({"a": fnp.ones(3), "b": [fnp.full(3, 0.3)]},), order=2)
    check(fnp.abs, (fnp.asarray([3e-5, -2e-5]),), order=1)  # within one default step of 0
    with pytest.raises(AssertionError, match="VJP dot-product test failed"):
        wrong = funcgrad.custom_vjp(lambda x: x * x)
        wrong.defvjp(lambda x: (x * x, x), lambda x, g: (3 * x * g,))
        check(wrong, (fnp.asarray([0.5, 1.5]),), order=1, modes=("rev",))
