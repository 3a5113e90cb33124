"""funcgrad: pure-functional automatic differentiation on numpy and cupy.

JAX's transforms (grad, vjp, jvp, jacfwd, jacrev, hessian, checkpoint, custom rules) over
immutable Arrays, and `funcgrad.torch`, a PyTorch-style facade on the same rules.
"""
from funcgrad.array import Array
from funcgrad._config import config, debug_infs, debug_nans, numpy_dtype_promotion
from funcgrad import tree_util
from funcgrad import tree
from funcgrad import flatten_util
from funcgrad.backend import device_count, devices, local_devices
from funcgrad.primitives.control import device_put
from funcgrad._host import block_until_ready, device_get, effects_barrier
from funcgrad import numpy
from funcgrad import primitives
from funcgrad import scipy
from funcgrad import random
from funcgrad import nn
from funcgrad import lax
from funcgrad import ad_checkpoint
from funcgrad import debug
from funcgrad import export
from funcgrad import experimental
from funcgrad.callbacks import pure_callback
from funcgrad.primitives.control import stop_gradient
from funcgrad.transforms import (Tape, make_tape, grad, value_and_grad, vjp, float0, jvp,
                                 linear_transpose,
                                 linearize, jacrev, jacobian, jacfwd, hessian, custom_vjp,
                                 custom_jvp, checkpoint, remat, checkpoint_policies,
                                 checkpoint_name, checkpoint_sequential, saved_residuals,
                                 print_saved_residuals, jit, make_jaxpr, vmap,
                                 fwd_and_bwd)
from funcgrad.core import EscapedTracerError
from funcgrad.transforms.grad import NotNeeded, ad
from funcgrad.meta import ShapeDtypeStruct, eval_shape, typeof
from funcgrad import test_util
from funcgrad.autograph import autograph
from funcgrad import ref
from funcgrad.ref import Ref, new_ref, freeze
from funcgrad import extend, interpreters  # Primitive(name), JAX's rule tables
from funcgrad import viz  # installs the notebook reprs (graphviz is imported only to draw)

__version__ = "0.1.0"

__all__ = ["Array", "autograph", "config", "debug_nans", "debug_infs", "numpy_dtype_promotion", "tree_util", "tree", "device_put",
           "device_get", "block_until_ready", "devices", "device_count", "local_devices", "numpy", "primitives",
           "scipy", "random", "nn", "lax", "ad_checkpoint", "debug", "experimental",
           "pure_callback", "stop_gradient", "Tape", "make_tape", "grad",
           "value_and_grad", "vjp", "float0", "linear_transpose", "effects_barrier",
           "jvp", "linearize", "jacrev", "jacobian", "jacfwd", "hessian", "custom_vjp",
           "custom_jvp", "checkpoint", "remat", "checkpoint_policies", "checkpoint_name",
           "checkpoint_sequential", "saved_residuals", "print_saved_residuals", "jit",
           "make_jaxpr", "vmap", "fwd_and_bwd",
           "EscapedTracerError", "NotNeeded", "ad", "ref", "Ref", "new_ref", "freeze", "ShapeDtypeStruct", "eval_shape", "typeof"]
