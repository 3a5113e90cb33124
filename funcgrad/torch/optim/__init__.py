"""torch.optim for funcgrad.torch: PyTorch's optimizers (SGD, Adam, AdamW, RMSprop,
Adagrad, Adamax) with its update equations, options and ``state_dict`` layout, and
`lr_scheduler`."""
from funcgrad.torch.optim.optimizer import Optimizer
from funcgrad.torch.optim.sgd import SGD
from funcgrad.torch.optim.adam import Adam, AdamW
from funcgrad.torch.optim.rmsprop import RMSprop
from funcgrad.torch.optim.adagrad import Adagrad
from funcgrad.torch.optim.adamax import Adamax
from funcgrad.torch.optim import lr_scheduler

__all__ = ["Optimizer", "SGD", "Adam", "AdamW", "RMSprop", "Adagrad", "Adamax",
           "lr_scheduler"]
