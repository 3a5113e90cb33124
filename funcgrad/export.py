"""JAX's ``jax.export``: ``export(jit(f))(*args)`` is an `Exported` (the traced program
with its input and output avals and trees), which ``serialize()`` turns into bytes and
`deserialize` back, to be called in another process.

The bytes are data, never code: whatever is read from a file is untrusted, so nothing is
unpickled or evaluated. Format (version 1), all little-endian:

    b"FGEXPORT" | header length (uint64) | header (UTF-8 JSON) | buffers

The header holds ``version``, ``buffers`` and an exported program's fields: ``fun_name``,
``in_avals``/``out_avals`` ([shape, dtype]), ``in_tree``/``out_tree`` (nested
{"t": "tuple"|"list"|"dict"|"none"|"leaf"} nodes), ``nvars``, ``program`` (``in_vars``,
``outs`` and ``eqns``) and, written by ``serialize(vjp_order=n)`` for n > 0, ``vjp``: the
same fields for its VJP program, to order n - 1. Per equation the primitive's registered
name, its params (JSON values; tuples, dtypes, indices and non-finite floats tagged, see
`_encode`) and its inputs and outputs. An input or output is a variable number or a
constant ``{"buf": k}``; buffer k is described in ``buffers`` ([dtype, shape, offset]) and
lies, raw, at that offset after the header. Reading checks every field and rebuilds each
equation by looking its primitive up in funcgrad's registry: an unknown primitive, a
param type outside that list, a version mismatch or malformed bytes raise `ExportError`.
A staged ``switch`` (cond), ``scan`` or ``while_loop`` holds Python functions: its params
are written as sub-programs (``{"programs": [{"in_vars", "eqns", "outs"}, ...]}``, plus
scan's ``n_carry``, ``length``, ``reverse``) and rebuilt as the same lax construct over
them; any other param holding a function (custom_jvp, checkpoint, callbacks) is refused.

Calling the program binds its primitives again, so it composes with vmap and jit. Its
reverse-mode derivatives are, as JAX's, those of its exported VJP program (``vjp()``),
never re-derived from the program: jit's trace keeps only the primal computation of a
custom_jvp or custom_vjp function, so re-deriving would silently drop the user's rule. An
exported (in-process) program makes its VJP on demand from funcgrad's vjp of the function
itself, to any order; a deserialized one has the orders ``serialize(vjp_order=...)`` wrote,
and differentiating it once more raises JAX's ValueError "No VJP is available". (Forward
mode, which JAX refuses for an exported call, is funcgrad's custom_vjp's transpose of the
VJP, so it needs one order more.)
"""
from __future__ import annotations

import json
import math
import struct
from typing import Any, Callable, NamedTuple

import numpy as np

from funcgrad import tree_util
from funcgrad.array import Array, new_array
from funcgrad.core import bind, is_inexact, registry
from funcgrad.meta import ShapeDtypeStruct, is_meta
from funcgrad.primitives.indexing import Index, Ref, Slice
from funcgrad.transforms.control_flow import switch, while_loop
from funcgrad.transforms.custom import custom_vjp
from funcgrad.transforms.grad import float0, vjp
from funcgrad.transforms.jit import jit
from funcgrad.transforms.scan import scan

__all__ = ["export", "deserialize", "Exported", "ExportError", "VERSION"]

VERSION = 1
_MAGIC = b"FGEXPORT"
_DTYPES = frozenset(("bool", "int8", "int16", "int32", "int64", "uint8", "uint16", "uint32",
                     "uint64", "float16", "float32", "float64", "complex64", "complex128"))


class ExportError(ValueError):
    """A program that cannot be exported, or bytes that are no exported program."""


# -- params and trees <-> JSON ------------------------------------------------------------

