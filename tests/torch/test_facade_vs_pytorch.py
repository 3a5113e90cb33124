"""The facade against real PyTorch, op by op: every public function of funcgrad.torch,
every Tensor method, torch.nn.functional and torch.linalg, over a table of inputs with the
edge values where conventions bite (0, ties, NaN, inf, negatives, empty tensors, 0-d
tensors, broadcasting, integer and bool dtypes, type promotion).

For each case both libraries run the same call; the test compares what raised (the
exception type, and the message of PyTorch's own errors), the outputs (dtype, shape, values
with NaN in the same places), the ``grad_fn`` names and, after ``torch.autograd.backward``
with the same cotangents, every input's ``.grad``. Ops with an in-place form are also run
in place on a non-leaf copy.

The cases are in facade_table.py, facade_table_nn.py and facade_table_more.py, keyed by
name and checked against the facade's public surface: a name added to funcgrad.torch, Tensor, nn.functional or
linalg without a table entry (or an entry in `NOT_COMPARED`, which says why) fails
`test_every_facade_name_is_in_the_table`.
"""
from __future__ import annotations

import importlib.util
import pathlib
import sys
import warnings
from typing import Any, Callable

import numpy as np
import pytest

torch = pytest.importorskip("torch")
if not hasattr(torch, "tensor"):  # the tests/torch folder itself, seen as a namespace
    pytest.skip("PyTorch is not installed", allow_module_level=True)

import funcgrad.torch as fg  # noqa: E402
import funcgrad.torch.nn.functional as fg_F  # noqa: E402


def _load_tables() -> tuple:
    """facade_table.py, facade_table_nn.py and facade_table_more.py beside this file
    (tests/ is not a package: the first is registered as the module ``facade_table`` the
    others import from)."""
    modules = []
    for file in ("facade_table.py", "facade_table_nn.py", "facade_table_more.py"):
        path = pathlib.Path(__file__).with_name(file)
        spec = importlib.util.spec_from_file_location(path.stem, path)
        module = importlib.util.module_from_spec(spec)
        sys.modules[path.stem] = module
        spec.loader.exec_module(module)
        modules.append(module)
    return tuple(modules)


def _merged(modules: tuple, attribute: str) -> dict:
    merged: dict = {}
    for module in modules:
        part = getattr(module, attribute)
        twice = sorted(set(merged) & set(part))
        assert not twice, f"{attribute} entries in two tables: {twice}"
        merged.update(part)
    return merged


_tables = _load_tables()
Case, DT, Const = _tables[0].Case, _tables[0].DT, _tables[0].Const
TABLE, NOT_COMPARED = _merged(_tables, "TABLE"), _merged(_tables, "NOT_COMPARED")


# -- running one case in one library -------------------------------------------------------

Surface = tuple  # (kind, name): kind in function, method, inplace, F, linalg, special


def surfaces(key: str) -> list:
    """Where the facade offers ``key``: as a function, a Tensor method, in place."""
    for prefix in ("F.", "linalg.", "special."):
        if key.startswith(prefix):
            return [(prefix[:-1], key[len(prefix):])]
    if key.startswith("Tensor."):
        return [("method", key[len("Tensor."):])]
    found = [("function", key)] if callable(getattr(fg, key, None)) else []
    if callable(getattr(fg.Tensor, key, None)) and key != "where":
        found.append(("method", key))
    if callable(getattr(fg.Tensor, key + "_", None)):
        found.append(("inplace", key + "_"))
    return found


def _resolve(T: Any, surface: Surface) -> Callable:
    kind, name = surface
    if kind == "function":
        return getattr(T, name)
    if kind == "F":
        return getattr(T.nn.functional, name)
    if kind in ("linalg", "special"):
        return getattr(getattr(T, kind), name)
    return lambda x, *args, **kwargs: getattr(x, name)(*args, **kwargs)


