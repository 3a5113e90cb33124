"""``torch.autograd.profiler``: the profiler under PyTorch's module path (it lives in the
runtime floor, `funcgrad.torch._runtime.profiler`, since the op layer records into it)."""
from funcgrad.torch._runtime.profiler import (EventList, FunctionEvent, FunctionEventAvg,
                                              Interval, profile, record_function)

__all__ = ["profile", "record_function", "FunctionEvent", "FunctionEventAvg", "EventList",
           "Interval"]
