"""``torch.jit.save`` / ``torch.jit.load``: a scripted module or function in one zip file
of funcgrad's own format, loaded and run without the Python source that defined it.

The archive holds ``archive/funcgrad_script.json`` (format name and version, the module
tree or the function, every graph as `archive` data, and per tensor its dtype and shape)
and ``archive/tensors/<k>``: tensor k's bytes, little-endian, C order. Nothing in it is
pickled or evaluated: the JSON is parsed, the arrays read with ``np.frombuffer`` from an
allow-list of dtypes, the graphs checked by `archive.GraphReader`, facade modules rebuilt
from `stored.BUILTIN_CLASSES`. A program calling Python (``@torch.jit.ignore``) is refused
when saved, as TorchScript refuses to export it.
"""
from __future__ import annotations

import json
import linecache
import math
import os
import zipfile
from typing import Any

import numpy as np

import funcgrad.numpy as fnp
from funcgrad.dtypes import canonical_dtype
from funcgrad.torch._script import ScriptFunction, ScriptModule
from funcgrad.torch._script.archive import ArchiveError, GraphReader, TensorStore, \
    graph_to_data
from funcgrad.torch._script.stored import ModuleBuilder, StoredProgram, attribute_names, \
    module_to_data
from funcgrad.torch._tensor import make

__all__ = ["save", "load", "describe", "read", "RECORD", "FORMAT"]

RECORD = "archive/funcgrad_script.json"
FORMAT, VERSION = "funcgrad.jit", 1
_DTYPES = frozenset({"bool", "int8", "uint8", "int16", "int32", "int64", "float16",
                     "bfloat16", "float32", "float64", "complex64", "complex128"})


def _refuse_python_calls(graphs: list, scripted_methods: dict) -> None:
    """TorchScript's export error for a call into Python: an ``@ignore``'d function
    (``prim::PythonOp``) or an ``@ignore``'d method (a call of a method of a scripted
    class that has no graph)."""
    for graph in graphs:
        for node in graph.block.walk():
            name = None
            if node.kind == "prim::PythonOp":
                name = node.attrs["name"]
            elif node.kind == "prim::CallMethod":
                cls = node.inputs[0].type.name
                if not cls.startswith("torch.nn.modules.") and node.attrs["name"] not in \
                        scripted_methods.get(cls, ()):
                    name = node.attrs["name"]
            if name is not None:
                where = ""
                if node.loc:
                    line = linecache.getline(node.loc[0], node.loc[1]).rstrip()
                    where = f'  File "{node.loc[0]}", line {node.loc[1]}\n{line}\n'
                raise RuntimeError(f"\nCould not export Python function call '{name}'. "
                                   "Remove calls to Python functions before export. Did you "
                                   "forget to add @script or @script_method annotation? If "
                                   "this is a nn.ModuleList, add it to __constants__:\n"
                                   f"{where}")


def describe(obj: Any, store: TensorStore) -> dict:
    """The JSON description of a scripted module or function."""
    if isinstance(obj, ScriptModule):
        ctx = obj._ctx
        if obj._graphs.get("forward") is None:
            raise RuntimeError("torch.jit.save: a scripted facade module (with no compiled "
                               "forward) cannot be saved; script a module that uses it")
        classes: dict = {}
        for m in obj._orig.modules():
            own = {name for (oid, name), g in ctx.methods.items() if oid == id(m) and g}
            classes.setdefault(getattr(m, "_type_name", type(m).__qualname__), set()).update(
                own)
        _refuse_python_calls([g for g in ctx.methods.values() if g is not None]
                             + list(ctx.graphs.values()), classes)
        head = {"kind": "module", "methods": list(obj._graphs),
                "module": module_to_data(obj._orig, ctx, store)}
    elif isinstance(obj, ScriptFunction):
        _refuse_python_calls(list(obj._ctx.graphs.values()), {})
        head = {"kind": "function", "main": obj.graph.qualname}
    else:
        raise RuntimeError(f"torch.jit.save: only modules and functions compiled by "
                           f"torch.jit.script can be saved, not {type(obj).__name__} (a "
                           "traced or compiled program is a tape of its inputs' shapes; "
                           "script it with torch.jit.script to save it)")
    head["functions"] = [graph_to_data(g, store) for g in obj._ctx.graphs.values()]
    return {"format": FORMAT, "version": VERSION, **head}


def save(m: Any, f: Any, _extra_files: dict | None = None) -> None:
    """Write scripted ``m`` to ``f`` (a path or a binary file) in funcgrad's format."""
    store = TensorStore()
    desc = describe(m, store)
    arrays = [np.asarray(t.detach().numpy()) for t in store.tensors]
    desc["tensors"] = [{"dtype": a.dtype.name, "shape": list(a.shape)} for a in arrays]
    with zipfile.ZipFile(f, "w", zipfile.ZIP_STORED) as zf:
        zf.writestr(RECORD, json.dumps(desc))
        for k, a in enumerate(arrays):
            little = a.astype(a.dtype.newbyteorder("<"), copy=False) if \
                a.dtype.byteorder == ">" else a
            zf.writestr(f"archive/tensors/{k}", np.ascontiguousarray(little).tobytes())
        for name, data in (_extra_files or {}).items():
            zf.writestr(f"archive/extra/{name}", data)


