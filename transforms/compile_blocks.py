"""Elementwise blocks: a run of elementwise calls on large arrays of one shape, run chunk
by chunk (loop tiling), so that the values it makes and uses up stay in cache.

A gradient of an elementwise chain on 1e6 float64 elements (8 MB an array, past every
cache) spends its time moving memory: each ufunc call reads its operands from memory and
writes its result back, and the forward pass keeps every layer's residual alive until the
backward pass reads it (in arrays allocated, and page-faulted, afresh on every call).
Written as a block, the same calls run on chunks of tens of thousands of elements: each call
reads the operands' chunks, each intermediate value lives only in a scratch row, and only
the values used after the block (its *escaping* values) are written to full arrays. The
chunk is as long as `SCRATCH_BYTES` of scratch rows allow, up to `CHUNK_MAX`: each ufunc
call costs about a microsecond of Python and numpy dispatch whatever its length, and a
chain of 100 layers makes 7 calls a layer in every chunk, so that chunks of 10240 elements
spent over a tenth of the block's time in dispatch (a chunk of 40960 is 0.86x its time,
paired CPU time at 1e5 and 1e6 elements; see benchmarks/RESULTS.md, 2026-12-02). The
generated source reads::

    _f1 = v0.reshape(-1)                       # flat views of the block's inputs
    v22 = np.empty((1000000,), dt2)            # the values used after the block
    _f3 = v22.reshape(-1)
    _S4 = np.empty((101, 40960), dt2)          # scratch rows for the values it uses up
    for _i in range(0, 1000000, 40960):
        _j = _i + 40960
        _t5, _t6, ... = _S4
        mul_0(_f1[_i:_j], _f7[_i:_j], out=_t5)
        add_1(_t5, _f8[_i:_j], out=_t5)
        tanh_2(_t5, out=_t5)
        ...

The results are bit-identical to the calls on whole arrays: every call is the same
ufunc on the same elements in the same order, each element's value depends only on the
elements at its position, and numpy's loops compute an element the same wherever it falls
in an array and whether or not they write over an operand (tests/test_jit_blocks.py checks
that of every ufunc the blocks call, on this machine's SIMD loops, at misaligned offsets,
in place and with ragged tails). With one exception, which the chunks avoid: on one
element, numpy multiplies (and squares) complex numbers in place with its scalar loop,
which rounds differently from its SIMD loop; so no chunk has fewer than 2 elements (a last
chunk of one is merged into the one before). Chunks start at multiples of `CHUNK_ALIGN`
elements, so a chunk has the alignment of its array.

`schedule` finds the blocks: it moves a call that cannot join a block (a reduction, a
matmul) after the block when nothing in the block depends on it, so that, say, the loss
of ``value_and_grad`` does not split the forward pass from the backward pass.
"""
from __future__ import annotations

import math
from typing import Any, Callable

import numpy as np

from .tape import aval_of

__all__ = ["Block", "schedule", "write_block", "BLOCK_OPS", "BLOCK_MIN_SIZE"]

# the smallest block shape (elements) worth running in chunks (below it the per-chunk
# calls cost more than they save), and the least memory (bytes) the arrays a block reads
# and makes must take together: below it they stay in the last-level cache anyway (an
# optimizer's update of one weight matrix, say), and the calls on whole arrays are faster
BLOCK_MIN_SIZE = 32768
BLOCK_MIN_BYTES = 16 << 20
# the scratch rows of a block together: at most glibc's largest mmap threshold (32 MiB), so
# that the rows come from the heap again on every call instead of from fresh pages that
# fault (a few per cent of a call at 53 MiB); about a last-level cache
SCRATCH_BYTES = 32 << 20
# elements per chunk: from CHUNK_MIN (a block of very many live values: dispatch costs
# more than cache saves below it) to CHUNK_MAX (512 KiB float64 rows, half an L2 cache;
# longer chunks gained nothing measurable on chains of 10 to 100 layers)
CHUNK_MIN, CHUNK_MAX = 8192, 65536
CHUNK_ALIGN = 1024             # chunks start at multiples of this many elements
MIN_STEPS = 2                  # one call alone gains little from chunks
SCALAR_TYPES = (bool, int, float, complex)

# prim name -> (accepts(step, var_avals) -> bool, ops(writer, step, var_avals) -> micro-ops):
# a kernel written as ufunc calls for blocks (besides plain ufunc primitives). A micro-op
# is (ufunc source name, operands, dest): an operand is an int (the step's input at that
# position), a temporary ("t", k, dtype) or a source literal; dest is a temporary or
# "out", which only the last micro-op writes.
BLOCK_OPS: dict[str, tuple[Callable, Callable]] = {}


