"""The primitives under JAX's ``lax.<name>_p`` names, for interpreters that dispatch on
them (``registry[lax.exp_p] = ...``): the funcgrad primitive doing what JAX's does."""
from __future__ import annotations

from funcgrad.primitives import arrays, binary, elementwise, reductions, special
from funcgrad.primitives.batching import transpose as transpose_p

__all__ = ["exp_p", "log_p", "sin_p", "cos_p", "tan_p", "tanh_p", "add_p", "mul_p",
           "sub_p", "div_p", "neg_p", "max_p", "min_p", "sqrt_p", "pow_p", "abs_p",
           "floor_p", "ceil_p", "erf_p", "logistic_p", "eq_p", "ne_p", "gt_p",
           "lt_p", "ge_p", "le_p", "and_p", "or_p", "not_p", "atan2_p", "exp2_p",
           "expm1_p", "square_p", "reduce_sum_p", "reduce_prod_p", "transpose_p",
           "reshape_p", "convert_element_type_p", "concatenate_p", "cumsum_p",
           "argmax_p", "argmin_p", "clamp_p"]

exp_p, log_p, add_p, mul_p, sub_p, div_p = (binary.exp, binary.log, binary.add, binary.mul,
                                            binary.sub, binary.div)
max_p, min_p, pow_p, atan2_p, exp2_p = (binary.maximum, binary.minimum, binary.power,
                                        binary.arctan2, binary.exp2)
ne_p, gt_p, lt_p, ge_p, le_p = (binary.not_equal, binary.greater, binary.less,
                                binary.greater_equal, binary.less_equal)
and_p, or_p, clamp_p = binary.logical_and, binary.logical_or, binary.clamp
sin_p, cos_p, tan_p, tanh_p, neg_p, sqrt_p = (elementwise.sin, elementwise.cos,
                                              elementwise.tan, elementwise.tanh,
                                              elementwise.neg, elementwise.sqrt)
abs_p, floor_p, ceil_p, expm1_p = (elementwise.abs, elementwise.floor, elementwise.ceil,
                                   elementwise.expm1)
not_p, square_p = elementwise.logical_not, elementwise.square
erf_p, logistic_p = special.erf, special.expit
eq_p, reduce_sum_p, reshape_p = arrays.equal, arrays.reduce_sum, arrays.reshape
convert_element_type_p, concatenate_p = arrays.convert_element_type, arrays.concatenate
reduce_prod_p, cumsum_p = reductions.reduce_prod, reductions.cumsum
argmax_p, argmin_p = reductions.argmax, reductions.argmin
