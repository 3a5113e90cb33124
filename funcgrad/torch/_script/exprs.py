"""Expressions of a scripted function: names (variables, then the function's globals and
closure, read once at script time as TorchScript does), attributes of modules and
tensors, operators, calls (facade ops become ``aten::`` nodes, other Python functions are
scripted recursively, module calls become ``prim::CallMethod``), literals and indexing.
`ExprCompiler` is the expression half of `frontend.FunctionCompiler`."""
from __future__ import annotations

import ast
import math
import types
from typing import Any

from funcgrad.torch._script import stypes as T
from funcgrad.torch._script.errors import (NotSupportedError, ScriptCompileError,
                                           UnsupportedNodeError)
from funcgrad.torch._script.ir import Node, Value
from funcgrad.torch._script.ops import BINARY, COMPARE, UNARY, binary_type, method_type
from funcgrad.torch._tensor import Tensor
from funcgrad.torch.nn.module import Module

__all__ = ["ExprCompiler", "Py", "Bound", "Undefined"]


class Py:
    """A Python object known at script time (a module, a function, a class)."""

    def __init__(self, obj: Any):
        self.obj = obj


class Bound:
    """``value.name`` about to be called: a tensor or list method, a module's method."""

    def __init__(self, value: Value, name: str):
        self.value, self.name = value, name


class Undefined:
    """A variable assigned on one path only (`frontend` merges); reading it raises."""

    def __init__(self, msg: str, node: ast.AST):
        self.msg, self.node = msg, node


_FACADE = ("funcgrad.torch",)
_BUILTIN_TYPES = {int: ("Int", T.INT), float: ("Float", T.FLOAT), bool: ("Bool", T.BOOL),
                  str: ("str", T.STR)}


def _is_facade(obj: Any) -> bool:
    return (getattr(obj, "__module__", "") or "").startswith(_FACADE)


def _ns_of(obj: Any) -> str:
    module = getattr(obj, "__module__", "") or ""
    return "F" if "nn" in module.split(".") else "torch"


