"""`Optimizer`: parameter groups, per-parameter state, ``zero_grad`` and ``step``.

Subclasses implement ``_step_group(group)``; ``step`` runs it for each group under no_grad
(and calls the closure first when one is given, with grad enabled).
"""
from __future__ import annotations

from collections import defaultdict
from typing import Any, Callable, Iterable

from funcgrad.torch._tensor import Tensor
from funcgrad.torch.autograd import grad_mode
from funcgrad.torch.nn.module import zero_grads

__all__ = ["Optimizer"]


class Optimizer:
    """Base class: ``Optimizer(params, defaults)`` where params is an iterable of tensors or
    of dicts (parameter groups with their own hyper-parameters)."""

    def __init__(self, params: Iterable[Any], defaults: dict) -> None:
        if isinstance(params, Tensor):
            raise TypeError("params argument given to the optimizer should be an iterable of "
                            f"Tensors or dicts, but got {params.type()}")
        self.defaults = defaults
        self.state: dict = defaultdict(dict)
        self.param_groups: list = []
        groups = list(params)
        if not groups:
            raise ValueError("optimizer got an empty parameter list")
        if not isinstance(groups[0], dict):
            groups = [{"params": groups}]
        for g in groups:
            self.add_param_group(g)

    def add_param_group(self, param_group: dict) -> None:
        params = param_group["params"]
        if isinstance(params, Tensor):
            params = [params]
        elif isinstance(params, set):
            raise TypeError("optimizer parameters need to be organized in ordered collections, "
                            "but the ordering of tensors in sets will change between runs. "
                            "Please use a list instead.")
        params = list(params)
        for p in params:
            if not isinstance(p, Tensor):
                raise TypeError("optimizer can only optimize Tensors, but one of the params is "
                                + type(p).__name__)
            if not p.is_leaf:
                raise ValueError("can't optimize a non-leaf Tensor")
        group = dict(param_group, params=params)
        for k, v in self.defaults.items():
            group.setdefault(k, v)
        existing = {id(p) for g in self.param_groups for p in g["params"]}
        if any(id(p) in existing for p in params):
            raise ValueError("some parameters appear in more than one parameter group")
        self.param_groups.append(group)

    def zero_grad(self, set_to_none: bool = True) -> None:
        """Reset gradients: to None (default) or to zeros in place."""
        zero_grads((p for g in self.param_groups for p in g["params"]), set_to_none)

    def step(self, closure: Callable | None = None) -> Any:
        loss = None
        if closure is not None:
            with grad_mode.enable_grad():
                loss = closure()
        with grad_mode.no_grad():
            for group in self.param_groups:
                self._step_group(group)
        return loss

    def _step_group(self, group: dict) -> None:
        raise NotImplementedError

    def state_dict(self) -> dict:
        index = {id(p): i for i, p in enumerate(p for g in self.param_groups
                                                for p in g["params"])}
        groups = [dict(g, params=[index[id(p)] for p in g["params"]])
                  for g in self.param_groups]
        state = {index[id(p)]: dict(s) for p, s in self.state.items() if id(p) in index}
        return {"state": state, "param_groups": groups}

    def load_state_dict(self, state_dict: dict) -> None:
        params = [p for g in self.param_groups for p in g["params"]]
        groups = state_dict["param_groups"]
        if len(groups) != len(self.param_groups):
            raise ValueError("loaded state dict has a different number of parameter groups")
        for mine, theirs in zip(self.param_groups, groups):
            if len(mine["params"]) != len(theirs["params"]):
                raise ValueError("loaded state dict contains a parameter group that doesn't "
                                 "match the size of optimizer's group")
            mine.update({k: v for k, v in theirs.items() if k != "params"})
        self.state = defaultdict(dict)
        for i, s in state_dict["state"].items():
            self.state[params[int(i)]] = {k: (v.clone() if isinstance(v, Tensor) else v)
                                          for k, v in s.items()}

    def __repr__(self) -> str:
        out = type(self).__name__ + " ("
        for i, group in enumerate(self.param_groups):
            out += f"\nParameter Group {i}\n"
            for key in sorted(group):
                if key != "params":
                    out += f"    {key}: {group[key]}\n"
        return out + ")"
