# %% [markdown]
# # The PyTorch facade: autograd from the inside
#
# `funcgrad.torch` runs PyTorch code on funcgrad: `import funcgrad.torch as torch` and the
# familiar API is there (`requires_grad`, `grad_fn`, `backward()`, `autograd.Function`,
# `nn`, `optim`), with every derivative coming from funcgrad's primitive rules. This
# notebook walks through how autograd works, following the classic tour of PyTorch's
# internals: tensors as graph nodes, the backward engine, version counters and the in-place
# error, a custom `Function` checked with `gradcheck`, and pictures of the graph.

# %%
import funcgrad.torch as torch
from funcgrad.viz import make_dot

# %% [markdown]
# ## Tensors carry how they were made
#
# A tensor that requires grad records, in `grad_fn`, the backward function of the
# operation that produced it. Leaves (made by you) have none.

# %%
x = torch.tensor([1., 2., 3.], requires_grad=True)
y = x * 2
z = y.mean()
print(x)
print(x.requires_grad)   # True
print(x.grad_fn)         # None: x is a leaf
print(y.grad_fn)         # <MulBackward0 object at ...>
print(z.grad_fn)         # <MeanBackward0 object at ...>
print(x.is_leaf, y.is_leaf)

# %% [markdown]
# In Jupyter a tensor also shows as a small table:

# %%
y

# %% [markdown]
# `backward()` walks the `grad_fn` chain from `z` and accumulates into the leaves' `.grad`:
# `z = mean(2x)`, so `dz/dx = 2/3` everywhere.

# %%
z.backward()
print(x.grad)

# %% [markdown]
# ## The graph, edge by edge
#
# Each node lists its inputs' nodes in `next_functions`, as `(node, input_nr)` pairs; a
# leaf's node is an `AccumulateGrad` whose `variable` is the leaf itself.

# %%
torch.manual_seed(0)
a = torch.randn(2, 2, requires_grad=True)
b = torch.randn(2, 2, requires_grad=True)
c = a * b        # MulBackward0
d = c.sum()      # SumBackward0
loss = d.log()   # LogBackward0

def walk(fn, depth=0):
    print("    " * depth + type(fn).__name__
          + (f"  -> variable of shape {tuple(fn.variable.shape)}"
             if hasattr(fn, "variable") else ""))
    for next_fn, _ in fn.next_functions:
        if next_fn is not None:
            walk(next_fn, depth + 1)

walk(loss.grad_fn)

# %% [markdown]
# `make_dot` draws the same graph the way torchviz does: backward nodes grey, leaves blue
# (named through `params`), the output green. With `show_saved=True` the tensors a node
# saved for its backward pass appear in orange.

# %%
make_dot(loss, params={"a": a, "b": b})

# %%
loss.backward()
print(a.grad)
print(b.grad)
print("b / sum(a*b):", b / (a * b).sum())

# %% [markdown]
# The picture from the tour (`x * x`, summed), rendered to a PNG file as torchviz users do
# (without Graphviz installed, `render` says how to install it and returns the DOT source):

# %%
import os, tempfile

x = torch.tensor([1., 2.], requires_grad=True)
y = x * x
z = y.sum()
dot = make_dot(z, params={"x": x}, show_saved=True)
dot.render(os.path.join(tempfile.mkdtemp(), "computational_graph"), format="png")
dot

# %% [markdown]
# ## Backward frees the graph
#
# Saved values are released after a backward pass, so a second pass through the same graph
# fails, unless the first one kept them with `retain_graph=True`.

# %%
x = torch.tensor([1., 2.], requires_grad=True)
z = (x * x).sum()
z.backward()
try:
    z.backward()
except RuntimeError as e:
    print("RuntimeError:", e)

z = (x * x).sum()
z.backward(retain_graph=True)
z.backward()
print(x.grad)   # accumulated: 2x + 2x + 2x

# %% [markdown]
# ## In-place operations and version counters
#
# Every tensor has a version counter that in-place operations bump. A node that saved a
# tensor remembers its version; if the tensor changed before the backward pass reads it,
# autograd refuses to compute a wrong gradient.

# %%
a = torch.tensor([1., 2., 3.], requires_grad=True)
b = a.exp()          # ExpBackward0 saves its output b
print("version of b:", b._version)
b.mul_(2)            # in place: b is now at version 1
print("version of b:", b._version)
try:
    b.sum().backward()
