"""funcgrad.scipy: differentiable versions of scipy functions: `special`, `linalg`,
`stats`, `signal`, `integrate` (odeint), `optimize` (minimize). scipy itself is the
optional ``scipy`` extra: where a value needs it and it is missing, the call raises an
ImportError naming the extra."""
from funcgrad.scipy import special, linalg, stats, signal, integrate, optimize

__all__ = ["special", "linalg", "stats", "signal", "integrate", "optimize"]
