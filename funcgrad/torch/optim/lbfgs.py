"""L-BFGS with PyTorch's algorithm (``torch.optim.lbfgs``): the two-loop recursion over
at most ``history_size`` curvature pairs, a fixed step ``lr`` or PyTorch's strong Wolfe
line search (cubic interpolation, bracketing then zoom), and its stopping rules.

The scalars PyTorch keeps as 0-d tensors (``t``, ``H_diag``, ``ro``, ``al``, the
directional derivatives) are 0-d tensors here too, and Python numbers where PyTorch's
are (``min(1.0, ...)`` may give either), so every product rounds in the dtype PyTorch's
does and the trajectory, the number of closure calls and the state match.
"""
from __future__ import annotations

from typing import Any, Callable, Iterable

from funcgrad.torch import _factories
from funcgrad.torch._ops_basic import FUNCTIONS
from funcgrad.torch._tensor import Tensor
from funcgrad.torch._runtime import grad_mode
from funcgrad.torch.optim.optimizer import Optimizer, check_lr, to_scalar

__all__ = ["LBFGS"]


def _cubic_interpolate(x1: Any, f1: Any, g1: Any, x2: Any, f2: Any, g2: Any,
                       bounds: tuple | None = None) -> Any:
    """The minimizer of the cubic through ``(x1, f1, g1)`` and ``(x2, f2, g2)``, clamped
    to ``bounds`` (default: between the two points); their midpoint if it has none."""
    xmin_bound, xmax_bound = bounds if bounds is not None else (
        (x1, x2) if x1 <= x2 else (x2, x1))
    d1 = g1 + g2 - 3 * (f1 - f2) / (x1 - x2)
    d2_square = d1 ** 2 - g1 * g2
    if d2_square >= 0:
        d2 = d2_square.sqrt()
        if x1 <= x2:
            min_pos = x2 - (x2 - x1) * ((g2 + d2 - d1) / (g2 - g1 + 2 * d2))
        else:
            min_pos = x1 - (x1 - x2) * ((g1 + d2 - d1) / (g1 - g2 + 2 * d2))
        return min(max(min_pos, xmin_bound), xmax_bound)
    return (xmin_bound + xmax_bound) / 2.0


class _Search:
    """One strong Wolfe line search along ``d`` from ``x`` (loss ``f``, gradient ``g``,
    slope ``gtd``): ``bracket*`` hold the interval's ends (step, loss, gradient, slope)."""

    def __init__(self, obj_func: Callable, x: list, d: Tensor, f: float, g: Tensor,
                 gtd: Tensor, max_ls: int, c1: float = 1e-4, c2: float = 0.9) -> None:
        self.obj_func, self.x, self.d, self.f, self.g, self.gtd = obj_func, x, d, f, g, gtd
        self.max_ls, self.c1, self.c2 = max_ls, c1, c2
        self.evals = self.ls_iter = 0
        self.done = False

    def _evaluate(self, t: Any) -> tuple:
        f_new, g_new = self.obj_func(self.x, t, self.d)
        self.evals += 1
        return f_new, g_new, g_new.dot(self.d)

    def _armijo_fails(self, t: Any, f_new: float) -> bool:
        return f_new > (self.f + self.c1 * t * self.gtd)

    def _curvature_holds(self, gtd_new: Tensor) -> bool:
        return abs(gtd_new) <= -self.c2 * self.gtd

    def bracket_phase(self, t: Any) -> None:
        """Grow the step (cubic extrapolation) until an interval holds a point that
        satisfies both conditions, or the step itself does (``done``)."""
        f_new, g_new, gtd_new = self._evaluate(t)
        t_prev, f_prev, g_prev, gtd_prev = 0, self.f, self.g, self.gtd
        while self.ls_iter < self.max_ls:
            overshot = self._armijo_fails(t, f_new) or (self.ls_iter > 1 and f_new >= f_prev)
            if not overshot and self._curvature_holds(gtd_new):
                self.bracket, self.bracket_f, self.bracket_g = [t], [f_new], [g_new]
                self.done = True
                return
            if overshot or gtd_new >= 0:
                self.bracket, self.bracket_f = [t_prev, t], [f_prev, f_new]
                self.bracket_g = [g_prev, g_new.clone()]
                self.bracket_gtd = [gtd_prev, gtd_new]
                return
            tmp = t
            t = _cubic_interpolate(t_prev, f_prev, gtd_prev, t, f_new, gtd_new,
                                   bounds=(t + 0.01 * (t - t_prev), t * 10))
            t_prev, f_prev, g_prev, gtd_prev = tmp, f_new, g_new.clone(), gtd_new
            f_new, g_new, gtd_new = self._evaluate(t)
            self.ls_iter += 1
        self.bracket, self.bracket_f, self.bracket_g = [0, t], [self.f, f_new], [self.g, g_new]

    def _next_trial(self, insuf_progress: bool) -> tuple:
        """The zoom's next step (cubic interpolation, kept off the interval's ends) and
        the new ``insuf_progress``."""
        bracket = self.bracket
        t = _cubic_interpolate(bracket[0], self.bracket_f[0], self.bracket_gtd[0],
                               bracket[1], self.bracket_f[1], self.bracket_gtd[1])
        eps = 0.1 * (max(bracket) - min(bracket))
        if not min(max(bracket) - t, t - min(bracket)) < eps:
            return t, False
        if not (insuf_progress or t >= max(bracket) or t <= min(bracket)):
            return t, True
        if abs(t - max(bracket)) < abs(t - min(bracket)):
            return max(bracket) - eps, False
        return min(bracket) + eps, False

    def _set(self, pos: int, t: Any, f_new: float, g_new: Any, gtd_new: Any) -> None:
        self.bracket[pos], self.bracket_f[pos] = t, f_new
        self.bracket_g[pos], self.bracket_gtd[pos] = g_new, gtd_new

    def zoom_phase(self, tolerance_change: float) -> tuple:
        """Shrink the interval until a point satisfies both conditions; returns the best
        point's ``(loss, gradient, step)``."""
        d_norm = self.d.abs().max()
        insuf_progress = False
        low, high = (0, 1) if self.bracket_f[0] <= self.bracket_f[-1] else (1, 0)
        while not self.done and self.ls_iter < self.max_ls:
            if abs(self.bracket[1] - self.bracket[0]) * d_norm < tolerance_change:
                break
            t, insuf_progress = self._next_trial(insuf_progress)
            f_new, g_new, gtd_new = self._evaluate(t)
            self.ls_iter += 1
            if self._armijo_fails(t, f_new) or f_new >= self.bracket_f[low]:
                self._set(high, t, f_new, g_new.clone(), gtd_new)
                low, high = (0, 1) if self.bracket_f[0] <= self.bracket_f[1] else (1, 0)
                continue
            if self._curvature_holds(gtd_new):
                self.done = True
            elif gtd_new * (self.bracket[high] - self.bracket[low]) >= 0:
                self._set(high, self.bracket[low], self.bracket_f[low], self.bracket_g[low],
                          self.bracket_gtd[low])
            self._set(low, t, f_new, g_new.clone(), gtd_new)
        return self.bracket_f[low], self.bracket_g[low], self.bracket[low]