class ExprCompiler:
    """Expression compilation; the host class provides ``emit``, ``const``, ``env``,
    ``source``, ``scope``, ``objs`` (module values -> their objects) and ``ctx``."""

    def expr(self, e: ast.expr) -> Any:
        method = getattr(self, "e_" + type(e).__name__, None)
        if method is None:
            raise UnsupportedNodeError(self.source, e)
        return method(e)

    def value(self, e: ast.expr) -> Value:
        """``e`` as an IR value (a script-time constant becomes ``prim::Constant``)."""
        v = self.expr(e)
        if isinstance(v, Value):
            return v
        if isinstance(v, Py) and _constant_type(v.obj) is not None:
            return self.const(v.obj)
        raise NotSupportedError(self.source, e, f"Python value of type "
                                f"'{type(getattr(v, 'obj', v)).__name__}' cannot be used "
                                "as a value")

    # -- names and attributes ------------------------------------------------------------
    def e_Name(self, e: ast.Name) -> Any:
        if e.id in self.env:
            v = self.env[e.id]
            if isinstance(v, Undefined):
                raise ScriptCompileError(self.source, v.node, v.msg, used=e)
            return v
        found, obj = self.scope(e.id)
        if not found:
            raise ScriptCompileError(self.source, e, f"undefined value {e.id}")
        return Py(obj)

    def e_Constant(self, e: ast.Constant) -> Value:
        if e.value is Ellipsis or isinstance(e.value, (bytes, complex)):
            raise UnsupportedNodeError(self.source, e)
        return self.const(e.value)

    def e_Attribute(self, e: ast.Attribute) -> Any:
        base = self.expr(e.value)
        if isinstance(base, Py):
            if isinstance(base.obj, Module):
                return self.module_attr(base.obj, None, e.attr, e)
            return Py(getattr(base.obj, e.attr))
        if base.type == T.TENSOR:
            return self.tensor_attr(base, e)
        if isinstance(base.type, T.ClassType):
            return self.module_attr(self.objs[base.id], base, e.attr, e)
        return Bound(base, e.attr)

    def tensor_attr(self, base: Value, e: ast.Attribute) -> Any:
        props = {"shape": ("aten::size", T.ListType("List", T.INT)),
                 "ndim": ("aten::dim", T.INT), "T": ("aten::numpy_T", T.TENSOR),
                 "mT": ("aten::mT", T.TENSOR), "dtype": ("prim::dtype", T.INT),
                 "requires_grad": ("prim::requires_grad", T.BOOL),
                 "is_cuda": ("prim::is_cuda", T.BOOL), "data": ("prim::data", T.TENSOR),
                 "device": ("prim::device", T.DEVICE), "grad": ("prim::grad",
                                                                 T.OptionalType("Optional",
                                                                                T.TENSOR))}
        if e.attr in props:
            kind, t = props[e.attr]
            return self.emit(kind, [base], [t], e).output
        return Bound(base, e.attr)

    def module_attr(self, obj: Module, base: Value | None, name: str, e: ast.AST) -> Any:
        """``module.name``: a submodule, a parameter or buffer, a constant, a method."""
        if base is None:
            raise NotSupportedError(self.source, e, "modules read from globals are not "
                                    "supported; make it a submodule")
        cls = type(obj)
        if name in getattr(cls, "__constants__", ()) or name in _finals(cls):
            return self.const(getattr(obj, name))
        if name in obj._modules:
            sub = obj._modules[name]
            out = self.emit("prim::GetAttr", [base], [self.ctx.class_type(sub)], e,
                            {"name": name}, [name]).output
            self.objs[out.id] = sub
            return out
        value = getattr(obj, name) if name in dir(obj) or hasattr(obj, name) else None
        if isinstance(value, types.MethodType):
            return Bound(base, name)
        if value is None and name not in obj.__dict__ and name not in obj._parameters \
                and name not in obj._buffers:
            raise ScriptCompileError(self.source, e, f"Module '{cls.__name__}' has no "
                                     f"attribute '{name}'")
        t = T.of_value(value, lambda v: isinstance(v, Tensor))
        if t is None:
            raise ScriptCompileError(self.source, e, f"Module '{cls.__name__}' has no "
                                     f"attribute '{name}' (its type "
                                     f"'{type(value).__name__}' is not supported)")
        if t == T.NONE:
            return self.const(None)
        return self.emit("prim::GetAttr", [base], [t], e, {"name": name}, [name]).output

    # -- operators ---------------------------------------------------------------------------
    def e_BinOp(self, e: ast.BinOp) -> Value:
        return self.binary(BINARY[type(e.op)], self.value(e.left), self.value(e.right), e)

    def binary(self, op: str, a: Value, b: Value, e: ast.AST) -> Value:
        t = binary_type(op, a.type, b.type)
        if t is None:
            raise ScriptCompileError(self.source, e, f"Arguments for call are not valid.\n"
                                     f"aten::{op} has no overload for arguments of types "
                                     f"({a.type}, {b.type})")
        return self.emit(f"aten::{op}", [a, b], [t], e).output

    def e_UnaryOp(self, e: ast.UnaryOp) -> Value:
        v = self.value(e.operand)
        op = UNARY[type(e.op)]
        if op == "__not__":
            v = self.as_bool(v, e.operand)
        return self.emit(f"aten::{op}", [v], [v.type], e).output

    def e_Compare(self, e: ast.Compare) -> Value:
        left, result = self.value(e.left), None
        for op, right_e in zip(e.ops, e.comparators):
            right = self.value(right_e)
            if isinstance(op, ast.NotIn):
                out = self.binary("__contains__", right, left, e)
                out = self.emit("aten::__not__", [out], [T.BOOL], e).output
            elif isinstance(op, ast.In):
                out = self.binary("__contains__", right, left, e)
            else:
                out = self.binary(COMPARE[type(op)], left, right, e)
            result = out if result is None else self.binary("__and__", result, out, e)
            left = right
        return result

    def e_BoolOp(self, e: ast.BoolOp) -> Value:
        """``a and b`` / ``a or b``: short-circuit, as a ``prim::If`` (TorchScript's)."""
        left = self.as_bool(self.value(e.values[0]), e.values[0])
        for right_e in e.values[1:]:
            is_and = isinstance(e.op, ast.And)
            node = self.emit("prim::If", [left], [T.BOOL], e)
            then_b, else_b = self.new_block(node), self.new_block(node)
            with self.in_block(then_b if is_and else else_b):
                self.current.returns = [self.as_bool(self.value(right_e), right_e)]
            (else_b if is_and else then_b).returns = [self.const(not is_and)]
            left = node.output
        return left

    def as_bool(self, v: Value, e: ast.AST) -> Value:
        """A condition's value as a bool (``aten::Bool`` of a tensor, TorchScript's
        implicit conversion)."""
        if v.type == T.BOOL:
            return v
        if v.type in (T.TENSOR, T.INT, T.FLOAT):
            return self.emit("aten::Bool", [v], [T.BOOL], e).output
        if isinstance(v.type, (T.ListType, T.OptionalType, T.DictType)):
            kind = "aten::__isnot__" if isinstance(v.type, T.OptionalType) else "aten::len"
            out = self.emit(kind, [v] + ([self.const(None)] if kind.endswith("isnot__")
                                         else []), [T.BOOL if "isnot" in kind else T.INT], e)
            return self.as_bool(out.output, e)
        raise ScriptCompileError(self.source, e, f"Could not cast value of type {v.type} "
                                 "to bool")

    def e_IfExp(self, e: ast.IfExp) -> Value:
        cond = self.as_bool(self.value(e.test), e.test)
        outs: list = []
        node = self.emit("prim::If", [cond], [], e)
        for branch in (e.body, e.orelse):
            b = self.new_block(node)
            with self.in_block(b):
                b.returns = [self.value(branch)]
                outs.append(b.returns[0].type)
        t = T.unify(*outs)
        if t is None:
            raise ScriptCompileError(self.source, e, "Type mismatch: the true branch is "
                                     f"{outs[0]} and the false branch is {outs[1]}")
        node.outputs = [Value(t)]
        return node.output

    # -- literals and indexing ----------------------------------------------------------------
    def e_Tuple(self, e: ast.Tuple) -> Value:
        vals = [self.value(x) for x in e.elts]
        return self.emit("prim::TupleConstruct", vals,
                         [T.TupleType("Tuple", tuple(v.type for v in vals))], e).output

    def e_List(self, e: ast.List) -> Value:
        vals = [self.value(x) for x in e.elts]
        elem = vals[0].type if vals else T.TENSOR
        for v in vals[1:]:
            elem = T.unify(elem, v.type) or T.ANY
        return self.emit("prim::ListConstruct", vals, [T.ListType("List", elem)], e).output

    def e_Dict(self, e: ast.Dict) -> Value:
        keys = [self.value(k) for k in e.keys]
        vals = [self.value(v) for v in e.values]
        t = T.DictType("Dict", keys[0].type if keys else T.STR,
                       vals[0].type if vals else T.TENSOR)
        return self.emit("prim::DictConstruct", [x for kv in zip(keys, vals) for x in kv],
                         [t], e).output

    def e_Subscript(self, e: ast.Subscript) -> Any:
        base = self.expr(e.value)
        if isinstance(base, Py):  # a ModuleList / Sequential indexed by a constant
            raise NotSupportedError(self.source, e, "subscripting a Python value")
        if isinstance(base.type, T.ClassType):
            idx = self.const_index(e.slice)
            return self.module_attr(self.objs[base.id], base, str(idx), e)
        if base.type == T.TENSOR:
            return self.tensor_index(base, e)
        idx = self.value(e.slice) if not isinstance(e.slice, ast.Slice) else None
        if idx is None:
            return self.emit("aten::slice", [base] + self.slice_parts(e.slice),
                             [base.type], e).output
        if isinstance(base.type, T.TupleType):
            i = self.const_index(e.slice)
            return self.emit("prim::TupleIndex", [base, idx], [base.type.elems[i]], e).output
        elem = base.type.value if isinstance(base.type, T.DictType) else getattr(
            base.type, "elem", None)
        if elem is None:
            raise ScriptCompileError(self.source, e, f"'{base.type}' object is not "
                                     "subscriptable")
        return self.emit("aten::__getitem__", [base, idx], [elem], e).output

    def const_index(self, e: ast.expr) -> int:
        if isinstance(e, ast.Constant) and isinstance(e.value, int):
            return e.value
        if isinstance(e, ast.UnaryOp) and isinstance(e.op, ast.USub):
            return -self.const_index(e.operand)
        raise NotSupportedError(self.source, e, "Expected an integer constant index")

    def slice_parts(self, s: ast.Slice) -> list:
        return [self.value(p) if p is not None else self.const(None)
                for p in (s.lower, s.upper, s.step)]

    def tensor_index(self, base: Value, e: ast.Subscript) -> Value:
        """``x[...]``: one ``aten::index`` node; its static layout (which parts are ints,
        slices, None, Ellipsis) is an attribute, the dynamic parts its inputs."""
        parts = e.slice.elts if isinstance(e.slice, ast.Tuple) else [e.slice]
        layout, inputs = [], [base]
        for p in parts:
            if isinstance(p, ast.Slice):
                layout.append("s")
                inputs += self.slice_parts(p)
            elif isinstance(p, ast.Constant) and p.value in (None, Ellipsis):
                layout.append("n" if p.value is None else "e")
            else:
                layout.append("v")
                inputs.append(self.value(p))
        kind = {"v": "aten::select", "s": "aten::slice"}.get("".join(layout), "aten::index")
        return self.emit(kind, inputs, [T.TENSOR], e, {"layout": "".join(layout)}).output

    # -- calls ------------------------------------------------------------------------------
    def e_Call(self, e: ast.Call) -> Any:
        for a in e.args:
            if isinstance(a, ast.Starred):
                raise UnsupportedNodeError(self.source, a)
        fn = self.expr(e.func)
        if isinstance(fn, Bound):
            return self.call_bound(fn, e)
        if isinstance(fn, Value):
            if isinstance(fn.type, T.ClassType):  # a submodule called: its forward
                return self.call_method(fn, "forward", e)
            raise ScriptCompileError(self.source, e, f"'{fn.type}' object is not callable")
        return self.call_python(fn.obj, e)

    def args_of(self, e: ast.Call) -> tuple:
        """(positional values, keyword names, keyword values) of a call."""
        args = [self.value(a) for a in e.args]
        names = [k.arg for k in e.keywords]
        if None in names:
            raise UnsupportedNodeError(self.source, e)
        return args, names, [self.value(k.value) for k in e.keywords]

    def call_bound(self, fn: Bound, e: ast.Call) -> Value:
        base = fn.value
        if isinstance(base.type, T.ClassType):
            return self.call_method(base, fn.name, e)
        args, names, kws = self.args_of(e)
        if isinstance(base.type, T.ListType):
            return self.list_method(base, fn.name, args, e)
        if base.type != T.TENSOR:
            raise ScriptCompileError(self.source, e, f"'{base.type}' object has no "
                                     f"attribute or method '{fn.name}'")
        t = method_type(fn.name, len(args), "dim" in names)
        return self.emit(f"aten::{fn.name}", [base] + args + kws, [t], e,
                         {"ns": "Tensor", "kw": names} if names else {"ns": "Tensor"}).output

    def list_method(self, base: Value, name: str, args: list, e: ast.AST) -> Value:
        elem = base.type.elem
        outs = {"append": T.NONE, "pop": elem, "insert": T.NONE, "extend": T.NONE,
                "index": T.INT, "count": T.INT, "clear": T.NONE, "reverse": T.NONE}
        if name not in outs:
            raise ScriptCompileError(self.source, e, f"'{base.type}' object has no "
                                     f"attribute or method '{name}'")
        if name == "append" and args and not T.accepts(elem, args[0].type) and elem != T.ANY:
            raise ScriptCompileError(self.source, e, f"Arguments for call are not valid.\n"
                                     f"aten::append expected a value of type '{elem}' for "
                                     f"argument 'el' but instead found type "
                                     f"'{args[0].type}'.")
        out = self.emit(f"aten::{name}", [base] + args, [outs[name]], e, {"ns": "list"})
        return out.output

    def call_method(self, module_value: Value, name: str, e: ast.Call) -> Value:
        obj = self.objs[module_value.id]
        args, names, kws = self.args_of(e)
        if names:
            raise NotSupportedError(self.source, e, "keyword arguments to module calls are "
                                    "not supported")
        if name == "forward" and self.ctx.is_sequential(obj):
            out = args[0]
            for key, sub in obj._modules.items():
                sub_v = self.emit("prim::GetAttr", [module_value], [self.ctx.class_type(sub)],
                                  e, {"name": key}, [f"_{key}"]).output
                self.objs[sub_v.id] = sub
                out = self.method_node(sub_v, sub, "forward", [out], e)
            return out
        return self.method_node(module_value, obj, name, args, e)

    def method_node(self, v: Value, obj: Module, name: str, args: list, e: ast.AST) -> Value:
        graph = self.ctx.method(obj, name)  # None: a facade nn module, run as it is
        if graph is not None:
            self.check_args(graph, args, e)
        out = graph.return_type if graph is not None else T.TENSOR
        return self.emit("prim::CallMethod", [v] + args, [out], e,
                         {"name": name}).output

    def check_args(self, graph: Any, args: list, e: ast.AST) -> None:
        params = graph.block.params[1:] if graph.arg_names[:1] == ["self"] else \
            graph.block.params
        params = [p for p in params if not isinstance(p.type, T.ClassType)]
        if len(args) > len(params) or len(args) + len(graph.defaults) < len(params):
            raise ScriptCompileError(self.source, e, f"{graph.name}() expected "
                                     f"{len(params)} arguments but {len(args)} were given")
        for p, a in zip(params, args):
            if not T.accepts(p.type, a.type):
                raise ScriptCompileError(self.source, e, f"Expected a value of type "
                                         f"'{p.type}' for argument '{p.base}' but instead "
                                         f"found type '{a.type}'.")
        for p in params[len(args):]:
            args.append(self.const(graph.defaults[p.base]))

    def call_python(self, obj: Any, e: ast.Call) -> Any:
        special = self.ctx.special(obj)
        if special is not None:
            return getattr(self, "call_" + special)(e)
        if obj in _BUILTIN_TYPES:
            kind, t = _BUILTIN_TYPES[obj]
            args = [self.value(a) for a in e.args]
            return self.emit(f"aten::{kind}", args, [t], e).output
        if obj in (len, abs, min, max) or obj in (math.floor, math.ceil, math.sqrt,
                                                  math.exp, math.log):
            return self.call_builtin(obj, e)
        if obj is print:
            args, _, _ = self.args_of(e)
            return self.emit("prim::Print", args, [], e) and self.const(None)
        if isinstance(obj, type) and issubclass(obj, BaseException):
            return Py(obj)
        if _is_facade(obj) and callable(obj) and not isinstance(obj, type):
            args, names, kws = self.args_of(e)
            name = obj.__name__
            t = method_type(name, len(args) - 1, "dim" in names) if args and \
                args[0].type == T.TENSOR else (T.ListType("List", T.TENSOR) if name in (
                    "split", "chunk", "unbind") else T.TENSOR)
            attrs = {"ns": _ns_of(obj)}
            if names:
                attrs["kw"] = names
            return self.emit(f"aten::{name}", args + kws, [t], e, attrs).output
        if isinstance(obj, (types.FunctionType, types.MethodType)):
            return self.call_function(obj, e)
        raise NotSupportedError(self.source, e, f"Python builtin {obj!r} is currently not "
                                "supported in TorchScript")

    def call_is_scripting(self, e: ast.Call) -> Value:
        return self.const(True)

    def call_annotate(self, e: ast.Call) -> Value:
        """``torch.jit.annotate(T, value)``: the value, of type T."""
        try:
            t = T.from_annotation(e.args[0], self.scope)
        except ValueError as ex:
            raise ScriptCompileError(self.source, e.args[0], str(ex)) from None
        v = self.value(e.args[1])
        if isinstance(e.args[1], (ast.List, ast.Dict)) and not getattr(e.args[1], "elts",
                                                                     e.args[1].keys):
            v.type = t
        elif not T.accepts(t, v.type):
            raise ScriptCompileError(self.source, e, f"Expected a value of type '{t}' but "
                                     f"found '{v.type}'")
        return v

    def call_builtin(self, obj: Any, e: ast.Call) -> Value:
        args = [self.value(a) for a in e.args]
        name = obj.__name__
        if name in ("min", "max") and args and args[0].type == T.TENSOR:
            return self.emit(f"aten::{name}", args, [T.TENSOR], e, {"ns": "torch"}).output
        if name == "len":
            t = T.INT
        elif name in ("floor", "ceil"):
            t = T.INT
        elif name in ("sqrt", "exp", "log"):
            t = T.FLOAT
        else:
            t = args[0].type
            for a in args[1:]:
                t = binary_type("add", t, a.type) or t
        return self.emit(f"aten::{name}", args, [t], e).output

    def call_function(self, fn: Any, e: ast.Call) -> Value:
        kind, graph = self.ctx.function(fn)
        args, names, kws = self.args_of(e)
        if kind == "ignore":
            return self.emit("prim::PythonOp", args, [T.TENSOR], e,
                             {"name": fn.__name__, "python": fn}).output
        if kind == "unused":
            return self.emit("prim::RaiseException", [], [T.TENSOR], e,
                             {"value": f"This function has been marked unused: "
                                       f"{fn.__name__}"}).output
        self.check_args(graph, args, e)
        f = self.const_function(graph)
        return self.emit("prim::CallFunction", [f] + args, [graph.return_type], e).output


def _constant_type(obj: Any) -> T.Type | None:
    return T.of_value(obj, lambda v: False) if not isinstance(obj, list) else None


def _finals(cls: type) -> set:
    """The names a module class annotates ``torch.jit.Final`` (constants)."""
    out = set()
    for klass in cls.__mro__:
        for name, ann in getattr(klass, "__annotations__", {}).items():
            text = ann if isinstance(ann, str) else repr(ann)
            if "Final" in text:
                out.add(name)
    return out

