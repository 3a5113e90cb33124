"""``funcgrad.autograph(f)``: Python control flow on traced values staged as ``lax``
control flow, so ``jit(autograph(f))`` runs code plain ``jit`` refuses with
ConcretizationTypeError.

A source-to-source rewrite (as TensorFlow's autograph): ``f``'s source is parsed and each
``if``, ``for i in range(...)`` and ``while`` becomes nested functions of the variables
the statement assigns, passed to a runtime helper (`_Runtime`) that runs them as Python
when the condition or bounds are concrete and as ``lax.cond`` / ``fori_loop`` /
``while_loop`` when they are traced. An ``if`` whose branches both end in ``return``
becomes a ``cond`` returning the value; other uses of ``return``/``break``/``continue``
keep the statement in Python and raise, naming the line, if its condition is traced.
"""
from __future__ import annotations

import ast
import functools
import inspect
import textwrap
import types
from typing import Any, Callable

import funcgrad.numpy as fnp
from funcgrad import lax
from funcgrad.transforms.control_flow import is_abstract
from funcgrad.transforms.vmap import is_batched

__all__ = ["autograph", "AutographError"]

_EXITS = (ast.Return, ast.Break, ast.Continue)
_SCOPES = (ast.FunctionDef, ast.AsyncFunctionDef, ast.Lambda, ast.ClassDef)


class AutographError(ValueError):
    """A construct that cannot be staged on a traced value (the message names the line)."""


class _Undefined:
    """A variable not yet assigned when a staged statement starts."""

    def __repr__(self) -> str:
        return "<undefined>"


def _traced(x: Any) -> bool:
    return is_abstract(x) or is_batched(x)


def _like(values: tuple, like: tuple | None = None) -> tuple:
    """A staged loop's carried values as arrays, of ``like``'s dtypes if given (a traced
    loop index must not promote them: the carry keeps its types)."""
    if like is None:
        return tuple(fnp.asarray(v) for v in values)
    return tuple(fnp.asarray(v, dtype=c.dtype) for v, c in zip(values, like))


class _Runtime:
    """What the rewritten code calls (bound to the name ``ag__``)."""

    UNDEF = _Undefined()

    @staticmethod
    def ld(thunk: Callable) -> Any:
        try:
            return thunk()
        except NameError:
            return _Runtime.UNDEF

    @staticmethod
    def concrete(value: Any, line: int, what: str) -> Any:
        if _traced(value):
            raise AutographError(f"line {line}: {what} cannot be staged on a traced value")
        return value

    @staticmethod
    def if_stmt(cond: Any, true_fn: Callable, false_fn: Callable, state: tuple,
                names: tuple, line: int) -> Any:
        if not _traced(cond):
            return true_fn(*state) if cond else false_fn(*state)

        def branch(fn: Callable, which: str) -> Callable:
            def run(*_: Any) -> Any:
                out = fn(*state)
                for name, v in zip(names, out if names else ()):
                    if v is _Runtime.UNDEF:
                        raise AutographError(f"line {line}: '{name}' is not assigned in the "
                                             f"{which} branch of an if on a traced value")
                return out
            return run
        try:
            return lax.cond(cond, branch(true_fn, "true"), branch(false_fn, "false"))
        except (TypeError, ValueError) as e:
            if isinstance(e, AutographError):
                raise
            raise AutographError(f"line {line}: the branches of an if on a traced value "
                                 f"give different structures: {e}") from e

    @staticmethod
    def for_range(args: tuple, body: Callable, state: tuple, line: int) -> tuple:
        lo, hi, step = (0, args[0], 1) if len(args) == 1 else (args + (1,))[:3]
        if not any(_traced(a) for a in (lo, hi, step)):
            for i in range(lo, hi, step):
                state = body(i, *state)
            return state
        _Runtime.concrete(step, line, "a range with a traced step")
        keep = [i for i, v in enumerate(state) if v is not _Runtime.UNDEF]
        trips = (hi - lo + step - (1 if step > 0 else -1)) // step

        def staged(k: Any, carried: tuple) -> tuple:
            full = list(state)
            for i, v in zip(keep, carried):
                full[i] = v
            out = body(lo + k * step, *full)
            return _like(tuple(out[i] for i in keep), carried)
        carried = lax.fori_loop(0, trips, staged, _like(tuple(state[i] for i in keep)))
        return _Runtime.merge(state, keep, carried)

    @staticmethod
    def while_stmt(cond: Callable, body: Callable, state: tuple, line: int) -> tuple:
        while True:
            c = cond(*state)
            if _traced(c):
                break
            if not c:
                return state
            state = body(*state)
        keep = [i for i, v in enumerate(state) if v is not _Runtime.UNDEF]

        def full(carried: tuple) -> list:
            out = list(state)
            for i, v in zip(keep, carried):
                out[i] = v
            return out
        carried = lax.while_loop(lambda s: cond(*full(s)),
                                 lambda s: _like(tuple(body(*full(s))[i] for i in keep), s),
                                 _like(tuple(state[i] for i in keep)))
        return _Runtime.merge(state, keep, carried)

    @staticmethod
    def merge(state: tuple, keep: list, carried: tuple) -> tuple:
        out = list(state)
        for i, v in zip(keep, carried):
            out[i] = v
        return tuple(out)