class Block:
    """Steps ``start:stop`` of a (scheduled) program: elementwise calls on ``shape``."""

    __slots__ = ("start", "stop", "shape")

    def __init__(self, start: int, stop: int, shape: tuple):
        self.start, self.stop, self.shape = start, stop, shape


def _block_shape(step: Any, var_avals: list) -> tuple | None:
    """The shape a step could be blocked on (its output's), or None: a one-output ufunc
    without params (or a `BLOCK_OPS` kernel) on arrays of its output's shape and on 0-d
    values, from `BLOCK_MIN_SIZE` elements."""
    rec = step.rec
    prim = rec.prim
    if prim.effectful or prim.multiple_results or len(step.outs) != 1 or step.free:
        return None
    impl = prim.impl
    if prim.name in BLOCK_OPS:
        if rec.params or not BLOCK_OPS[prim.name][0](step, var_avals):
            return None
    elif not (isinstance(impl, np.ufunc) and impl.nout == 1 and impl.signature is None
              and not rec.params):
        return None
    shape, dtype = var_avals[step.outs[0]]
    if not shape or math.prod(shape) < max(BLOCK_MIN_SIZE, 2) or dtype.kind not in "biufc":
        return None
    for r in step.ins:
        if r[0] == "v":
            in_shape = var_avals[r[1]][0]
        elif type(r[1]) in SCALAR_TYPES:
            continue
        else:
            in_shape = aval_of(r[1])[0]
        if in_shape != shape and in_shape != ():
            return None
    return shape


def _reads(step: Any) -> set:
    return {r[1] for r in step.ins if r[0] == "v"} | step.free


def _grow(steps: list, shapes: list, i: int) -> tuple[list, list, int]:
    """From blockable step ``i``: (the block's step indices, the indices of the steps
    moved after it, the index the scan stopped at: an effectful step or the end)."""
    shape = shapes[i]
    members, moved = [i], []
    moved_outs: set = set()
    j = i + 1
    while j < len(steps):
        step = steps[j]
        if step.rec.prim.effectful:
            break
        if shapes[j] == shape and not (_reads(step) & moved_outs):
            members.append(j)
        else:
            moved.append(j)
            moved_outs.update(step.outs)
        j += 1
    return members, moved, j


def _footprint(members: list, var_avals: list) -> int:
    """Bytes of the distinct arrays (not 0-d) the steps read or make: the memory their
    calls on whole arrays would stream through."""
    values = {r[1] for s in members for r in s.ins if r[0] == "v"}
    values.update(v for s in members for v in s.outs)
    arrays = [var_avals[v] for v in values if var_avals[v][0]]
    constants = {id(r[1]): aval_of(r[1]) for s in members for r in s.ins
                 if r[0] == "c" and type(r[1]) not in SCALAR_TYPES}
    arrays += [a for a in constants.values() if a[0]]
    return sum(math.prod(shape) * dtype.itemsize for shape, dtype in arrays)


def schedule(steps: list, var_avals: list) -> tuple[list, list[Block]]:
    """The steps reordered so that each block's steps are consecutive, and the blocks.
    A step moves only past steps that do not read it (transitively), and never past an
    effectful one."""
    shapes = [_block_shape(s, var_avals) for s in steps]
    order: list = []
    blocks: list[Block] = []

    def place(indices: list) -> None:
        k = 0
        while k < len(indices):
            i = indices[k]
            if shapes[i] is None:
                order.append(steps[i])
                k += 1
                continue
            sub = [steps[m] for m in indices]
            members, moved, stop = _grow(sub, [shapes[m] for m in indices], k)
            chosen = [sub[m] for m in members]
            if len(chosen) < MIN_STEPS or _footprint(chosen, var_avals) < BLOCK_MIN_BYTES:
                for m in members:  # not tried again: a block from one is mostly part of this
                    shapes[indices[m]] = None
                order.append(steps[i])
                k += 1
                continue
            blocks.append(Block(len(order), len(order) + len(members), shapes[i]))
            order.extend(sub[m] for m in members)
            place([indices[m] for m in moved])
            k = stop

    place(list(range(len(steps))))
    return order, blocks


class _Slots:
    """Scratch rows of one block, per dtype: a row is taken by a value (or a temporary)
    and given back after its last use."""

    def __init__(self, w: Any):
        self.w = w
        self.rows: dict = {}   # dtype -> row names
        self.free: dict = {}   # dtype -> free row names

    def take(self, dtype: np.dtype) -> str:
        free = self.free.setdefault(dtype, [])
        if free:
            return free.pop()
        name = self.w.local("t")
        self.rows.setdefault(dtype, []).append(name)
        return name

    def give(self, dtype: np.dtype, row: str) -> None:
        self.free.setdefault(dtype, []).append(row)


