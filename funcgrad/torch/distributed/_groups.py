"""Process groups: `init_process_group`, `new_group`, ranks, `ReduceOp` and `Backend`.

A `ProcessGroup` wraps a funcgrad `Transport` (MPI for both the "mpi" and "gloo"
backends), the global ranks of its members in group order, and an axis name bound in the
axis environment, so that funcgrad's functional collectives run on it too
(``funcgrad.distributed.psum(x, group.axis_name)``). Ranks come from mpiexec, or from the
``env://`` variables RANK and WORLD_SIZE (or the ``rank``/``world_size`` arguments), which
then must describe the same job: a different rank order is honoured by re-ordering the MPI
world; a different world size is an error saying how to launch the job.
"""
from __future__ import annotations

import datetime
import enum
import os
import warnings
from typing import Any

import numpy as np

from funcgrad.primitives.kernels.collectives import (Transport, register_axis,
                                                     unregister_axis)
from funcgrad.distributed.world import default_timeout, world

__all__ = ["seconds_of", "ReduceOp", "Backend", "ProcessGroup", "GroupMember", "group",
           "init_process_group", "destroy_process_group", "is_initialized", "new_group",
           "get_rank", "get_world_size", "get_backend", "get_process_group_ranks",
           "get_global_rank", "get_group_rank", "resolve", "DEFAULT_NOT_INITIALIZED"]

DEFAULT_NOT_INITIALIZED = ("Default process group has not been initialized, please make sure "
                           "to call init_process_group.")


class RedOpType(enum.IntEnum):
    SUM = 0
    AVG = 1
    PRODUCT = 2
    MIN = 3
    MAX = 4
    BAND = 5
    BOR = 6
    BXOR = 7

    def __repr__(self) -> str:
        return f"<RedOpType.{self.name}: {self.value}>"

    def __str__(self) -> str:
        return f"RedOpType.{self.name}"


class ReduceOp:
    """The reductions of `all_reduce`, `reduce` and `reduce_scatter_tensor`."""

    RedOpType = RedOpType
    SUM = RedOpType.SUM
    AVG = RedOpType.AVG
    PRODUCT = RedOpType.PRODUCT
    MIN = RedOpType.MIN
    MAX = RedOpType.MAX
    BAND = RedOpType.BAND
    BOR = RedOpType.BOR
    BXOR = RedOpType.BXOR


# ReduceOp -> (the transport's reduction, whether the result is divided by the group size)
TRANSPORT_OP = {RedOpType.SUM: ("sum", False), RedOpType.AVG: ("sum", True),
                RedOpType.PRODUCT: ("prod", False), RedOpType.MIN: ("min", False),
                RedOpType.MAX: ("max", False), RedOpType.BAND: ("band", False),
                RedOpType.BOR: ("bor", False), RedOpType.BXOR: ("bxor", False)}


class Backend(str):
    """Backend names; "mpi" and "gloo" both run on MPI here."""

    UNDEFINED = "undefined"
    GLOO = "gloo"
    NCCL = "nccl"
    MPI = "mpi"
    UCC = "ucc"
    XCCL = "xccl"

    def __new__(cls, name: str) -> str:  # type: ignore[misc]
        if not isinstance(name, str):
            raise ValueError("Backend constructor parameter must be string-ish")
        return getattr(Backend, name.upper(), name.lower())


_SUPPORTED = (Backend.MPI, Backend.GLOO)
_KNOWN_UNBUILT = {Backend.NCCL: "NCCL", Backend.UCC: "UCC", Backend.XCCL: "XCCL"}