def _encode(v: Any, where: str) -> Any:
    """A param value as JSON; a type outside the documented ones is refused."""
    if v is None or type(v) in (bool, int, str):
        return v
    if type(v) is float:
        return v if math.isfinite(v) else {"float": repr(v)}
    if isinstance(v, np.dtype):
        return {"dtype": _dtype_name(v, where)}
    if type(v) is Slice:
        return {"slice": list(v)}
    if type(v) is Ref:
        return {"ref": v.row}
    if v is Ellipsis:
        return {"ellipsis": True}
    if type(v) in (tuple, Index, list):
        kind = {tuple: "tuple", Index: "index", list: "list"}[type(v)]
        return {kind: [_encode(e, where) for e in v]}
    raise ExportError(f"export: {where} has a value of type {type(v).__name__}, which "
                      "cannot be serialized (functions, staged control flow and Python "
                      "objects are not data); export supports straight-line programs of "
                      "registered primitives")


def _decode(v: Any, where: str) -> Any:
    if v is None or type(v) in (bool, int, str, float):
        return v
    if type(v) is dict and len(v) == 1:
        (tag, x), = v.items()
        if tag == "float" and x in ("nan", "inf", "-inf"):
            return float(x)
        if tag == "dtype" and x in _DTYPES:
            return np.dtype(x)
        if tag == "slice" and type(x) is list and len(x) == 3 and all(
                e is None or type(e) is int for e in x):
            return Slice(*x)
        if tag == "ref" and type(x) is int and x >= 0:
            return Ref(x)
        if tag == "ellipsis" and x is True:
            return Ellipsis
        if tag in ("tuple", "index", "list") and type(x) is list:
            items = [_decode(e, where) for e in x]
            return {"tuple": tuple, "index": Index, "list": list}[tag](items)
    raise ExportError(f"deserialize: {where} has an unsupported value {str(v)[:80]}")


def _dtype_name(dtype: Any, where: str) -> str:
    name = np.dtype(dtype).name
    if name not in _DTYPES:
        raise ExportError(f"export: {where} has dtype {name}, which cannot be serialized")
    return name


def _tree_to_json(tree: Any) -> Any:
    """A pytree structure of tuples, lists, dicts with string keys and None as JSON."""
    marker = object()
    skeleton = tree.unflatten([marker] * tree.num_leaves)

    def node(x: Any) -> Any:
        if x is marker:
            return {"t": "leaf"}
        if x is None:
            return {"t": "none"}
        if type(x) in (tuple, list):
            return {"t": type(x).__name__, "c": [node(e) for e in x]}
        if type(x) is dict and all(type(k) is str for k in x):
            return {"t": "dict", "k": list(x), "c": [node(e) for e in x.values()]}
        raise ExportError(f"export: arguments and results must be tuples, lists, dicts "
                          f"with string keys and arrays; got a {type(x).__name__}")
    return node(skeleton)


def _tree_from_json(j: Any, depth: int = 0) -> Any:
    if depth > 100 or type(j) is not dict:
        raise ExportError("deserialize: malformed tree")
    t, children = j.get("t"), j.get("c", [])
    if type(children) is not list:
        raise ExportError("deserialize: malformed tree")
    kids = [_tree_from_json(c, depth + 1) for c in children]
    if t == "leaf":
        return 0
    if t == "none":
        return None
    if t in ("tuple", "list"):
        return tuple(kids) if t == "tuple" else kids
    keys = j.get("k")
    if t == "dict" and type(keys) is list and len(keys) == len(kids) and all(
            type(k) is str for k in keys):
        return dict(zip(keys, kids))
    raise ExportError("deserialize: malformed tree")


# -- the program ----------------------------------------------------------------------------

class _Var(int):
    """A variable number among an equation's inputs (a Python int there is a constant)."""


class _Program(NamedTuple):
    """A (sub-)program: its input variables, equations ``(primitive, params, inputs,
    output variables)`` and outputs (variables or constants). Variables are numbered
    across a program and its sub-programs, which may read the enclosing ones' (closures)."""
    in_vars: list
    eqns: list
    outs: list


