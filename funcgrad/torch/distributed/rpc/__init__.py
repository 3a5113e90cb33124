"""torch.distributed.rpc for funcgrad.torch: remote calls among the MPI job's workers.

    rpc.init_rpc(f"worker{rank}", rank=rank, world_size=world)
    rpc.rpc_sync("worker1", torch.add, args=(torch.ones(2), 3))   # runs on worker1
    fut = rpc.rpc_async("worker1", f, args=(x,))                  # a Future
    rref = rpc.remote("worker1", Model)                           # the value stays there
    rref.to_here(); rref.rpc_sync().forward(x)                    # fetch it, or call it
    rpc.shutdown()                                                # waits for everyone

Workers are the processes of the job (launched with python -m funcgrad.distributed.run);
a worker's id is its rank. The agent (`agent.Agent`) sends pickled requests on its own
duplicate of MPI's world communicator, so RPC and process-group collectives can be used
together. RRefs are not reference counted: an owner keeps every value it created for
``remote`` until shutdown.
"""
from __future__ import annotations

import enum
from typing import Any, Callable

from funcgrad.torch.futures import Future
from .agent import Agent, WorkerInfo
from funcgrad.distributed.world import world
from funcgrad.torch import distributed

__all__ = ["init_rpc", "shutdown", "rpc_sync", "rpc_async", "remote", "RRef", "WorkerInfo",
           "get_worker_info", "BackendType", "TensorPipeRpcBackendOptions", "is_available"]

_NOT_INITIALIZED = "RPC has not been initialized. Call torch.distributed.rpc.init_rpc first."
_state: dict[str, Any] = {"agent": None, "timeout": 60.0}


class BackendType(enum.Enum):
    TENSORPIPE = "TENSORPIPE"


class TensorPipeRpcBackendOptions:
    """Accepted for compatibility: ``num_worker_threads`` and ``rpc_timeout`` (seconds,
    the default timeout of calls) are used; the rendezvous is MPI's."""

    def __init__(self, num_worker_threads: int = 16, rpc_timeout: float = 60.0,
                 init_method: str = "env://", device_maps: Any = None, devices: Any = None,
                 _transports: Any = None, _channels: Any = None):
        self.num_worker_threads = num_worker_threads
        self.rpc_timeout = rpc_timeout
        self.init_method = init_method


def is_available() -> bool:
    return distributed.is_available()


def _agent() -> Agent:
    agent = _state["agent"]
    if agent is None:
        raise RuntimeError(_NOT_INITIALIZED)
    return agent


def init_rpc(name: str, backend: Any = None, rank: int = -1, world_size: int | None = None,
             rpc_backend_options: TensorPipeRpcBackendOptions | None = None) -> None:
    """Join the RPC group as worker ``name`` (every process of the job must call it)."""
    if _state["agent"] is not None:
        raise RuntimeError("RPC is already initialized")
    if backend is not None and not isinstance(backend, BackendType):
        raise TypeError("Argument backend must be a member of BackendType")
    options = rpc_backend_options or TensorPipeRpcBackendOptions()
    transport = world()
    if world_size is not None and world_size != transport.size:
        raise RuntimeError(f"init_rpc: world_size is {world_size} but this job has "
                           f"{transport.size} MPI processes; start them with "
                           f"python -m funcgrad.distributed.run -n {world_size} <script>")
    if rank not in (-1, None) and rank != transport.rank:
        raise RuntimeError(f"init_rpc: rank {rank} was requested but mpiexec started this "
                           f"process as rank {transport.rank}; pass rank=-1 or the "
                           "launcher's RANK")
    agent = Agent(transport.comm.Dup(), transport.MPI, name, options.num_worker_threads)
    _state["agent"] = agent
    _state["timeout"] = options.rpc_timeout
    agent.start()  # functions served from now on may use this worker's RPC state


def shutdown(graceful: bool = True, timeout: float = 0) -> None:
    """Wait for this worker's outstanding calls, then (``graceful``) for every worker to
    reach shutdown, and stop the agent."""
    agent = _agent()
    if graceful:
        for fut in agent.outstanding():
            try:
                fut.wait()
            except BaseException:  # its caller sees the error; shutdown goes on
                pass
        agent.comm.Barrier()
    agent.stop()
    _state["agent"] = None


def get_worker_info(worker_name: str | None = None) -> WorkerInfo:
    agent = _agent()
    if worker_name is None:
        return agent.me
    return _worker(worker_name)


def _worker(to: Any) -> WorkerInfo:
    agent = _agent()
    if isinstance(to, WorkerInfo):
        return to
    if isinstance(to, int) and 0 <= to < len(agent.workers):
        return agent.workers[to]
    for w in agent.workers:
        if w.name == to:
            return w
    raise ValueError(f"Cannot get WorkerInfo from name {to}")


