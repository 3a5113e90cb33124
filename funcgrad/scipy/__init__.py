"""funcgrad.scipy: differentiable versions of scipy functions (`special`)."""
from funcgrad.scipy import special

__all__ = ["special"]
