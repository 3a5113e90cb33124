"""torch.distributed's collectives and point-to-point messages on facade tensors.

As in PyTorch, these are not autograd operations: they write their results into the
tensors they are given, in place and without recording anything (``tensor.copy_`` under
no_grad, so the tensor keeps its ``grad_fn`` and its version counter moves on). For
differentiable collectives use funcgrad.distributed (psum, all_gather, ...), which are
registry primitives. Values are read with ``tensor.detach().numpy()`` (a view, no copy)
and every operation runs on the group's transport. With ``async_op=True`` an operation
starts and returns a `Work`; its results are written when the work is waited for.
"""
from __future__ import annotations

from typing import Any, Callable

import numpy as np

from funcgrad.array import new_array
from funcgrad.primitives.kernels.collectives import Pending
from funcgrad.torch._dispatch import apply
from funcgrad.torch._tensor import Tensor
from funcgrad.torch._runtime.grad_mode import no_grad
from funcgrad.torch.futures import Future
from ._groups import TRANSPORT_OP, ProcessGroup, ReduceOp, not_in_group, resolve

__all__ = ["Work", "all_reduce", "reduce", "broadcast", "all_gather", "all_gather_into_tensor",
           "reduce_scatter", "reduce_scatter_tensor", "scatter", "gather", "barrier",
           "send", "recv", "isend", "irecv", "values_of", "write",
           "tensor_of"]


# -- tensor data ---------------------------------------------------------------------------

def values_of(t: Tensor) -> np.ndarray:
    """The tensor's values as a numpy array (a view of its memory on the CPU, which the
    collectives only read)."""
    d = t.detach() if t.requires_grad else t  # (detach only to be allowed numpy())
    return (d.cpu() if d.is_cuda else d).numpy()


def _as_tensor(values: np.ndarray) -> Tensor:
    return apply("c10d", lambda: new_array(values), [])


def tensor_of(values: np.ndarray) -> Tensor:
    """A tensor holding ``values`` (not copied: nothing writes them afterwards)."""
    with no_grad():
        return _as_tensor(values)


def write(t: Tensor, values: np.ndarray) -> None:
    """Overwrite ``t`` with ``values`` in place (its own memory, its version counter moves
    on, as after PyTorch's collectives), recording nothing."""
    with no_grad():
        t.copy_(_as_tensor(values))


# -- argument checks (PyTorch's texts) ----------------------------------------------------------

def _check_single_tensor(param: Any, param_name: str) -> None:
    if not isinstance(param, Tensor):
        raise TypeError(f"Invalid function argument. Expected parameter `{param_name}` of "
                        f"type torch.Tensor\n             but got {type(param)} instead.")


def _check_tensor_list(param: Any, param_name: str) -> None:
    if not isinstance(param, list):
        raise TypeError(f"Invalid function argument. Expected parameter `{param_name}` of "
                        f"type List[torch.Tensor]\n             but got {type(param)} "
                        "instead.")
    if not all(isinstance(p, Tensor) for p in param):
        raise TypeError(f"Invalid function argument. Expected parameter `{param_name}` of "
                        f"type List[torch.Tensor]\n             but got {type(param)} with "
                        f"elements of type {[type(p) for p in param]}.")


def _group_rank(g: ProcessGroup, global_rank: int | None, group_rank: int | None) -> int:
    if group_rank is not None:
        if global_rank is not None:
            raise ValueError("Can't specify both group_rank and global_rank")
        if not 0 <= group_rank < g.size():
            raise ValueError(f"Group rank {group_rank} is not part of group {g}")
        return int(group_rank)
    if global_rank is None:
        raise ValueError("Must specify global_rank or group_rank")
    return g.group_rank(int(global_rank))


def _not_self(g: ProcessGroup, rank: int, kind: str) -> None:
    if g.rank() == rank:
        raise ValueError(f"Invalid {kind} rank: {kind} rank should not be the same as the "
                         "rank of the current process.")


_DENIED_ON_COMPLEX = (ReduceOp.MAX, ReduceOp.MIN, ReduceOp.PRODUCT, ReduceOp.BAND,
                      ReduceOp.BOR, ReduceOp.BXOR)
