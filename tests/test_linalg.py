"""Linear algebra: funcgrad.numpy's products and diagonals and funcgrad.numpy.linalg.

Forward values against numpy (batches, broadcasting, vectors, complex), derivatives of the
derived functions by finite differences, the JAX conventions (symmetrised inputs, the
full_matrices error), float32 preservation and error messages. The primitives' own rules
are checked by tests/test_registry_grads.py through their samplers.
"""
import numpy as np
import pytest
from hypothesis import given, strategies as st
from hypothesis.extra import numpy as hnp

import funcgrad
import funcgrad.numpy as fnp
from funcgrad.test_util import check_grads

LA = fnp.linalg
RNG = np.random.RandomState(0)


def rand(*shape, complex_=False):
    x = RNG.standard_normal(shape)
    return x + 1j * RNG.standard_normal(shape) if complex_ else x


def square(*shape, complex_=False):
    """Well-conditioned square matrices."""
    return rand(*shape, complex_=complex_) + 3 * shape[-1] * np.eye(shape[-1])


def hermitian(*shape, complex_=False):
    """Hermitian positive definite matrices with well-separated eigenvalues."""
    q, _ = np.linalg.qr(rand(*shape, complex_=complex_))
    w = 1.0 + 2.0 * np.arange(shape[-1])
    return (q * w) @ np.conj(np.swapaxes(q, -1, -2))


def separated(*shape, complex_=False):
    """Matrices with singular values 1, 2.5, 4, ... (distinct and well apart)."""
    *batch, m, n = shape
    k = min(m, n)
    u, _ = np.linalg.qr(rand(*batch, m, k, complex_=complex_))
    v, _ = np.linalg.qr(rand(*batch, n, k, complex_=complex_))
    return (u * (1.0 + 1.5 * np.arange(k))) @ np.conj(np.swapaxes(v, -1, -2))


def close(actual, expected, rtol=1e-7, atol=1e-9):
    actual = np.asarray(actual)
    assert actual.shape == np.shape(expected)
    np.testing.assert_allclose(actual, expected, rtol=rtol, atol=atol)


def grads(f, *args, order=2):
    check_grads(f, args, order=order, modes=("fwd", "rev"))


# -- products ------------------------------------------------------------------------------

@given(data=st.data())
def test_matmul_matches_numpy_with_vectors_and_broadcasting(data):
    n, k, m = (data.draw(st.integers(0, 3)) for _ in range(3))
    bx, by = data.draw(hnp.mutually_broadcastable_shapes(
        num_shapes=2, max_dims=2, max_side=3)).input_shapes
    xs = (k,) if data.draw(st.booleans()) else (*bx, n, k)
    ys = (k,) if data.draw(st.booleans()) else (*by, k, m)
    x, y = rand(*xs), rand(*ys, complex_=data.draw(st.booleans()))
    close(fnp.matmul(x, y), np.matmul(x, y))
    close(fnp.asarray(x) @ y, x @ y)
    close(x @ fnp.asarray(y), x @ y)


@pytest.mark.parametrize("xs, ys", [((3,), (3,)), ((2, 3), (3,)), ((3,), (3, 4)),
                                    ((2, 1, 2, 3), (4, 3, 2)), ((3,), (2, 3, 4))])
def test_matmul_gradients(xs, ys):
    grads(fnp.matmul, rand(*xs), rand(*ys))
    grads(fnp.matmul, rand(*xs, complex_=True), rand(*ys))


def test_matmul_gradient_of_a_transposed_weight_is_row_major():
    """``x @ w.T`` (a linear layer on a PyTorch-layout weight): w's gradient comes back in
    w's own row-major layout, so that ``w - lr * grad`` is not a mixed-layout loop."""
    rng = np.random.RandomState(1)  # its own stream: the shared RNG feeds the tests below
    x, w = rng.standard_normal((5, 4)), rng.standard_normal((3, 4))
    g = funcgrad.grad(lambda w: fnp.sum(fnp.sin(x @ w.T)))(w)
    assert np.asarray(g).flags.c_contiguous
    np.testing.assert_allclose(np.asarray(g), (np.cos(x @ w.T)).T @ x, rtol=1e-12)
    g = funcgrad.grad(lambda w: fnp.sum(fnp.sin(x @ w)))(w.T.copy())  # a row-major operand
    assert np.asarray(g).flags.c_contiguous


