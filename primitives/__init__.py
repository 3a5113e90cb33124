"""The primitive registry: every differentiable operation funcgrad knows, declared once.

A primitive is its backend implementation plus its derivative rules, written in funcgrad
ops (so rules are differentiable again). The families live one per module, each a readable
table: `select` (where), `elementwise`, `binary`, `special`, `distributions`, `bessel`,
`reductions`, `shape`, `indexing`, `linalg`, `decompositions`, `triangular`,
`matrix_functions`, `signal`, `fft`, `conv` (convolution and sliding windows), `sets`,
`control`, `collectives` (psum, all_gather, ... over a named axis), `random` (the Threefry
hash and the samplers of funcgrad.random). Implementations that look at data or memory
layout live in `kernels`, test-input samplers in `samplers`, and `constants` makes the
shape-only constants rules need. Each family also declares its batching rules (for
`funcgrad.vmap`, ``prim.defbatch``), most with the shared factories of `batching`.

Declaring your own (the same API funcgrad uses)::

    import numpy as np
    import funcgrad.numpy as fnp
    from funcgrad.primitives import Primitive, sampling

    softsign = Primitive("softsign", lambda x: x / (1 + np.abs(x)),
                         sample=sampling.elementwise())
    softsign.defvjp(lambda g, x: g / (1 + fnp.abs(x)) ** 2)

    softsign(2.0)                       # Array(0.66666667, dtype=float64)
    funcgrad.grad(funcgrad.grad(softsign))(2.0)

A VJP rule's first parameter receives the cotangent; its other parameter names say what it
reads (inputs by name, ``out``, static params, ``x_shape``/``x_dtype``), which is how the
tape knows which residuals to keep.
"""
from funcgrad.core import ZERO, Primitive, registry

from . import sampling
from . import (control, select, elementwise, binary, special, distributions, bessel,
               reductions, shape, indexing, linalg, decompositions, triangular,
               matrix_functions, signal, fft, conv, sets, collectives, random, debugging)

__all__ = ["Primitive", "ZERO", "registry", "sampling", "control", "select", "elementwise",
           "binary", "special", "distributions", "bessel", "reductions", "shape",
           "indexing", "linalg", "decompositions", "triangular", "matrix_functions",
           "signal", "fft", "conv", "sets", "collectives", "random", "debugging"]