def _strong_wolfe(obj_func: Callable, x: list, t: Any, d: Tensor, f: float, g: Tensor,
                  gtd: Tensor, tolerance_change: float = 1e-9, max_ls: int = 25) -> tuple:
    """PyTorch's ``_strong_wolfe``: ``(loss, flat gradient, step, closure calls)``."""
    search = _Search(obj_func, x, d, f, g.clone(), gtd, max_ls)
    search.bracket_phase(t)
    f_new, g_new, t = search.zoom_phase(tolerance_change)
    return f_new, g_new, t, search.evals


_HISTORY = ("d", "t", "old_dirs", "old_stps", "ro", "H_diag", "prev_flat_grad", "prev_loss")


class LBFGS(Optimizer):
    """L-BFGS over all the parameters as one flat vector; ``step(closure)`` runs up to
    ``max_iter`` iterations (and ``max_eval`` closure calls). One parameter group only."""

    def __init__(self, params: Iterable[Any], lr: Any = 1, max_iter: int = 20,
                 max_eval: int | None = None, tolerance_grad: float = 1e-7,
                 tolerance_change: float = 1e-9, history_size: int = 100,
                 line_search_fn: str | None = None) -> None:
        check_lr(lr)
        if max_eval is None:
            max_eval = max_iter * 5 // 4
        super().__init__(params, dict(
            lr=lr, max_iter=max_iter, max_eval=max_eval, tolerance_grad=tolerance_grad,
            tolerance_change=tolerance_change, history_size=history_size,
            line_search_fn=line_search_fn))
        if len(self.param_groups) != 1:
            raise ValueError("LBFGS doesn't support per-parameter options (parameter groups)")

    @property
    def _params(self) -> list:
        """The parameters (of the one group), looked up each time so that they stay
        right after ``load_state_dict`` and unpickling."""
        return self.param_groups[0]["params"]

    def _gather_flat_grad(self) -> Tensor:
        views = [_factories.zeros(p.numel(), dtype=p.dtype, device=p.device)
                 if p.grad is None else p.grad.to_dense().reshape(-1) for p in self._params]
        return FUNCTIONS["cat"](views, 0)

    def _add_grad(self, step_size: Any, update: Tensor) -> None:
        offset, step_size = 0, to_scalar(step_size)  # (a tensor alpha is its item())
        for p in self._params:
            numel = p.numel()
            p.add_(update[offset:offset + numel].view_as(p), alpha=step_size)
            offset += numel

    def _directional_evaluate(self, closure: Callable, x: list, t: Any, d: Tensor) -> tuple:
        """Loss and flat gradient at ``x + t d``; the parameters are put back at ``x``."""
        self._add_grad(t, d)
        loss = float(closure())
        flat_grad = self._gather_flat_grad()
        for p, data in zip(self._params, x):
            p.copy_(data)
        return loss, flat_grad

    @staticmethod
    def _direction(mem: dict, state: dict, flat_grad: Tensor, history_size: int) -> Tensor:
        """The quasi-Newton direction: first the curvature pair of the last move enters
        the history ``mem`` (if ``y . s`` is positive enough), then the two-loop
        recursion (its ``al`` kept in ``state``, as PyTorch keeps it)."""
        y = flat_grad.sub(mem["prev_flat_grad"])
        s = mem["d"].mul(mem["t"])
        ys = y.dot(s)
        old_dirs, old_stps, ro = mem["old_dirs"], mem["old_stps"], mem["ro"]
        if ys > 1e-10:
            if len(old_dirs) == history_size:
                old_dirs.pop(0)
                old_stps.pop(0)
                ro.pop(0)
            old_dirs.append(y)
            old_stps.append(s)
            ro.append(1.0 / ys)
            mem["H_diag"] = ys / y.dot(y)
        if "al" not in state:
            state["al"] = [None] * history_size
        al = state["al"]
        q = flat_grad.neg()
        for i in range(len(old_dirs) - 1, -1, -1):
            al[i] = old_stps[i].dot(q) * ro[i]
            q.add_(old_dirs[i], alpha=to_scalar(-al[i]))
        r = FUNCTIONS["mul"](q, mem["H_diag"])
        for i in range(len(old_dirs)):
            be_i = old_dirs[i].dot(r) * ro[i]
            r.add_(old_stps[i], alpha=to_scalar(al[i] - be_i))
        return r

    def _move(self, closure: Callable, group: dict, t: Any, d: Tensor, loss: float,
              flat_grad: Tensor, gtd: Tensor, evals_left: int, last: bool) -> tuple:
        """Move along ``d``: ``(loss, flat gradient, step taken, closure calls)``; without
        a line search the step is ``t`` and, on the last iteration, nothing is evaluated
        after it (as in PyTorch)."""
        if group["line_search_fn"] is not None:
            if group["line_search_fn"] != "strong_wolfe":
                raise RuntimeError("only 'strong_wolfe' is supported")
            x_init = [p.clone() for p in self._params]
            loss, flat_grad, t, evals = _strong_wolfe(
                lambda x, t, d: self._directional_evaluate(closure, x, t, d),
                x_init, t, d, loss, flat_grad, gtd, max_ls=evals_left)
            self._add_grad(t, d)
            return loss, flat_grad, t, evals
        self._add_grad(t, d)
        if last:
            return loss, flat_grad, t, 0
        loss = float(closure())
        return loss, self._gather_flat_grad(), t, 1

    def step(self, closure: Callable) -> Any:  # type: ignore[override]
        """Minimize with up to ``max_iter`` iterations; ``closure`` (zeroing the
        gradients, computing the loss and calling ``backward``) is called with grad
        enabled; returns its first value."""
        with grad_mode.no_grad():
            return self._minimize(grad_mode.enable_grad()(closure))

    def _minimize(self, closure: Callable) -> Any:
        group = self.param_groups[0]
        state = self.state[self._params[0]]
        state.setdefault("func_evals", 0)
        state.setdefault("n_iter", 0)
        orig_loss = closure()
        loss = float(orig_loss)
        current_evals = 1
        state["func_evals"] += 1
        flat_grad = self._gather_flat_grad()
        if flat_grad.abs().max() <= group["tolerance_grad"]:
            return orig_loss
        mem = {key: state.get(key) for key in _HISTORY}  # written back at the end
        n_iter = 0
        while n_iter < group["max_iter"]:
            n_iter += 1
            state["n_iter"] += 1
            if state["n_iter"] == 1:
                mem.update(d=flat_grad.neg(), old_dirs=[], old_stps=[], ro=[], H_diag=1)
            else:
                mem["d"] = self._direction(mem, state, flat_grad, group["history_size"])
            if mem["prev_flat_grad"] is None:
                mem["prev_flat_grad"] = flat_grad.clone()
            else:
                mem["prev_flat_grad"].copy_(flat_grad)
            mem["prev_loss"] = loss
            lr = to_scalar(group["lr"])
            mem["t"] = (min(1.0, 1.0 / flat_grad.abs().sum()) * lr if state["n_iter"] == 1
                        else lr)
            gtd = flat_grad.dot(mem["d"])
            if gtd > -group["tolerance_change"]:
                break
            last = n_iter == group["max_iter"]
            loss, flat_grad, mem["t"], evals = self._move(
                closure, group, mem["t"], mem["d"], loss, flat_grad, gtd,
                group["max_eval"] - current_evals, last)
            current_evals += evals
            state["func_evals"] += evals
            if last or current_evals >= group["max_eval"] or self._converged(
                    group, flat_grad, mem, loss):
                break
        for key in _HISTORY:
            state[key] = mem[key]
        return orig_loss

    @staticmethod
    def _converged(group: dict, flat_grad: Tensor, mem: dict, loss: float) -> bool:
        """PyTorch's remaining stopping rules: first-order optimality, a tiny move, or a
        tiny change of the loss."""
        return bool(flat_grad.abs().max() <= group["tolerance_grad"]
                    or mem["d"].mul(mem["t"]).abs().max() <= group["tolerance_change"]
                    or abs(loss - mem["prev_loss"]) < group["tolerance_change"])