def test_addmm_adds_in_place_only_where_that_is_the_same():
    """addmm adds ``c`` into its fresh product when ``c`` broadcasts to it and keeps its
    dtype: bit for bit ``c + x @ y``, never writing into an input; otherwise numpy's add
    (promotion, or add's own broadcast error)."""
    from funcgrad.primitives.linalg import addmm
    rng = np.random.RandomState(2)
    x, y = rng.standard_normal((4, 3)).astype(np.float32), rng.standard_normal((3, 5))
    y = y.astype(np.float32)
    for c in (rng.standard_normal(5).astype(np.float32), np.float32(2.0), 1.5,
              rng.standard_normal((4, 1)).astype(np.float32)):
        before = np.array(c)
        out = np.asarray(addmm(c, x, y))
        np.testing.assert_array_equal(out, c + x @ y)
        assert out.dtype == np.float32
        np.testing.assert_array_equal(np.asarray(c), before)
    wide = rng.standard_normal(5)  # float64: the result widens, as c + x @ y does
    assert np.asarray(addmm(wide, x, y)).dtype == np.float64
    np.testing.assert_allclose(np.asarray(addmm(wide, x, y)), wide + x @ y, rtol=1e-6)
    assert np.asarray(addmm(np.ones((2, 4, 5), np.float32), x, y)).shape == (2, 4, 5)
    with pytest.raises(ValueError, match="broadcast"):
        addmm(np.ones(3, np.float32), x, y)


def test_matmul_error_names_both_shapes():
    with pytest.raises(TypeError, match=r"\(2, 3\) and \(4, 5\)"):  # (JAX's type)
        fnp.matmul(np.ones((2, 3)), np.ones((4, 5)))
    with pytest.raises(ValueError, match="batch dimensions"):
        fnp.matmul(np.ones((2, 2, 3)), np.ones((3, 3, 4)))
    with pytest.raises(ValueError, match="0-d"):
        fnp.matmul(2.0, np.ones(3))


PRODUCTS = [
    ("dot nd", lambda m, a, b: m.dot(a, b), (rand(2, 3, 4), rand(3, 4, 2))),
    ("dot matrix-vector", lambda m, a, b: m.dot(a, b), (rand(2, 3), rand(3))),
    ("dot vector-nd", lambda m, a, b: m.dot(a, b), (rand(3), rand(2, 3, 4))),
    ("dot scalar", lambda m, a, b: m.dot(a, b), (np.float64(1.5), rand(2, 3))),
    ("vdot", lambda m, a, b: m.vdot(a, b), (rand(2, 3, complex_=True), rand(3, 2))),
    ("inner", lambda m, a, b: m.inner(a, b), (rand(2, 3), rand(4, 3))),
    ("inner vectors", lambda m, a, b: m.inner(a, b), (rand(3), rand(3))),
    ("outer", lambda m, a, b: m.outer(a, b), (rand(2, 2), rand(3))),
    ("tensordot int", lambda m, a, b: m.tensordot(a, b, 2), (rand(2, 3, 4), rand(3, 4, 2))),
    ("tensordot 0", lambda m, a, b: m.tensordot(a, b, 0), (rand(2), rand(3))),
    ("tensordot lists", lambda m, a, b: m.tensordot(a, b, ([0, 2], [2, 0])),
     (rand(2, 3, 4), rand(4, 5, 2))),
    ("kron", lambda m, a, b: m.kron(a, b), (rand(2, 3), rand(2, 2))),
    ("kron mixed ndim", lambda m, a, b: m.kron(a, b), (rand(3), rand(2, 2, 2))),
    ("einsum batch", lambda m, a, b: m.einsum("bij,bjk->bik", a, b),
     (rand(2, 2, 3), rand(1, 3, 2))),
]


@pytest.mark.parametrize("name, f, args", PRODUCTS, ids=[p[0] for p in PRODUCTS])
def test_products_match_numpy_and_differentiate(name, f, args):
    close(f(fnp, *args), f(np, *args))
    grads(lambda *xs: f(fnp, *xs), *args)


