"""JAX's ``example_libraries.optimizers`` on funcgrad: optimizers as (init_fun, update_fun,
get_params) triples over pytrees of Arrays.

    opt_init, opt_update, get_params = optimizers.adam(1e-3)
    opt_state = opt_init(params)
    for i in range(steps):
        opt_state = opt_update(i, funcgrad.grad(loss)(get_params(opt_state)), opt_state)

Each optimizer is written for one array (`optimizer` lifts it to pytrees); its state is a
pytree too, kept flat in `OptimizerState`. ``step_size`` is a number or a schedule, a
function of the step index (`constant`, `exponential_decay`, ...). The update formulas are
JAX's, so trajectories agree with JAX's step for step.
"""
from __future__ import annotations

import functools
from typing import Any, Callable, NamedTuple

import numpy as np

import funcgrad.numpy as fnp
from funcgrad import tree_util
from funcgrad.array import Array

__all__ = ["Optimizer", "OptimizerState", "optimizer", "sgd", "momentum", "nesterov",
           "adagrad", "rmsprop", "rmsprop_momentum", "adam", "adamax", "sm3", "constant",
           "exponential_decay", "inverse_time_decay", "polynomial_decay", "piecewise_constant",
           "make_schedule", "l2_norm", "clip_grads", "JoinPoint", "unpack_optimizer_state",
           "pack_optimizer_state"]

Schedule = Callable[[Any], Any]


class OptimizerState(NamedTuple):
    """The state of a pytree optimizer: the flattened per-leaf states and the structures
    to rebuild the parameter tree and each leaf's state."""
    packed_state: list
    tree_def: Any
    subtree_defs: tuple


# a pytree whose only children are the states: the structures are static data
tree_util.register_pytree_node(
    OptimizerState, lambda s: ((s.packed_state,), (s.tree_def, s.subtree_defs)),
    lambda aux, children: OptimizerState(children[0], *aux))


class Optimizer(NamedTuple):
    init_fn: Callable
    update_fn: Callable
    params_fn: Callable


def _flatten_all(trees: Any) -> tuple:
    flat = [tree_util.tree_flatten(t) for t in trees]
    return [f[0] for f in flat], tuple(f[1] for f in flat)


def optimizer(opt_maker: Callable) -> Callable:
    """Decorator: an optimizer maker whose (init, update, get_params) act on one array
    becomes one whose functions act on pytrees of arrays."""
    @functools.wraps(opt_maker)
    def tree_opt_maker(*args: Any, **kwargs: Any) -> Optimizer:
        init, update, get_params = opt_maker(*args, **kwargs)

        @functools.wraps(init)
        def tree_init(x0_tree: Any) -> OptimizerState:
            x0_flat, tree = tree_util.tree_flatten(x0_tree)
            states_flat, subtrees = _flatten_all([init(x0) for x0 in x0_flat])
            return OptimizerState(states_flat, tree, subtrees)

        @functools.wraps(update)
        def tree_update(i: Any, grad_tree: Any, opt_state: OptimizerState) -> OptimizerState:
            states_flat, tree, subtrees = opt_state
            grad_flat, tree2 = tree_util.tree_flatten(grad_tree)
            if tree2 != tree:
                raise TypeError("optimizer update function was passed a gradient tree that "
                                "did not match the parameter tree structure with which it "
                                f"was initialized: parameter tree {tree} and grad tree "
                                f"{tree2}.")
            states = map(tree_util.tree_unflatten, subtrees, states_flat)
            new_flat, subtrees2 = _flatten_all([update(i, g, s)
                                                for g, s in zip(grad_flat, states)])
            for subtree, subtree2 in zip(subtrees, subtrees2):
                if subtree2 != subtree:
                    raise TypeError("optimizer update function produced an output structure "
                                    "that did not match its input structure: input "
                                    f"{subtree} and output {subtree2}.")
            return OptimizerState(new_flat, tree, subtrees)

        @functools.wraps(get_params)
        def tree_get_params(opt_state: OptimizerState) -> Any:
            states_flat, tree, subtrees = opt_state
            states = map(tree_util.tree_unflatten, subtrees, states_flat)
            return tree_util.tree_unflatten(tree, [get_params(s) for s in states])

        return Optimizer(tree_init, tree_update, tree_get_params)
    return tree_opt_maker


def _first(state: tuple) -> Any:
    return state[0]


# -- optimizers ---------------------------------------------------------------------------

@optimizer
def sgd(step_size: Any) -> tuple:
    """Stochastic gradient descent: x - step_size(i) g."""
    step_size = make_schedule(step_size)
    return (lambda x0: x0, lambda i, g, x: x - step_size(i) * g, lambda x: x)


@optimizer
def momentum(step_size: Any, mass: float) -> tuple:
    """Heavy-ball momentum: v = mass v + g; x - step_size(i) v."""
    step_size = make_schedule(step_size)

    def update(i: Any, g: Any, state: tuple) -> tuple:
        x, velocity = state
        velocity = mass * velocity + g
        return x - step_size(i) * velocity, velocity
    return lambda x0: (x0, fnp.zeros_like(x0)), update, _first


