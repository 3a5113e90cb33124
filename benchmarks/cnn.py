"""Workload 6: a small CNN's forward and backward pass, float32, batch 32 of 1x28x28:
conv 3x3 (16) - ReLU - max pool 2 - conv 3x3 (32) - ReLU - max pool 2 - linear (10),
softmax cross-entropy.

PyTorch and the funcgrad.torch facade run the same PyTorch code (nn.Conv2d, F.max_pool2d,
F.cross_entropy; zero_grad and backward); funcgrad and JAX run the same functional code
(lax.conv_general_dilated, lax.reduce_window max). Before timing, every implementation's
loss and gradients at the same parameters are checked against PyTorch's.

Targets: the facade at most 3x PyTorch, funcgrad's functional code at most 3x PyTorch.
"""
from __future__ import annotations

from typing import Any, Callable, NamedTuple

import numpy as np

from .harness import (Config, Report, facade, missing_note, peer, skipped_row, time_all,
                      time_target, timing_rows)

SHAPE, CHANNELS, CLASSES = (32, 1, 28, 28), (16, 32), 10
QUICK_SHAPE, QUICK_CHANNELS = (4, 1, 12, 12), (4, 8)


class Problem(NamedTuple):
    params: list          # [w1, b1, w2, b2, w3 (features, classes), b3], float32
    x: np.ndarray         # (batch, 1, H, W) float32
    y: np.ndarray         # (batch,) int64 labels
    onehot: np.ndarray    # (batch, classes) float32


