# %% [markdown]
# # Training a small MLP, twice
#
# Two interleaved spirals are a classic small problem a linear model cannot solve. We train
# the same two-hidden-layer MLP on them twice: with the functional API (parameters are a
# pytree, `value_and_grad` gives the gradient, Adam is a pure function of the state) and
# with the PyTorch facade (`nn.Module`, `loss.backward()`, `optim.Adam`). Both start from
# the same weights and use the same update equations, so their loss curves coincide.

# %%
import time

import numpy as np
import matplotlib.pyplot as plt

import funcgrad
import funcgrad.numpy as fnp
from funcgrad.tree_util import tree_map

# %% [markdown]
# ## Data: two spirals

# %%
def two_spirals(n, turns=1.75, noise=0.04, seed=0):
    """``2n`` points in the plane: class 0 on one spiral arm, class 1 on the other."""
    rng = np.random.default_rng(seed)
    t = np.sqrt(rng.uniform(0.02, 1, n)) * turns * 2 * np.pi
    arm = np.stack([t * np.cos(t), t * np.sin(t)], axis=1) / (turns * 2 * np.pi)
    points = np.concatenate([arm, -arm]) + rng.normal(scale=noise, size=(2 * n, 2))
    labels = np.concatenate([np.zeros(n, dtype=np.int64), np.ones(n, dtype=np.int64)])
    return points.astype(np.float32), labels

X_np, y_np = two_spirals(300)
fig, ax = plt.subplots(figsize=(4.5, 4.5))
ax.scatter(*X_np.T, c=y_np, cmap="coolwarm", s=8)
ax.set_aspect("equal")
ax.set_title("two spirals")
plt.show()

# %% [markdown]
# ## The functional way
#
# The model is a function of a parameter pytree (a list of `(W, b)` pairs); the loss is
# cross-entropy over two logits. Adam is written as a pure function of
# `(gradient, state, params)`, mapped over the pytree.

# %%
SIZES = [2, 32, 32, 2]
STEPS, LR = 600, 0.02

def init_params(sizes, seed=0):
    """Uniform(-1/sqrt(fan_in), 1/sqrt(fan_in)) weights and biases, as nn.Linear does."""
    rng = np.random.default_rng(seed)
    params = []
    for m, n in zip(sizes[:-1], sizes[1:]):
        bound = 1 / np.sqrt(m)
        params.append((rng.uniform(-bound, bound, (m, n)).astype(np.float32),
                       rng.uniform(-bound, bound, n).astype(np.float32)))
    return params

def mlp(params, x):
    for W, b in params[:-1]:
        x = fnp.tanh(x @ W + b)
    W, b = params[-1]
    return x @ W + b

def cross_entropy(params, x, onehot):
    logits = mlp(params, x)
    shifted = logits - fnp.max(logits, axis=1, keepdims=True)
    log_probs = shifted - fnp.log(fnp.sum(fnp.exp(shifted), axis=1, keepdims=True))
    return -fnp.mean(fnp.sum(onehot * log_probs, axis=1))

def adam(lr, b1=0.9, b2=0.999, eps=1e-8):
    def init(params):
        zeros = tree_map(fnp.zeros_like, params)
        return zeros, zeros, 0

    def update(grads, state, params):
        m, v, k = state
        k += 1
        m = tree_map(lambda m, g: b1 * m + (1 - b1) * g, m, grads)
        v = tree_map(lambda v, g: b2 * v + (1 - b2) * g * g, v, grads)
        params = tree_map(lambda p, m, v: p - lr * (m / (1 - b1 ** k))
                          / (fnp.sqrt(v / (1 - b2 ** k)) + eps), params, m, v)
        return params, (m, v, k)
    return init, update

X = fnp.asarray(X_np)
onehot = fnp.asarray(np.eye(2, dtype=np.float32)[y_np])
params = tree_map(fnp.asarray, init_params(SIZES))
opt_init, opt_update = adam(LR)
state = opt_init(params)
loss_and_grad = funcgrad.value_and_grad(cross_entropy)

