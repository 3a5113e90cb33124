"""`Optimizer`: parameter groups, per-parameter state, hooks, ``state_dict`` and
``zero_grad``, laid out and behaving as PyTorch 2.13's.

A built-in optimizer passes its hyper-parameters as ``defaults`` in PyTorch's order (that
order is the order of every ``param_groups`` entry, and of ``state_dict()``), and writes
its update equations in one method, ``_update(p, grad, state, group)``, with the facade's
in-place tensor ops (``mul_``, ``addcmul_``...), after ``_init_state`` has filled a
parameter's state on its first step. ``step`` runs the closure with grad enabled, then the
updates in the grad mode ``differentiable`` asks for (off by default).

A user subclass may override ``step`` itself, as PyTorch's custom optimizers do: every
``step`` defined by a subclass is wrapped once (``__init_subclass__``) so that the step
hooks run around it and learning-rate schedulers can tell that it ran.
"""
from __future__ import annotations

import functools
import warnings
from collections import OrderedDict, defaultdict
from copy import deepcopy
from itertools import chain
from typing import Any, Callable, Iterable

from funcgrad.torch._runtime import dtypes as D
from funcgrad.torch._tensor import Tensor, grad_of
from funcgrad.torch._runtime import grad_mode
from funcgrad.torch._runtime.node import RemovableHandle
from funcgrad.torch.nn.module import zero_grads
from funcgrad.torch import _factories

__all__ = ["Optimizer", "required", "register_optimizer_step_pre_hook",
           "register_optimizer_step_post_hook", "scalar_dtype", "has_sparse_grad",
           "new_step", "to_scalar", "check_lr", "check_non_negative", "check_betas", "check_adam_options",
           "check_fused"]


class _RequiredParameter:
    """The default of a hyper-parameter that every parameter group must give."""

    def __repr__(self) -> str:
        return "<required parameter>"


required = _RequiredParameter()

_global_step_pre_hooks: OrderedDict = OrderedDict()
_global_step_post_hooks: OrderedDict = OrderedDict()


def register_optimizer_step_pre_hook(hook: Callable) -> RemovableHandle:
    """``hook(optimizer, args, kwargs)`` runs before every optimizer's ``step``."""
    return _add(_global_step_pre_hooks, hook, False)


def register_optimizer_step_post_hook(hook: Callable) -> RemovableHandle:
    """``hook(optimizer, args, kwargs)`` runs after every optimizer's ``step``."""
    return _add(_global_step_post_hooks, hook, False)


def _add(hooks: OrderedDict, hook: Callable, prepend: bool) -> RemovableHandle:
    handle = RemovableHandle(hooks)
    hooks[handle.id] = hook
    if prepend:
        hooks.move_to_end(handle.id, last=False)
    return handle


def _with_step_hooks(step: Callable) -> Callable:
    """``step`` with the pre-hooks (which may replace its arguments) before it and the
    post-hooks after it; an inner ``super().step()`` call runs no hooks again."""
    @functools.wraps(step)
    def hooked_step(self: "Optimizer", *args: Any, **kwargs: Any) -> Any:
        if getattr(self, "_in_step", False):
            return step(self, *args, **kwargs)
        pre_hooks = (chain(_global_step_pre_hooks.values(),
                           self._optimizer_step_pre_hooks.values())
                     if _global_step_pre_hooks or self._optimizer_step_pre_hooks else ())
        for pre_hook in pre_hooks:
            result = pre_hook(self, args, kwargs)
            if result is not None:
                if not (isinstance(result, tuple) and len(result) == 2):
                    raise RuntimeError(f"{step} must return None or a tuple of (new_args, "
                                       f"new_kwargs), but got {result}.")
                args, kwargs = result
        self._in_step = True
        try:
            out = step(self, *args, **kwargs)
        finally:
            self._in_step = False
        self._opt_called = True  # what LR schedulers check ("step() before optimizer.step()")
        post_hooks = (chain(self._optimizer_step_post_hooks.values(),
                            _global_step_post_hooks.values())
                      if _global_step_post_hooks or self._optimizer_step_post_hooks else ())
        for post_hook in post_hooks:
            post_hook(self, args, kwargs)
        return out
    hooked_step.hooked = True
    return hooked_step


