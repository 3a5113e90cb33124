"""torch.cuda's memory statistics: without a GPU the answers of a PyTorch build without
CUDA; with one (gpu marker) the truth of cupy's default pool - allocated bytes follow live
arrays, the peaks stay after frees until reset_peak_memory_stats, empty_cache gives
cached blocks back."""
import numpy as np
import pytest

import funcgrad.torch as ft
from funcgrad.backend import cupy_available

torch = pytest.importorskip("torch")


@pytest.mark.skipif(cupy_available(), reason="a GPU is present")
def test_without_a_gpu_like_a_pytorch_build_without_cuda():
    for name in ("memory_allocated", "max_memory_allocated", "memory_reserved",
                 "max_memory_reserved", "memory_stats", "empty_cache", "is_bf16_supported"):
        assert getattr(ft.cuda, name)() == getattr(torch.cuda, name)(), name
    ft.cuda.reset_peak_memory_stats()  # nothing to reset
    for T in (torch, ft):
        with pytest.raises(AssertionError, match="Torch not compiled with CUDA enabled"):
            T.cuda.mem_get_info()
    assert isinstance(ft.cuda.memory_summary(), str)


@pytest.mark.gpu
def test_allocated_peaks_reset_and_empty_cache_on_the_gpu():
    ft.cuda.synchronize()
    ft.cuda.empty_cache()
    ft.cuda.reset_peak_memory_stats()
    base = ft.cuda.memory_allocated()
    assert ft.cuda.max_memory_allocated() == base
    n = 1 << 22  # 16 MiB of float32
    a = ft.ones(n, device="cuda")
    b = a * 2
    after = ft.cuda.memory_allocated()
    assert after - base >= 2 * 4 * n
    assert ft.cuda.memory_reserved() >= after
    del a, b
    freed = ft.cuda.memory_allocated()
    assert freed <= base + 4096  # only small blocks of other live arrays remain
    assert ft.cuda.max_memory_allocated() >= after  # the peak stays
    assert ft.cuda.max_memory_reserved() >= ft.cuda.memory_reserved()
    stats = ft.cuda.memory_stats()
    assert stats["allocated_bytes.all.peak"] == ft.cuda.max_memory_allocated()
    assert stats["allocated_bytes.all.current"] == freed
    ft.cuda.reset_peak_memory_stats()
    assert ft.cuda.max_memory_allocated() == ft.cuda.memory_allocated()
    held = ft.cuda.memory_reserved()
    ft.cuda.empty_cache()
    assert ft.cuda.memory_reserved() <= held - 2 * 4 * n
    free, total = ft.cuda.mem_get_info()
    assert 0 < free <= total
    assert ft.cuda.memory_allocated("cuda:0") == ft.cuda.memory_allocated(0)


@pytest.mark.gpu
def test_float16_halves_the_gpu_memory_of_a_product():
    peaks = {}
    for dtype in (ft.float32, ft.float16):
        ft.cuda.empty_cache()
        ft.cuda.reset_peak_memory_stats()
        base = ft.cuda.memory_allocated()
        a = ft.ones(1024, 1024, device="cuda", dtype=dtype)
        c = a @ a
        peaks[dtype] = ft.cuda.max_memory_allocated() - base
        np.testing.assert_allclose(float(c[0, 0]), 1024.0)
        del a, c
    assert peaks[ft.float16] <= 0.55 * peaks[ft.float32], peaks