_TORCH_NAME = {"b": "Bool", "u1": "Byte", "i1": "Char", "i2": "Short", "i4": "Int",
               "i8": "Long"}


def _reduction(op: Any, values: np.ndarray, what: str) -> tuple[str, bool]:
    """(the transport's reduction, whether to average) for ``op`` on ``values``."""
    try:
        entry = TRANSPORT_OP.get(op)  # (a ReduceOp, or its number)
    except TypeError:  # unhashable
        entry = None
    if entry is None:
        raise TypeError(f"{what}: op must be a torch.distributed.ReduceOp (e.g. "
                        f"ReduceOp.SUM), got {op!r}")
    name, average = entry
    kind = values.dtype.kind
    if kind == "c" and op in _DENIED_ON_COMPLEX:
        raise ValueError(f"{what} does not support {ReduceOp.RedOpType(op)} on complex "
                         "tensors")
    if average and kind not in "fc":
        kind = "b" if values.dtype.kind == "b" else f"{values.dtype.kind}{values.itemsize}"
        raise RuntimeError(f"result type Float can't be cast to the desired output type "
                           f"{_TORCH_NAME.get(kind, values.dtype.name)}")
    return name, average


def _prefix(g: ProcessGroup) -> str:
    return "ProcessGroupGloo" if g.backend == "gloo" else "ProcessGroupMPI"


def _size_text(shape: tuple) -> str:
    return "(" + ", ".join(str(n) for n in shape) + ")"


# -- work handles -------------------------------------------------------------------------------

class Work:
    """A started operation (``async_op=True``): ``wait()`` completes it and writes its
    results into the output tensors. (``wait``'s ``timeout`` is accepted; the group's
    watchdog bounds every operation.)"""

    def __init__(self, pending: Pending, finish: Callable[[Any], None], outputs: list):
        self._pending = pending
        self._finish = finish
        self._outputs = outputs
        self._completed = False
        self._error: BaseException | None = None
        self._futures: list[Future] = []

    def wait(self, timeout: Any = None) -> bool:
        if not self._completed:
            try:
                self._finish(self._pending.wait())
            except BaseException as e:  # kept: every wait() and the futures re-raise it
                self._error = e
            self._completed = True
            for fut in self._futures:
                self._settle(fut)
        if self._error is not None:
            raise self._error
        return True

    def _settle(self, fut: Future) -> None:
        if self._error is not None:
            fut.set_exception(self._error)
        else:
            fut.set_result(list(self._outputs))

    def is_completed(self) -> bool:
        return self._completed or self._pending.done()

    def is_success(self) -> bool:
        return self.is_completed() and self._error is None

    def exception(self) -> BaseException | None:
        return self._error

    def result(self) -> list:
        self.wait()
        return list(self._outputs)

    def synchronize(self) -> None:
        self.wait()

    def get_future(self) -> Future:
        """A future completed with the output tensors when this work completes."""
        fut: Future = Future(complete=self.wait)
        if self._completed:
            self._settle(fut)
        else:
            self._futures.append(fut)
        return fut

    def __repr__(self) -> str:
        return f"<funcgrad.torch.distributed.Work ({'done' if self._completed else 'pending'})>"


def _run(async_op: bool, start: Callable[[bool], Any], finish: Callable[[Any], None],
         outputs: list) -> Work | None:
    """Run ``start(block)`` and ``finish(result)`` now, or hand them to a `Work`."""
    if not async_op:
        finish(start(True))
        return None
    return Work(start(False), finish, outputs)


def _averaged(out: np.ndarray, average: bool, size: int) -> np.ndarray:
    return np.divide(out, size, out=out) if average else out


# -- collectives ---------------------------------------------------------------------------------

