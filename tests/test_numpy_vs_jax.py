"""funcgrad.numpy against jax.numpy (64-bit), function by function: every public function
of funcgrad.numpy, funcgrad.numpy.linalg, funcgrad.numpy.fft and funcgrad.scipy.special
over the cases of numpy_table.py, which hold the values where conventions bite (infinities,
NaN, signed zeros, ties, integers, empty and 0-d arrays, broadcasting, complex numbers).

For each case both libraries run the same call; the test compares the outputs (values with
NaN in the same places, shapes, dtypes), and for the float and complex inputs the VJP
(``funcgrad.vjp`` against ``jax.vjp``, with the same cotangents) and the JVP
(``funcgrad.jvp`` against ``jax.jvp``). A call that raises in one library must raise in
the other. `test_every_numpy_name_is_in_the_table` fails for a public name without cases
(or a reason in ``NOT_COMPARED``).
"""
from __future__ import annotations

import importlib.util
import os
import functools
import pathlib
import sys
import types
import warnings
from typing import Any, Callable

import numpy as np
import pytest
import scipy.special

os.environ.setdefault("JAX_ENABLE_X64", "1")  # before jax is imported: float64 as numpy
jax = pytest.importorskip("jax")
jax.config.update("jax_enable_x64", True)  # in case another module imported jax first
import jax.numpy as jnp  # noqa: E402
import jax.scipy.special as jss  # noqa: E402
from jax.extend.core import jaxpr_as_fun  # noqa: E402

import funcgrad  # noqa: E402
import funcgrad.numpy as fnp  # noqa: E402
import funcgrad.scipy.special as fss  # noqa: E402
from funcgrad import tree_util  # noqa: E402


@pytest.fixture(autouse=True, scope="module")
def _fast_compiles():
    """The table's programs are tiny: optimising each compiled primitive costs more than it
    saves. (Only here: other modules compare bits with JAX's optimised programs.)"""
    jax.config.update("jax_disable_most_optimizations", True)
    yield
    jax.config.update("jax_disable_most_optimizations", False)


_TABLES = ("numpy_table.py", "numpy_table_library.py", "numpy_table_special.py")


def _load_tables() -> list:
    """numpy_table.py and the tables beside it that build on it (tests/ is not a package:
    the first is registered as the module ``numpy_table`` the others import from)."""
    modules = []
    for file in _TABLES:
        path = pathlib.Path(__file__).with_name(file)
        spec = importlib.util.spec_from_file_location(path.stem, path)
        module = importlib.util.module_from_spec(spec)
        sys.modules[path.stem] = module
        spec.loader.exec_module(module)
        modules.append(module)
    return modules


def _merged(attribute: str) -> dict:
    merged: dict = {}
    for module in _tables:
        part = getattr(module, attribute, {})
        twice = sorted(set(merged) & set(part))
        assert not twice, f"{attribute} entries in two tables: {twice}"
        merged.update(part)
    return merged


_tables = _load_tables()
TABLE, NOT_COMPARED, JAX_NAMES = _merged("TABLE"), _merged("NOT_COMPARED"), _merged("JAX_NAMES")
ALIASES, REFERENCE = _merged("ALIASES"), _merged("REFERENCE")

FUNCGRAD = {"": fnp, "linalg.": fnp.linalg, "fft.": fnp.fft, "special.": fss}
JAX = {"": jnp, "linalg.": jnp.linalg, "fft.": jnp.fft, "special.": jss, "nn.": jax.nn}
# for the names JAX lacks (REFERENCE): numpy's and scipy's functions, values only
NUMPY = {"": np, "linalg.": np.linalg, "fft.": np.fft, "special.": scipy.special}


def _function(namespaces: dict, name: str) -> Callable:
    prefix, _, bare = name.rpartition(".")
    return getattr(namespaces[prefix + "." if prefix else ""], bare)


def _inexact(a: Any) -> bool:
    return isinstance(a, np.ndarray) and a.dtype.kind in "fc"


def _probe(shape: tuple, dtype: Any, shift: float) -> np.ndarray:
    """Distinct deterministic values (a cotangent or tangent), complex for complex."""
    n = int(np.prod(shape))
    v = np.linspace(0.5, 1.5, n) + shift if n > 1 else np.ones(n)
    if np.issubdtype(dtype, np.complexfloating):
        v = v + 0.5j * v[::-1]
    return v.reshape(shape).astype(dtype)


def _differentiated(case: Any) -> list:
    """The positions of the float and complex array arguments."""
    return [i for i, a in enumerate(case.args) if _inexact(a)]


def _bound(case: Any, fn: Callable, xp: Any) -> Callable:
    """``case`` as a function of its differentiated arguments."""
    at = _differentiated(case)

    def f(*diff: Any) -> Any:
        args = list(case.args)
        for i, v in zip(at, diff):
            args[i] = v
        if case.call is not None:
            return case.call(xp, *args)
        return fn(*args, **case.kwargs)
    return f


