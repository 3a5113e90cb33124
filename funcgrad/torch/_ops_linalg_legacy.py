"""The op table, part 8: the linear algebra of the torch namespace (det, logdet, slogdet,
inverse, pinverse, matrix_power, matrix_exp, the legacy cholesky, cholesky_solve,
cholesky_inverse, qr and svd with their ``upper``/``some`` arguments, chain_matmul) and
distances and statistics over matrices (cdist, dist, cov, corrcoef, trapezoid,
cumulative_trapezoid, renorm).

Compositions of funcgrad.numpy.linalg and funcgrad.scipy.linalg; distances use
`funcgrad.torch._conventions.vector_norm`, whose gradient is PyTorch's (0 where a
distance is 0).
"""
from __future__ import annotations

import warnings
from typing import Any

import numpy as np

import funcgrad.numpy as fnp
import funcgrad.scipy.linalg as spl  # expm
from funcgrad.torch import _conventions as conventions
from funcgrad.torch._runtime import dtypes as D
from funcgrad.torch._dispatch import apply
from funcgrad.torch._ops_basic import FUNCTIONS, METHODS, Spec, cast, op, result_type
from funcgrad.torch._ops_reduce import _axes, _return_type, return_types
from funcgrad.torch._tensor import Tensor, _type_word
from funcgrad.torch._factories import zeros

__all__ = ["slogdet", "qr", "svd", "chain_matmul", "cov", "corrcoef"]

for _name, _fields in [("slogdet", ("sign", "logabsdet")), ("qr", ("Q", "R")),
                       ("svd", ("U", "S", "V"))]:
    if not hasattr(return_types, _name):
        setattr(return_types, _name, _return_type(_name, _fields))


def _mT(a: Any) -> Any:
    return fnp.swapaxes(a, -1, -2)


def _mH(a: Any) -> Any:
    return fnp.conj(_mT(a)) if np.iscomplexobj(a) else _mT(a)


def _square(fn: str, A: Tensor) -> None:
    if A.ndim < 2:
        raise RuntimeError(f"{fn}: The input tensor A must have at least 2 dimensions.")
    if A.shape[-1] != A.shape[-2]:
        raise RuntimeError(f"{fn}: A must be batches of square matrices, but they are "
                           f"{A.shape[-2]} by {A.shape[-1]} matrices")


def _floating(fn: str, A: Tensor) -> None:
    if not (A.dtype.is_floating_point or A.dtype.is_complex):
        raise RuntimeError(f"{fn}: Expected a floating point or complex tensor as input. "
                           f"Got {_type_word(A.dtype)}")


@op("det")
def _det(input: Tensor) -> Spec:
    _square("linalg.det", input)
    return Spec("LinalgDetBackward0", lambda a: fnp.linalg.det(a), [input])


@op("logdet")
def _logdet(input: Tensor) -> Spec:
    """log(det(A)): NaN for a negative determinant, -inf for a singular A."""
    _square("linalg.slogdet", input)

    def f(a: Any) -> Any:
        sign, logabs = fnp.linalg.slogdet(a)
        return fnp.where(fnp.less(sign, 0), np.nan, logabs)
    return Spec("WhereBackward0", f, [input])


def slogdet(input: Tensor) -> Any:
    """``(sign, logabsdet)`` of the determinant."""
    _square("linalg.slogdet", input)
    return return_types.slogdet(*apply("LinalgSlogdetBackward0", lambda a: tuple(
        fnp.linalg.slogdet(a)), [input], multi=True))


@op("inverse")
def _inverse(input: Tensor) -> Spec:
    _square("linalg.inv", input)
    _floating("linalg.inv", input)
    return Spec("LinalgInvExBackward0", lambda a: fnp.linalg.inv(a), [input])


@op("pinverse")
def _pinverse(input: Tensor, rcond: float = 1e-15) -> Spec:
    return Spec("LinalgPinvBackward0", lambda a: fnp.linalg.pinv(a, rcond), [input])


