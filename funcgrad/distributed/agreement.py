"""The agreement exchange: the ranks compare their calls in point-to-point messages, and
an all-reduce's operand (up to a capacity) travels in the same messages.

Every collective first makes sure that all ranks are about to run the same operation on
operands of the same shape and dtype (`funcgrad.primitives.kernels.collectives`): an MPI
collective whose ranks pass different counts is erroneous, and may hang, fail on some
ranks only or mix up data, so the ranks must know they agree *before* MPI moves the data.
Done as a collective of its own, the agreement costs a second message latency per call,
which doubles the time of a small all-reduce. Point-to-point messages are safe with
mismatched sizes instead: a receive names a capacity, and the status says how long the
message that arrived was. So here each rank sends its signature (a header of
`SIGNATURE_BYTES`) followed by its operand in one message, receives its partner's into a
buffer as large as the longest message the exchange ever sends, and checks the header and
the length before it combines anything. One exchange both agrees and all-reduces. The
MPI transport runs an all-reduce's exchange through `Exchange.allreducer`, a function made
once per plan: between two ranks, the one swap with everything that depends on the plan
settled beforehand (a repeated eager psum's whole path, below the primitive).

The exchange is recursive doubling, MPICH's algorithm for short all-reduces: in step k a
rank swaps its block's state with the rank 2**k away (counting among the largest power of
two of ranks; each rank beyond it first folds into a partner, which hands the result back
at the end), so after log2(n) steps every rank holds the combination of all. A block's
state is (the signature, the block's value) while every rank in it agreed, and a MISMATCH
header (nothing after it) once two disagreed. Every rank runs the same steps whatever the
signatures, and the final state is the same on every rank ("all agreed" iff all signatures
are equal): a disagreement ends the exchange on every rank, with no message left behind;
the ranks then gather the signatures for the error message and the group stays usable.

Values are combined lower block first, ``op(lower, upper)``, so every rank evaluates the
same expression and holds bitwise the same result. Operands up to the exchange's capacity
travel this way: `PAIR_FUSED_BYTES` between two ranks (one swap moves the bytes MPI's own
algorithm moves, and measured faster than ``MPI_Allreduce`` up to 1e6 float32 on the
benchmark's machine), `FUSED_BYTES` in larger groups (each of the log2(n) steps moves the
whole operand, where MPI's large-message algorithms move about two operands in all).
Larger operands (where one more latency is a small share of the time) and the other
collectives exchange only the headers, then run MPI's collective. The buffers are
allocated zeroed, so the operating system maps only the pages messages touch.
"""
from __future__ import annotations

from time import monotonic
from typing import Any, Callable

import numpy as np

from funcgrad.primitives.kernels.collectives import (REDUCE_OPS, SIGNATURE_BYTES,
                                                     SIGNATURE_LENGTH, Signature)

__all__ = ["Exchange", "FUSED_BYTES", "PAIR_FUSED_BYTES", "fused_capacity", "pattern"]

FUSED_BYTES = 64 * 1024  # the largest operand an exchange carries in a group of 3 or more
PAIR_FUSED_BYTES = 4 * 2 ** 20  # ... between two ranks
_MISMATCH = np.full(SIGNATURE_LENGTH, -2, np.int64)  # no signature starts with -2
# on bools, add and maximum are "or", multiply and minimum are "and": the MPI transport's
# meaning of sum/max and prod/min on bools
_COMBINE = {"sum": np.add, "prod": np.multiply, "max": np.maximum, "min": np.minimum,
            "band": np.bitwise_and, "bor": np.bitwise_or, "bxor": np.bitwise_xor}
_LEAF, _HOST = "leaf", "host"


def fused_capacity(size: int) -> int:
    """The largest operand (in bytes) an exchange among ``size`` ranks carries."""
    return PAIR_FUSED_BYTES if size == 2 else FUSED_BYTES


def pattern(rank: int, size: int) -> tuple[tuple[str, int] | None, list[tuple[int, bool]]]:
    """This rank's part in recursive doubling over ``size`` ranks: the fold (None, or
    ("leaf", host): send to the host, receive the result; or ("host", leaf): receive the
    leaf's block first, send it the result last) and the doubling steps, as (partner,
    whether the partner's block is the lower one)."""
    pof2 = 1 << (size.bit_length() - 1)
    rem = size - pof2
    if rank < 2 * rem:
        if rank % 2 == 0:
            return (_LEAF, rank + 1), []
        fold, new = (_HOST, rank - 1), rank // 2
    else:
        fold, new = None, rank - rem
    steps = []
    mask = 1
    while mask < pof2:
        other = new ^ mask  # the partner's rank among the pof2; its block is contiguous
        steps.append((other * 2 + 1 if other < rem else other + rem, other < new))
        mask <<= 1
    return fold, steps