class ProcessGroup:
    """A group of processes that run collectives together."""

    def __init__(self, transport: Transport, ranks: list[int], backend: str, name: str):
        self.transport = transport
        self.ranks = ranks  # global rank of each group rank
        self.backend = backend
        self.group_name = name
        self.axis_name = f"torch.distributed:{name}"
        register_axis(self.axis_name, transport)

    def rank(self) -> int:
        return self.transport.rank

    def size(self) -> int:
        return self.transport.size

    def name(self) -> str:
        return self.backend

    def group_rank(self, global_rank: int) -> int:
        """The group rank of ``global_rank`` (ValueError if not a member)."""
        try:
            return self.ranks.index(global_rank)
        except ValueError:
            raise ValueError(f"Global rank {global_rank} is not part of group {self}"
                             ) from None

    def release(self) -> None:
        unregister_axis(self.axis_name)

    def __repr__(self) -> str:
        return (f"<funcgrad.torch.distributed.ProcessGroup {self.group_name!r} "
                f"({self.backend}, ranks {self.ranks})>")


class GroupMember:
    """``GroupMember.WORLD`` is the default group once initialised;
    ``NON_GROUP_MEMBER`` is what `new_group` returns on ranks outside the new group."""

    WORLD: ProcessGroup | None = None
    NON_GROUP_MEMBER = -100


class group:
    WORLD: ProcessGroup | None = None


_state: dict[str, Any] = {"default": None, "groups": [], "count": 0}


def is_initialized() -> bool:
    return _state["default"] is not None


def resolve(g: Any) -> ProcessGroup | None:
    """The group a call names (the default group for None); None if this rank is not a
    member of it."""
    default = _state["default"]
    if default is None:
        raise ValueError(DEFAULT_NOT_INITIALIZED)
    if g is None:
        return default
    if isinstance(g, ProcessGroup):
        if g not in _state["groups"]:
            raise ValueError("Invalid process group specified or has been destroyed.")
        return g
    if g == GroupMember.NON_GROUP_MEMBER:
        return None
    raise ValueError(f"Expecting a ProcessGroup, but got a {type(g)}.")


def seconds_of(timeout: Any) -> float | None:
    """A ``timedelta`` timeout in seconds (None stays None), PyTorch's error otherwise."""
    if timeout is None:
        return None
    if isinstance(timeout, datetime.timedelta):
        return timeout.total_seconds()
    raise TypeError(f"Expected timeout argument to be of type datetime.timedelta, got "
                    f"{type(timeout)}")


def _check_backend(backend: Any) -> str:
    name = Backend.GLOO if backend is None else Backend(str(backend))
    if name in _KNOWN_UNBUILT:
        raise RuntimeError(f"Distributed package doesn't have {_KNOWN_UNBUILT[name]} built "
                           "in; funcgrad.torch.distributed offers the 'mpi' and 'gloo' "
                           "backends (both over MPI)")
    if name not in _SUPPORTED:
        raise AssertionError(f"Unknown backend type {backend}")
    return name


def _requested(value: int, variable: str) -> int:
    """An explicit rank / world size, else the env:// variable, else -1."""
    if value is not None and value != -1:
        return int(value)
    return int(os.environ[variable]) if variable in os.environ else -1


def init_process_group(backend: Any = None, init_method: str | None = None,
                       timeout: datetime.timedelta | None = None, world_size: int = -1,
                       rank: int = -1, store: Any = None, group_name: str = "",
                       pg_options: Any = None, device_id: Any = None) -> None:
    """Start the default process group over the MPI job (launch it with
    ``python -m funcgrad.distributed.run -n N script.py``). ``init_method`` and ``store``
    are accepted for compatibility: MPI's launcher does the rendezvous."""
    if _state["default"] is not None:
        raise ValueError("trying to initialize the default process group twice!")
    name = _check_backend(backend)
    seconds = seconds_of(timeout)
    transport = world(default_timeout() if seconds is None else seconds)
    size = _requested(world_size, "WORLD_SIZE")
    if size != -1 and size != transport.size:
        raise RuntimeError(
            f"init_process_group: world_size is {size} but this job has {transport.size} "
            f"MPI process{'es' if transport.size != 1 else ''}; start every rank with "
            f"python -m funcgrad.distributed.run -n {size} <script> (or mpiexec -n {size})")
    transport = _in_requested_order(transport, _requested(rank, "RANK"))
    default = ProcessGroup(transport, list(range(transport.size)), name, "default")
    _state["default"] = default
    _state["groups"] = [default]
    _publish_world(default)


