"""JAX's ahead-of-time stages of a jitted function: ``jit(f).trace(*args)`` is a `Traced`
(the program and its output shapes), ``.lower()`` a `Lowered` (printable, with its cost),
``.compile()`` a `Compiled` (called as the jitted function is). `transforms.jit` makes
them; they live here so that the jit module keeps to the call path."""
from __future__ import annotations

from typing import Any, Callable

import numpy as np

from funcgrad.avals import ShapedArray
from . import compile as compiler
from . import cost
from .tape import Tape
from .tape_text import tape_text

__all__ = ["Traced", "Lowered", "Compiled"]


class Traced:
    """JAX's ``jit(f).trace(*args)``: the program traced for these arguments, before
    lowering; what to inspect (the jaxpr, the outputs' shapes) without compiling."""

    def __init__(self, lowered: "Lowered", fun_name: str, flat_fun: Callable):
        self._lowered = lowered
        self.fun_name = fun_name
        # the function itself on the flat dynamic arguments (flat outputs): what export
        # differentiates, as the program keeps a custom_jvp/custom_vjp's primal, not its rule
        self.flat_fun = flat_fun

    @property
    def jaxpr(self) -> Tape:
        """The closed program (what ``make_jaxpr`` returns for the same arguments)."""
        return self._lowered.tape

    @property
    def in_tree(self) -> Any:
        """The structure of the dynamic arguments, ``(args, kwargs)`` as JAX's."""
        return self._lowered.calling[2]

    @property
    def out_tree(self) -> Any:
        return self._lowered.calling[3]

    @property
    def in_avals(self) -> Any:
        """The dynamic arguments' `ShapedArray`s in ``in_tree`` (a Python number's weakly
        typed, as JAX's)."""
        tape, weak = self._lowered.tape, self._lowered.weak_vars
        return self.in_tree.unflatten([ShapedArray(*tape.var_avals[v], weak_type=v in weak)
                                       for v in tape.in_vars])

    @property
    def out_info(self) -> Any:
        """The outputs' `ShapeDtypeStruct`s in the outputs' tree."""
        return self.out_tree.unflatten(self.jaxpr.out_avals)

    def lower(self) -> "Lowered":
        """The next stage: what ``jit(f).lower(*args)`` gives for the same arguments."""
        return self._lowered


class Lowered:
    """A traced program: ``as_text()`` prints it (jaxpr style); ``compile()`` compiles it;
    ``compile().as_text()`` prints the generated source."""

    def __init__(self, tape: Tape, weak_vars: set, donated: tuple, blocks: bool = True,
                 calling: tuple | None = None):
        self.tape = tape
        self.weak_vars = weak_vars
        self.donated = donated
        self.blocks = blocks
        self.calling = calling  # (split, static, in tree, out tree): how calls flatten

    def as_text(self) -> str:
        return tape_text(self.tape)

    @property
    def jaxpr(self) -> Tape:
        """The traced program (JAX's ``jit(f).trace(x).jaxpr``; its ``eqns``, ``in_avals``
        ...)."""
        return self.tape

    def cost_analysis(self) -> dict:
        """JAX's estimate of the program's flops, transcendentals and bytes accessed
        (`funcgrad.transforms.cost`)."""
        return cost.cost_analysis(self.tape)

    def compile(self) -> "Compiled":
        """The compiled program, called as the jitted function is (its arguments' tree,
        its results' tree)."""
        compiled = Compiled(compiler.compile_tape(self.tape, self.weak_vars, self.donated,
                                                  blocks=self.blocks), self.calling,
                            [self.tape.var_avals[v] for v in self.tape.in_vars])
        compiled.cost_analysis = self.cost_analysis  # (the compiled program's is the same)
        return compiled

    def __str__(self) -> str:
        return self.as_text()


class Compiled:
    """JAX's ``jit(f).lower(*args).compile()``: a call takes what the jitted function takes
    (the same static arguments, the arguments' tree) and returns what it returns;
    ``as_text()`` is the generated source."""

    def __init__(self, program: "compiler.Program", calling: tuple | None,
                 avals: list | None = None):
        self.program = program
        self.calling = calling
        self.avals = avals  # (shape, dtype) of each flat input it was compiled for

    @property
    def fn(self) -> Callable:
        """The generated function of the flat arrays."""
        return self.program.fn

    @property
    def source(self) -> str:
        return self.program.source

    def as_text(self) -> str:
        return self.program.as_text()

    def __call__(self, *args: Any, **kwargs: Any) -> Any:
        if self.calling is None:  # (a program of flat arrays)
            return self.program(*args)
        split, static, tree, out_tree = self.calling
        got_static, leaves, got_tree, _ = split(args, kwargs)
        if got_static != static or got_tree != tree:
            raise TypeError("a compiled program was called with arguments of another "
                            f"structure than it was lowered for: expected {tree}, got "
                            f"{got_tree}")
        wrong = [f"argument {i}: compiled for {_aval_str(aval)}, called with "
                 f"{_aval_str((np.shape(x), x.dtype))}" for i, (x, aval) in
                 enumerate(zip(leaves, self.avals or ())) if hasattr(x, "dtype") and
                 (tuple(np.shape(x)), np.dtype(x.dtype)) != (tuple(aval[0]), np.dtype(aval[1]))]
        if wrong:
            raise TypeError("Argument types differ from the types for which this computation "
                            "was compiled. The mismatches are:\n" + "\n".join(wrong))
        return out_tree.unflatten(list(self.program(*leaves)))


def _aval_str(aval: tuple) -> str:
    return f"{np.dtype(aval[1]).name}{list(aval[0])}"
