"""The backward engine: `backward` and `grad`, with PyTorch's order and semantics.

Dependencies are counted from the roots; a node runs once all the nodes that feed it have
run, and among ready nodes the one created last runs first (a heap on sequence numbers;
AccumulateGrad nodes go first). Before a node runs, the hooks of the tensors it produced
run (``register_hook``, then ``retain_grad``), then its pre-hooks; after it, its post-hooks.
Grad mode inside the engine is ``create_graph``: with it, gradients are computed by
recorded ops (double backward) and accumulate out of place; without, leaves' ``.grad``
tensors are updated in place (the same objects). Unless ``retain_graph``, each node frees
what it saved once it has run.

With ``inputs`` (``autograd.grad``, or ``backward(inputs=...)``) only nodes on a path to an
input run; ``grad`` captures the gradient arriving at each input instead of accumulating.
"""
from __future__ import annotations

import heapq
import itertools
from typing import Any, Sequence

import numpy as np

import funcgrad.numpy as fnp
from funcgrad.array import Array
from funcgrad.dtypes import is_floating
from funcgrad.primitives import constants
from funcgrad.torch._tensor import Tensor, as_array, make
from funcgrad.torch.autograd import anomaly, grad_mode, profiler
from funcgrad.torch.autograd.node import AccumulateGrad, GraphRoot, Node
from funcgrad.torch import _factories

__all__ = ["backward", "grad", "run_backward"]


def _tuple(x: Any) -> tuple:
    if x is None:
        return ()
    return (x,) if isinstance(x, Tensor) else tuple(x)


def _make_grads(outputs: Sequence[Tensor], grads: Sequence) -> list:
    result = []
    for i, (out, g) in enumerate(zip(outputs, grads)):
        if isinstance(g, Tensor):
            o, a = out._a, g._a  # compared as arrays: no torch Size or dtype objects
            if a.shape != o.shape:
                raise RuntimeError(f"Mismatch in shape: grad_output[{i}] has a shape of "
                                   f"{g.shape} and output[{i}] has a shape of {out.shape}.")
            if (o.dtype.kind == "c") != (a.dtype.kind == "c"):
                raise RuntimeError(
                    "For complex Tensors, both grad_output and output are required to have "
                    f"the same dtype. Mismatch in dtype: grad_output[{i}] has a dtype of "
                    f"{g.dtype} and output[{i}] has a dtype of {out.dtype}.")
            result.append(g)
        elif g is None:
            if out.requires_grad:
                a = out._a
                if a.size != 1:
                    raise RuntimeError("grad can be implicitly created only for scalar outputs")
                if not is_floating(a.dtype):
                    raise RuntimeError("grad can be implicitly created only for real scalar "
                                       f"outputs but got {out.dtype}")
                # a concrete scalar's 1 is made directly (the funcgrad op would dispatch)
                result.append(make(constants.ones_like(a) if type(a) is Array
                                   else fnp.ones_like(a)))
            else:
                result.append(None)
        else:
            raise TypeError("gradients can be either Tensors or None, but got "
                            f"{type(g).__name__}")
    return result


def _grads_tuple(grads: Any, n: int) -> tuple:
    """The gradients given for ``n`` tensors, one each (as PyTorch, extra ones are
    ignored; too few raise)."""
    if grads is None:
        return (None,) * n
    if isinstance(grads, Tensor):
        grads = (grads,)
    grads = tuple(grads)
    if len(grads) < n:
        raise RuntimeError(f"got {n} tensors and {len(grads)} gradients")
    return grads[:n]


def backward(tensors: Any, grad_tensors: Any = None, retain_graph: bool | None = None,
             create_graph: bool = False, grad_variables: Any = None,
             inputs: Any = None) -> None:
    """Accumulate the gradients of ``tensors`` into the ``.grad`` of the graph's leaves
    (or of ``inputs`` only)."""
    if grad_variables is not None:
        grad_tensors = grad_variables
    if inputs is not None and len(_tuple(inputs)) == 0:
        raise RuntimeError("`inputs` argument to `backward()` cannot be empty.")
    tensors = _tuple(tensors)
    grads = _make_grads(tensors, _grads_tuple(grad_tensors, len(tensors)))
    if retain_graph is None:
        retain_graph = create_graph
    run_backward(tensors, grads, retain_graph, create_graph, _tuple(inputs),
                 allow_unused=True, accumulate=True)


def grad(outputs: Any, inputs: Any, grad_outputs: Any = None,
         retain_graph: bool | None = None, create_graph: bool = False,
         only_inputs: bool = True, allow_unused: bool | None = None,
         is_grads_batched: bool = False, materialize_grads: bool = False) -> tuple:
    """The gradients of ``outputs`` with respect to ``inputs`` (a tuple), without touching
    any ``.grad``."""
    if materialize_grads and allow_unused is False:
        raise ValueError("Expected allow_unused to be True or not passed when "
                         "materialize_grads=True, but got: allow_unused=False.")
    if allow_unused is None:
        allow_unused = materialize_grads
    if is_grads_batched:
        raise NotImplementedError("is_grads_batched=True is not supported by funcgrad.torch; "
                                  "loop over the batch or use funcgrad.torch.func.vjp")
    outputs = _tuple(outputs)
    inputs_t = _tuple(inputs)
    grads = _make_grads(outputs, _grads_tuple(grad_outputs, len(outputs)))
    if retain_graph is None:
        retain_graph = create_graph
    result = run_backward(outputs, grads, retain_graph, create_graph, inputs_t,
                          allow_unused=allow_unused, accumulate=False)
    if materialize_grads:
        result = tuple(r if r is not None else _factories.zeros_like(x)
                       for r, x in zip(result, inputs_t))
    return result


