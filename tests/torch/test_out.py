"""``out=`` against PyTorch: values, dtypes, the returned object, versions, resizing with
PyTorch's warning, and PyTorch's errors (autograd, casts)."""
import warnings

import numpy as np
import pytest

import funcgrad.torch as ftorch

torch = pytest.importorskip("torch")

# (function name, arguments as numpy, out shapes, out dtypes)
CASES = [
    ("add", lambda m: (m.ones(2, 3), m.full((2, 3), 2.0)), [(2, 3)], ["float32"]),
    ("mul", lambda m: (m.ones(2, 3), 3.0), [(2, 3)], ["float64"]),
    ("tanh", lambda m: (m.linspace(-1, 1, 5),), [(5,)], ["float32"]),
    ("sum", lambda m: (m.arange(6.0).reshape(2, 3), 1), [(0,)], ["float32"]),
    ("matmul", lambda m: (m.ones(2, 3), m.ones(3, 4)), [(2, 4)], ["float32"]),
    ("cat", lambda m: ([m.ones(2), m.zeros(3)],), [(5,)], ["float32"]),
    ("stack", lambda m: ([m.ones(2), m.zeros(2)],), [(2, 2)], ["float32"]),
    ("zeros", lambda m: (3,), [(3,)], ["float32"]),
    ("arange", lambda m: (5,), [(5,)], ["int64"]),
    ("max", lambda m: (m.tensor([[1.0, 5.0], [7.0, 2.0]]), 1), [(2,), (2,)],
     ["float32", "int64"]),
    ("sort", lambda m: (m.tensor([3.0, 1.0, 2.0]),), [(3,), (3,)], ["float32", "int64"]),
]


def _run(m, name, make_args, shapes, dtypes):
    outs = [m.empty(s, dtype=getattr(m, d)) for s, d in zip(shapes, dtypes)]
    out = outs[0] if len(outs) == 1 else tuple(outs)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        got = getattr(m, name)(*make_args(m), out=out)
    results = got if isinstance(got, tuple) else (got,)
    return ([np.asarray(o.numpy()) for o in outs], [r is o for r, o in zip(results, outs)],
            [o._version > 0 for o in outs])


@pytest.mark.parametrize("case", CASES, ids=[c[0] for c in CASES])
def test_out_matches_pytorch(case):
    name, make_args, shapes, dtypes = case
    got, same, bumped = _run(ftorch, name, make_args, shapes, dtypes)
    want, want_same, want_bumped = _run(torch, name, make_args, shapes, dtypes)
    for g, w in zip(got, want):
        assert g.dtype == w.dtype and g.shape == w.shape
        np.testing.assert_allclose(g, w, rtol=1e-6)
    assert same == want_same
    assert bumped == want_bumped


@pytest.mark.parametrize("m", [ftorch, torch], ids=["funcgrad", "torch"])
def test_out_errors_and_warning_as_pytorch(m):
    a = m.ones(2, requires_grad=True)
    with pytest.raises(RuntimeError, match=r"^add\(\): functions with out=\.\.\. arguments "
                       r"don't support automatic differentiation, but one of the "
                       r"arguments requires grad\.$"):
        m.add(a, 1, out=m.empty(2))
    with pytest.raises(RuntimeError, match="requires grad"):
        m.add(m.ones(2), 1, out=m.empty(2, requires_grad=True))
    with pytest.raises(RuntimeError, match="^result type Float can't be cast to the desired "
                       "output type Long$"):
        m.add(m.ones(2), 1.5, out=m.empty(2, dtype=m.long))
    with pytest.warns(UserWarning, match=r"An output with one or more elements was resized "
                      r"since it had shape \[3\], which does not match the required output "
                      r"shape \[2\]"):
        resized = m.add(m.ones(2), 1, out=m.empty(3))
    assert list(resized.shape) == [2]
    with m.no_grad():  # without grad mode the inputs may require grad
        assert m.add(a, 1, out=m.empty(2)).tolist() == [2.0, 2.0]
    with pytest.raises(TypeError, match="out"):
        m.ones(2).add(1, out=m.empty(2))  # methods take no out=
