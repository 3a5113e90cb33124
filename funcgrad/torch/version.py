"""``torch.version``: the PyTorch API version the facade follows (2.13), marked as
funcgrad's with a local version label; no CUDA or ROCm build."""
__version__ = "2.13.0+funcgrad"
cuda = None
hip = None
xpu = None
debug = False
git_version = "funcgrad"
