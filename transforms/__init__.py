"""funcgrad.transforms: one module per transform.

- `tape`: the reverse-mode trace, `Tape` and `make_tape`
- `grad`: `vjp`, `grad`, `value_and_grad`
- `jvp`: forward mode, `jvp` and `linearize`
- `jacobian`: `jacrev`/`jacobian`, `jacfwd`, `hessian`
- `custom`: `custom_vjp`, `custom_jvp`
- `checkpoint`: `checkpoint`/`remat`, policies, `checkpoint_sequential`, `saved_residuals`
- `vmap`: `vmap` (batching rules live beside each primitive's other rules)
- `fwd_bwd`: `fwd_and_bwd` (vjp's halves, each jitted)
- `jit` (with `compile`, which turns a tape into a Python function): `jit`, `make_jaxpr`
"""
from .tape import Tape, make_tape
from .grad import grad, value_and_grad, vjp, float0, linear_transpose
from .jvp import jvp, linearize
from .jacobian import jacrev, jacobian, jacfwd, hessian
from .custom import custom_vjp, custom_jvp
from .checkpoint import (checkpoint, remat, checkpoint_policies, checkpoint_name,
                         checkpoint_sequential, saved_residuals, print_saved_residuals)
from .jit import jit, make_jaxpr
from .vmap import vmap
from .fwd_bwd import fwd_and_bwd

__all__ = ["Tape", "make_tape", "grad", "value_and_grad", "vjp", "float0", "linear_transpose",
           "jvp",
           "linearize", "jacrev", "jacobian", "jacfwd", "hessian", "custom_vjp",
           "custom_jvp", "checkpoint", "remat", "checkpoint_policies", "checkpoint_name",
           "checkpoint_sequential", "saved_residuals", "print_saved_residuals", "jit",
           "make_jaxpr", "vmap", "fwd_and_bwd"]
