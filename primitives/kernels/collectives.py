"""Collective kernels: the axis environment and the transport interface they call.

A collective primitive (``psum``, ``all_gather``, ...) names an *axis*: a group of SPMD
program instances that run the same code, one per process (or per device). Its
implementation asks the axis environment which `Transport` that name stands for and calls
it on raw backend arrays. Who binds a name decides how the collective runs:

- a process group (`funcgrad.distributed.initialize`, `shard_map`,
  `funcgrad.torch.distributed.init_process_group`) registers an MPI transport;
- a size-1 `SelfTransport` makes collective code run in one process unchanged;
- a batching transform (``vmap(..., axis_name=)``) handles its own axis names in its
  batching rules before an implementation is reached.

A name nobody bound raises `UnboundAxisError` (JAX's ``NameError`` text) listing the names
that are bound and how to bind one.

`Transport` is the whole interface a communication library must offer: blocking
collectives on contiguous arrays, point-to-point messages, a barrier, `start` for
non-blocking work and `split` for sub-groups. MPI (``funcgrad.distributed.mpi``) is the one
this package ships; NCCL through cupy fits the same methods.

Before each collective the ranks agree on what they are about to do (operation, dtype,
shape, root): a disagreement raises `CollectiveMismatchError` on every rank, listing what
each rank called, instead of hanging or mixing up buffers (MPI's own behaviour for
mismatched counts). Each call's `Signature` is built once and remembered. The agreement is
a transport's hook, `Transport._agreed`; this module's default is one small all-reduce of
the signature before the operation. A transport may fold the agreement into the data
(`Transport._agreed_allreducer`): the MPI transport sends an all-reduce's operand in the
same point-to-point messages as the signatures, so a small all-reduce costs one exchange,
not two (see ``funcgrad.distributed.agreement``). ``checks=False`` on a transport (or
``FUNCGRAD_DISTRIBUTED_CHECKS=0``, on every rank alike) skips the agreement.

A blocking all-reduce, the collective a training loop calls over and over on the same few
shapes, runs through a function made once per (shape, dtype, op) and remembered
(`Transport.allreducer`): what a call needs that depends on those alone (the signature,
the op's validity, the exchange's plan and buffers) is settled when it is made, and a
later call does only the per-call work, the agreement included: every call still sends
its signature and checks what arrived.
"""
from __future__ import annotations

import contextlib
import functools
import os
import zlib
from abc import ABC, abstractmethod
from typing import Any, Callable, Hashable, Iterator, Sequence

import numpy as np

__all__ = ["Transport", "SelfTransport", "Pending", "UnboundAxisError",
           "CollectiveMismatchError", "Signature", "signature", "REDUCE_OPS",
           "register_axis", "unregister_axis", "axis_transport", "bound_axis_names",
           "axis_size", "bind_axis"]

REDUCE_OPS = ("sum", "prod", "max", "min", "band", "bor", "bxor")
_OPERATIONS = ("allreduce", "allgather", "reduce_scatter", "broadcast", "gather", "scatter",
               "sendrecv", "barrier", "reduce")
_DTYPES = [np.dtype(t) for t in (np.bool_, np.int8, np.int16, np.int32, np.int64, np.uint8,
                                  np.uint16, np.uint32, np.uint64, np.float16, np.float32,
                                  np.float64, np.complex64, np.complex128)]
_MAX_DIMS = 8
SIGNATURE_LENGTH = 16  # int64s: operation, dtype, extra, ndim, nbytes, dims, padding
SIGNATURE_BYTES = 8 * SIGNATURE_LENGTH


class UnboundAxisError(NameError):
    """A collective named an axis that no process group or transform has bound."""


class CollectiveMismatchError(RuntimeError):
    """The ranks of a group called different collectives, or one collective on operands of
    different shapes or dtypes."""


