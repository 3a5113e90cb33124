"""Graph breaks as splits: a compiled function that cannot be one program runs as compiled
segments with eager Python between them, as Dynamo's graph breaks do.

Dynamo splits a function's bytecode at the instruction it cannot capture and resumes in a
new frame. Here the split is at the function's statements (its source, parsed): the body is
rewritten so that each run of plain assignments of local names becomes one call of a
segment function (its inputs: the locals it reads, its outputs: those it assigns), and
every other statement (an expression statement such as ``print(x)`` or ``log.append(x)``,
an assignment calling ``.item()``, an attribute or item store, ``if``/``while``/``for``
headers, whose bodies are split the same way) runs as written, in Python, on every call.
Each segment is compiled as any function is (`funcgrad.torch.jit`: guards, random draws,
autograd through a `CompiledFunctionBackward` node per segment), so a segment that turns
out not to be capturable (a side effect the statements hide, a value it branches on) is a
graph break of its own and runs eagerly: the split only decides how much is compiled,
never what happens. Results, gradients and side effects are eager's by construction.

The rewritten function reads the original's globals and closure cells (not copies), so
later rebinding is seen as without ``torch.compile``. Functions whose source cannot be read
or rewritten (a lambda, a generator, ``global``/``nonlocal`` declarations, private
``__names``) are not split:
`Unsplittable`, and the caller runs them eagerly.
"""
from __future__ import annotations

import ast
import copy
import inspect
import textwrap
import types
from typing import Any, Callable

from funcgrad.torch._compile_state import SIDE_EFFECT_CALLS, GraphBreak
from funcgrad.torch._tensor import Tensor

__all__ = ["SplitFunction", "Unsplittable"]

# methods whose call hands a value to Python or changes an object: a statement calling one
# is not put into a segment
_LEAVING = frozenset({"item", "tolist", "numpy", "backward", "append", "extend", "insert",
                      "pop", "remove", "clear", "update", "setdefault", "add", "discard",
                      "write"})
_CONVERSIONS = frozenset({"bool", "int", "float", "complex"})
_SIZES = frozenset({"shape", "ndim", "size", "dim", "numel"})  # (`_reads_sizes_only`)
_SIZE_CALLS = frozenset({"size", "dim", "numel"})
_SCOPES = (ast.FunctionDef, ast.AsyncFunctionDef, ast.Lambda, ast.ClassDef,
           ast.ListComp, ast.SetComp, ast.DictComp, ast.GeneratorExp)
_PREFIX = "__fg_"
_MAX_COPIED_IFS = 2  # ifs in the statements copied into both branches of an if, at most
_NOTHING = object()  # (`SplitFunction._reach` without a condition)


class Unsplittable(Exception):
    """A function that cannot be split at its statements (the reason)."""


