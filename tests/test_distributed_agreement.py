"""The agreement exchange (funcgrad.distributed.agreement) in one process, on any number of
ranks: each rank is a thread whose communicator passes messages through in-memory queues
with MPI's receive semantics (a capacity; the status reports the length that arrived).

Checked for 1 to 9 ranks (powers of two and the folds of the others): the fused
all-reduce equals numpy's reduction over the ranks for every op and many dtypes, bitwise
the same on every rank; ranks whose calls differ (shape, dtype, op, operation, one small
operand against one too large to ride along, a single rank anywhere) all get None; no
message is left behind, so the next exchange agrees again. The MPI jobs of
test_distributed.py run the same exchange over real MPI on 2 and 4 ranks.
"""
import queue
import threading
import time

import numpy as np
import pytest

from funcgrad.distributed.agreement import (FUSED_BYTES, PAIR_FUSED_BYTES, Exchange,
                                            fused_capacity, pattern)
from funcgrad.primitives.kernels.collectives import REDUCE_OPS, SIGNATURE_BYTES, signature


class _Status:
    count = -1

    def Get_count(self, datatype):
        return self.count


class _MPI:
    BYTE = "byte"
    Status = _Status


class _Comm:
    """Rank ``rank`` of an in-memory communicator: sends never block (a queue per ordered
    pair of ranks), receives copy into the buffer and record the length, and a message
    longer than the buffer is an error, as MPI's truncation is."""

    def __init__(self, rank, boxes, size):
        self.rank, self.boxes, self.size = rank, boxes, size
        self.sent = self.longest = 0

    def Get_rank(self):
        return self.rank

    def Get_size(self):
        return self.size

    def Send(self, buf, dest, tag=0):
        self.sent += 1
        self.longest = max(self.longest, np.asarray(buf).nbytes)
        self.boxes[self.rank, dest].put(np.array(buf, np.uint8, copy=True))

    def Recv(self, buf, source, tag, status):
        got = self.boxes[source, self.rank].get(timeout=20)
        if got.nbytes > buf.nbytes:
            raise RuntimeError(f"message truncated: {got.nbytes} > {buf.nbytes} bytes")
        buf[:got.nbytes] = got
        status.count = got.nbytes

    def Sendrecv(self, sendbuf, dest, sendtag, recvbuf, source, recvtag, status):
        self.Send(sendbuf, dest)
        self.Recv(recvbuf, source, recvtag, status)

    def Send_init(self, buf, dest, tag=0):
        return _Persistent(lambda: self.Send(buf, dest, tag), lambda status=None: None)

    def Recv_init(self, buf, source, tag=0):
        return _Persistent(lambda: None,
                           lambda status=None: self.Recv(buf, source, tag, status))


class _Persistent:
    """A persistent request of `_Comm`: ``Start`` sends (a send never blocks), ``Wait``
    receives; starting an active request is an error, as in MPI."""

    def __init__(self, start, wait):
        self.start, self.wait, self.active = start, wait, False

    def Start(self):
        assert not self.active, "started an active persistent request"
        self.active = True
        self.start()

    def Wait(self, status=None):
        assert self.active, "waited on an inactive persistent request"
        self.active = False
        self.wait(status)


def _exchanges(n):
    boxes = {(a, b): queue.Queue() for a in range(n) for b in range(n)}
    return [Exchange(_Comm(r, boxes, n), _MPI) for r in range(n)], boxes


def _on_every_rank(exchanges, call):
    """``call(rank, exchange)`` on one thread per rank; the results by rank."""
    results, errors = [None] * len(exchanges), []

    def run(r):
        try:
            results[r] = call(r, exchanges[r])
        except BaseException as e:  # reported below, on the test's thread
            errors.append(e)
    threads = [threading.Thread(target=run, args=(r,)) for r in range(len(exchanges))]
    for t in threads:
        t.start()
    for t in threads:
        t.join(timeout=60)
    assert not any(t.is_alive() for t in threads), "an exchange hung"
    if errors:
        raise errors[0]
    return results


