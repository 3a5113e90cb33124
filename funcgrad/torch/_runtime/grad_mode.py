"""Grad modes: whether operations record the graph, per thread, as in PyTorch.

`no_grad`, `enable_grad`, `set_grad_enabled` and `inference_mode` work as context managers
and as decorators (``@torch.no_grad()``); each thread starts with grad mode on.
"""
from __future__ import annotations

import functools
import inspect
import threading
from typing import Any, Callable

from funcgrad.regions import Regions

__all__ = ["no_grad", "enable_grad", "set_grad_enabled", "inference_mode",
           "is_grad_enabled", "is_inference_mode_enabled", "set_enabled", "disabled",
           "special"]


class _State(threading.local):
    def __init__(self) -> None:
        self.enabled = True
        self.inference = False
        self.dual_levels: list = []  # the entered forward-AD level (autograd.forward_ad)


state = _State()
# threads whose grad mode is off (`set_enabled` keeps the count), and the open inference-mode
# regions and forward-AD levels: while a count is 0, no thread need read its `state` for it
disabled = Regions()
special = Regions()


def set_enabled(mode: bool) -> None:
    """Set this thread's grad mode (every change of ``state.enabled`` comes here)."""
    if state.enabled != mode:
        (disabled.exit if mode else disabled.enter)()
        state.enabled = mode


def is_grad_enabled() -> bool:
    """Whether operations on tensors that require grad record the graph (this thread;
    its state is only read while some thread's grad mode is off)."""
    return not disabled.open or state.enabled


def is_inference_mode_enabled() -> bool:
    return state.inference


class _DecoratorContextManager:
    """A context manager that also decorates functions (and generator functions), entering
    a fresh copy of itself around every call."""

    def __call__(self, func: Callable) -> Callable:
        if inspect.isclass(func):
            raise RuntimeError(f"{type(self).__name__} cannot decorate a class; decorate "
                               "its methods instead")
        if inspect.isgeneratorfunction(func):
            @functools.wraps(func)
            def gen_wrapper(*args: Any, **kwargs: Any) -> Any:
                gen = func(*args, **kwargs)
                with self.clone():
                    value = next(gen)
                while True:
                    sent = yield value
                    with self.clone():
                        try:
                            value = gen.send(sent)
                        except StopIteration as stop:
                            return stop.value
            return gen_wrapper

        @functools.wraps(func)
        def wrapper(*args: Any, **kwargs: Any) -> Any:
            with self.clone():
                return func(*args, **kwargs)
        return wrapper

    def clone(self) -> "_DecoratorContextManager":
        return type(self)()


class _SwitchGrad(_DecoratorContextManager):
    """Set grad mode to ``mode`` inside, restore the previous mode on exit. Decorates with
    or without parentheses (``@no_grad()`` and ``@no_grad``)."""

    mode = True

    def __new__(cls, orig_func: Callable | None = None) -> Any:
        if orig_func is None:
            return super().__new__(cls)
        return cls()(orig_func)

    def __enter__(self) -> None:
        self.prev = state.enabled
        set_enabled(self.mode)

    def __exit__(self, *exc: Any) -> None:
        set_enabled(self.prev)


class no_grad(_SwitchGrad):
    """Operations inside do not record the graph (results have ``requires_grad=False``)."""

    mode = False


class enable_grad(_SwitchGrad):
    """Turn recording back on inside a `no_grad` region."""

    mode = True


class set_grad_enabled(_DecoratorContextManager):
    """``set_grad_enabled(mode)`` sets grad mode at once (as a function call) and restores
    the previous mode when used as a context manager."""

    def __init__(self, mode: bool) -> None:
        self.prev = state.enabled
        self.mode = bool(mode)
        set_enabled(self.mode)

    def __enter__(self) -> None:
        set_enabled(self.mode)

    def __exit__(self, *exc: Any) -> None:
        set_enabled(self.prev)

    def __call__(self, func: Callable) -> Callable:
        set_enabled(self.prev)  # decorating must not change the mode now
        return super().__call__(func)

    def clone(self) -> "set_grad_enabled":
        prev = state.enabled
        out = type(self)(self.mode)
        out.prev = prev
        return out


class inference_mode(_DecoratorContextManager):
    """Like `no_grad`; tensors created inside are inference tensors (``is_inference()``),
    which autograd refuses to save for backward later."""

    def __init__(self, mode: bool = True) -> None:
        self.mode = bool(mode)

    def __enter__(self) -> None:
        self.prev = (state.enabled, state.inference)
        if self.mode:
            special.enter()
            set_enabled(False)
            state.inference = True

    def __exit__(self, *exc: Any) -> None:
        enabled, state.inference = self.prev
        set_enabled(enabled)
        if self.mode:
            special.exit()

    def clone(self) -> "inference_mode":
        return type(self)(self.mode)
