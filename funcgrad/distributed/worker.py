"""What each rank of ``python -m funcgrad.distributed.run`` runs before the user's script.

``python -m funcgrad.distributed.worker [--module] target [args]`` sets torchrun's
environment from mpiexec's (RANK, WORLD_SIZE, LOCAL_RANK, LOCAL_WORLD_SIZE, GROUP_RANK,
MASTER_ADDR, MASTER_PORT; only the last two keep a value already set), installs the fail-fast
excepthook, and runs the target as ``__main__`` with ``sys.argv`` = ``[target, *args]``. A
non-zero ``sys.exit`` on one rank ends the job too (mpiexec would otherwise let the other
ranks wait for it for ever). MPI itself is not started here: the script does that
(``init_process_group``, ``funcgrad.distributed.initialize``) when it needs it.
"""
from __future__ import annotations

import os
import runpy
import sys
from typing import Sequence

from .faults import abort_job, install_excepthook, launched_rank, launched_size

__all__ = ["main", "torchrun_environment"]


def torchrun_environment() -> dict[str, str]:
    """torchrun's variables for this rank, from the launcher's."""
    rank = launched_rank() or 0
    size = launched_size() or 1
    local = os.environ.get("MPI_LOCALRANKID", os.environ.get("OMPI_COMM_WORLD_LOCAL_RANK",
                                                              str(rank)))
    local_size = os.environ.get("MPI_LOCALNRANKS",
                                os.environ.get("OMPI_COMM_WORLD_LOCAL_SIZE", str(size)))
    return {"RANK": str(rank), "WORLD_SIZE": str(size), "LOCAL_RANK": local,
            "LOCAL_WORLD_SIZE": local_size, "GROUP_RANK": "0", "NODE_RANK": "0",
            "MASTER_ADDR": "127.0.0.1", "MASTER_PORT": "29500"}


def main(argv: Sequence[str] | None = None) -> None:
    args = list(sys.argv[1:] if argv is None else argv)
    as_module = bool(args) and args[0] == "--module"
    if as_module:
        args = args[1:]
    if not args:
        raise SystemExit("usage: python -m funcgrad.distributed.worker [--module] target "
                         "[args...]")
    for name, value in torchrun_environment().items():
        if name.startswith("MASTER_"):  # the launcher's --master-addr/--master-port win
            os.environ.setdefault(name, value)
        else:  # this rank's place in this job, whatever the environment said before
            os.environ[name] = value
    install_excepthook()
    sys.argv = list(args)
    try:
        if as_module:
            runpy.run_module(args[0], run_name="__main__", alter_sys=True)
        else:
            sys.path.insert(0, os.path.dirname(os.path.abspath(args[0])))
            runpy.run_path(args[0], run_name="__main__")
    except SystemExit as e:
        code = e.code if isinstance(e.code, int) else (0 if e.code is None else 1)
        if code != 0 and (launched_size() or 1) > 1:
            abort_job(f"[funcgrad.distributed] rank {launched_rank()} of {launched_size()} "
                      f"exited with status {code}; aborting all {launched_size()} ranks",
                      code)
        raise


if __name__ == "__main__":
    main()