class SplitFunction:
    """``fn`` rewritten as compiled segments and eager statements. ``compile_segment``
    compiles one segment function (``torch.compile``'s own wrapper); ``bound``: the
    object of a method (a module's ``forward``), bound into the segments that read
    ``self`` rather than passed to them. Calls run the rewritten function; `reached`
    (the indices of `reasons`) and each segment's ``graph_breaks`` say what a call met
    (`torch._dynamo.explain`)."""

    def __init__(self, fn: Callable, compile_segment: Callable, bound: Any = None):
        self.reasons: list[GraphBreak] = []  # why each eager statement is one
        self.reached: set = set()  # the eager statements a call ran
        self.segments: list = []  # the compiled segment functions, in order
        source, self._where = _source_of(fn)
        tree = ast.parse(source)
        ast.increment_lineno(tree, fn.__code__.co_firstlineno - 1)
        funcdef = tree.body[0]
        if not isinstance(funcdef, ast.FunctionDef):
            raise Unsplittable("not a def statement")
        _check_splittable(funcdef)
        self._locals = _locals_of(funcdef)
        self._self = "self" if bound is not None else None
        self._defs: list[ast.FunctionDef] = []
        funcdef.decorator_list = []
        funcdef.body = self._split(funcdef.body)
        self.fn = self._build(fn, funcdef, compile_segment, bound)

    def __call__(self, *args: Any, **kwargs: Any) -> Any:
        return self.fn(*args, **kwargs)

    def _reach(self, index: int, condition: Any = _NOTHING) -> Any:
        """Note that the eager statement ``index`` ran (an ``if``/``while``: only if its
        ``condition`` is a tensor's value); return ``condition``."""
        if condition is _NOTHING or isinstance(condition, Tensor):
            self.reached.add(index)
        return condition

    def _split(self, body: list) -> list:
        """``body`` with its runs of capturable statements replaced by segment calls and
        the bodies of compound statements split in turn. An ``if`` on a computed value
        is Dynamo's jump: its condition is computed at the end of the segment before it,
        and the statements after it go into each branch (they run after either, as
        they did), so that each branch and what follows it is one segment."""
        out: list = []
        run: list = []
        for i, stmt in enumerate(body):
            for s in _lowered(stmt):
                reason = _capture_refusal(s)
                if reason is None:
                    run.append(s)
                    continue
                if isinstance(s, ast.If) and _calls(s.test) and not _call_refusal(s.test):
                    run.append(self._condition(s))
                    if _continue_into_branches(s, body[i + 1:]):
                        return out + self._segment(run) + self._eager(s, reason)
                out += self._segment(run)
                run = []
                out += self._eager(s, reason)
        return out + self._segment(run)

    def _condition(self, stmt: ast.If) -> ast.stmt:
        """``stmt``'s condition as an assignment to a local of its own (read by
        ``stmt`` instead)."""
        name = f"{_PREFIX}condition{stmt.lineno}_{stmt.col_offset}"
        self._locals = self._locals | {name}
        assign = ast.copy_location(ast.Assign([ast.Name(name, ast.Store())], stmt.test), stmt)
        stmt.test = ast.copy_location(ast.Name(name, ast.Load()), stmt.test)
        return assign

    def _eager(self, stmt: ast.stmt, reason: str | None) -> list:
        """An eager statement, preceded by the mark of its graph break (if it is one)
        and with its inner bodies split."""
        for field in ("body", "orelse", "finalbody"):
            inner = getattr(stmt, field, None)
            if inner:
                setattr(stmt, field, self._split(inner))
        for handler in getattr(stmt, "handlers", ()):
            handler.body = self._split(handler.body)
        if not reason:
            return [stmt]
        self.reasons.append(GraphBreak(reason, f"{self._where}:{stmt.lineno}"))
        index = ast.Constant(len(self.reasons) - 1)
        reached = ast.Name(f"{_PREFIX}reached", ast.Load())
        if isinstance(stmt, (ast.If, ast.While)):  # a break only on a tensor's value
            stmt.test = ast.copy_location(ast.Call(reached, [index, stmt.test], []),
                                          stmt.test)
            return [stmt]
        return [ast.copy_location(ast.Expr(ast.Call(reached, [index], [])), stmt), stmt]

    def _segment(self, run: list) -> list:
        """The call of a new segment function made of the statements ``run``."""
        if not run:
            return []
        reads, writes = _names(run, self._locals)
        inputs = sorted(reads - {self._self})
        outputs = sorted(writes)
        name = f"{_PREFIX}segment{len(self._defs)}"
        params = ([self._self] if self._self in reads else []) + inputs
        ret = ast.Return(ast.Tuple([ast.Name(n, ast.Load()) for n in outputs], ast.Load()))
        seg = ast.FunctionDef(name, ast.arguments([], [ast.arg(p) for p in params], None, [],
                                                  [], None, []),
                              run + [ret], [], None, None)
        seg.type_params = []
        self._defs.append(ast.copy_location(seg, run[0]))
        call = ast.Call(ast.Name(name, ast.Load()), [ast.Name(n, ast.Load()) for n in inputs],
                        [])
        target = ast.Tuple([ast.Name(n, ast.Store()) for n in outputs], ast.Store())
        return [ast.copy_location(ast.Assign([target], call), run[0])]

    def _build(self, fn: Callable, funcdef: ast.FunctionDef, compile_segment: Callable,
               bound: Any) -> Callable:
        """The rewritten function and its compiled segments, on ``fn``'s globals and
        closure cells: compiled inside a factory whose parameters are ``fn``'s free
        variables, then each function made from its code with the original cells."""
        code = fn.__code__
        cells = dict(zip(code.co_freevars, fn.__closure__ or ()))
        factory = ast.FunctionDef(
            f"{_PREFIX}factory",
            ast.arguments([], [ast.arg(n) for n in (*code.co_freevars, f"{_PREFIX}reached")],
                          None, [], [], None, []),
            [*self._defs, funcdef, ast.Return(ast.Constant(None))], [], None, None)
        factory.type_params = []
        module = ast.fix_missing_locations(ast.Module([factory], []))
        compiled = compile(module, self._where, "exec")
        codes = {c.co_name: c for c in next(
            c for c in compiled.co_consts if isinstance(c, types.CodeType)).co_consts
            if isinstance(c, types.CodeType)}
        cells[f"{_PREFIX}reached"] = types.CellType(self._reach)
        for seg in self._defs:
            made = types.FunctionType(codes[seg.name], fn.__globals__, seg.name, None,
                                      _closure(codes[seg.name], cells))
            if seg.args.args and seg.args.args[0].arg == self._self:
                made = types.MethodType(made, bound)
            compiled_segment = compile_segment(made)
            self.segments.append(compiled_segment)
            cells[seg.name] = types.CellType(compiled_segment)
        new = types.FunctionType(codes[funcdef.name], fn.__globals__, fn.__name__,
                                 fn.__defaults__, _closure(codes[funcdef.name], cells))
        new.__kwdefaults__ = fn.__kwdefaults__
        return new


