"""Weakly typed results (JAX's weak types, issue 39): the dtype AND ``weak_type`` of what
funcgrad returns, against jax.numpy's, with x64 enabled and disabled.

A Python number is weak; so is an Array made from one without a dtype (``asarray(2.0)``),
the result of an operation whose operands are all weak (``exp(2.0)``) or whose promoted
type is a weak one (``int32 * 2.0``), and a shape operation's on a weak operand.
Reductions, ``astype`` and explicit dtypes give strong results. A float32 array absorbs a
weak float64 (``x32 + exp(2.0)`` is float32), which is what the composite functions
(hstack, append, outer, clip...) need. It holds under jit, vmap, grad and jvp.
"""
import importlib.util
import pathlib
import sys

import numpy as np
import pytest

jax = pytest.importorskip("jax")
import jax.numpy as jnp  # noqa: E402

import funcgrad  # noqa: E402
import funcgrad.numpy as fnp  # noqa: E402
from funcgrad import lax as flax  # noqa: E402



def _x64():
    """tests/test_dtype_lattice.py's ``x64`` block (tests/ is not a package; the module
    name is the one tests/test_dtype_x32_requests.py loads it as)."""
    name = "dtype_lattice_grid"
    if name not in sys.modules:
        path = pathlib.Path(__file__).with_name("test_dtype_lattice.py")
        spec = importlib.util.spec_from_file_location(name, path)
        sys.modules[name] = module = importlib.util.module_from_spec(spec)
        spec.loader.exec_module(module)
    return sys.modules[name].x64


x64 = _x64()


def _f32(m):
    return m.ones(2, dtype=np.float32)


def _i32(m):
    return m.ones(2, dtype=np.int32)


def _weak_f(m):
    return m.full(3, 1.0)


# name -> function of the library namespace ``m`` returning an array
CASES = {
    "asarray(1.0)": lambda m: m.asarray(1.0),
    "asarray(1)": lambda m: m.asarray(1),
    "asarray(True)": lambda m: m.asarray(True),
    "array(1.0)": lambda m: m.array(1.0),
    "asarray([1.0])": lambda m: m.asarray([1.0]),
    "asarray(1.0, float32)": lambda m: m.asarray(1.0, np.float32),
    "asarray(np.float64)": lambda m: m.asarray(np.float64(1)),
    "asarray(weak)": lambda m: m.asarray(m.asarray(1.0)),
    "exp(2.0)": lambda m: m.exp(2.0),
    "sin(2)": lambda m: m.sin(2),
    "add(1, 2)": lambda m: m.add(1, 2),
    "weak + weak int": lambda m: m.asarray(1.0) + m.asarray(2),
    "weak int + 3.0": lambda m: m.asarray(1) + 3.0,
    "neg": lambda m: -m.asarray(1.0),
    "less": lambda m: m.asarray(1.0) < 2.0,
    "square(True)": lambda m: m.square(True),
    "true_divide(1, 2)": lambda m: m.true_divide(1, 2),
    "i32 * 2.0": lambda m: _i32(m) * 2.0,
    "i32 / 2": lambda m: _i32(m) / 2,
    "bool + 1": lambda m: m.ones(2, dtype=bool) + 1,
    "f32 + exp(2.0)": lambda m: _f32(m) + m.exp(2.0),
    "f32 * asarray(2.0)": lambda m: _f32(m) * m.asarray(2.0),
    "weak int + f32": lambda m: m.asarray(1) + _f32(m),
    "weak float + int8": lambda m: m.asarray(1.0) + m.ones(2, dtype=np.int8),
    "astype": lambda m: m.asarray(1.0).astype(np.float32),
    "sum": lambda m: m.sum(m.asarray(1.0)),
    "mean": lambda m: m.mean(m.asarray(1.0)),
    "max": lambda m: m.max(m.asarray(1.0)),
    "cumsum": lambda m: m.cumsum(_weak_f(m)),
    "zeros_like(weak)": lambda m: m.zeros_like(m.asarray(1.0)),
    "ones_like(2.0)": lambda m: m.ones_like(2.0),
    "full_like(strong, 1.0)": lambda m: m.full_like(_f32(m), 1.0),
    "full(3, 1.0)": lambda m: m.full(3, 1.0),
    "full(3, 1.0, float32)": lambda m: m.full(3, 1.0, dtype=np.float32),
    "zeros": lambda m: m.zeros(3),
    "reshape": lambda m: m.asarray(1.0).reshape(1),
    "broadcast_to": lambda m: m.broadcast_to(m.asarray(1.0), (3,)),
    "transpose": lambda m: _weak_f(m).T,
    "x[()]": lambda m: m.asarray(1.0)[()],
    "x[1:]": lambda m: _weak_f(m)[1:],
    "x[idx]": lambda m: _weak_f(m)[m.asarray(np.array([0, 1]))],
    "where": lambda m: m.where(True, 1.0, 2.0),
    "clip": lambda m: m.clip(1.0, 0.0, 2.0),
    "stack of numbers": lambda m: m.stack([1.0, 2.0]),
    "hstack([f32, 1.0])": lambda m: m.hstack([_f32(m), 1.0]),
    "append(f32, 1.0)": lambda m: m.append(_f32(m), 1.0),
    "outer(f32, 2.0)": lambda m: m.outer(_f32(m), 2.0),
    "kron(f32, 2.0)": lambda m: m.kron(_f32(m), 2.0),
    "concatenate strong": lambda m: m.concatenate([_f32(m), _f32(m)]),
    "dot(weak, 2.0)": lambda m: m.dot(m.asarray(1.0), 2.0),
}