def all_reduce(tensor: Tensor, op: Any = ReduceOp.SUM, group: Any = None,
               async_op: bool = False) -> Work | None:
    """Reduce ``tensor`` over the group; every rank gets the result, in place."""
    _check_single_tensor(tensor, "tensor")
    g = resolve(group)
    if g is None:
        return not_in_group("all_reduce")
    values = values_of(tensor)
    name, average = _reduction(op, values, "all_reduce")
    if not async_op:  # the common call, without the closures `_run` takes
        write(tensor, _averaged(g.transport.allreduce(values, name), average, g.size()))
        return None
    return _run(async_op, lambda block: g.transport.allreduce(values, name, block=block),
                lambda out: write(tensor, _averaged(out, average, g.size())), [tensor])


def reduce(tensor: Tensor, dst: int | None = None, op: Any = ReduceOp.SUM, group: Any = None,
           async_op: bool = False, group_dst: int | None = None) -> Work | None:
    """Reduce ``tensor`` over the group into ``tensor`` of rank ``dst`` only."""
    _check_single_tensor(tensor, "tensor")
    g = resolve(group)
    if g is None:
        return not_in_group("reduce")
    root = _group_rank(g, dst, group_dst)
    values = values_of(tensor)
    name, average = _reduction(op, values, "reduce")

    def finish(out: Any) -> None:
        if out is not None:
            write(tensor, _averaged(out, average, g.size()))
    return _run(async_op, lambda block: g.transport.reduce(values, root, name, block=block),
                finish, [tensor])


def broadcast(tensor: Tensor, src: int | None = None, group: Any = None,
              async_op: bool = False, group_src: int | None = None) -> Work | None:
    """``tensor`` of rank ``src`` (a global rank) copied into ``tensor`` on every rank."""
    _check_single_tensor(tensor, "tensor")
    g = resolve(group)
    if g is None:
        return not_in_group("broadcast")
    root = _group_rank(g, src, group_src)
    values = values_of(tensor)

    def finish(out: np.ndarray) -> None:
        if g.rank() != root:
            write(tensor, out)
    return _run(async_op, lambda block: g.transport.broadcast(values, root, block=block),
                finish, [tensor])


def all_gather(tensor_list: list, tensor: Tensor, group: Any = None,
               async_op: bool = False) -> Work | None:
    """``tensor_list[r]`` = rank r's ``tensor``, on every rank."""
    _check_tensor_list(tensor_list, "tensor_list")
    _check_single_tensor(tensor, "tensor")
    g = resolve(group)
    if g is None:
        return not_in_group("all_gather")
    if len(tensor_list) != g.size():
        raise RuntimeError(f"{_prefix(g)}::allgather: invalid output tensor list at index 0 "
                           f"(expected length {g.size()}, got {len(tensor_list)})")
    values = values_of(tensor)
    for i, t in enumerate(tensor_list):
        if tuple(t.shape) != values.shape:
            raise RuntimeError(f"{_prefix(g)}::allgather: invalid tensor size at index {i} "
                               f"(expected {_size_text(values.shape)}, got "
                               f"{_size_text(tuple(t.shape))})")

    def finish(out: np.ndarray) -> None:
        for t, piece in zip(tensor_list, out):
            write(t, piece)
    return _run(async_op, lambda block: g.transport.allgather(values, block=block), finish,
                tensor_list)


def all_gather_into_tensor(output_tensor: Tensor, input_tensor: Tensor, group: Any = None,
                           async_op: bool = False) -> Work | None:
    """Every rank's ``input_tensor``, concatenated along dimension 0 (or stacked, if
    ``output_tensor`` has shape ``(world_size, *input.shape)``) into ``output_tensor``."""
    _check_single_tensor(output_tensor, "output_tensor")
    _check_single_tensor(input_tensor, "input_tensor")
    g = resolve(group)
    if g is None:
        return not_in_group("all_gather_into_tensor")
    values = values_of(input_tensor)
    out_shape = tuple(output_tensor.shape)
    joined = (g.size() * values.shape[0],) + values.shape[1:] if values.ndim else (g.size(),)
    if out_shape not in (joined, (g.size(),) + values.shape):
        raise RuntimeError(f"{_prefix(g)}::allgather: invalid tensor size at index 0 "
                           f"(expected {_size_text(joined)}, got {_size_text(out_shape)})")
    return _run(async_op, lambda block: g.transport.allgather(values, block=block),
                lambda out: write(output_tensor, out.reshape(out_shape)), [output_tensor])


