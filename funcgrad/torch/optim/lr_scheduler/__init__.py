"""torch.optim.lr_scheduler for funcgrad.torch: PyTorch 2.13's learning-rate schedulers,
with its formulas, ``state_dict`` layout and warnings (see `_base`)."""
from funcgrad.torch.optim.lr_scheduler._base import (EPOCH_DEPRECATION_WARNING, LRScheduler,
                                                     _LRScheduler)
from funcgrad.torch.optim.lr_scheduler._schedules import (ConstantLR, CosineAnnealingLR,
                                                          ExponentialLR, LambdaLR, LinearLR,
                                                          MultiplicativeLR, MultiStepLR,
                                                          PolynomialLR, StepLR)
from funcgrad.torch.optim.lr_scheduler._cycles import (CosineAnnealingWarmRestarts, CyclicLR,
                                                       OneCycleLR)
from funcgrad.torch.optim.lr_scheduler._combined import (ChainedScheduler, ReduceLROnPlateau,
                                                         SequentialLR)

__all__ = ["LambdaLR", "MultiplicativeLR", "StepLR", "MultiStepLR", "ConstantLR", "LinearLR",
           "ExponentialLR", "SequentialLR", "CosineAnnealingLR", "ChainedScheduler",
           "ReduceLROnPlateau", "CyclicLR", "CosineAnnealingWarmRestarts", "OneCycleLR",
           "PolynomialLR", "LRScheduler", "EPOCH_DEPRECATION_WARNING", "_LRScheduler"]