def _chunk(slots: _Slots, n: int) -> int:
    """Elements per chunk: the scratch rows within `SCRATCH_BYTES`, clamped, and no more
    than the block's ``n`` elements (its scratch rows no longer than the arrays)."""
    per_element = sum(len(r) * d.itemsize for d, r in slots.rows.items()) or 1
    c = SCRATCH_BYTES // per_element // CHUNK_ALIGN * CHUNK_ALIGN
    return min(n, max(CHUNK_MIN, min(CHUNK_MAX, c)))


def _in_aval(step: Any, k: int, var_avals: list) -> tuple:
    r = step.ins[k]
    return var_avals[r[1]] if r[0] == "v" else aval_of(r[1])


def _micro_ops(w: Any, step: Any, var_avals: list) -> list:
    kernel = BLOCK_OPS.get(step.rec.prim.name)
    if kernel is not None:
        return kernel[1](w, step, var_avals)
    return [(w.impl(step.rec), list(range(len(step.ins))), "out")]


class _BlockWriter:
    """The state of one block being written: the flat views of its arrays (``head``:
    the lines before the loop), its scratch rows and which value holds which."""

    def __init__(self, w: Any, block: Block, steps: list, last: dict, var_avals: list):
        self.w, self.block, self.last, self.var_avals = w, block, last, var_avals
        self.members = steps[block.start:block.stop]
        self.made = {v for s in self.members for v in s.outs}
        self.escaping = {v for v in self.made if last.get(v, -1) >= block.stop}
        self.head: list[str] = []
        self.body: list[str] = []
        self.flats: dict = {}  # an input's or escaping value's key -> its flat view
        self.slots = _Slots(w)
        self.where: dict = {}  # internal value -> its scratch row

    def flat(self, key: Any, source: str) -> str:
        """A 1-d view of an array of the block's shape (a copy where its layout has none:
        the same values)."""
        if key not in self.flats:
            if len(self.block.shape) == 1:
                self.flats[key] = source
            else:
                self.flats[key] = self.w.local("f")
                self.head.append(f"{self.flats[key]} = {source}.reshape(-1)")
        return self.flats[key]

    def operand(self, r: tuple, src: str) -> str:
        """The source of a step's input in the loop: a scratch row, a chunk of a full
        array, or (0-d values and numbers) the value itself."""
        if r[0] == "v":
            if r[1] in self.where:
                return self.where[r[1]]
            if self.var_avals[r[1]][0]:
                return f"{self.flat(r[1], src)}[_i:_j]"
        elif type(r[1]) not in SCALAR_TYPES and aval_of(r[1])[0]:
            return f"{self.flat(('c', id(r[1])), src)}[_i:_j]"
        return src

    def escape(self, v: int, k: int, read: list, claim: Callable) -> str:
        """The chunk of the full array escaping value ``v`` is written into: a claimed
        dead input's buffer, or a new one."""
        dtype = self.var_avals[v][1]
        fresh = f"np.empty({self.block.shape!r}, {self.w.name_of(dtype, 'dt')})"
        reused = claim(v, k, read)
        if reused is None:
            self.head.append(f"v{v} = {fresh}")
        elif len(self.block.shape) == 1:
            self.head.append(f"v{v} = v{reused}")
        else:  # written through a flat view: only a C-contiguous buffer has one
            self.head.append(f"v{v} = v{reused} if v{reused}.flags.c_contiguous else {fresh}")
        return f"{self.flat(v, f'v{v}')}[_i:_j]"

    def step(self, k: int, step: Any, ins: list, read: list, claim: Callable) -> None:
        """The calls of step ``k`` (its inputs' source names ``ins``) in the loop body."""
        operands = [self.operand(r, src) for r, src in zip(step.ins, ins)]
        out_v = step.outs[0]
        dtype = self.var_avals[out_v][1]
        dying = [r[1] for r in step.ins
                 if r[0] == "v" and r[1] in self.where and self.last[r[1]] == k]
        ops = _micro_ops(self.w, step, self.var_avals)
        temps: dict = {}
        for _, _, dest in ops[:-1]:
            if dest not in temps:
                temps[dest] = self.slots.take(dest[2])
        if out_v in self.escaping:
            out = self.escape(out_v, k, read, claim)
        else:
            out = _row_for(out_v, dtype, dying, temps, self.where, self.slots,
                           self.var_avals)
        for fn, args, dest in ops:
            srcs = [operands[a] if type(a) is int else temps[a] if type(a) is tuple
                    else a for a in args]
            self.body.append(f"{fn}({', '.join(srcs)}, "
                             f"out={out if dest == 'out' else temps[dest]})")
        for v in dying:
            if v in self.where:
                self.slots.give(self.var_avals[v][1], self.where.pop(v))
        for t, row in temps.items():
            if row != out:
                self.slots.give(t[2], row)


