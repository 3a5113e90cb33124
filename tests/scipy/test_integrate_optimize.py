"""funcgrad.scipy.integrate.odeint (against scipy's odeint, JAX's odeint and closed forms;
adjoint gradients to second order; pytrees; errors) and funcgrad.scipy.optimize.minimize
(BFGS against scipy's, JAX's result fields and error texts)."""
import numpy as np
import pytest
import scipy.integrate as si
import scipy.optimize as so

import funcgrad as fg
import funcgrad.numpy as fnp
from funcgrad.scipy.integrate import odeint
from funcgrad.scipy.optimize import OptimizeResults, minimize
from funcgrad.test_util import check_grads

TS = np.linspace(0.0, 2.0, 5)


def _decay(y, t, k):
    return -k * y + fnp.sin(t)


def test_odeint_matches_scipy_and_the_closed_form():
    y0 = np.array([1.0, -2.0])
    ys = odeint(_decay, y0, TS, 0.7)
    ref = si.odeint(lambda y, t: -0.7 * y + np.sin(t), y0, TS, rtol=1e-12, atol=1e-12)
    np.testing.assert_allclose(np.asarray(ys), ref, rtol=1e-7, atol=1e-8)
    tight = odeint(lambda y, t: -y, np.array([1.0]), TS, rtol=1e-12, atol=1e-12)
    np.testing.assert_allclose(np.asarray(tight)[:, 0], np.exp(-TS), rtol=1e-10)


def test_odeint_pytree_state_and_args():
    def pendulum(state, t, params):
        theta, omega = state["theta"], state["omega"]
        return {"theta": omega, "omega": -params["g"] * fnp.sin(theta) - params["c"] * omega}
    y0 = {"theta": np.array(1.0), "omega": np.array(0.0)}
    params = {"g": 9.8, "c": np.array(0.3)}
    out = odeint(pendulum, y0, TS, params)
    assert out["theta"].shape == (5,) and out["omega"].shape == (5,)
    ref = si.odeint(lambda s, t: [s[1], -9.8 * np.sin(s[0]) - 0.3 * s[1]], [1.0, 0.0], TS,
                    rtol=1e-12, atol=1e-12)
    np.testing.assert_allclose(np.asarray(out["theta"]), ref[:, 0], rtol=1e-6, atol=1e-7)
    g = fg.grad(lambda p: fnp.sum(odeint(pendulum, y0, TS, p)["theta"]))(params)
    assert set(g) == {"g", "c"}


def test_odeint_gradients_match_jax():
    jax = pytest.importorskip("jax")
    jax.config.update("jax_enable_x64", True)
    from jax.experimental.ode import odeint as jodeint
    y0 = np.array([1.0, 2.0])

    def loss(y0, ts, k):
        return fnp.sum(odeint(_decay, y0, ts, k) ** 2)

    def jloss(y0, ts, k):
        return (jodeint(lambda y, t, k: -k * y + jax.numpy.sin(t), y0, ts, k) ** 2).sum()
    ours = fg.value_and_grad(loss, (0, 1, 2))(y0, TS, 0.7)
    theirs = jax.value_and_grad(jloss, (0, 1, 2))(y0, TS, 0.7)
    np.testing.assert_allclose(np.asarray(ours[0]), float(theirs[0]), rtol=1e-12)
    for a, b in zip(ours[1], theirs[1]):
        np.testing.assert_allclose(np.asarray(a), np.asarray(b), rtol=1e-8, atol=1e-10)


def test_odeint_adjoint_to_second_order():
    def f(y, t, k):
        return -k * y * y + fnp.cos(2 * t)
    ts = np.linspace(0.0, 1.0, 3)
    check_grads(lambda y0, k: odeint(f, y0, ts, k), (np.array([1.0, 2.0]), 0.7), order=2,
                modes=("rev",), rtol=1e-5, atol=1e-6)
    check_grads(lambda y0, k: odeint(f, y0, ts, k), (np.array([1.0, 2.0]), 0.7), order=1,
                modes=("fwd",), rtol=1e-5, atol=1e-6)
    check_grads(lambda t: odeint(f, np.array([0.5]), t, 0.7), (ts,), order=1, rtol=1e-5,
                atol=1e-6)


