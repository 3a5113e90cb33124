"""The ops of the sparse layouts: one row of `SPARSE_OPS` per torch function or method.

Each op is a funcgrad function of the sparse operands' values (and of dense operands),
recorded by `apply` under PyTorch's node name, so gradients reach the dense operands and
the sparse values alike. Products gather the dense rows each stored element needs and
scatter-add the results (``O(nnz * columns)`` work and memory, as a sparse kernel's); a
dense result is made only where PyTorch's op returns one.
"""
from __future__ import annotations

import numbers
from typing import Any, Callable

import numpy as np

import funcgrad
import funcgrad.numpy as fnp
from funcgrad.torch._runtime import dtypes as D
from funcgrad.torch._dispatch import apply
from funcgrad.torch._ops_basic import FUNCTIONS
from funcgrad.torch._tensor import Tensor
from funcgrad.torch.sparse._tensor import (SPARSE_OPS, SparseCoo, SparseTensor, as_coo,
                                           coalesced_keys, coo, dense_of, values_of)

__all__ = ["mm", "addmm", "sum", "softmax", "log_softmax", "sparse_mask", "row"]


def row(*names: str) -> Callable:
    """Register a function as the sparse layouts' op ``names``."""
    def deco(fn: Callable) -> Callable:
        for name in names:
            SPARSE_OPS[name] = fn
        return fn
    return deco


def _is_sparse(x: Any) -> bool:
    return isinstance(x, SparseTensor)


def _matrix_of(t: SparseTensor, name: str) -> SparseCoo:
    """``t`` as a COO matrix with scalar values (the products' sparse operand)."""
    c = as_coo(t)
    if c.sparse_dim() != 2 or c.dense_dim() != 0:
        raise RuntimeError(f"{name}: expected a sparse matrix (2 sparse dimensions, no dense "
                           f"dimension), got size {tuple(c.shape)} with "
                           f"{c.dense_dim()} dense dimensions")
    return c


def _check_product(a: Any, b: Any) -> None:
    if a.dtype != b.dtype:
        raise RuntimeError(f"expected scalar type {a.dtype.scalar_name} but found "
                           f"{b.dtype.scalar_name}")


# -- products -------------------------------------------------------------------------------

def _sparse_dense(name: str, s: SparseTensor, d: Tensor) -> Tensor:
    """``s @ d`` (a dense matrix or vector)."""
    c = _matrix_of(s, name)
    _check_product(s, d)
    n, m = c._size
    if d.ndim not in (1, 2) or d.shape[0] != m:
        raise RuntimeError(f"addmm: Argument #3 (dense): Expected dim 0 size {m}, got "
                           f"{d.shape[0] if d.ndim else 0}")
    rows, cols = c._idx
    if d.ndim == 1:
        return apply("MvBackward0", lambda v, x: fnp.zeros(n, v.dtype).at[rows].add(
            v * x[cols]), [values_of(c), d])
    k = d.shape[1]
    return apply(name, lambda v, x: fnp.zeros((n, k), v.dtype).at[rows].add(
        v[:, None] * x[cols]), [values_of(c), d])


def _dense_sparse(d: Tensor, s: SparseTensor) -> Tensor:
    """``d @ s`` (``d`` a dense matrix)."""
    c = _matrix_of(s, "mm")
    _check_product(d, s)
    m, k = c._size
    if d.ndim != 2 or d.shape[1] != m:
        raise RuntimeError(f"mat1 and mat2 shapes cannot be multiplied ({d.shape[0]}x"
                           f"{d.shape[-1]} and {m}x{k})")
    rows, cols = c._idx
    n = d.shape[0]
    return apply("MmBackward0", lambda x, v: fnp.zeros((n, k), v.dtype).at[:, cols].add(
        x[:, rows] * v), [d, values_of(c)])


