"""PyTorch's older and lower-level names for what the facade computes, so that code written
against them runs: the deprecated LAPACK-style linear algebra (``torch.lu``, ``lu_solve``,
``lu_unpack``, ``triangular_solve``), Householder QR (``geqrf``, ``orgqr``, ``ormqr``,
``linalg.householder_product``), the functions PyTorch 2 removed (they raise PyTorch's own
texts), the random fills ``cauchy_``/``geometric_``/``log_normal_``, ``igamma_``/``igammac_``,
and what a dense tensor answers about storage and layouts (``share_memory_``,
``pin_memory``'s error without an accelerator, ``const_data_ptr``, the sparse accessors'
errors, ``sparse_dim``/``dense_dim``, the deprecated ``resize``/``resize_as``/``volatile``,
``narrow_copy``, ``new_empty_strided``, ``as_strided_scatter``, ``slice_copy``).

Each is a composition of the facade's ops (recorded under PyTorch's node names where the
function itself is one node), except ``geqrf``, which PyTorch does not differentiate either
and which runs LAPACK's algorithm on the host.
"""
from __future__ import annotations

import warnings
from typing import Any, Sequence

import numpy as np

import funcgrad.numpy as fnp
from funcgrad.backend import cupy_available
import funcgrad.scipy.special as sps
from funcgrad.torch import _legacy_texts as texts
from funcgrad.torch._dispatch import apply
from funcgrad.torch._factories import tensor, zeros
from funcgrad.torch._inplace import inplace
from funcgrad.torch._linalg_more import lu_factor, lu_solve as linalg_lu_solve, solve_triangular
from funcgrad.torch._more_functions import empty_strided
from funcgrad.torch._ops_basic import _random_fill
from funcgrad.torch._ops_math_more import _ldexp
from funcgrad.torch._ops_matmul import _addbmm, _addr
from funcgrad.torch._ops_reduce import _return_type, return_types
from funcgrad.torch._runtime import layouts
from funcgrad.torch._runtime.storage import UntypedStorage
from funcgrad.torch._tensor import Tensor, _type_word

__all__ = ["install", "householder_product"]

for _name, _fields in [("geqrf", ("a", "tau")), ("lu_unpack", ("P", "L", "U")),
                       ("triangular_solve", ("solution", "cloned_coefficient"))]:
    if not hasattr(return_types, _name):
        setattr(return_types, _name, _return_type(_name, _fields))


# -- the LAPACK-style linear algebra -----------------------------------------------------

_WARNED: set = set()


def _warn_once(text: str) -> None:
    """A deprecation PyTorch warns of once per process (``TORCH_WARN_ONCE``)."""
    if text not in _WARNED:
        _WARNED.add(text)
        warnings.warn(text, UserWarning, stacklevel=3)

def lu(A: Tensor, pivot: bool = True, get_infos: bool = False, out: Any = None) -> tuple:
    """``torch.lu``: (LU, pivots[, infos]), as `linalg.lu_factor` (deprecated by PyTorch)."""
    _warn_once(texts.LU_DEPRECATED)
    factors = lu_factor(A, pivot=pivot)
    return (*factors, zeros(tuple(A.shape[:-2])).int()) if get_infos else factors


def lu_solve(b: Tensor, LU_data: Tensor, LU_pivots: Tensor, *, out: Any = None) -> Tensor:
    """``torch.lu_solve(b, LU, pivots)``: `linalg.lu_solve` with its older argument order."""
    return linalg_lu_solve(LU_data, LU_pivots, b)


def _permutation(pivots: np.ndarray, m: int, dtype: Any) -> np.ndarray:
    """P of A = P L U from LAPACK's 1-based row interchanges (row i swapped with row
    pivots[i], in order), for each matrix of a batch."""
    flat = pivots.reshape(-1, pivots.shape[-1])
    out = np.zeros((flat.shape[0], m, m), dtype)
    for b, piv in enumerate(flat):
        order = list(range(m))
        for i, p in enumerate(piv):
            order[i], order[p - 1] = order[p - 1], order[i]
        out[b, order, np.arange(m)] = 1
    return out.reshape(*pivots.shape[:-1], m, m)


def lu_unpack(LU_data: Tensor, LU_pivots: Tensor, unpack_data: bool = True,
              unpack_pivots: bool = True, *, out: Any = None) -> Any:
    """(P, L, U) of an `lu_factor` result (L unit lower, U upper); an empty tensor for what
    is not unpacked."""
    m, n = LU_data.shape[-2:]
    k = min(m, n)
    empty = zeros(0, dtype=LU_data.dtype)
    P = tensor(_permutation(LU_pivots.numpy(force=True), m, LU_data.dtype.np)) \
        if unpack_pivots else empty
    if not unpack_data:
        return return_types.lu_unpack(P, empty, empty)
    unit = tensor(np.eye(m, k, dtype=LU_data.dtype.np))
    L = LU_data[..., :, :k].tril(-1) + unit
    U = LU_data[..., :k, :].triu()
    return return_types.lu_unpack(P, L, U)