class Pending:
    """A started operation. ``wait()`` blocks until it is done and returns its result (or
    raises its error), any number of times; ``done()`` asks without blocking."""

    __slots__ = ("_wait", "_test", "_cancel", "_finished", "_result", "_error")

    def __init__(self, wait: Callable[[], Any], test: Callable[[], bool] | None = None,
                 cancel: Callable[[], None] | None = None):
        self._wait = wait
        self._test = test
        self._cancel = cancel
        self._finished = False
        self._result: Any = None
        self._error: BaseException | None = None

    @classmethod
    def completed(cls, result: Any) -> "Pending":
        p = cls(lambda: result)
        p.wait()
        return p

    def wait(self) -> Any:
        if not self._finished:
            try:
                self._result = self._wait()
            except BaseException as e:  # kept, so that every wait() raises it again
                self._error = e
            self._finished = True
            self._wait = self._test = self._cancel = None  # let the buffers go
        if self._error is not None:
            raise self._error
        return self._result

    def done(self) -> bool:
        if self._finished:
            return True
        return self._test is None or self._test()

    def cancel(self) -> None:
        """Withdraw an operation that has not finished (a receive whose sender never came),
        so that no later message is matched to it; a no-op once it has finished or where
        the transport cannot withdraw it."""
        if not self._finished and self._cancel is not None:
            self._cancel()
            self._finished = True
            self._error = RuntimeError("the operation was cancelled")
            self._wait = self._test = self._cancel = None


def _dtype_code(dtype: np.dtype) -> int:
    try:
        return _DTYPES.index(dtype)
    except ValueError:
        return 100 + zlib.crc32(dtype.str.encode()) % 1000


def _signature(operation: str, shape: tuple, dtype: Any, extra: int) -> np.ndarray:
    """What a rank is about to call, as int64s: equal signatures mean the same operation,
    dtype, extra (op code, root), shape and byte count (so equal operand sizes)."""
    dtype = np.dtype(dtype)
    sig = np.full(SIGNATURE_LENGTH, -1, np.int64)
    nbytes = int(np.prod(shape, dtype=np.int64)) * dtype.itemsize
    sig[:5] = (_OPERATIONS.index(operation), _dtype_code(dtype), extra, len(shape), nbytes)
    if len(shape) <= _MAX_DIMS:
        sig[5:5 + len(shape)] = shape
    else:  # a long shape: its dims as one checksum in the first slot
        sig[5] = zlib.crc32(np.asarray(shape, np.int64).tobytes())
    return sig


class Signature:
    """One call's signature (``array``, and as ``bytes``), with what the default agreement
    sends (``pair``: the signature and its negation) and whether the call is a valid
    reduction. Built once per distinct call and remembered (`signature`): a training loop
    calls the same few collectives over and over."""

    __slots__ = ("operation", "shape", "dtype", "array", "bytes", "pair", "pair_bytes",
                 "reducible")

    def __init__(self, operation: str, shape: tuple, dtype: np.dtype, extra: int):
        self.operation, self.shape, self.dtype = operation, shape, dtype
        self.array = _signature(operation, shape, dtype, extra)
        self.bytes = self.array.tobytes()
        self.pair = np.concatenate([self.array, -self.array])
        self.pair_bytes = self.pair.tobytes()
        self.reducible = (operation not in ("allreduce", "reduce_scatter", "reduce")
                          or _reduction_problem(REDUCE_OPS[extra % len(REDUCE_OPS)],
                                                dtype) is None)

    def __repr__(self) -> str:
        return f"<Signature {_describe(self.array)}>"


_SIGNATURES: dict[tuple, Signature] = {}


def signature(operation: str, shape: tuple, dtype: Any, extra: int = 0) -> Signature:
    """The remembered `Signature` of ``operation`` on ``shape``/``dtype`` (a dict look-up
    for a call seen before)."""
    key = (operation, shape, dtype, extra)
    sig = _SIGNATURES.get(key)
    if sig is None:
        if len(_SIGNATURES) > 4096:  # a program with ever-new shapes: start afresh
            _SIGNATURES.clear()
        sig = _SIGNATURES[key] = Signature(operation, tuple(shape), np.dtype(dtype), extra)
    return sig


def _describe(sig: np.ndarray) -> str:
    operation = _OPERATIONS[int(sig[0])]
    code, extra, ndim = (int(v) for v in sig[1:4])
    dtype = _DTYPES[code].name if code < len(_DTYPES) else f"dtype#{code}"
    dims = "..." if ndim > _MAX_DIMS else ", ".join(str(int(d)) for d in sig[5:5 + ndim])
    return f"{operation}({_extra_name(operation, extra)}) on {dtype}[{dims}]"