def _tensor(T: Any, value: Any, grad: bool) -> Any:
    if isinstance(value, DT):
        return getattr(T, value.name)
    if isinstance(value, Const):
        return T.from_numpy(value.value.copy())
    if not isinstance(value, np.ndarray):
        return value
    t = T.from_numpy(value.copy())
    return t.requires_grad_() if grad and value.dtype.kind in "fc" else t


def run(T: Any, case: Case, surface: Surface | None) -> dict:
    """What ``case`` gives in library ``T``: its outputs, node names and gradients, or the
    type of what it raised."""
    leaves = [_tensor(T, v, case.grad) for v in case.args]
    kwargs = {k: _tensor(T, v, case.grad) for k, v in case.kwargs.items()}
    args = list(leaves)
    if surface is not None and surface[0] == "inplace":
        args[0] = args[0] * 1 if args[0].requires_grad else args[0].clone()
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        try:
            if case.call is not None:
                out = case.call(T, *args, **kwargs)
            else:
                out = _resolve(T, surface)(*args, **kwargs)
                if surface[0] == "inplace":
                    out = (out, out is args[0])
        except Exception as e:  # noqa: BLE001 - the type and text are what is compared
            return {"raised": type(e).__name__, "message": str(e)}
        result = {"out": [_leaf(T, o) for o in _flat(T, out)]}
        tensors = [o for o in _flat(T, out) if isinstance(o, T.Tensor) and o.requires_grad]
        if case.grad and tensors:
            try:
                T.autograd.backward(tensors, [T.tensor(_cotangent(o), dtype=o.dtype)
                                              for o in tensors])
            except Exception as e:  # noqa: BLE001
                return dict(result, backward_raised=type(e).__name__)
            result["grads"] = [None if t.grad is None else getattr(
                t.grad, "resolve_conj", lambda g=t.grad: g)().numpy()
                               for t in leaves + list(kwargs.values())
                               if isinstance(t, T.Tensor) and t.requires_grad]
    return result


def _flat(T: Any, out: Any) -> list:
    if isinstance(out, (tuple, list)) and not isinstance(out, (T.Size,)):
        return [leaf for o in out for leaf in _flat(T, o)]
    return [out]


def _leaf(T: Any, o: Any) -> Any:
    if isinstance(o, T.Tensor):
        name = o.grad_fn.name() if o.grad_fn is not None else None
        values = o.detach()
        if values.dtype == T.bfloat16:  # numpy has no bfloat16 (PyTorch's .numpy() refuses)
            values = values.float()
        values = getattr(values, "resolve_conj", lambda: values)().numpy()
        return ("tensor", str(o.dtype), tuple(o.shape), values, name, o.requires_grad)
    if isinstance(o, T.dtype):
        return ("dtype", str(o))
    if isinstance(o, T.Size):
        return ("size", tuple(o))
    if isinstance(o, np.ndarray):
        return ("ndarray", str(o.dtype), o.shape, o, None, False)
    return ("value", o)


def _cotangent(o: Any) -> np.ndarray:
    """Distinct cotangent values, so that a gradient sent to the wrong element shows."""
    n = o.numel()
    values = np.linspace(0.5, 1.5, n) if n > 1 else np.ones(n)
    return values.reshape(tuple(o.shape)).astype(np.complex128 if o.is_complex() else
                                                 np.float64)


def _close(actual: np.ndarray, expected: np.ndarray, what: str, low: bool) -> None:
    """Values equal to float32 precision if anything in the case is float32 (PyTorch
    rounds intermediate results of mixed-precision ops in float32), else to float64."""
    low = low or expected.dtype in (np.float32, np.complex64)
    np.testing.assert_allclose(actual, expected, rtol=3e-5 if low else 1e-9,
                               atol=1e-6 if low else 1e-12, equal_nan=True, err_msg=what)


def _low_precision(case: Case) -> bool:
    return any((isinstance(x, np.ndarray) and x.dtype in (np.float32, np.complex64))
               or (isinstance(x, DT) and x.name == "float32")
               for x in case.args + tuple(case.kwargs.values()))