def _run(program: _Program, env: list, inputs: Any) -> list:
    """The outputs of ``program`` on ``inputs``, its primitives bound again (so through
    whatever transforms are active), the staged constructs rebuilt (`_CONTROL`)."""
    for v, x in zip(program.in_vars, inputs):
        env[v] = x
    read = lambda r: env[r] if type(r) is _Var else r  # noqa: E731
    for prim, params, ins, outs in program.eqns:
        args = [read(r) for r in ins]
        if prim.name in _CONTROL:
            out = _CONTROL[prim.name](env, params, args)
        else:
            out = bind(prim, args, params)
            out = out if prim.multiple_results else (out,)
        for v, o in zip(outs, out):
            if v >= 0:
                env[v] = o
    return [read(r) for r in program.outs]


def _run_switch(env: list, params: dict, args: list) -> list:
    branches = [lambda *ops, p=p: tuple(_run(p, env, ops)) for p in params["programs"]]
    return list(switch(args[0], branches, *args[1:]))


def _run_scan(env: list, params: dict, args: list) -> list:
    (body,), n = params["programs"], params["n_carry"]

    def step(carry: list, xs: list) -> tuple:
        out = _run(body, env, list(carry) + list(xs))
        return out[:n], out[n:]
    carry, ys = scan(step, args[:n], args[n:], length=params["length"],
                     reverse=params["reverse"])
    return list(carry) + list(ys)


def _run_while(env: list, params: dict, args: list) -> list:
    cond, body = params["programs"]
    return list(while_loop(lambda s: _run(cond, env, s)[0],
                           lambda s: _run(body, env, s), args))


# primitive name -> how its record is rebuilt, and the params (besides "programs") it keeps
_CONTROL = {"switch": _run_switch, "scan": _run_scan, "while_loop": _run_while}
_CONTROL_PARAMS = {"switch": (), "scan": ("n_carry", "length", "reverse"), "while_loop": ()}


def _program_of(tape: Any) -> _Program:
    """A traced tape (or a staged construct's sub-tape) as a `_Program`."""
    eqns = []
    for rec in tape.records:
        ins = [_Var(v) if v >= 0 else rec.saved[i] for i, v in enumerate(rec.in_vars)]
        if any(x is None for x in ins):
            raise ExportError(f"export: equation {rec.prim.name} has a constant input "
                              "the trace did not keep")
        params = dict(rec.params)
        if rec.prim.name in _CONTROL and "programs" in params:
            call = params["call"]
            params = {"programs": tuple(_program_of(p) for p in params["programs"]),
                      **{k: getattr(call, k) for k in _CONTROL_PARAMS[rec.prim.name]}}
        eqns.append((rec.prim, params, ins, list(rec.out_vars)))
    outs = [_Var(v) if v >= 0 else c for v, c in zip(tape.out_vars, tape.out_consts)]
    if any(is_meta(x) for e in eqns for x in e[2] if type(x) is not _Var) or any(
            is_meta(x) for x in outs if type(x) is not _Var):
        raise ExportError("export: the program has a constant computed from a "
                          "ShapeDtypeStruct argument (zeros_like of it, say), which has no "
                          "value: export with example arrays in place of ShapeDtypeStructs")
    return _Program(list(tape.in_vars), eqns, outs)


