"""Workload 3: one MLP training step, 784-256-256-10 with ReLU, batch 128, softmax
cross-entropy, plain SGD, float32 everywhere.

A step is value-and-gradient plus the parameter update. Functional implementations
(funcgrad, JAX, HIPS autograd) return new parameters; hand-written numpy updates in place,
as a hand-written loop would; PyTorch and the funcgrad.torch facade run the same PyTorch
code (nn.Linear, F.cross_entropy, optim.SGD). Before timing, every implementation's
gradient at the same parameters is checked against hand-written numpy's.

Targets: funcgrad's functional step at most 1.2x hand-written numpy, the facade's at most 1.3x;
the jitted functional step (``funcgrad.jit``, parameters donated) at most 1.05x and the
facade's ``torch.compile``d step at most 1.1x (issue 17), measured for the two ways PyTorch
code compiles a training step's forward pass: ``torch.compile(model)`` with the loss
outside, and ``torch.compile`` of the function that computes the loss (`COMPILED`); the
backward pass and the optimizer step run eagerly in both, as they do in PyTorch. A third
row compiles the whole step function (``zero_grad``, forward, ``loss.backward()``,
``opt.step()``), which funcgrad compiles as one program.
"""
from __future__ import annotations

from typing import Any, Callable, NamedTuple

import numpy as np

from .harness import (Config, Report, facade, first_call_row, missing_note, peer,
                      skipped_row, time_all, time_target, timing_rows)

SIZES, BATCH = (784, 256, 256, 10), 128
QUICK_SIZES, QUICK_BATCH = (32, 16, 16, 10), 8
LR = 0.01


class Problem(NamedTuple):
    params: list          # [w1, b1, w2, b2, w3, b3], w as (in, out), float32
    x: np.ndarray         # (batch, in) float32
    y: np.ndarray         # (batch,) int64 labels
    onehot: np.ndarray    # (batch, classes) float32


def make(sizes: tuple = SIZES, batch: int = BATCH, seed: int = 0) -> Problem:
    rng = np.random.RandomState(seed)
    params = []
    for fan_in, fan_out in zip(sizes[:-1], sizes[1:]):
        params += [(rng.randn(fan_in, fan_out) / np.sqrt(fan_in)).astype(np.float32),
                   (rng.randn(fan_out) * 0.1).astype(np.float32)]
    y = rng.randint(sizes[-1], size=batch)
    return Problem(params, rng.randn(batch, sizes[0]).astype(np.float32), y,
                   np.eye(sizes[-1], dtype=np.float32)[y])


def numpy_value_and_grad(params: list, x: np.ndarray, onehot: np.ndarray) -> tuple:
    """Hand-written forward and backward."""
    w1, b1, w2, b2, w3, b3 = params
    z1 = x @ w1 + b1
    h1 = np.maximum(z1, 0)
    z2 = h1 @ w2 + b2
    h2 = np.maximum(z2, 0)
    z3 = h2 @ w3 + b3
    shifted = z3 - z3.max(axis=1, keepdims=True)
    e = np.exp(shifted)
    s = e.sum(axis=1, keepdims=True)
    loss = -np.sum(onehot * (shifted - np.log(s))) / x.shape[0]
    d3 = (e / s - onehot) / x.shape[0]
    d2 = (d3 @ w3.T) * (z2 > 0)
    d1 = (d2 @ w2.T) * (z1 > 0)
    return loss, [x.T @ d1, d1.sum(0), h1.T @ d2, d2.sum(0), h2.T @ d3, d3.sum(0)]


def _loss(np_like: Any, logsumexp: Callable) -> Callable:
    """The same loss for every numpy-like library (funcgrad, JAX, autograd)."""
    def loss(params, x, onehot):
        w1, b1, w2, b2, w3, b3 = params
        h = np_like.maximum(x @ w1 + b1, 0.0)
        h = np_like.maximum(h @ w2 + b2, 0.0)
        z = h @ w3 + b3
        return -np_like.sum(onehot * (z - logsumexp(z, axis=1, keepdims=True))) / x.shape[0]
    return loss


class Impl(NamedTuple):
    value_and_grad: Callable[[], tuple]   # at the initial parameters, numpy layout
    step: Callable[[], Any]               # one training step (mutates the impl's state)


def _identity(x: Any) -> Any:
    return x