def write_block(w: Any, block: Block, steps: list, names: list, last: dict,
                var_avals: list, claim: Callable, indent: str) -> set:
    """Write the loop of ``block`` (its steps' input source names ``names``, one list per
    step); return its escaping values (used after it: written to full arrays).
    ``claim(v, k, candidates)``: the input among ``candidates`` whose buffer escaping
    value ``v``, made by step ``k``, may be written into (its last use is at most ``k``:
    each chunk of it is read before the same chunk of ``v`` is written), or None."""
    bw = _BlockWriter(w, block, steps, last, var_avals)
    read: list = []  # the block's inputs read so far (buffers an escaping value may take)
    for k, step, ins in zip(range(block.start, block.stop), bw.members, names):
        read += [r[1] for r in step.ins if r[0] == "v" and r[1] not in bw.made
                 and r[1] not in read]
        bw.step(k, step, ins, read, claim)
    _emit(w, block, bw.head, bw.body, bw.slots, math.prod(block.shape), indent)
    return bw.escaping


def _row_for(v: int, dtype: np.dtype, dying: list, temps: dict, where: dict,
             slots: _Slots, var_avals: list) -> str:
    """The scratch row internal value ``v`` is written into: that of an input whose last
    use this is, or of one of the step's temporaries (the last micro-op writes ``out``
    after every read of them, elementwise), or a new one."""
    for u in dying:
        if u in where and var_avals[u][1] == dtype:
            row = where.pop(u)
            break
    else:
        row = next((r for t, r in temps.items() if t[2] == dtype), None) or slots.take(dtype)
    where[v] = row
    return row


def _emit(w: Any, block: Block, head: list, body: list, slots: _Slots, n: int,
          indent: str) -> None:
    chunk = _chunk(slots, n)
    calls = block.stop - block.start
    w.emit(indent, f"# elementwise block: {calls} calls on {block.shape}, in chunks of "
                   f"{chunk}")
    for line in head:
        w.emit(indent, line)
    last = (n - 2) // chunk * chunk  # the last chunk's start: it has at least 2 elements
    scratch = []  # (the rows' array for a chunk, the allocated one, the row names)
    for dtype, rows in slots.rows.items():
        s = w.local("S")
        full = s if n - last <= chunk else w.local("W")  # a last chunk 1 longer
        scratch.append((s, full, rows))
        w.emit(indent, f"{full} = np.empty(({len(rows)}, {max(chunk, n - last)}), "
                       f"{w.name_of(dtype, 'dt')})")
        if full != s:
            w.emit(indent, f"{s} = {full}[:, :{chunk}]")
    inner = indent + "    "
    w.emit(indent, f"for _i in range(0, {last + 1}, {chunk}):")
    w.emit(inner, f"_j = _i + {chunk}")
    if n - last != chunk:
        w.emit(inner, f"if _i == {last}:  # the last chunk: the rest")
        w.emit(inner + "    ", f"_j = {n}")
        for s, full, _ in scratch:
            w.emit(inner + "    ", f"{s} = {full}[:, :{n - last}]")
    for s, _, rows in scratch:
        w.emit(inner, f"{', '.join(rows)}, = {s}")
    for line in body:
        w.emit(inner, line)


def _tanh_backward_accepts(step: Any, var_avals: list) -> bool:
    """``y`` of the output's shape: ``y*y`` on 0-d values is a numpy scalar (whose loops
    may round differently)."""
    return _in_aval(step, 1, var_avals)[0] == var_avals[step.outs[0]][0]


def _tanh_backward_ops(w: Any, step: Any, var_avals: list) -> list:
    """``g * (1 - y*y)`` in the order `kernels.tanh_backward` computes it (``1``
    converted once to an inexact ``y``'s dtype, see `Writer.typed_number`)."""
    y_dtype = _in_aval(step, 1, var_avals)[1]
    one = w.typed_number(1, y_dtype) if y_dtype.kind in "fc" else "1"
    d = ("t", 0, y_dtype)
    mul, sub = w.name_of(np.multiply, "multiply"), w.name_of(np.subtract, "subtract")
    return [(mul, [1, 1], d), (sub, [one, d], d), (mul, [0, d], "out")]


BLOCK_OPS["tanh_backward"] = (_tanh_backward_accepts, _tanh_backward_ops)