class Exported:
    """An exported program: ``in_avals``/``out_avals`` (flat `ShapeDtypeStruct`s),
    ``in_tree``/``out_tree``, ``fun_name``; ``call(*args)`` runs it; ``serialize()``;
    ``vjp()`` is the exported program of its VJP (`_vjp_exporter`), where it has one."""

    def __init__(self, fun_name: str, in_tree: Any, out_tree: Any, in_avals: tuple,
                 out_avals: tuple, nvars: int, program: _Program,
                 get_vjp: Callable[[], "Exported"] | None = None):
        self.fun_name, self.in_tree, self.out_tree = fun_name, in_tree, out_tree
        self.in_avals, self.out_avals = in_avals, out_avals
        self._nvars, self._program = nvars, program
        self._get_vjp, self._vjp = get_vjp, None
        self._call_flat = _differentiable(self)

    def __repr__(self) -> str:
        return f"Exported({self.fun_name}, {len(self._program.eqns)} equations)"

    def has_vjp(self) -> bool:
        """Whether this program can be differentiated (in reverse mode) once more."""
        return self._get_vjp is not None

    def vjp(self) -> "Exported":
        """The exported VJP: a program of the primal inputs and the inexact outputs'
        cotangents, returning the inexact inputs' cotangents (float0 ones, which hold no
        data, left out). ValueError (JAX's text) where there is none: a deserialized
        program has as many orders as ``serialize(vjp_order=...)`` wrote."""
        if self._get_vjp is None:
            raise ValueError("No VJP is available: this Exported was deserialized from "
                             "bytes holding no VJP of this order; serialize it with "
                             "serialize(vjp_order=n) to differentiate the deserialized "
                             "call n times")
        if self._vjp is None:
            self._vjp = self._get_vjp()
        return self._vjp

    def call(self, *args: Any, **kwargs: Any) -> Any:
        """The program on ``args`` (of the exported tree and avals), through any active
        transforms; its reverse-mode derivatives are the exported VJP programs' (as JAX's:
        the program itself lacks custom_jvp/custom_vjp rules)."""
        leaves, tree = tree_util.tree_flatten((args, kwargs))
        if tree != self.in_tree:
            raise TypeError(f"Exported.call: expected arguments {self.in_tree}, got {tree}")
        for k, (x, a) in enumerate(zip(leaves, self.in_avals)):
            dtype = np.dtype(x.dtype) if hasattr(x, "dtype") else np.asarray(x).dtype
            if tuple(np.shape(x)) != a.shape or dtype != a.dtype:
                raise TypeError(f"Exported.call: argument {k} has shape {np.shape(x)} and "
                                f"dtype {dtype}; the program takes {a.shape} {a.dtype}")
        return self.out_tree.unflatten(self._call_flat(*leaves))

    def serialize(self, vjp_order: int = 0) -> bytes:
        """The program as bytes (the format in funcgrad.export's docstring), with its VJP
        programs up to order ``vjp_order`` (JAX's: what the deserialized call can be
        differentiated by, ``grad`` applied ``vjp_order`` times)."""
        if type(vjp_order) is not int or vjp_order < 0:
            raise ValueError(f"serialize: vjp_order must be a non-negative int, got "
                             f"{vjp_order!r}")
        writer = _Writer()
        header = {"version": VERSION, **writer.exported(self, vjp_order),
                  "buffers": writer.buffers}
        text = json.dumps(header, allow_nan=False).encode()
        return _MAGIC + struct.pack("<Q", len(text)) + text + b"".join(writer.chunks)


def _inexact(avals: tuple) -> list:
    """The positions of the avals that carry derivatives (the others' are float0)."""
    return [k for k, a in enumerate(avals) if is_inexact(a.dtype)]


def _differentiable(exp: Exported) -> Callable:
    """``exp``'s program on flat leaves, its reverse mode ``exp.vjp()``'s (JAX's
    ``call_exported`` under a custom_vjp): differentiating the program itself would go
    through the primal computation of a custom_jvp/custom_vjp function, not its rule."""
    def run(*leaves: Any) -> list:
        return _run(exp._program, [None] * exp._nvars, leaves)

    def bwd(leaves: tuple, g: list) -> tuple:
        cts = iter(exp.vjp().call(*leaves, *[g[k] for k in _inexact(exp.out_avals)]))
        return tuple(next(cts) if is_inexact(a.dtype) else None for a in exp.in_avals)
    call = custom_vjp(run)
    call.defvjp(lambda *leaves: (run(*leaves), leaves), bwd)
    return call


