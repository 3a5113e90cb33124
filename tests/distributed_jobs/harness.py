"""Launching the MPI jobs of the distributed tests (imported by path by the test files)."""
import os
import subprocess
import sys
import time

JOBS = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(os.path.dirname(JOBS))


def launch(script, n, *args, timeout=120, launcher_args=(), env=None, check=True):
    """Run ``script`` (a file in tests/distributed_jobs, or a path) on ``n`` ranks through
    ``python -m funcgrad.distributed.run``; returns (CompletedProcess, seconds). With
    ``check`` a non-zero exit fails with the job's output."""
    as_module = "-m" in launcher_args
    path = script if as_module or os.path.isabs(script) else os.path.join(JOBS, script)
    cmd = [sys.executable, "-m", "funcgrad.distributed.run", "-n", str(n), *launcher_args,
           path, *map(str, args)]
    full_env = dict(os.environ, **(env or {}))
    full_env.setdefault("PYTHONPATH", ROOT)
    start = time.monotonic()
    done = subprocess.run(cmd, capture_output=True, text=True, timeout=timeout, env=full_env,
                          cwd=ROOT)
    elapsed = time.monotonic() - start
    if check and done.returncode != 0:
        raise AssertionError(f"{' '.join(cmd)} exited with {done.returncode}\n--- stdout\n"
                             f"{done.stdout[-6000:]}\n--- stderr\n{done.stderr[-6000:]}")
    return done, elapsed


def start_jax_reference(n, out):
    """Start the jax.pmap reference over ``n`` simulated devices (runs alongside a job)."""
    env = dict(os.environ, XLA_FLAGS=f"--xla_force_host_platform_device_count={n}",
               JAX_ENABLE_X64="1", JAX_PLATFORMS="cpu")
    return subprocess.Popen([sys.executable, os.path.join(JOBS, "jax_reference.py"), str(n),
                             str(out)], env=env, cwd=JOBS, stdout=subprocess.PIPE,
                            stderr=subprocess.STDOUT, text=True)