def _evaluate(case: Any, f: Callable, tree_map: Callable, vjp: Callable, jvp: Callable
              ) -> tuple:
    """(outputs, VJP, JVP) of ``f`` at the case's arguments; the derivatives only where
    there are differentiated arguments and every output is inexact (else None)."""
    primals = [case.args[i] for i in _differentiated(case)]
    out = f(*primals)
    leaves = _tree_leaves(out)
    if not primals or not all(hasattr(o, "dtype") and np.dtype(o.dtype).kind in "fc"
                              for o in leaves):
        return out, None, None
    cotangents = tree_map(lambda o: _probe(np.shape(o), np.dtype(o.dtype), 0.0), out)
    pulled = vjp(f, *primals)[1](cotangents)
    tangents = [_probe(p.shape, p.dtype, 0.25) for p in primals]
    return out, list(pulled), jvp(f, tuple(primals), tuple(tangents))[1]


def _tree_leaves(out: Any) -> list:
    return list(out) if isinstance(out, (tuple, list)) else [out]


def _as_result(evaluated: tuple) -> dict:
    out, pulled, pushed = evaluated
    result = {"out": _leaves(out)}
    if pulled is not None:
        result["vjp"] = [np.asarray(g) for g in pulled]
        result["jvp"] = _leaves(pushed)
    return result


def run_funcgrad(name: str, case: Any) -> dict:
    """What ``case`` gives with funcgrad: outputs, VJP and JVP (values only for the
    REFERENCE names, as numpy's), or what it raised."""
    f = _bound(case, _function(FUNCGRAD, name), fnp)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        try:
            if name in REFERENCE:
                return {"out": _leaves(f(*[case.args[i] for i in _differentiated(case)]))}
            return _as_result(_evaluate(case, f, tree_util.tree_map, funcgrad.vjp,
                                        funcgrad.jvp))
        except Exception as e:  # noqa: BLE001 - whether it raised is compared
            return {"raised": type(e).__name__}


def _traced(name: str, case: Any) -> Any:
    """The JAX program of ``case`` (outputs, VJP, JVP) as a closed jaxpr with its output
    tree, traced once; or what tracing raised (JAX raises there for bad arguments)."""
    f = _bound(case, _function(JAX, JAX_NAMES.get(name, name)), jnp)
    try:
        closed, shape = jax.make_jaxpr(lambda: _evaluate(
            case, f, jax.tree_util.tree_map, jax.vjp, jax.jvp), return_shape=True)()
    except Exception as e:  # noqa: BLE001 - whether it raised is compared
        return {"raised": type(e).__name__}
    return closed, jax.tree_util.tree_structure(shape)


def _run_eagerly(name: str, case: Any, namespaces: dict, derivatives: bool) -> dict:
    """A case whose output is not an array (a shape, a dtype), or a name JAX lacks (run
    with numpy's or scipy's function: values only)."""
    f = _bound(case, _function(namespaces, JAX_NAMES.get(name, name)), namespaces[""])
    try:
        if not derivatives:
            return {"out": _leaves(f(*[case.args[i] for i in _differentiated(case)]))}
        return _as_result(_evaluate(case, f, jax.tree_util.tree_map, jax.vjp, jax.jvp))
    except Exception as e:  # noqa: BLE001
        return {"raised": type(e).__name__}


def run_jax(names: list) -> dict:
    """What each case of ``names`` gives with JAX, by name. The cases of all the names run
    as one jitted program of their traced jaxprs: compiling is what JAX's time goes to
    here, and one compilation of many small programs costs much less than one per name
    (if that program fails to compile, each case is compiled on its own)."""
    results = {n: [None] * len(TABLE[n]) for n in names}
    programs = []  # (name, index, closed jaxpr, output tree)
    for name in names:
        for i, case in enumerate(TABLE[name]):
            if name in REFERENCE or case.eager:
                results[name][i] = _run_eagerly(name, case, NUMPY if name in REFERENCE
                                                else JAX, name not in REFERENCE)
                continue
            traced = _traced(name, case)
            if isinstance(traced, dict):
                results[name][i] = traced
            else:
                programs.append((name, i) + traced)
    try:
        together = jax.jit(lambda: [jaxpr_as_fun(p[2])() for p in programs])()
    except Exception:  # noqa: BLE001 - isolate the case that does not compile
        together = [_compiled_alone(p[2]) for p in programs]
    for (name, i, _, tree), flat in zip(programs, together):
        results[name][i] = flat if isinstance(flat, dict) else _as_result(
            jax.tree_util.tree_unflatten(tree, flat))
    return results


