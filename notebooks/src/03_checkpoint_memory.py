# %% [markdown]
# # Checkpointing: memory against depth
#
# Reverse mode keeps, for the backward pass, the values its rules read: for a deep chain
# of layers that is a few arrays per layer, so the memory of a gradient grows with the
# depth. `checkpoint` (alias `remat`) keeps only a function's inputs and recomputes the
# rest during the backward pass; `checkpoint_sequential` checkpoints segments of about
# `sqrt(depth)` layers, which brings the peak down to about `sqrt(depth)` layers' worth.
#
# Below: what a gradient keeps (`print_saved_residuals`), then the peak memory of a
# gradient against depth, measured with `tracemalloc` (numpy reports its buffers to it).

# %%
import time
import tracemalloc

import numpy as np
import matplotlib.pyplot as plt

import funcgrad
import funcgrad.numpy as fnp
from funcgrad import checkpoint, checkpoint_sequential, checkpoint_policies

# %%
N = 50_000                 # width of every layer: 400 kB of float64
rng = np.random.default_rng(0)

def make_layers(depth):
    params = [(fnp.asarray(rng.normal(size=N) * 0.5), fnp.asarray(rng.normal(size=N) * 0.1))
              for _ in range(depth)]
    return [(lambda w, b: lambda h: fnp.tanh(h * w + b))(w, b) for w, b in params]

def apply_layers(layers, h):
    for layer in layers:
        h = layer(h)
    return h

def chain(layers):
    return lambda x: fnp.sum(apply_layers(layers, x))

x0 = fnp.asarray(rng.normal(size=N))

# %% [markdown]
# ## What a gradient keeps
#
# Three layers without checkpoints: each layer keeps its output (the rule of `tanh` reads
# it: `1 - tanh(h)^2`) and its weight `w` (the rule of `mul` reads it; it is a constant
# that exists anyway, so it costs no extra memory).

# %%
layers = make_layers(3)
funcgrad.print_saved_residuals(chain(layers), x0)

# %% [markdown]
# With the three layers in one checkpoint, only its input is kept (plus the weights it
# closes over, listed as constants); everything else is recomputed. `saved_residuals`
# returns a list of `Residual`s that Jupyter shows as a table:

# %%
def chain_ckpt(x):
    return fnp.sum(checkpoint(lambda h: apply_layers(layers, h))(x))

report = funcgrad.saved_residuals(chain_ckpt, x0)
report

# %% [markdown]
# The tape shows the checkpoint as one record holding its sub-tape (drawn as a cluster):

# %%
small = make_layers(2)
tape = funcgrad.make_tape(lambda x: fnp.sum(checkpoint(lambda h: apply_layers(small, h))(x)))(x0)
tape.draw()

# %% [markdown]
# ## Peak memory against depth
#
# `peak(fun, x)` runs `fun(x)` under `tracemalloc` and reports the highest memory in use
# above what was allocated before the call. Three ways to take the gradient of the same
# chain: no checkpoints, every layer checkpointed, and `checkpoint_sequential` with
# `sqrt(depth)` segments. All three give the same gradient.

# %%
def peak(fun, x):
    tracemalloc.start()
    try:
        base = tracemalloc.get_traced_memory()[0]
        tracemalloc.reset_peak()
        out = fun(x)
        return out, tracemalloc.get_traced_memory()[1] - base
    finally:
        tracemalloc.stop()

def variants(layers):
    return {
        "no checkpoint": chain(layers),
        "every layer checkpointed": chain([checkpoint(f) for f in layers]),
        "checkpoint_sequential (sqrt)": lambda x: fnp.sum(
            checkpoint_sequential(layers, None, x)),
    }

depths = [4, 8, 16, 32, 64, 128]
layer_mb = N * 8 / 1e6
results = {name: [] for name in variants([])}
for depth in depths:
    layers = make_layers(depth)
    grads = []
    for name, fun in variants(layers).items():
        g, nbytes = peak(funcgrad.grad(fun), x0)
        results[name].append(nbytes / 1e6)
        grads.append(np.asarray(g))
    for g in grads[1:]:
        np.testing.assert_allclose(g, grads[0], rtol=1e-12)

print(f"{'depth':>5}" + "".join(f"{name:>30}" for name in results))
for i, depth in enumerate(depths):
    print(f"{depth:>5}" + "".join(f"{mb[i]:>27.1f} MB" for mb in results.values()))

# %%
fig, ax = plt.subplots(figsize=(7, 4.5))
for name, mb in results.items():
    ax.plot(depths, mb, "o-", label=name)
ax.plot(depths, [d * layer_mb for d in depths], "k:", label="one activation per layer")
ax.plot(depths, [2 * np.sqrt(d) * layer_mb for d in depths], "k--",
        label="2 sqrt(depth) layers")
ax.set(xscale="log", yscale="log", xlabel="depth (layers)", ylabel="peak memory (MB)",
       title=f"peak memory of grad, layers of {N:,} float64")
ax.set_xticks(depths, [str(d) for d in depths])
ax.set_yticks([2, 5, 10, 20, 50], ["2", "5", "10", "20", "50"])
ax.yaxis.set_minor_formatter(plt.NullFormatter())
ax.legend()
plt.show()

# %% [markdown]
# Without checkpoints the peak grows linearly: one activation per layer. Checkpointing
# every layer does not help here: each checkpoint keeps its input, which is the previous
# layer's output, exactly what the plain tape kept. `checkpoint_sequential` grows like
# `sqrt(depth)` (the inputs of `sqrt(depth)` segments, plus one segment recomputed at a
# time): at depth 128 it needs about a fifth of the memory.
#
# The price is time: the checkpointed segments run their forward pass twice.

# %%
def best_time(fun, x, repeat=3):
    times = []
    for _ in range(repeat):
        start = time.perf_counter()
        fun(x)
        times.append(time.perf_counter() - start)
    return min(times)

for name, fun in variants(make_layers(depths[-1])).items():
    print(f"{name:30} {best_time(funcgrad.grad(fun), x0) * 1e3:7.1f} ms")

# %% [markdown]
# ## Policies
#
# A policy decides which values inside a checkpoint may be kept anyway. Naming a value with
# `checkpoint_name` and saving only that name keeps exactly it:

# %%
layers = make_layers(3)

def named_chain(x):
    for k, layer in enumerate(layers):
        x = funcgrad.checkpoint_name(layer(x), f"layer{k}")
    return x

for policy in [checkpoint_policies.nothing_saveable,
               checkpoint_policies.save_only_these_names("layer1"),
               checkpoint_policies.everything_saveable]:
    kept = funcgrad.saved_residuals(
        lambda x: fnp.sum(checkpoint(named_chain, policy=policy)(x)), x0)
    print(f"{policy!r:45} {len(kept)} residuals, {kept.nbytes / 1e6:.1f} MB")
