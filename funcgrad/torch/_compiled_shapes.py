"""Dynamic shapes for ``torch.compile``: one program for every size of a dimension, where
the program allows it.

funcgrad's programs are traced per shape (`funcgrad.jit`'s signature holds the inputs'
shapes) and compiled to straight-line numpy, whose kernels take any size. A program
serves other sizes of a dimension exactly when nothing in it was computed from that size:
its source and every constant it holds (a reshape's target shape, a mean's divisor, an
``arange(n)`` made inside) are the same for two sizes. So a dimension becomes dynamic as
PyTorch's does (``dynamic=None``: after its size changed once, the second program traced
is compared with the first; ``dynamic=True``, or `mark_dynamic` on an argument: on the
first call, against the program lowered for the next size on meta arrays, which costs no
arithmetic), and where the two programs agree the one program runs for every later size of
that dimension (sizes 0 and 1 keep programs of their own, as PyTorch specializes them).
Where they differ, every size is traced anew, up to the recompile limit, as without
``dynamic``. The check covers the inference path (no input requires grad); a call that
records a backward node traces per shape.
"""
from __future__ import annotations

import functools
from typing import Any, Callable, Sequence

import numpy as np

from funcgrad.array import Array, buffer_of, new_array
from funcgrad.meta import ShapeDtypeStruct
from funcgrad.torch._tensor import Tensor

__all__ = ["mark_dynamic", "marked_dims", "Shapes", "run_forward"]

_MARK = "_dynamo_dynamic_indices"  # the attribute PyTorch's mark_dynamic sets, too


def mark_dynamic(t: Tensor, index: int | Sequence[int], **bounds: Any) -> None:
    """``torch._dynamo.mark_dynamic(t, index)``: programs compiled for ``t`` serve every
    size of its dimension(s) ``index`` where they can (``min``/``max`` are accepted)."""
    dims = [index] if isinstance(index, int) else list(index)
    for d in dims:
        if not -t.ndim <= d < t.ndim:
            raise IndexError(f"Dimension out of range (expected to be in range of "
                             f"[{-t.ndim}, {t.ndim - 1}], but got {d})")
    getattr(t, "__dict__").setdefault(_MARK, set()).update(d % t.ndim for d in dims)


def marked_dims(t: Any) -> frozenset:
    """The dimensions of ``t`` marked dynamic."""
    return frozenset(getattr(t, "__dict__", {}).get(_MARK, ())) if isinstance(
        t, Tensor) else frozenset()


def _avals(arrays: Sequence) -> tuple:
    return tuple((tuple(a.shape), a.dtype) if isinstance(a, Array) else type(a)
                 for a in arrays)


class Shapes:
    """One compiled function's dynamic dimensions (``dynamic``: None, True or False,
    torch.compile's argument): `find` the generic program for a call's arrays, `learn`
    from a call that traced a program."""

    def __init__(self, dynamic: bool | None):
        self.dynamic = dynamic
        # program key -> [(pattern of avals, program, avals checked -> whether it serves)]
        self.generic: dict = {}
        self.traced: dict = {}  # program key -> [(avals, program)] traced, none generic

    def find(self, key: tuple, arrays: list, lower: Callable) -> Callable | None:
        """The raw program serving ``arrays`` (host arrays) if one is generic in the
        dimensions where they differ from what it was traced for. Python code may branch
        on a size (``if x.shape[0] > 3``), which no program shows: so each new size is
        checked once, as a guard, by tracing the function on meta arrays of that size
        (``lower``: no arithmetic, no new program) and comparing the programs."""
        entries = self.generic.get(key)
        if not entries:
            return None
        avals = _avals(arrays)
        for pattern, program, checked in entries:
            if not _matches(pattern, avals) or not all(
                    type(a) is Array and type(buffer_of(a)) is np.ndarray for a in arrays):
                continue
            if avals not in checked:
                checked[avals] = _same(program, lower(_metas(avals)))
            if checked[avals]:
                return program.fn
        return None

    def learn(self, key: tuple, arrays: list, program: Any, lower: Callable,
              requested: dict) -> None:
        """After a call of ``key`` traced ``program`` (`compile.Program`) for ``arrays``.
        Its first program is compared with the one ``lower`` (meta arrays -> compiled
        program) gives for the next sizes of the ``requested`` dimensions (position ->
        dimensions: those marked, or with ``dynamic=True`` every input's); a later one
        (``dynamic=None``: sizes changed) with those traced before that no generic
        program serves."""
        if program is None or self.dynamic is False:
            return
        avals = _avals(arrays)
        if key not in self.traced:
            self.traced[key] = [(avals, program)]
            dims = {i: {d for d in ds if avals[i][0][d] > 1} for i, ds in requested.items()}
            dims = {i: ds for i, ds in dims.items() if ds}
            if dims and _same(program, lower(_next_sizes(avals, dims))):
                self._add(key, avals, dims, program)
            return
        for then, earlier in self.traced[key]:
            dims = _differing(then, avals)
            if earlier is not program and dims and _same(earlier, program):
                self._add(key, avals, dims, program)
                return
        self.traced[key].append((avals, program))

    def _add(self, key: tuple, avals: tuple, dims: dict, program: Any) -> None:
        """``program`` serves every size (at least 2) of the dimensions ``dims``."""
        pattern = tuple((tuple(None if d in dims.get(i, ()) else n
                               for d, n in enumerate(a[0])), a[1])
                        if isinstance(a, tuple) else a for i, a in enumerate(avals))
        self.generic.setdefault(key, []).append((pattern, program, {avals: True}))


