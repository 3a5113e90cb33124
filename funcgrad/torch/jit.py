"""torch.jit (tracing) and torch.compile for funcgrad.torch, on `funcgrad.jit`.

TorchScript tracing (the seed's section 6.2) runs a function once on example inputs and
records the operations it performed into a graph, its intermediate representation, which
then runs without the Python that produced it. funcgrad has that machinery already: its
`jit` traces a function into the tape IR and compiles the tape to one straight-line numpy
program. Here a module (or a function of tensors) is made a pure function of arrays (its
parameters and buffers become arguments, through `torch.func.functional_call`) and handed
to `funcgrad.jit`:

- ``torch.jit.trace(fn_or_module, example_inputs)`` traces on the examples and returns a
  `TracedModule` / `TracedFunction`: ``.graph`` prints the IR (jaxpr style), ``.code``
  the generated Python program; calls run the compiled program (retraced, as JAX does,
  for inputs of another shape or dtype).
- ``torch.compile(model_or_fn)`` returns the same, traced on first use.

A compiled function's program takes as inputs, besides its arguments, the parameters and
buffers of the modules it reads from its closure, its globals or its bound object
(`captured_modules`), as torch.compile lifts them: ``torch.compile(lambda x, y:
F.cross_entropy(model(x), y))`` compiles the loss with the model, gradients reach the
model's parameters, and every call sees their current values.

Autograd goes through compiled programs too: a call is one autograd node
(``CompiledFunctionBackward``, as in PyTorch) whose forward is a compiled program returning
the outputs and the residuals of their VJP (traced once, as a tape, with respect to the
inputs that need a gradient), and whose backward is a compiled program of that tape's
backward pass on the saved residuals: nothing is recomputed.
``.grad`` accumulation and hooks are the engine's, so they behave as in eager mode, and
the gradients are eager's (bit for bit where both run the same kernels on the same memory
layouts: the compiled program keeps ``weight.T`` as a view where eager mode copies it, and
a BLAS product may round differently in the last bit for the two layouts).

Traced code must not depend on values (Python ``if`` on a tensor raises funcgrad's
ConcretizationTypeError), draw random numbers (dropout in training mode) or modify its
buffers in place (BatchNorm's running statistics in training mode): the traced program
would replay the first call's draw or lose the update, so each raises an error saying so.
Under torch.compile, random draws compile instead (the generator's state is an input of
the program and its next state an output: `_compiled_random`), and the rest is a graph
break.
"""
from __future__ import annotations

import contextlib
import warnings
from typing import Any, Callable, Iterator

import funcgrad
from funcgrad import tree_util
from funcgrad.core import Tracer
from funcgrad.transforms.tape import trace_flat
from funcgrad.torch import func
from funcgrad.core import ConcretizationTypeError
from funcgrad.torch import _compile_state as dynamo
from funcgrad.torch._captured import (captured_modules, code_names, probe_tables, reachable,
                                      reparametrized, state_of)
from funcgrad.torch._compiled_step import StepProgram, is_training_step
from funcgrad.torch._step_replay import Probes
from funcgrad.torch._factories import get_rng_state, set_rng_state
from funcgrad.torch import _trace_rules as rules
from funcgrad.torch._compiled_random import GENERATOR, NeedsState, stream
from funcgrad.torch._compiled_call import avals_of, call_recorded
from funcgrad.torch._compiled_shapes import Shapes, run_forward
from funcgrad.torch._graph_split import SplitFunction, Unsplittable
from funcgrad.torch._tensor import Tensor
from funcgrad.torch._runtime import grad_mode
from funcgrad.torch.nn.module import Module
from funcgrad.torch._script import (Final, ScriptFunction, ScriptModule, annotate, export,
                                    ignore, is_scripting, script, unused)
from funcgrad.torch._script.errors import (FrontendError, NotSupportedError,
                                           UnsupportedNodeError)