class _Writer:
    """Writes exported programs as JSON, their constants as buffers (``chunks``)."""

    def __init__(self) -> None:
        self.buffers: list = []
        self.chunks: list = []
        self.size = 0

    def ref(self, x: Any) -> Any:
        if type(x) is _Var:
            return int(x)
        if type(x) in (bool, int, float):  # a Python number: weakly typed, kept so
            return {"py": _encode(x, "a constant")}
        raw = np.ascontiguousarray(np.asarray(x.to_numpy() if isinstance(x, Array) else x))
        name = _dtype_name(raw.dtype, "a constant")
        self.chunks.append(raw.astype(raw.dtype.newbyteorder("<"), copy=False).tobytes())
        self.buffers.append([name, list(raw.shape), self.size])
        self.size += len(self.chunks[-1])
        return {"buf": len(self.buffers) - 1}

    def program(self, p: _Program) -> dict:
        return {"in_vars": list(p.in_vars), "outs": [self.ref(r) for r in p.outs],
                "eqns": [{"prim": prim.name, "params": {
                    k: [self.program(q) for q in v] if k == "programs" and prim.name in _CONTROL
                    else _encode(v, f"param {k!r} of {prim.name}")
                    for k, v in params.items()},
                    "in": [self.ref(r) for r in ins], "out": list(outs)}
                    for prim, params, ins, outs in p.eqns]}

    def exported(self, exp: Exported, vjp_order: int) -> dict:
        """``exp``'s header fields, and its VJP's under "vjp" while ``vjp_order`` > 0."""
        header = {"fun_name": exp.fun_name, "in_tree": _tree_to_json(exp.in_tree),
                  "out_tree": _tree_to_json(exp.out_tree),
                  "in_avals": [[list(a.shape), a.dtype.name] for a in exp.in_avals],
                  "out_avals": [[list(a.shape), a.dtype.name] for a in exp.out_avals],
                  "nvars": exp._nvars, "program": self.program(exp._program)}
        if vjp_order > 0:
            if not exp.has_vjp():
                raise ExportError("serialization of an Exported that does not have vjps of "
                                  "high-enough order (it was deserialized with fewer: "
                                  "serialize the original with a lower vjp_order)")
            header["vjp"] = self.exported(exp.vjp(), vjp_order - 1)
        return header


def _vjp_exporter(fun_name: str, flat_fun: Callable, shaped: list,
                  out_avals: tuple) -> Callable[[], Exported]:
    """How the VJP of a program exported from ``flat_fun`` on arguments of ``shaped``
    (`ShapedArray`s) is exported (see `Exported.vjp`): funcgrad's vjp of the function
    itself, not of its program, so that custom rules hold."""
    in_avals = tuple(ShapeDtypeStruct(a.shape, a.dtype) for a in shaped)
    n, ins, outs = len(in_avals), _inexact(in_avals), _inexact(out_avals)

    def fun_vjp(*primals_and_cts: Any) -> list:
        primals, g = list(primals_and_cts[:n]), [np.zeros(a.shape, float0) for a in out_avals]
        for k, ct in zip(outs, primals_and_cts[n:]):
            g[k] = ct

        def of_inexact(*xs: Any) -> list:  # the others stay out of vjp's trace: constants
            full = list(primals)
            for k, x in zip(ins, xs):
                full[k] = x
            return flat_fun(*full)
        return list(vjp(of_inexact, *[primals[k] for k in ins])[1](g))
    fun_vjp.__name__ = f"{fun_name}_vjp"
    # traced on zeros, not on ShapeDtypeStructs: a cotangent that is zero whatever the
    # inputs (a rule ignoring one) is then a constant with a value; a weakly typed input
    # was a Python number, and is traced as one
    specs = [a.dtype.type(0).item() if a.weak_type else np.zeros(a.shape, a.dtype)
             for a in shaped] + [np.zeros(out_avals[k].shape, out_avals[k].dtype) for k in outs]
    return lambda: export(jit(fun_vjp))(*specs)


