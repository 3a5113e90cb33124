"""torch.autograd for funcgrad.torch: the engine, custom Functions, grad modes, debugging.

`backward` / `grad` run the engine (`engine`); `Function` defines custom derivatives;
`detect_anomaly`, `gradcheck`/`gradgradcheck` and `graph.saved_tensors_hooks` are the
debugging tools; `graph.memory_summary()` reports what live graphs keep for backward.
`functional` has PyTorch's vjp/jvp/jacobian/hessian/hvp/vhp of whole functions, and
`Variable` is the legacy constructor (it returns a Tensor).
"""
from funcgrad.torch._runtime.grad_mode import (no_grad, enable_grad, set_grad_enabled,
                                               inference_mode, is_grad_enabled,
                                               is_inference_mode_enabled)
from funcgrad.torch.autograd.engine import backward, grad
from funcgrad.torch.autograd.function import (Function, FunctionCtx, BackwardCFunction,
                                              InplaceFunction, once_differentiable)
from funcgrad.torch._runtime.anomaly import (detect_anomaly, set_detect_anomaly,
                                             is_anomaly_enabled, is_anomaly_check_nan_enabled)
from funcgrad.torch.autograd.gradcheck import gradcheck, gradgradcheck, GradcheckError
from funcgrad.torch.autograd import (anomaly_mode, forward_ad, function, functional,
                                     grad_mode, graph, profiler)
from funcgrad.torch._runtime.node import Node
from funcgrad.torch.autograd.variable import Variable

__all__ = ["no_grad", "enable_grad", "set_grad_enabled", "inference_mode",
           "is_grad_enabled", "is_inference_mode_enabled", "backward", "grad", "Function",
           "FunctionCtx", "BackwardCFunction", "InplaceFunction", "once_differentiable",
           "detect_anomaly", "set_detect_anomaly", "is_anomaly_enabled",
           "is_anomaly_check_nan_enabled", "gradcheck", "gradgradcheck", "GradcheckError",
           "graph", "function", "anomaly_mode", "grad_mode", "Node", "Variable", "functional"]
