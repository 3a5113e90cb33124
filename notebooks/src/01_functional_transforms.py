# %% [markdown]
# # Functional transforms
#
# funcgrad differentiates *functions*: `grad(f)` is a new function, and so are `vjp`,
# `jvp`, `jacfwd`, `jacrev` and `hessian` of it. This notebook applies each of them to
# ordinary numeric code, looks at the tape that reverse mode records (as text, as a table
# and as a graph), and ends with the classic picture: `tanh` and its first six derivatives.

# %%
import numpy as np
import matplotlib.pyplot as plt

import funcgrad
import funcgrad.numpy as fnp

# %% [markdown]
# ## `grad`
#
# `funcgrad.numpy` has numpy's names and signatures; every function in it is
# differentiable. Arrays are immutable and display as a small table in Jupyter.

# %%
def loss(w, x, y):
    """Mean squared error of a one-layer tanh model."""
    return fnp.mean((fnp.tanh(x @ w) - y) ** 2)

rng = np.random.default_rng(0)
x = fnp.asarray(rng.normal(size=(8, 3)))
y = fnp.asarray(rng.normal(size=8))
w = fnp.asarray([0.1, -0.2, 0.3])
w

# %%
g = funcgrad.grad(loss)(w, x, y)
value, (g_w, g_x) = funcgrad.value_and_grad(loss, argnums=(0, 1))(w, x, y)
print("loss     :", float(value))
print("dloss/dw :", g)
print("dloss/dx shape:", g_x.shape)

# %% [markdown]
# A central finite difference agrees:

# %%
eps = 1e-6
fd = [(loss(w.at[i].add(eps), x, y) - loss(w.at[i].add(-eps), x, y)) / (2 * eps)
      for i in range(3)]
np.testing.assert_allclose(np.asarray(g), np.asarray(fd), rtol=1e-6)
print("finite differences:", np.round(np.asarray(fd), 6))

# %% [markdown]
# ## `vjp` and `jvp`
#
# For `f: R^3 -> R^2`, `vjp` pulls a cotangent (a row vector) back through the Jacobian
# (reverse mode, one pass per output direction); `jvp` pushes a tangent forward (forward
# mode, one pass per input direction).

# %%
def f(v):
    a, b, c = v[0], v[1], v[2]
    return fnp.stack([a * fnp.sin(b), fnp.exp(a) * c ** 2])

v = fnp.asarray([1.0, 0.5, -2.0])
out, f_vjp = funcgrad.vjp(f, v)
(row0,) = f_vjp(fnp.asarray([1.0, 0.0]))
out, column0 = funcgrad.jvp(f, (v,), (fnp.asarray([1.0, 0.0, 0.0]),))
J = funcgrad.jacrev(f)(v)
print("f(v)           :", out)
print("u^T J, u=e0    :", row0)
print("J t, t=e0      :", column0)
print("jacrev(f)(v)   :\n", J)
np.testing.assert_allclose(np.asarray(J), np.asarray(funcgrad.jacfwd(f)(v)))

# %% [markdown]
# ## `hessian`
#
# Forward-over-reverse. The Rosenbrock function has a known Hessian.

# %%
def rosenbrock(p):
    return (1 - p[0]) ** 2 + 100 * (p[1] - p[0] ** 2) ** 2

p = fnp.asarray([1.5, -0.5])
H = funcgrad.hessian(rosenbrock)(p)
a, b = 1.5, -0.5
H_exact = np.array([[2 - 400 * (b - 3 * a ** 2), -400 * a], [-400 * a, 200]])
np.testing.assert_allclose(np.asarray(H), H_exact)
H

# %% [markdown]
# ## The tape of a gradient
#
# `make_tape(fun)(*args)` records every primitive `fun` applies. For `grad(fun)` that is
# the forward pass *and* the backward pass (whose rules are funcgrad ops themselves, which
# is why gradients can be differentiated again). Printed, a tape reads like a jaxpr:

# %%
def small(x):
    return fnp.sum(fnp.tanh(x) ** 2)

tape = funcgrad.make_tape(funcgrad.grad(small))(fnp.asarray([0.5, -1.0, 2.0]))
print(tape)

# %% [markdown]
# In Jupyter the same tape is a table, one row per record, the backward pass shaded:

# %%
tape

# %% [markdown]
# and `tape.draw()` draws it with Graphviz: inputs blue, outputs green, constants as notes,
# the forward pass grey and the backward pass orange, each edge naming its variable.

# %%
tape.draw()

# %% [markdown]
# A tape can be re-run on new inputs of the same shape:

# %%
print(tape(fnp.asarray([0.0, 1.0, -3.0])))
print(funcgrad.grad(small)(fnp.asarray([0.0, 1.0, -3.0])))

# %% [markdown]
# ## tanh and its first six derivatives
#
# `grad` of an elementwise function summed over a grid gives its derivative at every grid
# point; applying that six times gives the sixth derivative. Each level differentiates the
# code of the level below, backward pass included.

# %%
def derivative(fun):
    return lambda x: funcgrad.grad(lambda x: fnp.sum(fun(x)))(x)

xs = fnp.linspace(-7, 7, 400)
funs = [fnp.tanh]
for _ in range(6):
    funs.append(derivative(funs[-1]))

fig, ax = plt.subplots(figsize=(8, 4.5))
for k, fun in enumerate(funs):
    ax.plot(np.asarray(xs), np.asarray(fun(xs)), label=f"order {k}" if k else "tanh")
ax.set_xlabel("x")
ax.legend(ncol=2)
ax.set_title("tanh and its first six derivatives")
plt.show()

# %% [markdown]
# The analytic second derivative, `-2 tanh(x) (1 - tanh(x)^2)`, matches:

# %%
t = np.tanh(np.asarray(xs))
np.testing.assert_allclose(np.asarray(funs[2](xs)), -2 * t * (1 - t ** 2), atol=1e-12)
print("max |error| of the 2nd derivative:",
      np.abs(np.asarray(funs[2](xs)) + 2 * t * (1 - t ** 2)).max())
