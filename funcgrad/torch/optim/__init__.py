"""torch.optim for funcgrad.torch: PyTorch's optimizers (SGD, Adam, AdamW, RMSprop,
Adagrad, Adamax, Adadelta, ASGD, NAdam, RAdam, Rprop, LBFGS, SparseAdam, Adafactor, Muon) with its update
equations, options and ``state_dict`` layout, and `lr_scheduler`."""
from funcgrad.torch.optim.optimizer import Optimizer
from funcgrad.torch.optim.sgd import SGD
from funcgrad.torch.optim.adam import Adam, AdamW
from funcgrad.torch.optim.rmsprop import RMSprop
from funcgrad.torch.optim.adagrad import Adagrad
from funcgrad.torch.optim.adamax import Adamax
from funcgrad.torch.optim.adadelta import Adadelta
from funcgrad.torch.optim.asgd import ASGD
from funcgrad.torch.optim.nadam import NAdam
from funcgrad.torch.optim.radam import RAdam
from funcgrad.torch.optim.rprop import Rprop
from funcgrad.torch.optim.lbfgs import LBFGS
from funcgrad.torch.optim.sparse_adam import SparseAdam
from funcgrad.torch.optim.adafactor import Adafactor
from funcgrad.torch.optim.muon import Muon
from funcgrad.torch.optim import lr_scheduler

__all__ = ["Optimizer", "SGD", "Adam", "AdamW", "RMSprop", "Adagrad", "Adamax", "Adadelta",
           "ASGD", "NAdam", "RAdam", "Rprop", "LBFGS", "SparseAdam", "Adafactor",
           "Muon", "lr_scheduler"]