# -- the rewrite --------------------------------------------------------------------------------
def _walk_scope(nodes: list) -> Any:
    """The nodes of ``nodes`` not inside nested functions or classes."""
    stack = list(nodes)
    while stack:
        n = stack.pop()
        yield n
        if not isinstance(n, _SCOPES):
            stack.extend(ast.iter_child_nodes(n))


def _assigned(nodes: list) -> list:
    names = {n.id for n in _walk_scope(nodes) if isinstance(n, ast.Name) and isinstance(
        n.ctx, ast.Store) and not n.id.startswith("ag__")}
    return sorted(names)


def _exits(nodes: list, kinds: tuple = _EXITS) -> bool:
    """Whether ``nodes`` hold a return (or break/continue outside inner loops)."""
    for n in nodes:
        if isinstance(n, kinds):
            return True
        if isinstance(n, _SCOPES):
            continue
        inner = kinds if not isinstance(n, (ast.For, ast.While)) else (ast.Return,)
        if _exits(list(ast.iter_child_nodes(n)), inner):
            return True
    return False


def _fold_returns(body: list) -> list:
    """``if c: ...; return a`` followed by statements ending in ``return b`` made an
    if/else whose branches both return (which stages as one ``cond``)."""
    for i, s in enumerate(body):
        if isinstance(s, ast.If):
            s.body, s.orelse = _fold_returns(s.body), _fold_returns(s.orelse)
            rest = body[i + 1:]
            if not s.orelse and isinstance(s.body[-1], ast.Return) and rest and isinstance(
                    rest[-1], ast.Return):
                s.orelse = _fold_returns(rest)
                return body[:i + 1]
    return body


def _parse(code: str) -> list:
    return ast.parse(code).body