EINSUMS = [("ij,jk->ik", [(2, 3), (3, 4)]), ("ij,jk", [(2, 3), (3, 4)]),
           ("ii", [(3, 3)]), ("ii->i", [(3, 3)]), ("ij->", [(2, 3)]), ("ba", [(2, 3)]),
           ("...ij,...jk->...ik", [(2, 2, 3), (3, 2)]), ("i...,i...", [(2, 3), (2, 1)]),
           ("...ii->...i", [(2, 3, 3)]), ("ij,kj,k", [(2, 3), (4, 3), (4,)]),
           ("iij,jk->ik", [(2, 2, 3), (3, 2)]), ("i,j,k->ijk", [(2,), (3,), (1,)]),
           ("ab,ab->", [(0, 3), (0, 3)]), ("ij , jk -> ki", [(2, 3), (3, 2)])]


@pytest.mark.parametrize("subscripts, shapes", EINSUMS, ids=[e[0] for e in EINSUMS])
def test_einsum_matches_numpy_and_differentiates(subscripts, shapes):
    args = [rand(*s) for s in shapes]
    close(fnp.einsum(subscripts, *args), np.einsum(subscripts, *args))
    grads(lambda *xs: fnp.einsum(subscripts, *xs), *args)


def test_einsum_interleaved_form_and_complex():
    a, b = rand(2, 3, complex_=True), rand(3, 4, complex_=True)
    close(fnp.einsum(a, [0, 1], b, [1, 2], [2, 0]), np.einsum(a, [0, 1], b, [1, 2], [2, 0]))
    close(fnp.einsum(a, [Ellipsis, 1], b, [1, 2]), np.einsum(a, [Ellipsis, 1], b, [1, 2]))
    grads(lambda x, y: fnp.einsum("ij,jk->ki", x, y), a, b)


def test_einsum_errors():
    with pytest.raises(ValueError, match="2 operands but 1"):
        fnp.einsum("ij,jk->ik", np.ones((2, 2)))
    with pytest.raises(ValueError, match="operand 0 has 2 axes"):
        fnp.einsum("ijk->i", np.ones((2, 2)))


# -- diagonals and triangles ---------------------------------------------------------------

DIAGONALS = [
    ("trace", lambda m, a: m.trace(a), (rand(3, 4),)),
    ("trace offset axes", lambda m, a: m.trace(a, -1, 2, 0), (rand(3, 2, 4),)),
    ("diagonal", lambda m, a: m.diagonal(a, 1, 0, 2), (rand(3, 2, 4),)),
    ("diagonal negative axes", lambda m, a: m.diagonal(a, 0, -1, -2), (rand(2, 3, 3),)),
    ("diag embed", lambda m, v: m.diag(v, -2), (rand(3),)),
    ("diag extract", lambda m, a: m.diag(a, 1), (rand(3, 4),)),
    ("diagflat", lambda m, a: m.diagflat(a, 1), (rand(2, 2),)),
    ("tril", lambda m, a: m.tril(a), (rand(2, 3, 4),)),
    ("tril k", lambda m, a: m.tril(a, -1), (rand(4, 3),)),
    ("triu k", lambda m, a: m.triu(a, 2), (rand(2, 3, 5),)),
    ("tril 1-D", lambda m, a: m.tril(a), (rand(3),)),
]


@pytest.mark.parametrize("name, f, args", DIAGONALS, ids=[d[0] for d in DIAGONALS])
def test_diagonals_match_numpy_and_differentiate(name, f, args):
    close(f(fnp, *args), f(np, *args))
    grads(lambda *xs: f(fnp, *xs), *args)


def test_triangles_ignore_infinities_elsewhere():
    a = np.array([[1.0, np.inf], [2.0, 3.0]])
    close(fnp.tril(a), np.tril(a))
    close(funcgrad.grad(lambda x: fnp.sum(fnp.tril(x)))(a), np.tril(np.ones((2, 2))))


def test_array_methods_dot_trace_diagonal():
    a = rand(3, 3)
    x = fnp.asarray(a)
    close(x.dot(a), a.dot(a))
    close(x.trace(offset=1), a.trace(offset=1))
    close(x.diagonal(-1), a.diagonal(-1))


