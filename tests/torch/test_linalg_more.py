"""The rest of torch.linalg against PyTorch: values and gradients."""
from __future__ import annotations

import numpy as np
import pytest

import funcgrad.torch as F

RNG = np.random.RandomState(0)
SQUARE = RNG.uniform(-1, 1, (2, 3, 3)) + 3 * np.eye(3)
SPD = SQUARE @ SQUARE.transpose(0, 2, 1)
RHS = RNG.uniform(-1, 1, (2, 3, 2))

PROGRAMS = {
    "solve_triangular lower": lambda m, A, B: m.linalg.solve_triangular(A.tril(), B,
                                                                         upper=False),
    "solve_triangular upper": lambda m, A, B: m.linalg.solve_triangular(A.triu(), B,
                                                                         upper=True),
    "solve_triangular right": lambda m, A, B: m.linalg.solve_triangular(
        A.tril(), B.mT, upper=False, left=False),
    "solve_triangular unit": lambda m, A, B: m.linalg.solve_triangular(
        A.triu(), B, upper=True, unitriangular=True),
    "eigvalsh": lambda m, A, B: m.linalg.eigvalsh(A @ A.mT),
    "eigvalsh U": lambda m, A, B: m.linalg.eigvalsh(A @ A.mT, UPLO="U"),
    "pinv": lambda m, A, B: m.linalg.pinv(A[..., :2]),
    "matrix_power": lambda m, A, B: m.linalg.matrix_power(A, 3),
    "matrix_power(-2)": lambda m, A, B: m.linalg.matrix_power(A, -2),
    "multi_dot": lambda m, A, B: m.linalg.multi_dot([A[0], A[1], B[0]]),
    "svdvals": lambda m, A, B: m.linalg.svdvals(A),
    "lstsq": lambda m, A, B: m.linalg.lstsq(A, B)[0],
    "cond": lambda m, A, B: m.linalg.cond(A),
    "vecdot": lambda m, A, B: m.linalg.vecdot(A, A.mT),
    "matmul": lambda m, A, B: m.linalg.matmul(A, B),
    "diagonal": lambda m, A, B: m.linalg.diagonal(A, offset=1),
    "matrix_exp": lambda m, A, B: m.linalg.matrix_exp(A * 0.3),
    "cholesky_ex": lambda m, A, B: m.linalg.cholesky_ex(A @ A.mT)[0],
    "cholesky_ex upper": lambda m, A, B: m.linalg.cholesky_ex(A @ A.mT, upper=True)[0],
    "inv_ex": lambda m, A, B: m.linalg.inv_ex(A)[0],
    "solve_ex": lambda m, A, B: m.linalg.solve_ex(A, B)[0],
    "lu_factor + lu_solve": lambda m, A, B: m.linalg.lu_solve(*m.linalg.lu_factor(A), B),
    "lu": lambda m, A, B: m.linalg.lu(A)[2],
    "vander": lambda m, A, B: m.linalg.vander(A[0, 0]),
    "tensorinv": lambda m, A, B: m.linalg.tensorinv(
        A.reshape(6, 3)[:4, :].reshape(2, 2, 3)[..., :2].reshape(2, 2, 2)[None].expand(
            2, 2, 2, 2) * m.eye(2, dtype=A.dtype) + m.eye(4, dtype=A.dtype).reshape(
            2, 2, 2, 2), ind=2),
}


def _run(m, program):
    A = m.tensor(SQUARE, requires_grad=True)
    B = m.tensor(RHS, requires_grad=True)
    out = program(m, A, B)
    out.pow(2).sum().backward()
    return [out.detach().numpy()] + [None if t.grad is None else t.grad.numpy()
                                     for t in (A, B)]


@pytest.mark.parametrize("name", sorted(PROGRAMS))
def test_matches_pytorch(real, name):
    for ours, theirs in zip(_run(F, PROGRAMS[name]), _run(real, PROGRAMS[name])):
        assert (ours is None) == (theirs is None)
        if ours is not None:
            np.testing.assert_allclose(ours, theirs, rtol=1e-8, atol=1e-10)


def test_factor_results_match_pytorch(real):
    def facts(m):
        A = m.tensor(SQUARE)
        lu_, piv = m.linalg.lu_factor(A)
        _, info = m.linalg.cholesky_ex(A @ A.mT)
        return [lu_.numpy(), piv.numpy(), str(piv.dtype), info.numpy(), str(info.dtype),
                m.linalg.matrix_rank(A).numpy(), str(m.linalg.matrix_rank(A).dtype),
                [t.shape for t in m.linalg.lstsq(A, m.tensor(RHS))[1:]]]
    ours, theirs = facts(F), facts(real)
    for a, b in zip(ours, theirs):
        if isinstance(a, np.ndarray):
            np.testing.assert_allclose(a, b, rtol=1e-10)
        else:
            assert a == b


def test_eig_tensorsolve_and_errors_match_pytorch(real):
    def facts(m):
        A = m.tensor(SQUARE[0])
        values = m.linalg.eigvals(A)
        w, v = m.linalg.eig(A)
        residual = (A.to(v.dtype) @ v - v * w).abs().max().item()
        solved = m.linalg.tensorsolve(m.eye(6, dtype=A.dtype).reshape(2, 3, 6) * 2,
                                      m.ones(2, 3, dtype=A.dtype))
        lu_, piv, info = m.linalg.lu_factor_ex(A)
        return [str(values.dtype), np.sort_complex(values.numpy()).round(10).tolist(),
                residual < 1e-10, solved.numpy().round(12).tolist(), info.tolist(),
                issubclass(m.linalg.LinAlgError, Exception)]
    assert facts(F) == facts(real)