def reduce_scatter_tensor(output: Tensor, input: Tensor, op: Any = ReduceOp.SUM,
                          group: Any = None, async_op: bool = False) -> Work | None:
    """Block r (along dimension 0) of the reduction of every rank's ``input``, into
    rank r's ``output``; ``input`` is ``world_size`` times ``output`` (concatenated, or
    stacked as ``(world_size, *output.shape)``)."""
    _check_single_tensor(output, "output")
    _check_single_tensor(input, "input")
    g = resolve(group)
    if g is None:
        return not_in_group("reduce_scatter_tensor")
    values = values_of(input)
    out_shape = tuple(output.shape)
    joined = (g.size() * out_shape[0],) + out_shape[1:] if out_shape else (g.size(),)
    if values.shape not in (joined, (g.size(),) + out_shape):
        raise ValueError(f"reduce_scatter_tensor: the input tensor must be world_size "
                         f"({g.size()}) times the output tensor {_size_text(out_shape)} "
                         f"along dimension 0, i.e. {_size_text(joined)}; got "
                         f"{_size_text(values.shape)}")
    name, average = _reduction(op, values, "reduce_scatter_tensor")
    blocks = values.reshape((g.size(),) + out_shape)
    return _run(async_op,
                lambda block: g.transport.reduce_scatter(blocks, name, block=block),
                lambda out: write(output, _averaged(out, average, g.size())), [output])


def reduce_scatter(output: Tensor, input_list: list, op: Any = ReduceOp.SUM,
                   group: Any = None, async_op: bool = False) -> Work | None:
    """``output`` of rank r = the reduction of every rank's ``input_list[r]``."""
    _check_single_tensor(output, "output")
    _check_tensor_list(input_list, "input_list")
    g = resolve(group)
    if g is None:
        return not_in_group("reduce_scatter")
    if len(input_list) != g.size() or any(tuple(t.shape) != tuple(output.shape)
                                           for t in input_list):
        raise ValueError(f"reduce_scatter: input_list must hold world_size ({g.size()}) "
                         f"tensors shaped like the output {_size_text(tuple(output.shape))}")
    values = np.stack([values_of(t) for t in input_list])
    name, average = _reduction(op, values, "reduce_scatter")
    return _run(async_op,
                lambda block: g.transport.reduce_scatter(values, name, block=block),
                lambda out: write(output, _averaged(out, average, g.size())), [output])


def scatter(tensor: Tensor, scatter_list: list | None = None, src: int | None = None,
            group: Any = None, async_op: bool = False,
            group_src: int | None = None) -> Work | None:
    """``tensor`` of rank r = ``scatter_list[r]`` of rank ``src``."""
    _check_single_tensor(tensor, "tensor")
    if scatter_list:
        _check_tensor_list(scatter_list, "scatter_list")
    g = resolve(group)
    if g is None:
        return not_in_group("scatter")
    root = _group_rank(g, 0 if src is None and group_src is None else src, group_src)
    mine = values_of(tensor)
    stacked = None
    if g.rank() == root:
        if not scatter_list:
            raise ValueError("Argument ``scatter_list`` must be specified on source rank.")
        if len(scatter_list) != g.size():
            raise RuntimeError(f"{_prefix(g)}::scatter: Incorrect input list size "
                               f"{len(scatter_list)}. Input list size should be {g.size()}, "
                               "same as size of the process group.")
        stacked = np.stack([values_of(t) for t in scatter_list]).astype(mine.dtype,
                                                                       copy=False)
        if stacked.shape[1:] != mine.shape:
            raise RuntimeError(f"{_prefix(g)}::scatter: invalid tensor size in scatter_list "
                               f"(expected {_size_text(mine.shape)}, got "
                               f"{_size_text(stacked.shape[1:])})")
    elif scatter_list:
        raise ValueError("Argument ``scatter_list`` must NOT be specified on non-source "
                         "ranks.")
    return _run(async_op, lambda block: g.transport.scatter(stacked, root, mine.shape,
                                                             mine.dtype, block=block),
                lambda out: write(tensor, out), [tensor])


