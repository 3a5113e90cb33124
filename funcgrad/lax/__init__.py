"""funcgrad.lax: `jax.lax`'s functions on funcgrad's primitives.

A re-export list: each family lives in its own module (convolution, windowed reductions,
control flow in `funcgrad.transforms.control_flow` and `.scan`, the collectives in
`funcgrad.distributed.collectives`: over a `vmap`'s axis_name or a process group's),
and this namespace only gathers their public names.
"""
from funcgrad.primitives.control import stop_gradient
from funcgrad.transforms.control_flow import cond, switch, while_loop
from funcgrad.transforms.scan import fori_loop, map, scan  # noqa: A004
from funcgrad.lax._select import select
from funcgrad.distributed.collectives import (all_gather, axis_index, axis_size, pbroadcast,
                                              pmax, pmean, pmin, ppermute, psum, psum_scatter)
from funcgrad.lax.convolution import (ConvDimensionNumbers, conv, conv_dimension_numbers,
                                      conv_general_dilated, conv_general_dilated_patches,
                                      conv_transpose, conv_with_general_padding,
                                      padtype_to_pads)
from funcgrad.lax._binary import add, max, min, mul, sub  # noqa: A004
from funcgrad.numpy import full_like
from funcgrad.lax.windowed import reduce_window, reduce_window_max_with_indices
from funcgrad.lax._primitives import *  # noqa: F401,F403  (exp_p, add_p...: JAX's names)
from funcgrad.lax import _primitives

__all__ = ["stop_gradient", "cond", "switch", "while_loop", "fori_loop", "scan", "map",
           "select", "ConvDimensionNumbers", "conv", "conv_dimension_numbers",
           "conv_general_dilated", "conv_general_dilated_patches", "conv_transpose",
           "conv_with_general_padding", "padtype_to_pads", "add", "max", "min", "mul", "sub", "full_like",
           "reduce_window", "reduce_window_max_with_indices", "psum", "pmean", "pmax", "pmin",
           "all_gather", "psum_scatter", "ppermute", "pbroadcast", "axis_index", "axis_size",
           *_primitives.__all__]
