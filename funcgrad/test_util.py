"""Checking derivatives numerically.

`check_grads` compares funcgrad's derivatives with central finite differences: reverse mode
by the dot-product test ``<t, vjp(c)> == <jvp_numeric(t), c>``, forward mode directly,
recursively to ``order`` (the second order differentiates the first-order derivative
function). Arguments may be pytrees. A check that fails is tried again with steps 10 and
100 times smaller before it is reported: a step that straddles a kink (|x| near 0, a
maximum near a tie) misleads the differences, a wrong derivative disagrees at every step. Complex inputs follow JAX's convention: the tangent and cotangent pairing is
``Re(sum(conj(a) * b))`` and ``vjp`` is applied as ``conj(vjp(conj(c)))``.
"""
from __future__ import annotations

from typing import Any, Callable, Sequence

import numpy as np

from funcgrad import transforms, tree_util
from funcgrad.array import Array

__all__ = ["check_grads", "check_vjp", "check_jvp", "numerical_jvp", "default_tolerance",
           "numpy_uses_svml", "assert_within_ulps"]

_TOL = {np.dtype(np.float16): 1e-1, np.dtype(np.float32): 2e-2,
        np.dtype(np.float64): 1e-5, np.dtype(np.complex64): 2e-2,
        np.dtype(np.complex128): 1e-5}
_EPS = {np.dtype(np.float16): 1e-2, np.dtype(np.float32): 1e-3,
        np.dtype(np.float64): 1e-4, np.dtype(np.complex64): 1e-3,
        np.dtype(np.complex128): 1e-4}


def _np(x: Any) -> np.ndarray:
    if isinstance(x, Array):
        return np.asarray(x.concrete().to_numpy())
    return np.asarray(x)


def default_tolerance(leaves: Sequence) -> float:
    """The loosest tolerance among the leaves' dtypes (float64: 1e-5, float32: 2e-2)."""
    return max([_TOL.get(np.dtype(_np(x).dtype), 1e-5) for x in leaves] or [1e-5])


def _eps_for(leaves: Sequence) -> float:
    return max([_EPS.get(np.dtype(_np(x).dtype), 1e-4) for x in leaves] or [1e-4])


def _inexact(x: Any) -> bool:
    return np.issubdtype(_np(x).dtype, np.inexact)


def _rand_like(rng: np.random.RandomState, x: Any) -> np.ndarray:
    x = _np(x)
    r = rng.standard_normal(x.shape)
    if np.iscomplexobj(x):
        r = r + 1j * rng.standard_normal(x.shape)
    return r.astype(x.dtype) if _inexact(x) else np.zeros(x.shape, x.dtype)


def _inner(xs: Any, ys: Any) -> float:
    total = 0.0
    for x, y in zip(tree_util.tree_leaves(xs), tree_util.tree_leaves(ys)):
        x, y = _np(x), _np(y)
        if x.dtype.kind == "V" or y.dtype.kind == "V":  # float0 cotangents of int inputs
            continue
        total += float(np.real(np.sum(np.conj(x).astype(np.complex128) * y)))
    return total


def _check_close(actual: Any, expected: Any, atol: float, rtol: float, what: str) -> None:
    a_leaves = tree_util.tree_leaves(actual)
    e_leaves = tree_util.tree_leaves(expected)
    if len(a_leaves) != len(e_leaves):
        raise AssertionError(f"{what}: {len(a_leaves)} leaves, expected {len(e_leaves)}")
    for k, (a, e) in enumerate(zip(a_leaves, e_leaves)):
        a, e = _np(a), _np(e)
        if a.shape != e.shape:
            raise AssertionError(f"{what}, leaf {k}: shape {a.shape}, expected {e.shape}")
        if not np.allclose(a, e, atol=atol, rtol=rtol, equal_nan=True):
            err = np.max(np.abs(a - e)) if a.size else 0.0
            raise AssertionError(f"{what}, leaf {k}: max abs error {err:.3g} exceeds atol="
                                 f"{atol:g}, rtol={rtol:g}\n actual:   {a}\n expected: {e}")


def numerical_jvp(f: Callable, args: Sequence, tangents: Sequence, eps: float) -> Any:
    """Central difference (f(x + eps t) - f(x - eps t)) / (2 eps), leaf by leaf."""
    def shifted(sign: float) -> Any:
        moved = [(_np(x) + sign * eps * _np(t)).astype(_np(x).dtype) if _inexact(x) else x
                 for x, t in zip(args, tangents)]
        return tree_util.tree_map(_np, f(*moved))
    hi, lo = shifted(1.0), shifted(-1.0)
    return tree_util.tree_map(lambda a, b: (a - b) / (2 * eps), hi, lo)


def check_vjp(f: Callable, args: Sequence, atol: float, rtol: float, eps: float,
              rng: np.random.RandomState) -> None:
    """Dot-product test of ``vjp(f)`` against a numerical JVP."""
    out, vjp_fn = transforms.vjp(f, *args)
    _check_close(out, f(*args), atol, rtol, "vjp primal output")
    tangent = [_rand_like(rng, x) for x in args]
    tangent_out = numerical_jvp(f, args, tangent, eps)
    cotangent = tree_util.tree_map(lambda o: _rand_like(rng, o), out)
    ct_in = vjp_fn(tree_util.tree_map(np.conj, cotangent))
    ct_in = tree_util.tree_map(lambda c: np.conj(_np(c)), ct_in)
    ip = _inner(tangent, ct_in)
    ip_expected = _inner(tangent_out, cotangent)
    scale = max(1.0, abs(ip_expected))
    if abs(ip - ip_expected) > atol * scale + rtol * abs(ip_expected) + 1e-12:
        raise AssertionError(f"VJP dot-product test failed: <t, vjp(c)> = {ip!r} but "
                             f"<jvp_numeric(t), c> = {ip_expected!r}")