def _of(x):
    return (np.dtype(x.dtype), bool(x.weak_type))


@pytest.mark.parametrize("mode", [True, False], ids=["x64", "x32"])
@pytest.mark.parametrize("name", sorted(CASES))
def test_dtype_and_weak_type_are_jax(name, mode):
    make = CASES[name]
    with x64(mode):
        assert _of(make(fnp)) == _of(make(jnp))


# transforms: name -> (function, arguments of the library namespace ``m``)
TRANSFORMED = {
    "number argument": (lambda x: x * 2, lambda m: (1.0,)),
    "weak array argument": (lambda x: x * 2, lambda m: (m.asarray(1.0),)),
    "strong array argument": (lambda x: x * 2, lambda m: (m.ones(2),)),
    "int array times a number": (lambda x: x * 2.0, lambda m: (m.ones(2, dtype=np.int32),)),
    "reduction": (lambda x: (x * 2).sum(), lambda m: (m.full(3, 1.0),)),
}


def _transforms(lib):
    return {"jit": lambda f: lib.jit(f), "vmap": lambda f: lib.vmap(f),
            "grad": lambda f: lib.grad(lambda *a: f(*a).sum())}


@pytest.mark.parametrize("mode", [True, False], ids=["x64", "x32"])
@pytest.mark.parametrize("transform", ["jit", "vmap", "grad"])
@pytest.mark.parametrize("name", sorted(TRANSFORMED))
def test_under_transforms(name, transform, mode):
    fun, args = TRANSFORMED[name]
    with x64(mode):
        fargs, jargs = args(fnp), args(jnp)
        if transform == "vmap" and not all(np.ndim(a) for a in jargs):
            pytest.skip("vmap needs a batched argument")
        if transform == "grad" and not all(np.dtype(a.dtype if hasattr(a, "dtype") else
                                                    type(a)).kind == "f" for a in jargs):
            pytest.skip("grad needs float arguments")
        ours = _transforms(funcgrad)[transform](fun)
        theirs = _transforms(jax)[transform](fun)
        for _ in range(2):  # the compiled call (the second) too
            assert _of(ours(*fargs)) == _of(theirs(*jargs))


def test_jit_tracer_and_jvp():
    with x64(True):
        seen = []
        funcgrad.jit(lambda x: seen.append(x.weak_type) or x)(1.0)
        funcgrad.jit(lambda x: seen.append(x.weak_type) or x)(fnp.ones(2))
        assert seen == [True, False]
        out, tangent = funcgrad.jvp(lambda x: x * 2, (1.0,), (1.0,))
        assert _of(out) == _of(jax.jvp(lambda x: x * 2, (1.0,), (1.0,))[0])


def test_eval_shape_and_result_type():
    with x64(False):
        for args in [(1.0,), (fnp.ones(2, np.int32),)]:
            ours = funcgrad.eval_shape(lambda x: x * 2.0, *args)
            jargs = [jnp.asarray(a) if hasattr(a, "dtype") else a for a in args]
            theirs = jax.eval_shape(lambda x: x * 2.0, *jargs)
            assert (ours.dtype, ours.weak_type) == (theirs.dtype, theirs.weak_type)
        weak = fnp.asarray(2.0)
        assert fnp.result_type(weak, np.float32) == np.float32
        assert fnp.result_type(weak, return_weak_type_flag=True) == (np.float32, True)


def test_repr_and_convert_element_type():
    assert "weak_type=True" in repr(fnp.exp(2.0))
    assert "weak_type" not in repr(fnp.ones(2))
    p = flax.convert_element_type_p
    assert not p.bind(fnp.asarray(1.0), new_dtype=np.dtype(np.float32)).weak_type
    assert p.bind(fnp.ones(2), new_dtype=np.dtype(np.float32), weak_type=True).weak_type
