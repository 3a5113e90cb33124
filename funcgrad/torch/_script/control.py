"""Control flow of the frontend: ``prim::If`` merging the variables its branches assign,
``prim::Loop`` for ``for`` over a range, a list or a tensor and for ``while``, unrolled
loops over tuples and ``nn.ModuleList``s (their elements' types may differ), ``enumerate``
and ``zip``. `ControlCompiler` is mixed into `frontend.FunctionCompiler`."""
from __future__ import annotations

import ast
from typing import Any, Callable

from funcgrad.torch._script import stypes as T
from funcgrad.torch._script.errors import NotSupportedError, ScriptCompileError
from funcgrad.torch._script.exprs import Py, Undefined
from funcgrad.torch._script.ir import Node, Value

__all__ = ["ControlCompiler", "refinement", "FLAGS"]

RET, RETURNED, EXIT, GO = "$ret", "$returned", "$exit", "$go"
FLAGS = (RET, RETURNED, EXIT, GO)
ALWAYS, MAYBE = "always", "maybe"
_MAX_TRIPS = 9223372036854775807


def refinement(test: ast.expr) -> tuple | None:
    """(name, whether the true branch has it not None) of ``name is (not) None``."""
    if isinstance(test, ast.Compare) and len(test.ops) == 1 and isinstance(
            test.left, ast.Name) and isinstance(test.comparators[0], ast.Constant) and \
            test.comparators[0].value is None and isinstance(test.ops[0], (ast.Is,
                                                                            ast.IsNot)):
        return test.left.id, isinstance(test.ops[0], ast.IsNot)
    return None


def _assigned(stmts: list) -> set:
    return {n.id for s in stmts for n in ast.walk(s)
            if isinstance(n, ast.Name) and isinstance(n.ctx, ast.Store)}


def _has(stmts: list, kinds: tuple) -> bool:
    return any(isinstance(n, kinds) for s in stmts for n in ast.walk(s))


