"""torch.optim for funcgrad.torch: SGD, Adam, AdamW on the facade's in-place ops."""
from funcgrad.torch.optim.optimizer import Optimizer
from funcgrad.torch.optim.sgd import SGD
from funcgrad.torch.optim.adam import Adam, AdamW

__all__ = ["Optimizer", "SGD", "Adam", "AdamW"]
