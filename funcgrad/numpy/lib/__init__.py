"""funcgrad.numpy.lib: the parts of ``numpy.lib`` funcgrad provides."""
from funcgrad.numpy.lib import stride_tricks

__all__ = ["stride_tricks"]
