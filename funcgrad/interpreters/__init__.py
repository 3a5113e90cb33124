"""``jax.interpreters``' names for defining primitives (`funcgrad.extend.primitive`):
``ad`` (JVP and transpose rules), ``batching`` (vmap rules) and ``mlir`` (lowerings, which
funcgrad's jit runs as numpy code)."""
from funcgrad.interpreters import ad, batching, mlir

__all__ = ["ad", "batching", "mlir"]