def _dependencies(root: Node) -> dict:
    """node -> how many edges lead to it from the nodes reachable from ``root`` (each
    node is walked from once: when it is first reached)."""
    deps: dict = {}
    stack = [root]
    while stack:
        node = stack.pop()
        for nxt, _ in node._next:
            if nxt is None:
                continue
            n = deps.get(nxt)
            if n is None:
                deps[nxt] = 1
                stack.append(nxt)
            else:
                deps[nxt] = n + 1
    return deps


def _needed(root: Node, targets: set) -> dict:
    """node -> whether it must run (some node that is a target lies beyond it)."""
    needed: dict = {}
    stack: list = [(root, False)]
    while stack:
        node, done = stack.pop()
        if done:
            needed[node] = any(nxt is not None and (needed.get(nxt) or nxt in targets)
                               for nxt, _ in node._next)
            continue
        if node in needed:
            continue
        needed[node] = False  # provisional, marks it visited
        stack.append((node, True))
        for nxt, _ in node._next:
            if nxt is not None and nxt not in needed:
                stack.append((nxt, False))
    return needed


def _tensor_pre_hooks(node: Node, grads: list) -> list:
    for nr, hooks in node._tensor_hooks.items():
        for hook in list(hooks.values()):
            if grads[nr] is None:
                break
            r = hook(grads[nr])
            if r is not None:
                grads[nr] = r
    for nr, (ref,) in list(node._retains.items()):
        t = ref()
        g = grads[nr] if nr < len(grads) else None
        if t is None or g is None:
            continue
        t._grad = g.detach().clone() if t._grad is None else t._grad + g
    return grads


def _leaf_hooks(node: AccumulateGrad, grads: list) -> list:
    if grads and grads[0] is not None:
        for hook in list(node.variable._hooks.values()):
            r = hook(grads[0])
            if r is not None:
                grads[0] = r
    return grads


def _call(node: Node, grads: list, create_graph: bool) -> list:
    """``node.apply`` with the node's hooks and anomaly mode's checks around it."""
    if node._pre_hooks:
        for hook in list(node._pre_hooks.values()):
            r = hook(tuple(grads))
            if r is not None:
                grads = list(r)
    if profiler.state.sessions:
        outputs = profiler.node_range(
            "autograd::engine::evaluate_function: " + node.name(),
            lambda: profiler.node_range(node.name(), lambda: _call_checked(node, grads,
                                                                          create_graph)))
    else:
        outputs = _call_checked(node, grads, create_graph)
    if node._post_hooks:
        for hook in list(node._post_hooks.values()):
            r = hook(tuple(outputs), tuple(grads))
            if r is not None:
                outputs = list(r)
    return outputs


def _call_checked(node: Node, grads: list, create_graph: bool) -> list:
    if not anomaly.is_anomaly_enabled():
        return node.apply(grads, create_graph)
    return _call_anomaly(node, grads, create_graph)


def _call_anomaly(node: Node, grads: list, create_graph: bool) -> list:
    """``node.apply`` in anomaly mode: warn with the forward trace when it fails, raise when
    it returns NaN."""
    try:
        outputs = node.apply(grads, create_graph)
    except Exception:
        anomaly.warn_forward_trace(node)
        raise
    if anomaly.is_anomaly_check_nan_enabled():
        for i, o in enumerate(outputs):
            if o is not None and np.isnan(o._host()).any():
                anomaly.warn_forward_trace(node)
                raise RuntimeError(f"Function '{node.name()}' returned nan values in its "
                                   f"{i}th output.")
    return outputs