def _lowered(stmt: ast.stmt) -> list:
    """``return value`` as ``result = value`` (which a segment may compute) and
    ``return result``; any other statement as it is."""
    if not isinstance(stmt, ast.Return) or stmt.value is None:
        return [stmt]
    result = ast.Name(f"{_PREFIX}result", ast.Store())
    return [ast.copy_location(ast.Assign([result], stmt.value), stmt),
            ast.copy_location(ast.Return(ast.Name(f"{_PREFIX}result", ast.Load())), stmt)]


def _continue_into_branches(stmt: ast.If, rest: list) -> bool:
    """Append (copies of) the statements ``rest`` that follow ``stmt`` to both its
    branches (a branch that returns, breaks or continues never reaches them), unless
    they hold more than `_MAX_COPIED_IFS` ifs (each copy is split again: the code would
    grow exponentially); whether they were moved."""
    if sum(isinstance(n, ast.If) for s in rest for n in ast.walk(s)) > _MAX_COPIED_IFS:
        return False
    stmt.body = stmt.body + copy.deepcopy(rest)
    stmt.orelse = stmt.orelse + copy.deepcopy(rest)
    return True


def _calls(node: ast.AST) -> bool:
    return any(isinstance(n, ast.Call) for n in ast.walk(node))


def _source_of(fn: Callable) -> tuple[str, str]:
    """(the dedented source of ``fn``, its file)."""
    if not isinstance(fn, types.FunctionType) or fn.__name__ == "<lambda>":
        raise Unsplittable("not a def statement")
    try:
        return textwrap.dedent(inspect.getsource(fn)), fn.__code__.co_filename
    except (OSError, TypeError) as e:
        raise Unsplittable(f"its source cannot be read: {e}") from None


def _check_splittable(funcdef: ast.FunctionDef) -> None:
    """Refuse what a rewrite into segment functions would change: generators, and names
    declared global or nonlocal (a segment would bind them as its own locals)."""
    for node in _own_nodes(funcdef):
        if isinstance(node, (ast.Yield, ast.YieldFrom, ast.Await)):
            raise Unsplittable("a generator or coroutine")
        if isinstance(node, (ast.Global, ast.Nonlocal)):
            raise Unsplittable("it declares global or nonlocal names")
        name = node.attr if isinstance(node, ast.Attribute) else getattr(node, "id", "")
        if name.startswith("__") and not name.endswith("__"):
            raise Unsplittable("a private name (a class body mangles it; a rewrite would "
                               "not)")


def _own_nodes(funcdef: ast.FunctionDef) -> list:
    """The nodes of ``funcdef``'s body outside nested scopes."""
    out: list = []
    todo = list(funcdef.body)
    while todo:
        node = todo.pop()
        out.append(node)
        todo += [c for c in ast.iter_child_nodes(node) if not isinstance(c, _SCOPES)]
    return out


def _locals_of(funcdef: ast.FunctionDef) -> frozenset:
    """The function's local names: its parameters and the names its body binds."""
    a = funcdef.args
    names = {p.arg for p in (*a.posonlyargs, *a.args, *a.kwonlyargs)}
    names |= {p.arg for p in (a.vararg, a.kwarg) if p is not None}
    for node in _own_nodes(funcdef):
        if isinstance(node, ast.Name) and isinstance(node.ctx, (ast.Store, ast.Del)):
            names.add(node.id)
        elif isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
            names.add(node.name)
        elif isinstance(node, (ast.Import, ast.ImportFrom)):
            names |= {(al.asname or al.name).split(".")[0] for al in node.names}
    return frozenset(names | {f"{_PREFIX}result"})


