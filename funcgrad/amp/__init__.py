"""funcgrad.amp: mixed precision for functional code, as pure functions and values.

A functional program has no region to switch on: what runs in low precision is said
explicitly, with a `Policy` (the dtypes of parameters, of computation and of outputs, as
in DeepMind's jmp for JAX)::

    policy = amp.get_policy("params=float32,compute=bfloat16,output=float32")
    def loss(params, x, y):
        p, x = policy.cast_to_compute((params, x))     # differentiable casts
        return policy.cast_to_output(mse(net(p, x), y))

    grads = funcgrad.grad(loss)(params, x, y)          # float32, like the params

``policy.wrap(fn)`` does both casts around a function. Loss scaling keeps small float16
gradients from underflowing: `StaticLossScale`, `DynamicLossScale` (immutable: ``adjust``
returns the next one; PyTorch's GradScaler rule: back off on a non-finite gradient, grow
after ``period`` finite steps), `NoOpLossScale`; `all_finite` and `select_tree` skip an
update whose gradients overflowed. `update_scale` is that rule on its own; the facade's
``torch.amp.GradScaler`` uses it.
"""
from __future__ import annotations

from typing import Any, Callable, NamedTuple

import numpy as np

import funcgrad.numpy as fnp
from funcgrad import tree_util
from funcgrad.array import Array
from funcgrad.dtypes import canonical_dtype, is_floating

__all__ = ["Policy", "get_policy", "cast_tree", "all_finite", "select_tree",
           "NoOpLossScale", "StaticLossScale", "DynamicLossScale", "update_scale"]

_NAMES = {"f16": "float16", "half": "float16", "float16": "float16", "bf16": "bfloat16",
          "bfloat16": "bfloat16", "f32": "float32", "float": "float32", "float32": "float32",
          "full": "float32", "f64": "float64", "float64": "float64"}
_KEYS = {"p": "param_dtype", "params": "param_dtype", "param": "param_dtype",
         "c": "compute_dtype", "compute": "compute_dtype", "o": "output_dtype",
         "output": "output_dtype"}


def cast_tree(tree: Any, dtype: Any) -> Any:
    """``tree`` with every floating array leaf cast to ``dtype`` (integers, booleans and
    complex values unchanged); the casts are differentiable."""
    dtype = canonical_dtype(dtype)

    def cast(leaf: Any) -> Any:
        d = getattr(leaf, "dtype", None)
        if d is None or not is_floating(d) or d == dtype:
            return leaf
        return fnp.astype(leaf, dtype)
    return tree_util.tree_map(cast, tree)


class Policy(NamedTuple):
    """Dtypes of the parameters, of the computation and of the outputs."""
    param_dtype: np.dtype
    compute_dtype: np.dtype
    output_dtype: np.dtype

    def cast_to_param(self, tree: Any) -> Any:
        return cast_tree(tree, self.param_dtype)

    def cast_to_compute(self, tree: Any) -> Any:
        return cast_tree(tree, self.compute_dtype)

    def cast_to_output(self, tree: Any) -> Any:
        return cast_tree(tree, self.output_dtype)

    def with_output_dtype(self, output_dtype: Any) -> "Policy":
        return self._replace(output_dtype=canonical_dtype(output_dtype))

    def wrap(self, fn: Callable) -> Callable:
        """``fn`` with its inputs cast to the compute dtype and its outputs to the output
        dtype."""
        def wrapped(*args: Any, **kwargs: Any) -> Any:
            return self.cast_to_output(fn(*self.cast_to_compute(args),
                                          **self.cast_to_compute(kwargs)))
        wrapped.__name__ = getattr(fn, "__name__", "wrapped")
        wrapped.__doc__ = getattr(fn, "__doc__", None)
        return wrapped

    def __str__(self) -> str:
        return (f"params={self.param_dtype.name},compute={self.compute_dtype.name},"
                f"output={self.output_dtype.name}")


def _dtype_named(name: str) -> np.dtype:
    if name not in _NAMES:
        raise ValueError(f"get_policy: unknown dtype {name!r}; use one of "
                         f"{sorted(set(_NAMES))}")
    return canonical_dtype(_NAMES[name])


def get_policy(spec: str | Policy) -> Policy:
    """A policy from a string such as ``"params=float32,compute=bfloat16,output=float32"``
    (short forms: ``"p=f32,c=bf16,o=f32"``; a single dtype, ``"bf16"``, sets all three)."""
    if isinstance(spec, Policy):
        return spec
    spec = spec.strip()
    if "=" not in spec:
        d = _dtype_named(spec)
        return Policy(d, d, d)
    found = {}
    for part in spec.split(","):
        key, sep, value = part.strip().partition("=")
        if not sep or key.strip() not in _KEYS:
            raise ValueError(f"get_policy: cannot read {part.strip()!r} in {spec!r}; write "
                             "'params=<dtype>,compute=<dtype>,output=<dtype>'")
        found[_KEYS[key.strip()]] = _dtype_named(value.strip())
    f32 = np.dtype(np.float32)
    return Policy(found.get("param_dtype", f32), found.get("compute_dtype", f32),
                  found.get("output_dtype", found.get("compute_dtype", f32)))


