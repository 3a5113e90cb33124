"""Reverse mode: `vjp`, `grad`, `value_and_grad`.

`vjp` runs the function once under a `RevTrace`, keeps the tape, and returns a function
that runs the backward pass for any output cotangent. `grad` is `vjp` with the cotangent 1
of a scalar output, consuming the tape as it goes (residuals are freed record by record).
"""
from __future__ import annotations

import copy
import dataclasses
import functools
import types
from typing import Any, Callable, Iterable, Sequence

import numpy as np

import funcgrad.numpy as fnp
from funcgrad import tree_util
from funcgrad.array import Array, is_weak, weakened
from funcgrad.core import Tracer, is_inexact
from funcgrad.dtypes import is_floating
from funcgrad.ref import Ref, addupdate
from .tape import Aux, Tape, trace_flat

__all__ = ["vjp", "grad", "value_and_grad", "float0", "VJPFunction", "NotNeeded", "GradValue", "GradRef",
           "DontWant", "DidntWant", "ad"]

float0 = np.dtype([("float0", np.void, 0)])
"""The dtype of the cotangent of an integer or boolean input (as in JAX)."""


def _as_array(x: Any) -> Array:
    return x if isinstance(x, Array) else fnp.asarray(x)


@dataclasses.dataclass(frozen=True)
class NotNeeded:
    """JAX's placeholder in `VJPFunction.args_res` for an input the backward pass does not
    keep (an empty pytree, so it crosses `jit` like the residuals beside it)."""


@dataclasses.dataclass(frozen=True)
class GradValue:
    """A `VJPFunction.with_refs` entry: return this input's cotangent (the default)."""


@dataclasses.dataclass(frozen=True)
class GradRef:
    """What `VJPFunction.with_refs` returns for an input whose cotangent went into a ref."""


@dataclasses.dataclass(frozen=True)
class DontWant:
    """A `VJPFunction.with_refs` entry: this input's cotangent is not wanted."""


@dataclasses.dataclass(frozen=True)
class DidntWant:
    """What `VJPFunction.with_refs` returns for an input given `DontWant`."""


for _empty in (NotNeeded, GradRef, DidntWant):  # (empty pytrees, as JAX's dataclasses)
    tree_util.register_pytree_node(_empty, lambda n: ((), None),
                                   lambda aux, children, cls=_empty: cls())

ad = types.SimpleNamespace(DontWant=DontWant, DidntWant=DidntWant, GradRef=GradRef,
                           GradValue=GradValue)
"""JAX's ``jax.ad`` namespace: the entries and placeholders of `VJPFunction.with_refs`."""