def has_sparse_grad(params: Iterable[Tensor]) -> bool:
    """Whether some parameter's gradient is sparse (``nn.Embedding(sparse=True)``'s)."""
    for p in params:
        grad = grad_of(p)
        if grad is not None and grad._refuses:  # (a dense tensor's is False)
            return True
    return False


def scalar_dtype(fused: Any = None) -> D.dtype:
    """The dtype of ``state['step']``: float32 for fused optimizers; else float64 under a
    float64 default dtype, float32 otherwise (PyTorch's ``_get_scalar_dtype``)."""
    if fused:
        return D.float32
    return D.float64 if D.get_default_dtype() is D.float64 else D.float32


def new_step(p: Tensor, group: dict) -> Tensor:
    """A fresh ``state['step']`` (0.0): on the parameter's device when the group is
    capturable or fused, else on the CPU, as PyTorch's Adam places it."""
    on_device = group.get("capturable") or group.get("fused")
    return _factories.tensor(0.0, dtype=scalar_dtype(group.get("fused")),
                             device=p.device if on_device else "cpu")


def to_scalar(x: Any) -> Any:
    """A hyper-parameter given as a one-element tensor, as a Python number."""
    return x.item() if isinstance(x, Tensor) else x


class Optimizer:
    """Base class: ``Optimizer(params, defaults)``; ``params`` is an iterable of tensors,
    of ``(name, tensor)`` pairs, or of dicts (parameter groups with their own options)."""

    # keys that PyTorch fills in when loading an older state dict that lacks them
    _load_defaults: dict = {}

    def __init__(self, params: Iterable[Any], defaults: dict) -> None:
        self.defaults = defaults
        self._init_hooks()
        if isinstance(params, Tensor):
            raise TypeError("params argument given to the optimizer should be an iterable of "
                            "Tensors or dicts, but got " + params.type())
        self.state: defaultdict = defaultdict(dict)
        self.param_groups: list = []
        groups = list(params)
        if not groups:
            raise ValueError("optimizer got an empty parameter list")
        if not isinstance(groups[0], dict):
            groups = [{"params": groups}]
        for group in groups:
            self.add_param_group(group)

    def __init_subclass__(cls, **kwargs: Any) -> None:
        super().__init_subclass__(**kwargs)
        step = cls.__dict__.get("step")
        if step is not None and not getattr(step, "hooked", False):
            cls.step = _with_step_hooks(step)

    def _init_hooks(self) -> None:
        for name in ("step_pre", "step_post", "state_dict_pre", "state_dict_post",
                     "load_state_dict_pre", "load_state_dict_post"):
            self.__dict__.setdefault(f"_optimizer_{name}_hooks", OrderedDict())

    def __getstate__(self) -> dict:
        return {"defaults": self.defaults, "state": self.state,
                "param_groups": self.param_groups}

    def __setstate__(self, state: dict) -> None:
        self.__dict__.update(state)
        self._init_hooks()
        self.defaults.setdefault("differentiable", False)
        for group in self.param_groups:
            for key, value in self._load_defaults.items():
                group.setdefault(key, value)
        for p, s in self.state.items():
            if "step" in s and not isinstance(s["step"], Tensor):  # an old float step
                s["step"] = _factories.tensor(float(s["step"]), dtype=scalar_dtype())

    def __repr__(self) -> str:
        out = type(self).__name__ + " ("
        for i, group in enumerate(self.param_groups):
            out += f"\nParameter Group {i}\n"
            for key in sorted(group):
                if key != "params":
                    out += f"    {key}: {group[key]}\n"
        return out + ")"

    # -- parameter groups ---------------------------------------------------------------
    def add_param_group(self, param_group: dict) -> None:
        """Add a group (a dict with ``params`` and any options; the others default to the
        optimizer's) to ``param_groups``."""
        if not isinstance(param_group, dict):
            raise TypeError(f"param_group must be a dict, but got {type(param_group)}")
        params = param_group["params"]
        if isinstance(params, Tensor):
            params = [params]
        elif isinstance(params, set):
            raise TypeError("optimizer parameters need to be organized in ordered collections, "
                            "but the ordering of tensors in sets will change between runs. "
                            "Please use a list instead.")
        params = list(params)
        names = [p[0] for p in params if isinstance(p, tuple)]
        param_group["params"] = [p[1] if isinstance(p, tuple) else p for p in params]
        if names:
            if len(names) != len(params):
                raise ValueError("all optimizer params should be with/without names. Some "
                                 "param names are missing")
            param_group["param_names"] = names
        self._check_params(param_group["params"])
        for name, default in self.defaults.items():
            if default is required and name not in param_group:
                raise ValueError("parameter group didn't specify a value of required "
                                 f"optimization parameter {name}")
            param_group.setdefault(name, default)
        self._check_disjoint(param_group)
        self.param_groups.append(param_group)

    def _check_params(self, params: list) -> None:
        for p in params:
            if not isinstance(p, Tensor):
                kind = type(p)
                name = kind.__qualname__ if kind.__module__ in ("", "builtins") else \
                    f"{kind.__module__}.{kind.__qualname__}"
                raise TypeError("optimizer can only optimize Tensors, but one of the params is "
                                + name)
            if not self.defaults.get("differentiable") and not (p.is_leaf or p.retains_grad):
                raise ValueError("can't optimize a non-leaf Tensor")
        if len({id(p) for p in params}) != len(params):
            warnings.warn("optimizer contains a parameter group with duplicate parameters; in "
                          "future, this will cause an error; see "
                          "github.com/pytorch/pytorch/issues/40967 for more information",
                          stacklevel=4)

    def _check_disjoint(self, param_group: dict) -> None:
        seen = set()
        for group in self.param_groups:
            seen.update(id(p) for p in group["params"])
            if ("param_names" in param_group) != ("param_names" in group):
                which = "with names" if "param_names" in param_group else "without names"
                raise ValueError("all optimizer param groups should be with/without names. "
                                 f"cannot add param group {which} to the optimizer")
        if any(id(p) in seen for p in param_group["params"]):
            raise ValueError("some parameters appear in more than one parameter group")

    # -- stepping -----------------------------------------------------------------------
    def zero_grad(self, set_to_none: bool = True) -> None:
        """Reset the gradients: to None (default), or to zeros in place (detached)."""
        zero_grads((p for g in self.param_groups for p in g["params"]), set_to_none)

    def step(self, closure: Callable | None = None) -> Any:
        """One update of every parameter that has a gradient; ``closure`` (re-evaluating
        the loss, with grad enabled) runs first and its value is returned."""
        loss = None
        if closure is not None:
            with grad_mode.enable_grad():
                loss = closure()
        if self.sparse_refusal is not None:
            self._refuse_sparse_grads()
        prev = grad_mode.state.enabled  # (set_grad_enabled's, without its object)
        grad_mode.set_enabled(bool(self.defaults.get("differentiable", False)))
        try:
            for group in self.param_groups:
                self._step_group(group)
        finally:
            grad_mode.set_enabled(prev)
        return loss

    # PyTorch's error for a sparse gradient (``nn.Embedding(sparse=True)``'s), None where
    # the optimizer takes them
    sparse_refusal: str | None = "{name} does not support sparse gradients"

    def _refuse_sparse_grads(self) -> None:
        for group in self.param_groups:
            if has_sparse_grad(group["params"]):
                raise RuntimeError(self.sparse_refusal.format(name=type(self).__name__))

    def _step_group(self, group: dict) -> None:
        for p in group["params"]:
            grad = p.grad
            if grad is None:
                continue
            if p.is_complex():
                raise NotImplementedError(
                    f"{type(self).__name__}: complex parameters are not supported by "
                    "funcgrad.torch.optim yet (PyTorch updates their real and imaginary "
                    "parts as separate reals); optimize the two parts as real tensors")
            if group.get("capturable") and p.device.type != "cuda":
                raise AssertionError("If capturable=True, params and state_steps must be on "
                                     "supported devices: ['cuda'].")
            state = self.state[p]
            if not state:
                self._init_state(p, state, group)
            self._update(p, grad if not group.get("maximize") else -grad, state, group)

    def _init_state(self, p: Tensor, state: dict, group: dict) -> None:
        """Fill ``state`` for ``p`` before its first update."""

    def _update(self, p: Tensor, grad: Tensor, state: dict, group: dict) -> None:
        raise NotImplementedError

    # -- hooks -------------------------------------------------------------------------
    def register_step_pre_hook(self, hook: Callable) -> RemovableHandle:
        """``hook(optimizer, args, kwargs)`` runs before ``step`` and may return new
        ``(args, kwargs)`` for it."""
        return _add(self._optimizer_step_pre_hooks, hook, False)

    def register_step_post_hook(self, hook: Callable) -> RemovableHandle:
        """``hook(optimizer, args, kwargs)`` runs after ``step``."""
        return _add(self._optimizer_step_post_hooks, hook, False)

    def register_state_dict_pre_hook(self, hook: Callable, prepend: bool = False
                                     ) -> RemovableHandle:
        """``hook(optimizer)`` runs before ``state_dict`` builds its result."""
        return _add(self._optimizer_state_dict_pre_hooks, hook, prepend)

    def register_state_dict_post_hook(self, hook: Callable, prepend: bool = False
                                      ) -> RemovableHandle:
        """``hook(optimizer, state_dict)`` may return a replacement state dict."""
        return _add(self._optimizer_state_dict_post_hooks, hook, prepend)

    def register_load_state_dict_pre_hook(self, hook: Callable, prepend: bool = False
                                          ) -> RemovableHandle:
        """``hook(optimizer, state_dict)`` (a shallow copy) may return the dict to load."""
        return _add(self._optimizer_load_state_dict_pre_hooks, hook, prepend)

    def register_load_state_dict_post_hook(self, hook: Callable, prepend: bool = False
                                           ) -> RemovableHandle:
        """``hook(optimizer)`` runs after ``load_state_dict``."""
        return _add(self._optimizer_load_state_dict_post_hooks, hook, prepend)

    # -- state dict --------------------------------------------------------------------
    def state_dict(self) -> dict:
        """``{'state': {index: per-parameter state}, 'param_groups': [...]}``: parameters
        are numbered in group order; each group lists its options in PyTorch's order with
        ``params`` (the indices) last. The state tensors are the optimizer's own (not
        copies), as in PyTorch."""
        for hook in self._optimizer_state_dict_pre_hooks.values():
            hook(self)
        index: dict = {}
        groups = []
        start = 0
        for group in self.param_groups:
            packed = {k: v for k, v in group.items() if k != "params"}
            for i, p in enumerate(group["params"], start):
                index.setdefault(id(p), i)
            packed["params"] = [index[id(p)] for p in group["params"]]
            start += len(packed["params"])
            groups.append(packed)
        state = {(index[id(k)] if isinstance(k, Tensor) else k): v
                 for k, v in self.state.items()}
        result = {"state": state, "param_groups": groups}
        for hook in self._optimizer_state_dict_post_hooks.values():
            replaced = hook(self, result)
            if replaced is not None:
                result = replaced
        return result

    def load_state_dict(self, state_dict: dict) -> None:
        """Take options and state from a `state_dict`: its groups must match this
        optimizer's in number and sizes. State tensors move to their parameter's device
        and (floating ones) dtype; ``step`` keeps its own dtype."""
        state_dict = state_dict.copy()
        for hook in self._optimizer_load_state_dict_pre_hooks.values():
            replaced = hook(self, state_dict)
            if replaced is not None:
                state_dict = replaced
        groups = self.param_groups
        saved_groups = deepcopy(state_dict["param_groups"])
        if len(groups) != len(saved_groups):
            raise ValueError("loaded state dict has a different number of parameter groups")
        if any(len(g["params"]) != len(s["params"]) for g, s in zip(groups, saved_groups)):
            raise ValueError("loaded state dict contains a parameter group that doesn't "
                             "match the size of optimizer's group")
        id_map = dict(zip(chain.from_iterable(g["params"] for g in saved_groups),
                          chain.from_iterable(g["params"] for g in groups)))
        state: defaultdict = defaultdict(dict)
        for k, v in state_dict["state"].items():
            if k in id_map:
                param = id_map[k]
                options = _group_of(k, state_dict["param_groups"])
                state[param] = _cast_state(param, v, options, None)
            else:
                state[k] = v
        for group, saved in zip(groups, saved_groups):
            saved["params"] = group["params"]
            if "param_names" in group and "param_names" not in saved:
                saved["param_names"] = group["param_names"]
        self.__setstate__({"state": state, "param_groups": saved_groups})
        for hook in self._optimizer_load_state_dict_post_hooks.values():
            hook(self)