@op("matrix_power")
def _matrix_power(input: Tensor, n: int) -> Spec:
    """A ** n by repeated products (A's inverse for negative n; the identity for 0)."""
    _square("linalg.matrix_power", input)
    node = {0: "torch::autograd::CopyBackwards", 1: "CloneBackward0"}.get(n, "MmBackward0")
    return Spec(node, lambda a: fnp.linalg.matrix_power(a, n), [input])


@op("matrix_exp")
def _matrix_exp(input: Tensor) -> Spec:
    _square("linalg.matrix_exp", input)
    return Spec("LinalgMatrixExpBackward0", lambda a: spl.expm(a), [input])


_CHOLESKY_WARNING = (
    "torch.cholesky is deprecated in favor of torch.linalg.cholesky and will be removed in "
    "a future PyTorch release.")


@op("cholesky")
def _cholesky(input: Tensor, upper: bool = False) -> Spec:
    """The Cholesky factor L (or U = L^H with ``upper``) of a positive-definite A."""
    warnings.warn(_CHOLESKY_WARNING, UserWarning, stacklevel=3)
    _square("linalg.cholesky", input)

    def f(a: Any) -> Any:
        lower = fnp.linalg.cholesky(a)
        return _mH(lower) if upper else lower
    return Spec("CholeskyBackward0", f, [input])


def _cho_solve(b: Any, factor: Any, upper: bool) -> Any:
    """X with (L L^H) X = b, L the lower factor (U^H when ``upper``). The product is
    formed from the whole factor, so its gradient is PyTorch's (not only a triangle)."""
    lower = _mH(factor) if upper else factor
    return fnp.linalg.solve(fnp.matmul(lower, _mH(lower)), b)


@op("cholesky_solve")
def _cholesky_solve(input: Tensor, input2: Tensor, upper: bool = False) -> Spec:
    """The solution X of A X = input, given A's Cholesky factor ``input2``."""
    if input.dtype is not input2.dtype:
        raise RuntimeError(f"Expected b and A to have the same dtype, but found b of type "
                           f"{_type_word(input.dtype)} and A of type "
                           f"{_type_word(input2.dtype)} instead.")
    return Spec("CholeskySolveBackward0", lambda b, f: _cho_solve(b, f, upper),
                [input, input2])


@op("cholesky_inverse")
def _cholesky_inverse(input: Tensor, upper: bool = False) -> Spec:
    """The inverse of A from its Cholesky factor."""
    _square("cholesky_inverse", input)
    n = input.shape[-1]
    return Spec("CholeskyInverseBackward0", lambda f: _cho_solve(
        fnp.broadcast_to(fnp.eye(n, dtype=f.dtype), f.shape), f, upper), [input])


def qr(input: Tensor, some: bool = True) -> Any:
    """``(Q, R)``: reduced (``some``) or complete."""
    mode = "reduced" if some else "complete"
    return return_types.qr(*apply("LinalgQrBackward0", lambda a: tuple(
        fnp.linalg.qr(a, mode=mode)), [input], multi=True))


def svd(input: Tensor, some: bool = True, compute_uv: bool = True) -> Any:
    """``(U, S, V)`` with A = U diag(S) V^H (V, not V^H, as the legacy torch.svd);
    without ``compute_uv`` U and V are zeros of the complete shapes."""
    if not compute_uv:
        m, n = input.shape[-2], input.shape[-1]
        batch = tuple(input.shape[:-2])
        s = apply("LinalgSvdBackward0", lambda a: fnp.linalg.svd(a, compute_uv=False),
                  [input])
        return return_types.svd(zeros(*batch, m, m, dtype=input.dtype), s,
                                zeros(*batch, n, n, dtype=input.dtype))
    u, s, vh = apply("LinalgSvdBackward0", lambda a: tuple(fnp.linalg.svd(
        a, full_matrices=not some)), [input], multi=True)
    return return_types.svd(u, s, FUNCTIONS["transpose"](vh, -2, -1).conj())


def chain_matmul(*matrices: Tensor) -> Tensor:
    """The product of the matrices, in order (deprecated in PyTorch for multi_dot)."""
    if not matrices:
        raise RuntimeError("chain_matmul(): Expected one or more matrices")
    if len(matrices) == 1:
        return FUNCTIONS["clone"](matrices[0])
    out = matrices[0]
    for m in matrices[1:]:
        out = FUNCTIONS["mm"](out, m)
    return out.reshape(*out.shape)