def run_backward(roots: Sequence[Tensor], root_grads: Sequence, keep_graph: bool,
                 create_graph: bool, inputs: Sequence[Tensor] = (), allow_unused: bool = True,
                 accumulate: bool = True) -> tuple:
    edges = []
    for i, t in enumerate(roots):
        if not t.requires_grad:
            raise RuntimeError(f"element {i} of tensors does not require grad and does not "
                               "have a grad_fn")
        edges.append(t._edge())
    captures: dict = {}  # node -> [(output_nr, index)]
    targets: set = set()
    for k, t in enumerate(inputs):
        if not isinstance(t, Tensor):
            raise TypeError(f"inputs must be Tensors, got {type(t).__name__}")
        if not t.requires_grad:
            if not accumulate:
                raise RuntimeError("One of the differentiated Tensors does not require grad")
            continue
        if accumulate and t._grad_fn is not None:
            t.retain_grad()
        node, nr = t._edge()
        targets.add(node)
        if not accumulate:
            captures.setdefault(node, []).append((nr, k))
    root = GraphRoot(tuple(edges), list(root_grads))
    deps = _dependencies(root)
    needed = _needed(root, targets) if inputs else None
    captured: list = [None] * len(inputs)
    # the gradients of nodes some but not all of whose inputs have arrived (a ready node's
    # go with it: on the heap, or as ``grads`` of the next one)
    buffers: dict = {}
    tie = itertools.count()
    # the ready nodes but the next one (`node`), by descending sequence: (-seq, tie, node,
    # its gradients)
    heap: list = []
    prev = grad_mode.is_grad_enabled()
    grad_mode.set_enabled(create_graph)
    watched = anomaly.is_anomaly_enabled() or profiler.is_profiling()  # through `_call`
    # a leaf's AccumulateGrad runs as soon as its gradient is complete (it would be popped
    # next: leaves go first); one with hooks, or a targeted or checked run, takes the heap
    inline_leaves = needed is None and not captures and not watched
    # without create_graph, nodes that take arrays pass them on as their gradients (no
    # tensor per gradient); the others, and hooks, get tensors (`_tensors`)
    arrays = not create_graph
    pop, push = heapq.heappop, heapq.heappush
    node: Node | None = root
    grads: list = []
    try:
        while node is not None:
            if node is root:
                outputs = root.apply([], create_graph)
            else:
                hooked = node._hooked  # (one check for the node's four hook tables)
                if hooked and (node._tensor_hooks or node._retains):
                    grads = _tensor_pre_hooks(node, _tensors(grads))
                if type(node) is AccumulateGrad and node.variable._hooks:
                    grads = _leaf_hooks(node, _tensors(grads))
                if captures:
                    for nr, k in captures.get(node, ()):
                        captured[k] = _tensors(grads)[nr]
                if needed is not None and not needed[node] and not (
                        accumulate and node in targets):
                    node, grads = pop(heap)[2:] if heap else (None, None)
                    continue
                if watched or hooked and (node._pre_hooks or node._post_hooks):
                    outputs = _call(node, _tensors(grads), create_graph)
                elif arrays and node.takes_arrays:  # gradients stay funcgrad arrays
                    outputs = node.apply_arrays(grads)
                else:  # `_call` without hooks or anomaly checks to run
                    outputs = node.apply(_tensors(grads), create_graph)
            if not keep_graph:
                node.release()
            held = None  # the one node this one made ready while no other is: it runs next
            for (nxt, nr), g in zip(node._next, outputs):
                if nxt is None:
                    continue
                left = deps[nxt] - 1
                deps[nxt] = left
                # (a node fed by one edge never enters ``buffers``)
                buf = buffers.get(nxt) if left else buffers.pop(nxt, None)
                if buf is None:  # one slot per output of nxt (a leaf's node has one)
                    n = len(nxt._meta)
                    buf = [None] * (n if n > nr else nr + 1)
                    if left:
                        buffers[nxt] = buf
                if g is not None:
                    old = buf[nr]
                    buf[nr] = g if old is None else _sum(old, g)
                if left:
                    continue
                if inline_leaves and type(nxt) is AccumulateGrad and _plain(nxt):
                    if arrays:
                        nxt.apply_arrays(buf)
                    else:
                        nxt.apply(_tensors(buf), create_graph)
                elif needed is None or needed[nxt] or nxt in targets:
                    if held is None and not heap:  # (the heap would give it next)
                        held, held_grads = nxt, buf
                        continue
                    if held is not None:
                        push(heap, (-held._seq, next(tie), held, held_grads))
                        held = None
                    push(heap, (-nxt._seq, next(tie), nxt, buf))
            if held is not None:
                node, grads = held, held_grads
            else:
                node, grads = pop(heap)[2:] if heap else (None, None)
    finally:
        grad_mode.set_enabled(prev)
    if accumulate:
        return ()
    for k, g in enumerate(captured):
        if g is None and not allow_unused:
            raise RuntimeError(f"The differentiated Tensor at index {k} appears to not have "
                               "been used in the graph. Set allow_unused=True if this is the "
                               "desired behavior.")
    return tuple(g if g is None or create_graph else _detached(g) for g in captured)


def _tensors(grads: list) -> list:
    """The gradients as tensors (the engine passes funcgrad arrays between nodes that take
    them)."""
    return [g if g is None or isinstance(g, Tensor) else make(g) for g in grads]


def _sum(a: Any, b: Any) -> Any:
    """Two gradients of one output added: as tensors (recorded under create_graph), or
    as funcgrad arrays when either is one (no graph is being made then)."""
    if isinstance(a, Tensor) and isinstance(b, Tensor):
        return a + b
    return as_array(a) + as_array(b)


def _plain(node: AccumulateGrad) -> bool:
    """Whether a leaf's node has no hooks of any kind (nothing runs around its apply)."""
    return not (node.variable._hooks or node._hooked and (
        node._pre_hooks or node._post_hooks or node._tensor_hooks or node._retains))


def _detached(g: Tensor) -> Tensor:
    return g if g._grad_fn is None else make(g._a)