def triangular_solve(b: Tensor, A: Tensor, upper: bool = True, transpose: bool = False,
                     unitriangular: bool = False, *, out: Any = None) -> Any:
    """(X, A's copy) with A X = b (A^T X = b with ``transpose``), as PyTorch's deprecated
    ``triangular_solve``."""
    _warn_once(texts.TRIANGULAR_SOLVE_DEPRECATED)
    coefficient = A.mT if transpose else A
    solution = solve_triangular(coefficient, b, upper=upper != transpose,
                                unitriangular=unitriangular)
    return return_types.triangular_solve(solution, A.clone())


def _removed(name: str) -> Any:
    def removed(*args: Any, **kwargs: Any) -> Any:
        raise RuntimeError(texts.REMOVED[name])
    removed.__name__ = name
    return removed


# -- Householder QR --------------------------------------------------------------------------

def _reflect(a: np.ndarray, tau: np.ndarray, j: int) -> None:
    """LAPACK's ``?larfg`` on column j of ``a`` (in place): the reflector that zeroes the
    entries below the diagonal, its vector stored there and its scale in ``tau[j]``; then
    its adjoint applied to the columns right of j (``?larf``)."""
    alpha = a[j, j]
    x = a[j + 1:, j]
    xnorm = np.linalg.norm(x)
    if xnorm == 0 and np.imag(alpha) == 0:
        tau[j] = 0
        return
    beta = -np.copysign(np.sqrt(abs(alpha) ** 2 + xnorm ** 2), np.real(alpha))
    tau[j] = (beta - alpha) / beta
    a[j + 1:, j] = x / (alpha - beta)
    a[j, j] = beta
    v = np.concatenate([[1], a[j + 1:, j]])
    rest = a[j:, j + 1:]
    rest -= np.conj(tau[j]) * np.outer(v, np.conj(v) @ rest)


def geqrf(input: Tensor, *, out: Any = None) -> Any:
    """(a, tau): LAPACK's QR, R on and above the diagonal of ``a`` and the Householder
    vectors below it with their scales ``tau`` (not differentiable, as in PyTorch)."""
    values = input.numpy(force=True)
    m, n = values.shape[-2:]
    k = min(m, n)
    a = np.array(values, copy=True).reshape(-1, m, n)
    tau = np.zeros((a.shape[0], k), a.dtype)
    for b in range(a.shape[0]):
        for j in range(k):
            _reflect(a[b], tau[b], j)
    shape = values.shape[:-2]
    return return_types.geqrf(tensor(a.reshape(*shape, m, n)), tensor(tau.reshape(*shape, k)))


def _householder_q(a: Any, tau: Any, columns: int) -> Any:
    """The first ``columns`` columns of H_1 ... H_k, H_i = I - tau_i v_i v_i^H (funcgrad
    arrays, batched: what the gradients flow through)."""
    m = a.shape[-2]
    rows = np.arange(m)
    q = fnp.broadcast_to(fnp.eye(m, dtype=a.dtype), (*a.shape[:-2], m, m))
    for i in range(tau.shape[-1]):
        v = fnp.where(rows > i, a[..., :, i], fnp.asarray(rows == i, dtype=a.dtype))
        qv = fnp.matmul(q, v[..., :, None])
        q = q - tau[..., i, None, None] * fnp.matmul(qv, fnp.conj(v)[..., None, :])
    return q[..., :, :columns]


def householder_product(A: Tensor, tau: Tensor, *, out: Any = None) -> Tensor:
    """``linalg.householder_product``: the first n columns of the product of the
    reflectors `geqrf` stores (``orgqr``)."""
    if A.shape[-2] < A.shape[-1]:
        raise RuntimeError("torch.linalg.householder_product: input.shape[-2] must be "
                           "greater than or equal to input.shape[-1]")
    n = A.shape[-1]
    return apply("LinalgHouseholderProductBackward0",
                 lambda a, t: _householder_q(a, t, n), [A, tau])


def ormqr(input: Tensor, tau: Tensor, other: Tensor, left: bool = True,
          transpose: bool = False, *, out: Any = None) -> Tensor:
    """Q @ other (other @ Q without ``left``; Q^H with ``transpose``), Q the full product of
    the reflectors of ``input`` and ``tau``."""
    m = input.shape[-2]

    def f(a: Any, t: Any, c: Any) -> Any:
        q = _householder_q(a, t, m)
        if transpose:
            q = fnp.conj(fnp.swapaxes(q, -1, -2))
        return fnp.matmul(q, c) if left else fnp.matmul(c, q)
    return apply("OrmqrBackward0", f, [input, tau, other])