# -- distances ---------------------------------------------------------------------------

@op("cdist", method=False)
def _cdist(x1: Tensor, x2: Tensor, p: float = 2.0, compute_mode: str | None = None) -> Spec:
    """The p-norm distances between each row of x1 and each row of x2 (batched)."""
    for name, x in (("X1", x1), ("X2", x2)):
        if x.ndim < 2:
            raise RuntimeError(f"cdist only supports at least 2D tensors, {name} got: "
                               f"{x.ndim}D")
    if x1.shape[-1] != x2.shape[-1]:
        raise RuntimeError(f"X1 and X2 must have the same number of columns. X1: "
                           f"{x1.shape[-1]} X2: {x2.shape[-1]}")
    if p < 0:
        raise RuntimeError("cdist only supports non-negative p values")
    if not x1.dtype.is_floating_point:
        raise RuntimeError(f"cdist only supports floating-point dtypes, X1 got: "
                           f"{_type_word(x1.dtype)}")
    return Spec("CdistBackward0", lambda a, b: conventions.vector_norm(
        fnp.subtract(fnp.expand_dims(a, -2), fnp.expand_dims(b, -3)), p, (-1,), False),
        [x1, x2])


@op("dist")
def _dist(input: Tensor, other: Tensor, p: float = 2) -> Spec:
    """The p-norm of input - other (broadcast)."""
    dt = result_type(input, other).np
    return Spec("DistBackward0", lambda a, b: conventions.vector_norm(
        fnp.subtract(cast(a, dt), cast(b, dt)), p, None, False), [input, other])


@op("renorm", inplace=True)
def _renorm(input: Tensor, p: float, dim: int, maxnorm: float) -> Spec:
    """Each slice along ``dim`` whose p-norm exceeds ``maxnorm`` scaled down to it."""
    if p <= 0:
        raise RuntimeError("renorm: non-positive-norm not supported")
    if maxnorm < 0:
        raise RuntimeError(f"renorm: expected maxnorm to be >= 0 but got {maxnorm:g}")
    axis = _axes(dim, input.ndim)
    others = tuple(k for k in range(input.ndim) if k not in axis)

    def f(x: Any) -> Any:
        norm = conventions.vector_norm(x, p, others, True)
        factor = fnp.where(fnp.greater(norm, maxnorm), fnp.true_divide(
            maxnorm, fnp.add(norm, 1e-7)), fnp.ones_like(norm))
        return fnp.multiply(x, factor)
    return Spec("RenormBackward0", f, [input])


# -- statistics and integrals ---------------------------------------------------------

def cov(input: Tensor, *, correction: int = 1, fweights: Tensor | None = None,
        aweights: Tensor | None = None) -> Tensor:
    """The covariance of the variables in input's rows (observations in columns)."""
    if input.ndim > 2:
        raise RuntimeError(f"cov(): expected input to have two or fewer dimensions but got "
                           f"an input with {input.ndim} dimensions")
    weights = [w for w in (fweights, aweights) if w is not None]
    dt = (input.dtype if input.dtype.is_floating_point or input.dtype.is_complex else
          D.get_default_dtype()).np
    has_f, has_a = fweights is not None, aweights is not None

    def f(x: Any, *ws: Any) -> Any:
        fw = ws[0] if has_f else None
        aw = ws[-1] if has_a else None
        return fnp.astype(fnp.cov(cast(x, dt), ddof=correction, fweights=fw, aweights=aw),
                          dt)
    return apply("SqueezeBackward0", f, [input, *weights])