def all_finite(tree: Any) -> Array:
    """A boolean scalar: whether every floating leaf of ``tree`` is finite everywhere."""
    leaves = [leaf for leaf in tree_util.tree_leaves(tree)
              if getattr(leaf, "dtype", None) is not None and is_floating(leaf.dtype)]
    if not leaves:
        return fnp.asarray(True)
    return fnp.all(fnp.stack([fnp.all(fnp.isfinite(leaf)) for leaf in leaves]))


def select_tree(pred: Any, a: Any, b: Any) -> Any:
    """``a`` where the boolean scalar ``pred`` holds, else ``b`` (leaf by leaf)."""
    return tree_util.tree_map(lambda x, y: fnp.where(pred, x, y), a, b)


def update_scale(scale: Any, growth_tracker: Any, found_inf: Any, growth_factor: float,
                 backoff_factor: float, growth_interval: int) -> tuple[Array, Array]:
    """PyTorch's GradScaler update: after a non-finite gradient the scale is multiplied by
    ``backoff_factor`` and the count of good steps restarts; after ``growth_interval``
    good steps in a row it is multiplied by ``growth_factor`` (kept if still finite) and
    the count restarts. The scale is float32, products rounded once from float64, as in
    PyTorch's kernel."""
    scale = fnp.asarray(scale, dtype=np.float32)
    tracker = fnp.asarray(growth_tracker, dtype=np.int32)
    found = fnp.asarray(found_inf) != 0
    wide = fnp.astype(scale, np.float64)
    backed_off = fnp.astype(wide * backoff_factor, np.float32)
    grown = fnp.astype(wide * growth_factor, np.float32)
    successful = tracker + 1
    grow = successful == growth_interval
    new_scale = fnp.where(found, backed_off, fnp.where(grow & fnp.isfinite(grown), grown,
                                                       scale))
    new_tracker = fnp.astype(fnp.where(found | grow, 0, successful), np.int32)
    return new_scale, new_tracker


class NoOpLossScale(NamedTuple):
    """No scaling (float32 or bfloat16 training)."""

    @property
    def loss_scale(self) -> float:
        return 1.0

    def scale(self, tree: Any) -> Any:
        return tree

    def unscale(self, tree: Any) -> Any:
        return tree

    def adjust(self, grads_finite: Any) -> "NoOpLossScale":
        return self


def _times(tree: Any, factor: Any) -> Any:
    return tree_util.tree_map(
        lambda x: fnp.multiply(x, fnp.astype(factor, x.dtype)) if is_floating(x.dtype)
        else x, tree)


class StaticLossScale(NamedTuple):
    """A fixed loss scale: ``scale(loss)`` before the gradient, ``unscale(grads)`` after."""
    loss_scale: Any

    def scale(self, tree: Any) -> Any:
        return _times(tree, fnp.asarray(self.loss_scale, dtype=np.float32))

    def unscale(self, tree: Any) -> Any:
        inv = fnp.astype(1.0 / fnp.asarray(self.loss_scale, dtype=np.float64), np.float32)
        return _times(tree, inv)

    def adjust(self, grads_finite: Any) -> "StaticLossScale":
        return self


class DynamicLossScale(NamedTuple):
    """A loss scale that backs off when gradients overflow and grows after ``period``
    finite steps (by ``factor``, backing off by ``backoff_factor``, 1/factor unless
    given), never below ``min_loss_scale``. ``adjust(all_finite(grads))`` is the next
    one: an immutable value, carried in a training loop's state like the parameters."""
    loss_scale: Any
    counter: Any = 0
    period: int = 2000
    factor: float = 2.0
    min_loss_scale: float = 1.0
    backoff_factor: float | None = None

    def scale(self, tree: Any) -> Any:
        return StaticLossScale(self.loss_scale).scale(tree)

    def unscale(self, tree: Any) -> Any:
        return StaticLossScale(self.loss_scale).unscale(tree)

    def adjust(self, grads_finite: Any) -> "DynamicLossScale":
        backoff = 1.0 / self.factor if self.backoff_factor is None else self.backoff_factor
        found_inf = ~fnp.asarray(grads_finite, dtype=bool)
        scale, counter = update_scale(self.loss_scale, self.counter, found_inf, self.factor,
                                      backoff, self.period)
        scale = fnp.maximum(scale, np.float32(self.min_loss_scale))
        return self._replace(loss_scale=scale, counter=counter)
