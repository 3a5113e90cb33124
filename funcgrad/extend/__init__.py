"""``funcgrad.extend``: JAX's ``jax.extend`` names, for code that builds on the transforms
(defining primitives, walking programs): see `funcgrad.extend.core`."""
from funcgrad.extend import core

__all__ = ["core"]