def _next_sizes(avals: tuple, dims: dict) -> list:
    """Meta arrays of ``avals`` with the sizes of ``dims`` (position -> dimensions) one
    larger."""
    return _metas(tuple((tuple(n + (d in dims.get(i, ())) for d, n in enumerate(a[0])),
                         a[1]) if isinstance(a, tuple) else a
                        for i, a in enumerate(avals)))


def _metas(avals: tuple) -> list:
    return [ShapeDtypeStruct(*a) if isinstance(a, tuple) else a for a in avals]


def run_forward(program: Any, key: tuple, arrays: list, inputs: range, leaves: list
                ) -> list:
    """The outputs of ``program``'s (`funcgrad.torch.jit._Program`) forward program on
    ``arrays``, of ``key``'s program: a generic one where one serves them, else the
    jitted one, from which a call that traced learns (the arrays at positions
    ``inputs`` are the function's arguments ``leaves``, the others its state)."""
    shapes = program.shapes

    def lower(metas: list) -> Any:
        return program.lowered_quietly(key, metas).compile()
    raw = shapes.find(key, arrays, lower)
    if raw is not None:
        return [new_array(o) for o in raw(*map(buffer_of, arrays))]
    traced = program.traced
    outs = program.forward(*key, *arrays)
    if program.traced == traced:
        return outs
    requested = {i: frozenset(range(arrays[i].ndim)) if shapes.dynamic else
                 marked_dims(leaves[i - inputs.start]) for i in inputs
                 if isinstance(arrays[i], Array)}
    shapes.learn(key, arrays, program.forward.executable(*key, *arrays), lower,
                 {i: ds for i, ds in requested.items() if ds})
    return outs


def _matches(pattern: tuple, avals: tuple) -> bool:
    """Whether ``avals`` fit ``pattern`` (None: any size of at least 2)."""
    if len(pattern) != len(avals):
        return False
    for p, a in zip(pattern, avals):
        if not isinstance(p, tuple):
            if p is not a:
                return False
            continue
        if not isinstance(a, tuple) or p[1] != a[1] or len(p[0]) != len(a[0]):
            return False
        if any(n != m if n is not None else m < 2 for n, m in zip(p[0], a[0])):
            return False
    return True


def _differing(then: tuple, now: tuple) -> dict:
    """position -> dimensions whose sizes differ (both at least 2), if nothing but sizes
    differs; else {}."""
    if len(then) != len(now):
        return {}
    out: dict = {}
    for i, (a, b) in enumerate(zip(then, now)):
        if not isinstance(a, tuple) or not isinstance(b, tuple):
            if a is not b:
                return {}
            continue
        if a[1] != b[1] or len(a[0]) != len(b[0]):
            return {}
        dims = {d for d, (n, m) in enumerate(zip(a[0], b[0])) if n != m}
        if any(a[0][d] < 2 or b[0][d] < 2 for d in dims):
            return {}
        if dims:
            out[i] = dims
    return out


def _same(p: Any, q: Any) -> bool:
    """Whether two compiled programs are one program: the same source and the same
    values bound to its names (the implementations' parameters, the constants)."""
    if p.source != q.source:
        return False
    g, h = p.fn.__globals__, q.fn.__globals__
    return g.keys() == h.keys() and all(
        _same_value(g[k], h[k]) for k in g if k not in ("__builtins__", "program"))


def _same_value(a: Any, b: Any) -> bool:
    """Whether two values bound in compiled programs are equal (arrays by value)."""
    if type(a) is not type(b):
        return False
    if isinstance(a, functools.partial):
        return a.func is b.func and _same_value((a.args, a.keywords), (b.args, b.keywords))
    if isinstance(a, (tuple, list)):
        return len(a) == len(b) and all(map(_same_value, a, b))
    if isinstance(a, dict):
        return a.keys() == b.keys() and all(_same_value(a[k], b[k]) for k in a)
    if isinstance(a, (np.ndarray, np.generic, Array)):
        x, y = (np.asarray(buffer_of(v) if isinstance(v, Array) else v) for v in (a, b))
        return x.dtype == y.dtype and x.shape == y.shape and np.array_equal(x, y)
    try:
        return bool(a is b or a == b)
    except (TypeError, ValueError):
        return False
