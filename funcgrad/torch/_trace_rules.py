"""What a ``torch.compile`` trace may not do, checked around it (`funcgrad.torch.jit`):
random draws outside the traced stream and in-place updates of parameters or buffers
(`check_pure`), writes into tensors read from the closure (`lifted`), Python state changed
by a broken trace (`undo`); which errors mean a value was needed (`untraceable`); the Python
constants a trace bakes in (`probe_attributes`) and PyTorch's warning at the recompile
limit (`limit_message`).
"""
from __future__ import annotations

import contextlib
from typing import Any, Iterator

from funcgrad.core import ConcretizationTypeError
from funcgrad.torch import _compile_state as dynamo
from funcgrad.torch._factories import get_rng_state, set_rng_state
from funcgrad.torch._step_replay import Probes
from funcgrad.torch._tensor import Tensor
from funcgrad.torch.nn.module import Module

__all__ = ["check_arguments", "check_pure", "lifted", "undo", "untraceable", "probe_attributes",
           "limit_message"]


def check_pure(program: Any, rng: Tensor, state: dict, versions: dict) -> None:
    """Refuse what a compiled program cannot replay: random draws, in-place updates of
    parameters or buffers."""
    if program.compiling:
        changed = [n for n, t in state.items() if t._version != versions[n]]
        if not bool((get_rng_state() == rng).all()) or changed:
            set_rng_state(rng)
            raise dynamo.GraphBreak(
                "it draws random numbers (dropout in training mode, rand, bernoulli...)"
                if not changed else f"it updates {', '.join(changed)} in place (BatchNorm's "
                "running statistics in training mode)")
    if not bool((get_rng_state() == rng).all()):
        raise RuntimeError(
            f"{program.name()} draws random numbers (dropout in training mode, rand, "
            "bernoulli...) while being traced: the compiled program would reuse the first "
            "call's draw on every call. Trace or compile it in eval mode (module.eval()), "
            "or call it without torch.compile / torch.jit.trace.")
    changed = [n for n, t in state.items() if t._version != versions[n]]
    if changed:
        raise RuntimeError(
            f"{program.name()} modifies {', '.join(changed)} in place while being traced "
            "(BatchNorm updates its running statistics in training mode): a compiled "
            "program cannot carry that update. Trace or compile it in eval mode, or call "
            "it without torch.compile / torch.jit.trace.")


@contextlib.contextmanager
def lifted(lifted: dict, state: dict) -> Iterator[None]:
    """Within the block, each tensor read from the closure (``lifted``: name -> tensor)
    holds its traced input (from ``state``), so that the function's own reference to it
    reads the program's input; after, its memory and version again. A block that writes
    into one in place is a graph break (a program cannot carry the write back)."""
    kept = [(t, t._data, t._version) for t in lifted.values()]
    held = []
    try:
        for name, t in lifted.items():
            a = state[name]._data
            t._hold(a)
            held.append((name, t, a, t._version))
        yield
        written = [n for n, t, a, v in held if t._data is not a or t._version != v]
    finally:
        for t, a, v in kept:
            t._hold(a, v)
    if written:
        raise dynamo.GraphBreak(f"it writes into the tensor {written[0][len('<read> '):]!r} "
                                "it reads from its closure or globals, in place")


def undo(python: dynamo.PythonState, rng: Tensor) -> None:
    """Put back what a broken trace changed: the Python state and the random generator."""
    python.restore()
    set_rng_state(rng)


def untraceable(e: BaseException) -> bool:
    """Whether ``e`` says a traced value was asked for a concrete one (a graph break)."""
    return isinstance(e, ConcretizationTypeError) or str(e).startswith(
        "Cannot convert a traced Array")


def probe_attributes(module: Module, probes: Probes, constants: list) -> None:
    """Probe the Python constants among ``module``'s attributes (``self.scale``, a
    dropout's ``p``): a trace bakes them into the program."""
    at = probes.obj(module)
    for k, v in vars(module).items():
        if not k.startswith("_") and dynamo.is_constant(v):
            probes.equal(f"{at}.__dict__.get({k!r}, M)")
            constants.append((f"{type(module).__name__}.{k}", v))


def limit_message(program: Any, modes: tuple) -> str:
    """PyTorch's warning at the recompile limit, naming a constant that changed."""
    last = next((m for m in reversed(program.variants) if m != "warned"), None)
    reason = "a new input signature"
    if last is not None and len(modes) == 2 and len(last) == 2:
        now, then = dict(modes[1]), dict(last[1])
        diff = [f"{k} == {then[k]!r} (now {now[k]!r})" for k in now
                if k in then and now[k] != then[k]]
        reason = diff[0] if diff else reason
    target = program.target()
    code = getattr(program.fn, "__code__", None) or getattr(
        getattr(type(target), "forward", None), "__code__", None)
    place = f" ({code.co_filename}:{code.co_firstlineno})" if code is not None else ""
    return (f"torch._dynamo hit config.recompile_limit ({dynamo.config.recompile_limit})\n"
            f"   function: '{program.name()}'{place}\n   last reason: {reason}\n"
            'To log all recompilation reasons, use TORCH_LOGS="recompiles".\n'
            "To diagnose recompilation issues, see "
            "https://pytorch.org/docs/main/torch.compiler_troubleshooting.html.")


_ARGUMENTS = (Tensor, bool, int, float, complex)  # what a program takes as an argument


def check_arguments(leaves: list) -> None:
    """A graph break for an argument a program cannot take (a module, an object: a split
    function's segment may be passed one); it runs eagerly."""
    for leaf in leaves:
        if not isinstance(leaf, _ARGUMENTS):
            raise dynamo.GraphBreak(f"an argument of type {type(leaf).__name__} (not a "
                                    "tensor or a Python number)")
