"""funcgrad.transforms: one module per transform.

- `tape`: the reverse-mode trace, `Tape` and `make_tape`
- `grad`: `vjp`, `grad`, `value_and_grad`
"""
from .tape import Tape, make_tape
from .grad import grad, value_and_grad, vjp, float0

__all__ = ["Tape", "make_tape", "grad", "value_and_grad", "vjp", "float0"]