def corrcoef(input: Tensor) -> Tensor:
    """Pearson's correlation coefficients of input's rows, clamped to [-1, 1]."""
    if input.ndim > 2:
        raise RuntimeError(f"corrcoef(): expected input to have two or fewer dimensions but "
                           f"got an input with {input.ndim} dimensions")
    dt = (input.dtype if input.dtype.is_floating_point or input.dtype.is_complex else
          D.get_default_dtype()).np

    def f(x: Any) -> Any:
        c = fnp.cov(cast(x, dt), ddof=1)
        if c.ndim == 0:
            return fnp.true_divide(c, c)
        d = fnp.sqrt(fnp.real(fnp.diagonal(c)))
        r = fnp.true_divide(fnp.true_divide(c, fnp.expand_dims(d, 1)), fnp.expand_dims(d, 0))
        return r if np.iscomplexobj(r) else fnp.astype(conventions.clamp(r, -1, 1), dt)
    return apply("ClampBackward1" if input.ndim == 2 else "DivBackward0", f, [input])


def trapezoid(y: Tensor, x: Any = None, *, dx: Any = None, dim: int = -1) -> Tensor:
    """The trapezoidal rule along ``dim``, with sample points ``x`` or spacing ``dx``."""
    if x is not None and dx is not None:
        raise TypeError("trapezoid() received an invalid combination of arguments: both x "
                        "and dx were given")
    axis = _axes(dim, y.ndim)[0] if y.ndim else 0
    if isinstance(x, Tensor):
        return apply("DivBackward1", lambda a, b: fnp.trapezoid(a, x=b, axis=axis), [y, x])
    step = 1 if dx is None and x is None else (x if dx is None else dx)
    return apply("MulBackward1", lambda a: fnp.trapezoid(a, dx=step, axis=axis), [y])


def cumulative_trapezoid(y: Tensor, x: Any = None, *, dx: Any = None, dim: int = -1
                         ) -> Tensor:
    """The running trapezoidal rule along ``dim`` (one element fewer than y)."""
    axis = _axes(dim, y.ndim)[0] if y.ndim else 0

    def pairs(a: Any) -> Any:
        n = a.shape[axis]
        return fnp.add(fnp.take(a, np.arange(1, n), axis=axis),
                       fnp.take(a, np.arange(n - 1), axis=axis))

    if isinstance(x, Tensor):
        def f(a: Any, b: Any) -> Any:
            steps = fnp.diff(b, axis=-1 if b.ndim == 1 else axis)
            if b.ndim == 1:
                steps = fnp.reshape(steps, (-1,) + (1,) * (a.ndim - axis - 1))
            return fnp.cumsum(fnp.multiply(fnp.true_divide(pairs(a), 2), steps), axis=axis)
        return apply("DivBackward1", f, [y, x])
    step = 1 if dx is None and x is None else (x if dx is None else dx)
    return apply("CumsumBackward0", lambda a: fnp.cumsum(fnp.multiply(
        fnp.true_divide(pairs(a), 2), step), axis=axis), [y])


for _f in (slogdet, qr, svd, chain_matmul, cov, corrcoef, trapezoid, cumulative_trapezoid):
    FUNCTIONS[_f.__name__] = _f
FUNCTIONS["trapz"] = trapezoid
for _f in (slogdet, qr, svd, cov, corrcoef):
    METHODS[_f.__name__] = _f


@op("vdot")
def _vdot(input: Tensor, other: Tensor) -> Spec:
    """The dot product of two 1-D tensors, the first conjugated."""
    if input.ndim != 1 or other.ndim != 1:
        raise RuntimeError(f"1D tensors expected, but got {input.ndim}D and {other.ndim}D "
                           "tensors")
    if input.dtype is not other.dtype:
        raise RuntimeError(f"dot : expected both vectors to have same dtype, but found "
                           f"{_type_word(input.dtype)} and {_type_word(other.dtype)}")
    return Spec("VdotBackward0", lambda a, b: fnp.vdot(a, b), [input, other])


def adjoint(input: Tensor) -> Tensor:
    """The conjugate transpose of the last two dimensions (a view)."""
    if input.ndim < 2:
        raise RuntimeError("tensor.adjoint() is only supported on matrices or batches of "
                           f"matrices. Got {input.ndim}-D tensor.")
    return FUNCTIONS["transpose"](input, -2, -1).conj()


FUNCTIONS["adjoint"] = METHODS["adjoint"] = adjoint
