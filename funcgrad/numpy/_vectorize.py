"""``vectorize`` and ``ufunc``/``frompyfunc``: Python functions of scalars (or of core
sub-arrays, with a gufunc ``signature``) applied over broadcast arrays.

funcgrad has no vmap yet, so the function is called once per element (or core slice), on
0-d Arrays taken from the inputs by indexing, and the results are stacked: what the
function computes is traced like any other funcgrad code, so the result is differentiable.
It is a loop in Python, meant for convenience rather than speed.
"""
from __future__ import annotations

import re
from typing import Any, Callable, Sequence

import numpy as np

from funcgrad.array import Array
from funcgrad.numpy._creation import asarray, astype, full
from funcgrad.numpy._indexing import getitem
from funcgrad.numpy._manipulation import refuse_in_place
from funcgrad.numpy._reductions import normalize_axis_tuple
from funcgrad.numpy._shape import broadcast_to, moveaxis, ravel, reshape, stack

__all__ = ["vectorize", "ufunc", "frompyfunc"]

_DIM = r"\w+"
_ARGS = rf"\((?:{_DIM}(?:,{_DIM})*)?\)"
_SIGNATURE = re.compile(rf"^{_ARGS}(?:,{_ARGS})*->{_ARGS}(?:,{_ARGS})*$")


def _parse_signature(signature: str) -> tuple[list, list]:
    """'(m,n),(n)->(m)' as ([('m', 'n'), ('n',)], [('m',)])."""
    text = signature.replace(" ", "")
    if not _SIGNATURE.match(text):
        raise ValueError(f"not a valid gufunc signature: {signature}")
    ins, outs = text.split("->")
    parse = lambda part: [tuple(re.findall(_DIM, g)) for g in re.findall(_ARGS, part)]  # noqa: E731
    return parse(ins), parse(outs)


class vectorize:
    """``pyfunc`` broadcast over its array arguments, as numpy.vectorize: element by
    element, or over core dimensions given by ``signature`` ('(n),(n)->()'). Arguments
    in ``excluded`` (positions or keyword names) are passed through unchanged; ``otypes``
    fixes the output dtypes (needed for empty inputs)."""

    def __init__(self, pyfunc: Callable, otypes: Any = None, doc: str | None = None,
                 excluded: Any = None, cache: bool = False, signature: str | None = None):
        self.pyfunc = pyfunc
        self.otypes = None if otypes is None else [np.dtype(t) for t in (
            list(otypes) if not isinstance(otypes, str) else list(otypes))]
        self.excluded = set(excluded or ())
        self.signature = signature
        self._core = None if signature is None else _parse_signature(signature)
        self.__doc__ = doc if doc is not None else getattr(pyfunc, "__doc__", None)

    def __call__(self, *args: Any, **kwargs: Any) -> Any:
        positions = [i for i in range(len(args)) if i not in self.excluded]
        names = [k for k in kwargs if k not in self.excluded]
        arrays = [asarray(args[i]) for i in positions] + [asarray(kwargs[k]) for k in names]

        def call(*vals: Any) -> Any:
            full_args = list(args)
            for i, v in zip(positions, vals):
                full_args[i] = v
            kw = dict(kwargs)
            kw.update(zip(names, vals[len(positions):]))
            return self.pyfunc(*full_args, **kw)

        if self._core is None:
            return self._elementwise(call, arrays)
        return self._generalized(call, arrays)

    def _elementwise(self, call: Callable, arrays: list) -> Any:
        shape = np.broadcast_shapes(*(a.shape for a in arrays))
        flat = [ravel(broadcast_to(a, shape)) for a in arrays]
        size = int(np.prod(shape))
        if size == 0:
            return self._empty(shape, ())
        results = [call(*(getitem(f, i) for f in flat)) for i in range(size)]
        return self._assemble(results, shape)

    def _generalized(self, call: Callable, arrays: list) -> Any:
        ins, outs = self._core
        if len(arrays) != len(ins):
            raise TypeError(f"wrong number of positional arguments: expected {len(ins)}, "
                            f"got {len(arrays)}")
        sizes: dict = {}
        loops = []
        for a, dims in zip(arrays, ins):
            if a.ndim < len(dims):
                raise ValueError(f"{a.ndim}-dimensional argument does not have enough "
                                 f"dimensions for all core dimensions {dims}")
            core = a.shape[a.ndim - len(dims):]
            for d, n in zip(dims, core):
                if sizes.setdefault(d, n) != n:
                    raise ValueError(f"inconsistent size for core dimension {d!r}: "
                                     f"{n} vs {sizes[d]}")
            loops.append(a.shape[:a.ndim - len(dims)])
        loop = np.broadcast_shapes(*loops)
        grown = [reshape(broadcast_to(a, loop + a.shape[len(s):]), (-1,) + a.shape[len(s):])
                 for a, s in zip(arrays, loops)]
        count = int(np.prod(loop))
        if count == 0:
            return self._empty(loop, tuple(tuple(sizes.get(d, 0) for d in o) for o in outs))
        results = [call(*(g[i] for g in grown)) for i in range(count)]
        return self._assemble(results, loop)

    def _assemble(self, results: list, shape: tuple) -> Any:
        multi = isinstance(results[0], tuple)
        columns = list(zip(*results)) if multi else [results]
        outs = []
        for k, col in enumerate(columns):
            out = stack([asarray(r) for r in col])
            out = reshape(out, shape + out.shape[1:])
            if self.otypes is not None:
                out = astype(out, self.otypes[k])
            outs.append(out)
        return tuple(outs) if multi else outs[0]

    def _empty(self, shape: tuple, cores: tuple) -> Any:
        if self.otypes is None:
            raise ValueError("cannot call `vectorize` on size 0 inputs unless `otypes` is "
                             "set")
        cores = cores or ((),) * len(self.otypes)
        outs = tuple(full(shape + c, 0, t) for c, t in zip(cores, self.otypes))
        return outs if len(outs) > 1 else outs[0]