def _extra_name(operation: str, extra: int) -> str:
    if operation in ("allreduce", "reduce_scatter", "reduce"):
        return REDUCE_OPS[extra % len(REDUCE_OPS)] + (
            f", root={extra // len(REDUCE_OPS)}" if operation == "reduce" else "")
    if operation in ("broadcast", "gather", "scatter"):
        return f"root={extra}"
    return ""


def _checks_default() -> bool:
    return os.environ.get("FUNCGRAD_DISTRIBUTED_CHECKS", "1").lower() not in ("0", "false",
                                                                            "no", "off")


class Transport(ABC):
    """Communication among ``size`` ranks of a group (this process is ``rank``).

    The public methods validate and agree (see the module docstring), then call the
    ``_``-prefixed method a transport implements. Arrays are raw backend arrays; results
    are new arrays, inputs are never written. ``reduce_scatter`` takes ``(size, *s)`` and
    returns this rank's reduced ``s``; ``allgather`` returns ``(size, *s)``; ``gather``
    returns ``(size, *s)`` on the root and None elsewhere; ``scatter`` takes ``(size, *s)``
    on the root and returns each rank's ``s``."""

    kind = "transport"

    def __init__(self, rank: int, size: int):
        self.rank = rank
        self.size = size
        # the blocking all-reducers by (shape, dtype, op) (`allreducer`); public so that
        # the primitives' eager path looks one up without a call
        self.allreducers: dict[tuple, Callable[[Any], Any]] = {}
        self.checks = _checks_default()

    def __repr__(self) -> str:
        return f"<{type(self).__name__} rank {self.rank} of {self.size}>"

    @property
    def checks(self) -> bool:
        """Whether collectives agree first (see the module docstring)."""
        return self._checks

    @checks.setter
    def checks(self, value: bool) -> None:
        self._checks = bool(value)
        self.allreducers.clear()  # they were made for the old setting

    # -- agreement ---------------------------------------------------------------------
    def agree(self, operation: str, shape: tuple, dtype: Any, extra: int = 0) -> None:
        """Raise `CollectiveMismatchError` on every rank unless all ranks are about to run
        the same ``operation`` on the same shape and dtype (``extra``: op code, root)."""
        if not self.checks or self.size == 1:
            return
        sig = signature(operation, shape, dtype, extra)
        if not self._agreed(sig):
            self._disagreement(sig)

    def _agreed(self, sig: Signature) -> bool:
        """Whether every rank of the group contributed ``sig`` (the same answer on every
        rank). This default is one small all-reduce: the maximum over ranks of (sig, -sig)
        is this rank's own pair iff every rank's sig is this one (any difference makes
        some maximum exceed it, or some minimum fall below it)."""
        return self._allreduce(sig.pair, "max").tobytes() == sig.pair_bytes

    def _agreed_allreducer(self, sig: Signature, op: str) -> Callable[[Any], Any]:
        """The checked blocking all-reduce of ``sig``'s operands as a function of the
        operand (a numpy array; see `allreducer`), raising `CollectiveMismatchError` on
        every rank if the ranks' signatures differ. This default agrees, then reduces; a
        transport that can carry the signature with the data overrides it."""
        reduce = self._plain_allreducer(sig.shape, sig.dtype, op)

        def agree_then_reduce(x: Any) -> Any:
            if not self._agreed(sig):
                self._disagreement(sig)
            return reduce(x)
        return agree_then_reduce

    def _plain_allreducer(self, shape: tuple, dtype: np.dtype, op: str
                          ) -> Callable[[Any], Any]:
        """The all-reduce of operands of ``shape`` and ``dtype`` without agreement, as a
        function of the operand (what a remembered all-reducer runs after agreeing, or
        alone with ``checks`` off). This default is `_allreduce`; a transport may settle
        per-(shape, dtype, op) work here once."""
        return functools.partial(self._allreduce, op=op)

    def _disagreement(self, sig: Signature) -> None:
        """Raise the mismatch error, listing what each rank called (every rank learnt of
        the disagreement together, so all of them gather the signatures)."""
        every = self._allgather(sig.array)
        lines = "\n".join(f"  rank {r}: {_describe(s)}" for r, s in enumerate(every))
        alike = ("\nThe calls look alike: some ranks started it without blocking "
                 "(block=False, async_op=True) and others blocking; start it the same way "
                 "on every rank." if (every == sig.array).all() else "")
        raise CollectiveMismatchError(
            f"mismatched collective (this is rank {self.rank} of {self.size}); the ranks "
            f"called:\n{lines}\nEvery rank of a group must call the same collectives in the "
            f"same order, on operands of the same shape and dtype.{alike}")

    # -- the public operations -----------------------------------------------------------
    # With ``block=False`` each returns a `Pending` instead of the result (the transport
    # starts the operation and returns at once where it can).
    def allreduce(self, x: Any, op: str = "sum", *, block: bool = True) -> Any:
        if block:
            run = (self.allreducers.get((x.shape, x.dtype, op))
                   or self.allreducer(x.shape, x.dtype, op))
            return run(x) if type(x) is np.ndarray else self._staged(run, x)
        self.agree("allreduce", x.shape, x.dtype, _op_code(op))
        _check_reduction(op, x.dtype)
        return self._start("allreduce", x, op)

    def allreducer(self, shape: tuple, dtype: Any, op: str = "sum") -> Callable[[Any], Any]:
        """The blocking all-reduce of numpy operands of ``shape`` and ``dtype`` as a
        function of the operand (what ``allreduce(x, op)`` does, with the same agreement
        and errors), made on first use and remembered in ``allreducers``: the signature,
        the op's validity and the transport's own preparations are settled once, not on
        every call. An unknown ``op`` raises here."""
        key = (tuple(shape), np.dtype(dtype), op)
        run = self.allreducers.get(key)
        if run is None:
            if len(self.allreducers) > 4096:  # a program with ever-new shapes: start afresh
                self.allreducers.clear()
            run = self.allreducers[key] = self._make_allreducer(*key)
        return run

    def _make_allreducer(self, shape: tuple, dtype: np.dtype, op: str) -> Callable[[Any], Any]:
        code = _op_code(op)
        problem = _reduction_problem(op, dtype)
        checked = self.checks and self.size > 1
        if problem is None:
            if checked:
                return self._agreed_allreducer(signature("allreduce", shape, dtype, code), op)
            return self._plain_allreducer(shape, dtype, op)

        def invalid(x: Any) -> Any:  # agreed first: the ranks learn of a mismatch first
            if checked:
                self.agree("allreduce", shape, dtype, code)
            raise TypeError(problem)
        return invalid

    def _staged(self, run: Callable[[Any], Any], x: Any) -> Any:
        """``run`` (an `allreducer`) applied to ``x``, an array of another backend than
        numpy. This default passes it as it is (the transport's methods take its arrays);
        a transport that moves data through host memory moves it there and back."""
        return run(x)

    def allgather(self, x: Any, *, block: bool = True) -> Any:
        self.agree("allgather", x.shape, x.dtype)
        return self._run(block, "allgather", x)

    def reduce_scatter(self, x: Any, op: str = "sum", *, block: bool = True) -> Any:
        if x.ndim == 0 or x.shape[0] != self.size:
            raise ValueError(f"reduce_scatter needs an operand with a leading axis of the "
                             f"group's size {self.size}, got shape {tuple(x.shape)}")
        self.agree("reduce_scatter", x.shape, x.dtype, _op_code(op))
        _check_reduction(op, x.dtype)
        return self._run(block, "reduce_scatter", x, op)

    def reduce(self, x: Any, root: int, op: str = "sum", *, block: bool = True) -> Any:
        """The reduction of every rank's ``x`` on ``root``; None on the other ranks."""
        self._check_rank(root, "root")
        self.agree("reduce", x.shape, x.dtype, _op_code(op) + len(REDUCE_OPS) * root)
        _check_reduction(op, x.dtype)
        return self._run(block, "reduce", x, root, op)

    def broadcast(self, x: Any, root: int, *, block: bool = True) -> Any:
        self._check_rank(root, "root")
        self.agree("broadcast", x.shape, x.dtype, root)
        return self._run(block, "broadcast", x, root)

    def gather(self, x: Any, root: int, *, block: bool = True) -> Any:
        self._check_rank(root, "root")
        self.agree("gather", x.shape, x.dtype, root)
        return self._run(block, "gather", x, root)

    def scatter(self, x: Any, root: int, shape: tuple, dtype: Any, *,
                block: bool = True) -> Any:
        """``x`` (``(size, *shape)``) is read on ``root`` only; every rank says the
        ``shape`` and ``dtype`` of the piece it receives."""
        self._check_rank(root, "root")
        if self.rank == root and (tuple(x.shape) != (self.size, *shape) or x.dtype != dtype):
            raise ValueError(f"scatter: the root's operand must have shape "
                             f"{(self.size, *shape)} and dtype {np.dtype(dtype)}, got "
                             f"{tuple(x.shape)} {x.dtype}")
        self.agree("scatter", tuple(shape), dtype, root)
        return self._run(block, "scatter", x if self.rank == root else None, root,
                         tuple(shape), dtype)

    def sendrecv(self, x: Any, dest: int | None, source: int | None) -> Any:
        """Send ``x`` to ``dest`` and receive an array like it from ``source`` (either
        may be None) in one step that cannot deadlock; the received array, or None."""
        self.agree("sendrecv", x.shape, x.dtype)
        return self._sendrecv(x, dest, source)

    def barrier(self, *, block: bool = True) -> Any:
        self.agree("barrier", (), np.dtype(np.bool_))
        return self._run(block, "barrier")

    def _run(self, block: bool, operation: str, *args: Any) -> Any:
        if block:
            return getattr(self, "_" + operation)(*args)
        return self._start(operation, *args)

    def _start(self, operation: str, *args: Any) -> Pending:
        """The operation ``_<operation>(*args)`` started without blocking; this default,
        for transports without non-blocking operations, runs it now."""
        return Pending.completed(getattr(self, "_" + operation)(*args))

    def _check_rank(self, rank: int, what: str) -> None:
        if not 0 <= rank < self.size:
            raise ValueError(f"{what} rank {rank} is out of range for a group of "
                             f"{self.size} ranks")

    # -- what a transport implements -------------------------------------------------------
    @abstractmethod
    def _allreduce(self, x: Any, op: str) -> Any: ...

    @abstractmethod
    def _allgather(self, x: Any) -> Any: ...

    @abstractmethod
    def _reduce_scatter(self, x: Any, op: str) -> Any: ...

    @abstractmethod
    def _reduce(self, x: Any, root: int, op: str) -> Any: ...

    @abstractmethod
    def _broadcast(self, x: Any, root: int) -> Any: ...

    @abstractmethod
    def _gather(self, x: Any, root: int) -> Any: ...

    @abstractmethod
    def _scatter(self, x: Any, root: int, shape: tuple, dtype: Any) -> Any: ...

    @abstractmethod
    def _sendrecv(self, x: Any, dest: int | None, source: int | None) -> Any: ...

    @abstractmethod
    def _barrier(self) -> None: ...

    @abstractmethod
    def send(self, x: Any, dest: int, tag: int = 0) -> Pending:
        """Start sending ``x`` to ``dest``; the Pending completes when ``x`` may go."""

    @abstractmethod
    def recv(self, shape: tuple, dtype: Any, source: int | None, tag: int = 0) -> Pending:
        """Start receiving an array of ``shape``/``dtype`` from ``source`` (None: any);
        the Pending's result is ``(array, source rank)``."""

    @abstractmethod
    def split(self, ranks: Sequence[int]) -> "Transport | None":
        """A transport over ``ranks`` (in that order); None on ranks not in it. Every rank
        of this group must call it, with the same ``ranks``."""

    def set_timeout(self, seconds: float | None) -> None:
        """How long one operation may take before the job is aborted (None: for ever).
        This default, for transports that never wait on others, ignores it."""

    def abort(self, code: int = 1) -> None:
        """End every process of the job (a rank that failed calls this)."""
        os._exit(code)