# -- random fills and in-place special functions --------------------------------------------

cauchy_ = _random_fill("CauchyBackward0", lambda r, s, median=0.0, sigma=1.0:
                       median + sigma * r.standard_cauchy(s))
geometric_ = _random_fill("GeometricBackward0", lambda r, s, p: r.geometric(p, s))
log_normal_ = _random_fill("LogNormalBackward0", lambda r, s, mean=1.0, std=2.0:
                           r.lognormal(mean, std, s))


def addbmm_(self: Tensor, batch1: Tensor, batch2: Tensor, *, beta: Any = 1,
            alpha: Any = 1) -> Tensor:
    """``addbmm`` into ``self``; as PyTorch's (an ``out=`` call on itself), a ``self``
    that only broadcasts to the result is resized to it first."""
    spec = _addbmm(self, batch1, batch2, beta=beta, alpha=alpha)
    shape = (batch1.shape[1], batch2.shape[2])
    if tuple(self.shape) == shape:
        return inplace(self, spec.name, spec.f, spec.slots[1:])
    self._check_inplace()  # (a leaf that requires grad: PyTorch's error)
    # new memory of the result's size holding it, as PyTorch's resize on an out= call
    return self._rebind(apply(spec.name, spec.f, spec.slots))


def addr_(self: Tensor, vec1: Tensor, vec2: Tensor, *, beta: Any = 1,
          alpha: Any = 1) -> Tensor:
    """``addr`` into ``self``, which must be the (n, m) matrix itself."""
    if self.ndim != 2:
        raise RuntimeError(f"2D tensor expected, got {self.ndim}D tensor for input")
    if tuple(self.shape) != (vec1.shape[0], vec2.shape[0]):
        raise RuntimeError(f"size mismatch, input: {list(self.shape)}, v1: "
                           f"{list(vec1.shape)}, v2: {list(vec2.shape)}")
    spec = _addr(self, vec1, vec2, beta=beta, alpha=alpha)
    return inplace(self, spec.name, spec.f, spec.slots[1:])


def ldexp_(self: Tensor, other: Any) -> Tensor:
    """self * 2 ** other, in place: a floating ``self`` only (PyTorch's text otherwise)."""
    if not (self.dtype.is_floating_point or self.dtype.is_complex):
        raise RuntimeError(f"ldexp can't be cast to the desired output type "
                           f"{_type_word(self.dtype)}")
    spec = _ldexp(self, other)
    return inplace(self, spec.name, spec.f, spec.slots[1:])


def igamma_(self: Tensor, other: Any) -> Tensor:
    return inplace(self, "IgammaBackward0", sps.gammainc, [other])


def igammac_(self: Tensor, other: Any) -> Tensor:
    return inplace(self, "IgammacBackward0", sps.gammaincc, [other])


# -- storage, layouts and deprecated tensor methods -----------------------------------------

_LAYOUT_WORDS = {layouts.strided: "Strided", layouts.sparse_coo: "Sparse",
                 layouts.sparse_csr: "SparseCsr"}


def _sparse_accessor(name: str, expected: str) -> Any:
    def accessor(self: Tensor) -> Any:
        word = _LAYOUT_WORDS.get(self.layout, str(self.layout))
        raise RuntimeError(f"{name} expected {expected} layout but got {word}")
    accessor.__name__ = name
    return accessor


_SPARSE_ACCESSORS = {
    "indices": "sparse coordinate tensor", "coalesce": "sparse coordinate tensor",
    "values": "sparse tensor", "crow_indices": "sparse row compressed tensor",
    "col_indices": "sparse row compressed tensor",
    "ccol_indices": "sparse column compressed tensor",
    "row_indices": "sparse column compressed tensor"}


def pin_memory(self: Tensor, device: Any = None) -> Tensor:
    """Pinned host memory only speeds copies to an accelerator; without one PyTorch
    refuses, and so does the facade (with one, the host memory is returned as it is)."""
    if not cupy_available():
        raise RuntimeError("Cannot access accelerator device when none is available.")
    return self


def share_memory_(self: Tensor) -> Tensor:
    """A CPU tensor's memory is process memory that worker processes inherit: nothing to
    move (``is_shared`` stays PyTorch's answer for memory not created shared)."""
    return self