class ufunc:
    """A Python function of ``nin`` scalars made a numpy-style ufunc (JAX's
    ``jnp.ufunc``): called elementwise with broadcasting, with ``outer``, and for binary
    functions ``reduce``, ``accumulate`` and the functional ``at`` (inplace=False)."""

    def __init__(self, func: Callable, /, nin: int, nout: int, *, name: str | None = None,
                 identity: Any = None):
        self.func, self.nin, self.nout, self.identity = func, nin, nout, identity
        self.nargs = nin + nout
        self.__name__ = name or getattr(func, "__name__", "ufunc")
        self._call = vectorize(func)

    def __repr__(self) -> str:
        return f"<funcgrad.numpy.ufunc '{self.__name__}'>"

    def __call__(self, *args: Any) -> Any:
        if len(args) != self.nin:
            raise TypeError(f"{self.__name__}() takes {self.nin} positional arguments but "
                            f"{len(args)} were given")
        return self._call(*args)

    def outer(self, a: Any, b: Any) -> Any:
        """f(a[i..., None...], b[None..., j...]) for every pair of elements."""
        self._binary("outer")
        a, b = asarray(a), asarray(b)
        return self(reshape(a, a.shape + (1,) * b.ndim), b)

    def _binary(self, method: str) -> None:
        if self.nin != 2 or self.nout != 1:
            raise ValueError(f"{method} only supported for binary functions with one "
                             "output")

    def reduce(self, a: Any, axis: Any = 0, dtype: Any = None, keepdims: bool = False,
               initial: Any = None) -> Array:
        """Fold f over ``axis``: f(...f(f(a0, a1), a2)..., an-1)."""
        self._binary("reduce")
        a = asarray(a) if dtype is None else astype(a, dtype)
        if axis is None:
            a, axis = ravel(a), 0
        ax = normalize_axis_tuple(axis, a.ndim)[0]
        moved = moveaxis(a, ax, 0)
        start = initial if initial is not None else self.identity
        if moved.shape[0] == 0 and start is None:
            raise ValueError(f"zero-size array to reduction operation {self.__name__} "
                             "which has no identity")
        acc = moved[0] if start is None else self(full(moved.shape[1:], start, a.dtype),
                                                  moved[0])
        for i in range(1, moved.shape[0]):
            acc = self(acc, moved[i])
        acc = asarray(acc)
        return reshape(acc, tuple(1 if i == ax else n for i, n in enumerate(a.shape))) \
            if keepdims else acc

    def accumulate(self, a: Any, axis: int = 0, dtype: Any = None) -> Array:
        """The running fold of f along ``axis``."""
        self._binary("accumulate")
        a = asarray(a) if dtype is None else astype(a, dtype)
        ax = normalize_axis_tuple(axis, a.ndim)[0]
        moved = moveaxis(a, ax, 0)
        if moved.shape[0] == 0:
            return a
        acc = [asarray(moved[0])]
        for i in range(1, moved.shape[0]):
            acc.append(asarray(self(acc[-1], moved[i])))
        return moveaxis(stack(acc), 0, ax)

    def at(self, a: Any, indices: Any, b: Any = None, /, *, inplace: bool = True) -> Array:
        """A copy of ``a`` with f applied at ``indices`` (with ``b``), repeated indices
        applied in turn; ``inplace=False`` is required."""
        refuse_in_place(f"ufunc.at ({self.__name__})", inplace)
        a = asarray(a)
        flat_index = np.ravel_multi_index(np.indices(a.shape), a.shape)
        chosen = np.asarray(flat_index[_concrete_index(indices)]).ravel()
        out = ravel(a)
        others = None if b is None else ravel(broadcast_to(asarray(b), (chosen.size,)))
        for k, pos in enumerate(chosen):
            value = self(out[pos]) if others is None else self(out[pos], others[k])
            out = out.at[int(pos)].set(value)
        return reshape(out, a.shape)

    def reduceat(self, a: Any, indices: Sequence, axis: int = 0) -> Array:
        """Reductions over the slices between consecutive ``indices`` along axis."""
        self._binary("reduceat")
        a = asarray(a)
        ax = normalize_axis_tuple(axis, a.ndim)[0]
        n = a.shape[ax]
        idx = [int(i) for i in indices]
        pieces = []
        for k, start in enumerate(idx):
            stop = idx[k + 1] if k + 1 < len(idx) else n
            part = getitem(a, (slice(None),) * ax + (slice(start, stop if stop > start
                                                            else start + 1),))
            pieces.append(self.reduce(part, ax))
        return moveaxis(stack(pieces), 0, ax)


def _concrete_index(indices: Any) -> Any:
    if isinstance(indices, Array):
        return indices.concrete().to_numpy()
    if isinstance(indices, tuple):
        return tuple(_concrete_index(i) for i in indices)
    return indices


def frompyfunc(func: Callable, /, nin: int, nout: int, *, identity: Any = None) -> ufunc:
    """``func`` as a `ufunc` of nin inputs and nout outputs."""
    return ufunc(func, nin, nout, identity=identity)