def _op_code(op: str) -> int:
    try:
        return REDUCE_OPS.index(op)
    except ValueError:
        raise ValueError(f"unknown reduction {op!r}; use one of {', '.join(REDUCE_OPS)}"
                         ) from None


def _reduction_problem(op: str, dtype: Any) -> str | None:
    """Why reduction ``op`` is not defined on ``dtype`` (None: it is)."""
    dtype = np.dtype(dtype)
    if op.startswith("b") and dtype.kind not in "biu":
        return f"the bitwise reduction {op} needs an integer or bool dtype, got {dtype.name}"
    if op in ("max", "min") and dtype.kind == "c":
        return (f"a {op} reduction is not defined on complex values (got {dtype.name}); "
                "reduce the real and imaginary parts or the absolute values instead")
    return None


def _check_reduction(op: str, dtype: Any) -> None:
    problem = _reduction_problem(op, dtype)
    if problem is not None:
        raise TypeError(problem)


class SelfTransport(Transport):
    """A group of one: every collective is the identity (as over an axis of size 1)."""

    kind = "self"

    def __init__(self) -> None:
        super().__init__(0, 1)

    def _allreduce(self, x: Any, op: str) -> Any:
        return x.copy()

    def _allgather(self, x: Any) -> Any:
        return x[None].copy()

    def _reduce_scatter(self, x: Any, op: str) -> Any:
        return x[0].copy()

    def _reduce(self, x: Any, root: int, op: str) -> Any:
        return x.copy()

    def _broadcast(self, x: Any, root: int) -> Any:
        return x.copy()

    def _gather(self, x: Any, root: int) -> Any:
        return x[None].copy()

    def _scatter(self, x: Any, root: int, shape: tuple, dtype: Any) -> Any:
        return x[0].copy()

    def _sendrecv(self, x: Any, dest: int | None, source: int | None) -> Any:
        return x.copy() if source is not None else None

    def _barrier(self) -> None:
        return None

    def send(self, x: Any, dest: int, tag: int = 0) -> Pending:
        raise ValueError("a group of one process has no other rank to send to")

    def recv(self, shape: tuple, dtype: Any, source: int | None, tag: int = 0) -> Pending:
        raise ValueError("a group of one process has no other rank to receive from")

    def split(self, ranks: Sequence[int]) -> "Transport | None":
        return SelfTransport() if 0 in ranks else None


