"""The errors of tracing that users catch (JAX's ``jax.errors``)."""
from __future__ import annotations

__all__ = ["EscapedTracerError", "ConcretizationTypeError"]


class EscapedTracerError(RuntimeError):
    """A tracer was used after the transform that created it had finished."""


class ConcretizationTypeError(TypeError):
    """Python needed the value of an array that a transform (``jit``) only knows abstractly:
    ``if x > 0``, ``float(x)``, ``range(n)`` on a traced value."""
