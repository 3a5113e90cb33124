"""Workload 7 (issue 18): vmap.

(a) Per-example gradients of an MLP classifier's loss, batch 256:
    ``vmap(grad(loss), in_axes=(None, 0, 0))`` against one batched ``grad`` of the mean loss
    (funcgrad's own floor), PyTorch's ``torch.func.vmap(torch.func.grad(...))`` and JAX's
    ``jax.vmap(jax.grad(...))`` (eager and jitted).
(b) ``jacrev`` and ``jacfwd`` of ``tanh(W @ x)`` for a 100x100 W: the vmapped VJP / JVP over
    the identity's rows against the basis-vector loop they replaced and against one VJP,
    and JAX's jitted ``jacrev``.

Targets: per-example gradients at most 2x the batched gradient and faster than
torch.func's; jacrev and jacfwd at least 5x faster than the basis-vector loop.

    python -m benchmarks.vmap [--quick]
"""
from __future__ import annotations

import sys
from typing import Any, Callable

import numpy as np

from .harness import (Config, Report, missing_note, peer, skipped_row, time_all, time_target,
                      timing_rows)

WORKLOAD = 7
BATCH, DIM, HIDDEN, CLASSES = 256, 64, 128, 10
N_JAC = 100


def _mlp_data(quick: bool) -> tuple:
    rng = np.random.RandomState(0)
    batch = 8 if quick else BATCH
    params = [(rng.randn(DIM, HIDDEN) * 0.1, np.zeros(HIDDEN)),
              (rng.randn(HIDDEN, CLASSES) * 0.1, np.zeros(CLASSES))]
    x = rng.randn(batch, DIM)
    y = np.eye(CLASSES)[rng.randint(CLASSES, size=batch)]
    return params, x, y


def _loss(lib: Any, log_softmax: Callable) -> Callable:
    def loss(p: Any, x: Any, y: Any) -> Any:
        h = lib.tanh(x @ p[0][0] + p[0][1])
        return -lib.sum(y * log_softmax(h @ p[1][0] + p[1][1]))
    return loss


def per_example_impls(quick: bool) -> tuple[dict, dict, list]:
    """({name: zero-arg callable}, {name: its per-example gradient of W1}, missing notes)."""
    import funcgrad
    import funcgrad.numpy as fnp
    from funcgrad import nn
    params, x, y = _mlp_data(quick)
    fp = [(fnp.asarray(w), fnp.asarray(b)) for w, b in params]
    fx, fy = fnp.asarray(x), fnp.asarray(y)
    loss = _loss(fnp, lambda o: nn.log_softmax(o, axis=-1))
    per_example = funcgrad.vmap(funcgrad.grad(loss), in_axes=(None, 0, 0))
    batched = funcgrad.grad(lambda p, a, b: loss(p, a, b) / a.shape[0])
    impls = {"funcgrad vmap(grad)": lambda: per_example(fp, fx, fy),
             "funcgrad grad of the mean": lambda: batched(fp, fx, fy)}
    grads = {"funcgrad vmap(grad)": lambda: np.asarray(per_example(fp, fx, fy)[0][0])}
    missing = []
    torch = peer("torch")
    if torch is None:
        missing.append(missing_note("torch"))
    else:
        tp = [(torch.from_numpy(w), torch.from_numpy(b)) for w, b in params]
        tx, ty = torch.from_numpy(x), torch.from_numpy(y)
        t_loss = _loss(torch, lambda o: torch.log_softmax(o, -1))
        t_pe = torch.func.vmap(torch.func.grad(t_loss), in_dims=(None, 0, 0))
        impls["torch.func vmap(grad)"] = lambda: t_pe(tp, tx, ty)
        grads["torch.func vmap(grad)"] = lambda: t_pe(tp, tx, ty)[0][0].numpy()
    jax = peer("jax")
    if jax is None:
        missing.append(missing_note("jax"))
    else:
        import jax.numpy as jnp
        jp = [(jnp.asarray(w), jnp.asarray(b)) for w, b in params]
        jx, jy = jnp.asarray(x), jnp.asarray(y)
        j_pe = jax.vmap(jax.grad(_loss(jnp, lambda o: jax.nn.log_softmax(o, -1))),
                        in_axes=(None, 0, 0))
        j_jit = jax.jit(j_pe)
        impls["jax vmap(grad) eager"] = lambda: jax.block_until_ready(j_pe(jp, jx, jy))
        impls["jax vmap(grad) jit"] = lambda: jax.block_until_ready(j_jit(jp, jx, jy))
    return impls, grads, missing


