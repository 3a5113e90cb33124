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
from funcgrad.torch._runtime import anomaly, grad_mode, profiler
from funcgrad.torch._runtime.node import AccumulateGrad, GraphRoot, Node
from funcgrad.torch import _factories

__all__ = ["backward", "grad", "run_backward", "tensor_backward"]


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


def tensor_backward(self: Tensor, gradient: Any = None, retain_graph: bool | None = None,
                    create_graph: bool = False, inputs: Any = None) -> None:
    """``Tensor.backward``: accumulate d(self)/d(leaf) into the ``.grad`` of the leaves (or
    of ``inputs``)."""
    backward(self, gradient, retain_graph, create_graph, inputs=inputs)


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
    """node -> how many edges lead to it, for the nodes reachable from ``root`` that more
    than one edge leads to: only those wait for gradients (each node is walked from once:
    when it is first reached)."""
    seen = {root}
    deps: dict = {}
    stack = [root]
    while stack:
        node = stack.pop()
        for nxt, _ in node._next:
            if nxt is None:
                continue
            if nxt in seen:
                deps[nxt] = deps.get(nxt, 1) + 1
            else:
                seen.add(nxt)
                stack.append(nxt)
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
    """Run the graph of ``roots`` backward from ``root_grads``: into the leaves' ``.grad``
    (``accumulate``), or, for `grad`, into the gradients of ``inputs`` (returned). Grad mode
    is ``create_graph`` while it runs."""
    edges = _root_edges(roots)
    plan = _Inputs(inputs, accumulate)
    root = GraphRoot(edges, list(root_grads))
    plan.limit(root)
    watched = anomaly.is_anomaly_enabled() or profiler.is_profiling()  # through `_call`
    prev = grad_mode.is_grad_enabled()
    grad_mode.set_enabled(create_graph)
    try:
        _drain(root, _dependencies(root), plan, keep_graph, create_graph, watched,
               watched or plan.filtered)
    finally:
        grad_mode.set_enabled(prev)
    return () if accumulate else plan.gradients(allow_unused, create_graph)


def _root_edges(roots: Sequence[Tensor]) -> tuple:
    """The edge of each root, which must require grad (PyTorch's error names the first
    that does not)."""
    edges = []
    for i, t in enumerate(roots):
        if not t.requires_grad:
            raise RuntimeError(f"element {i} of tensors does not require grad and does not "
                               "have a grad_fn")
        edges.append(t._edge())
    return tuple(edges)


class _Inputs:
    """What ``inputs`` asks of one run: the nodes it reaches but does not run, or does not
    make ready, because no input lies beyond them; and for `grad`, where the gradient of
    each input is captured. Without ``inputs`` nothing is filtered or captured."""

    __slots__ = ("filtered", "targets", "accumulate", "captures", "captured", "skipped",
                 "unscheduled")

    def __init__(self, inputs: Sequence[Tensor], accumulate: bool) -> None:
        self.filtered = bool(inputs)  # (then every node takes `_run_routed`)
        self.accumulate = accumulate
        self.targets: set = set()  # the nodes of the inputs
        self.captures: dict = {}  # node -> [(output_nr, index in inputs)]
        self.captured: list = [None] * len(inputs)
        self.skipped: frozenset | set = frozenset()  # run up to their captures only
        self.unscheduled: frozenset | set = frozenset()  # never made ready
        for k, t in enumerate(inputs):
            if not isinstance(t, Tensor):
                raise TypeError(f"inputs must be Tensors, got {type(t).__name__}")
            if not t.requires_grad:
                if not accumulate:
                    raise RuntimeError("One of the differentiated Tensors does not require "
                                       "grad")
                continue
            if accumulate and t._grad_fn is not None:
                t.retain_grad()
            node, nr = t._edge()
            self.targets.add(node)
            if not accumulate:
                self.captures.setdefault(node, []).append((nr, k))

    def limit(self, root: Node) -> None:
        """Find the nodes of ``root``'s graph that the run leaves out: those with no input
        beyond them are not made ready unless they are an input's; with `grad`, an input's
        node with no other input beyond it is not run either (its gradient is captured)."""
        if not self.filtered:
            return
        targets = self.targets
        needed = _needed(root, targets)
        self.unscheduled = {n for n, v in needed.items() if not v and n not in targets}
        if not self.accumulate:
            self.skipped = {n for n in targets if not needed.get(n)}

    def capture(self, node: Node, grads: list) -> None:
        """Keep the gradients arriving at ``node`` that are inputs' (after their hooks)."""
        for nr, k in self.captures.get(node, ()):
            self.captured[k] = _tensors(grads)[nr]

    def gradients(self, allow_unused: bool, create_graph: bool) -> tuple:
        """`grad`'s result: the captured gradients (an unused input raises unless
        ``allow_unused``), detached unless ``create_graph``."""
        for k, g in enumerate(self.captured):
            if g is None and not allow_unused:
                raise RuntimeError(f"The differentiated Tensor at index {k} appears to not "
                                   "have been used in the graph. Set allow_unused=True if "
                                   "this is the desired behavior.")
        return tuple(g if g is None or create_graph else _detached(g) for g in self.captured)


# the nodes that always take `_run_routed`: the root, and a leaf's node that did not run
# as soon as its gradient was complete (it has hooks)
_ROUTED = frozenset((GraphRoot, AccumulateGrad))
# the bottom of the engine's heap, under every node: popped when no node is left
_END = (float("inf"), 0, None, None)


