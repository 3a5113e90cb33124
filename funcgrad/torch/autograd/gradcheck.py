"""`gradcheck` / `gradgradcheck`: compare backward with central finite differences.

PyTorch's defaults (``eps=1e-6, atol=1e-5, rtol=1e-3``) and modes: the slow mode builds
both Jacobians (one row per input element, one column per output element); ``fast_mode``
compares the scalar ``v^T J u`` for random unit ``u`` and ``v``, and on failure recomputes
the slow Jacobians for the report. A mismatch raises `GradcheckError` (a RuntimeError)
"Jacobian mismatch for output i with respect to input j," with both Jacobians.
Inputs are perturbed in place (their storage is rebound), so functions that read their
inputs through closures are checked correctly too.
"""
from __future__ import annotations

import warnings
from typing import Any, Callable

import numpy as np

from funcgrad.torch._tensor import Tensor, make
from funcgrad.torch._runtime import dual
from funcgrad.torch.autograd import forward_ad
from funcgrad.torch.autograd.engine import grad as autograd_grad
import funcgrad.numpy as fnp

__all__ = ["gradcheck", "gradgradcheck", "GradcheckError"]


class GradcheckError(RuntimeError):
    """Raised by gradcheck / gradgradcheck when a check fails."""


def _as_tuple(x: Any) -> tuple:
    return x if isinstance(x, tuple) else (x,)


def _diff_outputs(outputs: tuple) -> list:
    return [o for o in outputs if isinstance(o, Tensor) and o.requires_grad]


def _to_tensor(values: np.ndarray) -> Tensor:
    return make(fnp.asarray(values))


def _evaluate(func: Callable, inputs: tuple) -> list:
    """The values of the differentiable outputs (grad mode stays on: gradgradcheck's
    function calls autograd.grad inside)."""
    outs = _diff_outputs(_as_tuple(func(*inputs)))
    return [o._host().astype(np.complex128 if o.dtype.is_complex else np.float64)
            for o in outs]


def _perturbed(func: Callable, inputs: tuple, x: Tensor, delta: np.ndarray) -> list:
    """Outputs of ``func`` with ``x`` replaced in place by ``x + delta``."""
    old = x._a
    x._a = fnp.asarray((x._host() + delta).astype(old.dtype))
    try:
        return _evaluate(func, inputs)
    finally:
        x._a = old


def _numerical_jacobian(func: Callable, inputs: tuple, x: Tensor, eps: float) -> list:
    """Per output: (numel(x), numel(output)) central differences."""
    n = x.numel()
    cols: list = []
    for j in range(n):
        d = np.zeros(n)
        d[j] = eps
        d = d.reshape(tuple(x.shape))
        plus = _perturbed(func, inputs, x, d)
        minus = _perturbed(func, inputs, x, -d)
        cols.append([(p - m).reshape(-1) / (2 * eps) for p, m in zip(plus, minus)])
    return [np.stack([c[o] for c in cols]) if cols else np.zeros((0, 0))
            for o in range(len(cols[0]) if cols else 0)]


def _analytical_jacobian(outputs: list, diff_inputs: list) -> list:
    """jac[i][o]: (numel(input i), numel(output o)) by one backward per output element."""
    jac = [[np.zeros((x.numel(), o.numel())) for o in outputs] for x in diff_inputs]
    for oi, out in enumerate(outputs):
        for k in range(out.numel()):
            onehot = np.zeros(out.numel())
            onehot[k] = 1.0
            g_out = _to_tensor(onehot.reshape(tuple(out.shape)).astype(out.dtype.np))
            grads = autograd_grad(out, diff_inputs, g_out, retain_graph=True,
                                  allow_unused=True)
            for i, g in enumerate(grads):
                if g is not None:
                    jac[i][oi][:, k] = g._host().reshape(-1).real
    return jac


