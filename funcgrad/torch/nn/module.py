"""`nn.Module`: a tree of modules holding parameters and buffers, called as functions.

Attribute assignment registers Parameters, sub-Modules and buffers (PyTorch's rules and
error messages); ``parameters()``/``named_parameters()`` walk the tree with dotted names;
``state_dict``/``load_state_dict`` copy values in place under no_grad; ``module(x)`` runs
the forward pre-hooks, ``forward`` and the forward hooks.
"""
from __future__ import annotations

from collections import OrderedDict
from typing import Any, Callable, Iterable, Iterator, NamedTuple

from funcgrad.meta import NO_DATA_ERROR
from funcgrad.torch import _factories, __future__ as torch_future
from funcgrad.torch._tensor import Tensor
from funcgrad.torch._runtime import grad_mode
from funcgrad.torch._runtime.node import add_hook
from funcgrad.torch.nn.parameter import Buffer, Parameter, is_lazy
from funcgrad.torch.nn._backward_hooks import BackwardHook
from funcgrad.torch.utils._swap import swap_tensors
from funcgrad.torch._runtime import dtypes as D

__all__ = ["Module", "zero_grads"]


class _IncompatibleKeys(NamedTuple):
    missing_keys: list
    unexpected_keys: list

    def __repr__(self) -> str:
        if not self.missing_keys and not self.unexpected_keys:
            return "<All keys matched successfully>"
        return (f"_IncompatibleKeys(missing_keys={self.missing_keys}, "
                f"unexpected_keys={self.unexpected_keys})")

    __str__ = __repr__


def _typename(value: Any) -> str:
    if isinstance(value, Tensor):
        return value.type()
    return type(value).__module__ + "." + type(value).__qualname__


def _addindent(s: str, spaces: int) -> str:
    lines = s.split("\n")
    if len(lines) == 1:
        return s
    return lines[0] + "\n" + "\n".join(" " * spaces + line for line in lines[1:])


def zero_grads(params: Iterable[Tensor], set_to_none: bool = True) -> None:
    """Reset the gradients of ``params``: to None, or to zeros in place (detached)."""
    for p in params:
        if p._grad is None:  # (the field: the property only adds a warning for user code)
            continue
        if set_to_none:
            p._grad = None
        else:
            p.grad.detach_()
            p.grad.zero_()


_META_TO_ERROR = (NO_DATA_ERROR + " Please use torch.nn.Module.to_empty() instead of "
                  "torch.nn.Module.to() when moving module from meta to a different device.")


