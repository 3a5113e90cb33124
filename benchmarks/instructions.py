"""``python -m benchmarks.instructions [--calls 100] [name ...]``: instructions per call of
funcgrad's hot paths, counted by valgrind's callgrind.

Wall-clock timings on a shared machine move by more than the effects this is meant to
see; instruction counts do not (about 1%). Each workload is set up and run once, then its
``--calls`` calls run inside one ``functools.reduce`` call, and callgrind collects only
while that C function runs (``--toggle-collect=functools_reduce``): the count is the
calls' alone, from one run, without the imports and set-up, which under valgrind take
minutes. Before the window, everything the set-up made is frozen (``gc.freeze``): the
cyclic collector's full passes otherwise walk every imported module's objects, so that a
change which only imports more (a new module nothing in the workload calls) moved a count
by 5%; frozen, the count is the workload's own allocations and collections. A Python
without symbols for that function collects nothing; then each workload
runs twice, with 0 and with ``--calls`` calls, and the difference is taken instead.

Workloads: the small-op chain's gradient (functional and through the facade), and the
small MLP training step (functional and facade). They are the paths whose eager speed the
core must not lose. Named on the command line: the jitted chain gradient, the jitted and the
``torch.compile``d MLP steps, and the hand-written numpy of each, and a scripted loop beside
the same loop written with ``funcgrad.lax`` (`script_loop`) (``JIT_WORKLOADS``).
"""
from __future__ import annotations

import argparse
import functools
import gc
import os
import re
import subprocess
import sys
import tempfile

from . import chain, mlp, script_loop

WORKLOADS = ("chain", "chain_facade", "mlp", "mlp_facade")
# the compiled paths of issue 17, beside the hand-written numpy they are measured against
JIT_WORKLOADS = ("chain_numpy", "chain_jit", "mlp_numpy", "mlp_jit", "mlp_compile",
                 "mlp_compile_loss", "mlp_compile_step", "loop_script", "loop_lax")


def _chain_functional(x, ws, bs):
    import funcgrad
    import funcgrad.numpy as fnp
    grad = funcgrad.grad(chain._loss(fnp))
    fx, fws, fbs = fnp.asarray(x), [fnp.asarray(w) for w in ws], [fnp.asarray(b) for b in bs]
    return lambda: grad(fx, fws, fbs)


def _chain_facade(x, ws, bs):
    import funcgrad.torch as torch
    tx = torch.from_numpy(x)
    tws, tbs = [torch.from_numpy(w) for w in ws], [torch.from_numpy(b) for b in bs]

    def step():
        xt = tx.detach().requires_grad_(True)
        h = xt
        for w, b in zip(tws, tbs):
            h = torch.tanh(h * w + b)
        h.sum().backward()
        return xt.grad
    return step


def _mlp_step(facade: bool):
    """The small MLP's step, funcgrad's alone (no peer is imported: under valgrind their
    imports alone would take minutes)."""
    import funcgrad
    import funcgrad.numpy as fnp
    from funcgrad.scipy.special import logsumexp
    p = mlp.make(mlp.QUICK_SIZES, mlp.QUICK_BATCH)
    if facade:
        import funcgrad.torch as torch
        return mlp._torch_like(torch, p).step
    vg = funcgrad.value_and_grad(mlp._loss(fnp, logsumexp))
    return mlp._functional(vg, [fnp.asarray(a) for a in p.params], fnp.asarray(p.x),
                           fnp.asarray(p.onehot)).step


def _chain_jit(x, ws, bs):
    import funcgrad.numpy as fnp
    jitted = chain.jit_grad()
    fx, fws, fbs = fnp.asarray(x), [fnp.asarray(w) for w in ws], [fnp.asarray(b) for b in bs]
    return lambda: jitted(fx, fws, fbs)


def _mlp_jitted(name: str):
    """The small MLP's step by hand in numpy, jitted, or the facade's with the model
    compiled (mlp_compile), the function computing the loss (mlp_compile_loss) or the
    whole step function (mlp_compile_step)."""
    p = mlp.make(mlp.QUICK_SIZES, mlp.QUICK_BATCH)
    if name == "mlp_numpy":
        return mlp._numpy(p).step
    if name == "mlp_jit":
        return mlp.jitted_step(p).step
    import funcgrad.torch as torch
    kind = {"mlp_compile_loss": "loss", "mlp_compile_step": "step"}.get(name, "model")
    return mlp._torch_like(torch, p, kind).step


def build(name: str):
    """The zero-argument step of workload ``name``, set up and run twice."""
    if name.startswith("chain"):
        x, ws, bs = chain.make(10, 100)
        make = {"chain": _chain_functional, "chain_facade": _chain_facade,
                "chain_jit": _chain_jit}.get(name)
        fn = make(x, ws, bs) if make else lambda: chain.numpy_grad(x, ws, bs)
    elif name in ("mlp", "mlp_facade"):
        fn = _mlp_step(name == "mlp_facade")
    elif name in ("loop_script", "loop_lax"):  # issue 40: scripted loop against lax by hand
        fn = script_loop.scripted() if name == "loop_script" else script_loop.by_hand()
    else:
        fn = _mlp_jitted(name)
    # twice: a compiled training step traces again on its second call (its parameters
    # have gradients from then on), which the count per call must not include
    fn()
    fn()
    return fn


def _child(name: str, calls: int) -> None:
    fn = build(name)
    # what the set-up made (modules, data) is moved out of the collector's reach: a full
    # collection in the window would cost in proportion to it, not to the path counted
    gc.collect()
    gc.freeze()
    functools.reduce(lambda _, __: fn(), range(calls), None)  # callgrind's window


def _count(name: str, calls: int, window: bool) -> int:
    """Instructions callgrind counts for the child: within `_child`'s window only
    (``window``), or the whole run."""
    with tempfile.TemporaryDirectory() as tmp:
        out = os.path.join(tmp, "cg.out")
        only = ["--collect-atstart=no", "--toggle-collect=functools_reduce"] if window else []
        cmd = ["valgrind", "--tool=callgrind", f"--callgrind-out-file={out}", *only,
               sys.executable, "-m", "benchmarks.instructions", "--child", name,
               "--calls", str(calls)]
        env = dict(os.environ, PYTHONHASHSEED="0", OMP_NUM_THREADS="1",
                   OPENBLAS_NUM_THREADS="1", MKL_NUM_THREADS="1")
        run = subprocess.run(cmd, capture_output=True, text=True, env=env)
        match = re.search(r"Collected : (\d+)", run.stderr)
        if run.returncode or not match:
            raise RuntimeError(f"callgrind failed for {name}:\n{run.stderr[-2000:]}")
        return int(match.group(1))


def per_call(name: str, calls: int) -> float:
    counted = _count(name, calls, window=True)
    if counted == 0:  # no symbol for the window: the difference of two whole runs
        return (_count(name, calls, window=False) - _count(name, 0, window=False)) / calls
    return counted / calls


def main() -> None:
    parser = argparse.ArgumentParser(prog="python -m benchmarks.instructions")
    parser.add_argument("names", nargs="*", default=list(WORKLOADS),
                        help=f"of {WORKLOADS + JIT_WORKLOADS}")
    parser.add_argument("--calls", type=int, default=100)
    parser.add_argument("--child")
    args = parser.parse_args()
    if args.child:
        return _child(args.child, args.calls)
    for name in args.names:
        print(f"{name:14s} {per_call(name, args.calls) / 1e6:8.3f}M instructions per call",
              flush=True)


if __name__ == "__main__":
    main()
