"""JAX's ``jax.experimental`` names that funcgrad has: `io_callback`."""
from funcgrad.callbacks import io_callback

__all__ = ["io_callback"]