def test_diag_errors():
    with pytest.raises(ValueError, match="1-D or 2-D"):
        fnp.diag(np.ones((2, 2, 2)))
    with pytest.raises(ValueError, match="same axis"):
        fnp.diagonal(np.ones((2, 2)), 0, 1, -1)


# -- solvers ---------------------------------------------------------------------------------

@pytest.mark.parametrize("complex_", [False, True])
def test_solvers_match_numpy(complex_):
    a, b, bs = square(2, 3, 3, complex_=complex_), rand(3), rand(3, 2)
    close(LA.solve(a, b), np.linalg.solve(a, b))
    close(LA.solve(a, bs), np.linalg.solve(a, bs))
    close(LA.inv(a), np.linalg.inv(a))
    close(LA.det(a), np.linalg.det(a))
    sign, logdet = LA.slogdet(a)
    close(sign, np.linalg.slogdet(a).sign)
    close(logdet, np.linalg.slogdet(a).logabsdet)
    assert isinstance(LA.slogdet(a), LA.SlogdetResult)


@pytest.mark.parametrize("a_shape, b_shape", [((3, 3), (3,)), ((2, 3, 3), (3,)),
                                              ((2, 3, 3), (3, 2)), ((3, 3), (2, 3, 1)),
                                              ((0, 2, 2), (2,))])
def test_solve_broadcasts_and_differentiates(a_shape, b_shape):
    a, b = square(*a_shape), rand(*b_shape)
    close(LA.solve(a, b), np.linalg.solve(a, b))
    grads(LA.solve, a, b)


@pytest.mark.parametrize("complex_", [False, True])
def test_solver_gradients(complex_):
    a = square(2, 3, 3, complex_=complex_)
    a = a * np.array([1.0, -1.0])[:, None, None]  # both signs of the determinant
    grads(LA.inv, a)
    grads(LA.det, a)
    grads(lambda x: LA.slogdet(x), a)
    grads(lambda x: LA.matrix_power(x, -2), a)


def test_det_gradient_is_det_times_inverse_transpose():
    a = square(3, 3)
    close(funcgrad.grad(LA.det)(a), np.linalg.det(a) * np.linalg.inv(a).T)


def test_solver_errors_are_clear():
    with pytest.raises(LA.LinAlgError, match=r"square.*\(2, 3\).*pinv"):
        LA.inv(np.ones((2, 3)))
    with pytest.raises(LA.LinAlgError, match="matrix"):
        LA.det(np.ones(3))
    with pytest.raises(ValueError, match=r"b of shape \(3,\) or \(\.\.\., 3, K\)"):
        LA.solve(np.eye(3), np.ones(4))


# -- decompositions ------------------------------------------------------------------------

@pytest.mark.parametrize("complex_", [False, True])
def test_cholesky(complex_):
    a = hermitian(2, 3, 3, complex_=complex_)
    close(LA.cholesky(a), np.linalg.cholesky(a))
    close(LA.cholesky(a, upper=True), np.linalg.cholesky(a, upper=True))
    grads(LA.cholesky, a)
    grads(lambda x: LA.cholesky(x, upper=True, symmetrize_input=False), a)


def test_symmetrised_inputs_give_hermitian_gradients():
    a = hermitian(3, 3)
    g = funcgrad.grad(lambda x: fnp.sum(LA.cholesky(x) * rand(3, 3)))(a)
    close(g, np.asarray(g).T)
    g = funcgrad.grad(lambda x: fnp.sum(LA.eigvalsh(x) ** 3))(a)
    close(g, np.asarray(g).T)
    lower = funcgrad.grad(lambda x: fnp.sum(
        LA.eigvalsh(x, symmetrize_input=False) ** 3))(a)
    close(np.triu(lower, 1), np.zeros((3, 3)))  # numpy's reading: the lower triangle only


@pytest.mark.parametrize("complex_", [False, True])
@pytest.mark.parametrize("uplo", ["L", "U"])
def test_eigh(complex_, uplo):
    a = hermitian(2, 3, 3, complex_=complex_)
    w, v = LA.eigh(a, UPLO=uplo)
    close(w, np.linalg.eigh(a, uplo).eigenvalues)
    close(LA.eigvalsh(a, uplo), np.linalg.eigvalsh(a, uplo))
    close(np.asarray(v) * np.asarray(w)[..., None, :] @ np.conj(np.swapaxes(v, -1, -2)), a)
    weights = np.arange(1.0, 4.0)

    def invariants(x):  # independent of the eigenvectors' signs/phases
        w, v = LA.eigh(x, UPLO=uplo)
        return w, fnp.real(v * fnp.conj(v)), (v * weights) @ fnp.conj(fnp.swapaxes(v, -1, -2))
    grads(invariants, a)


