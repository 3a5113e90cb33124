"""A new operator with a CPU and a CUDA implementation and its autograd formula (the seed's
section 6.3, "C++ frontend and operator registration"), written with funcgrad.torch.library.

``mylib::swish(x, beta) = x * sigmoid(beta * x)`` gets two kernels: numpy on the CPU, a
cupy ``ElementwiseKernel`` on the GPU. Its backward is a second op,
``mylib::swish_backward(grad, x, beta)``, with a numpy kernel and a cupy ``RawKernel``
(hand-written CUDA C) - the layout of a C++/CUDA extension, whose forward and backward are
separate kernels. Each op binds its autograd formula: swish's backward calls
swish_backward, and swish_backward's own formula (the second derivative, in tensor ops)
makes double backward, ``gradgradcheck`` and forward mode (``torch.func.jacfwd``, derived
from the VJP) work too. Both ops are funcgrad primitives, so ``funcgrad.grad`` takes them
as well (``swish.funcgrad`` on Arrays).

Run it: ``python examples/custom_op_swish.py`` (the CUDA kernels run when cupy sees a GPU;
tests/torch/test_torch_library.py runs this file on the CPU and checks the CUDA kernels
under the ``gpu`` marker).
"""
from __future__ import annotations

import functools

import numpy as np

import funcgrad
import funcgrad.torch as torch
from funcgrad.torch import Tensor


# -- CUDA source, compiled by cupy on first use ----------------------------------------------

_BACKWARD_SOURCE = r"""
template <typename T>
__device__ void swish_backward(const T* grad, const T* x, T beta, T* out, long long n) {
    long long i = (long long)blockDim.x * blockIdx.x + threadIdx.x;
    if (i < n) {
        T s = T(1) / (T(1) + exp(-beta * x[i]));
        out[i] = grad[i] * (s + beta * x[i] * s * (T(1) - s));
    }
}
extern "C" __global__ void swish_backward_f32(const float* grad, const float* x, float beta,
                                              float* out, long long n) {
    swish_backward<float>(grad, x, beta, out, n);
}
extern "C" __global__ void swish_backward_f64(const double* grad, const double* x,
                                              double beta, double* out, long long n) {
    swish_backward<double>(grad, x, beta, out, n);
}
"""


@functools.lru_cache(maxsize=None)
def _cuda_kernels() -> tuple:
    """(the forward ElementwiseKernel, the backward RawModule), built once."""
    import cupy  # only a CUDA kernel needs it (funcgrad's cuda extra)
    forward = cupy.ElementwiseKernel(
        "T x, T beta", "T y", "y = x / (T(1) + exp(-beta * x))", "mylib_swish_forward")
    backward = cupy.RawModule(code=_BACKWARD_SOURCE)  # extern "C" kernels: found by name
    return forward, backward


def _check_cuda_dtype(x: Tensor) -> None:
    if x.dtype not in (torch.float32, torch.float64):
        raise TypeError(f"mylib::swish's CUDA kernels take float32 or float64, got {x.dtype}")


# -- the forward op -----------------------------------------------------------------------

@torch.library.custom_op("mylib::swish", mutates_args=(), device_types="cpu")
def swish(x: Tensor, beta: float = 1.0) -> Tensor:
    """x * sigmoid(beta * x), the CPU kernel (numpy)."""
    a = x.numpy()
    return torch.from_numpy(a / (1 + np.exp(-beta * a)))


@swish.register_kernel("cuda")
def _swish_cuda(x: Tensor, beta: float = 1.0) -> Tensor:
    import cupy  # a CUDA tensor came in, so cupy is installed
    _check_cuda_dtype(x)
    forward, _ = _cuda_kernels()
    a = cupy.from_dlpack(x.contiguous())
    return torch.from_dlpack(forward(a, a.dtype.type(beta)))


@swish.register_fake
def _swish_fake(x: Tensor, beta: float = 1.0) -> Tensor:
    return torch.empty_like(x)


# -- the backward op ----------------------------------------------------------------------

