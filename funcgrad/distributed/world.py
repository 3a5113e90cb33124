"""The MPI world: starting it, naming it as an axis, asking who we are.

`initialize` starts MPI (mpi4py initialises it on import), installs the fail-fast
excepthook and binds the whole job, ``COMM_WORLD``, to an axis name ("world" unless told
otherwise), so that ``psum(x, "world")`` sums over every process. Run a script on several
processes with ``python -m funcgrad.distributed.run -n 4 script.py``; without a launcher
the world is this one process, and every collective is the identity.
"""
from __future__ import annotations

import os
from typing import Hashable

from funcgrad.primitives.kernels.collectives import (Transport, UnboundAxisError,
                                                     axis_transport, register_axis,
                                                     unregister_axis)
from .faults import install_excepthook, launched_size
from .mpi import DEFAULT_TIMEOUT, MPITransport, load_mpi

__all__ = ["initialize", "shutdown", "is_initialized", "world", "process_index",
           "process_count", "default_timeout", "WORLD"]

WORLD = "world"
_state: dict = {"world": None, "names": set()}


def default_timeout() -> float:
    """Seconds an operation may take before the watchdog aborts the job:
    FUNCGRAD_DISTRIBUTED_TIMEOUT, else PyTorch's default of 30 minutes."""
    value = os.environ.get("FUNCGRAD_DISTRIBUTED_TIMEOUT")
    return float(value) if value else DEFAULT_TIMEOUT


def world(timeout: float | None = None) -> MPITransport:
    """The transport over every process of the job (started on first use)."""
    transport = _state["world"]
    if transport is None:
        MPI = load_mpi()
        install_excepthook()
        transport = _state["world"] = MPITransport(
            MPI.COMM_WORLD, default_timeout() if timeout is None else timeout)
        expected = launched_size()
        if expected is not None and expected != transport.size:
            raise RuntimeError(
                f"the launcher started {expected} processes but MPI sees {transport.size}: "
                "mpi4py is linked against another MPI than the mpiexec that launched this "
                "job; use the mpiexec of the MPI mpi4py was built for (the mpich wheel's, "
                "which python -m funcgrad.distributed.run uses)")
    elif timeout is not None:
        transport.set_timeout(timeout)
    return transport


def initialize(axis_name: Hashable | None = WORLD, *, timeout: float | None = None
               ) -> Transport:
    """Start MPI and bind the whole job to ``axis_name``; returns the world transport.
    Calling it again is harmless (it binds another name, or the same one again)."""
    transport = world(timeout)
    if axis_name is not None:
        register_axis(axis_name, transport)
        _state["names"].add(axis_name)
    return transport


def is_initialized() -> bool:
    return _state["world"] is not None


def shutdown() -> None:
    """Unbind the names `initialize` bound (MPI itself ends when the process exits)."""
    for name in _state["names"]:
        unregister_axis(name)
    _state["names"].clear()


def process_index(axis_name: Hashable = WORLD) -> int:
    """This process's rank along ``axis_name`` (JAX's ``jax.process_index``)."""
    return _bound(axis_name).rank


def process_count(axis_name: Hashable = WORLD) -> int:
    """The number of processes along ``axis_name`` (JAX's ``jax.process_count``)."""
    return _bound(axis_name).size


def _bound(axis_name: Hashable) -> Transport:
    try:
        return axis_transport(axis_name)
    except UnboundAxisError:
        if axis_name == WORLD:
            return initialize(WORLD)
        raise