@pytest.mark.parametrize("shape", [(3, 3), (2, 4, 2), (2, 4)])
@pytest.mark.parametrize("complex_", [False, True])
def test_svd(shape, complex_):
    a = separated(*shape, complex_=complex_)
    u, s, vh = LA.svd(a, full_matrices=False)
    close(s, np.linalg.svd(a, compute_uv=False))
    close(LA.svd(a, compute_uv=False), np.linalg.svd(a, compute_uv=False))
    close(LA.svdvals(a), np.linalg.svdvals(a))
    close((np.asarray(u) * np.asarray(s)[..., None, :]) @ np.asarray(vh), a)
    full, expected = LA.svd(a), np.linalg.svd(a)
    assert full.U.shape == expected.U.shape and full.Vh.shape == expected.Vh.shape

    def invariants(x):
        u, s, vh = LA.svd(x, full_matrices=False)
        return s, fnp.real(u * fnp.conj(u)), (u * fnp.arange(1.0, s.shape[-1] + 1)) @ vh
    grads(invariants, a)


def test_svd_full_matrices_gradient_raises_like_jax():
    a = rand(3, 2)
    with pytest.raises(NotImplementedError, match="full_matrices=False"):
        funcgrad.grad(lambda x: fnp.sum(LA.svd(x)[0]))(a)
    square_ = rand(3, 3)  # for square matrices full == reduced: differentiable
    grads(lambda x: LA.svd(x).S, square_)


@pytest.mark.parametrize("shape", [(3, 3), (2, 4, 2), (2, 4), (3, 1)])
@pytest.mark.parametrize("complex_", [False, True])
def test_qr(shape, complex_):
    a = rand(*shape, complex_=complex_) + 3 * np.eye(*shape[-2:])
    q, r = LA.qr(a)
    nq, nr = np.linalg.qr(a)
    close(np.abs(q), np.abs(nq))
    close(np.abs(r), np.abs(nr))
    close(np.asarray(q) @ np.asarray(r), a)
    close(np.abs(LA.qr(a, mode="r")), np.abs(np.linalg.qr(a, mode="r")))
    close(np.abs(LA.qr(a, "complete").Q), np.abs(np.linalg.qr(a, "complete").Q))
    grads(lambda x: tuple(LA.qr(x)), a)


def test_qr_errors():
    with pytest.raises(NotImplementedError, match="mode='reduced'"):
        funcgrad.grad(lambda x: fnp.sum(LA.qr(x, "complete").Q))(rand(3, 2))
    with pytest.raises(ValueError, match="mode"):
        LA.qr(np.eye(2), "raw")


@pytest.mark.parametrize("shape", [(3, 3), (2, 4, 2), (2, 4)])
def test_pinv(shape):
    a = rand(*shape) + 3 * np.eye(*shape[-2:])
    close(LA.pinv(a), np.linalg.pinv(a))
    close(LA.pinv(a, rtol=0.5), np.linalg.pinv(a, rtol=0.5))
    grads(LA.pinv, a)
    grads(LA.pinv, a + 1j * rand(*shape))
    grads(LA.pinv, np.eye(3), order=1)  # repeated singular values are no problem


# -- norms -----------------------------------------------------------------------------------

VECTOR_ORDS = [None, 2, 1, np.inf, -np.inf, 3, 0.5, -1.5]
MATRIX_ORDS = [None, "fro", "nuc", 1, -1, 2, -2, np.inf, -np.inf]


@pytest.mark.parametrize("ord", VECTOR_ORDS + [0])
@pytest.mark.parametrize("axis, keepdims", [(0, False), (-1, True)])
def test_vector_norms(ord, axis, keepdims):
    x = rand(3, 4)
    close(LA.norm(x, ord, axis, keepdims), np.linalg.norm(x, ord, axis, keepdims))
    if ord != 0:
        grads(lambda x: LA.norm(x, ord, axis, keepdims), x)


