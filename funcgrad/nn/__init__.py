"""funcgrad.nn: jax.nn's functions (activations, softmax and friends, one_hot,
standardize) and `initializers`; beyond jax.nn, `grid_sample` (torch's spatial-transformer
sampler, on arrays). Everything is composed from funcgrad primitives, so it is
differentiable to every order; see `_activations` for the stability guarantees."""
from funcgrad.nn import initializers
from funcgrad.nn._grid import grid_sample
from funcgrad.nn._activations import *  # noqa: F401,F403
from funcgrad.nn._activations import __all__ as _activations
from funcgrad.nn._reductions import *  # noqa: F401,F403
from funcgrad.nn._reductions import __all__ as _reductions

__all__ = ["initializers", "grid_sample", *_activations, *_reductions]
