"""funcgrad.nn: jax.nn's functions (activations, softmax and friends, one_hot,
standardize) and `initializers`. Everything is composed from funcgrad primitives, so it is
differentiable to every order; see `_activations` for the stability guarantees."""
from funcgrad.nn import initializers
from funcgrad.nn._activations import *  # noqa: F401,F403
from funcgrad.nn._activations import __all__ as _activations
from funcgrad.nn._reductions import *  # noqa: F401,F403
from funcgrad.nn._reductions import __all__ as _reductions

__all__ = ["initializers", *_activations, *_reductions]
