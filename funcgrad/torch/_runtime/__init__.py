"""The facade's runtime floor: what a `Tensor` needs and nothing above it.

PyTorch's tensor core knows a small autograd interface (``c10::AutogradMetaInterface``),
never the engine. Here that floor is: dtypes (`dtypes`), storage and version counters
(`storage`), grad and inference mode (`grad_mode`), anomaly mode (`anomaly`), the graph node
base with its saved-tensor slots (`node`), forward-mode dual levels (`dual`) and the
profiler's recording state (`profiler`). Nothing here imports the tensor, the op layer or the
engine; those sit above and attach what they add to `Tensor` from above.
"""
