"""`DistributedDataParallel`: data-parallel training of a module, PyTorch's way.

At construction the module's parameters and buffers are broadcast from rank 0, so that
every rank starts from the same model (after checking that the ranks hold the same model).
The parameters are grouped into buckets in reverse order (the order backward usually
produces their gradients; the first bucket is small, at most 1 MiB, so communication starts
early;
the others hold ``bucket_cap_mb``, 25 MiB by default). A post-accumulate-grad hook on every
parameter marks it ready; when every parameter of a bucket is ready, the bucket's gradients
are flattened and a non-blocking all-reduce starts, buckets strictly in order (every rank
must issue them in the same order); once all buckets are in flight the reducer waits for
them and writes the averaged gradients back into each ``param.grad``, before
``backward()`` returns. The result is the gradient of the loss averaged over the ranks:
with a mean loss and equal local batches, that of one process on the whole batch.

``no_sync()`` skips the reduction (gradients accumulate locally; the next synchronised
backward reduces the accumulated total). ``find_unused_parameters=True`` walks the autograd
graph of the forward's outputs to find the parameters that will get no gradient and marks
them ready at once; without it, a parameter left without gradient makes the next forward
raise PyTorch's "Expected to have finished reduction in the prior iteration" error.
"""
from __future__ import annotations

import contextlib
import zlib
from typing import Any, Iterator

import numpy as np

from funcgrad.torch._tensor import Tensor
from funcgrad.torch._runtime import grad_mode
from funcgrad.torch.distributed._groups import resolve
from funcgrad.torch.distributed._ops import tensor_of, values_of, write
from funcgrad.torch.nn.module import Module

__all__ = ["DistributedDataParallel"]

_FIRST_BUCKET_BYTES = 2 ** 20
_DEFAULT_BUCKET_MB = 25

_UNFINISHED = (
    "Expected to have finished reduction in the prior iteration before starting a new one. "
    "This error indicates that your module has parameters that were not used in producing "
    "loss. You can enable unused parameter detection by passing the keyword argument "
    "`find_unused_parameters=True` to `torch.nn.parallel.DistributedDataParallel`, and by "
    "\nmaking sure all `forward` function outputs participate in calculating loss. \nIf "
    "you already have done the above, then the distributed data parallel module wasn't "
    "able to locate the output tensors in the return value of your module's `forward` "
    "function. Please include the loss function and the structure of the return value of "
    "`forward` of your module when reporting this issue (e.g. list, dict, iterable).\n"
    "Parameter indices which did not receive grad for rank {rank}: {indices}\n In "
    "addition, you can set the environment variable TORCH_DISTRIBUTED_DEBUG to either INFO "
    "or DETAIL to print out information about which particular parameters did not receive "
    "gradient on this rank as part of this error")


def _bucket_indices(params: list, first_bytes: int, bytes_per_bucket: int) -> list[list]:
    """Parameter indices in reverse order, cut into buckets of one dtype."""
    buckets: list[list[int]] = []
    size = 0
    for i in reversed(range(len(params))):
        v = values_of(params[i])
        cap = first_bytes if len(buckets) <= 1 else bytes_per_bucket
        if buckets and v.dtype == values_of(params[buckets[-1][0]]).dtype and \
                size + v.nbytes <= cap:
            buckets[-1].append(i)
            size += v.nbytes
        else:
            buckets.append([i])
            size = v.nbytes
    return buckets