def _functional(value_and_grad: Callable, params: list, x: Any, onehot: Any,
                jit: Callable = _identity, wait: Callable = _identity) -> Impl:
    """value_and_grad + SGD returning new parameters, with the parameters as state.
    ``wait`` blocks until the results are computed (JAX dispatches asynchronously)."""
    def sgd(params, x, onehot):
        loss, grads = value_and_grad(params, x, onehot)
        return loss, [p - LR * g for p, g in zip(params, grads)]
    sgd = jit(sgd)
    state = [list(params)]

    def step():
        loss, state[0] = wait(sgd(state[0], x, onehot))
        return loss
    return Impl(lambda: value_and_grad(params, x, onehot), step)


def jitted_step(p: Problem) -> Impl:
    """funcgrad's step under ``funcgrad.jit``, the parameters donated (the update writes
    into their buffers, as hand-written numpy's in-place update does)."""
    import functools
    import funcgrad
    import funcgrad.numpy as fnp
    from funcgrad.scipy.special import logsumexp
    f_vg = funcgrad.jit(funcgrad.value_and_grad(_loss(fnp, logsumexp)))
    return _functional(f_vg, [fnp.asarray(a) for a in p.params], fnp.asarray(p.x),
                       fnp.asarray(p.onehot),
                       jit=functools.partial(funcgrad.jit, donate_argnums=0))


def _numpy(p: Problem) -> Impl:
    params = [a.copy() for a in p.params]

    def step():
        loss, grads = numpy_value_and_grad(params, p.x, p.onehot)
        for param, g in zip(params, grads):
            param -= LR * g
        return loss
    return Impl(lambda: numpy_value_and_grad(p.params, p.x, p.onehot), step)


COMPILED = {"model": "torch.compile(model); F.cross_entropy, backward() and SGD eager",
            "loss": "torch.compile of the function computing the loss (model + "
                    "F.cross_entropy); backward() and SGD eager",
            "step": "torch.compile of the whole step function (zero_grad, forward, "
                    "backward(), SGD step): one program"}


def _torch_like(T: Any, p: Problem, compiled: str = "") -> Impl:
    """PyTorch code, run by PyTorch itself or by the funcgrad.torch facade; with
    ``compiled`` (a key of `COMPILED`) part of it through ``torch.compile``: the model
    alone, the function computing the loss (its program covers the model and the
    cross-entropy, forward and backward), or the whole step."""
    layers = [T.nn.Linear(*w.shape) for w in p.params[0::2]]
    for layer, w, b in zip(layers, p.params[0::2], p.params[1::2]):
        layer.weight = T.nn.Parameter(T.tensor(np.ascontiguousarray(w.T)))
        layer.bias = T.nn.Parameter(T.tensor(b))
    model = T.nn.Sequential(layers[0], T.nn.ReLU(), layers[1], T.nn.ReLU(), layers[2])
    if compiled == "model":
        model = T.compile(model)

    def loss_of(x: Any, y: Any) -> Any:
        return T.nn.functional.cross_entropy(model(x), y)
    if compiled == "loss":
        loss_of = T.compile(loss_of)
    opt = T.optim.SGD(model.parameters(), lr=LR)
    x, y = T.tensor(p.x), T.tensor(p.y)

    def value_and_grad():
        opt.zero_grad()
        loss = loss_of(x, y)
        loss.backward()
        grads = []
        for layer in layers:
            grads += [layer.weight.grad.detach().numpy().T, layer.bias.grad.detach().numpy()]
        opt.zero_grad()
        return loss.item(), grads

    def step():
        opt.zero_grad()
        loss = loss_of(x, y)
        loss.backward()
        opt.step()
        return loss
    if compiled == "step":
        step = T.compile(step)

        def value_and_grad():  # the compiled step's loss and gradients (then it updates)
            loss = step()
            return loss.item(), [g for layer in layers for g in (
                layer.weight.grad.detach().numpy().T, layer.bias.grad.detach().numpy())]
    return Impl(value_and_grad, step)