def _forward_jacobian(func: Callable, inputs: tuple, x: Tensor, n_outputs: int) -> list:
    """Per output: (numel(x), numel(output)) by forward mode, one tangent per element of
    ``x`` (made dual in place, so that closures reading it see the tangent too)."""
    rows: list = []
    n = x.numel()
    for j in range(n):
        e = np.zeros(n)
        e[j] = 1.0
        old = x._a
        with forward_ad.dual_level():
            dual.attach_tangent(x, _to_tensor(e.reshape(tuple(x.shape))))
            try:
                outs = _diff_outputs(_as_tuple(func(*inputs)))
                rows.append([_tangent_values(forward_ad.unpack_dual(o).tangent, o)
                             for o in outs])
            finally:
                x._a = old
    return [np.stack([r[o] for r in rows]) for o in range(n_outputs)]


def _tangent_values(tangent: Any, out: Tensor) -> np.ndarray:
    if tangent is None:  # the output does not depend on the input
        return np.zeros(out.numel())
    return tangent._host().reshape(-1).real.astype(np.float64)


def _fmt(a: np.ndarray) -> str:
    return repr(_to_tensor(np.asarray(a, dtype=np.float64)))


def _mismatch(o: int, i: int, num: Any, ana: Any, what: str = "Jacobian") -> str:
    return (f"{what} mismatch for output {o} with respect to input {i},\n"
            f"numerical:{_fmt(num)}\nanalytical:{_fmt(ana)}\n")


def _fail(msg: str, raise_exception: bool) -> bool:
    if raise_exception:
        raise GradcheckError(msg)
    return False


def gradcheck(func: Callable, inputs: Any, *, eps: float = 1e-6, atol: float = 1e-5,
              rtol: float = 1e-3, raise_exception: bool = True, nondet_tol: float = 0.0,
              check_undefined_grad: bool = True, check_grad_dtypes: bool = False,
              check_batched_grad: bool = False, check_batched_forward_grad: bool = False,
              check_forward_ad: bool = False, check_backward_ad: bool = True,
              fast_mode: bool = False, masked: bool | None = None) -> bool:
    """Check the gradients of ``func`` at ``inputs`` against finite differences."""
    tupled = _as_tuple(inputs)
    diff_inputs = [x for x in tupled if isinstance(x, Tensor) and x.requires_grad]
    if not diff_inputs:
        raise ValueError("gradcheck expects at least one input tensor to require gradient, "
                         "but none of the them have requires_grad=True.")
    for k, x in enumerate(tupled):
        if isinstance(x, Tensor) and x.requires_grad and x.dtype.name not in ("float64",
                                                                              "complex128"):
            warnings.warn(f"Input #{k} requires gradient and is not a double precision "
                          "floating point or complex. This check will likely fail if all "
                          "the inputs are not of double precision floating point or "
                          "complex. ", UserWarning, stacklevel=2)
    outputs = _diff_outputs(_as_tuple(func(*tupled)))
    if not outputs:
        for x in diff_inputs:
            for j in _numerical_jacobian(func, tupled, x, eps):
                if not np.allclose(j, 0, atol=atol):
                    return _fail("Numerical gradient for function expected to be zero",
                                 raise_exception)
        return True
    if check_forward_ad and not _forward_matches(func, tupled, diff_inputs, len(outputs),
                                                 eps, atol, rtol, raise_exception):
        return False
    if not check_backward_ad:
        return True
    if fast_mode:
        return _fast(func, tupled, diff_inputs, outputs, eps, atol, rtol, raise_exception)
    ana = _analytical_jacobian(outputs, diff_inputs)
    for i, x in enumerate(diff_inputs):
        num = _numerical_jacobian(func, tupled, x, eps)
        for o in range(len(outputs)):
            if not np.allclose(ana[i][o], num[o].real, rtol=rtol, atol=atol):
                return _fail(_mismatch(o, _pos(tupled, x),
                                       num[o].real, ana[i][o]), raise_exception)
    return True


def _forward_matches(func: Callable, tupled: tuple, diff_inputs: list, n_outputs: int,
                     eps: float, atol: float, rtol: float, raise_exception: bool) -> bool:
    """``check_forward_ad``: the forward-mode Jacobian against finite differences."""
    for x in diff_inputs:
        num = _numerical_jacobian(func, tupled, x, eps)
        fwd = _forward_jacobian(func, tupled, x, n_outputs)
        for o in range(n_outputs):
            if not np.allclose(fwd[o], num[o].real, rtol=rtol, atol=atol):
                return _fail(_mismatch(o, _pos(tupled, x), num[o].real, fwd[o],
                                       "Jacobian computed with forward mode"),
                             raise_exception)
    return True