def gather(tensor: Tensor, gather_list: list | None = None, dst: int | None = None,
           group: Any = None, async_op: bool = False,
           group_dst: int | None = None) -> Work | None:
    """``gather_list[r]`` of rank ``dst`` = rank r's ``tensor``."""
    _check_single_tensor(tensor, "tensor")
    if gather_list:
        _check_tensor_list(gather_list, "gather_list")
    g = resolve(group)
    if g is None:
        return not_in_group("gather")
    root = _group_rank(g, 0 if dst is None and group_dst is None else dst, group_dst)
    if g.rank() == root:
        if not gather_list:
            raise ValueError("Argument ``gather_list`` must be specified on destination "
                             "rank.")
        if len(gather_list) != g.size():
            raise RuntimeError(f"{_prefix(g)}::gather: Incorrect output list size "
                               f"{len(gather_list)}. Output list size should be {g.size()}, "
                               "same as size of the process group.")
    elif gather_list:
        raise ValueError("Argument ``gather_list`` must NOT be specified on non-destination "
                         "ranks.")
    values = values_of(tensor)

    def finish(out: Any) -> None:
        if out is not None:
            for t, piece in zip(gather_list, out):
                write(t, piece)
    return _run(async_op, lambda block: g.transport.gather(values, root, block=block), finish,
                list(gather_list or []))


def barrier(group: Any = None, async_op: bool = False, device_ids: Any = None
            ) -> Work | None:
    """Wait until every rank of the group has reached the barrier."""
    g = resolve(group)
    if g is None:
        return not_in_group("barrier")
    return _run(async_op, lambda block: g.transport.barrier(block=block), lambda out: None,
                [])


# -- point to point -------------------------------------------------------------------------

def isend(tensor: Tensor, dst: int | None = None, group: Any = None, tag: int = 0,
          group_dst: int | None = None) -> Work | None:
    """Start sending ``tensor`` to rank ``dst``."""
    _check_single_tensor(tensor, "tensor")
    g = resolve(group)
    if g is None:
        return not_in_group("isend")
    peer = _group_rank(g, dst, group_dst)
    _not_self(g, peer, "destination")
    return Work(g.transport.send(values_of(tensor), peer, tag), lambda out: None, [tensor])


def irecv(tensor: Tensor, src: int | None = None, group: Any = None, tag: int = 0,
          group_src: int | None = None) -> Work | None:
    """Start receiving into ``tensor`` from rank ``src`` (any rank if None)."""
    _check_single_tensor(tensor, "tensor")
    g = resolve(group)
    if g is None:
        return not_in_group("irecv")
    peer = None if src is None and group_src is None else _group_rank(g, src, group_src)
    if peer is not None:
        _not_self(g, peer, "source")
    like = values_of(tensor)
    return _RecvWork(g.transport.recv(like.shape, like.dtype, peer, tag), tensor, g.ranks)


class _RecvWork(Work):
    """A receive: writes the message into the tensor and keeps the sender's rank."""

    def __init__(self, pending: Pending, tensor: Tensor, ranks: list):
        super().__init__(pending, self._deliver, [tensor])
        self.source = -1
        self._ranks = ranks

    def _deliver(self, got: tuple) -> None:
        values, source = got
        write(self._outputs[0], values)
        self.source = self._ranks[source]

    def _source_rank(self) -> int:
        self.wait()
        return self.source


def send(tensor: Tensor, dst: int | None = None, group: Any = None, tag: int = 0,
         group_dst: int | None = None) -> None:
    """Send ``tensor`` to rank ``dst`` (returns once the tensor may be reused)."""
    work = isend(tensor, dst, group, tag, group_dst)
    if work is not None:
        work.wait()


def recv(tensor: Tensor, src: int | None = None, group: Any = None, tag: int = 0,
         group_src: int | None = None) -> int:
    """Receive into ``tensor`` from rank ``src`` (any rank if None); the sender's rank,
    or -1 if this rank is not in the group."""
    work = irecv(tensor, src, group, tag, group_src)
    if work is None:
        return -1
    return work._source_rank()