def _sparse_sparse(a: SparseTensor, b: SparseTensor) -> SparseCoo:
    """``a @ b`` of two sparse matrices: every pair of elements a[i, j], b[j, l] adds to
    [i, l]; the result is coalesced."""
    ca, cb = _matrix_of(a, "mm"), _matrix_of(b, "mm")
    _check_product(a, b)
    if ca._size[1] != cb._size[0]:
        raise RuntimeError(f"mat1 and mat2 shapes cannot be multiplied ({ca._size[0]}x"
                           f"{ca._size[1]} and {cb._size[0]}x{cb._size[1]})")
    order = np.argsort(cb._idx[0], kind="stable")
    brows = cb._idx[0][order]
    start = np.searchsorted(brows, ca._idx[1], "left")
    count = np.searchsorted(brows, ca._idx[1], "right") - start
    pa = np.repeat(np.arange(len(start)), count)
    pb = order[np.repeat(start - np.cumsum(count) + count, count) + np.arange(count.sum())]
    size = (ca._size[0], cb._size[1])
    keys = ca._idx[0][pa] * size[1] + cb._idx[1][pb]
    uniq, inverse = np.unique(keys, return_inverse=True)
    values = apply("MmBackward0", lambda u, w: fnp.zeros(len(uniq), u.dtype).at[inverse].add(
        u[pa] * w[pb]), [values_of(ca), values_of(cb)])
    idx = np.stack([uniq // size[1], uniq % size[1]]).astype(np.int64)
    return coo(values, idx, size, True)


def mm(mat1: Any, mat2: Any, reduce: str = "sum") -> Any:
    """``mat1 @ mat2`` where either is sparse; a sparse leaf's gradient is masked to its
    pattern (``torch.sparse.mm``)."""
    if reduce != "sum":
        raise NotImplementedError(f"torch.sparse.mm: reduce={reduce!r} is not supported by "
                                  "funcgrad.torch (only 'sum')")
    if _is_sparse(mat1) and _is_sparse(mat2):
        return _sparse_sparse(mat1, mat2)
    if _is_sparse(mat1):
        return _sparse_dense("SparseAddmmBackward0", mat1, mat2)
    return _dense_sparse(mat1, mat2)


def _unmasked(t: Any) -> bool:
    """Whether ``t`` is a sparse leaf that requires grad: an op whose gradient PyTorch
    does not mask then gives it a dense ``.grad`` (`dense_of`)."""
    return _is_sparse(t) and t._rg and t._grad_fn is None


@row("mm", "spmm", "matmul", "__matmul__")
def _mm(input: Any, mat2: Any) -> Any:
    """``torch.mm`` with a sparse operand: a sparse leaf's gradient is dense, as
    PyTorch's (``MmBackward0``)."""
    if _unmasked(input) or _unmasked(mat2):
        a = dense_of(input) if _is_sparse(input) else input
        b = dense_of(mat2) if _is_sparse(mat2) else mat2
        return a @ b
    if _is_sparse(input) and not _is_sparse(mat2):
        return _sparse_dense("MmBackward0", input, mat2)
    return mm(input, mat2)


@row("__rmatmul__")
def _rmatmul(self: SparseTensor, other: Tensor) -> Any:
    return _mm(other, self)


@row("mv")
def _mv(input: SparseTensor, vec: Tensor) -> Tensor:
    if _unmasked(input):
        return FUNCTIONS["mv"](dense_of(input), vec)
    return _sparse_dense("MvBackward0", input, vec)


@row("addmm")
def addmm(input: Tensor, mat1: Any, mat2: Any, *, beta: Any = 1, alpha: Any = 1) -> Any:
    """``beta * input + alpha * (mat1 @ mat2)`` with a sparse ``mat1`` (``torch.sparse.
    addmm``)."""
    if not _is_sparse(mat1) or _is_sparse(input) or _is_sparse(mat2):
        raise NotImplementedError("addmm: funcgrad.torch supports a sparse mat1 with dense "
                                  "input and mat2")
    c = _matrix_of(mat1, "addmm")
    rows, cols = c._idx
    n, k = c._size[0], mat2.shape[1]
    _check_product(mat1, mat2)

    def f(x: Any, v: Any, d: Any) -> Any:
        product = fnp.zeros((n, k), v.dtype).at[rows].add(v[:, None] * d[cols])
        return beta * x + alpha * product
    return apply("SparseAddmmBackward0", f, [input, values_of(c), mat2])


# -- element-wise -----------------------------------------------------------------------------

def _on_values(s: SparseTensor, fn: Callable, coalesce: bool = True) -> SparseTensor:
    """A sparse tensor with ``s``'s pattern and values ``fn(values)``: an op that keeps
    zeros zero. Non-linear ones coalesce first (``|1| + |-1|`` is not ``|1 + -1|``)."""
    if coalesce and isinstance(s, SparseCoo):
        s = s.coalesce()
    return s._like(fn(values_of(s)))


# ops that map zero to zero: on the values alone, as PyTorch's sparse kernels
_ZERO_PRESERVING = ("abs", "sqrt", "relu", "sin", "tan", "tanh", "asin", "atan", "sinh",
                    "asinh", "atanh", "expm1", "log1p", "sign", "sgn", "floor", "ceil",
                    "round", "trunc", "frac", "erf", "erfinv", "deg2rad", "rad2deg",
                    "square", "arcsin", "arctan", "arcsinh", "arctanh", "signbit", "isnan",
                    "isinf", "isposinf", "isneginf", "nan_to_num", "conj_physical")


def _unary(name: str) -> Callable:
    def fn(input: SparseTensor, *args: Any, **kwargs: Any) -> SparseTensor:
        return _on_values(input, lambda v: FUNCTIONS[name](v, *args, **kwargs))
    fn.__name__ = name
    return fn


for _name in _ZERO_PRESERVING:
    row(_name)(_unary(_name))


@row("neg", "negative", "__neg__")
def _neg(input: SparseTensor) -> SparseTensor:
    return _on_values(input, FUNCTIONS["neg"], coalesce=False)


@row("pow", "__pow__")
def _pow(input: SparseTensor, exponent: Any) -> SparseTensor:
    if isinstance(exponent, Tensor):
        raise NotImplementedError("pow: a sparse base takes a Python number as exponent")
    if exponent == 0:
        raise RuntimeError("pow: cannot raise to zeroth power on sparse tensor; it would "
                           "make the result tensor dense")
    return _on_values(input, lambda v: FUNCTIONS["pow"](v, exponent))


def _is_scalar(x: Any) -> bool:
    return isinstance(x, numbers.Number) or (isinstance(x, Tensor) and not _is_sparse(x)
                                             and x.ndim == 0)


@row("mul", "multiply", "__mul__", "__rmul__")
def _mul(input: Any, other: Any) -> Any:
    """sparse * number, sparse * dense (sparse result, the sparse pattern), sparse * sparse
    (the intersection of the patterns)."""
    if not _is_sparse(input):
        input, other = other, input
    if _is_scalar(other):
        return _on_values(input, lambda v: FUNCTIONS["mul"](v, other), coalesce=False)
    if not _is_sparse(other):
        c = as_coo(input).coalesce()
        if tuple(other.shape) != c._size:
            raise RuntimeError(f"mul: a sparse tensor of size {c._size} times a dense one "
                               f"of size {tuple(other.shape)}; the sizes must be equal")
        idx = tuple(c._idx)
        values = apply("MulBackward0", lambda v, d: v * d[idx], [values_of(c), other])
        return c._like(values)
    a, b = as_coo(input).coalesce(), as_coo(other).coalesce()
    if a._size != b._size:
        raise RuntimeError(f"mul: expected sizes of 'self' and 'other' to match, but "
                           f"{list(a._size)} != {list(b._size)}")
    _, ia, ib = np.intersect1d(coalesced_keys(a), coalesced_keys(b), assume_unique=True,
                               return_indices=True)
    values = apply("MulBackward0", lambda u, w: u[ia] * w[ib], [values_of(a), values_of(b)])
    return coo(values, a._idx[:, ia], a._size, True)


@row("div", "divide", "true_divide", "__truediv__")
def _div(input: Any, other: Any, *, rounding_mode: Any = None) -> SparseTensor:
    if not (_is_sparse(input) and _is_scalar(other)):
        shape = list(other.shape) if isinstance(other, Tensor) else []
        raise RuntimeError("Sparse division requires a scalar or zero-dim dense tensor "
                           f"divisor (got shape {shape} for divisor)")
    return _on_values(input, lambda v: FUNCTIONS["div"](v, other, rounding_mode=rounding_mode),
                      coalesce=False)


def _add_sparse(a: SparseTensor, b: SparseTensor, alpha: Any, node: str) -> SparseCoo:
    ca, cb = as_coo(a), as_coo(b)
    if ca._size != cb._size:
        raise RuntimeError(f"add: expected 'self' and 'other' to have same size, but self "
                           f"has size {list(ca._size)} while other has size "
                           f"{list(cb._size)} (FYI: dense-sparse addition does not currently "
                           "support broadcasting)")
    values = apply(node, lambda u, w: fnp.concatenate([u, alpha * w]),
                   [values_of(ca), values_of(cb)])
    return coo(values, np.concatenate([ca._idx, cb._idx], axis=1), ca._size,
               False).coalesce()


def _add_dense(d: Tensor, s: SparseTensor, alpha: Any, node: str) -> Tensor:
    c = as_coo(s)
    if tuple(d.shape) != c._size:
        raise RuntimeError(f"add: expected 'self' and 'other' to have same size, but self "
                           f"has size {list(d.shape)} while other has size {list(c._size)} "
                           "(FYI: dense-sparse addition does not currently support "
                           "broadcasting)")
    idx = tuple(c._idx)
    return apply(node, lambda x, v: x.at[idx].add(alpha * v), [d, values_of(c)])


def _add(input: Any, other: Any, alpha: Any, node: str) -> Any:
    if not _is_sparse(other):
        raise RuntimeError("add(sparse, dense) is not supported. Use add(dense, sparse) "
                           "instead.")
    if _is_sparse(input):
        return _add_sparse(input, other, alpha, node)
    if _unmasked(other):
        return FUNCTIONS["add"](input, dense_of(other), alpha=alpha)
    return _add_dense(input, other, alpha, node)


@row("add", "__add__")
def _add_op(input: Any, other: Any, *, alpha: Any = 1) -> Any:
    return _add(input, other, alpha, "AddBackward0")


@row("__radd__")
def _radd(self: SparseTensor, other: Any) -> Any:
    return _add(other, self, 1, "AddBackward0")


@row("sub", "subtract", "__sub__")
def _sub(input: Any, other: Any, *, alpha: Any = 1) -> Any:
    return _add(input, other, -alpha, "SubBackward0")


@row("__rsub__")
def _rsub(self: SparseTensor, other: Any) -> Any:
    return _add(other, self, -1, "SubBackward0")


@row("add_")
def _add_inplace(self: Tensor, other: Any, *, alpha: Any = 1) -> Tensor:
    """``dense.add_(sparse)``: the stored elements added into the dense memory (the
    optimizers' step with a sparse gradient)."""
    if _is_sparse(self):
        raise RuntimeError("add_: in-place addition into a sparse tensor is not supported "
                           "by funcgrad.torch; use out-of-place add")
    return self.copy_(_add_dense(self, other, alpha, "AddBackward0"))


@row("sub_", "subtract_")
def _sub_inplace(self: Tensor, other: Any, *, alpha: Any = 1) -> Tensor:
    return _add_inplace(self, other, alpha=-alpha)


# -- reductions and shape ---------------------------------------------------------------------

def _dims(dim: Any, ndim: int) -> tuple:
    dims = (dim,) if isinstance(dim, int) else tuple(dim)
    return tuple(sorted({d % ndim for d in dims}))


@row("sum")
def _sum(input: SparseTensor, dim: Any = None, keepdim: bool = False, *,
         dtype: Any = None) -> Tensor:
    """``Tensor.sum``: a sparse leaf's gradient is dense, as PyTorch's."""
    if _unmasked(input) and dim is None:
        return FUNCTIONS["sum"](dense_of(input), dtype=dtype)
    return sum(input, dim, dtype=dtype)


def sum(input: SparseTensor, dim: Any = None, dtype: Any = None) -> Tensor:
    """The sum over ``dim`` (all dims: a dense 0-d tensor); summing sparse dims only
    leaves a sparse tensor, summing every sparse dim a dense one (``torch.sparse.sum``:
    a sparse leaf's gradient is masked to its pattern)."""
    c = as_coo(input)
    values = values_of(c) if dtype is None else values_of(c).to(dtype)
    if dim is None or (not isinstance(dim, int) and len(dim) == 0):
        return apply("SumBackward0", fnp.sum, [values])
    sd = c.sparse_dim()
    dims = _dims(dim, c.ndim)
    sparse_dims = [d for d in dims if d < sd]
    dense_axes = tuple(d - sd + 1 for d in dims if d >= sd)
    if dense_axes:
        values = apply("SumBackward1", lambda v: fnp.sum(v, axis=dense_axes), [values])
    kept = [d for d in range(sd) if d not in sparse_dims]
    size = tuple(s for d, s in enumerate(c._size) if d not in dims)
    if not kept:
        return apply("SumBackward1", lambda v: fnp.sum(v, axis=0), [values])
    return coo(values, c._idx[kept], size, False).coalesce()


def _softmax(input: SparseTensor, dim: int, dtype: Any, log: bool) -> SparseCoo:
    """Softmax over each slice along sparse dim ``dim`` of the stored elements only (an
    absent element is -inf, as PyTorch's sparse softmax)."""
    c = as_coo(input).coalesce()
    if dtype is not None:
        c = c._like(values_of(c).to(dtype))
    dim %= c.ndim
    if dim >= c.sparse_dim():
        raise NotImplementedError("softmax: over a dense dimension of a sparse tensor")
    others = [d for d in range(c.sparse_dim()) if d != dim]
    if others:
        shape = tuple(c._size[d] for d in others)
        _, group = np.unique(np.ravel_multi_index(tuple(c._idx[others]), shape),
                             return_inverse=True)
    else:
        group = np.zeros(c._nnz(), np.int64)
    n = int(group.max()) + 1 if group.size else 0
    # each element's place within its slice: the slices padded into an (n, longest) grid,
    # whose row maxima are the shifts that keep exp from overflowing (as PyTorch's)
    order = np.argsort(group, kind="stable")
    counts = np.bincount(group, minlength=n)
    place = np.empty_like(group)
    place[order] = np.arange(len(group)) - np.repeat(np.cumsum(counts) - counts, counts)
    longest = int(counts.max()) if n else 0

    def f(v: Any) -> Any:
        grid = fnp.full((n, longest) + v.shape[1:], -fnp.inf, v.dtype).at[group, place].set(
            funcgrad.lax.stop_gradient(v))
        shifted = v - fnp.max(grid, axis=1)[group]
        total = fnp.zeros((n,) + v.shape[1:], v.dtype).at[group].add(fnp.exp(shifted))
        return shifted - fnp.log(total)[group] if log else fnp.exp(shifted) / total[group]
    node = "SparseLogSoftmaxBackward0" if log else "SparseSoftmaxBackward0"
    return c._like(apply(node, f, [values_of(c)]))


def softmax(input: SparseTensor, dim: int, dtype: Any = None) -> SparseCoo:
    return _softmax(input, dim, dtype, log=False)


def log_softmax(input: SparseTensor, dim: int, dtype: Any = None) -> SparseCoo:
    return _softmax(input, dim, dtype, log=True)


@row("t")
def _t(input: SparseTensor) -> SparseCoo:
    if input.ndim != 2:
        raise RuntimeError(f"t() expects a tensor with <= 2 sparse and 0 dense dimensions, "
                           f"but got {input.sparse_dim()} sparse and {input.dense_dim()} "
                           "dense dimensions")
    return _transpose(input, 0, 1)


@row("transpose", "swapaxes", "swapdims")
def _transpose(input: SparseTensor, dim0: int, dim1: int) -> SparseCoo:
    c = as_coo(input)
    sd = c.sparse_dim()
    d0, d1 = dim0 % c.ndim, dim1 % c.ndim
    if max(d0, d1) >= sd:
        raise NotImplementedError("transpose: funcgrad.torch transposes the sparse "
                                  "dimensions of a sparse tensor only")
    order = list(range(sd))
    order[d0], order[d1] = d1, d0
    size = list(c._size)
    size[d0], size[d1] = size[d1], size[d0]
    values = apply("TransposeBackward0" if (dim0, dim1) != (0, 1) else "TBackward0", _same,
                   [values_of(c)])
    return coo(values, c._idx[order], size, False)


def _same(v: Any) -> Any:
    return v


@row("to")
def _to(input: SparseTensor, *args: Any, **kwargs: Any) -> SparseTensor:
    dtype = kwargs.get("dtype") or next((a for a in args if isinstance(a, D.dtype)), None)
    for a in (*args, kwargs.get("device")):
        if a is not None and not isinstance(a, D.dtype) and D.device(a).type != "cpu":
            raise NotImplementedError("funcgrad.torch: sparse tensors live on the CPU")
    if dtype is None or dtype == input.dtype:
        return input
    return input._like(values_of(input).to(dtype))


def _cast(dtype: D.dtype) -> Callable:
    return lambda input, *args, **kwargs: _to(input, dtype)


for _name, _dtype in (("float", D.float32), ("double", D.float64), ("half", D.float16),
                      ("bfloat16", D.bfloat16), ("int", D.int32), ("long", D.int64),
                      ("bool", D.bool)):
    row(_name)(_cast(_dtype))


@row("clone")
def _clone(input: SparseTensor, *, memory_format: Any = None) -> SparseTensor:
    return input._like(values_of(input).clone())


@row("requires_grad_")
def _requires_grad(input: SparseTensor, requires_grad: bool = True) -> SparseTensor:
    return Tensor.requires_grad_(input, requires_grad)


@row("sparse_mask")
def sparse_mask(input: Tensor, mask: SparseTensor) -> SparseTensor:
    """The elements of dense ``input`` at ``mask``'s pattern (``Tensor.sparse_mask``)."""
    c = as_coo(mask)
    idx = tuple(c._idx)
    values = apply("SparseMaskBackward0", lambda x: x[idx], [input])
    out = c._like(values)
    return out if isinstance(mask, SparseCoo) else out.to_sparse_csr()
