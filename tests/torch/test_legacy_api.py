"""PyTorch's older and lower-level names (`funcgrad.torch._legacy_api`) against PyTorch:
values, gradients, node names, warnings and error texts."""
import warnings

import numpy as np
import pytest

import funcgrad.torch as ftorch

torch = pytest.importorskip("torch")
if not hasattr(torch, "tensor"):  # the tests/torch folder itself, seen as a namespace
    pytest.skip("PyTorch is not installed", allow_module_level=True)

BOTH = pytest.mark.parametrize("lib", [ftorch, torch], ids=["funcgrad", "torch"])
RNG = np.random.default_rng(7)
A = RNG.standard_normal((2, 4, 3))
M = RNG.standard_normal((2, 3, 3))
B = RNG.standard_normal((2, 3, 2))
TAU = np.linspace(0.1, 0.9, 6).reshape(2, 3)


def both(fn):
    """fn(lib) on both libraries, as numpy values."""
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        return [_numpy(fn(lib)) for lib in (ftorch, torch)]


def _numpy(x):
    if isinstance(x, tuple):
        return tuple(_numpy(v) for v in x)
    return x.detach().numpy() if hasattr(x, "detach") else x


def _close(pair, atol=1e-12):
    ours, theirs = pair
    if isinstance(ours, tuple):
        assert len(ours) == len(theirs)
        for a, b in zip(ours, theirs):
            _close((a, b), atol)
        return
    np.testing.assert_allclose(ours, theirs, rtol=1e-10, atol=atol)


@pytest.mark.parametrize("values", [A, A[0], A[0] + 1j * A[1]], ids=["batch", "matrix", "complex"])
def test_geqrf_is_lapacks(values):
    _close(both(lambda lib: tuple(lib.geqrf(lib.tensor(values)))), atol=1e-12)


def test_householder_product_orgqr_and_ormqr_with_gradients():
    def run(lib):
        a = lib.tensor(A, requires_grad=True)
        tau = lib.tensor(TAU, requires_grad=True)
        q = lib.linalg.householder_product(a, tau)
        assert type(q.grad_fn).__name__ == "LinalgHouseholderProductBackward0"
        (q ** 2 * lib.arange(3.0, dtype=lib.float64)).sum().backward()
        c = lib.tensor(RNG.standard_normal((2, 4, 2)) * 0 + 1.0)
        products = [lib.ormqr(a, tau, c, left=True, transpose=t) for t in (False, True)]
        products.append(lib.ormqr(a, tau, lib.ones(2, 2, 4, dtype=lib.float64), left=False))
        return (q, a.grad, tau.grad, lib.orgqr(a, tau), *products)
    _close(both(run), atol=1e-12)


@BOTH
def test_householder_product_wants_a_tall_matrix(lib):
    with pytest.raises(RuntimeError, match="input.shape\\[-2\\] must be greater than or equal"):
        lib.linalg.householder_product(lib.ones(2, 3), lib.ones(2))


def test_lu_lu_solve_and_lu_unpack():
    def run(lib):
        lu, pivots = lib.lu(lib.tensor(M))
        P, L, U = lib.lu_unpack(lu, pivots)
        return lu, pivots, P, L, U, lib.lu_solve(lib.tensor(B), lu, pivots)
    _close(both(run))
    for lib in (ftorch, torch):
        assert len(lib.lu(lib.tensor(M), get_infos=True)) == 3
        lu, pivots = lib.linalg.lu_factor(lib.tensor(M))
        P, L, U = lib.lu_unpack(lu, pivots, unpack_data=False)
        assert tuple(L.shape) == (0,) and tuple(P.shape) == (2, 3, 3)


@pytest.mark.parametrize("upper,transpose,unit", [(True, False, False), (False, True, False),
                                                  (True, True, True)])
def test_triangular_solve(upper, transpose, unit):
    """(PyTorch warns once per process that it is deprecated, as the facade does.)"""
    _close(both(lambda lib: tuple(lib.triangular_solve(lib.tensor(B), lib.tensor(M), upper,
                                                       transpose, unit))))


@pytest.mark.parametrize("name", ["eig", "symeig", "matrix_rank", "lstsq", "solve"])
def test_removed_functions_raise_pytorchs_text(name):
    args = (2,) if name in ("lstsq", "solve") else (1,)
    texts = []
    for lib in (ftorch, torch):
        x = lib.ones(3, 3)
        with pytest.raises(RuntimeError) as info:
            getattr(lib, name)(*[x] * args[0])
        texts.append(str(info.value))
    assert texts[0] == texts[1]


@BOTH
def test_dense_tensor_answers_about_sparse_layouts(lib):
    x = lib.ones(2, 3)
    assert x.sparse_dim() == 0 and x.dense_dim() == 2
    for name in ("indices", "values", "coalesce", "crow_indices", "col_indices",
                 "ccol_indices", "row_indices"):
        with pytest.raises(RuntimeError) as info:
            getattr(x, name)()
        assert str(info.value).endswith("layout but got Strided"), name