def export(fun_jit: Any, **_: Any) -> Callable[..., Exported]:
    """``export(jit(f))(*args)``: the program of ``f`` for arguments like ``args`` (arrays
    or `ShapeDtypeStruct`s). Platform options are accepted: funcgrad exports one program."""
    if not hasattr(fun_jit, "trace"):
        raise ValueError(f"Function to be exported must be the result of `jit` but is: "
                         f"{fun_jit}")

    def do_export(*args: Any, **kwargs: Any) -> Exported:
        traced = fun_jit.trace(*args, **kwargs)
        flat_avals = lambda tree: tuple(ShapeDtypeStruct(a.shape, a.dtype)  # noqa: E731
                                        for a in tree_util.tree_leaves(tree))
        name = getattr(fun_jit, "__name__", "fun")
        out_avals = flat_avals(traced.out_info)
        exp = Exported(name, traced.in_tree, traced.out_tree, flat_avals(traced.in_avals),
                       out_avals, len(traced.jaxpr.var_avals), _program_of(traced.jaxpr),
                       _vjp_exporter(name, traced.flat_fun,
                                     tree_util.tree_leaves(traced.in_avals), out_avals))
        exp.serialize()  # refuse what cannot be serialized now, not when it is saved
        return exp
    return do_export


# -- reading --------------------------------------------------------------------------------

def _need(ok: bool, what: str) -> None:
    if not ok:
        raise ExportError(f"deserialize: malformed exported program: {what}")


def _avals(j: Any, what: str) -> tuple:
    _need(type(j) is list and all(type(a) is list and len(a) == 2 and type(a[0]) is list
                                  and all(type(n) is int and n >= 0 for n in a[0])
                                  and a[1] in _DTYPES for a in j), what)
    return tuple(ShapeDtypeStruct(s, d) for s, d in j)


def _buffers(header: dict, body: bytes) -> list:
    out = []
    for b in header.get("buffers", None) or []:
        _need(type(b) is list and len(b) == 3 and b[0] in _DTYPES and type(b[1]) is list
              and all(type(n) is int and 0 <= n < 2 ** 31 for n in b[1])
              and type(b[2]) is int and b[2] >= 0, "a buffer's description")
        dtype = np.dtype(b[0]).newbyteorder("<")
        nbytes = math.prod(b[1]) * dtype.itemsize
        _need(b[2] + nbytes <= len(body), "a buffer past the end of the data")
        raw = np.frombuffer(body, dtype, count=math.prod(b[1]), offset=b[2])
        out.append(new_array(raw.astype(raw.dtype.newbyteorder("="))).reshape(b[1]))
    return out


def deserialize(data: bytes) -> Exported:
    """The `Exported` that ``serialize()`` wrote; anything else raises `ExportError`."""
    try:
        return _read(data)
    except RecursionError:
        raise ExportError("deserialize: malformed exported program: nested too deeply") \
            from None


def _read(data: bytes) -> Exported:
    _need(isinstance(data, (bytes, bytearray)) and data[:8] == _MAGIC and len(data) >= 16,
          "not funcgrad export bytes")
    (n,) = struct.unpack("<Q", bytes(data[8:16]))
    _need(16 + n <= len(data), "the header runs past the end")
    try:
        header = json.loads(bytes(data[16:16 + n]).decode("utf-8"),
                            parse_constant=lambda c: _need(False, f"constant {c}"))
    except (UnicodeDecodeError, json.JSONDecodeError) as e:
        raise ExportError(f"deserialize: malformed exported program: {e}") from None
    _need(type(header) is dict, "the header is not an object")
    if header.get("version") != VERSION:
        raise ExportError(f"deserialize: serialization version {header.get('version')!r} "
                          f"is not supported (this funcgrad reads version {VERSION})")
    return _exported_of(header, _buffers(header, bytes(data[16 + n:])))


