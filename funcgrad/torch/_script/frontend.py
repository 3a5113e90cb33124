"""Statements of a scripted function, compiled to the IR in SSA form: assignment binds a
name to a value; ``if``/``elif``/``else`` becomes ``prim::If`` whose outputs are the
variables its branches assign (their types must agree, TorchScript's "Type mismatch"
otherwise); loops become ``prim::Loop`` carrying the variables their body reassigns;
``for`` over a tuple or an ``nn.ModuleList`` is unrolled. ``break``, ``continue`` and early
``return`` are TorchScript's exit transform: a flag set where they occur guards the rest of
the block (``prim::If``) and, for ``break``, makes the loop's condition false.
"""
from __future__ import annotations

import ast
import builtins
import contextlib
from typing import Any, Iterator

from funcgrad.torch._script import stypes as T
from funcgrad.torch._script.errors import (NotSupportedError, ScriptCompileError, Source,
                                           UnsupportedNodeError)
from funcgrad.torch._script.control import (ALWAYS as _ALWAYS, EXIT as _EXIT, MAYBE as _MAYBE,
                                            RET as _RET, RETURNED as _RETURNED, GO as _GO,
                                            ControlCompiler, _has, refinement as _refinement)
from funcgrad.torch._script.exprs import ExprCompiler, Undefined
from funcgrad.torch._script.ir import Block, Graph, Node, Value
from funcgrad.torch._script.ops import BINARY, INPLACE

__all__ = ["FunctionCompiler"]