def _skipped(case: Case, surface: Surface | None) -> set:
    """The aspects `known` excludes for this case on this surface."""
    if not case.differs:
        return set()
    kind = surface[0] if surface else None
    return {w.split(":")[-1] for w in case.differs[0]
            if ":" not in w or w.split(":")[0] == kind}


def compare(case: Case, surface: Surface | None) -> None:
    expected, actual = run(torch, case, surface), run(fg, case, surface)
    skip = _skipped(case, surface)
    where = f"{surface} {case.label or ''} args={[getattr(x, 'shape', x) for x in case.args]}"
    assert actual.get("raised") == expected.get("raised"), \
        f"raised {actual.get('raised')} where PyTorch raised {expected.get('raised')}: {where}"
    if "raised" in expected:
        # the texts of PyTorch's own errors; a TypeError's comes from Python's or PyTorch's
        # argument parser, whose wording differs
        if expected["raised"] != "TypeError" and "message" not in skip:
            assert actual["message"] == expected["message"], f"message: {where}"
        return
    assert len(actual["out"]) == len(expected["out"]), f"number of outputs: {where}"
    low = _low_precision(case)
    for got, want in zip(actual["out"], expected["out"]):
        assert got[0] == want[0], f"output kind {got[0]} != {want[0]}: {where}"
        if want[0] in ("tensor", "ndarray"):
            assert got[1:3] == want[1:3], f"dtype/shape {got[1:3]} != {want[1:3]}: {where}"
            if "values" not in skip:
                _close(got[3], want[3], f"values: {where}", low)
            if "name" not in skip:
                assert got[4:] == want[4:], \
                    f"grad_fn/requires_grad {got[4:]} != {want[4:]}: {where}"
        else:
            assert got == want, f"{got} != {want}: {where}"
    if "backward" in skip:
        return
    assert actual.get("backward_raised") == expected.get("backward_raised"), \
        f"backward raised {actual.get('backward_raised')} where PyTorch's raised " \
        f"{expected.get('backward_raised')}: {where}"
    if "grad" in skip or "grads" not in expected:
        return
    for got, want in zip(actual["grads"], expected["grads"]):
        if want is None or got is None:  # PyTorch leaves None where a gradient is 0
            other = want if got is None else got
            assert other is None or not np.any(other), f"grad None vs nonzero: {where}"
            continue
        _close(got, want, f"gradient: {where}", low)


@pytest.mark.parametrize("key", sorted(TABLE))
def test_facade_matches_pytorch(key):
    for case in TABLE[key]:
        for surface in ([None] if case.call is not None else surfaces(key)):
            compare(case, surface)


def _public(obj: Any) -> set:
    return {n for n in dir(obj) if not n.startswith("_") and callable(getattr(obj, n))
            and not isinstance(getattr(obj, n), type)}


def test_every_facade_name_is_in_the_table():
    """A facade name without a table entry (or a reason in NOT_COMPARED) is untested."""
    import types
    names = {n for n in _public(fg) if not isinstance(getattr(fg, n), types.ModuleType)
             and not isinstance(getattr(fg, n), fg.dtype)}
    names |= {"Tensor." + n for n in _public(fg.Tensor)}
    names |= {"F." + n for n in fg_F.__all__}
    names |= {"linalg." + n for n in fg.linalg.__all__}
    names |= {"special." + n for n in _public(fg.special)}
    covered = set(TABLE) | set(NOT_COMPARED)

    def is_covered(name: str) -> bool:
        bare = name.split(".", 1)[1] if name.startswith("Tensor.") else name
        return (name in covered or bare in covered or bare.rstrip("_") in covered
                or "Tensor." + bare.rstrip("_") in covered)
    missing = sorted(n for n in names if not is_covered(n))
    assert not missing, f"facade names with no differential cases: {missing}"
    stale = sorted(k for k in covered if k not in names and "Tensor." + k not in names
                   and not k.startswith("Tensor.__"))
    assert not stale, f"table entries for names the facade does not have: {stale}"