from funcgrad.torch._script.freezing import freeze
from funcgrad.torch._script.saving import load, save

__all__ = ["trace", "compile", "TracedModule", "TracedFunction", "Graph", "is_tracing",
           "script", "ScriptFunction", "ScriptModule", "ignore", "unused", "export", "Final",
           "annotate", "is_scripting", "FrontendError", "NotSupportedError",
           "UnsupportedNodeError", "save", "load", "freeze"]

_tracing = [0]  # depth of traces in progress (torch.jit.is_tracing)


def is_tracing() -> bool:
    """Whether a `trace`/`compile` trace is running (as ``torch.jit.is_tracing``)."""
    return _tracing[0] > 0


class Graph:
    """A traced program's IR; prints as text (``print(traced.graph)``)."""

    def __init__(self, text: str):
        self.text = text

    def __str__(self) -> str:
        return self.text

    __repr__ = __str__


class _Program:
    """``fn`` (or ``module``'s forward) as a pure function of flat arrays, jitted: the
    forward program; for calls that need gradients, a forward program that also returns
    the residuals (the values the backward pass reads) and a backward program that takes
    them, made from one tape (`trace_flat`, `Tape.residuals`, `Tape.with_residuals`)."""

    def __init__(self, fn: Callable, module: Module | None, compiling: bool = False,
                 options: dynamo.Options = dynamo.Options()):
        self.fn, self.module = fn, module
        self.compiling, self.options = compiling, options  # (torch.compile's arguments)
        self.fullgraph = options.fullgraph
        self.shapes = Shapes(options.dynamic if compiling else False)
        self.traced = 0  # how many traces of the function ran
        self.ints = dynamo.Specialization(options.dynamic)
        self.breaks: list = []  # the graph breaks met, in order (`explain`)
        self.eager_keys: set = set()  # signatures that run eagerly (a graph break)
        self.variants: dict = {}  # the constants traced with -> the previous ones
        self.lifted: dict = {}  # name -> a tensor read from the closure, an input
        self.drawing: set = set()  # the (names, tree, modes) whose programs draw
        self.splits = True  # whether a graph break splits it (not a segment's own)
        self.split: SplitFunction | bool | None = None  # (None: not tried yet)
        self._calls_checked = False
        self.out_trees: dict = {}
        self.tapes: dict = {}  # (static, wanted, avals) -> the tape the residuals are of
        self.forward = funcgrad.jit(self._pure, static_argnums=(0, 1, 2))
        self._step: StepProgram | bool | None = None  # False: not a training step
        self._found: tuple | None = None  # the last call's state, with its guard
        self._trees: dict = {}  # input tree -> the first equal one
        self._tensor_trees: dict = {}  # n -> the tree of n tensor arguments
        self.forward_saving = funcgrad.jit(self._forward_saving, static_argnums=(0, 1, 2, 3))
        self.backward = funcgrad.jit(self._backward, static_argnums=(0, 1, 2, 3, 4))
        if compiling:
            dynamo.register(self)

    def reset(self) -> None:
        """Forget every program, guard and graph break (``torch._dynamo.reset()``)."""
        splits = self.splits
        self.__init__(self.fn, self.module, self.compiling, self.options)
        self.splits = splits

    # static: parameter/buffer names, the inputs' tree, the modules' training flags
    def _pure(self, names: tuple, in_tree: Any, modes: tuple, *leaves: Any) -> list:
        """The function on the state's and inputs' arrays, returning its outputs' arrays.
        Under torch.compile, a program that draws random numbers has the generator's
        state among its state (`GENERATOR`) and returns its next state after its outputs
        (`_compiled_random`); in one that does not, a draw raises `NeedsState`."""
        arrays = dict(zip(names, leaves[:len(names)]))
        generator = arrays.pop(GENERATOR, None)
        state = func.from_array(arrays)
        inputs = in_tree.unflatten(func.from_array(list(leaves[len(names):])))
        rng = get_rng_state()
        versions = {n: t._version for n, t in state.items()}
        python = dynamo.PythonState(self._roots(inputs)) if self.compiling else None
        _tracing[0] += 1
        self.traced += 1
        try:
            with reparametrized(self.modules(), state), rules.lifted(self.lifted, state), \
                    stream(self.compiling, generator) as drawn:
                out = self.target()(*inputs[0], **inputs[1])
        except (dynamo.GraphBreak, NeedsState):
            rules.undo(python, rng)
            raise
        except (ConcretizationTypeError, TypeError) as e:
            if python is None or not rules.untraceable(e):
                raise
            rules.undo(python, rng)
            raise dynamo.GraphBreak("the program depends on a tensor's value (a Python if or "
                                    "loop on it, .item(), bool(), int()): "
                                    f"{str(e).splitlines()[0]}",
                                    dynamo.where_in_user_code(e)) from None
        finally:
            _tracing[0] -= 1
        if python is not None:
            changed = python.changes()
            if changed:
                rules.undo(python, rng)
                raise dynamo.GraphBreak(f"a Python side effect: it changes {changed[0]}")
        rules.check_pure(self, rng, state, versions)
        if generator is not None:  # (the next state: an output, after the function's)
            out = (out, func.from_array(drawn.state))
        out_leaves, out_tree = tree_util.tree_flatten(out)
        self.out_trees[(names, in_tree, modes)] = out_tree
        if not all(isinstance(o, Tensor) for o in out_leaves):
            if python is not None:  # (torch.compile: what is not a tensor runs eagerly)
                rules.undo(python, rng)
                raise dynamo.GraphBreak(f"it returns {out_tree} with non-tensor leaves")
            raise TypeError(f"{self.name()} returned {out_tree} with non-tensor leaves; a "
                            "traced function returns tensors (or tuples, lists, dicts of "
                            "them)")
        return func.to_array(out_leaves)

    def _forward_saving(self, names: tuple, in_tree: Any, modes: tuple, wanted: tuple,
                        *leaves: Any) -> list:
        """The outputs, then the residuals of their VJP in the ``wanted`` leaves (the
        tape itself is kept, by signature, for `_backward`)."""
        def of_wanted(*xs: Any) -> list:
            full = list(leaves)
            for i, x in zip(wanted, xs):
                full[i] = x
            return self._pure(names, in_tree, modes, *full)
        tape, outs = trace_flat(of_wanted, [leaves[i] for i in wanted])
        self.tapes[(names, in_tree, modes, wanted, avals_of(leaves))] = tape
        return list(outs) + [r.value for r in tape.residuals() if _traced(r)]

    def _backward(self, names: tuple, in_tree: Any, modes: tuple, wanted: tuple,
                  avals: tuple, *residuals_and_cts: Any) -> list:
        """The ``wanted`` leaves' cotangents from the residuals `_forward_saving`
        returned and the outputs' cotangents (the last ``n_out`` arguments)."""
        tape = self.tapes[(names, in_tree, modes, wanted, avals)]
        n_res = sum(1 for r in tape.residuals() if _traced(r))
        values = iter(residuals_and_cts[:n_res])
        with_values = tape.with_residuals(lambda r: next(values) if _traced(r) else r.value)
        return with_values.backward(list(residuals_and_cts[n_res:]))

    def target(self) -> Callable:
        """What the program runs: the module, or the function."""
        return self.module if self.module is not None else self.fn

    def _roots(self, inputs: Any) -> dict:
        """What a trace may change besides tensors' values: what the function reads, the
        compiled module, the call's containers."""
        roots = {} if self.module is None else {"self": self.module}
        if self.fn is not None:
            roots.update(reachable(self.fn))
        roots["args"] = inputs
        return roots

    def modules(self) -> dict:
        """The modules whose parameters and buffers are inputs of the program, by name
        prefix: the compiled module, or those a compiled function uses."""
        if self.module is not None:
            return {"": self.module}
        return captured_modules(self.fn, tensors={} if self.compiling else None)

    @property
    def step(self) -> StepProgram | None:
        """The program of a function that trains (calls backward, reads an optimizer),
        compiled as one step; None for a module or a function that does not train.
        Decided on the first call (an optimizer may be made after ``torch.compile``)."""
        if self._step is None:
            self._step = StepProgram(self.fn, self._step_state) if (
                self.module is None and is_training_step(self.fn, reachable(self.fn))
            ) else False
        return self._step or None

    def _step_state(self, probes: Any = None) -> tuple[dict, dict, list]:
        """What a training step reads: (modules and tensors read directly, by name; the
        optimizers), the reads probed into ``probes`` if given."""
        tensors: dict = {}
        optimizers: list = []
        modules = captured_modules(self.fn, tensors, optimizers=optimizers, probes=probes)
        return modules, tensors, optimizers

    def name(self) -> str:
        target = self.module if self.module is not None else self.fn
        return getattr(target, "__name__", type(target).__name__)

    def signature(self, args: tuple, kwargs: dict) -> tuple:
        """(names, input tree, training flags, state tensors, input leaves, the state's
        `Recorded` calls) of a call. The state is found again only when the guard of the
        last search (`Probes`: the modules' tables, what a function reads) sees a change;
        the input tree is the first equal one, so that the programs' caches compare it
        by identity."""
        found = self._found
        if found is None or not found[0]():
            found = self._found = self._search()
        in_tree = None
        if not kwargs and all([type(a) is Tensor for a in args]):  # tensors: no flattening
            in_tree = self._tensor_trees.get(len(args))
        if in_tree is None:
            leaves, in_tree = self._tree_of(args, kwargs)
            if not kwargs and len(leaves) == len(args) and all(
                    [type(a) is Tensor and a is x for a, x in zip(args, leaves)]):
                self._tensor_trees[len(args)] = in_tree
        else:
            leaves = list(args)
        return found[1], in_tree, found[2], found[3], leaves, found[4]

    def _search(self) -> tuple:
        """(guard, names, training flags and constants, state tensors, known calls): the
        state a call runs with, found again when the guard sees a change. Under
        torch.compile, tensors read from the closure are inputs too (lifted, so that
        gradients reach them and their current values are read), and the Python
        constants read (closure, globals, module attributes) are part of the signature:
        the program is traced anew when one changes."""
        probes = Probes()
        constants: list | None = [] if self.compiling else None
        lifted: dict = {}
        modules = ({"": self.module} if self.module is not None else captured_modules(
            self.fn, probes=probes, constants=constants,
            tensors=lifted if self.compiling else None))
        state, modes = state_of(modules)
        for module in modules.values():
            for m in module.modules():
                probe_tables(m, probes, names=True)
                if constants is not None:
                    rules.probe_attributes(m, probes, constants)
        self.lifted = {f"<read> {name}": t for name, t in lifted.items()
                       if all(t is not u for u in state.values())}
        state.update(self.lifted)
        if constants is not None:
            modes = (modes, tuple(constants))
        return probes.guard(), tuple(state), modes, list(state.values()), {}

    def _tree_of(self, args: tuple, kwargs: dict) -> tuple:
        """(leaves, tree) of a call's inputs, the tree the first equal one. Under
        torch.compile, Python ints, bools and strings are part of the tree (a program per
        value, as PyTorch specializes them: a size or a trip count the trace can use)
        until an int changes (`_compile_state.Specialization`)."""
        leaves, in_tree = tree_util.tree_flatten((args, kwargs))
        if self.compiling:
            in_tree, leaves = self.ints.split(in_tree, leaves)
        return leaves, self._trees.setdefault(in_tree, in_tree)

    def __call__(self, args: tuple, kwargs: dict) -> Any:
        step = self.step
        if step is not None:
            return step(args, kwargs)
        names, in_tree, modes, state, leaves, known = self.signature(args, kwargs)
        if not self.compiling:
            return self._compiled(names, in_tree, modes, state, leaves, known)
        key = (names, in_tree, modes)
        if key in self.eager_keys:
            return self._split_call(args, kwargs)
        if not self._within_limit(modes):
            return self.target()(*args, **kwargs)
        try:
            if not self._calls_checked:
                self._check_calls()
                self._calls_checked = True
            rules.check_arguments(leaves)
            return self._compiled(names, in_tree, modes, state, leaves, known)
        except dynamo.GraphBreak as brk:
            if self.ints.pin(in_tree):  # (an int input used as a size: static again)
                return self(args, kwargs)
            self.breaks.append(brk)
            if self.fullgraph:
                raise dynamo.Unsupported(f"{self.name()}: graph break with fullgraph=True: "
                                         f"{brk}") from None
            self.eager_keys.add(key)
            return self._split_call(args, kwargs)

    def _split_call(self, args: tuple, kwargs: dict) -> Any:
        """A call that cannot be one program: compiled segments with eager Python between
        them (`_graph_split`), or where the function cannot be split, eagerly."""
        if self.split is None:
            self.split = False
            if self.splits:
                try:
                    self.split = SplitFunction(
                        self.fn if self.module is None else type(self.module).forward,
                        _segment, self.module)
                except Unsplittable:
                    pass
        if not self.split:
            return self.target()(*args, **kwargs)
        if self.module is None:
            return self.split(*args, **kwargs)
        with _forward_replaced(self.module, self.split.fn):  # (its hooks run as eager's)
            return self.module(*args, **kwargs)

    def _check_calls(self) -> None:
        """A graph break for a call of print, open, input... in the function's own code
        (run once by a trace, where eager mode runs it every call)."""
        target = self.target()
        code = getattr(self.fn, "__code__", None) or getattr(
            getattr(type(target), "forward", None), "__code__", None)
        called = code_names(code) & dynamo.SIDE_EFFECT_CALLS if code is not None else ()
        if called:
            raise dynamo.GraphBreak(f"a Python side effect: it calls {sorted(called)[0]}()",
                                    f"{code.co_filename}:{code.co_firstlineno}")

    def _within_limit(self, modes: tuple) -> bool:
        """Whether a program may be traced for these constants: up to
        ``torch._dynamo.config.recompile_limit`` per function, then (with PyTorch's
        warning, naming the constant that changed) new ones run eagerly."""
        if modes in self.variants:
            return True
        if len(self.variants) < dynamo.config.recompile_limit:
            self.variants[modes] = True
            return True
        if self.variants.get("warned") is None:
            self.variants["warned"] = False
            warnings.warn(rules.limit_message(self, modes), UserWarning, stacklevel=4)
        return False

    def _compiled(self, names: tuple, in_tree: Any, modes: tuple, state: list,
                  leaves: list, known: dict) -> Any:
        """The program's result; where it draws random numbers (under torch.compile), the
        generator's state goes in and its next state is set."""
        draws = bool(self.drawing) and (names, in_tree, modes) in self.drawing  # (no hash
        # of the key per call where nothing draws)
        if draws:  # (an array: no input the node saves)
            names, state = names + (GENERATOR,), state + [func.to_array(get_rng_state())]
        key = (names, in_tree, modes)
        tensors = state + leaves
        wanted = tuple([i for i, t in enumerate(tensors)
                        if isinstance(t, Tensor) and t.requires_grad]
                       ) if grad_mode.state.enabled else ()
        traced = self.traced
        try:
            if wanted:
                result = call_recorded(self, key, tensors, wanted, known)
            else:
                outs = func.from_array(run_forward(self, key, func.to_array(tensors), range(
                    len(state), len(tensors)), leaves))
                result = self.out_trees[key].unflatten(outs)
        except NeedsState:  # (the first trace that draws: from now on with the state)
            self.drawing.add((names, in_tree, modes))
            return self._compiled(names, in_tree, modes, state, leaves, known)
        if self.traced != traced:
            dynamo.report(self.options, lambda: self.lowered_quietly(
                key, func.to_array(tensors)), leaves)
        if not draws:
            return result
        set_rng_state(result[1])
        return result[0]

    def lowered_quietly(self, key: tuple, arrays: list) -> Any:
        """The forward program of ``key`` lowered for ``arrays`` (meta or not), a trace
        not counted among the function's (a guard's check, a backend's graph)."""
        traced = self.traced
        try:
            return self.forward.lower(*key, *arrays)
        finally:
            self.traced = traced

    def lowered(self, args: tuple, kwargs: dict) -> Any:
        if self.step is not None:
            return self.step.lowered(args, kwargs)
        names, in_tree, modes, state, leaves, _ = self.signature(args, kwargs)
        if (names, in_tree, modes) in self.drawing:
            names, state = names + (GENERATOR,), state + [get_rng_state()]
        return self.forward.lower(names, in_tree, modes, *func.to_array(state + leaves))