Optimizer.step = _with_step_hooks(Optimizer.step)


def _group_of(param_id: Any, groups: list) -> dict:
    for g in groups:
        if param_id in g["params"]:
            return g
    return {}


def _cast_state(param: Tensor, value: Any, group: dict, key: Any) -> Any:
    """A loaded state value for ``param``: tensors on its device (and dtype, if floating);
    ``step`` as it is, unless the group is capturable/fused (then float32 on the device)."""
    if isinstance(value, Tensor):
        if key == "step":
            if group.get("capturable") or group.get("fused"):
                return value.to(dtype=D.float32, device=param.device)
            return value
        if param.is_floating_point():
            return value.to(dtype=param.dtype, device=param.device)
        return value.to(device=param.device)
    if isinstance(value, dict):
        return {k: _cast_state(param, v, group, k) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return type(value)(_cast_state(param, v, group, None) for v in value)
    return value


# -- option checks shared by the built-in optimizers (PyTorch's messages) -----------------

def check_lr(lr: Any) -> None:
    if isinstance(lr, Tensor) and lr.numel() != 1:
        raise ValueError("Tensor lr must be 1-element")
    if not 0.0 <= lr:
        raise ValueError(f"Invalid learning rate: {lr}")


def check_non_negative(**options: Any) -> None:
    """``check_non_negative(**{"epsilon value": eps, ...})``: each must be >= 0."""
    for what, value in options.items():
        if not 0.0 <= value:
            raise ValueError(f"Invalid {what}: {value}")


def check_betas(betas: tuple) -> None:
    for i in (0, 1):
        if not 0.0 <= betas[i] < 1.0:
            raise ValueError(f"Invalid beta parameter at index {i}: {betas[i]}")


def check_adam_options(lr: Any, eps: float, betas: tuple, weight_decay: float) -> None:
    """The checks of the Adam family (Adam, Adamax, NAdam, RAdam), in PyTorch's order."""
    check_lr(lr)
    check_non_negative(**{"epsilon value": eps})
    check_betas(betas)
    check_non_negative(**{"weight_decay value": weight_decay})


def check_fused(fused: Any, foreach: Any, differentiable: bool) -> None:
    """``fused`` selects a PyTorch kernel; here the update is the same either way, but the
    combinations PyTorch refuses are refused."""
    if fused:
        if differentiable:
            raise RuntimeError("`fused` does not support `differentiable`")
        if foreach:
            raise RuntimeError("`fused` and `foreach` cannot be `True` together.")
