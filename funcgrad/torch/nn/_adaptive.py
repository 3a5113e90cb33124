"""`nn.AdaptiveLogSoftmaxWithLoss`: Grave et al.'s adaptive softmax, as PyTorch 2.13 has it.

The module is PyTorch's own algorithm written over facade modules and ops (``Linear``,
``Sequential``, ``log_softmax``, ``gather``, ``index_copy_``...), so every gradient comes from
those ops and a state_dict moves across unchanged: ``head`` is a Linear of
``shortlist_size + n_clusters`` outputs, ``tail[i]`` a bias-free two-Linear projection of
``in_features // div_value ** (i + 1)`` hidden units per cluster.
"""
from __future__ import annotations

import itertools
from collections import namedtuple
from typing import Any, Sequence

from funcgrad.torch._tensor import Tensor
from funcgrad.torch.nn._containers import ModuleList, Sequential
from funcgrad.torch.nn.layers import Linear
from funcgrad.torch.nn.module import Module

__all__ = ["AdaptiveLogSoftmaxWithLoss"]

_ASMoutput = namedtuple("_ASMoutput", ["output", "loss"])

def _check_cutoffs(cutoffs: list, n_classes: int) -> None:
    if len(cutoffs) == 0:
        raise ValueError("cutoffs should be a sequence of length larger than 0")
    if (cutoffs != sorted(cutoffs) or min(cutoffs) <= 0 or max(cutoffs) > n_classes - 1
            or len(set(cutoffs)) != len(cutoffs) or any(int(c) != c for c in cutoffs)):
        raise ValueError("cutoffs should be a sequence of unique, positive integers sorted "
                         "in an increasing order, where each value is between 1 and "
                         "n_classes-1")


def _check_shapes(input: Tensor, target: Tensor) -> None:
    """PyTorch's checks: a 1-D target with a 2-D input of the same batch, or a 0-D target
    with a 1-D input."""
    if target.dim() == 1:
        if input.size(0) != target.size(0):
            raise RuntimeError("Input and target should have the same size in the batch "
                               "dimension.")
        if input.dim() != 2:
            raise RuntimeError(f"1D target tensor expects 2D input tensors, but found inputs "
                               f"with size {input.size()}")
    elif target.dim() == 0:
        if input.dim() != 1:
            raise RuntimeError(f"0D target tensor expects 1D input tensors, but found inputs "
                               f"with size {input.size()}")
    else:
        raise RuntimeError("0D or 1D target tensor expected, multi-target not supported")


class AdaptiveLogSoftmaxWithLoss(Module):
    """Adaptive softmax: frequent classes (below ``cutoffs[0]``) in the head, the rest in
    clusters whose log-probability is the head's cluster entry plus the cluster's own."""

    def __init__(self, in_features: int, n_classes: int, cutoffs: Sequence[int],
                 div_value: float = 4.0, head_bias: bool = False, device: Any = None,
                 dtype: Any = None) -> None:
        factory = {"device": device, "dtype": dtype}
        super().__init__()
        cutoffs = list(cutoffs)
        _check_cutoffs(cutoffs, n_classes)
        self.in_features = in_features
        self.n_classes = n_classes
        self.cutoffs = cutoffs + [n_classes]
        self.div_value = div_value
        self.head_bias = head_bias
        self.shortlist_size = self.cutoffs[0]
        self.n_clusters = len(self.cutoffs) - 1
        self.head_size = self.shortlist_size + self.n_clusters
        self.head = Linear(in_features, self.head_size, bias=head_bias, **factory)
        self.tail = ModuleList()
        for i in range(self.n_clusters):
            hsz = int(in_features // (div_value ** (i + 1)))
            osz = self.cutoffs[i + 1] - self.cutoffs[i]
            self.tail.append(Sequential(Linear(in_features, hsz, bias=False, **factory),
                                        Linear(hsz, osz, bias=False, **factory)))

    def reset_parameters(self) -> None:
        """Re-draw every Linear as at construction."""
        self.head.reset_parameters()
        for i2h, h2o in self.tail:
            i2h.reset_parameters()
            h2o.reset_parameters()

    def forward(self, input_: Tensor, target_: Tensor) -> _ASMoutput:
        """``(output, loss)``: each example's target log-probability, and their negated
        mean. Only the clusters some target falls in are evaluated."""
        _check_shapes(input_, target_)
        is_batched = target_.dim() > 0
        input = input_ if is_batched else input_.unsqueeze(0)
        target = target_ if is_batched else target_.unsqueeze(0)
        used_rows = 0
        batch_size = target.size(0)
        output = input.new_zeros(batch_size)
        gather_inds = target.new_empty(batch_size)
        cutoff_values = [0] + self.cutoffs
        for i, (low, high) in enumerate(itertools.pairwise(cutoff_values)):
            target_mask = (target >= low) & (target < high)
            row_indices = target_mask.nonzero().squeeze()
            if row_indices.numel() == 0:
                continue
            if i == 0:
                gather_inds.index_copy_(0, row_indices, target[target_mask])
            else:
                relative_target = target[target_mask] - low
                cluster_output = self.tail[i - 1](input.index_select(0, row_indices))
                gather_inds.index_fill_(0, row_indices, self.shortlist_size + i - 1)
                local = cluster_output.log_softmax(1).gather(
                    1, relative_target.unsqueeze(1))
                output.index_copy_(0, row_indices, local.squeeze(1))
            used_rows += row_indices.numel()
        if used_rows != batch_size:
            raise RuntimeError(f"Target values should be in [0, {self.n_classes - 1}], but "
                               f"values in range [{target.min().item()}, "
                               f"{target.max().item()}] were found. ")
        head_logprob = self.head(input).log_softmax(1)
        output += head_logprob.gather(1, gather_inds.unsqueeze(1)).squeeze()
        loss = (-output).mean()
        return _ASMoutput(output if is_batched else output.squeeze(0), loss)

    def _get_full_log_prob(self, input: Tensor, head_output: Tensor) -> Tensor:
        """Every class's log-probability, from ``input`` and its head output."""
        out = input.new_empty((head_output.size(0), self.n_classes))
        head_logprob = head_output.log_softmax(1)
        out[:, :self.shortlist_size] = head_logprob[:, :self.shortlist_size]
        for i, (start, stop) in enumerate(itertools.pairwise(self.cutoffs)):
            cluster_logprob = self.tail[i](input).log_softmax(1)
            out[:, start:stop] = (cluster_logprob
                                  + head_logprob[:, self.shortlist_size + i].unsqueeze(1))
        return out

    def log_prob(self, input: Tensor) -> Tensor:
        """Log-probabilities of all ``n_classes`` classes, (N, n_classes)."""
        return self._get_full_log_prob(input, self.head(input))

    def predict(self, input: Tensor) -> Tensor:
        """``log_prob(input).argmax(1)``, computing the clusters only for the rows whose
        head argmax is a cluster."""
        head_output = self.head(input)
        output = head_output.argmax(1)
        not_in_shortlist = output >= self.shortlist_size
        if not not_in_shortlist.any():
            return output
        if not_in_shortlist.all():
            return self._get_full_log_prob(input, head_output).argmax(1)
        log_prob = self._get_full_log_prob(input[not_in_shortlist],
                                           head_output[not_in_shortlist])
        output[not_in_shortlist] = log_prob.argmax(1)
        return output