def _deprecated_resize(name: str) -> Any:
    def resize(self: Tensor, *sizes: Any) -> Tensor:
        warnings.warn(f"non-inplace {name} is deprecated", UserWarning, stacklevel=2)
        shape = tuple(sizes[0].shape) if name == "resize_as" else \
            tuple(sizes[0]) if len(sizes) == 1 and not isinstance(sizes[0], int) else sizes
        total = int(np.prod(shape))
        if total != self.numel():
            raise RuntimeError(
                f"requested resize to {'x'.join(map(str, shape))} ({total} elements in "
                f"total), but the given tensor has a size of "
                f"{'x'.join(map(str, self.shape))} ({self.numel()} elements). autograd's "
                "resize can only change the shape of a given tensor, while preserving the "
                "number of elements. ")
        return self.contiguous().view(shape)
    resize.__name__ = name
    return resize


def _volatile(self: Tensor) -> bool:
    warnings.warn("volatile was removed (Variable.volatile is always False)", UserWarning,
                  stacklevel=2)
    return False


def module_load(self: Tensor, other: Tensor, assign: bool = False) -> Tensor:
    """How ``load_state_dict`` turns ``other`` into this parameter's new value (PyTorch's
    default: ``other`` itself with ``assign``, else its values copied in; it calls this
    under ``no_grad``)."""
    return other.detach() if assign else self.copy_(other).detach()


def narrow_copy(input: Tensor, dim: int, start: int, length: int) -> Tensor:
    return input.narrow(dim, start, length).clone()


def slice_copy(input: Tensor, dim: int = 0, start: Any = None, end: Any = None,
               step: int = 1) -> Tensor:
    index = (slice(None),) * (dim % input.ndim) + (slice(start, end, step),)
    return input[index].clone()


def new_empty_strided(self: Tensor, size: Sequence, stride: Sequence, *, dtype: Any = None,
                      device: Any = None, requires_grad: bool = False, **unused: Any
                      ) -> Tensor:
    return empty_strided(size, stride, dtype=self.dtype if dtype is None else dtype,
                         device=self.device if device is None else device,
                         requires_grad=requires_grad)


def as_strided_scatter(input: Tensor, src: Tensor, size: Sequence, stride: Sequence,
                       storage_offset: int | None = None) -> Tensor:
    """A copy of ``input`` with the elements its ``as_strided`` view selects set to
    ``src`` (recorded: gradients flow to both)."""
    out = input.clone()
    out.as_strided(size, stride, storage_offset).copy_(src)
    return out


def is_storage(obj: Any) -> bool:
    return isinstance(obj, UntypedStorage)


def install(namespace: dict) -> None:
    """Attach the methods to Tensor and the functions to the torch namespace (and
    ``householder_product`` to torch.linalg)."""
    removed = {name: _removed(name) for name in ("eig", "lstsq", "solve", "symeig")}
    functions = {"lu": lu, "lu_solve": lu_solve, "lu_unpack": lu_unpack,
                 "triangular_solve": triangular_solve, "geqrf": geqrf,
                 "orgqr": householder_product, "ormqr": ormqr, "narrow_copy": narrow_copy,
                 "slice_copy": slice_copy, "as_strided_scatter": as_strided_scatter,
                 "is_storage": is_storage, "matrix_rank": _removed("matrix_rank"),
                 "ldexp_": ldexp_, "UntypedStorage": UntypedStorage, **removed}
    namespace.update(functions)
    namespace["linalg"].householder_product = householder_product
    methods = {"lu": lu, "lu_solve": lu_solve, "triangular_solve": triangular_solve,
               "geqrf": geqrf, "orgqr": householder_product, "ormqr": ormqr,
               "narrow_copy": narrow_copy, "as_strided_scatter": as_strided_scatter,
               "cauchy_": cauchy_, "geometric_": geometric_, "log_normal_": log_normal_,
               "igamma_": igamma_, "igammac_": igammac_, "addbmm_": addbmm_, "addr_": addr_,
               "ldexp_": ldexp_, "pin_memory": pin_memory,
               "share_memory_": share_memory_, "module_load": module_load,
               "new_empty_strided": new_empty_strided,
               "resize": _deprecated_resize("resize"),
               "resize_as": _deprecated_resize("resize_as"),
               "histogram": namespace["histogram"], **removed}
    for name, fn in methods.items():
        setattr(Tensor, name, fn)
    Tensor.const_data_ptr = Tensor.data_ptr
    Tensor.reinforce = _removed("reinforce")
    Tensor.volatile = property(_volatile)
    Tensor.grad_dtype = property(lambda self: self.dtype)
    Tensor.name = None
    Tensor.sparse_dim = lambda self: 0
    Tensor.dense_dim = lambda self: self.ndim
    for name, expected in _SPARSE_ACCESSORS.items():
        setattr(Tensor, name, _sparse_accessor(name, expected))