def implementations(p: Problem) -> tuple[dict[str, Impl], list[str]]:
    """Every installed implementation of the step, and notes for the missing ones. Each is
    built before any step runs, so all start from ``p.params``."""
    import funcgrad
    import funcgrad.numpy as fnp
    from funcgrad.scipy.special import logsumexp
    impls = {"numpy": _numpy(p)}
    f_vg = funcgrad.value_and_grad(_loss(fnp, logsumexp))
    impls["funcgrad"] = _functional(f_vg, [fnp.asarray(a) for a in p.params],
                                    fnp.asarray(p.x), fnp.asarray(p.onehot))
    impls["funcgrad jit"] = jitted_step(p)
    missing = []
    ft, why = facade()
    if ft is None:
        missing.append(why)
    else:
        impls["funcgrad.torch"] = _torch_like(ft, p)
        for kind in COMPILED:
            impls[f"funcgrad.torch compile({kind})"] = _torch_like(ft, p, compiled=kind)
    torch = peer("torch")
    if torch is None:
        missing.append(missing_note("torch"))
    else:
        impls["torch"] = _torch_like(torch, p)
    autograd = peer("autograd")
    if autograd is None:
        missing.append(missing_note("autograd"))
    else:
        import autograd.numpy as anp
        from autograd.scipy.special import logsumexp as a_lse
        impls["autograd"] = _functional(autograd.value_and_grad(_loss(anp, a_lse)),
                                        p.params, p.x, p.onehot)
    jax = peer("jax")
    if jax is None:
        missing.append(missing_note("jax"))
    else:
        import jax.numpy as jnp
        from jax.scipy.special import logsumexp as j_lse
        j_vg = jax.value_and_grad(_loss(jnp, j_lse))
        j_args = [jnp.asarray(a) for a in p.params], jnp.asarray(p.x), jnp.asarray(p.onehot)
        impls["jax eager"] = _functional(j_vg, *j_args, wait=jax.block_until_ready)
        impls["jax jit"] = _functional(j_vg, *j_args, jit=jax.jit, wait=jax.block_until_ready)
    return impls, missing


def check(impls: dict[str, Impl]) -> None:
    """Each implementation's loss and gradients at the initial parameters equal
    hand-written numpy's (float32 tolerance), or AssertionError."""
    loss, grads = impls["numpy"].value_and_grad()
    for name, impl in impls.items():
        other_loss, other_grads = impl.value_and_grad()
        np.testing.assert_allclose(float(other_loss), loss, rtol=1e-5,
                                   err_msg=f"MLP loss of {name}")
        for k, (g, other) in enumerate(zip(grads, other_grads)):
            other = np.asarray(other)
            assert other.dtype == np.float32, f"{name}: gradient {k} is {other.dtype}"
            np.testing.assert_allclose(other, g, rtol=1e-4, atol=1e-6,
                                       err_msg=f"MLP gradient {k} of {name}")


def run(cfg: Config) -> Report:
    sizes, batch = (QUICK_SIZES, QUICK_BATCH) if cfg.quick else (SIZES, BATCH)
    impls, missing = implementations(make(sizes, batch))
    check(impls)
    timings = time_all({name: impl.step for name, impl in impls.items()}, cfg)
    case = f"MLP {'-'.join(map(str, sizes))} batch {batch}, SGD step"
    notes = {"numpy": "in-place update", "torch": "nn + F.cross_entropy + optim.SGD",
             "funcgrad.torch": "same PyTorch code", "funcgrad": "value_and_grad + new params"}
    notes["funcgrad jit"] = "jit(step), params donated"
    notes.update({f"funcgrad.torch compile({k})": v for k, v in COMPILED.items()})
    report = Report(timing_rows(3, case, timings, notes=notes))
    problem = make(sizes, batch)
    report.rows.append(first_call_row(3, case, "funcgrad jit: first call",
                                      lambda: jitted_step(problem).step,
                                      timings["funcgrad jit"]))
    report.rows += [skipped_row(3, case, "-", note) for note in missing]
    base = timings["numpy"]
    report.targets += [
        time_target("W3: funcgrad functional step <= 1.2x numpy", timings["funcgrad"], base, 1.2),
        time_target("W3: funcgrad jitted step <= 1.05x numpy", timings["funcgrad jit"], base,
                    1.05),
        time_target("W3: funcgrad.torch facade step <= 1.3x numpy",
                    timings.get("funcgrad.torch"), base, 1.3),
        time_target("W3: funcgrad.torch compiled step <= 1.1x numpy (torch.compile of the "
                    "loss function)", timings.get("funcgrad.torch compile(loss)"), base, 1.1),
        time_target("W3: funcgrad.torch compiled step <= 1.1x numpy (torch.compile(model), "
                    "the loss eager)", timings.get("funcgrad.torch compile(model)"), base, 1.1),
        time_target("W3: funcgrad.torch compiled step <= 1.1x numpy (torch.compile of the "
                    "whole step)", timings.get("funcgrad.torch compile(step)"), base, 1.1),
        time_target("W3: funcgrad.torch facade step <= 1.1x PyTorch eager (issue 20)",
                    timings.get("funcgrad.torch"), timings.get("torch"), 1.1)]
    return report