class _Reducer:
    """Bucketed, hook-driven gradient averaging for one backward pass at a time."""

    def __init__(self, params: list, transport: Any, bucket_bytes: int, find_unused: bool):
        self.params = params
        self.transport = transport
        self.find_unused = find_unused
        self.buckets = _bucket_indices(params, min(_FIRST_BUCKET_BYTES, bucket_bytes),
                                       bucket_bytes)
        self.bucket_of = [0] * len(params)
        for b, members in enumerate(self.buckets):
            for i in members:
                self.bucket_of[i] = b
        self.armed = False
        self.ready: list[bool] = []
        self.used: list[bool] = []
        self.waiting: list[int] = []
        self.works: list[Any] = []
        self.launched = 0

    def check_finished(self) -> None:
        """PyTorch's error when the previous synchronised backward left parameters
        without gradient (so that their bucket never started)."""
        if self.armed:
            missing = " ".join(str(i) for i, r in enumerate(self.ready) if not r)
            raise RuntimeError(_UNFINISHED.format(rank=self.transport.rank, indices=missing))

    def arm(self, unused: list[int]) -> None:
        """Expect one gradient per parameter; the ``unused`` ones are ready already."""
        n = len(self.params)
        self.ready, self.used = [False] * n, [False] * n
        self.waiting = [len(b) for b in self.buckets]
        self.works = [None] * len(self.buckets)
        self.launched = 0
        self.armed = True
        for i in unused:
            self._mark(i)

    def grad_ready(self, i: int) -> None:
        if not self.armed:
            return  # no_sync, or a backward this reducer was not prepared for
        if self.ready[i]:
            raise RuntimeError(
                f"Expected to mark a variable ready only once. This error is caused by "
                f"parameter {i} receiving a gradient twice in one synchronised backward "
                "(backward was called twice after one forward, or the parameter is used in "
                "several graphs). Call backward once per forward, or use no_sync() for the "
                "extra backward passes.")
        self.used[i] = True
        self._mark(i)

    def _mark(self, i: int) -> None:
        self.ready[i] = True
        self.waiting[self.bucket_of[i]] -= 1
        while self.launched < len(self.buckets) and self.waiting[self.launched] == 0:
            self._launch(self.launched)
            self.launched += 1
        if self.launched == len(self.buckets):
            self._finish()

    def _contribution(self, i: int) -> np.ndarray:
        p = self.params[i]
        if p.grad is None or (self.find_unused and not self.used[i]):
            return np.zeros(values_of(p).size, values_of(p).dtype)
        return values_of(p.grad).ravel()

    def _launch(self, b: int) -> None:
        flat = np.concatenate([self._contribution(i) for i in self.buckets[b]])
        self.works[b] = self.transport.allreduce(flat, "sum", block=False)

    def _finish(self) -> None:
        self.armed = False
        used_anywhere = (self.transport.allreduce(np.asarray(self.used, np.uint8), "max")
                         if self.find_unused else None)
        size = self.transport.size
        for b, members in enumerate(self.buckets):
            flat = self.works[b].wait()
            np.divide(flat, size, out=flat)
            start = 0
            for i in members:
                p = self.params[i]
                n = values_of(p).size
                piece = flat[start:start + n].reshape(tuple(p.shape))
                start += n
                if used_anywhere is not None and not used_anywhere[i]:
                    continue  # no rank used it: its gradient stays as it was
                if p.grad is None:
                    p.grad = tensor_of(piece)
                else:
                    write(p.grad, piece)
        self.works = []


def _reachable_parameters(outputs: Any) -> set[int]:
    """ids of the leaf tensors the autograd graph of ``outputs`` leads to."""
    stack = [o.grad_fn for o in _tensors(outputs) if o.grad_fn is not None]
    leaves = {id(o) for o in _tensors(outputs) if o.grad_fn is None and o.requires_grad}
    seen: set[int] = set()
    while stack:
        node = stack.pop()
        if node is None or id(node) in seen:
            continue
        seen.add(id(node))
        variable = getattr(node, "variable", None)
        if variable is not None:
            leaves.add(id(variable))
        stack.extend(n for n, _ in node.next_functions)
    return leaves


def _tensors(x: Any) -> Iterator[Tensor]:
    if isinstance(x, Tensor):
        yield x
    elif isinstance(x, dict):
        for v in x.values():
            yield from _tensors(v)
    elif isinstance(x, (list, tuple)):
        for v in x:
            yield from _tensors(v)