def _drain(root: GraphRoot, deps: dict, plan: _Inputs, keep_graph: bool,
           create_graph: bool, watched: bool, routed: bool) -> None:
    """Run the nodes from ``root`` on, each once the gradients of all the edges that lead
    to it have arrived; among ready nodes, the one created last first (a heap on sequence
    numbers, leaves' nodes first). This is the engine's per-node loop: a plain node (no
    hooks, no ``inputs``, no anomaly mode or profiler) runs here, written out; any other
    takes `_run_routed`, chosen by one check (all of them when ``routed``). Unless
    ``keep_graph``, each node run frees what it saved."""
    # without create_graph, nodes that take arrays pass them on as their gradients (no
    # tensor per gradient); the others, and hooks, get tensors (`_tensors`)
    arrays = not create_graph
    unscheduled = plan.unscheduled
    # the gradients of nodes some but not all of whose inputs have arrived (a ready node's
    # go with it: on the heap, or as ``grads`` of the next one)
    buffers: dict = {}
    tie = itertools.count()
    # the ready nodes but the next one (`node`), by descending sequence: (-seq, tie, node,
    # its gradients), then `_END`
    heap: list = [_END]
    pop = heapq.heappop
    node: Node | None = root
    grads: list = []
    while node is not None:
        # (``_hooked``: one check for the node's four hook tables)
        if routed or node._hooked or type(node) in _ROUTED:
            outputs = _run_routed(node, grads, create_graph, watched, plan)
            if outputs is None:  # reached, not run
                node, grads = pop(heap)[2:]
                continue
        elif arrays and node.takes_arrays:  # gradients stay funcgrad arrays
            outputs = node.apply_arrays(grads)
        else:
            outputs = node.apply(_tensors(grads), create_graph)
        if not keep_graph:
            node.release()
        held = held_grads = None  # the one node this one made ready while no other is
        for (nxt, nr), g in zip(node._next, outputs):
            if nxt is None:
                continue
            if nxt in deps:  # fed by several edges
                buf = _gather(buffers, deps, nxt, nr, g)
                if buf is None:  # more to come
                    continue
            else:  # (`_slots`, written out: this runs for most edges)
                n = len(nxt._meta)
                buf = [None] * (n if n > nr else nr + 1)
                buf[nr] = g
            if type(nxt) is AccumulateGrad and _accumulated(nxt, buf, create_graph, routed):
                continue
            if nxt in unscheduled:
                continue
            if held is None and heap[0] is _END:  # (the heap would give it next)
                held, held_grads = nxt, buf
                continue
            _spill(heap, tie, held, held_grads, nxt, buf)
            held = None
        if held is not None:
            node, grads = held, held_grads
        else:
            node, grads = pop(heap)[2:]


def _run_routed(node: Node, grads: list, create_graph: bool, watched: bool,
                plan: _Inputs) -> list | None:
    """Run a node that is not plain, in PyTorch's order: the hooks of the tensors it made
    (``register_hook``, then ``retain_grad``; a leaf's own hooks), the capture of the
    inputs' gradients, then the node, with its pre- and post-hooks and anomaly mode's checks
    (`_call`). None when it is not run (no input lies beyond it)."""
    if type(node) is GraphRoot:
        return node.apply([], create_graph)
    if node._hooked and (node._tensor_hooks or node._retains):
        grads = _tensor_pre_hooks(node, _tensors(grads))
    if type(node) is AccumulateGrad and node.variable._hooks:
        grads = _leaf_hooks(node, _tensors(grads))
    if plan.captures:
        plan.capture(node, grads)
    if node in plan.skipped:
        return None
    if watched or node._hooked and (node._pre_hooks or node._post_hooks):
        return _call(node, _tensors(grads), create_graph)
    if not create_graph and node.takes_arrays:  # as `_drain` runs a plain node
        return node.apply_arrays(grads)
    return node.apply(_tensors(grads), create_graph)


def _slots(node: Node, nr: int) -> list:
    """An empty gradient buffer for ``node``: one slot per output (a leaf's node has one;
    ``nr``, the output an edge leads to, always has one)."""
    n = len(node._meta)
    return [None] * (n if n > nr else nr + 1)


def _gather(buffers: dict, deps: dict, node: Node, nr: int, g: Any) -> list | None:
    """Add ``g``, the gradient one edge brings to output ``nr`` of ``node`` (a node that
    several edges lead to), to those waiting for it in ``buffers``; once it was the last
    edge, take the node's gradients out (then it is ready)."""
    left = deps[node] - 1
    deps[node] = left
    buf = buffers.get(node)
    if buf is None:  # its first edge (so more are to come)
        buf = buffers[node] = _slots(node, nr)
    if g is not None:
        old = buf[nr]
        buf[nr] = g if old is None else _sum(old, g)
    if left:
        return None
    del buffers[node]
    return buf


def _accumulated(leaf: AccumulateGrad, grads: list, create_graph: bool, routed: bool
                 ) -> bool:
    """Run a leaf's node now, as soon as its gradient is complete (it would be popped next:
    leaves go first), unless it has hooks of any kind or the run is ``routed`` (then it
    takes the heap and `_run_routed`, so that what runs around it runs in order); whether
    it ran."""
    if routed or leaf.variable._hooks or leaf._hooked and (
            leaf._pre_hooks or leaf._post_hooks or leaf._tensor_hooks or leaf._retains):
        return False
    if create_graph:
        leaf.apply(_tensors(grads), create_graph)
    else:
        leaf.apply_arrays(grads)
    return True


def _spill(heap: list, tie: Any, held: Node | None, held_grads: list | None, node: Node,
           grads: list) -> None:
    """Push a ready node on the heap, and first the one held back to run next if there is
    one (``node`` made it a choice between them)."""
    if held is not None:
        heapq.heappush(heap, (-held._seq, next(tie), held, held_grads))
    heapq.heappush(heap, (-node._seq, next(tie), node, grads))


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


def _detached(g: Tensor) -> Tensor:
    return g if g._grad_fn is None else make(g._a)