def _capture_refusal(stmt: ast.stmt) -> str | None:
    """None if ``stmt`` may go into a segment (an assignment of local names computing
    tensors); else why it runs eagerly ("" where that is no graph break: sizes read, a
    nested def, pass, a return of the result, a loop over a Python range)."""
    if isinstance(stmt, (ast.Assign, ast.AugAssign, ast.AnnAssign)):
        targets = stmt.targets if isinstance(stmt, ast.Assign) else [stmt.target]
        if not all(_plain_target(t) for t in targets) or getattr(stmt, "value", 0) is None:
            return "a Python side effect: it stores into an object"
        return "" if _reads_sizes_only(stmt.value) else _call_refusal(stmt)
    if isinstance(stmt, (ast.If, ast.While)):
        return _call_refusal(stmt.test) or (
            f"a Python {'if' if isinstance(stmt, ast.If) else 'while'} (its condition may "
            "depend on a tensor's value)")
    if isinstance(stmt, ast.Expr):
        return _call_refusal(stmt) or "a Python side effect: an expression statement"
    if isinstance(stmt, (ast.For, ast.With, ast.Try, ast.FunctionDef, ast.ClassDef,
                         ast.Pass, ast.Return, ast.Break, ast.Continue, ast.Import,
                         ast.ImportFrom)):
        return ""
    return f"a Python statement ({type(stmt).__name__.lower()})"


def _reads_sizes_only(value: ast.expr) -> bool:
    """Whether ``value`` computes Python numbers from sizes (``b, t = x.shape``,
    ``n = x.size(0)``): run as written, it gives the segments after it their static
    sizes (a program's outputs are tensors)."""
    nodes = list(ast.walk(value))
    calls_ok = all(isinstance(c.func, ast.Attribute) and c.func.attr in _SIZE_CALLS or
                   isinstance(c.func, ast.Name) and c.func.id == "len"
                   for c in nodes if isinstance(c, ast.Call))
    return calls_ok and any(isinstance(n, ast.Attribute) and n.attr in _SIZES or
                            isinstance(n, ast.Call) for n in nodes)


def _plain_target(target: ast.expr) -> bool:
    if isinstance(target, (ast.Tuple, ast.List)):
        return all(_plain_target(t) for t in target.elts)
    return isinstance(target, ast.Name)


def _call_refusal(node: ast.AST) -> str | None:
    """Why a call inside ``node`` hands a value to Python or makes a side effect."""
    for sub in ast.walk(node):
        if not isinstance(sub, ast.Call):
            continue
        f = sub.func
        if isinstance(f, ast.Name) and f.id in SIDE_EFFECT_CALLS:
            return f"a Python side effect: it calls {f.id}()"
        if isinstance(f, ast.Name) and f.id in _CONVERSIONS:
            return f"the program depends on a tensor's value: {f.id}()"
        if isinstance(f, ast.Attribute) and f.attr in _LEAVING:
            return (f"the program depends on a tensor's value: Tensor.{f.attr}()"
                    if f.attr in ("item", "tolist", "numpy") else
                    f"a Python side effect: it calls .{f.attr}()")
    return None


def _names(run: list, local: frozenset) -> tuple[set, set]:
    """(local names ``run`` reads before binding them, local names it binds), in the
    statements' order (an assignment's value is read before its targets are bound)."""
    reads: set = set()
    writes: set = set()
    for stmt in run:
        loads = _loads(getattr(stmt, "value", None))
        if isinstance(stmt, ast.AugAssign) and isinstance(stmt.target, ast.Name):
            loads.add(stmt.target.id)
        reads |= (loads & local) - writes
        targets = stmt.targets if isinstance(stmt, ast.Assign) else [stmt.target]
        writes |= {n.id for t in targets for n in ast.walk(t) if isinstance(n, ast.Name)}
    return reads, writes


def _loads(value: ast.AST | None) -> set:
    """The names an expression reads from the function's scope (not the variables its
    comprehensions and lambdas bind)."""
    if value is None:
        return set()
    nodes = list(ast.walk(value))
    inner = {n.id for c in nodes if isinstance(c, ast.comprehension)
             for n in ast.walk(c.target) if isinstance(n, ast.Name)}
    inner |= {a.arg for f in nodes if isinstance(f, ast.Lambda)
              for a in (*f.args.posonlyargs, *f.args.args, *f.args.kwonlyargs)}
    return {n.id for n in nodes if isinstance(n, ast.Name) and isinstance(n.ctx, ast.Load)
            } - inner


def _closure(code: types.CodeType, cells: dict) -> tuple | None:
    """The cells of ``code``'s free variables, by name."""
    return tuple(cells[n] for n in code.co_freevars) or None
