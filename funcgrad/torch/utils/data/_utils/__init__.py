"""DataLoader internals under PyTorch's module names (``collate``, ``worker``, ``fetch``),
which some programs import directly."""
from funcgrad.torch.utils.data._utils import collate, fetch, worker

__all__ = ["collate", "fetch", "worker"]