class VJPFunction:
    """The backward half of `vjp`: call it with a cotangent shaped like the output.

    It owns the tape; dropping it frees every residual (no reference cycles)."""

    def __init__(self, name: str, tape: Tape, in_leaves: list, out_leaves: list,
                 consume: bool):
        self.name = name
        self.tape = tape
        self.in_avals = [(tuple(x.shape), x.dtype) for x in in_leaves]
        self.in_devices = [x.device for x in in_leaves]
        self.out_avals = [(tuple(x.shape), x.dtype) for x in out_leaves]
        self.consume = consume
        self.used = False
        self._in_ids = [id(x) for x in in_leaves]  # (ints: keeps no input alive)
        self._arg_positions: list | None = None
        self.template: VJPFunction | None = None  # (None: itself; no reference cycle)

    def _cotangents(self, cotangent: Any) -> list:
        """The flat output cotangents, checked against the outputs and cast to their dtype
        (float0 cotangents of integer outputs become None)."""
        ct_leaves, ct_tree = tree_util.tree_flatten(cotangent)
        if ct_tree != self.tape.out_tree:
            raise TypeError(f"{self.name}: the cotangent has tree structure {ct_tree}, but "
                            f"the function's output has {self.tape.out_tree}")
        cts = []
        for k, (c, (shape, dtype)) in enumerate(zip(ct_leaves, self.out_avals)):
            c = _as_array(c)
            if tuple(c.shape) != tuple(shape):
                raise ValueError(f"{self.name}: cotangent leaf {k} has shape "
                                 f"{tuple(c.shape)}, but the output has shape {tuple(shape)}")
            if c.dtype.kind == "c" and dtype.kind != "c":
                raise TypeError(f"{self.name}: cotangent leaf {k} has complex dtype "
                                f"{c.dtype}, but the output is real ({dtype}); a real "
                                "output's cotangent must be real")
            if c.dtype == float0 or not is_inexact(dtype):
                cts.append(None)
            else:
                cts.append(c if c.dtype == dtype else c.astype(dtype))
        return cts

    def __call__(self, cotangent: Any) -> tuple:
        cts = self._cotangents(cotangent)
        if self.consume and self.used:
            raise RuntimeError(f"{self.name}: this backward function has already run and "
                               "its residuals were freed")
        self.used = True
        grads = self.tape.backward(cts, consume=self.consume)
        out = []
        for g, (shape, dtype), device in zip(grads, self.in_avals, self.in_devices):
            if dtype.kind not in "fc" and not is_inexact(dtype):  # (floats: no call)
                out.append(np.zeros(shape, dtype=float0))
            elif g is None:
                out.append(fnp.zeros(shape, dtype, device=device))
            else:
                out.append(g)
        return self.tape.in_tree.unflatten(out)

    def with_refs(self, *maybe_ct_refs: Any) -> Callable:
        """JAX's ``f_vjp.with_refs(...)``: one entry per primal, a `Ref` (its cotangent is
        added into the ref, `GradRef()` returned in its place), `GradValue()` (returned)
        or `DontWant()` (`DidntWant()` returned). The cotangents are computed densely."""
        if len(maybe_ct_refs) != len(self.tape.in_tree.children()):
            raise TypeError(f"with_refs takes one entry per argument of the differentiated "
                            f"function ({len(self.tape.in_tree.children())}), got "
                            f"{len(maybe_ct_refs)}")

        def apply(cotangent: Any) -> tuple:
            out = []
            for g, want in zip(self(cotangent), maybe_ct_refs):
                if isinstance(want, Ref):
                    addupdate(want, ..., g)
                out.append(GradRef() if isinstance(want, Ref) else
                           DidntWant() if isinstance(want, DontWant) else g)
            return tuple(out)
        return apply

    def arg_positions(self) -> list:
        """For each input leaf, where the tape holds it among `Tape.held_values` (None where
        it is not held). Found once, by identity, while the inputs traced are the held
        values; copies made by unflattening share the answer."""
        if self._arg_positions is None:
            where = {id(v): i for i, v in enumerate(self.tape.held_values())}
            self._arg_positions = [where.get(i) for i in self._in_ids]
        return self._arg_positions

    @property
    def args_res(self) -> list:
        """As JAX's ``f_vjp.args_res``: one entry per primal, shaped like it with its
        containers as tuples, holding each input the backward pass keeps as a residual and
        `NotNeeded()` for each one it does not."""
        held = self.tape.held_values()
        leaves = iter([NotNeeded() if i is None else held[i] for i in self.arg_positions()])

        def walk(tree: Any) -> Any:
            kids = tree.children()
            return next(leaves) if not kids and tree.num_leaves == 1 else \
                tuple(walk(k) for k in kids)

        return list(walk(self.tape.in_tree))


def _flatten_vjp_function(f: VJPFunction) -> tuple[list, VJPFunction]:
    # the node data is the function first traced, which its copies share, so that the
    # copies a cached `jit` returns flatten to equal structures (and `bwd` compiles once)
    return f.tape.held_values(), f.template or f


def _unflatten_vjp_function(f: VJPFunction, values: Iterable) -> VJPFunction:
    f.arg_positions()  # (on the original, whose held values are the traced inputs)
    new = copy.copy(f)
    new.template = f  # (the node data: the function first traced)
    new.tape = f.tape.with_held_values(iter(values))
    new.used = False
    return new


# As JAX's: a vjp function is a pytree whose leaves are its residuals, so that it can be
# returned from `jit`, passed through `vmap` or `tree_map`, or kept as a custom rule's residual
tree_util.register_pytree_node(VJPFunction, _flatten_vjp_function, _unflatten_vjp_function)


def _vjp(fun: Callable, primals: Sequence, has_aux: bool, name: str, consume: bool,
         check: Callable[[list], None] | None = None):
    leaves, in_tree = tree_util.tree_flatten(tuple(primals))
    leaves = [_as_array(x) for x in leaves]
    if check is not None:
        check(leaves)
    out_tree: list = []

    def flat(*tracers: Any) -> list:
        out = fun(*in_tree.unflatten(tracers))
        if has_aux:
            if not (isinstance(out, (tuple, list)) and len(out) == 2):
                raise TypeError(f"{name} with has_aux=True expects the function to return a "
                                f"pair (output, auxiliary data); it returned {type(out)}")
            out, a = out
            out_leaves, tree = tree_util.tree_flatten(out)
            out_tree.append(tree)
            return out_leaves, Aux(a)
        out_leaves, tree = tree_util.tree_flatten(out)
        out_tree.append(tree)
        return out_leaves

    tape, out_leaves, *aux = trace_flat(flat, leaves, name)
    tape.in_tree, tape.out_tree = in_tree, out_tree[0]
    out_leaves = [_as_array(o) for o in out_leaves]
    aux_value = aux[0] if aux else None
    vjp_fn = VJPFunction(name, tape, leaves, out_leaves, consume)
    return out_tree[0].unflatten(out_leaves), vjp_fn, aux_value