class _Plan:
    """One call's messages in one exchange: the watchdog's label and, for an operand the
    exchange carries, the message (header and operand bytes), its length, where the
    operand is written (``outgoing``) and the partner's is read (``incoming``), and the
    combining ufunc."""

    __slots__ = ("sig", "label", "message", "length", "outgoing", "incoming", "combine")


class Exchange:
    """The agreement exchange among the ranks of ``comm`` (a communicator of its own: its
    messages never meet a collective's or the user's)."""

    def __init__(self, comm: Any, MPI: Any, capacity: int | None = None):
        self.comm = comm
        self.rank, self.size = comm.Get_rank(), comm.Get_size()
        self.capacity = fused_capacity(self.size) if capacity is None else capacity
        self.fold, self.steps = pattern(self.rank, self.size)
        self.byte = MPI.BYTE
        self.status = MPI.Status()
        # np.zeros leaves the pages to be mapped when first touched (zeros_like writes them)
        self.send = np.zeros(SIGNATURE_BYTES + self.capacity, np.uint8)
        self.recv = np.zeros(SIGNATURE_BYTES + self.capacity, np.uint8)
        self.header = self.send[:SIGNATURE_BYTES]
        # what MPI reads and writes, as memoryviews (mpi4py takes them a little faster)
        self.outbox, self.inbox = memoryview(self.send), memoryview(self.recv)
        self.header_message = self.outbox[:SIGNATURE_BYTES]
        self.arrived_header = self.recv[:SIGNATURE_BYTES]
        self.written: Signature | None = None  # whose header self.header holds
        self.busy: tuple[str, float] | None = None  # what runs, since when (for a watchdog)
        self.plans: dict[Signature, _Plan] = {}
        self.receive: Any = None  # the persistent receive of a two-rank swap (`_receiver`)

    def plan(self, sig: Signature) -> _Plan:
        """``sig``'s plan (made once): an all-reduce of a numeric operand up to the
        capacity travels with the header; anything else (``message`` None) does not.
        The choice depends on the signature only, so ranks that agree choose alike."""
        plan = self.plans.get(sig)
        if plan is not None:
            return plan
        if len(self.plans) > 4096:
            self.plans.clear()
        plan = self.plans[sig] = _Plan()
        plan.sig, plan.label = sig, f"{sig.operation} on a group of {self.size}"
        plan.message = plan.outgoing = plan.incoming = plan.combine = None
        plan.length = SIGNATURE_BYTES
        nbytes = int(sig.array[4])
        if (sig.operation == "allreduce" and sig.reducible and sig.dtype.kind in "biufc"
                and nbytes <= self.capacity):
            end = SIGNATURE_BYTES + nbytes
            plan.length, plan.message = end, self.outbox[:end]
            plan.outgoing = self.send[SIGNATURE_BYTES:end].view(sig.dtype).reshape(sig.shape)
            plan.incoming = self.recv[SIGNATURE_BYTES:end].view(sig.dtype).reshape(sig.shape)
            plan.combine = _COMBINE[REDUCE_OPS[int(sig.array[2])]]
        return plan

    def run(self, plan: _Plan, x: np.ndarray | None) -> Any:
        """Exchange ``plan``'s signature (and, with ``x``, the operand, which the plan must
        carry): the all-reduced value (True without ``x``), or None on every rank when
        the signatures differ. While it runs, ``busy`` says so to the watchdog."""
        sig = plan.sig
        if self.written is not sig:
            self.header[:] = sig.array.view(np.uint8)
            self.written = sig
        carry = x is not None
        message, length = (plan.message, plan.length) if carry else (self.header_message,
                                                                     SIGNATURE_BYTES)
        fold = self.fold
        self.busy = (plan.label, monotonic())
        try:
            if fold is not None and fold[0] == _LEAF:
                return self._as_leaf(plan, x, message, length, fold[1])
            value, agreed = x, True
            if fold is not None:  # a host: the leaf's block first
                value, agreed = self._from_leaf(plan, x, length, fold[1])
            comm, inbox, status, byte = self.comm, self.inbox, self.status, self.byte
            for partner, lower in self.steps:
                if agreed and carry:
                    plan.outgoing[...] = value  # (faster than np.copyto)
                comm.Sendrecv(message if agreed else _MISMATCH, partner, 0, inbox, partner,
                              0, status)
                agreed = (agreed and status.Get_count(byte) == length  # `_arrived`, inlined
                          and self.arrived_header.tobytes() == sig.bytes)
                if agreed and carry:
                    value = (plan.combine(plan.incoming, value) if lower else
                             plan.combine(value, plan.incoming))
            if fold is not None:  # the leaf gets the result
                if agreed and carry:
                    plan.outgoing[...] = value
                comm.Send(message if agreed else _MISMATCH, fold[1])
        finally:
            self.busy = None
        if not agreed:
            return None
        if not carry:
            return True
        return value if type(value) is np.ndarray else np.asarray(value)  # 0-d: a scalar

    def allreducer(self, plan: _Plan, mismatch: Callable[[], Any]
                   ) -> Callable[[np.ndarray], Any]:
        """``run(plan, x)`` for a plan that carries its operand, as a function of the
        operand (a numpy array): the all-reduced value, or ``mismatch()`` where the
        signatures differ. Between two ranks the whole exchange is one swap, and the
        function does that swap's work alone, in one frame, with the plan's buffers at
        hand: the header is written when another call's is there, the operand copied into
        the message, the swap, the check of what arrived (length and header: the
        agreement), the combination, lower block first, into a new array (the buffers are
        the next call's). The swap runs on persistent requests (`_receiver`, and a send
        request on the plan's message made here): ``Start`` and ``Wait`` on requests made
        once cost less than one ``Sendrecv`` (measured 2.2 us against 2.8 us at 1e3
        float32), whose arguments mpi4py converts on every call. Other groups run
        `run`."""
        if self.fold is not None or len(self.steps) != 1:
            def exchange(x: np.ndarray) -> Any:
                out = self.run(plan, x)
                return mismatch() if out is None else out
            return exchange
        ((partner, lower),) = self.steps
        sig, header, arrived = plan.sig, self.header, self.arrived_header
        signature, expected = sig.array.view(np.uint8), sig.bytes
        outgoing, incoming, combine = plan.outgoing, plan.incoming, plan.combine
        length, label = plan.length, plan.label
        receive = self._receiver(partner)
        send = self.comm.Send_init(plan.message, partner, 0)
        status, byte = self.status, self.byte
        scalar = sig.shape == ()

        def swap(x: np.ndarray) -> Any:
            if self.written is not sig:
                header[:] = signature
                self.written = sig
            outgoing[...] = x
            self.busy = (label, monotonic())
            try:
                receive.Start()
                send.Start()
                receive.Wait(status)
                send.Wait()
            finally:
                self.busy = None
            if status.Get_count(byte) != length or arrived.tobytes() != expected:
                return mismatch()
            out = combine(incoming, x) if lower else combine(x, incoming)
            return np.asarray(out) if scalar else out  # (a 0-d combination is a scalar)
        return swap

    def _receiver(self, partner: int) -> Any:
        """The persistent receive of any message from ``partner`` into the whole inbox
        (made once: every swap receives there, whatever its plan's length)."""
        if self.receive is None:
            self.receive = self.comm.Recv_init(self.inbox, partner, 0)
        return self.receive

    def _as_leaf(self, plan: _Plan, x: np.ndarray | None, message: Any, length: int,
                 host: int) -> Any:
        """A leaf's part: its block to the host, the result back."""
        if x is not None:
            plan.outgoing[...] = x
        self.comm.Send(message, host)
        self.comm.Recv(self.inbox, host, 0, self.status)
        if not self._arrived(length, plan.sig):
            return None
        return True if x is None else plan.incoming.copy()

    def _from_leaf(self, plan: _Plan, x: np.ndarray | None, length: int,
                   leaf: int) -> tuple[Any, bool]:
        """A host's first part: (its block combined with the leaf's, whether they agree)."""
        self.comm.Recv(self.inbox, leaf, 0, self.status)
        if not self._arrived(length, plan.sig):
            return x, False
        return (x if x is None else plan.combine(plan.incoming, x)), True

    def _arrived(self, length: int, sig: Signature) -> bool:
        """Whether the message just received is ``sig``'s, of the expected length."""
        return (self.status.Get_count(self.byte) == length
                and self.arrived_header.tobytes() == sig.bytes)