start = time.perf_counter()
functional_losses = []
for step in range(STEPS):
    loss, grads = loss_and_grad(params, X, onehot)
    params, state = opt_update(grads, state, params)
    functional_losses.append(float(loss))
functional_seconds = time.perf_counter() - start
functional_params = params

def accuracy(logits):
    return float(np.mean(np.argmax(np.asarray(logits), axis=1) == y_np))

print(f"{STEPS} steps in {functional_seconds:.1f} s, final loss "
      f"{functional_losses[-1]:.4f}, accuracy {accuracy(mlp(params, X)):.3f}")

# %% [markdown]
# ## The PyTorch way
#
# The same network as an `nn.Sequential`, loaded with the same initial weights
# (`nn.Linear` stores `W` transposed), trained with `optim.Adam` and `loss.backward()`.

# %%
import funcgrad.torch as torch
from funcgrad.torch import nn

model = nn.Sequential(nn.Linear(2, 32), nn.Tanh(), nn.Linear(32, 32), nn.Tanh(),
                      nn.Linear(32, 2))
linears = [m for m in model.modules() if isinstance(m, nn.Linear)]
with torch.no_grad():
    for layer, (W, b) in zip(linears, init_params(SIZES)):
        layer.weight.copy_(torch.from_numpy(W.T.copy()))
        layer.bias.copy_(torch.from_numpy(b))

optimizer = torch.optim.Adam(model.parameters(), lr=LR)
inputs, targets = torch.from_numpy(X_np), torch.from_numpy(y_np)

start = time.perf_counter()
facade_losses = []
for step in range(STEPS):
    optimizer.zero_grad()
    loss = nn.functional.cross_entropy(model(inputs), targets)
    loss.backward()
    optimizer.step()
    facade_losses.append(loss.item())
facade_seconds = time.perf_counter() - start

with torch.no_grad():
    facade_accuracy = accuracy(model(inputs).numpy())
print(f"{STEPS} steps in {facade_seconds:.1f} s, final loss {facade_losses[-1]:.4f}, "
      f"accuracy {facade_accuracy:.3f}")
print("largest difference between the two loss curves:",
      np.max(np.abs(np.array(functional_losses) - np.array(facade_losses))))

# %% [markdown]
# ## Loss curves and decision boundaries

# %%
grid = np.linspace(-1.3, 1.3, 200, dtype=np.float32)
gx, gy = np.meshgrid(grid, grid)
points = np.stack([gx.ravel(), gy.ravel()], axis=1)

def boundary(ax, predict, title):
    probs = predict(points).reshape(gx.shape)
    ax.contourf(gx, gy, probs, levels=20, cmap="coolwarm", alpha=0.6)
    ax.contour(gx, gy, probs, levels=[0.5], colors="k", linewidths=1)
    ax.scatter(*X_np.T, c=y_np, cmap="coolwarm", s=6, edgecolors="none")
    ax.set_aspect("equal")
    ax.set_title(title)

def functional_predict(p):
    logits = np.asarray(mlp(functional_params, fnp.asarray(p)))
    return np.exp(logits[:, 1]) / np.exp(logits).sum(axis=1)

@torch.no_grad()
def facade_predict(p):
    return torch.softmax(model(torch.from_numpy(p)), dim=1)[:, 1].numpy()

fig, (ax0, ax1, ax2) = plt.subplots(1, 3, figsize=(14, 4.3))
ax0.plot(functional_losses, label=f"functional ({functional_seconds:.1f} s)")
ax0.plot(facade_losses, "--", label=f"facade ({facade_seconds:.1f} s)")
ax0.set(yscale="log", xlabel="step", ylabel="cross-entropy", title="training loss")
ax0.legend()
boundary(ax1, functional_predict, "functional API")
boundary(ax2, facade_predict, "funcgrad.torch")
plt.tight_layout()
plt.show()
