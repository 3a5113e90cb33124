"""Several threads running backward into one shared leaf: every gradient is added (PyTorch
locks each AccumulateGrad; funcgrad.torch does too)."""
import sys
import threading

import numpy as np

import funcgrad.torch as torch


def test_shared_leaf_accumulates_exactly_from_eight_threads():
    w = torch.ones(4, requires_grad=True)
    calls_per_thread, threads = 1000, 8
    barrier = threading.Barrier(threads)

    def work(k):
        x = torch.full((4,), float(k + 1))
        barrier.wait()
        for _ in range(calls_per_thread):
            (w * x).sum().backward()

    pool = [threading.Thread(target=work, args=(k,)) for k in range(threads)]
    interval = sys.getswitchinterval()
    sys.setswitchinterval(1e-6)  # switch threads often: races show at once
    try:
        for t in pool:
            t.start()
        for t in pool:
            t.join()
    finally:
        sys.setswitchinterval(interval)
    expected = calls_per_thread * sum(range(1, threads + 1))
    np.testing.assert_array_equal(w.grad.numpy(), np.full(4, float(expected)))