def _traced(residual: Any) -> bool:
    """Whether a residual depends on the inputs (a traced value: an output of the saving
    forward program), rather than a constant the tape keeps."""
    return isinstance(residual.value, Tracer)


class _Compiled:
    """Shared by the traced and compiled callables: the program, and the IR of a call."""

    def _setup(self, target: Any, compiling: bool = False,
               options: dynamo.Options = dynamo.Options()) -> None:
        module = target if isinstance(target, Module) else None
        self._program = _Program(target if module is None else None, module, compiling,
                                 options)
        self._example: tuple | None = None

    @property
    def graph_breaks(self) -> list:
        """The graph breaks its calls met (`funcgrad.torch._compile_state.GraphBreak`)."""
        return list(self._program.breaks)

    def explained(self, *args: Any, **kwargs: Any) -> tuple[list, list]:
        """(the IR of each graph, the graph breaks) of the calls so far, the last one's
        inputs ``args`` (`torch._dynamo.explain`): one graph, or none and its break; for
        a split function, the graphs of the segments that ran compiled and the breaks
        its calls reached (eager statements, segments that broke)."""
        split = self._program.split
        if not split:
            breaks = self.graph_breaks
            return ([] if breaks else [self.graph_for(*args, **kwargs)]), breaks
        ran = [s for s in split.segments if s._example is not None]
        breaks = [split.reasons[i] for i in sorted(split.reached)]
        return ([s.graph for s in ran if not s.graph_breaks],
                breaks + [b for s in ran for b in s.graph_breaks])

    def program_for(self, *args: Any, **kwargs: Any) -> tuple:
        """(the traced program's tape, the names of its state inputs, their tensors) for
        these inputs: the state (parameters, buffers) comes first among the tape's
        inputs, then the inputs' tensors (for exporters: `funcgrad.torch.onnx`)."""
        names, _, _, state, _, _ = self._program.signature(args, kwargs)
        return self._program.lowered(args, kwargs).tape, names, state

    def graph_for(self, *args: Any, **kwargs: Any) -> Graph:
        """The IR of the program these inputs run (TorchScript's ``graph_for``)."""
        return Graph(self._program.lowered(args, kwargs).as_text())

    def code_for(self, *args: Any, **kwargs: Any) -> str:
        """The generated Python program these inputs run."""
        return self._program.lowered(args, kwargs).compile().as_text()

    @property
    def graph(self) -> Graph:
        """The IR of the example inputs' program."""
        return self.graph_for(*self._examples()[0], **self._examples()[1])

    @property
    def code(self) -> str:
        """The generated Python source of the example inputs' program."""
        return self.code_for(*self._examples()[0], **self._examples()[1])

    def _examples(self) -> tuple:
        if self._example is None:
            raise RuntimeError("no inputs to show the program for yet: call it once (or "
                               "use graph_for(*inputs) / code_for(*inputs))")
        return self._example

    def _run(self, args: tuple, kwargs: dict) -> Any:
        if self._example is None:
            self._example = (args, kwargs)
        return self._program(args, kwargs)