def _exported_of(header: Any, bufs: list) -> Exported:
    """The `Exported` of a header's fields (and of its "vjp", nested, where present)."""
    _need(type(header) is dict, "an exported program")
    nvars = header.get("nvars")
    _need(type(nvars) is int and 0 <= nvars < 2 ** 31, "nvars")
    _need(type(header.get("fun_name")) is str, "fun_name")
    program = _ProgramReader(bufs, nvars).program(header.get("program"))
    in_tree = tree_util.tree_structure(_tree_from_json(header.get("in_tree")))
    out_tree = tree_util.tree_structure(_tree_from_json(header.get("out_tree")))
    in_avals = _avals(header.get("in_avals"), "in_avals")
    out_avals = _avals(header.get("out_avals"), "out_avals")
    _need(in_tree.num_leaves == len(in_avals) == len(program.in_vars) and
          out_tree.num_leaves == len(out_avals) == len(program.outs),
          "trees and avals disagree")
    get_vjp = None
    if "vjp" in header:
        vjp_exp = _exported_of(header["vjp"], bufs)
        _need(vjp_exp.in_avals == in_avals + tuple(out_avals[k] for k in _inexact(out_avals))
              and vjp_exp.out_avals == tuple(in_avals[k] for k in _inexact(in_avals)),
              "the VJP's avals disagree with the program's")
        get_vjp = lambda: vjp_exp  # noqa: E731
    return Exported(header["fun_name"], in_tree, out_tree, in_avals, out_avals, nvars,
                    program, get_vjp)


class _ProgramReader:
    """Checks and rebuilds the programs of a header (constants from ``bufs``)."""

    def __init__(self, bufs: list, nvars: int):
        self.bufs, self.nvars, self.prims = bufs, nvars, registry()

    def ref(self, r: Any) -> Any:
        if type(r) is int:
            _need(0 <= r < self.nvars, "a variable number")
            return _Var(r)
        if type(r) is dict and list(r) == ["py"]:
            value = _decode(r["py"], "a constant")
            _need(type(value) in (bool, int, float), "a constant number")
            return value
        _need(type(r) is dict and list(r) == ["buf"] and type(r["buf"]) is int
              and 0 <= r["buf"] < len(self.bufs), "a constant reference")
        return self.bufs[r["buf"]]

    def program(self, j: Any) -> _Program:
        _need(type(j) is dict and type(j.get("in_vars")) is list and type(j.get("eqns")) is
              list and type(j.get("outs")) is list, "a program")
        _need(all(type(v) is int and 0 <= v < self.nvars for v in j["in_vars"]), "in_vars")
        return _Program(j["in_vars"], [self.eqn(e) for e in j["eqns"]],
                        [self.ref(r) for r in j["outs"]])

    def eqn(self, e: Any) -> tuple:
        _need(type(e) is dict and type(e.get("params")) is dict and type(e.get("in")) is list
              and type(e.get("out")) is list, "an equation")
        name = e.get("prim")
        if name not in self.prims:
            raise ExportError(f"deserialize: unknown primitive {name!r}: this funcgrad has "
                              "no primitive of that name registered")
        if name in _CONTROL:
            _need(set(e["params"]) == {"programs", *_CONTROL_PARAMS[name]} and type(
                e["params"]["programs"]) is list, f"the params of {name}")
        params = {k: [self.program(p) for p in v] if name in _CONTROL and k == "programs"
                  else _decode(v, f"param {k!r} of {name}") for k, v in e["params"].items()}
        _need(name not in _CONTROL or all(type(params[k]) in (int, bool)
                                          for k in _CONTROL_PARAMS[name]),
              f"the params of {name}")
        _need(all(type(v) is int and -1 <= v < self.nvars for v in e["out"]), "an output var")
        return (self.prims[name], params, [self.ref(r) for r in e["in"]], e["out"])