def test_odeint_closure_over_differentiated_values():
    """A closed-over traced value is differentiated through the solver's steps."""
    ts = np.linspace(0.0, 1.0, 3)

    def loss(y0, k):
        return fnp.sum(odeint(lambda y, t: -k * y * y, y0, ts) ** 2)

    def explicit(y0, k):
        return fnp.sum(odeint(lambda y, t, k: -k * y * y, y0, ts, k) ** 2)
    got = fg.grad(loss, (0, 1))(np.array([1.0, 0.5]), 0.7)
    want = fg.grad(explicit, (0, 1))(np.array([1.0, 0.5]), 0.7)
    for a, b in zip(got, want):
        np.testing.assert_allclose(np.asarray(a), np.asarray(b), rtol=1e-6)


def test_odeint_errors():
    with pytest.raises(TypeError, match="must be arrays or scalars, but got"):
        odeint(lambda y, t, s: -y, np.ones(2), TS, "a string")
    with pytest.raises(ValueError, match="strictly increasing"):
        odeint(lambda y, t: -y, np.ones(2), TS[::-1])
    with pytest.raises(RuntimeError, match="mxstep"):
        odeint(lambda y, t: -1000 * y, np.ones(2), np.array([0.0, 10.0]), mxstep=5)


def _rosen(x):
    return fnp.sum(100.0 * (x[1:] - x[:-1] ** 2.0) ** 2.0 + (1 - x[:-1]) ** 2.0)


@pytest.mark.parametrize("x0", [np.array([-1.2, 1.0]), np.zeros(5), np.linspace(-1, 2, 8)])
def test_bfgs_finds_the_rosenbrock_minimum_like_scipy(x0):
    result = minimize(_rosen, x0, method="BFGS")
    assert isinstance(result, OptimizeResults)
    assert bool(result.success) and int(result.status) == 0
    np.testing.assert_allclose(np.asarray(result.x), np.ones_like(x0), atol=1e-5)
    assert float(np.max(np.abs(np.asarray(result.jac)))) < 1e-5
    reference = so.minimize(so.rosen, x0, jac=so.rosen_der, method="BFGS")
    assert int(result.nit) <= 1.5 * reference.nit + 5
    np.testing.assert_allclose(float(result.fun), _rosen(np.asarray(result.x)), rtol=1e-12)


def test_bfgs_hess_inv_args_and_options():
    a = np.array([[3.0, 1.0], [1.0, 2.0]])
    b = np.array([1.0, -1.0])
    result = minimize(lambda x, a, b: 0.5 * x @ a @ x - b @ x, np.zeros(2), args=(a, b),
                      method="bfgs", tol=1e-10)
    np.testing.assert_allclose(np.asarray(result.x), np.linalg.solve(a, b), rtol=1e-9)
    np.testing.assert_allclose(np.asarray(result.hess_inv), np.linalg.inv(a), rtol=1e-6)
    capped = minimize(_rosen, np.zeros(4), method="BFGS", options=dict(maxiter=3))
    assert int(capped.status) == 1 and not bool(capped.success) and int(capped.nit) == 3


def test_minimize_errors():
    with pytest.raises(ValueError, match="Method Nelder-Mead not recognized"):
        minimize(_rosen, np.zeros(2), method="Nelder-Mead")
    with pytest.raises(TypeError, match="must be a tuple"):
        minimize(_rosen, np.zeros(2), args=[1.0], method="BFGS")
    with pytest.raises(ValueError, match="one-dimensional"):
        minimize(_rosen, np.zeros((2, 2)), method="BFGS")
    with pytest.raises(TypeError, match="not differentiable"):
        fg.grad(lambda s: minimize(lambda x, s: fnp.sum((x - s) ** 2), np.zeros(2), (s,),
                                   method="BFGS").fun)(1.0)
