"""``torch._dynamo.exc``: the errors of torch.compile's front end."""
from funcgrad.torch._compile_state import Unsupported

__all__ = ["Unsupported"]
