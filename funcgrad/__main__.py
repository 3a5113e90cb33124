"""``python -m funcgrad``: a short printed tour of the library."""
from __future__ import annotations

import numpy as np

import funcgrad
import funcgrad.numpy as fnp
from funcgrad.primitives import Primitive, sampling


def tour() -> None:
    def f(x):
        return fnp.sum(fnp.tanh(x) ** 2)

    x = fnp.asarray([0.5, -1.0, 2.0])
    print("funcgrad", funcgrad.__version__, "- a tour\n")
    print("f(x) = sum(tanh(x)**2) at x =", x)
    print("  f(x)        =", f(x))
    print("  grad f(x)   =", funcgrad.grad(f)(x))
    print("\nThe tape of grad(f): forward records, then the backward pass")
    print(funcgrad.make_tape(funcgrad.grad(f))(x))

    d2 = funcgrad.grad(funcgrad.grad(fnp.sin))
    print("\nSecond derivative of sin at 1.0:", d2(1.0), "  (-sin(1) =", -np.sin(1.0), ")")
    print("Hessian of f at x:\n", funcgrad.hessian(f)(x))

    softsign = Primitive("softsign", lambda v: v / (1 + np.abs(v)),
                         sample=sampling.elementwise(), replace=True)
    softsign.defvjp(lambda g, x: g / (1 + fnp.abs(x)) ** 2)
    print("\nA user-defined primitive: softsign(x) = x / (1 + |x|)")
    print("  softsign(2.0)   =", softsign(2.0))
    print("  d/dx at 2.0     =", funcgrad.grad(softsign)(2.0), "  (1/9)")
    print("  d2/dx2 at 2.0   =", funcgrad.grad(funcgrad.grad(softsign))(2.0), "  (-2/27)")


if __name__ == "__main__":
    tour()