def _allreduce(r, exchange, x, op, via="run"):
    """The exchange's all-reduce of x (True for a header-only agreement), or None where the
    ranks disagree; ``via`` "allreducer": through the function the MPI transport calls."""
    sig = signature("allreduce", x.shape, x.dtype, REDUCE_OPS.index(op))
    plan = exchange.plan(sig)
    if plan.message is None:
        return exchange.run(plan, None)
    if via == "allreducer":
        return exchange.allreducer(plan, lambda: None)(x)
    return exchange.run(plan, x)


def _operand(r, shape, dtype):
    rng = np.random.RandomState(r)
    if np.dtype(dtype) == np.bool_:
        return rng.rand(*shape) < 0.5
    if np.dtype(dtype).kind in "iu":
        return rng.randint(0, 50, size=shape).astype(dtype)
    values = rng.randn(*shape) * 3
    if np.dtype(dtype) == np.float16:  # quarters: exact sums in any order
        values = np.round(values * 4) / 4
    if np.dtype(dtype).kind == "c":
        values = values + 1j * rng.randn(*shape)
    return np.asarray(values).astype(dtype)


_EXPECTED = {"sum": np.add, "prod": np.multiply, "max": np.maximum, "min": np.minimum,
             "band": np.bitwise_and, "bor": np.bitwise_or, "bxor": np.bitwise_xor}


def test_the_doubling_pattern_pairs_every_rank_consistently():
    for n in range(1, 17):
        parts = [pattern(r, n) for r in range(n)]
        for r, (fold, steps) in enumerate(parts):
            if fold is not None:  # leaves and hosts pair with each other
                kind, other = fold
                assert parts[other][0] == ({"leaf": "host", "host": "leaf"}[kind], r)
            for k, (partner, lower) in enumerate(steps):  # step k pairs both ways
                assert parts[partner][1][k] == (r, not lower)
        doubling = [len(steps) for fold, steps in parts if not (fold and fold[0] == "leaf")]
        assert set(doubling) == {(n.bit_length() - 1)}


VIA = pytest.mark.parametrize("via", ["run", "allreducer"])


@VIA
@pytest.mark.parametrize("n", range(1, 10))
def test_fused_allreduce_equals_the_reduction_on_every_rank(n, via):
    exchanges, boxes = _exchanges(n)
    cases = [((5,), "float64", "sum"), ((2, 3), "float32", "prod"), ((), "float64", "max"),
             ((4,), "int32", "min"), ((7,), "uint8", "bxor"), ((3,), "int64", "band"),
             ((3,), "int16", "bor"), ((6,), "bool", "sum"), ((6,), "bool", "prod"),
             ((2, 2), "complex128", "sum"), ((0, 3), "float64", "sum"),
             ((3,), "float16", "sum")]
    for shape, dtype, op in cases:
        xs = [_operand(r, shape, dtype) for r in range(n)]
        got = _on_every_rank(exchanges, lambda r, ex: _allreduce(r, ex, xs[r], op, via))
        want = xs[0]
        for x in xs[1:]:
            want = _EXPECTED[op](want, x)
        for r, g in enumerate(got):
            assert type(g) is np.ndarray and g.shape == shape and g.dtype == dtype, (r, g)
            rtol = 1e-5 if dtype == "float32" else 1e-12  # numpy's order is another
            np.testing.assert_allclose(g, want, rtol=rtol,
                                       err_msg=f"{op} {dtype} on rank {r} of {n}")
            assert g.tobytes() == got[0].tobytes(), f"rank {r} differs from rank 0"
    assert all(q.empty() for q in boxes.values())


@VIA
def test_results_are_new_arrays_and_inputs_are_not_written(via):
    exchanges, _ = _exchanges(2)
    xs = [np.arange(4.0) + r for r in range(2)]
    kept = [x.copy() for x in xs]
    first = _on_every_rank(exchanges, lambda r, ex: _allreduce(r, ex, xs[r], "sum", via))
    second = _on_every_rank(exchanges, lambda r, ex: _allreduce(r, ex, xs[r] * 2, "sum",
                                                                via))
    for r in range(2):
        np.testing.assert_array_equal(xs[r], kept[r])
        np.testing.assert_array_equal(first[r], [1.0, 3.0, 5.0, 7.0])  # not overwritten
        np.testing.assert_array_equal(second[r], [2.0, 6.0, 10.0, 14.0])


