"""torch.nn.utils: gradient clipping and parameter/vector conversion."""
from funcgrad.torch.nn.utils.clip_grad import clip_grad_norm_, clip_grad_value_
from funcgrad.torch.nn.utils.convert import parameters_to_vector, vector_to_parameters

__all__ = ["clip_grad_norm_", "clip_grad_value_", "parameters_to_vector",
           "vector_to_parameters"]