class _Rewriter(ast.NodeTransformer):
    def __init__(self) -> None:
        self.count = 0

    def fresh(self, kind: str) -> str:
        self.count += 1
        return f"ag__{kind}_{self.count}"

    def defn(self, name: str, params: list, body: list, ret: str | None) -> ast.FunctionDef:
        fn = _parse(f"def {name}({', '.join(params)}):\n    pass")[0]
        fn.body = list(body) or [ast.Pass()]
        if ret is not None:
            fn.body += _parse(f"return {ret}")
        return fn

    def visit_If(self, node: ast.If) -> Any:
        self.generic_visit(node)
        line = node.lineno
        both_return = node.orelse and isinstance(node.body[-1], ast.Return) and isinstance(
            node.orelse[-1], ast.Return) and not _exits(node.body[:-1] + node.orelse[:-1])
        if not both_return and _exits(node.body + node.orelse):
            return self.kept(node, "an if containing return, break or continue")
        names = _assigned(node.body + node.orelse)
        t, f = self.fresh("if_true"), self.fresh("if_false")
        state = "(" + "".join(f"ag__.ld(lambda: {n}), " for n in names) + ")"
        ret = None if both_return else "(" + "".join(f"{n}, " for n in names) + ")"
        call = f"ag__.if_stmt(ag__test, {t}, {f}, {state}, {tuple(names)!r}, {line})"
        tail = f"return {call}" if both_return else (
            f"({', '.join(names)},) = {call}" if names else call)
        out = [self.defn(t, names, node.body, ret), self.defn(f, names, node.orelse, ret)]
        out += self.with_test(_parse(tail), node.test)
        return self.located(out, node)

    def visit_For(self, node: ast.For) -> Any:
        self.generic_visit(node)
        it = node.iter
        if not (isinstance(it, ast.Call) and isinstance(it.func, ast.Name) and
                it.func.id == "range" and not it.keywords and isinstance(node.target, ast.Name)
                ) or node.orelse:
            return node
        if _exits(node.body):
            return self.kept(node, "a for loop containing break, continue or return")
        names = [n for n in _assigned(node.body) if n != node.target.id]
        body = self.fresh("for_body")
        state = "(" + "".join(f"ag__.ld(lambda: {n}), " for n in names) + ")"
        ret = "(" + "".join(f"{n}, " for n in names) + ")"
        call = f"ag__.for_range(ag__test, {body}, {state}, {node.lineno})"
        tail = f"({', '.join(names)},) = {call}" if names else call
        out = [self.defn(body, [node.target.id] + names, node.body, ret)]
        out += self.with_test(_parse(tail), ast.Tuple(elts=it.args, ctx=ast.Load()))
        return self.located(out, node)

    def visit_While(self, node: ast.While) -> Any:
        self.generic_visit(node)
        if node.orelse:
            return node
        if _exits(node.body):
            return self.kept(node, "a while loop containing break, continue or return")
        names = _assigned(node.body)
        cond, body = self.fresh("while_cond"), self.fresh("while_body")
        state = "(" + "".join(f"ag__.ld(lambda: {n}), " for n in names) + ")"
        ret = "(" + "".join(f"{n}, " for n in names) + ")"
        call = f"ag__.while_stmt({cond}, {body}, {state}, {node.lineno})"
        tail = f"({', '.join(names)},) = {call}" if names else call
        test_fn = self.defn(cond, names, [], None)
        test_fn.body = [ast.Return(value=node.test)]
        out = [test_fn, self.defn(body, names, node.body, ret)] + _parse(tail)
        return self.located(out, node)

    def kept(self, node: Any, what: str) -> Any:
        """A statement left to Python, its condition checked to be concrete."""
        field = "test" if not isinstance(node, ast.For) else "iter"
        check = _parse(f"ag__.concrete(ag__test, {node.lineno}, {what!r})")[0].value
        check.args[0] = getattr(node, field)
        setattr(node, field, check)
        return self.located([node], node)[0]

    def with_test(self, stmts: list, test: ast.expr) -> list:
        """``stmts`` with the placeholder ``ag__test`` replaced by ``test``."""
        class Fill(ast.NodeTransformer):
            def visit_Name(self, n: ast.Name) -> Any:
                return test if n.id == "ag__test" else n
        return [Fill().visit(s) for s in stmts]

    def located(self, stmts: list, at: ast.AST) -> list:
        for s in stmts:
            for n in ast.walk(s):
                if "lineno" in n._attributes and not hasattr(n, "lineno"):
                    n.lineno, n.col_offset = at.lineno, at.col_offset
                    n.end_lineno, n.end_col_offset = at.lineno, at.col_offset
                elif "lineno" in n._attributes and getattr(n, "lineno", None) is None:
                    n.lineno = at.lineno
        return stmts


def _convert(fn: types.FunctionType) -> types.FunctionType:
    source = textwrap.dedent(inspect.getsource(fn))
    tree = ast.parse(source)
    fdef = tree.body[0]
    fdef.decorator_list = []
    first = fn.__code__.co_firstlineno
    ast.increment_lineno(tree, first - 1)
    fdef.body = _fold_returns(fdef.body)
    rewriter = _Rewriter()
    fdef.body = [rewriter.visit(s) for s in fdef.body]
    fdef.body = [s for x in fdef.body for s in (x if isinstance(x, list) else [x])]
    free = fn.__code__.co_freevars
    factory = ast.parse(f"def ag__factory(ag__, {', '.join(free)}):\n    pass").body[0]
    factory.body = [fdef, ast.Return(value=ast.Name(id=fdef.name, ctx=ast.Load()))]
    module = ast.Module(body=[factory], type_ignores=[])
    ast.fix_missing_locations(module)
    code = compile(module, inspect.getsourcefile(fn) or "<autograph>", "exec")
    factory_code = next(c for c in code.co_consts if isinstance(c, types.CodeType))
    make = types.FunctionType(factory_code, fn.__globals__)
    cells = [c.cell_contents for c in (fn.__closure__ or ())]
    new = make(_Runtime, *cells)
    new.__defaults__, new.__kwdefaults__ = fn.__defaults__, fn.__kwdefaults__
    return functools.wraps(fn)(new)


def autograph(fn: Callable) -> Callable:
    """``fn`` with its ``if``/``for ... in range``/``while`` statements staged as
    ``lax.cond``/``fori_loop``/``while_loop`` when their conditions or bounds are
    traced (plain Python otherwise)."""
    if not isinstance(fn, types.FunctionType):
        raise TypeError(f"autograph expects a Python function, got {type(fn).__name__}")
    return _convert(fn)