@optimizer
def nesterov(step_size: Any, mass: float) -> tuple:
    """Nesterov's accelerated gradient: v = mass v + g; x - step_size(i) (mass v + g)."""
    step_size = make_schedule(step_size)

    def update(i: Any, g: Any, state: tuple) -> tuple:
        x, velocity = state
        velocity = mass * velocity + g
        return x - step_size(i) * (mass * velocity + g), velocity
    return lambda x0: (x0, fnp.zeros_like(x0)), update, _first


@optimizer
def adagrad(step_size: Any, momentum: float = 0.9) -> tuple:
    """Adagrad (Duchi et al. 2011) with momentum on the scaled gradient."""
    step_size = make_schedule(step_size)

    def update(i: Any, g: Any, state: tuple) -> tuple:
        x, g_sq, m = state
        g_sq = g_sq + fnp.square(g)
        inv_sqrt = fnp.where(g_sq > 0, 1.0 / fnp.sqrt(fnp.where(g_sq > 0, g_sq, 1.0)), 0.0)
        m = (1.0 - momentum) * (g * inv_sqrt) + momentum * m
        return x - step_size(i) * m, g_sq, m
    return lambda x0: (x0, fnp.zeros_like(x0), fnp.zeros_like(x0)), update, _first


@optimizer
def rmsprop(step_size: Any, gamma: float = 0.9, eps: float = 1e-8) -> tuple:
    """RMSProp: a running mean of g^2 scales the step."""
    step_size = make_schedule(step_size)

    def update(i: Any, g: Any, state: tuple) -> tuple:
        x, avg_sq_grad = state
        avg_sq_grad = avg_sq_grad * gamma + fnp.square(g) * (1.0 - gamma)
        return x - step_size(i) * g / fnp.sqrt(avg_sq_grad + eps), avg_sq_grad
    return lambda x0: (x0, fnp.zeros_like(x0)), update, _first


@optimizer
def rmsprop_momentum(step_size: Any, gamma: float = 0.9, eps: float = 1e-8,
                     momentum: float = 0.9) -> tuple:
    """RMSProp with momentum on the scaled step."""
    step_size = make_schedule(step_size)

    def update(i: Any, g: Any, state: tuple) -> tuple:
        x, avg_sq_grad, mom = state
        avg_sq_grad = avg_sq_grad * gamma + fnp.square(g) * (1.0 - gamma)
        mom = momentum * mom + step_size(i) * g / fnp.sqrt(avg_sq_grad + eps)
        return x - mom, avg_sq_grad, mom
    return (lambda x0: (x0, fnp.zeros_like(x0), fnp.zeros_like(x0)), update, _first)


@optimizer
def adam(step_size: Any, b1: float = 0.9, b2: float = 0.999, eps: float = 1e-8) -> tuple:
    """Adam (Kingma and Ba 2015), with the bias corrections of both moments."""
    step_size = make_schedule(step_size)

    def update(i: Any, g: Any, state: tuple) -> tuple:
        x, m, v = state
        m = (1 - b1) * g + b1 * m
        v = (1 - b2) * fnp.square(g) + b2 * v
        m_hat = m / (1 - fnp.asarray(b1, m.dtype) ** (i + 1))
        v_hat = v / (1 - fnp.asarray(b2, m.dtype) ** (i + 1))
        return x - step_size(i) * m_hat / (fnp.sqrt(v_hat) + eps), m, v
    return lambda x0: (x0, fnp.zeros_like(x0), fnp.zeros_like(x0)), update, _first


@optimizer
def adamax(step_size: Any, b1: float = 0.9, b2: float = 0.999, eps: float = 1e-8) -> tuple:
    """AdaMax: Adam with the infinity norm for the second moment."""
    step_size = make_schedule(step_size)

    def update(i: Any, g: Any, state: tuple) -> tuple:
        x, m, u = state
        m = (1 - b1) * g + b1 * m
        u = fnp.maximum(b2 * u, fnp.abs(g))
        x = x - (step_size(i) / (1 - fnp.asarray(b1, m.dtype) ** (i + 1))) * m / (u + eps)
        return x, m, u
    return lambda x0: (x0, fnp.zeros_like(x0), fnp.zeros_like(x0)), update, _first


@optimizer
def sm3(step_size: Any, momentum: float = 0.9) -> tuple:
    """SM3 (Anil et al. 2019): one accumulator per axis instead of per element; the
    accumulated g^2 of an element is the minimum of its axes' accumulators."""
    step_size = make_schedule(step_size)

    def along(ndim: int, v: Array, axis: int) -> Array:
        shape = [1] * ndim
        shape[axis] = v.shape[0]
        return fnp.reshape(v, tuple(shape))

    def init(x0: Any) -> tuple:
        x0 = fnp.asarray(x0)
        shape = x0.shape
        x0 = fnp.atleast_1d(x0)
        return x0, fnp.zeros_like(x0), [fnp.zeros(n, dtype=x0.dtype) for n in x0.shape], shape

    def update(i: Any, g: Any, state: tuple) -> tuple:
        x, m, vs, shape = state
        g = fnp.reshape(g, x.shape)
        accum = functools.reduce(fnp.minimum, [along(g.ndim, v, k) for k, v in enumerate(vs)])
        accum = accum + fnp.square(g)
        inv_sqrt = fnp.where(accum > 0, 1.0 / fnp.sqrt(fnp.where(accum > 0, accum, 1.0)), 0.0)
        m = (1.0 - momentum) * (g * inv_sqrt) + momentum * m
        vs = [fnp.max(accum, axis=tuple(a for a in range(x.ndim) if a != k))
              for k in range(x.ndim)]
        return x - step_size(i) * m, m, vs, shape

    return init, update, lambda state: fnp.reshape(state[0], tuple(state[3]))