@pytest.mark.parametrize("ord", MATRIX_ORDS)
@pytest.mark.parametrize("axis, keepdims", [((0, 1), False), ((2, 0), True)])
def test_matrix_norms(ord, axis, keepdims):
    x = rand(3, 4, 2) + 1j * rand(3, 4, 2)
    close(LA.norm(x, ord, axis, keepdims), np.linalg.norm(x, ord, axis, keepdims))
    grads(lambda x: LA.norm(x, ord, axis, keepdims), x, order=1)


def test_norm_defaults_and_array_api_forms():
    x = rand(2, 3, 4)
    close(LA.norm(x), np.linalg.norm(x))
    close(LA.norm(x, keepdims=True), np.linalg.norm(x, keepdims=True))
    close(LA.norm(x[0], 2), np.linalg.norm(x[0], 2))
    close(LA.norm(x[0, 0], 1), np.linalg.norm(x[0, 0], 1))
    close(LA.vector_norm(x, axis=(0, 2), ord=3), np.linalg.vector_norm(x, axis=(0, 2), ord=3))
    close(LA.matrix_norm(x, ord=2), np.linalg.matrix_norm(x, ord=2))
    grads(LA.norm, x)
    close(LA.norm(np.arange(3)), np.linalg.norm(np.arange(3)))  # integers become floats


def test_norm_errors():
    with pytest.raises(ValueError, match="vectors"):
        LA.norm(np.ones(3), "fro")
    with pytest.raises(ValueError, match="matrices"):
        LA.norm(np.ones((2, 2)), 3)
    with pytest.raises(ValueError, match="1-D or 2-D"):
        LA.norm(np.ones((2, 2, 2)), 1)


# -- powers, chains and the array-API names ------------------------------------------------

@pytest.mark.parametrize("n", [0, 1, 2, 3, 5, -1, -3])
def test_matrix_power(n):
    a = square(2, 3, 3) / 5
    close(LA.matrix_power(a, n), np.linalg.matrix_power(a, n))


def test_multi_dot_and_aliases():
    a, b, c, d = rand(3), rand(3, 4), rand(4, 2), rand(2)
    close(LA.multi_dot([a, b, c, d]), np.linalg.multi_dot([a, b, c, d]))
    close(LA.multi_dot([b, c]), np.linalg.multi_dot([b, c]))
    grads(lambda *xs: LA.multi_dot(xs), a, b, c, d)
    x = rand(2, 3, 3, complex_=True)
    close(LA.trace(x, offset=1), np.linalg.trace(x, offset=1))
    close(LA.diagonal(x), np.linalg.diagonal(x))
    close(LA.vecdot(x, x[0]), np.linalg.vecdot(x, x[0]))
    close(LA.outer(a, d), np.linalg.outer(a, d))
    close(LA.matmul(b, c), np.linalg.matmul(b, c))
    with pytest.raises(ValueError, match="1-D"):
        LA.outer(b, d)


# -- dtypes ----------------------------------------------------------------------------------

@pytest.mark.parametrize("f", [
    lambda x: fnp.sum(fnp.matmul(x, x)),
    lambda x: fnp.sum(fnp.einsum("ij,jk->ik", x, x)),
    lambda x: fnp.sum(LA.inv(x)),
    lambda x: LA.det(x),
    lambda x: LA.slogdet(x)[1],
    lambda x: fnp.sum(LA.solve(x, x[0])),
    lambda x: fnp.sum(LA.eigh(x)[0] ** 2),
    lambda x: fnp.sum(LA.cholesky(x)),
    lambda x: fnp.sum(LA.svd(x, full_matrices=False)[1]),
    lambda x: fnp.sum(LA.qr(x)[1] ** 2),
    lambda x: fnp.sum(LA.pinv(x)),
    lambda x: LA.norm(x, "nuc"),
    lambda x: fnp.trace(fnp.tril(x)),
])
def test_float32_stays_float32(f):
    x = hermitian(3, 3).astype(np.float32)
    value, g = funcgrad.value_and_grad(f)(x)
    assert value.dtype == np.float32 and g.dtype == np.float32
