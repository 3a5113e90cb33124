"""torch.nn.utils: gradient clipping, parameter/vector conversion, weight norm,
parametrizations and skip_init."""
from funcgrad.torch.nn.utils.clip_grad import (clip_grad_norm_, clip_grad_value_,
                                               clip_grads_with_norm_, get_total_norm)
from funcgrad.torch.nn.utils.init import skip_init
from funcgrad.torch.nn.utils.convert import parameters_to_vector, vector_to_parameters
from funcgrad.torch.nn.utils.weight_norm import remove_weight_norm, weight_norm
from funcgrad.torch.nn.utils import parametrize, parametrizations, rnn

__all__ = ["clip_grad_norm_", "clip_grad_value_", "clip_grads_with_norm_", "get_total_norm",
           "parameters_to_vector", "vector_to_parameters", "weight_norm", "remove_weight_norm",
           "parametrize", "parametrizations", "skip_init", "rnn"]