def test_sparse_accessor_texts_are_pytorchs():
    for name in ("indices", "values", "coalesce", "crow_indices", "ccol_indices"):
        texts = []
        for lib in (ftorch, torch):
            with pytest.raises(RuntimeError) as info:
                getattr(lib.ones(2), name)()
            texts.append(str(info.value))
        assert texts[0] == texts[1]


@BOTH
def test_deprecated_and_storage_methods(lib):
    x = lib.arange(6.0).reshape(2, 3)
    with pytest.warns(UserWarning, match="non-inplace resize is deprecated"):
        assert tuple(x.resize(6).shape) == (6,)
    with pytest.warns(UserWarning, match="volatile was removed"):
        assert x.volatile is False
    with pytest.raises(RuntimeError, match="^reinforce\\(\\) was removed"):
        x.reinforce(1.0)
    with pytest.raises(RuntimeError, match="autograd's resize can only change the shape"):
        with pytest.warns(UserWarning):
            x.resize(5)
    assert x.const_data_ptr() == x.data_ptr() and x.share_memory_() is x
    assert x.grad_dtype == x.dtype and x.name is None
    with pytest.raises(RuntimeError, match="Cannot access accelerator device when none"):
        x.pin_memory()
    assert lib.is_storage(x.untyped_storage()) and not lib.is_storage(x)
    assert isinstance(x.untyped_storage(), lib.UntypedStorage)


def test_copies_scatter_and_fills():
    _close(both(lambda lib: (lib.narrow_copy(lib.arange(12.0).reshape(3, 4), 1, 1, 2),
                             lib.slice_copy(lib.arange(6.0), 0, 1, 5, 2),
                             lib.as_strided_scatter(lib.zeros(6), lib.ones(2), (2,), (2,)))))
    for lib in (ftorch, torch):
        s = lib.zeros(2).new_empty_strided((2, 2), (1, 2))
        assert tuple(s.shape) == (2, 2) and s.stride() == (1, 2) and s.dtype == lib.float32
    x = ftorch.zeros(1000, dtype=ftorch.float64)
    assert np.all(x.geometric_(0.3).numpy() >= 1) and np.all(x.log_normal_().numpy() > 0)
    assert np.median(x.cauchy_(median=2.0, sigma=0.5).numpy()) == pytest.approx(2.0, abs=0.2)


def test_in_place_incomplete_gamma_and_products():
    def run(lib):
        x = lib.tensor([1.5, 2.0], dtype=lib.float64)
        y = lib.tensor([1.5, 2.0], dtype=lib.float64)
        z = lib.tensor([0.5, 2.0], dtype=lib.float64)
        x.igamma_(lib.tensor([1.0, 2.0], dtype=lib.float64))
        y.igammac_(lib.tensor([1.0, 2.0], dtype=lib.float64))
        z.ldexp_(lib.tensor([1.0, 3.0], dtype=lib.float64))
        m = lib.zeros(3, 2, dtype=lib.float64)
        m.addbmm_(lib.ones(4, 3, 5, dtype=lib.float64), lib.ones(4, 5, 2, dtype=lib.float64))
        r = lib.zeros(3, 2, dtype=lib.float64)
        r.addr_(lib.arange(3.0, dtype=lib.float64), lib.arange(2.0, dtype=lib.float64))
        return x, y, z, m, r
    _close(both(run))
    for lib in (ftorch, torch):
        with pytest.raises(RuntimeError, match="^ldexp can't be cast to the desired output "
                                               "type Long$"):
            lib.zeros(3, dtype=lib.long).ldexp_(lib.ones(3))
        with pytest.raises(RuntimeError, match="^size mismatch, input: \\[3, 2\\], v1: "
                                               "\\[2\\], v2: \\[3\\]$"):
            lib.zeros(3, 2).addr_(lib.ones(2), lib.ones(3))
        with pytest.raises(RuntimeError, match="^2D tensor expected, got 1D tensor for input$"):
            lib.zeros(3).addr_(lib.ones(2), lib.ones(3))
        grown = lib.ones(3, dtype=lib.float64)
        grown.addbmm_(lib.ones(5, 2, 4, dtype=lib.float64), lib.ones(5, 4, 3, dtype=lib.float64))
        assert tuple(grown.shape) == (2, 3) and float(grown.sum()) == 6 * 21


@BOTH
def test_module_load_copies_or_assigns(lib):
    param = lib.zeros(3, requires_grad=True)
    other = lib.ones(3)
    with pytest.raises(RuntimeError, match="a leaf Variable that requires grad"):
        param.module_load(other)  # load_state_dict calls it under no_grad
    with lib.no_grad():
        loaded = param.module_load(other)
    assert loaded.tolist() == [1.0, 1.0, 1.0] and param.tolist() == [1.0, 1.0, 1.0]
    assert not loaded.requires_grad
    assigned = param.module_load(lib.full((3,), 2.0, requires_grad=True), assign=True)
    assert assigned.tolist() == [2.0, 2.0, 2.0] and assigned.grad_fn is None
