"""``python -m funcgrad.distributed.run -n 2 train.py [args]``: launch a script on N ranks.

A thin wrapper over ``mpiexec`` with torchrun's flags (``--nproc-per-node``/``-n``,
``--nnodes 1``, ``--standalone``, ``-m`` for a module, ``--no-python``, ``--master-addr``,
``--master-port``). Every rank runs `funcgrad.distributed.worker`, which sets torchrun's
environment (RANK, WORLD_SIZE, LOCAL_RANK, LOCAL_WORLD_SIZE, MASTER_ADDR, MASTER_PORT),
makes an uncaught exception or a non-zero exit on any rank end the whole job, then runs the
script as ``__main__``. With the mpich wheel's ``mpiexec`` (Hydra) the job stays on this
machine (``-launcher fork``) and on the loopback interface (``-iface lo``); more ranks than
cores are fine (oversubscription). The exit status is mpiexec's: 0 when every rank
succeeded. ``--timeout SECONDS`` sets the watchdog's limit per operation
(FUNCGRAD_DISTRIBUTED_TIMEOUT). ``--dry-run`` prints the mpiexec command.

As torchrun does, more than one rank without ``OMP_NUM_THREADS`` in the environment gets
``OMP_NUM_THREADS=1`` on every rank, with torchrun's warning: N ranks each running as many
BLAS threads as there are cores would overload the machine (numpy's OpenBLAS reads the
variable too). Set it yourself to choose another number.
"""
from __future__ import annotations

import argparse
import os
import shlex
import shutil
import subprocess
import sys
from typing import Sequence

__all__ = ["main", "mpiexec_command", "find_mpiexec", "rank_environment"]


def find_mpiexec() -> str:
    """FUNCGRAD_MPIEXEC, else the mpiexec next to this Python (the mpich wheel's), else
    the first on PATH."""
    explicit = os.environ.get("FUNCGRAD_MPIEXEC")
    if explicit:
        return explicit
    beside = os.path.join(os.path.dirname(sys.executable), "mpiexec")
    if os.path.exists(beside):
        return beside
    found = shutil.which("mpiexec") or shutil.which("mpirun")
    if found is None:
        raise SystemExit("funcgrad.distributed.run: no mpiexec found; install it with "
                         "pip install 'funcgrad[distributed]' (the mpich wheel brings one) "
                         "or set FUNCGRAD_MPIEXEC to its path")
    return found


def _flavour(mpiexec: str) -> str:
    """'hydra' (MPICH), 'openmpi' or 'other', from ``mpiexec --version``."""
    try:
        out = subprocess.run([mpiexec, "--version"], capture_output=True, text=True,
                             timeout=30).stdout
    except (OSError, subprocess.SubprocessError):
        return "other"
    if "HYDRA" in out.upper():
        return "hydra"
    return "openmpi" if "open mpi" in out.lower() or "open-mpi" in out.lower() else "other"


def _parser() -> argparse.ArgumentParser:
    p = argparse.ArgumentParser(
        prog="python -m funcgrad.distributed.run",
        description="Run a script on several MPI ranks (torchrun's flags, over mpiexec).")
    p.add_argument("-n", "--nproc-per-node", "--nproc_per_node", "--np", dest="nproc",
                   type=int, default=1, help="number of ranks (default 1)")
    p.add_argument("--nnodes", default="1", help="only 1 (this machine) is supported")
    p.add_argument("--standalone", action="store_true", help="accepted (always standalone)")
    p.add_argument("--master-addr", "--master_addr", default="127.0.0.1")
    p.add_argument("--master-port", "--master_port", type=int, default=29500)
    p.add_argument("--timeout", type=float, default=None,
                   help="seconds an operation may take before the job is aborted")
    p.add_argument("-m", "--module", action="store_true",
                   help="run the target as a module (python -m target)")
    p.add_argument("--no-python", "--no_python", action="store_true",
                   help="run the target as an executable, not a Python script")
    p.add_argument("--mpiexec", default=None, help="the mpiexec to use")
    p.add_argument("--mpi-args", default="", help="extra arguments for mpiexec (quoted)")
    p.add_argument("--dry-run", action="store_true", help="print the command, run nothing")
    p.add_argument("target", help="the script (or module, or executable) to run")
    p.add_argument("args", nargs=argparse.REMAINDER, help="its arguments")
    return p


def mpiexec_command(options: argparse.Namespace) -> list[str]:
    if options.nproc < 1:
        raise SystemExit(f"funcgrad.distributed.run: -n must be at least 1, got "
                         f"{options.nproc}")
    if str(options.nnodes) not in ("1", "1:1"):
        raise SystemExit("funcgrad.distributed.run: only --nnodes 1 is supported; for "
                         "several machines call mpiexec with a host file directly, running "
                         "python -m funcgrad.distributed.worker <script> on each rank")
    mpiexec = options.mpiexec or find_mpiexec()
    flavour = _flavour(mpiexec)
    cmd = [mpiexec]
    if flavour == "hydra":  # this machine only, and (Linux) its loopback interface
        cmd += ["-launcher", "fork"] + (["-iface", "lo"] if sys.platform.startswith("linux")
                                        else [])
    elif flavour == "openmpi":
        cmd += ["--oversubscribe"]
    cmd += shlex.split(options.mpi_args) + ["-n", str(options.nproc)]
    if options.no_python:
        return cmd + [options.target, *options.args]
    worker = [sys.executable, "-m", "funcgrad.distributed.worker"]
    if options.module:
        worker.append("--module")
    return cmd + worker + [options.target, *options.args]


_THREADS_WARNING = (
    "*****************************************\n"
    "Setting OMP_NUM_THREADS environment variable for each process to be {} in default, "
    "to avoid your system being overloaded, please further tune the variable for optimal "
    "performance in your application as needed. \n"
    "*****************************************")


def rank_environment(options: argparse.Namespace, environ: dict) -> dict:
    """The environment every rank starts with: ``environ`` plus torchrun's rendezvous
    variables, the watchdog's limit, and one OpenMP/BLAS thread per rank when several
    ranks share the machine and the user did not say (torchrun's default and warning)."""
    env = dict(environ)
    env.update({"MASTER_ADDR": options.master_addr, "MASTER_PORT": str(options.master_port),
                "FUNCGRAD_LAUNCHED": "1"})
    if options.timeout is not None:
        env["FUNCGRAD_DISTRIBUTED_TIMEOUT"] = str(options.timeout)
    if "OMP_NUM_THREADS" not in env and options.nproc > 1:
        env["OMP_NUM_THREADS"] = "1"
        print(_THREADS_WARNING.format(1), file=sys.stderr, flush=True)
    return env


def main(argv: Sequence[str] | None = None) -> int:
    options = _parser().parse_args(argv)
    cmd = mpiexec_command(options)
    if options.dry_run:
        print(shlex.join(cmd))
        return 0
    env = rank_environment(options, os.environ)
    try:
        return subprocess.call(cmd, env=env)
    except KeyboardInterrupt:  # mpiexec forwards the interrupt to the ranks itself
        return 130


if __name__ == "__main__":
    sys.exit(main())