# -- schedules ---------------------------------------------------------------------------

def constant(step_size: float) -> Schedule:
    return lambda i: step_size


def exponential_decay(step_size: float, decay_steps: float, decay_rate: float) -> Schedule:
    """step_size decay_rate^(i / decay_steps)."""
    return lambda i: step_size * decay_rate ** (i / decay_steps)


def inverse_time_decay(step_size: float, decay_steps: float, decay_rate: float,
                       staircase: bool = False) -> Schedule:
    """step_size / (1 + decay_rate i / decay_steps), i / decay_steps floored with
    ``staircase``."""
    if staircase:
        return lambda i: step_size / (1 + decay_rate * fnp.floor(fnp.asarray(i) / decay_steps))
    return lambda i: step_size / (1 + decay_rate * i / decay_steps)


def polynomial_decay(step_size: float, decay_steps: float, final_step_size: float,
                     power: float = 1.0) -> Schedule:
    """From step_size to final_step_size over decay_steps as (1 - i / decay_steps)^power,
    then constant."""
    def schedule(step_num: Any) -> Any:
        step_num = fnp.minimum(step_num, decay_steps)
        step_mult = (1 - step_num / decay_steps) ** power
        return step_mult * (step_size - final_step_size) + final_step_size
    return schedule


def piecewise_constant(boundaries: Any, values: Any) -> Schedule:
    """values[k] for i in (boundaries[k - 1], boundaries[k]]."""
    boundaries, values = np.array(boundaries), np.array(values)
    if not boundaries.ndim == values.ndim == 1:
        raise ValueError("boundaries and values must be sequences")
    if not boundaries.shape[0] == values.shape[0] - 1:
        raise ValueError("boundaries length must be one shorter than values length")
    b, v = fnp.asarray(boundaries), fnp.asarray(values)
    return lambda i: v[fnp.sum(fnp.asarray(i) > b)]


def make_schedule(scalar_or_schedule: Any) -> Schedule:
    """A schedule as is, a number as a constant schedule."""
    if callable(scalar_or_schedule):
        return scalar_or_schedule
    if np.ndim(scalar_or_schedule) == 0:
        return constant(scalar_or_schedule)
    raise TypeError(type(scalar_or_schedule))


# -- utilities -----------------------------------------------------------------------------

def l2_norm(tree: Any) -> Array:
    """The l2 norm of a pytree of arrays, as if they were one flat vector."""
    leaves = tree_util.tree_leaves(tree)
    return fnp.sqrt(sum(fnp.vdot(x, x) for x in leaves))


def clip_grads(grad_tree: Any, max_norm: float) -> Any:
    """Scale the pytree ``grad_tree`` down to the l2 norm ``max_norm`` if it is larger."""
    norm = l2_norm(grad_tree)
    return tree_util.tree_map(lambda g: fnp.where(norm < max_norm, g, g * (max_norm / norm)),
                              grad_tree)


class JoinPoint:
    """Marks where the parameter tree ends and a leaf's optimizer state begins in the
    tree that `unpack_optimizer_state` returns."""

    def __init__(self, subtree: Any):
        self.subtree = subtree

    def __iter__(self) -> Any:
        yield self.subtree

    def __repr__(self) -> str:
        return f"JoinPoint({self.subtree!r})"


def unpack_optimizer_state(opt_state: OptimizerState) -> Any:
    """The state as one ordinary pytree (the parameter tree with each leaf's state under a
    `JoinPoint`), e.g. to pickle it."""
    states_flat, tree_def, subtree_defs = opt_state
    subtrees = map(tree_util.tree_unflatten, subtree_defs, states_flat)
    return tree_util.tree_unflatten(tree_def, [JoinPoint(s) for s in subtrees])


def pack_optimizer_state(marked_pytree: Any) -> OptimizerState:
    """The inverse of `unpack_optimizer_state`."""
    sentinels, tree_def = tree_util.tree_flatten(marked_pytree)
    if not all(isinstance(s, JoinPoint) for s in sentinels):
        raise TypeError("pack_optimizer_state: expected a tree made by "
                        "unpack_optimizer_state, whose leaves are JoinPoints")
    states_flat, subtree_defs = _flatten_all([s.subtree for s in sentinels])
    return OptimizerState(states_flat, tree_def, subtree_defs)