def _timeout(timeout: float | None) -> float:
    """Seconds (0: no limit); a negative timeout means the default (rpc_timeout)."""
    return _state["timeout"] if timeout is None or timeout < 0 else timeout


def _what(func: Any, to: Any, timeout: float) -> str:
    return f"{int(timeout * 1000)} ms, {getattr(func, '__qualname__', func)} on {to}"


def _check_callable(func: Any) -> None:
    if not callable(func):
        raise TypeError("function should be callable.")


def rpc_async(to: Any, func: Callable, args: tuple | None = None, kwargs: dict | None = None,
              timeout: float = -1.0) -> Future:
    """Run ``func(*args, **kwargs)`` on worker ``to``; a Future of its result."""
    _check_callable(func)
    seconds = _timeout(timeout)
    return _agent().request(_worker(to), "call", (func, tuple(args or ()), dict(kwargs or {})),
                            seconds, _what(func, to, seconds))


def rpc_sync(to: Any, func: Callable, args: tuple | None = None, kwargs: dict | None = None,
             timeout: float = -1.0) -> Any:
    """Run ``func(*args, **kwargs)`` on worker ``to`` and return its result."""
    return rpc_async(to, func, args, kwargs, timeout).wait()


def remote(to: Any, func: Callable, args: tuple | None = None, kwargs: dict | None = None,
           timeout: float = -1.0) -> "RRef":
    """Run ``func`` on worker ``to`` and keep the result there; an RRef to it."""
    _check_callable(func)
    agent = _agent()
    owner = _worker(to)
    key = agent.new_rref_key()
    seconds = _timeout(timeout)
    created = agent.request(owner, "remote", (key, func, tuple(args or ()),
                                              dict(kwargs or {})), seconds,
                            _what(func, to, seconds))
    return RRef._remote(owner, key, created)


class RRef:
    """A reference to a value owned by one worker. ``RRef(value)`` owns ``value`` here;
    `remote` makes one owned elsewhere."""

    def __init__(self, value: Any = None, type_hint: Any = None):
        agent = _agent()
        self._owner = agent.me
        self._key = agent.new_rref_key()
        self._created: Future = Future()
        self._created.set_result(None)
        agent.own(self._key).set_result(value)

    @classmethod
    def _remote(cls, owner: WorkerInfo, key: tuple, created: Future) -> "RRef":
        rref = cls.__new__(cls)
        rref._owner, rref._key, rref._created = owner, key, created
        return rref

    def __reduce__(self) -> tuple:
        return (_rebuilt_rref, (self._owner, self._key))

    def owner(self) -> WorkerInfo:
        return self._owner

    def owner_name(self) -> str:
        return self._owner.name

    def is_owner(self) -> bool:
        return self._owner == _agent().me

    def confirmed_by_owner(self) -> bool:
        return self._created.done()

    def local_value(self) -> Any:
        """The value, on its owner."""
        if not self.is_owner():
            raise RuntimeError(f"RRef.local_value() can only be called on the owner "
                               f"{self._owner}, this is {_agent().me}")
        return _agent().own(self._key).wait()

    def to_here(self, timeout: float = -1.0) -> Any:
        """A copy of the value (fetched from the owner, waiting until it exists)."""
        if self.is_owner():
            return self.local_value()
        self._created.wait()  # raises the error of a failed creation
        seconds = _timeout(timeout)
        return _agent().request(self._owner, "fetch", (self._key,), seconds,
                                f"{int(seconds * 1000)} ms, fetching {self}").wait()

    def rpc_sync(self, timeout: float = -1.0) -> "_Proxy":
        """``rref.rpc_sync().method(*args)`` runs the method on the owner's value."""
        return _Proxy(self, rpc_sync, timeout)

    def rpc_async(self, timeout: float = -1.0) -> "_Proxy":
        return _Proxy(self, rpc_async, timeout)

    def remote(self, timeout: float = -1.0) -> "_Proxy":
        return _Proxy(self, remote, timeout)

    def __repr__(self) -> str:
        return f"RRef(owner={self._owner}, id={self._key})"


def _rebuilt_rref(owner: WorkerInfo, key: tuple) -> RRef:
    """An RRef received in a message (its value exists once the sender could send it)."""
    done: Future = Future()
    done.set_result(None)
    return RRef._remote(owner, key, done)


def _call_method(rref: RRef, name: str, args: tuple, kwargs: dict) -> Any:
    """Runs on the owner: ``getattr(value, name)(*args, **kwargs)``."""
    return getattr(rref.local_value(), name)(*args, **kwargs)


class _Proxy:
    def __init__(self, rref: RRef, how: Callable, timeout: float):
        self._rref, self._how, self._timeout = rref, how, timeout

    def __getattr__(self, name: str) -> Callable:
        def method(*args: Any, **kwargs: Any) -> Any:
            return self._how(self._rref.owner(), _call_method,
                             args=(self._rref, name, args, kwargs), timeout=self._timeout)
        return method