class Module:
    """Base class of all neural network modules (subclass it and define ``forward``)."""

    training: bool
    _version: int = 1  # its state dict's layout version (``_metadata``), as PyTorch's

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        if args or kwargs:
            raise TypeError(f"{type(self).__name__}.__init__() takes no arguments")
        for name, value in [("training", True), ("_parameters", OrderedDict()),
                            ("_buffers", OrderedDict()), ("_non_persistent", set()),
                            ("_modules", OrderedDict()), ("_forward_hooks", OrderedDict()),
                            ("_forward_pre_hooks", OrderedDict())]:
            object.__setattr__(self, name, value)

    def __setstate__(self, state: dict) -> None:
        """Unpickling: the attributes, and the tables a module of another layout lacks (a
        whole model pickled by real PyTorch names its non-persistent buffers
        ``_non_persistent_buffers_set``; its own hook tables stay unused)."""
        self.__dict__.update(state)
        d = self.__dict__
        d.setdefault("_non_persistent", set(d.get("_non_persistent_buffers_set", ())))
        for name in ("_parameters", "_buffers", "_modules", "_forward_hooks",
                     "_forward_pre_hooks"):
            d.setdefault(name, OrderedDict())
        d.setdefault("training", True)

    def forward(self, *args: Any, **kwargs: Any) -> Any:
        raise NotImplementedError(f'Module [{type(self).__name__}] is missing the required '
                                  '"forward" function')

    def __call__(self, *args: Any, **kwargs: Any) -> Any:
        if self._forward_pre_hooks:
            for hook in list(self._forward_pre_hooks.values()):
                r = hook(self, args)
                if r is not None:
                    args = r if isinstance(r, tuple) else (r,)
        backward_hooks = self.__dict__.get("_backward_hooks")
        pre_hooks = self.__dict__.get("_backward_pre_hooks")
        bw = BackwardHook(self, list(backward_hooks.values()) if backward_hooks else [],
                          list(pre_hooks.values()) if pre_hooks else []) \
            if backward_hooks or pre_hooks else None
        if bw is not None and backward_hooks:
            args = bw.setup_input_hook(args)
        out = self.forward(*args, **kwargs)
        if self._forward_hooks:
            for hook in list(self._forward_hooks.values()):
                r = hook(self, args, out)
                if r is not None:
                    out = r
        return out if bw is None else bw.setup_output_hook(out)

    def register_full_backward_hook(self, hook: Callable, prepend: bool = False) -> Any:
        """``hook(module, grad_input, grad_output)`` when the gradients of the module's
        inputs are known; may return a new grad_input (`_backward_hooks`)."""
        return self._add_backward_hook("_backward_hooks", hook, prepend)

    def register_full_backward_pre_hook(self, hook: Callable, prepend: bool = False) -> Any:
        """``hook(module, grad_output)`` when the gradients of the module's outputs are
        known; may return a new grad_output."""
        return self._add_backward_hook("_backward_pre_hooks", hook, prepend)

    def _add_backward_hook(self, store: str, hook: Callable, prepend: bool) -> Any:
        hooks = self.__dict__.get(store)
        if hooks is None:
            hooks = OrderedDict()
            object.__setattr__(self, store, hooks)
        handle = add_hook(hooks, hook)
        if prepend:
            hooks.move_to_end(next(reversed(hooks)), last=False)
        return handle

    def register_forward_hook(self, hook: Callable) -> Any:
        """``hook(module, args, output)`` after each forward; may return a new output."""
        return add_hook(self._forward_hooks, hook)

    def register_forward_pre_hook(self, hook: Callable) -> Any:
        """``hook(module, args)`` before each forward; may return new args."""
        return add_hook(self._forward_pre_hooks, hook)

    # -- registration -----------------------------------------------------------------------
    def __setattr__(self, name: str, value: Any) -> None:
        d = self.__dict__
        params = d.get("_parameters")
        if isinstance(value, Parameter):
            if params is None:
                raise AttributeError("cannot assign parameters before Module.__init__() call")
            self._remove(name, keep="_parameters")
            self.register_parameter(name, value)
        elif params is not None and name in params:
            if value is not None:
                raise TypeError(f"cannot assign '{_typename(value)}' as parameter '{name}' "
                                "(torch.nn.Parameter or None expected)")
            self.register_parameter(name, value)
        elif isinstance(value, Module):
            if d.get("_modules") is None:
                raise AttributeError("cannot assign module before Module.__init__() call")
            self._remove(name, keep="_modules")
            d["_modules"][name] = value
        elif d.get("_modules") is not None and name in d["_modules"]:
            if value is not None:
                raise TypeError(f"cannot assign '{_typename(value)}' as child module "
                                f"'{name}' (torch.nn.Module or None expected)")
            d["_modules"][name] = value
        elif isinstance(value, Buffer):
            self._remove(name, keep="_buffers")
            self.register_buffer(name, value.data, value.persistent)
        elif d.get("_buffers") is not None and name in d["_buffers"]:
            if value is not None and not isinstance(value, Tensor):
                raise TypeError(f"cannot assign '{_typename(value)}' as buffer '{name}' "
                                "(torch.nn.Buffer, torch.Tensor or None expected)")
            d["_buffers"][name] = value
        else:
            object.__setattr__(self, name, value)

    def _remove(self, name: str, keep: str) -> None:
        """Forget ``name`` everywhere but in store ``keep``, where the new value replaces
        it in place (so a re-assigned child keeps its position, as in PyTorch)."""
        for store in ("_parameters", "_buffers", "_modules"):
            if store != keep:
                self.__dict__[store].pop(name, None)
        self.__dict__.pop(name, None)

    def __getattr__(self, name: str) -> Any:
        d = self.__dict__
        for store in ("_parameters", "_buffers", "_modules"):
            if store in d and name in d[store]:
                return d[store][name]
        raise AttributeError(f"'{type(self).__name__}' object has no attribute '{name}'")

    def __delattr__(self, name: str) -> None:
        for store in ("_parameters", "_buffers", "_modules"):
            if name in self.__dict__.get(store, {}):
                del self.__dict__[store][name]
                self._non_persistent.discard(name)
                return
        object.__delattr__(self, name)

    def register_parameter(self, name: str, param: Parameter | None) -> None:
        if "_parameters" not in self.__dict__:
            raise AttributeError("cannot assign parameter before Module.__init__() call")
        if "." in name:
            raise KeyError('parameter name can\'t contain "."')
        if param is not None and not isinstance(param, Parameter):
            raise TypeError(f"cannot assign '{_typename(param)}' object to parameter "
                            f"'{name}' (torch.nn.Parameter or None required)")
        self._parameters[name] = param

    def register_buffer(self, name: str, tensor: Tensor | None,
                        persistent: bool = True) -> None:
        if tensor is not None and not isinstance(tensor, Tensor):
            raise TypeError(f"cannot assign '{_typename(tensor)}' object to buffer '{name}' "
                            "(torch Tensor or None required)")
        self._buffers[name] = tensor
        (self._non_persistent.discard if persistent else self._non_persistent.add)(name)

    def add_module(self, name: str, module: "Module | None") -> None:
        if module is not None and not isinstance(module, Module):
            raise TypeError(f"{_typename(module)} is not a Module subclass")
        self._modules[name] = module

    register_module = add_module

    def get_submodule(self, target: str) -> "Module":
        mod = self
        for item in filter(None, target.split(".")):
            if item not in mod._modules:
                raise AttributeError(f"{mod._get_name()} has no attribute `{item}`")
            mod = mod._modules[item]
        return mod

    def get_parameter(self, target: str) -> Parameter:
        return self._get_member(target, "_parameters", "an nn.Parameter")

    def get_buffer(self, target: str) -> Tensor:
        return self._get_member(target, "_buffers", "a buffer")

    def _get_member(self, target: str, store: str, kind: str) -> Any:
        """The parameter or buffer at dotted path ``target`` (PyTorch's errors)."""
        path, _, name = target.rpartition(".")
        mod = self.get_submodule(path)
        if not hasattr(mod, name):
            raise AttributeError(f"{mod._get_name()} has no attribute `{name}`")
        if name not in getattr(mod, store):
            raise AttributeError(f"`{name}` is not {kind}")
        return getattr(mod, store)[name]

    def set_submodule(self, target: str, module: "Module", strict: bool = False) -> None:
        """Put ``module`` at dotted path ``target`` (its parent must exist; ``strict``: so
        must the name)."""
        path, _, name = target.rpartition(".")
        parent = self.get_submodule(path)
        if strict and not hasattr(parent, name):
            raise AttributeError(f"{parent._get_name()} has no attribute `{name}`")
        if hasattr(parent, name) and not isinstance(getattr(parent, name), Module):
            raise AttributeError(f"`{name}` is not an nn.Module")
        setattr(parent, name, module)

    # -- iteration ---------------------------------------------------------------------------
    def named_modules(self, memo: set | None = None, prefix: str = "",
                      remove_duplicate: bool = True) -> Iterator[tuple]:
        memo = set() if memo is None else memo
        if remove_duplicate and self in memo:
            return
        memo.add(self)
        yield prefix, self
        for name, module in self._modules.items():
            if module is None:
                continue
            sub = prefix + ("." if prefix else "") + name
            yield from module.named_modules(memo, sub, remove_duplicate)

    def modules(self) -> Iterator["Module"]:
        for _, m in self.named_modules():
            yield m

    def named_children(self) -> Iterator[tuple]:
        seen = set()
        for name, m in self._modules.items():
            if m is not None and m not in seen:
                seen.add(m)
                yield name, m

    def children(self) -> Iterator["Module"]:
        for _, m in self.named_children():
            yield m

    def _named_members(self, store: str, prefix: str, recurse: bool,
                       remove_duplicate: bool = True) -> Iterator[tuple]:
        mods = self.named_modules(prefix=prefix, remove_duplicate=remove_duplicate) \
            if recurse else [(prefix, self)]
        seen: set = set()
        for mod_prefix, mod in mods:
            for name, value in getattr(mod, store).items():
                if value is None or (remove_duplicate and id(value) in seen):
                    continue
                seen.add(id(value))
                yield mod_prefix + ("." if mod_prefix else "") + name, value

    def named_parameters(self, prefix: str = "", recurse: bool = True,
                         remove_duplicate: bool = True) -> Iterator[tuple]:
        return self._named_members("_parameters", prefix, recurse, remove_duplicate)

    def parameters(self, recurse: bool = True) -> Iterator[Parameter]:
        for _, p in self.named_parameters(recurse=recurse):
            yield p

    def named_buffers(self, prefix: str = "", recurse: bool = True,
                      remove_duplicate: bool = True) -> Iterator[tuple]:
        return self._named_members("_buffers", prefix, recurse, remove_duplicate)

    def buffers(self, recurse: bool = True) -> Iterator[Tensor]:
        for _, b in self.named_buffers(recurse=recurse):
            yield b

    # -- modes and gradients -------------------------------------------------------------
    def train(self, mode: bool = True) -> "Module":
        if not isinstance(mode, bool):
            raise ValueError("training mode is expected to be boolean")
        self.training = mode
        for m in self.children():
            m.train(mode)
        return self

    def eval(self) -> "Module":
        return self.train(False)

    def requires_grad_(self, requires_grad: bool = True) -> "Module":
        for p in self.parameters():
            p.requires_grad_(requires_grad)
        return self

    def zero_grad(self, set_to_none: bool = True) -> None:
        zero_grads(self.parameters(), set_to_none)

    def apply(self, fn: Callable) -> "Module":
        for m in self.children():
            m.apply(fn)
        fn(self)
        return self

    def _apply(self, fn: Callable) -> "Module":
        for m in self.children():
            m._apply(fn)
        return self._apply_own(fn)

    def _apply_own(self, fn: Callable) -> "Module":
        """``fn`` applied to this module's own parameters (and their grads) and buffers."""
        with grad_mode.no_grad():
            for name, p in self._parameters.items():
                if p is not None:
                    self._apply_to_parameter(name, p, fn)
            for name, b in self._buffers.items():
                if b is not None:
                    self._buffers[name] = fn(b)
        return self

    def _apply_to_parameter(self, name: str, p: Parameter, fn: Callable) -> None:
        """``fn`` applied to parameter ``name`` and its grad, as `torch.__future__` says:
        new values in the same object (the default), a new Parameter object (overwrite), or
        a new Parameter swapped into the old object (swap: `torch.utils.swap_tensors`)."""
        grad = p._grad
        if torch_future.get_swap_module_params_on_conversion():
            p._grad = None
            try:
                swap_tensors(p, Parameter(fn(p), requires_grad=p.requires_grad))
            except Exception as e:
                p._grad = grad
                raise RuntimeError(f"_apply(): Couldn't swap {self._get_name()}.{name}") from e
            if grad is not None:
                new_grad = fn(grad).requires_grad_(grad.requires_grad)
                swap_tensors(grad, new_grad)
                p._grad = grad
        elif torch_future.get_overwrite_module_params_on_conversion():
            new = Parameter(fn(p), p.requires_grad)
            self._parameters[name] = new
            if grad is not None:
                new._grad = fn(grad).requires_grad_(grad.requires_grad)
        else:
            p.data = fn(p)
            if grad is not None:
                grad.data = fn(grad)

    def to(self, *args: Any, **kwargs: Any) -> "Module":
        def convert(t: Tensor) -> Tensor:
            try:
                out = t.to(*args, **kwargs)
            except NotImplementedError as e:
                if t.is_meta and str(e) == NO_DATA_ERROR:
                    raise NotImplementedError(_META_TO_ERROR) from None
                raise
            if not t.is_floating_point() and out.dtype != t.dtype:
                out = out.to(t.dtype)
            return out
        return self._apply(convert)

    def to_empty(self, *, device: Any, recurse: bool = True) -> "Module":
        """Move the parameters and buffers to ``device`` without copying their values: each
        becomes an uninitialised tensor of its shape there (the way off the meta device;
        initialise them afterwards, e.g. with ``reset_parameters()``). ``recurse=False``:
        this module's own tensors only."""
        def fresh(t: Tensor) -> Tensor:
            return _factories.empty_like(t, device=device)
        if recurse:
            return self._apply(fresh)
        return self._apply_own(fresh)

    def cuda(self, device: Any = None) -> "Module":
        return self._apply(lambda t: t.cuda(device))

    def cpu(self) -> "Module":
        return self._apply(lambda t: t.cpu())

    def _float_apply(self, dtype: Any) -> "Module":
        return self._apply(lambda t: t.to(dtype) if t.is_floating_point() else t)

    def bfloat16(self) -> "Module":
        return self._float_apply(D.bfloat16)

    def type(self, dst_type: Any) -> "Module":
        return self._apply(lambda t: t.type(dst_type))

    def share_memory(self) -> "Module":
        """Nothing to do: tensors live in this process's memory (no worker processes
        share them here)."""
        return self

    def float(self) -> "Module":
        return self._float_apply(D.float32)

    def double(self) -> "Module":
        return self._float_apply(D.float64)

    def half(self) -> "Module":
        return self._float_apply(D.float16)

    # -- state -----------------------------------------------------------------------------
    def state_dict(self, *args: Any, destination: Any = None, prefix: str = "",
                   keep_vars: bool = False) -> "OrderedDict[str, Tensor]":
        dest = OrderedDict() if destination is None else destination
        if destination is None:
            dest._metadata = OrderedDict()  # (each module's version, by prefix: PyTorch's)
        if hasattr(dest, "_metadata"):
            dest._metadata[prefix[:-1]] = {"version": self._version}
        for name, p in self._parameters.items():
            if p is not None:
                dest[prefix + name] = p if keep_vars or is_lazy(p) else p.detach()
        for name, b in self._buffers.items():
            if b is not None and name not in self._non_persistent:
                dest[prefix + name] = b if keep_vars or is_lazy(b) else b.detach()
        for name, m in self._modules.items():
            if m is not None:
                m.state_dict(destination=dest, prefix=prefix + name + ".", keep_vars=keep_vars)
        return dest

    def load_state_dict(self, state_dict: dict, strict: bool = True,
                        assign: bool = False) -> _IncompatibleKeys:
        """Copy values (in place, no_grad) from ``state_dict``; with ``strict``, missing or
        unexpected keys raise (PyTorch's message). Every key, value and shape is checked
        before anything is written: a state dict that fails leaves the module as it was."""
        own = self.state_dict(keep_vars=True)
        state_dict = self._upgraded(state_dict)
        missing = [k for k in own if k not in state_dict]
        unexpected = [k for k in state_dict if k not in own]
        # (a placeholder loaded into a placeholder: nothing to check or to copy)
        loaded = [key for key, target in own.items() if key in state_dict
                  and not (is_lazy(target) and is_lazy(state_dict[key]))]
        errors = [_state_error(key, state_dict[key], own[key]) for key in loaded]
        errors = [e for e in errors if e]
        if strict:
            if unexpected:
                errors.insert(0, "Unexpected key(s) in state_dict: {}. ".format(
                    ", ".join(f'"{k}"' for k in unexpected)))
            if missing:
                errors.insert(0, "Missing key(s) in state_dict: {}. ".format(
                    ", ".join(f'"{k}"' for k in missing)))
        if errors:
            raise RuntimeError("Error(s) in loading state_dict for {}:\n\t{}".format(
                type(self).__name__, "\n\t".join(errors)))
        with grad_mode.no_grad():
            for key in loaded:
                if assign:
                    self._assign(key, state_dict[key])
                else:
                    own[key].copy_(state_dict[key])
        return _IncompatibleKeys(missing, unexpected)

    def _upgraded(self, state_dict: dict) -> dict:
        """``state_dict`` with what older layouts lack filled in by each module's
        `_upgrade_state` (from the versions in its ``_metadata``; none: the oldest)."""
        metadata = getattr(state_dict, "_metadata", None) or {}
        upgraded = OrderedDict(state_dict)
        for prefix, module in self.named_modules():
            version = metadata.get(prefix, {}).get("version")
            module._upgrade_state(upgraded, prefix + "." if prefix else "", version)
        return upgraded

    def _upgrade_state(self, state_dict: dict, prefix: str, version: int | None) -> None:
        """Fill in (in ``state_dict``) what a state dict of an older ``version`` of this
        module lacks (PyTorch's ``_load_from_state_dict`` upgrades); nothing by default."""

    def _assign(self, key: str, value: Tensor) -> None:
        path, _, name = key.rpartition(".")
        mod = self.get_submodule(path)
        if name in mod._parameters:
            mod._parameters[name] = Parameter(value, mod._parameters[name].requires_grad)
        else:
            mod._buffers[name] = value

    # -- printing ----------------------------------------------------------------------------
    def extra_repr(self) -> str:
        return ""

    def _get_name(self) -> str:
        return type(self).__name__

    def __repr__(self) -> str:
        extra = self.extra_repr()
        lines = extra.split("\n") if extra else []
        child_lines = [f"({key}): {_addindent(repr(m), 2)}" for key, m in self._modules.items()]
        lines += child_lines
        main = self._get_name() + "("
        if lines:
            if len(lines) == 1 and not child_lines:
                main += lines[0]
            else:
                main += "\n  " + "\n  ".join(lines) + "\n"
        return main + ")"

    def __dir__(self) -> list:
        return sorted(set(object.__dir__(self)) | set(self._parameters) |
                      set(self._modules) | set(self._buffers))


def _state_error(key: str, value: Any, target: Tensor) -> str:
    """What is wrong with ``value`` as the new value of ``target`` (PyTorch's texts), or
    the empty string."""
    if not isinstance(value, Tensor):
        foreign = hasattr(type(value), "__torch_function__")  # (real PyTorch's tensor)
        return (f'While copying the parameter named "{key}", expected torch.Tensor or '
                f"Tensor-like object from checkpoint but received {type(value)}" +
                (" (another library's tensor: save it with torch.save and load it with "
                 "funcgrad.torch.load, or convert it with funcgrad.torch.from_numpy("
                 "t.numpy()))" if foreign else ""))
    if tuple(value.shape) != tuple(target.shape):
        return (f"size mismatch for {key}: copying a param with shape {value.shape} from "
                f"checkpoint, the shape in current model is {target.shape}.")
    return ""
