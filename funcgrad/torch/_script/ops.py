"""Operator tables shared by the compiler (which names a Python operator's ``aten::`` op
and infers its result type) and the interpreter (which runs it): Python operators become
TorchScript's op names, and the result type of an op follows TorchScript's schemas for
scalars (int op int is int, ``/`` is float, comparisons are bool); an op on a tensor gives
a tensor unless `NON_TENSOR_RESULTS` says otherwise."""
from __future__ import annotations

import ast
import math
import operator
from typing import Any

from funcgrad.torch._script import stypes as T

__all__ = ["BINARY", "COMPARE", "UNARY", "PY_OPS", "binary_type", "method_type"]

BINARY = {ast.Add: "add", ast.Sub: "sub", ast.Mult: "mul", ast.Div: "div",
          ast.FloorDiv: "floordiv", ast.Mod: "remainder", ast.Pow: "pow",
          ast.MatMult: "matmul", ast.BitAnd: "__and__", ast.BitOr: "__or__",
          ast.BitXor: "__xor__", ast.LShift: "__lshift__", ast.RShift: "__rshift__"}
COMPARE = {ast.Eq: "eq", ast.NotEq: "ne", ast.Lt: "lt", ast.LtE: "le", ast.Gt: "gt",
           ast.GtE: "ge", ast.Is: "__is__", ast.IsNot: "__isnot__", ast.In: "__contains__"}
UNARY = {ast.USub: "neg", ast.UAdd: "pos", ast.Not: "__not__", ast.Invert: "bitwise_not"}

# the Python function of each operator op (on tensors they are the facade's operators)
PY_OPS = {"add": operator.add, "sub": operator.sub, "mul": operator.mul,
          "div": operator.truediv, "floordiv": operator.floordiv, "remainder": operator.mod,
          "pow": operator.pow, "matmul": operator.matmul, "__and__": operator.and_,
          "__or__": operator.or_, "__xor__": operator.xor, "__lshift__": operator.lshift,
          "__rshift__": operator.rshift, "eq": operator.eq, "ne": operator.ne,
          "lt": operator.lt, "le": operator.le, "gt": operator.gt, "ge": operator.ge,
          "__is__": operator.is_, "__isnot__": operator.is_not,
          "__contains__": lambda a, b: b in a, "neg": operator.neg, "pos": operator.pos,
          "__not__": operator.not_, "bitwise_not": operator.invert,
          "add_": operator.iadd, "sub_": operator.isub, "mul_": operator.imul,
          "div_": operator.itruediv, "len": len, "Bool": bool, "Int": int, "Float": float,
          "str": str, "abs": abs, "floor": math.floor, "ceil": math.ceil, "sqrt": math.sqrt,
          "exp": math.exp, "log": math.log, "min": min, "max": max}
INPLACE = {ast.Add: "add_", ast.Sub: "sub_", ast.Mult: "mul_", ast.Div: "div_"}

_SCALARS = (T.INT, T.FLOAT, T.BOOL, T.NUMBER)


def binary_type(op: str, a: T.Type, b: T.Type) -> T.Type | None:
    """The result type of ``a op b`` (None: no such op for these types)."""
    if op in ("eq", "ne", "lt", "le", "gt", "ge", "__is__", "__isnot__", "__contains__"):
        return T.TENSOR if T.TENSOR in (a, b) and op not in (
            "__is__", "__isnot__", "__contains__") else T.BOOL
    if T.TENSOR in (a, b):
        return T.TENSOR
    if a in _SCALARS and b in _SCALARS:
        if op in ("div", "pow") and a != T.NUMBER:
            return T.FLOAT
        if op in ("__and__", "__or__", "__xor__") and a == b == T.BOOL:
            return T.BOOL
        return T.FLOAT if T.FLOAT in (a, b) else (T.NUMBER if T.NUMBER in (a, b) else T.INT)
    if op in ("add", "mul") and isinstance(a, T.ListType) and a == b:
        return a
    if op == "add" and a == b == T.STR:
        return T.STR
    return None


# tensor methods (and torch functions) whose results are not one tensor
NON_TENSOR_RESULTS = {
    "dim": T.INT, "numel": T.INT, "item": T.NUMBER, "is_floating_point": T.BOOL,
    "is_contiguous": T.BOOL, "element_size": T.INT, "ndimension": T.INT,
    "chunk": T.ListType("List", T.TENSOR), "split": T.ListType("List", T.TENSOR),
    "unbind": T.ListType("List", T.TENSOR), "tensor_split": T.ListType("List", T.TENSOR),
    "sort": T.TupleType("Tuple", (T.TENSOR, T.TENSOR)),
    "topk": T.TupleType("Tuple", (T.TENSOR, T.TENSOR)),
    "equal": T.BOOL, "allclose": T.BOOL, "is_nonzero": T.BOOL,
}
_PAIR_WITH_DIM = ("max", "min", "median", "mode", "kthvalue", "cummax", "cummin")


def method_type(name: str, n_args: int, has_dim_kw: bool) -> T.Type:
    """The result type of ``tensor.name(...)`` / ``torch.name(tensor, ...)`` with
    ``n_args`` arguments after the tensor."""
    if name == "size":
        return T.INT if n_args else T.ListType("List", T.INT)
    if name in _PAIR_WITH_DIM and (n_args == 1 or has_dim_kw) and name not in (
            "max", "min") or name in ("max", "min") and (n_args == 1 or has_dim_kw):
        return T.TupleType("Tuple", (T.TENSOR, T.TENSOR))
    return NON_TENSOR_RESULTS.get(name, T.TENSOR)


# facade callables that are not computations on values: a saved program naming them is
# refused (they act on the process: files, hooks, autograd's state)
DENIED = frozenset({"backward", "register_hook", "register_post_accumulate_grad_hook",
                    "save", "load", "set_default_dtype", "set_default_device",
                    "manual_seed", "seed", "set_rng_state", "from_file", "numpy", "tolist",
                    "retain_grad", "share_memory_", "apply_", "map_", "map2_",
                    "set_printoptions", "compile", "jit", "library", "ops", "from_dlpack",
                    "use_deterministic_algorithms", "set_grad_enabled"})