class DistributedDataParallel(Module):
    """Data parallelism for ``module``: replicas on every rank, gradients averaged.

    PyTorch's arguments are accepted; ``device_ids``, ``output_device``, ``dim``,
    ``check_reduction``, ``gradient_as_bucket_view`` and ``static_graph`` change nothing
    here (one device per process; buckets are copies, not views of the gradients)."""

    def __init__(self, module: Module, device_ids: Any = None, output_device: Any = None,
                 dim: int = 0, broadcast_buffers: bool = True, init_sync: bool = True,
                 process_group: Any = None, bucket_cap_mb: float | None = None,
                 find_unused_parameters: bool = False, check_reduction: bool = False,
                 gradient_as_bucket_view: bool = False, static_graph: bool = False,
                 **kwargs: Any):
        super().__init__()
        group = resolve(process_group)
        if group is None:
            raise ValueError("DistributedDataParallel: this rank is not a member of the "
                             "process_group it was given")
        self.module = module
        self.process_group = group
        self.device_ids = device_ids
        self.broadcast_buffers = broadcast_buffers
        self.find_unused_parameters = find_unused_parameters
        self.require_backward_grad_sync = True
        params = [p for p in module.parameters() if p.requires_grad]
        if not params:
            raise RuntimeError("DistributedDataParallel is not needed when a module doesn't "
                               "have any parameter that requires a gradient.")
        self._ddp_params = params
        self._verify_same_model(params)
        if init_sync:
            self._broadcast_from_rank0(list(module.parameters()) + list(module.buffers()))
        mb = _DEFAULT_BUCKET_MB if bucket_cap_mb is None else bucket_cap_mb
        self.reducer = _Reducer(params, group.transport, int(mb * 2 ** 20),
                                find_unused_parameters)
        for i, p in enumerate(params):
            p.register_post_accumulate_grad_hook(
                lambda _param, i=i: self.reducer.grad_ready(i))

    def _verify_same_model(self, params: list) -> None:
        t = self.process_group.transport
        counts = t.allgather(np.asarray(len(params), np.int64)).tolist()
        for r, n in enumerate(counts):
            if n != counts[0]:
                raise RuntimeError(f"DDP expects same model across all ranks, but Rank {r} "
                                   f"has {n} params, while rank 0 has inconsistent "
                                   f"{counts[0]} params.")
        shapes = repr([(tuple(p.shape), str(p.dtype)) for p in params]).encode()
        digests = t.allgather(np.asarray(zlib.crc32(shapes), np.int64)).tolist()
        for r, d in enumerate(digests):
            if d != digests[0]:
                raise RuntimeError(f"DDP expects same model across all ranks, but the "
                                   f"parameter shapes or dtypes of rank {r} do not match "
                                   "those of rank 0.")

    def _broadcast_from_rank0(self, tensors: list) -> None:
        """Overwrite ``tensors`` with rank 0's values, one broadcast per dtype."""
        t = self.process_group.transport
        by_dtype: dict = {}
        for x in tensors:
            by_dtype.setdefault(values_of(x).dtype, []).append(x)
        for group in by_dtype.values():
            flat = t.broadcast(np.concatenate([values_of(x).ravel() for x in group]), 0)
            start = 0
            for x in group:
                n = values_of(x).size
                if t.rank != 0:
                    write(x, flat[start:start + n].reshape(tuple(x.shape)))
                start += n

    def forward(self, *inputs: Any, **kwargs: Any) -> Any:
        syncing = grad_mode.is_grad_enabled() and self.require_backward_grad_sync
        if syncing:
            self.reducer.check_finished()
        buffers = list(self.module.buffers())
        if self.broadcast_buffers and buffers and syncing:
            self._broadcast_from_rank0(buffers)
        out = self.module(*inputs, **kwargs)
        if syncing:
            unused: list[int] = []
            if self.find_unused_parameters:
                reached = _reachable_parameters(out)
                unused = [i for i, p in enumerate(self._ddp_params) if id(p) not in reached]
            self.reducer.arm(unused)
        return out

    @contextlib.contextmanager
    def no_sync(self) -> Iterator[None]:
        """Inside this block forward/backward passes accumulate gradients locally; the
        first synchronised backward after it averages the accumulated gradients."""
        previous = self.require_backward_grad_sync
        self.require_backward_grad_sync = False
        try:
            yield
        finally:
            self.require_backward_grad_sync = previous