def _file_name(f: Any) -> str:
    return os.fspath(f) if isinstance(f, (str, os.PathLike)) else getattr(f, "name",
                                                                           repr(f))


def _tensors(zf: zipfile.ZipFile, records: Any) -> TensorStore:
    if not isinstance(records, list):
        raise ArchiveError("'tensors' is not a list")
    out = []
    for k, r in enumerate(records):
        if not isinstance(r, dict) or r.get("dtype") not in _DTYPES or not isinstance(
                r.get("shape"), list) or not all(isinstance(n, int) and n >= 0 for n in
                                                 r["shape"]):
            raise ArchiveError(f"tensor {k} has a malformed record {str(r)[:80]}")
        dtype = canonical_dtype(r["dtype"]).newbyteorder("<")
        try:
            raw = zf.read(f"archive/tensors/{k}")
        except KeyError:
            raise ArchiveError(f"tensor {k}'s bytes are missing") from None
        if len(raw) != math.prod(r["shape"]) * dtype.itemsize:
            raise ArchiveError(f"tensor {k} has {len(raw)} bytes, not the "
                               f"{math.prod(r['shape']) * dtype.itemsize} of its shape")
        a = np.frombuffer(raw, dtype).reshape(r["shape"]).astype(dtype.newbyteorder("="))
        out.append(make(fnp.asarray(a)))
    return TensorStore(out)


def read(desc: Any, store: TensorStore) -> Any:
    if not isinstance(desc, dict) or desc.get("format") != FORMAT:
        raise ArchiveError("it is not a funcgrad torch.jit.save archive")
    if desc.get("version") != VERSION:
        raise ArchiveError(f"format version {desc.get('version')!r} is not supported "
                           f"(this funcgrad reads version {VERSION})")
    prog = StoredProgram()
    functions = desc.get("functions", [])
    names = {g.get("qualname") for g in functions if isinstance(g, dict)} if isinstance(
        functions, list) else set()
    if desc.get("kind") == "function":
        reader = GraphReader(store, names, lambda name: False)
        for g in functions:
            prog.add_function(reader.graph(g))
        main = prog.graphs.get(desc.get("main"))
        if main is None:
            raise ArchiveError(f"the main function {desc.get('main')!r} is not stored")
        return ScriptFunction._from_graph(main, prog)
    if desc.get("kind") != "module":
        raise ArchiveError(f"unknown archive kind {desc.get('kind')!r}")
    builder = ModuleBuilder(store)
    root = builder.build(desc.get("module"))
    allowed = attribute_names(root)
    reader = GraphReader(store, names, allowed.__contains__)
    for g in functions:
        prog.add_function(reader.graph(g))
    for obj, name, g in builder.methods:
        prog.add_method(obj, name, reader.graph(g))
    methods = desc.get("methods")
    if not isinstance(methods, list) or "forward" not in methods or any(
            prog.method(root, m) is None for m in methods):
        raise ArchiveError("the module's methods are missing")
    return ScriptModule(root, prog, methods)


def load(f: Any, map_location: Any = None, _extra_files: dict | None = None) -> Any:
    """A scripted module or function saved by `save` (tensors on the CPU, funcgrad's
    device, whatever ``map_location`` says)."""
    name = _file_name(f)
    try:
        zf = zipfile.ZipFile(f)
    except (zipfile.BadZipFile, OSError, ValueError) as e:
        raise ArchiveError(f"torch.jit.load: {name}: not a zip archive written by "
                           f"torch.jit.save ({e})") from None
    with zf:
        names = zf.namelist()
        if RECORD not in names:
            kind = ("a TorchScript archive of PyTorch (pickled code), which funcgrad does "
                    "not run" if any(n.endswith("/constants.pkl") for n in names) else
                    f"an archive without {RECORD}")
            raise ArchiveError(f"torch.jit.load: {name}: {kind}; torch.jit.load reads "
                               "files written by funcgrad's torch.jit.save")
        try:
            desc = json.loads(zf.read(RECORD))
            store = _tensors(zf, desc.get("tensors", []) if isinstance(desc, dict) else None)
            out = read(desc, store)
            for extra in (_extra_files or {}):
                _extra_files[extra] = zf.read(f"archive/extra/{extra}")
        except (ArchiveError, ValueError, KeyError, TypeError, AttributeError) as e:
            raise ArchiveError(f"torch.jit.load: {name}: malformed archive: {e}") from None
    return out