def _pos(tupled: tuple, x: Tensor) -> int:
    return next(k for k, t in enumerate(tupled) if t is x)


def _fast(func: Callable, tupled: tuple, diff_inputs: list, outputs: list, eps: float,
          atol: float, rtol: float, raise_exception: bool) -> bool:
    rng = np.random.default_rng(0)
    us = [rng.standard_normal(tuple(x.shape)) for x in diff_inputs]
    us = [u / max(np.linalg.norm(u), 1e-30) for u in us]
    vs = [rng.standard_normal(tuple(o.shape)) for o in outputs]
    vs = [v / max(np.linalg.norm(v), 1e-30) for v in vs]
    for i, (x, u) in enumerate(zip(diff_inputs, us)):
        plus = _perturbed(func, tupled, x, eps * u)
        minus = _perturbed(func, tupled, x, -eps * u)
        for o, (out, v) in enumerate(zip(outputs, vs)):
            num = float(np.sum(((plus[o] - minus[o]) / (2 * eps)).real * v))
            g_out = _to_tensor(v.astype(out.dtype.np))
            g = autograd_grad(out, [x], g_out, retain_graph=True, allow_unused=True)[0]
            ana = 0.0 if g is None else float(np.sum(g._host().real * u))
            if not np.isclose(ana, num, rtol=rtol, atol=atol):
                slow_ana = _analytical_jacobian([out], [x])[0][0]
                slow_num = _numerical_jacobian(func, tupled, x, eps)[o].real
                msg = (_mismatch(o, _pos(tupled, x), num, ana) + "\n"
                       "The above quantities relating the numerical and analytical "
                       "jacobians are computed \nin fast mode. See: "
                       "https://github.com/pytorch/pytorch/issues/53876 for more background "
                       "\nabout fast mode. Below, we recompute numerical and analytical "
                       "jacobians in slow mode:\n\n"
                       f"Numerical:\n {_fmt(slow_num)}\nAnalytical:\n{_fmt(slow_ana)}\n\n"
                       "The max per-element difference (slow mode) is: "
                       f"{np.max(np.abs(slow_num - slow_ana)) if slow_num.size else 0.0}.\n")
                return _fail(msg, raise_exception)
    return True


def gradgradcheck(func: Callable, inputs: Any, grad_outputs: Any = None, *,
                  eps: float = 1e-6, atol: float = 1e-5, rtol: float = 1e-3,
                  gen_non_contig_grad_outputs: bool = False, raise_exception: bool = True,
                  nondet_tol: float = 0.0, check_undefined_grad: bool = True,
                  check_grad_dtypes: bool = False, check_batched_grad: bool = False,
                  check_fwd_over_rev: bool = False, check_rev_over_rev: bool = True,
                  fast_mode: bool = False, masked: bool = False) -> bool:
    """gradcheck of the function ``(inputs, grad_outputs) -> grad(func)(inputs)`` built
    with ``create_graph=True``: second derivatives against finite differences."""
    tupled = _as_tuple(inputs)
    if grad_outputs is None:
        rng = np.random.default_rng(1)
        outs = _diff_outputs(_as_tuple(func(*tupled)))
        grad_outputs = tuple(
            make(_to_tensor(rng.uniform(-1, 1, tuple(o.shape)).astype(o.dtype.np))._a,
                 requires_grad=True) for o in outs)
    grads = _as_tuple(grad_outputs)
    n = len(grads)

    def new_func(*args: Any) -> tuple:
        input_args, g_outs = args[:-n], args[-n:]
        outputs = _diff_outputs(_as_tuple(func(*input_args)))
        diff = [x for x in input_args if isinstance(x, Tensor) and x.requires_grad]
        got = autograd_grad(outputs, diff, g_outs, create_graph=True, allow_unused=True)
        return tuple(g for g in got if g is not None)

    return gradcheck(new_func, tupled + grads, eps=eps, atol=atol, rtol=rtol,
                     raise_exception=raise_exception, fast_mode=fast_mode)