def _big(n):
    return fused_capacity(n) // 8 + 1  # float64 elements: too many to ride along


@VIA
@pytest.mark.parametrize("n", range(2, 10))
@pytest.mark.parametrize("differs", ["shape", "dtype", "op", "operation", "large",
                                     "size only", "bytes only"])
def test_any_disagreement_is_none_on_every_rank_and_leaves_nothing_behind(n, differs, via):
    exchanges, boxes = _exchanges(n)
    for odd in sorted({0, n // 2, n - 1}):  # the rank that differs: a leaf, a host, ...
        def call(r, ex, odd=odd):
            x, op, operation = np.ones(3), "sum", "allreduce"
            if r == odd:
                x = {"shape": np.ones(4), "dtype": np.ones(3, np.float32),
                     "large": np.ones(_big(n)), "size only": np.ones((3, 1)),
                     "bytes only": np.ones(3, np.int64)}.get(differs, x)
                op = "max" if differs == "op" else op
                operation = "allgather" if differs == "operation" else operation
            if operation != "allreduce":
                return ex.run(ex.plan(signature(operation, x.shape, x.dtype)), None)
            return _allreduce(r, ex, x, op, via)
        got = _on_every_rank(exchanges, call)
        assert got == [None] * n, (odd, got)
        assert all(q.empty() for q in boxes.values())
        again = _on_every_rank(exchanges, lambda r, ex: _allreduce(r, ex, np.ones(3), "sum",
                                                                   via))
        for g in again:
            np.testing.assert_array_equal(g, np.full(3, float(n)))


def test_large_operands_and_other_collectives_exchange_headers_only():
    assert fused_capacity(2) == PAIR_FUSED_BYTES and fused_capacity(3) == FUSED_BYTES
    exchanges, _ = _exchanges(3)
    big = exchanges[0].plan(signature("allreduce", (_big(3),), np.float64, 0))
    other = exchanges[0].plan(signature("broadcast", (3,), np.float64, 1))
    bitwise_float = exchanges[0].plan(signature("allreduce", (3,), np.float64,
                                                REDUCE_OPS.index("band")))
    assert big.message is None and other.message is None and bitwise_float.message is None
    got = _on_every_rank(exchanges, lambda r, ex: ex.run(ex.plan(signature(
        "allreduce", (_big(3),), np.float64, 0)), None))
    assert got == [True] * 3
    assert [ex.comm.sent for ex in exchanges] == [1, 2, 1]  # leaf, host (step, result), rank 2
    assert {ex.comm.longest for ex in exchanges} == {SIGNATURE_BYTES}


def test_a_remembered_allreducer_still_agrees_on_every_call():
    """The function the MPI transport makes once per plan sends its signature and checks
    what arrived on every call: calls of two plans in turn each write their own header,
    and against a call of the same byte count but another dtype, or the same call sent
    without its operand (a non-blocking start of it), every rank learns of the mismatch
    (never a sum of mislabelled bytes), with nothing left behind."""
    exchanges, boxes = _exchanges(2)
    f64, i64 = (signature("allreduce", (3,), dtype, 0) for dtype in (np.float64, np.int64))
    made = [{sig: ex.allreducer(ex.plan(sig), lambda: "mismatch") for sig in (f64, i64)}
            for ex in exchanges]
    for _ in range(3):
        for sig in (f64, i64, i64, f64):
            got = _on_every_rank(exchanges, lambda r, ex: made[r][sig](
                np.full(3, r + 1, sig.dtype)))
            for g in got:
                assert g.dtype == sig.dtype
                np.testing.assert_array_equal(g, np.full(3, 3))
    got = _on_every_rank(exchanges, lambda r, ex: made[r][(f64, i64)[r]](
        np.ones(3, (f64, i64)[r].dtype)))
    assert got == ["mismatch"] * 2
    got = _on_every_rank(exchanges, lambda r, ex: (made[0][f64](np.ones(3)) if r == 0 else
                                                   ex.run(ex.plan(f64), None)))
    assert got == ["mismatch", None]
    assert all(q.empty() for q in boxes.values())
    again = _on_every_rank(exchanges, lambda r, ex: made[r][f64](np.ones(3)))
    np.testing.assert_array_equal(again[1], np.full(3, 2.0))


def test_a_remembered_allreducers_results_are_its_own_across_calls():
    """The two-rank swap reuses its message buffers and persistent requests on every
    call; what it returns is a new array each time: results kept across calls (of one
    plan and of others in between) keep their values and share no memory with the
    exchange's buffers, the operand or each other, and no request is left active."""
    exchanges, boxes = _exchanges(2)
    sigs = [signature("allreduce", shape, dtype, REDUCE_OPS.index(op))
            for shape, dtype, op in (((4,), np.float32, "sum"), ((2, 2), np.int32, "max"),
                                     ((), np.float64, "min"))]
    made = [[ex.allreducer(ex.plan(sig), lambda: "mismatch") for sig in sigs]
            for ex in exchanges]
    kept = []
    for call in range(5):
        for k, sig in enumerate(sigs):
            xs = [np.full(sig.shape, 10 * call + k + r, sig.dtype) for r in range(2)]
            got = _on_every_rank(exchanges, lambda r, ex: made[r][k](xs[r]))
            want = _EXPECTED[REDUCE_OPS[int(sig.array[2])]](xs[0], xs[1])
            kept += [(g, want, xs[r], exchanges[r]) for r, g in enumerate(got)]
    for g, want, x, ex in kept:
        assert type(g) is np.ndarray and g.dtype == want.dtype
        np.testing.assert_array_equal(g, want)
        assert not any(np.shares_memory(g, b) for b in (ex.send, ex.recv, x))
    values = [g for g, *_ in kept]
    assert not any(np.shares_memory(a, b) for i, a in enumerate(values)
                   for b in values[i + 1:])
    assert not any(ex.receive.active for ex in exchanges)
    assert all(q.empty() for q in boxes.values())


@VIA
def test_an_exchange_shows_the_watchdog_what_runs_until_it_ends_even_if_it_fails(via):
    exchanges, _ = _exchanges(2)
    seen = []
    for ex in exchanges:  # every exchange receives through Recv (blocking or persistent)
        recv = ex.comm.Recv

        def watched(*args, ex=ex, recv=recv):
            seen.append(ex.busy[0])
            return recv(*args)
        ex.comm.Recv = watched
    _on_every_rank(exchanges, lambda r, ex: _allreduce(r, ex, np.ones(2), "sum", via))
    _on_every_rank(exchanges, lambda r, ex: _allreduce(r, ex, np.ones(2 + r), "sum", via))
    assert seen == ["allreduce on a group of 2"] * 4
    assert [ex.busy for ex in exchanges] == [None, None]

    def broken(*args):
        raise RuntimeError("the partner is gone")
    exchanges[0].comm.Recv = broken
    with pytest.raises(RuntimeError, match="the partner is gone"):
        _allreduce(0, exchanges[0], np.ones(2), "sum", via)
    assert exchanges[0].busy is None


def test_the_watchdog_aborts_an_exchange_that_outlasts_the_timeout():
    from funcgrad.distributed.mpi import Watchdog
    aborted = []
    dog = Watchdog(0.05, aborted.append)
    exchange = _exchanges(2)[0][0]
    dog.watch(exchange)
    exchange.busy = ("allreduce on a group of 2", time.monotonic())
    deadline = time.monotonic() + 10
    while not aborted and time.monotonic() < deadline:
        time.sleep(0.01)
    assert aborted and aborted[0].startswith("allreduce on a group of 2 did not complete "
                                             "within 0.05 s")