except RuntimeError as e:
    print("RuntimeError:", e)

# %% [markdown]
# In-place on a leaf that requires grad is refused outright; in-place that nothing saved
# is fine, and the tensor's `grad_fn` moves to the in-place op:

# %%
try:
    a.add_(1)
except RuntimeError as e:
    print("RuntimeError:", e)

c = a * 2            # MulBackward0 saves the constant 2, not its output
c.add_(1)            # safe
print(c.grad_fn, c._version)
c.sum().backward()
print(a.grad)

# %% [markdown]
# `detect_anomaly` records where each node was created and prints that traceback when its
# backward fails:

# %%
import warnings

with warnings.catch_warnings(record=True) as caught:
    warnings.simplefilter("always")
    try:
        with torch.autograd.detect_anomaly():
            a = torch.tensor([1., 2.], requires_grad=True)
            b = a.exp()
            b.mul_(2)
            b.sum().backward()
    except RuntimeError as e:
        print("RuntimeError:", str(e)[:100], "...")
for w in caught:  # the forward traceback ends at the line that created the node
    lines = str(w.message).splitlines()
    print(f"{w.category.__name__}: {lines[0]}", *lines[1:][-2:], sep="\n")

# %% [markdown]
# ## A custom `Function`
#
# `forward` computes the value and saves what `backward` needs; `backward` maps the output
# gradient to the input gradient. Sigmoid saves its output: `sigmoid' = s (1 - s)`.

# %%
class MySigmoid(torch.autograd.Function):
    @staticmethod
    def forward(ctx, input):
        output = 1 / (1 + torch.exp(-input))
        ctx.save_for_backward(output)
        return output

    @staticmethod
    def backward(ctx, grad_output):
        output, = ctx.saved_tensors
        return output * (1 - output) * grad_output

my_sigmoid = MySigmoid.apply
x = torch.tensor([0., 1., -1.], requires_grad=True)
y = my_sigmoid(x)
print("Forward output:", y)
y.sum().backward()
print("Gradient w.r.t x:", x.grad)

x2 = torch.tensor([0., 1., -1.], requires_grad=True)
torch.sigmoid(x2).sum().backward()
print("PyTorch's gradient:", x2.grad)
print(y.grad_fn)

# %% [markdown]
# `gradcheck` compares the analytic Jacobian with finite differences (in float64):

# %%
inputs = (torch.randn(4, dtype=torch.float64, requires_grad=True),)
print("gradcheck:", torch.autograd.gradcheck(MySigmoid.apply, inputs))

class WrongSigmoid(MySigmoid):
    @staticmethod
    def backward(ctx, grad_output):
        output, = ctx.saved_tensors
        return output * grad_output          # forgot (1 - output)

try:
    torch.autograd.gradcheck(WrongSigmoid.apply, inputs)
except RuntimeError as e:
    print(type(e).__name__ + ":", str(e).splitlines()[0])

# %% [markdown]
# The custom node is drawn like any other, with the tensors it saved:

# %%
make_dot(my_sigmoid(x).sum(), params={"x": x}, show_saved=True)

# %% [markdown]
# ## Freezing and evaluation
#
# Parameters with `requires_grad=False` get no gradient and no graph; under `no_grad` no
# graph is built at all.

# %%
from funcgrad.torch import nn

class Model(nn.Module):
    def __init__(self):
        super().__init__()
        self.backbone = nn.Sequential(nn.Linear(3, 8), nn.Tanh())
        self.head = nn.Linear(8, 1)

    def forward(self, x):
        return self.head(self.backbone(x))

model = Model()
for param in model.backbone.parameters():
    param.requires_grad = False

out = model(torch.randn(5, 3)).sum()
out.backward()
print("backbone grads:", [p.grad for p in model.backbone.parameters()])
print("head grads    :", [tuple(p.grad.shape) for p in model.head.parameters()])

@torch.no_grad()
def evaluate(model, x):
    model.eval()
    return model(x)

pred = evaluate(model, torch.randn(2, 3))
print(pred.requires_grad, pred.grad_fn)

# %%
make_dot(model(torch.randn(5, 3)).sum(), params=dict(model.named_parameters()))