class TracedModule(Module, _Compiled):
    """A module run through compiled programs; its parameters are the original module's
    (``_orig_mod``), so optimizers, ``state_dict`` and ``.grad`` work on them."""

    def __init__(self, module: Module, compiling: bool = False,
                 options: dynamo.Options = dynamo.Options()):
        super().__init__()
        self._orig_mod = module
        self._setup(module, compiling, options)

    def forward(self, *args: Any, **kwargs: Any) -> Any:
        return self._run(args, kwargs)


class TracedFunction(_Compiled):
    """A function of tensors run through compiled programs."""

    def __init__(self, fn: Callable, compiling: bool = False,
                 options: dynamo.Options = dynamo.Options()):
        self.__wrapped__ = fn
        self.__name__ = getattr(fn, "__name__", type(fn).__name__)
        self._setup(fn, compiling, options)

    def __call__(self, *args: Any, **kwargs: Any) -> Any:
        return self._run(args, kwargs)

    def __repr__(self) -> str:
        return f"<traced function {self.__name__}>"


@contextlib.contextmanager
def _forward_replaced(module: Module, forward: Callable) -> Iterator[None]:
    """Within the block, ``module(...)`` runs ``forward`` (its split forward method)."""
    vars(module)["forward"] = forward.__get__(module)
    try:
        yield
    finally:
        del vars(module)["forward"]