def check_jvp(f: Callable, args: Sequence, atol: float, rtol: float, eps: float,
              rng: np.random.RandomState) -> None:
    """Forward mode against central differences."""
    tangent = [_rand_like(rng, x) for x in args]
    out, t_out = transforms.jvp(f, tuple(args), tuple(tangent))
    _check_close(out, f(*args), atol, rtol, "jvp primal output")
    _check_close(t_out, numerical_jvp(f, args, tangent, eps), atol, rtol, "jvp tangent")


def check_grads(f: Callable, args: Sequence, order: int = 2,
                modes: Sequence[str] = ("fwd", "rev"), atol: float | None = None,
                rtol: float | None = None, eps: float | None = None, seed: int = 0) -> None:
    """Check ``f``'s derivatives at ``args`` (a sequence of pytrees) to ``order`` in
    ``modes`` ("fwd", "rev").

    Raises AssertionError naming the mode, the order and the mismatch. Tolerances and the
    finite-difference step default by dtype (float64: atol=rtol=1e-5, eps=1e-4)."""
    leaves, tree = tree_util.tree_flatten(tuple(args))
    leaves = [x if isinstance(x, Array) else np.asarray(x) for x in leaves]
    user_f = f

    def f(*flat: Any) -> Any:  # the checks below work on the flat leaves
        return user_f(*tree.unflatten(list(flat)))
    args = tuple(leaves)
    atol = default_tolerance(leaves) if atol is None else atol
    rtol = default_tolerance(leaves) if rtol is None else rtol
    eps = _eps_for(leaves) if eps is None else eps
    rng = np.random.RandomState(seed)
    for m in modes:
        if m not in ("fwd", "rev"):
            raise ValueError(f"unknown mode {m!r}: use 'fwd' and/or 'rev'")
    _check(f, args, order, tuple(modes), atol, rtol, eps, rng, "")


def _first_order_then_derivative(mode: str, f: Callable) -> tuple[Callable, Callable]:
    """(the first-order check of ``mode``, the derivative function to check next order)."""
    if mode == "fwd":
        def f_jvp(*xs: Any) -> Any:
            tangent = [_rand_like(np.random.RandomState(1), x) for x in xs]
            return transforms.jvp(f, xs, tuple(tangent))[1]
        return check_jvp, f_jvp

    def f_vjp(*xs: Any) -> Any:
        out, vjp_fn = transforms.vjp(f, *xs)
        return vjp_fn(out)
    return check_vjp, f_vjp


def _check(f: Callable, args: tuple, order: int, modes: tuple, atol: float, rtol: float,
           eps: float, rng: np.random.RandomState, path: str) -> None:
    for mode in ("fwd", "rev"):
        if mode not in modes:
            continue
        where = f"{path}{mode} order {order}"
        check, derivative = _first_order_then_derivative(mode, f)
        state = rng.get_state()
        failures = []
        for step in (eps, eps / 10, eps / 100):
            rng.set_state(state)  # the same random directions at every step
            try:
                check(f, args, atol, rtol, step, rng)
                break
            except AssertionError as e:
                failures.append(e)
        else:
            raise AssertionError(f"[{where}] {failures[0]}") from None
        if order > 1:
            _check(derivative, args, order - 1, modes, atol, rtol, eps, rng, f"{where} > ")


def numpy_uses_svml() -> bool:
    """Whether numpy computes its float transcendental functions (log, tan, ...) on this
    CPU with its AVX-512 loops (Intel's SVML, accurate to a few ulp) instead of the C
    library's. Results reproduced bit for bit from XLA (funcgrad.random's draws) hold
    bit for bit only where numpy calls the C library; with SVML they are within a few ulp."""
    try:
        from numpy._core._multiarray_umath import __cpu_features__  # numpy 2; 1 below
    except ImportError:  # pragma: no cover - numpy 1
        from numpy.core._multiarray_umath import __cpu_features__
    return bool(__cpu_features__.get("AVX512_SKX"))


def assert_within_ulps(actual: Any, expected: Any, ulps: int) -> None:
    """Same dtype and shape, and float values at most ``ulps`` units in the last place
    apart (same signs; NaN where the other is NaN)."""
    a, e = np.asarray(actual), np.asarray(expected)
    assert a.dtype == e.dtype and a.shape == e.shape, (a.dtype, a.shape, e.dtype, e.shape)
    signed = np.dtype(f"i{a.dtype.itemsize}")
    both_nan = np.isnan(a) & np.isnan(e)
    distance = np.abs(a.view(signed).astype(np.int64) - e.view(signed).astype(np.int64))
    far = ~both_nan & (distance > ulps)
    assert not far.any(), (f"{far.sum()} of {a.size} values more than {ulps} ulp apart, "
                           f"the first at {np.argwhere(far)[0]}: {a[far][0]} != {e[far][0]}")