class ControlCompiler:
    """``if`` and loops (the host class is the function compiler)."""

    def branches(self, cond: Value, body: list, orelse: list, s: ast.AST,
                 refined: tuple | None = None) -> str | None:
        """A ``prim::If`` on ``cond`` running ``body`` or ``orelse``; the variables they
        assign become its outputs."""
        node = self.emit("prim::If", [cond], [], s)
        before = dict(self.env)
        results = []
        for i, stmts in enumerate((body, orelse)):
            block = self.new_block(node)
            self.env = dict(before)
            with self.in_block(block):
                if refined is not None and refined[1] == (i == 0):
                    self.refine(refined[0], s)
                exits = self.stmts(stmts)
            results.append((block, self.env, exits))
        self.env = before
        names = sorted({n for _, env, _ in results for n, v in env.items()
                        if before.get(n) is not v})
        live = [r for r in results if r[2] != ALWAYS] or results
        for name in names:
            self.merge(node, name, results, live, s)
        exits = [r[2] for r in results]
        return ALWAYS if all(e == ALWAYS for e in exits) else (
            MAYBE if any(exits) else None)

    def refine(self, name: str, s: ast.AST) -> None:
        v = self.env.get(name)
        if isinstance(v, Value) and isinstance(v.type, T.OptionalType):
            self.env[name] = self.emit("prim::unchecked_cast", [v], [v.type.elem], s,
                                       names=[name]).output

    def merge(self, node: Node, name: str, results: list, live: list, s: ast.AST) -> None:
        """One variable after the ``if``: an output of the node, or undefined."""
        before = self.env.get(name)
        vals = [env.get(name, before) for _, env, _ in results]
        live_vals = [env.get(name, before) for _, env, _ in live]
        branch = ("true", "false")
        if any(isinstance(v, Undefined) for v in live_vals):
            self.env[name] = next(v for v in live_vals if isinstance(v, Undefined))
            return
        if any(v is None for v in live_vals):
            if name in FLAGS:
                known = [v for v in vals if isinstance(v, Value)]
                live_vals = [v or None for v in live_vals]
                t = known[0].type
            else:
                missing = branch[[env.get(name, before) for _, env, _ in results].index(None)]
                self.env[name] = Undefined(f"{name} is not defined in the {missing} branch", s)
                return
        else:
            t = live_vals[0].type
            for v in live_vals[1:]:
                u = T.unify(t, v.type)
                if u is None:
                    self.env[name] = Undefined(
                        f"Type mismatch: {name} is set to type {vals[0].type} in the true "
                        f"branch and type {vals[1].type} in the false branch", s)
                    return
                t = u
        out = Value(t, name.lstrip("$"))
        node.outputs.append(out)
        for (block, env, exits), v in zip(results, vals):
            if not isinstance(v, Value) or (exits == ALWAYS and len(live) < len(results)
                                            and v.type != t and not T.accepts(t, v.type)):
                with self.in_block(block):
                    v = self.emit("prim::Uninitialized", [], [t], None).output
            block.returns.append(v)
        self.env[name] = out

    # -- loops ------------------------------------------------------------------------------
    def s_While(self, s: ast.While) -> str | None:
        if s.orelse:
            raise NotSupportedError(self.source, s, "else branches of while loops aren't "
                                    "supported")
        first = self.as_bool(self.value(s.test), s.test)
        return self.loop(s, self.const(_MAX_TRIPS), first, lambda i: None, s.test)

    def s_For(self, s: ast.For) -> str | None:
        if s.orelse:
            raise NotSupportedError(self.source, s, "else branches of for loops aren't "
                                    "supported")
        it = s.iter
        fn = self.expr(it.func) if isinstance(it, ast.Call) else None
        if isinstance(fn, Py) and fn.obj is range:
            return self.for_range(s, [self.value(a) for a in it.args])
        if isinstance(fn, Py) and fn.obj in (enumerate, zip):
            seqs = [self.expr(a) for a in it.args]
            if fn.obj is enumerate:
                return self.for_seqs(s, [None] + seqs)
            return self.for_seqs(s, seqs)
        return self.for_seqs(s, [self.expr(it)], single=True)

    def for_range(self, s: ast.For, args: list) -> str | None:
        if len(args) == 1:
            trip = args[0]
            bind = lambda i: self.assign(s.target, i, s)  # noqa: E731
        else:
            lo, hi = args[0], args[1]
            step = args[2] if len(args) > 2 else self.const(1)
            trip = self.emit("aten::__range_length", [lo, hi, step], [T.INT], s.iter).output

            def bind(i: Value) -> None:
                idx = self.emit("aten::__derive_index", [i, lo, step], [T.INT], s.iter)
                self.assign(s.target, idx.output, s)
        return self.loop(s, trip, self.const(True), bind, None)

    def for_seqs(self, s: ast.For, seqs: list, single: bool = False) -> str | None:
        """``for`` over sequences together (zip; ``None`` stands for enumerate's
        counter): unrolled when one is a tuple or a module list, else a loop."""
        if any(self.unrolled(q) for q in seqs if q is not None):
            items = [self.items(q) if q is not None else None for q in seqs]
            n = min(len(x) for x in items if x is not None)
            for k in range(n):
                vals = [self.const(k) if x is None else x[k] for x in items]
                self.bind_target(s, vals, single)
                if _has(s.body, (ast.Break, ast.Continue)):
                    raise NotSupportedError(self.source, s, "break and continue are not "
                                            "supported in loops over tuples or module lists")
                if self.stmts(s.body) is not None:
                    raise NotSupportedError(self.source, s, "return in a loop over a tuple "
                                            "or module list is not supported")
            return None
        lens = [self.emit("aten::len", [q], [T.INT], s.iter).output
                for q in seqs if q is not None]
        trip = lens[0]
        for other in lens[1:]:
            trip = self.emit("prim::min", [trip, other], [T.INT], s.iter).output

        def bind(i: Value) -> None:
            vals = [i if q is None else self.element(q, i, s) for q in seqs]
            self.bind_target(s, vals, single)
        return self.loop(s, trip, self.const(True), bind, None)

    def element(self, seq: Value, i: Value, s: ast.For) -> Value:
        if not isinstance(seq, Value) or not isinstance(seq.type, T.ListType) and \
                seq.type != T.TENSOR:
            raise NotSupportedError(self.source, s.iter, f"'{getattr(seq, 'type', seq)}' "
                                    "object is not iterable")
        if seq.type == T.TENSOR:
            return self.emit("aten::select", [seq, i], [T.TENSOR], s.iter,
                             {"layout": "v"}).output
        return self.emit("aten::__getitem__", [seq, i], [seq.type.elem], s.iter).output

    def bind_target(self, s: ast.For, vals: list, single: bool) -> None:
        if single:
            self.assign(s.target, vals[0], s)
            return
        targets = s.target.elts if isinstance(s.target, ast.Tuple) else None
        if targets is None or len(targets) != len(vals):
            raise NotSupportedError(self.source, s.target, "unpack the loop's items into "
                                    "names")
        for t, v in zip(targets, vals):
            self.assign(t, v, s)

    def unrolled(self, q: Any) -> bool:
        if isinstance(q, Py):
            return isinstance(q.obj, (list, tuple))
        return isinstance(q.type, (T.TupleType, T.ClassType))

    def items(self, q: Any) -> list:
        """The elements of an unrolled sequence (values)."""
        if isinstance(q, Py):
            return [self.const(x) for x in q.obj]
        if isinstance(q.type, T.TupleType):
            node = self.emit("prim::TupleUnpack", [q], list(q.type.elems), None)
            return node.outputs
        obj = self.objs[q.id]
        return [self.module_attr(obj, q, k, self.tree) for k in obj._modules]

    def loop(self, s: ast.AST, trip: Value, first: Value, bind: Callable,
             test: ast.expr | None) -> str | None:
        """A ``prim::Loop`` running ``s.body`` (``bind(i)`` binds the iteration's
        targets; ``test``: a while loop's condition, evaluated again after the body)."""
        body_stmts = s.body
        exits = _has(body_stmts, (ast.Break, ast.Continue, ast.Return))
        returns = _has(body_stmts, (ast.Return,))
        if returns:
            if self.declared is None:
                raise NotSupportedError(self.source, s, "a return inside a loop needs the "
                                        "function's return type annotated")
            if RET not in self.env:
                self.env[RET] = self.emit("prim::Uninitialized", [], [self.declared],
                                          None).output
            self.env.setdefault(RETURNED, self.const(False))
        names = sorted(n for n in _assigned(body_stmts) if isinstance(self.env.get(n), Value))
        names += [f for f in (RET, RETURNED) if returns]
        node = self.emit("prim::Loop", [trip, first] + [self.env[n] for n in names],
                         [self.env[n].type for n in names], s, names=[
                             n.lstrip("$") for n in names])
        params = [Value(T.INT, "i")] + [Value(self.env[n].type, n.lstrip("$"))
                                        for n in names]
        block = self.new_block(node, params)
        before = dict(self.env)
        self.env = dict(before)
        self.env.update(zip(names, params[1:]))
        self.loops += 1
        with self.in_block(block):
            if exits:
                self.env[EXIT], self.env[GO] = self.const(False), self.const(True)
            bind(params[0])
            self.stmts(body_stmts)
            go = self.env[GO] if exits else self.const(True)
            if test is not None:
                go = self.again(go, test, exits)
            block.returns = [go] + [self.carried(n, p, s) for n, p in zip(names, params[1:])]
        self.loops -= 1
        self.env = before
        self.env.update(zip(names, node.outputs))
        if returns:
            if self.loops:
                done = self.env[RETURNED]
                self.env[EXIT] = done
                self.env[GO] = self.emit("aten::__not__", [done], [T.BOOL], None).output
            return MAYBE
        return None

    def again(self, go: Value, test: ast.expr, exits: bool) -> Value:
        """A while loop's condition for the next iteration (false after a break)."""
        if not exits:
            return self.as_bool(self.value(test), test)
        node = self.emit("prim::If", [go], [T.BOOL], test)
        then_b, else_b = self.new_block(node), self.new_block(node)
        with self.in_block(then_b):
            then_b.returns = [self.as_bool(self.value(test), test)]
        else_b.returns = [self.const(False)]
        return node.output

    def carried(self, name: str, param: Value, s: ast.AST) -> Value:
        v = self.env.get(name)
        if isinstance(v, Undefined):
            raise ScriptCompileError(self.source, v.node, v.msg)
        if v.type != param.type and not T.accepts(param.type, v.type):
            raise ScriptCompileError(self.source, s, f"Variable '{name}' previously had type "
                                     f"{param.type} but is now being assigned to a value of "
                                     f"type {v.type}")
        return v