def _segment(fn: Callable) -> "TracedFunction":
    """A segment of a split function, compiled (not split again at its own breaks)."""
    compiled = TracedFunction(fn, compiling=True)
    compiled._program.splits = False
    return compiled


def _wrap(target: Any, compiling: bool = False,
          options: dynamo.Options = dynamo.Options()) -> Any:
    if isinstance(target, Module):
        return TracedModule(target, compiling, options)
    if not callable(target):
        raise TypeError(f"expected a Module or a callable, got {type(target).__name__}")
    return TracedFunction(target, compiling, options)


def trace(func: Any, example_inputs: Any = None, *, example_kwarg_inputs: dict | None = None,
          check_trace: bool = True, strict: bool = True) -> Any:
    """Trace ``func`` (a Module or a function of tensors) on ``example_inputs`` (a tensor
    or a tuple of them) and return it compiled, with ``.graph`` and ``.code``."""
    if example_inputs is None and example_kwarg_inputs is None:
        raise RuntimeError("example_kwarg_inputs or example_inputs must be provided")
    args = example_inputs if isinstance(example_inputs, tuple) else (
        () if example_inputs is None else (example_inputs,))
    traced = _wrap(func)
    traced._run(args, dict(example_kwarg_inputs or {}))
    return traced


def compile(model: Any = None, *, fullgraph: bool = False, dynamic: Any = None,
            backend: Any = "inductor", mode: Any = None, options: dict | None = None,
            disable: bool = False) -> Any:
    """``torch.compile``: ``model`` (a Module or a function) run through funcgrad's
    compiled programs, traced on first use (and per new input shape/dtype). Usable as a
    decorator, with or without arguments. ``disable=True`` returns ``model`` itself."""
    if model is None:
        return lambda m: compile(m, fullgraph=fullgraph, dynamic=dynamic, backend=backend,
                                 mode=mode, options=options, disable=disable)
    if disable:
        return model
    if dynamic not in (None, True, False):
        raise ValueError(f"dynamic must be None, True or False, got {dynamic!r}")
    return _wrap(model, compiling=True, options=dynamo.Options(fullgraph, dynamic, backend))
