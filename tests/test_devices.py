"""Backends and devices. The tests marked `gpu` need cupy and a GPU and are skipped cleanly
without one; the others check the device API and its errors on any machine."""
import numpy as np
import pytest

import funcgrad as fg
import funcgrad.numpy as fnp
from funcgrad.backend import cupy_available


def test_cpu_device_api():
    x = fnp.arange(3.0)
    assert x.device == "cpu" and fg.devices()[0] == "cpu"
    assert fg.device_put(x, "cpu").device == "cpu"
    g = fg.grad(lambda x: fnp.sum(fg.device_put(x, "cpu") ** 2))(x)
    np.testing.assert_allclose(np.asarray(g), [0.0, 2.0, 4.0])


def test_unknown_device_is_a_clear_error():
    with pytest.raises(ValueError, match="unknown device 'tpu'"):
        fg.device_put(fnp.ones(2), "tpu")


@pytest.mark.skipif(cupy_available(), reason="checks the message shown without a GPU")
def test_gpu_request_without_gpu_says_what_to_install():
    with pytest.raises(RuntimeError, match=r"funcgrad\[cuda\]"):
        fg.device_put(fnp.ones(2), "gpu")


@pytest.mark.gpu
def test_gpu_roundtrip_and_gradients_match_cpu():
    import cupy
    x_cpu = fnp.linspace(-1.0, 1.0, 7)
    x_gpu = fg.device_put(x_cpu, "gpu")
    assert x_gpu.device == "gpu:0" and isinstance(x_gpu._value, cupy.ndarray)

    def f(x):
        return fnp.sum(fnp.tanh(x) * fnp.exp(x) + x[::2].sum() * fnp.sin(x))

    g_gpu = fg.grad(f)(x_gpu)
    assert g_gpu.device == "gpu:0"
    np.testing.assert_allclose(fg.device_put(g_gpu, "cpu").to_numpy(),
                               np.asarray(fg.grad(f)(x_cpu)), rtol=1e-12)
    h = fg.hessian(lambda x: fnp.sum(fnp.sin(x) ** 2))(x_gpu)
    assert h.device == "gpu:0"
    # the gradient of device_put moves the cotangent back
    g = fg.grad(lambda x: fnp.sum(fg.device_put(x, "gpu") ** 2))(x_cpu)
    assert g.device == "cpu"
    np.testing.assert_allclose(np.asarray(g), 2 * np.asarray(x_cpu))


@pytest.mark.gpu
def test_mixing_devices_names_both():
    x_gpu = fg.device_put(fnp.ones(3), "gpu")
    with pytest.raises(ValueError, match="cpu and gpu:0"):
        fnp.add(x_gpu, fnp.ones(3))


@pytest.mark.gpu
def test_float32_matmul_and_linalg_on_gpu():
    a = fg.device_put(fnp.asarray(np.random.RandomState(0).randn(4, 4).astype(np.float32)), "gpu")
    g = fg.grad(lambda a: fnp.sum(fnp.linalg.inv(a @ a.T + 4 * fnp.eye(4, dtype=np.float32))))(a)
    assert g.dtype == np.float32 and g.device == "gpu:0"
