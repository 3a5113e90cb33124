"""funcgrad.example_libraries: JAX's example libraries of the same names, on funcgrad.

`optimizers` (the (init, update, get_params) triples) and `stax` (layer combinators) let
JAX code of that era run after swapping ``jax`` for ``funcgrad``. Like JAX's, they are
examples rather than a framework; they are not imported by ``import funcgrad``.
"""