def _compiled_alone(closed: Any) -> Any:
    try:
        return jax.jit(jaxpr_as_fun(closed))()
    except Exception as e:  # noqa: BLE001
        return {"raised": type(e).__name__}


_GROUP = 40  # names per compiled program (a test run for one name compiles its group)
_NAMES = sorted(TABLE)


@functools.lru_cache(maxsize=None)
def _group_results(group: int) -> dict:
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        return run_jax(_NAMES[group * _GROUP:(group + 1) * _GROUP])


def _leaves(out: Any) -> list:
    if isinstance(out, (tuple, list)):
        return [leaf for o in out for leaf in _leaves(o)]
    if hasattr(out, "shape") and hasattr(out, "dtype"):
        return [np.asarray(out)]
    return [out]


def _is_inexact_leaf(o: Any) -> bool:
    return isinstance(o, np.ndarray) and o.dtype.kind in "fc"


def _close(actual: Any, expected: Any, what: str) -> None:
    if not isinstance(expected, np.ndarray):
        assert actual == expected, what
        return
    assert isinstance(actual, np.ndarray), what
    assert actual.shape == expected.shape, f"shape {actual.shape} != {expected.shape}: {what}"
    np.testing.assert_allclose(actual, expected, rtol=1e-9, atol=1e-12, equal_nan=True,
                               err_msg=what)


def compare(name: str, case: Any, expected: dict) -> None:
    """funcgrad's result of ``case`` against JAX's (``expected``)."""
    skip = set(case.differs[0]) if case.differs else set()
    actual = run_funcgrad(name, case)
    where = f"{name} args={[getattr(a, 'shape', a) for a in case.args]} {case.kwargs}"
    if "raised" in skip:
        return
    assert ("raised" in actual) == ("raised" in expected), \
        f"raised {actual.get('raised')} where JAX raised {expected.get('raised')}: {where}"
    if "raised" in expected:
        return
    assert len(actual["out"]) == len(expected["out"]), f"number of outputs: {where}"
    for got, want in zip(actual["out"], expected["out"]):
        if isinstance(want, np.ndarray) and "dtype" not in skip:
            assert isinstance(got, np.ndarray) and got.dtype == want.dtype, \
                f"dtype {getattr(got, 'dtype', type(got))} != {want.dtype}: {where}"
        if "values" not in skip:
            _close(got, want, f"values: {where}")
    for mode in ("vjp", "jvp"):
        if mode in skip or mode not in expected:
            continue
        assert mode in actual, f"{mode} missing: {where}"
        for got, want in zip(actual[mode], expected[mode]):
            _close(got, want, f"{mode}: {where}")


@pytest.mark.parametrize("alias", sorted(ALIASES))
def test_aliases_are_the_functions_they_name(alias):
    """An alias is compared through the name it stands for, in both libraries."""
    target = ALIASES[alias]
    mine, theirs = _function(FUNCGRAD, alias), _function(FUNCGRAD, target)
    # the same function, or both `as_function` of the same primitive
    assert getattr(mine, "primitive", mine) is getattr(theirs, "primitive", theirs)
    jax_alias = _function(JAX, JAX_NAMES.get(alias, alias))
    case = TABLE[target][0]
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        np.testing.assert_array_equal(np.asarray(jax_alias(*case.args, **case.kwargs)), np.asarray(
            _function(JAX, JAX_NAMES.get(target, target))(*case.args, **case.kwargs)))


@pytest.mark.parametrize("name", _NAMES)
def test_numpy_matches_jax(name):
    """Against jax.numpy, or numpy/scipy for the REFERENCE names (values only)."""
    expected = _group_results(_NAMES.index(name) // _GROUP)[name]
    for case, want in zip(TABLE[name], expected):
        compare(name, case, want)


def _public(module: Any) -> set:
    """The functions a module exports (its ``__all__``, or its public names)."""
    names = getattr(module, "__all__", None) or [n for n in dir(module)
                                                  if not n.startswith("_")]
    return {n for n in names if callable(getattr(module, n))
            and not isinstance(getattr(module, n), (type, types.ModuleType))}


def test_every_numpy_name_is_in_the_table():
    """A public function without cases (or a reason in NOT_COMPARED) is untested."""
    names = _public(fnp) | {"linalg." + n for n in _public(fnp.linalg)}
    names |= {"fft." + n for n in _public(fnp.fft)} | {"special." + n for n in fss.__all__}
    covered = set(TABLE) | set(NOT_COMPARED) | set(ALIASES)
    missing = sorted(n for n in names if n not in covered)
    assert not missing, f"funcgrad.numpy names with no cases against jax.numpy: {missing}"
    stale = sorted(k for k in covered if k not in names)
    assert not stale, f"table entries for names funcgrad does not have: {stale}"