def make(shape: tuple = SHAPE, channels: tuple = CHANNELS, seed: int = 0) -> Problem:
    rng = np.random.RandomState(seed)
    c1, c2 = channels
    n, c0, h, w = shape
    features = c2 * (h // 4) * (w // 4)

    def init(*s: int) -> np.ndarray:
        fan_in = int(np.prod(s[1:])) if len(s) > 1 else s[0]
        return (rng.randn(*s) / np.sqrt(fan_in)).astype(np.float32)
    params = [init(c1, c0, 3, 3), init(c1) * 0.1, init(c2, c1, 3, 3), init(c2) * 0.1,
              init(features, CLASSES), init(CLASSES) * 0.1]
    y = rng.randint(CLASSES, size=n)
    return Problem(params, rng.randn(*shape).astype(np.float32), y,
                   np.eye(CLASSES, dtype=np.float32)[y])


def _loss(np_like: Any, lax: Any, logsumexp: Callable) -> Callable:
    """The same functional CNN for funcgrad and JAX (NCHW / OIHW)."""
    def block(h, w, b):
        h = lax.conv_general_dilated(h, w, (1, 1), ((1, 1), (1, 1)))
        h = np_like.maximum(h + b.reshape(1, -1, 1, 1), 0.0)
        return lax.reduce_window(h, -np.inf, lax.max, (1, 1, 2, 2), (1, 1, 2, 2), "VALID")

    def loss(params, x, onehot):
        w1, b1, w2, b2, w3, b3 = params
        h = block(block(x, w1, b1), w2, b2)
        z = h.reshape(x.shape[0], -1) @ w3 + b3
        return -np_like.sum(onehot * (z - logsumexp(z, axis=1, keepdims=True))) / x.shape[0]
    return loss


def _torch_like(T: Any, p: Problem) -> Callable:
    """PyTorch code, run by PyTorch or by the funcgrad.torch facade: a function computing
    (loss, gradients in the functional layout)."""
    w1, b1, w2, b2, w3, b3 = p.params
    conv1 = T.nn.Conv2d(w1.shape[1], w1.shape[0], 3, padding=1)
    conv2 = T.nn.Conv2d(w2.shape[1], w2.shape[0], 3, padding=1)
    fc = T.nn.Linear(*w3.shape)
    for module, w, b in ((conv1, w1, b1), (conv2, w2, b2), (fc, w3.T, b3)):
        module.weight = T.nn.Parameter(T.tensor(np.ascontiguousarray(w)))
        module.bias = T.nn.Parameter(T.tensor(b))
    F = T.nn.functional
    x, y = T.tensor(p.x), T.tensor(p.y)
    params = [conv1.weight, conv1.bias, conv2.weight, conv2.bias, fc.weight, fc.bias]

    def value_and_grad():
        for q in params:
            q.grad = None
        h = F.max_pool2d(F.relu(conv1(x)), 2)
        h = F.max_pool2d(F.relu(conv2(h)), 2)
        loss = F.cross_entropy(fc(h.flatten(1)), y)
        loss.backward()
        grads = [q.grad.numpy() for q in params]
        grads[4] = grads[4].T
        return loss.item(), grads
    return value_and_grad


def implementations(p: Problem) -> tuple[dict[str, Callable], list[str]]:
    """Every installed implementation of forward + backward, and notes for the missing."""
    import funcgrad
    import funcgrad.lax as flax
    import funcgrad.numpy as fnp
    from funcgrad.scipy.special import logsumexp
    impls: dict[str, Callable] = {}
    missing = []
    torch = peer("torch")
    if torch is None:
        missing.append(missing_note("torch"))
    else:
        impls["torch"] = _torch_like(torch, p)
    ft, why = facade()
    if ft is None:
        missing.append(why)
    else:
        impls["funcgrad.torch"] = _torch_like(ft, p)
    f_vg = funcgrad.value_and_grad(_loss(fnp, flax, logsumexp))
    f_args = [fnp.asarray(a) for a in p.params], fnp.asarray(p.x), fnp.asarray(p.onehot)
    impls["funcgrad"] = lambda: f_vg(*f_args)
    jax = peer("jax")
    if jax is None:
        missing.append(missing_note("jax"))
    else:
        import jax.numpy as jnp
        from jax.scipy.special import logsumexp as j_lse
        j_vg = jax.value_and_grad(_loss(jnp, jax.lax, j_lse))
        j_jit = jax.jit(j_vg)
        j_args = [jnp.asarray(a) for a in p.params], jnp.asarray(p.x), jnp.asarray(p.onehot)
        impls["jax eager"] = lambda: jax.block_until_ready(j_vg(*j_args))
        impls["jax jit"] = lambda: jax.block_until_ready(j_jit(*j_args))
    return impls, missing


def check(impls: dict[str, Callable], p: Problem) -> None:
    """Every implementation's loss and gradients equal the reference's (PyTorch's when it
    is installed, else funcgrad's), within float32 tolerance; else AssertionError."""
    ref_name = "torch" if "torch" in impls else "funcgrad"
    loss, grads = impls[ref_name]()
    for name, fn in impls.items():
        other_loss, other_grads = fn()
        np.testing.assert_allclose(float(other_loss), float(loss), rtol=1e-5,
                                   err_msg=f"CNN loss of {name}")
        for k, (g, other) in enumerate(zip(grads, other_grads)):
            other = np.asarray(other)
            assert other.dtype == np.float32, f"{name}: gradient {k} is {other.dtype}"
            np.testing.assert_allclose(other, np.asarray(g), rtol=2e-4, atol=2e-6,
                                       err_msg=f"CNN gradient {k} of {name} vs {ref_name}")


def run(cfg: Config) -> Report:
    shape, channels = (QUICK_SHAPE, QUICK_CHANNELS) if cfg.quick else (SHAPE, CHANNELS)
    p = make(shape, channels)
    impls, missing = implementations(p)
    check(impls, p)
    timings = time_all(impls, cfg)
    case = (f"CNN {'x'.join(map(str, shape))} conv{channels[0]}-pool-conv{channels[1]}-pool-fc"
            ", forward + backward")
    notes = {"torch": "nn.Conv2d + F.max_pool2d + F.cross_entropy",
             "funcgrad.torch": "same PyTorch code",
             "funcgrad": "lax.conv_general_dilated + reduce_window, value_and_grad"}
    ref = "torch" if "torch" in timings else "funcgrad"
    report = Report(timing_rows(6, case, timings, ref=ref, notes=notes))
    report.rows += [skipped_row(6, case, "-", note) for note in missing]
    base = timings.get("torch")
    report.targets += [
        time_target("W6: funcgrad.torch CNN forward+backward <= 3x PyTorch",
                    timings.get("funcgrad.torch"), base, 3.0),
        time_target("W6: funcgrad functional CNN forward+backward <= 3x PyTorch",
                    timings.get("funcgrad"), base, 3.0)]
    return report
