"""Primitive.def_impl: one implementation per backend (numpy on the CPU, a cupy kernel on
the GPU), chosen by the inputs' device, with a clear error naming the primitive and the
backend when one is missing. The GPU kernels (a cupy ElementwiseKernel and a RawKernel)
run under the gpu marker."""
import numpy as np
import pytest

import funcgrad as fg
import funcgrad.numpy as fnp
from funcgrad.primitives import Primitive, sampling

_calls: list = []


def _cpu_softsign(x):
    _calls.append("cpu")
    return x / (1 + np.abs(x))


_SOFTSIGN_GPU_SOURCE = "y = x / (T(1) + abs(x))"


def _gpu_softsign(x):
    """A cupy ElementwiseKernel (compiled on first use)."""
    import cupy
    _calls.append("gpu")
    kernel = cupy.ElementwiseKernel("T x", "T y", _SOFTSIGN_GPU_SOURCE, "fg_test_softsign")
    return kernel(x)


softsign = Primitive("test_backend_softsign", _cpu_softsign, sample=sampling.elementwise(),
                     replace=True)
softsign.def_impl("gpu", _gpu_softsign)
softsign.defvjp(lambda g, x: g / (1 + fnp.abs(x)) ** 2)


def test_the_cpu_implementation_runs_for_numpy_inputs_with_its_rules():
    _calls.clear()
    x = np.array([-2.0, 0.5, 3.0])
    np.testing.assert_allclose(np.asarray(softsign(x)), x / (1 + np.abs(x)))
    g = fg.grad(lambda a: fnp.sum(softsign(a)))(x)
    np.testing.assert_allclose(np.asarray(g), 1 / (1 + np.abs(x)) ** 2)
    assert set(_calls) == {"cpu"}
    assert set(softsign.impls) == {"cpu", "gpu"}


def test_a_backend_without_an_implementation_names_the_primitive_and_the_backend():
    gpu_only = Primitive("test_backend_gpu_only", None, replace=True)
    gpu_only.def_impl("gpu", _gpu_softsign)
    with pytest.raises(NotImplementedError,
                       match=r"primitive 'test_backend_gpu_only' has no implementation for "
                             r"the cpu backend \(it has: gpu\)"):
        gpu_only(np.ones(2))
    with pytest.raises(ValueError, match="unknown backend 'tpu'"):
        gpu_only.def_impl("tpu", _cpu_softsign)


def test_def_impl_is_a_decorator_and_a_single_backend_calls_its_function_directly():
    prim = Primitive("test_backend_decorated", lambda x: x + 1, replace=True)
    assert prim.impl(np.float64(1.0)) == 2.0

    @prim.def_impl("cpu")
    def twice(x):
        return 2 * x
    assert prim.impl is twice  # nothing to choose: no dispatch cost
    np.testing.assert_allclose(np.asarray(prim(np.ones(2))), [2.0, 2.0])


@pytest.mark.gpu
def test_the_gpu_kernel_runs_for_cupy_inputs_and_matches_the_cpu():
    _calls.clear()
    x = np.linspace(-3.0, 3.0, 11)
    x_gpu = fg.device_put(fnp.asarray(x), "gpu")
    y = softsign(x_gpu)
    assert y.device == "gpu:0"
    np.testing.assert_allclose(fg.device_put(y, "cpu").to_numpy(), x / (1 + np.abs(x)),
                               rtol=1e-14)
    g = fg.grad(lambda a: fnp.sum(softsign(a)))(x_gpu)
    np.testing.assert_allclose(fg.device_put(g, "cpu").to_numpy(), 1 / (1 + np.abs(x)) ** 2,
                               rtol=1e-14)
    assert "gpu" in _calls and "cpu" not in _calls


@pytest.mark.gpu
def test_a_raw_kernel_as_the_gpu_implementation():
    import cupy
    source = r"""
    extern "C" __global__ void fg_test_cube(const double* x, double* y, long long n) {
        long long i = (long long)blockDim.x * blockIdx.x + threadIdx.x;
        if (i < n) y[i] = x[i] * x[i] * x[i];
    }"""
    kernel = cupy.RawKernel(source, "fg_test_cube")

    def gpu_cube(x):
        x = cupy.ascontiguousarray(x, dtype=cupy.float64)
        y = cupy.empty_like(x)
        kernel(((x.size + 127) // 128,), (128,), (x, y, np.int64(x.size)))
        return y

    cube = Primitive("test_backend_cube", lambda x: x ** 3, replace=True)
    cube.def_impl("gpu", gpu_cube)
    cube.defvjp(lambda g, x: 3 * g * x ** 2)
    x = fg.device_put(fnp.linspace(-1.0, 2.0, 300), "gpu")
    np.testing.assert_allclose(fg.device_put(cube(x), "cpu").to_numpy(),
                               np.linspace(-1.0, 2.0, 300) ** 3, rtol=1e-14)
    g = fg.grad(lambda a: fnp.sum(cube(a)))(x)
    np.testing.assert_allclose(fg.device_put(g, "cpu").to_numpy(),
                               3 * np.linspace(-1.0, 2.0, 300) ** 2, rtol=1e-14)