# ---------------------------------------------------------------------------------------
# The axis environment
# ---------------------------------------------------------------------------------------

_AXES: dict[Hashable, Transport] = {}


def register_axis(name: Hashable, transport: Transport) -> None:
    """Bind axis ``name`` to ``transport`` for this process (until `unregister_axis`)."""
    try:
        hash(name)
    except TypeError:
        raise TypeError(f"an axis name must be hashable, got {type(name).__name__}") from None
    _AXES[name] = transport


def unregister_axis(name: Hashable) -> None:
    _AXES.pop(name, None)


def bound_axis_names() -> list:
    return list(_AXES)


def axis_transport(name: Hashable) -> Transport:
    """The transport bound to axis ``name``, or `UnboundAxisError`."""
    try:
        return _AXES[name]
    except (KeyError, TypeError):
        raise UnboundAxisError(
            f"unbound axis name: {name}. The following axis names (e.g. defined by pmap) "
            f"are available to collective operations: {list(_AXES)}. Bind one by calling "
            "the collective inside funcgrad.distributed.shard_map or pmap, after "
            "funcgrad.distributed.initialize() (the MPI world, axis 'world'), or after "
            "funcgrad.torch.distributed.init_process_group().") from None


@contextlib.contextmanager
def bind_axis(name: Hashable, transport: Transport) -> Iterator[Transport]:
    """Bind ``name`` to ``transport`` inside a ``with`` block (restoring what it was),
    e.g. ``bind_axis("i", SelfTransport())`` to run collective code in one process."""
    previous = _AXES.get(name)
    register_axis(name, transport)
    try:
        yield transport
    finally:
        if previous is None:
            unregister_axis(name)
        else:
            register_axis(name, previous)


def axis_size(name: Hashable) -> int:
    """The number of ranks along axis ``name``."""
    return axis_transport(name).size