def vjp(fun: Callable, *primals: Any, has_aux: bool = False) -> tuple:
    """``(out, vjp_fn)`` (``(out, vjp_fn, aux)`` with ``has_aux``): ``vjp_fn(ct)`` returns
    the cotangents of ``primals`` (a tuple) for an output cotangent ``ct`` shaped like
    ``out``. ``vjp_fn`` may be called many times; the tape lives as long as it does."""
    out, vjp_fn, aux = _vjp(fun, primals, has_aux, "vjp", consume=False)
    return (out, vjp_fn, aux) if has_aux else (out, vjp_fn)


def linear_transpose(fun: Callable, *primals: Any, reduce_axes: tuple = ()) -> Callable:
    """The transpose of the linear function ``fun`` (JAX's ``jax.linear_transpose``):
    ``transposed(ct)`` returns the tuple of input cotangents that ``ct``, shaped like the
    output, pulls back. ``primals`` give only the inputs' shapes and dtypes. A linear map's
    VJP is its transpose at every point, so this is ``fun``'s VJP at zero; ``fun`` is
    checked to be linear there (f(0) = 0, and f(a + b) = f(a) + f(b) on two fixed draws
    when the values are concrete), so that a non-linear function raises rather than
    giving its derivative at zero."""
    if reduce_axes:
        raise NotImplementedError("linear_transpose: reduce_axes is not supported")
    leaves, tree = tree_util.tree_flatten(primals)
    zeros = tree.unflatten([fnp.zeros(np.shape(x), fnp.result_type(x)) for x in leaves])
    _check_linear(fun, leaves, tree, zeros)
    _, pullback = vjp(fun, *zeros)

    def transposed(out_cotangent: Any) -> tuple:
        return pullback(out_cotangent)
    return transposed


def _check_linear(fun: Callable, leaves: list, tree: Any, zeros: tuple) -> None:
    at_zero = tree_util.tree_leaves(fun(*zeros))
    if any(isinstance(x, Tracer) for x in leaves + at_zero):
        return  # (abstract values cannot be compared; JAX's check is at transposition)
    rng = np.random.RandomState(0)
    a, b = ([rng.standard_normal(np.shape(x)).astype(fnp.result_type(x)) for x in leaves]
            for _ in range(2))
    fa, fb, fab = (tree_util.tree_leaves(fun(*tree.unflatten(v)))
                   for v in (a, b, [x + y for x, y in zip(a, b)]))
    linear = all(np.allclose(z, 0) for z in at_zero) and all(
        np.allclose(s, x + y, rtol=1e-4, atol=1e-5) for s, x, y in zip(fab, fa, fb))
    if not linear:
        raise TypeError("linear_transpose: fun is not linear in its inputs (f(0) != 0 or "
                        "f(a + b) != f(a) + f(b)); use vjp for the transpose of its "
                        "derivative at a point")


def _check_argnums(argnums: int | Sequence[int], nargs: int, name: str) -> tuple:
    nums = (argnums,) if isinstance(argnums, int) else tuple(argnums)
    for n in nums:
        if not isinstance(n, (int, np.integer)) or not -nargs <= n < nargs:
            raise TypeError(f"{name}: argnums={argnums!r} is out of range for a call with "
                            f"{nargs} positional argument(s)")
    nums = tuple(int(n) % nargs for n in nums)
    if len(set(nums)) != len(nums):
        raise ValueError(f"{name}: argnums={argnums!r} names an argument more than once; "
                         "each positional argument can be differentiated once (to "
                         "differentiate one value twice, pass it as two arguments)")
    return nums