class FunctionCompiler(ControlCompiler, ExprCompiler):
    """One function (or method: ``self_obj`` is the module) compiled into a `Graph`."""

    def __init__(self, fn: Any, ctx: Any, self_obj: Any = None, name: str = ""):
        self.fn, self.ctx, self.self_obj = fn, ctx, self_obj
        self.source = Source(fn)
        self.tree = self.source.parse()
        self.env: dict = {}
        self.objs: dict = {}
        self.loops = 0
        self.name = name or self.tree.name
        self._consts: dict = {}

    # -- the host interface of ExprCompiler ---------------------------------------------------
    def scope(self, name: str) -> tuple:
        """(found, value) of a name in the function's closure, globals or builtins."""
        code = getattr(self.fn, "__code__", None)
        if code is not None and name in code.co_freevars and self.fn.__closure__:
            cell = self.fn.__closure__[code.co_freevars.index(name)]
            return True, cell.cell_contents
        g = getattr(self.fn, "__globals__", {})
        if name in g:
            return True, g[name]
        return (True, getattr(builtins, name)) if hasattr(builtins, name) else (False, None)

    def emit(self, kind: str, inputs: list, out_types: list, e: ast.AST | None,
             attrs: dict | None = None, names: list | None = None) -> Node:
        node = Node(kind, inputs, out_types, attrs,
                    self.source.loc(e) if e is not None and hasattr(e, "lineno") else None,
                    names)
        self.current.nodes.append(node)
        return node

    def const(self, value: Any) -> Value:
        t = T.of_value(value, lambda v: False)
        if t is None:
            raise TypeError(f"no constant of type {type(value).__name__}")
        key = (t, repr(value))
        if key not in self._consts:
            node = Node("prim::Constant", [], [t], {"value": value})
            self.graph.block.nodes.insert(len(self._consts), node)
            self._consts[key] = node.output
        return self._consts[key]

    def const_function(self, graph: Graph) -> Value:
        key = ("fn", graph.qualname)
        if key not in self._consts:
            node = Node("prim::Constant", [], [T.FunctionType("Function")],
                        {"name": graph.qualname})
            self.graph.block.nodes.insert(len(self._consts), node)
            self._consts[key] = node.output
        return self._consts[key]

    def new_block(self, node: Node, params: list | None = None) -> Block:
        b = Block(params)
        node.blocks.append(b)
        return b

    @contextlib.contextmanager
    def in_block(self, block: Block) -> Iterator[None]:
        saved = self.current
        self.current = block
        try:
            yield
        finally:
            self.current = saved

    # -- the function ------------------------------------------------------------------------
    def compile(self) -> Graph:
        args = self.tree.args
        if args.vararg or args.kwarg or args.kwonlyargs:
            bad = args.vararg or args.kwarg or args.kwonlyargs[0]
            raise NotSupportedError(self.source, bad, "Compiled functions can't take variable "
                                    "number of arguments or use keyword-only arguments with "
                                    "defaults", width=len(bad.arg) + 1 + (bad is not (
                                        args.kwonlyargs[:1] or [None])[0]))
        params = []
        for i, a in enumerate(args.args):
            if i == 0 and self.self_obj is not None:
                t: T.Type = self.ctx.class_type(self.self_obj)
            else:
                try:
                    t = T.from_annotation(a.annotation, self.scope) or T.TENSOR
                except ValueError as ex:
                    raise ScriptCompileError(self.source, a, str(ex)) from None
            params.append(Value(t, a.arg))
        self.graph = Graph(self.name, params, self.ctx.qualname(self.fn, self.self_obj))
        defaults = args.defaults
        for a, d in zip(args.args[len(args.args) - len(defaults):], defaults):
            self.graph.defaults[a.arg] = ast.literal_eval(d)
        self.current = self.graph.block
        for p in params:
            self.env[p.base] = p
            if isinstance(p.type, T.ClassType):
                self.objs[p.id] = self.self_obj
        try:
            self.declared = T.from_annotation(self.tree.returns, self.scope)
        except ValueError as ex:
            raise ScriptCompileError(self.source, self.tree.returns, str(ex)) from None
        body = self.tree.body
        if _has(body[:-1], (ast.Return,)) or _has(body[-1:], (ast.If, ast.For, ast.While)) \
                and _has(body[-1:], (ast.Return,)):
            self.env[_RETURNED] = self.const(False)
        exits = self.stmts(body)
        ret = self.env.get(_RET)
        if ret is None or exits != _ALWAYS and not isinstance(ret, Value):
            ret = self.const(None) if ret is None else ret
        if isinstance(ret, Undefined):
            ret = self.const(None)
        self.graph.return_type = self.declared or ret.type
        self.graph.block.returns = [ret]
        return self.graph

    # -- statements -----------------------------------------------------------------------------
    def stmts(self, body: list) -> str | None:
        """Compile statements; returns whether they exit (return/break/continue) always,
        maybe, or never (None). After a statement that may exit, the rest is guarded."""
        for i, s in enumerate(body):
            method = getattr(self, "s_" + type(s).__name__, None)
            if method is None:
                raise UnsupportedNodeError(self.source, s)
            exits = method(s)
            if exits == _ALWAYS:
                return _ALWAYS
            if exits == _MAYBE and body[i + 1:]:
                flag = self.env[_EXIT if self.loops else _RETURNED]
                node = self.emit("aten::__not__", [flag], [T.BOOL], s)
                self.branches(node.output, body[i + 1:], [], s)
                return _MAYBE
            if exits == _MAYBE:
                return _MAYBE
        return None

    def s_Expr(self, s: ast.Expr) -> None:
        if not isinstance(s.value, ast.Constant):  # (a docstring is skipped)
            self.expr(s.value)

    def s_Pass(self, s: ast.Pass) -> None:
        return None

    def s_Assign(self, s: ast.Assign) -> None:
        v = self.value(s.value) if not isinstance(s.value, ast.Tuple) or not all(
            isinstance(t, ast.Tuple) for t in s.targets) else None
        for target in s.targets:
            if v is None:  # a, b = x, y: element by element
                if len(target.elts) != len(s.value.elts):
                    raise ScriptCompileError(self.source, s, "too many values to unpack")
                vals = [self.value(x) for x in s.value.elts]
                for t_e, val in zip(target.elts, vals):
                    self.assign(t_e, val, s)
            else:
                self.assign(target, v, s)

    def assign(self, target: ast.expr, v: Value, s: ast.AST, declared: T.Type | None = None
               ) -> None:
        if isinstance(target, ast.Name):
            old = self.env.get(target.id)
            if isinstance(old, Value) and declared is None and old.type != v.type and \
                    not T.accepts(old.type, v.type) and target.id in self.typed:
                raise ScriptCompileError(self.source, s, f"Variable '{target.id}' previously "
                                         f"had type {old.type} but is now being assigned to a "
                                         f"value of type {v.type}")
            if v.base == "" and not v.type == T.FunctionType("Function"):
                v.base = target.id
            self.env[target.id] = v
        elif isinstance(target, (ast.Tuple, ast.List)):
            if not isinstance(v.type, (T.TupleType, T.ListType)):
                raise ScriptCompileError(self.source, s, f"cannot unpack a value of type "
                                         f"{v.type}")
            n = len(target.elts)
            types = v.type.elems if isinstance(v.type, T.TupleType) else (v.type.elem,) * n
            if len(types) != n:
                raise ScriptCompileError(self.source, s, f"too many values to unpack: need "
                                         f"{n} values but found {len(types)}")
            kind = "prim::TupleUnpack" if isinstance(v.type, T.TupleType) else \
                "prim::ListUnpack"
            node = self.emit(kind, [v], list(types), s)
            for t_e, out in zip(target.elts, node.outputs):
                self.assign(t_e, out, s)
        elif isinstance(target, ast.Subscript):
            base = self.value(target.value)
            kind = "aten::_set_item" if base.type != T.TENSOR else "aten::_index_put"
            idx = self.value(target.slice) if not isinstance(target.slice, (ast.Slice,
                                                                            ast.Tuple)) else \
                None
            if idx is None:
                raise NotSupportedError(self.source, target, "slice assignment is not "
                                        "supported")
            self.emit(kind, [base, idx, v], [], s)
        else:
            raise UnsupportedNodeError(self.source, target)

    @property
    def typed(self) -> set:
        return getattr(self, "_typed", set())

    def s_AnnAssign(self, s: ast.AnnAssign) -> None:
        try:
            t = T.from_annotation(s.annotation, self.scope)
        except ValueError as ex:
            raise ScriptCompileError(self.source, s.annotation, str(ex)) from None
        v = self.value(s.value)
        if isinstance(s.value, (ast.List, ast.Dict)) and not (
                getattr(s.value, "elts", None) or getattr(s.value, "keys", None)):
            v.type = t  # an empty literal takes the declared type
        if not T.accepts(t, v.type):
            raise ScriptCompileError(self.source, s, f"Variable '{ast.unparse(s.target)}' is "
                                     f"annotated with type {t} but is being assigned to a "
                                     f"value of type {v.type}")
        self._typed = self.typed | {getattr(s.target, "id", "")}
        self.assign(s.target, v, s, declared=t)

    def s_AugAssign(self, s: ast.AugAssign) -> None:
        cur = self.value(s.target)
        rhs = self.value(s.value)
        op = type(s.op)
        if cur.type == T.TENSOR and op in INPLACE:
            self.emit(f"aten::{INPLACE[op]}", [cur, rhs], [T.TENSOR], s)
            return
        self.assign(s.target, self.binary(BINARY[op], cur, rhs, s), s)

    def s_Assert(self, s: ast.Assert) -> None:
        cond = self.as_bool(self.value(s.test), s.test)
        node = self.emit("prim::If", [cond], [], s)
        self.new_block(node)
        fail = self.new_block(node)
        msg = s.msg.value if isinstance(s.msg, ast.Constant) else "AssertionError: "
        with self.in_block(fail):
            self.emit("prim::RaiseException", [], [], s, {"value": f"AssertionError: {msg}"})

    def s_Raise(self, s: ast.Raise) -> str:
        exc = s.exc
        msg = ""
        if isinstance(exc, ast.Call) and exc.args and isinstance(exc.args[0], ast.Constant):
            msg = str(exc.args[0].value)
        name = ast.unparse(exc.func if isinstance(exc, ast.Call) else exc) if exc else ""
        self.emit("prim::RaiseException", [], [], s, {"value": msg, "exc": name})
        return _ALWAYS

    def s_Return(self, s: ast.Return) -> str:
        v = self.value(s.value) if s.value is not None else self.const(None)
        prev = self.env.get(_RET)
        want = self.declared or (prev.type if isinstance(prev, Value) else None)
        if self.declared is not None and not T.accepts(self.declared, v.type):
            raise ScriptCompileError(self.source, s, f"Return value was annotated as having "
                                     f"type {self.declared} but is actually of type {v.type}")
        if want is not None and v.type != want and not T.accepts(want, v.type):
            raise ScriptCompileError(self.source, s, f"Previous return statement returned a "
                                     f"value of type {want} but this return statement returns "
                                     f"a value of type {v.type}")
        self.env[_RET] = v
        if _RETURNED in self.env:
            self.env[_RETURNED] = self.const(True)
        if self.loops:
            self.env[_EXIT], self.env[_GO] = self.const(True), self.const(False)
        return _ALWAYS

    def s_Break(self, s: ast.Break) -> str:
        self.env[_EXIT], self.env[_GO] = self.const(True), self.const(False)
        return _ALWAYS

    def s_Continue(self, s: ast.Continue) -> str:
        self.env[_EXIT] = self.const(True)
        return _ALWAYS

    def s_If(self, s: ast.If) -> str | None:
        refined = _refinement(s.test)
        cond = self.as_bool(self.value(s.test), s.test)
        static = self.static_none(s.test, refined)
        if static is not None:  # `x is None` on a value known to be None (or not)
            return self.stmts(s.body if static else s.orelse)
        return self.branches(cond, s.body, s.orelse, s, refined)

    def static_none(self, test: ast.expr, refined: tuple | None) -> bool | None:
        """The value of ``name is (not) None`` when the name's type decides it."""
        if refined is None or not isinstance(self.env.get(refined[0]), Value):
            return None
        t = self.env[refined[0]].type
        if t == T.NONE:
            return not refined[1]
        return refined[1] if not isinstance(t, T.OptionalType) else None