def _in_requested_order(transport: Transport, wanted: int) -> Transport:
    """The world with the ranks the processes asked for (RANK / rank=)."""
    asked = transport.allgather(np.asarray(wanted, np.int64)).tolist()
    if all(r == -1 for r in asked) or asked == list(range(transport.size)):
        return transport
    if sorted(asked) != list(range(transport.size)):
        raise RuntimeError(f"init_process_group: the ranks requested by the processes "
                           f"({asked}) must be 0 to {transport.size - 1}, each once")
    return transport.split([asked.index(r) for r in range(transport.size)])


def destroy_process_group(group: Any = None) -> None:
    """Destroy ``group`` (or every group, with the default one)."""
    default = _state["default"]
    if default is None or group is GroupMember.NON_GROUP_MEMBER:
        raise AssertionError("Process group cannot be None")
    if group is None or group is default:
        for g in _state["groups"]:
            g.release()
        _state["default"] = None
        _state["groups"] = []
        _publish_world(None)
        return
    resolve(group)
    group.release()
    _state["groups"].remove(group)


def _publish_world(default: ProcessGroup | None) -> None:
    """``GroupMember.WORLD`` and ``group.WORLD`` (the functions taking a ``group``
    argument cannot reach the class ``group`` by name)."""
    GroupMember.WORLD = group.WORLD = default


def new_group(ranks: Any = None, timeout: datetime.timedelta | None = None,
              backend: Any = None, pg_options: Any = None,
              use_local_synchronization: bool = False, group_desc: str | None = None,
              device_id: Any = None) -> Any:
    """A group of the global ``ranks`` (sorted; all of them by default). Every rank of the
    default group must call it; ranks outside get ``GroupMember.NON_GROUP_MEMBER``."""
    default = resolve(None)
    name = default.backend if backend is None else _check_backend(backend)
    size = default.size()
    members = list(range(size)) if ranks is None else sorted(int(r) for r in ranks)
    if len(members) > size:
        raise ValueError("the new group's world size should be less or equal to the world "
                         "size set by init_process_group")
    if len(set(members)) != len(members) or any(not 0 <= r < size for r in members):
        raise ValueError("The new group's rank should be within the world_size set by "
                         f"init_process_group (ranks {members}, world size {size})")
    sub = default.transport.split(members)
    _state["count"] += 1
    if sub is None:
        return GroupMember.NON_GROUP_MEMBER
    seconds = seconds_of(timeout)
    if seconds is not None:
        sub.set_timeout(seconds)
    made = ProcessGroup(sub, members, name, group_desc or f"group{_state['count']}")
    _state["groups"].append(made)
    return made


def not_in_group(op_name: str) -> None:
    default = _state["default"]
    global_rank = -1 if default is None else default.rank()
    warnings.warn(f"Running {op_name} on global rank {global_rank} which does not belong "
                  "to the given group.", stacklevel=3)


def get_rank(group: Any = None) -> int:
    g = resolve(group)
    return -1 if g is None else g.rank()


def get_world_size(group: Any = None) -> int:
    g = resolve(group)
    return -1 if g is None else g.size()


def get_backend(group: Any = None) -> str:
    g = resolve(group)
    if g is None:
        raise ValueError("Invalid process group specified")
    return g.backend


def get_process_group_ranks(group: Any) -> list[int]:
    g = resolve(group)
    return [] if g is None else list(g.ranks)


def get_global_rank(group: Any, group_rank: int) -> int:
    g = resolve(group)
    if g is None or not 0 <= group_rank < g.size():
        raise ValueError(f"Group rank {group_rank} is not part of group {group}")
    return g.ranks[group_rank]


def get_group_rank(group: Any, global_rank: int) -> int:
    g = resolve(group)
    if g is None:
        raise ValueError(f"Global rank {global_rank} is not part of group {group}")
    return g.group_rank(global_rank)