@torch.library.custom_op("mylib::swish_backward", mutates_args=(), device_types="cpu")
def swish_backward(grad: Tensor, x: Tensor, beta: float) -> Tensor:
    """grad * d swish / dx, the CPU kernel (numpy)."""
    g, a = grad.numpy(), x.numpy()
    s = 1 / (1 + np.exp(-beta * a))
    return torch.from_numpy(g * (s + beta * a * s * (1 - s)))


@swish_backward.register_kernel("cuda")
def _swish_backward_cuda(grad: Tensor, x: Tensor, beta: float) -> Tensor:
    import cupy  # a CUDA tensor came in, so cupy is installed
    _check_cuda_dtype(x)
    _, module = _cuda_kernels()
    g = cupy.ascontiguousarray(cupy.from_dlpack(grad.contiguous()), dtype=x.dtype.np)
    a = cupy.ascontiguousarray(cupy.from_dlpack(x.contiguous()))
    out = cupy.empty_like(a)
    name = "swish_backward_f32" if a.dtype == np.float32 else "swish_backward_f64"
    threads = 256
    blocks = (a.size + threads - 1) // threads
    module.get_function(name)((max(blocks, 1),), (threads,),
                              (g, a, a.dtype.type(beta), out, np.int64(a.size)))
    return torch.from_dlpack(out)


@swish_backward.register_fake
def _swish_backward_fake(grad: Tensor, x: Tensor, beta: float) -> Tensor:
    return torch.empty_like(x)


# -- autograd formulas -------------------------------------------------------------------------

def _save_x(ctx, inputs, output):  # noqa: ANN001 - PyTorch's setup_context signature
    x, beta = inputs
    ctx.save_for_backward(x)
    ctx.beta = beta


def _swish_grad(ctx, grad):  # noqa: ANN001
    x, = ctx.saved_tensors
    return swish_backward(grad, x, ctx.beta), None


def _save_grad_and_x(ctx, inputs, output):  # noqa: ANN001
    grad, x, beta = inputs
    ctx.save_for_backward(grad, x)
    ctx.beta = beta


def _swish_backward_grad(ctx, out_grad):  # noqa: ANN001
    """swish_backward is grad * d(x); its derivatives: d(x) in grad, grad * d'(x) in x,
    with d'(x) = beta s (1 - s) (2 + beta x (1 - 2 s)) and s = sigmoid(beta x)."""
    grad, x = ctx.saved_tensors
    beta = ctx.beta
    s = torch.sigmoid(beta * x)
    d = s + beta * x * s * (1 - s)
    d2 = beta * s * (1 - s) * (2 + beta * x * (1 - 2 * s))
    return out_grad * d, out_grad * grad * d2, None


swish.register_autograd(_swish_grad, setup_context=_save_x)
swish_backward.register_autograd(_swish_backward_grad, setup_context=_save_grad_and_x)


def main() -> dict:
    torch.manual_seed(0)
    devices = ["cpu"] + (["cuda"] if torch.cuda.is_available() else [])
    report = {}
    for device in devices:
        x = torch.randn(5, dtype=torch.float64, device=device, requires_grad=True)
        y = swish(x, 1.5)
        y.sum().backward()
        reference = x.detach() * torch.sigmoid(1.5 * x.detach())
        report[device] = {
            "grad_fn": y.grad_fn.name(),
            "max |y - reference|": float((y.detach() - reference).abs().max()),
            "gradcheck": torch.autograd.gradcheck(lambda t: swish(t, 1.5), (x,)),
            "gradgradcheck": torch.autograd.gradgradcheck(lambda t: swish(t, 1.5), (x,)),
            "opcheck": torch.library.opcheck(swish, (x, 1.5)),
        }
    # the ops by name, in torch.func, and as funcgrad primitives on Arrays
    x = torch.randn(4, dtype=torch.float64)
    jac = torch.func.jacfwd(lambda t: torch.ops.mylib.swish(t, 2.0))(x)
    report["jacfwd diagonal"] = jac.diagonal().tolist()
    report["funcgrad.grad"] = np.asarray(funcgrad.grad(
        lambda a: swish.funcgrad(a, 2.0).sum())(np.linspace(-1.0, 1.0, 4))).tolist()
    return report


if __name__ == "__main__":
    for key, value in main().items():
        print(f"{key}: {value}")