def jacobian_impls(quick: bool) -> tuple[dict, list]:
    import funcgrad
    import funcgrad.numpy as fnp
    n = 10 if quick else N_JAC
    rng = np.random.RandomState(1)
    w, x = rng.randn(n, n) / np.sqrt(n), rng.randn(n)
    fw, fx = fnp.asarray(w), fnp.asarray(x)

    def f(v: Any) -> Any:
        return fnp.tanh(fw @ v)
    eye = fnp.eye(n)

    def rev_loop() -> Any:  # what jacrev did before vmap: one VJP per output element
        _, pullback = funcgrad.vjp(f, fx)
        return fnp.stack([pullback(eye[i])[0] for i in range(n)])

    def fwd_loop() -> Any:  # and jacfwd: one linearized JVP per input element
        _, push = funcgrad.linearize(f, fx)
        return fnp.stack([push(eye[i]) for i in range(n)], axis=-1)
    impls = {"funcgrad jacrev": lambda: funcgrad.jacrev(f)(fx),
             "funcgrad jacrev, basis loop": rev_loop,
             "funcgrad jacfwd": lambda: funcgrad.jacfwd(f)(fx),
             "funcgrad jacfwd, basis loop": fwd_loop,
             "funcgrad one vjp": lambda: funcgrad.vjp(f, fx)[1](fx)}
    missing = []
    jax = peer("jax")
    if jax is None:
        missing.append(missing_note("jax"))
    else:
        import jax.numpy as jnp
        jw, jx = jnp.asarray(w), jnp.asarray(x)
        j_jac = jax.jit(jax.jacrev(lambda v: jnp.tanh(jw @ v)))
        impls["jax jit(jacrev)"] = lambda: jax.block_until_ready(j_jac(jx))
    want = np.asarray(rev_loop())
    for name in ("funcgrad jacrev", "funcgrad jacfwd", "funcgrad jacfwd, basis loop"):
        np.testing.assert_allclose(np.asarray(impls[name]()), want, rtol=1e-10, atol=1e-12,
                                   err_msg=name)
    return impls, missing


def _relabelled(rows: list) -> list:
    """Ratios against funcgrad's own single pass (the batched gradient, one VJP): the
    table's "x own grad" column."""
    for r in rows:
        r.ref = "own grad" if r.ratio is not None else r.ref
    return rows


def run(cfg: Config) -> Report:
    report = Report()
    impls, grads, missing = per_example_impls(cfg.quick)
    want = grads["funcgrad vmap(grad)"]()
    for name, g in grads.items():
        np.testing.assert_allclose(g(), want, rtol=1e-9, atol=1e-12, err_msg=name)
    t = time_all(impls, cfg)
    case = f"per-example gradients, MLP, batch {BATCH if not cfg.quick else 8}"
    report.rows += _relabelled(timing_rows(WORKLOAD, case, t, ref="funcgrad grad of the mean"))
    report.rows += [skipped_row(WORKLOAD, case, "-", note) for note in missing]
    report.targets.append(time_target("W7: per-example grads <= 2x one batched grad",
                                      t["funcgrad vmap(grad)"],
                                      t["funcgrad grad of the mean"], 2.0))
    report.targets.append(time_target("W7: per-example grads faster than torch.func",
                                      t["funcgrad vmap(grad)"],
                                      t.get("torch.func vmap(grad)"), 1.0))
    jimpls, jmissing = jacobian_impls(cfg.quick)
    jt = time_all(jimpls, cfg)
    jcase = f"Jacobian of tanh(W @ x), {N_JAC if not cfg.quick else 10}x"
    report.rows += _relabelled(timing_rows(WORKLOAD, jcase, jt, ref="funcgrad one vjp"))
    report.rows += [skipped_row(WORKLOAD, jcase, "-", note) for note in jmissing]
    for kind in ("jacrev", "jacfwd"):
        report.targets.append(time_target(
            f"W7: {kind} >= 5x faster than the basis-vector loop", jt[f"funcgrad {kind}"],
            jt[f"funcgrad {kind}, basis loop"], 0.2))
    return report


def main(argv: list[str]) -> None:
    from .__main__ import table, targets
    report = run(Config.make("--quick" in argv))
    print(table(report))
    print(targets(report))


if __name__ == "__main__":
    main(sys.argv[1:])
