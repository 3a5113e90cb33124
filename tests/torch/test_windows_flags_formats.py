"""Window functions, the determinism/warning/anomaly switches and memory formats against
PyTorch."""
from __future__ import annotations

import numpy as np
import pytest

import funcgrad.torch as F

WINDOWS = ["hann_window", "hamming_window", "blackman_window", "bartlett_window",
           "kaiser_window"]


@pytest.mark.parametrize("name", WINDOWS)
def test_windows_match_pytorch(real, name):
    for length in (0, 1, 2, 5, 8):
        for periodic in (True, False):
            for dtype in ("float32", "float64"):
                ours = getattr(F, name)(length, periodic, dtype=getattr(F, dtype))
                theirs = getattr(real, name)(length, periodic, dtype=getattr(real, dtype))
                assert str(ours.dtype) == str(theirs.dtype)
                np.testing.assert_allclose(ours.numpy(), theirs.numpy(),
                                           atol=1e-6 if dtype == "float32" else 1e-12)
    assert getattr(F, name)(4, requires_grad=True).requires_grad


def test_window_parameters_and_errors_match_pytorch(real):
    for m_args in (("hamming_window", 5, False, 0.5, 0.5), ("kaiser_window", 6, True, 5.0)):
        np.testing.assert_allclose(getattr(F, m_args[0])(*m_args[1:]).numpy(),
                                   getattr(real, m_args[0])(*m_args[1:]).numpy(), atol=1e-6)
    for m in (F, real):
        with pytest.raises(RuntimeError, match="expects floating point dtypes"):
            m.hann_window(4, dtype=m.int64)


def test_switches_match_pytorch(real):
    def facts(torch):
        torch.use_deterministic_algorithms(True, warn_only=True)
        out = [torch.are_deterministic_algorithms_enabled(),
               torch.is_deterministic_algorithms_warn_only_enabled(),
               torch.get_deterministic_debug_mode()]
        torch.set_deterministic_debug_mode("error")
        out += [torch.get_deterministic_debug_mode(),
                torch.is_deterministic_algorithms_warn_only_enabled()]
        torch.set_deterministic_debug_mode(0)
        out += [torch.are_deterministic_algorithms_enabled()]
        for bad in (lambda: torch.set_deterministic_debug_mode("bad"),
                    lambda: torch.use_deterministic_algorithms(1)):
            with pytest.raises(Exception) as info:
                bad()
            out.append((type(info.value).__name__, str(info.value)))
        out += [torch.set_flush_denormal(False), torch.is_warn_always_enabled()]
        torch.set_anomaly_enabled(True)
        out += [torch.is_anomaly_enabled(), torch.is_anomaly_check_nan_enabled()]
        torch.set_anomaly_enabled(False)
        torch.init_num_threads()
        return out + [torch.is_anomaly_enabled()]
    assert facts(F) == facts(real)


def test_channels_last_matches_pytorch(real):
    def facts(m):
        x = m.tensor(np.arange(24.0).reshape(1, 2, 3, 4), requires_grad=True)
        y = x.contiguous(memory_format=m.channels_last)
        z = x.to(memory_format=m.channels_last)
        (y * 2).sum().backward()
        with pytest.raises(RuntimeError) as info:
            m.ones(2, 3).contiguous(memory_format=m.channels_last)
        w = m.ones(1, 2, 2, 2, 3).contiguous(memory_format=m.channels_last_3d)
        return [y.stride(), y.is_contiguous(), y.is_contiguous(memory_format=m.channels_last),
                z.stride(), x.is_contiguous(memory_format=m.channels_last), repr(m.channels_last),
                y.grad_fn.name(), x.grad.sum().item(), str(info.value), w.stride(),
                y.numpy(force=True).tolist() == x.detach().numpy().tolist(),
                m.ones(2, 3).contiguous(memory_format=m.contiguous_format).stride(),
                repr(m.preserve_format)]
    assert facts(F) == facts(real)