def argnums_partial(fun: Callable, argnums: int | Sequence[int], args: tuple, kwargs: dict,
                    name: str) -> tuple[Callable, list]:
    """``fun`` as a function of the arguments ``argnums`` alone (the others fixed at
    ``args``), and those arguments: what differentiating with respect to them traces."""
    nums = _check_argnums(argnums, len(args), name)

    def partial(*dyn_args: Any) -> Any:
        full = list(args)
        for i, a in zip(nums, dyn_args):
            full[i] = a
        return fun(*full, **kwargs)

    return partial, [args[i] for i in nums]


def _check_inputs(x: Any, allow_int: bool, holomorphic: bool, name: str) -> None:
    """Differentiable inputs are float or complex (or complex for ``holomorphic``)."""
    _check_leaves([_as_array(leaf) for leaf in tree_util.tree_leaves(x)], allow_int,
                  holomorphic, name)


def _weak_as(primal: Any, cotangent: Any) -> Any:
    return weakened(cotangent) if type(cotangent) is Array and is_weak(primal) else cotangent


def _check_leaves(leaves: list, allow_int: bool, holomorphic: bool, name: str,
                  weak: list | None = None) -> None:
    """Refuse what the gradient is not defined for; note in ``weak`` whether an input is
    weakly typed (its gradient is then weak too)."""
    for leaf in leaves:
        if weak is not None and type(leaf) is not Array and is_weak(leaf):
            weak.append(True)
        dtype = leaf.dtype
        if holomorphic and dtype.kind != "c":
            raise TypeError(f"{name} with holomorphic=True requires inputs with complex "
                            f"dtype, but got {dtype}.")
        if not allow_int and dtype.kind not in "fc" and not is_inexact(dtype):
            raise TypeError(f"{name} requires real- or complex-valued inputs (input dtype "
                            f"that is a sub-dtype of np.inexact), but got {dtype}. If you "
                            "want to use Boolean- or integer-valued inputs, use vjp or set "
                            "allow_int to True.")


def value_and_grad(fun: Callable, argnums: int | Sequence[int] = 0, has_aux: bool = False,
                   holomorphic: bool = False, allow_int: bool = False) -> Callable:
    """``f -> (lambda *args: (f(*args), grad f(*args)))`` in one forward and one backward
    pass. With ``has_aux`` it returns ``((value, aux), grad)``."""
    name = f"value_and_grad({getattr(fun, '__name__', 'fun')})"

    @functools.wraps(fun)
    def value_and_grad_f(*args: Any, **kwargs: Any) -> tuple:
        partial, dyn = argnums_partial(fun, argnums, args, kwargs, name)
        weak: list = []
        out, vjp_fn, aux = _vjp(partial, dyn, has_aux, name, consume=True,
                                check=lambda leaves: _check_leaves(leaves, allow_int,
                                                                   holomorphic, name, weak))
        if not isinstance(out, (Array, Tracer)):
            raise TypeError(f"Gradient only defined for scalar-output functions. Output was "
                            f"{out!r}.")
        if out.shape != ():
            raise TypeError(f"Gradient only defined for scalar-output functions. Output had "
                            f"shape: {tuple(out.shape)}. Reduce it to a scalar first (for "
                            "example with .sum()), or use jacrev / vjp for the derivative of "
                            "a non-scalar output.")
        if not holomorphic and not is_floating(out.dtype):
            raise TypeError(f"{name} requires real-valued outputs (output dtype that is a "
                            f"sub-dtype of np.floating), but got {out.dtype}. For "
                            "holomorphic differentiation, pass holomorphic=True.")
        g = vjp_fn(fnp.ones_like(out))
        if weak:  # JAX's cotangent has its primal's type, weakness included
            g = tree_util.tree_map(_weak_as, tuple(dyn), tuple(g))
        g = g[0] if isinstance(argnums, int) else tuple(g)
        return ((out, aux) if has_aux else out), g

    return value_and_grad_f


def grad(fun: Callable, argnums: int | Sequence[int] = 0, has_aux: bool = False,
         holomorphic: bool = False, allow_int: bool = False) -> Callable:
    """The gradient of a scalar-valued ``fun`` with respect to the positional argument(s)
    ``argnums`` (int: that argument's gradient; tuple: a tuple of them). Arguments may be
    pytrees. With ``has_aux`` the function returns ``(value, aux)`` and the gradient
    function returns ``(grad, aux)``."""
    vg = value_and_grad(fun, argnums, has_aux, holomorphic, allow_int)

    @functools.wraps(fun)
    def grad_f(*args: Any, **kwargs: Any) -> Any:
        (value, g) = vg(*args, **kwargs)
        return (g, value[1]) if has_aux else g

    return grad_f
