"""Saved-tensor hooks see the tensors PyTorch's derivative formulas save, in its order.

Each op below runs on PyTorch and on funcgrad.torch under ``saved_tensors_hooks`` with
every subset of its inputs requiring grad; the packed tensors must be the same (which
input, the result, or a tensor an earlier op in the expression made), in the same order,
once per saved variable. funcgrad's own rules read other residuals; the facade packs
PyTorch's tensors for the nodes of `funcgrad.torch._saved_variables`. The exception: tensors
a PyTorch kernel makes inside itself and saves (``native_layer_norm``'s mean and rstd,
``log_sigmoid``'s buffer), which funcgrad's compositions do not make: those are left out
of PyTorch's sequence for the nodes in ``KERNEL_INTERMEDIATES``. Gradients under hooks that
move every packed value through numpy equal those without hooks.
"""
import numpy as np
import pytest

import funcgrad.torch as ftorch

torch = pytest.importorskip("torch")
if not hasattr(torch, "tensor"):  # the tests/torch folder itself, seen as a namespace
    pytest.skip("PyTorch is not installed", allow_module_level=True)

KERNEL_INTERMEDIATES = {"NativeLayerNormBackward0", "LogSigmoidBackward0"}


def cases(lib):
    """(label, function of the library's tensors, input specs: a shape, or ("pos"/"unit",
    *shape) for values in (0.5, 1.3) / (-0.4, 0.4))."""
    F = lib.nn.functional

    def unary(name):
        return lambda x: getattr(lib, name)(x)
    vec, pos, unit = [(3,)], [("pos", 3)], [("unit", 3)]
    two = [(3,), (3,)]
    listed = [(name, unary(name), vec) for name in (
        "exp", "expm1", "sin", "cos", "tan", "tanh", "sigmoid", "sinh", "cosh", "atan",
        "asinh", "erf", "erfc", "abs", "neg", "reciprocal", "relu", "square", "sign",
        "floor")]
    listed += [(name, unary(name), pos) for name in (
        "sqrt", "rsqrt", "log", "log2", "log10", "log1p")]
    listed += [(name, unary(name), unit) for name in ("asin", "acos")]
    listed += [(name, getattr(F, name), vec) for name in (
        "gelu", "silu", "leaky_relu", "elu", "softplus", "hardtanh", "logsigmoid", "mish",
        "selu")]
    listed += [(name, getattr(lib, name), two) for name in (
        "add", "sub", "mul", "div", "maximum", "minimum", "atan2", "hypot")]
    listed += [(name, getattr(F, name), two) for name in (
        "mse_loss", "l1_loss", "smooth_l1_loss", "huber_loss")]
    return listed + [
        ("pow", lib.pow, [("pos", 3), (3,)]), ("pow_scalar", lambda x: x ** 3, vec),
        ("mul_scalar", lambda x: x * 2.5, vec), ("div_scalar", lambda x: x / 2.5, vec),
        ("mm", lib.mm, [(3, 4), (4, 2)]), ("bmm", lib.bmm, [(2, 3, 4), (2, 4, 2)]),
        ("mv", lib.mv, [(3, 4), (4,)]), ("dot", lib.dot, two),
        ("addmm", lib.addmm, [(3, 2), (3, 4), (4, 2)]), ("matmul", lib.matmul, [(3, 4), (4, 2)]),
        ("sum", lib.sum, vec), ("mean", lib.mean, vec), ("prod", lib.prod, vec),
        ("max", lib.max, vec), ("min", lib.min, vec), ("amax", lambda x: x.amax(1), [(3, 3)]),
        ("norm", lib.norm, vec), ("var", lib.var, vec), ("std", lib.std, vec),
        ("logsumexp", lambda x: lib.logsumexp(x, 0), vec),
        ("cumsum", lambda x: lib.cumsum(x, 0), vec),
        ("cumprod", lambda x: lib.cumprod(x, 0), vec),
        ("softmax", lambda x: lib.softmax(x, 0), vec),
        ("log_softmax", lambda x: lib.log_softmax(x, 0), vec),
        ("where", lambda x, y: lib.where(x > 0, x, y), two),
        ("clamp", lambda x: x.clamp(-0.5, 0.5), vec),
        ("lerp", lambda x, y: lib.lerp(x, y, 0.3), two),
        ("addcmul", lib.addcmul, [(3,), (3,), (3,)]),
        ("addcdiv", lib.addcdiv, [(3,), (3,), ("pos", 3)]),
        ("layer_norm", lambda x: F.layer_norm(x, (3,)), [(2, 3)]),
        ("layer_norm_affine", lambda x, w, b: F.layer_norm(x, (3,), w, b),
         [(2, 3), (3,), (3,)]),
        ("linear", F.linear, [(2, 3), (4, 3)]),
        ("linear_bias", F.linear, [(2, 3), (4, 3), (4,)]),
        ("conv2d", F.conv2d, [(1, 2, 5, 5), (3, 2, 3, 3)]),
        ("dropout_eval", lambda x: F.dropout(x, 0.5, False), vec),
        ("trace", lib.trace, [(3, 3)]), ("diag", lib.diag, vec), ("t", lib.t, [(2, 3)]),
        ("view", lambda x: x.view(6), [(2, 3)]),
        ("transpose", lambda x: x.transpose(0, 1), [(2, 3)]),
        ("index", lambda x: x[0], [(2, 3)]), ("cat", lambda x, y: lib.cat([x, y]), two),
        ("stack", lambda x, y: lib.stack([x, y]), two),
        ("expand", lambda x: x.expand(2, 3), vec), ("sum_dim", lambda x: x.sum(0), [(2, 3)]),
        ("mean_dim", lambda x: x.mean(0), [(2, 3)]),
    ]


LABELS = [c[0] for c in cases(ftorch)]
SPECS = {c[0]: c[2] for c in cases(ftorch)}


def _values(label):
    rng = np.random.default_rng(sum(map(ord, label)))
    out = []
    for spec in SPECS[label]:
        if isinstance(spec[0], str):
            kind, *shape = spec
            low, high = (0.5, 1.3) if kind == "pos" else (-0.4, 0.4)
            out.append(rng.uniform(low, high, shape))
        else:
            out.append(rng.standard_normal(spec))
    return out


def _inputs(lib, values, mask):
    """Tensors of ``values``; those in ``mask`` require grad and are not leaves (as an
    op's inputs usually are)."""
    made = []
    for i, v in enumerate(values):
        t = lib.tensor(v, dtype=lib.float64)
        made.append(t.requires_grad_() * 1.0 if mask >> i & 1 else t)
    return made


def _describe(t, args, result):
    for i, a in enumerate(args):
        if a is t:
            return i
    if t is result:
        return "result"
    node = t.grad_fn
    if node is not None:
        return ("made", tuple(t.shape), type(node).__name__)
    return ("made", tuple(t.shape), "leaf" if t.requires_grad else "const")


def _packed(lib, label, mask):
    fn = dict((c[0], c[1]) for c in cases(lib))[label]
    args = _inputs(lib, _values(label), mask)
    packed = []
    with lib.autograd.graph.saved_tensors_hooks(lambda t: packed.append(t) or t, lambda t: t):
        result = fn(*args)
    node = type(result.grad_fn).__name__
    return node, [_describe(t, args, result) for t in packed]


PARAMS = [(label, mask) for label in LABELS for mask in range(1, 1 << len(SPECS[label]))]


@pytest.mark.parametrize("label,mask", PARAMS, ids=[f"{l}-{m}" for l, m in PARAMS])
def test_packed_tensors_are_pytorchs(label, mask):
    node, expected = _packed(torch, label, mask)
    ours_node, got = _packed(ftorch, label, mask)
    assert ours_node == node
    if node in KERNEL_INTERMEDIATES:
        expected = [e for e in expected if not (isinstance(e, tuple) and e[2] == "const")]
    assert got == expected


def _grads_through_numpy(lib, label):
    """Gradients of the op's sum with every saved value packed to numpy and back."""
    fn = dict((c[0], c[1]) for c in cases(lib))[label]
    values = _values(label)
    leaves = [lib.tensor(v, dtype=lib.float64, requires_grad=True) for v in values]
    pack = lambda t: (t.detach().numpy().copy(), t.dtype)
    unpack = lambda p: lib.tensor(p[0], dtype=p[1])
    with lib.autograd.graph.saved_tensors_hooks(pack, unpack):
        out = fn(*[x * 1.0 for x in leaves])
    out.sum().backward()
    return [None if x.grad is None else x.grad.numpy() for x in leaves]


@pytest.mark.parametrize("label", LABELS)
def test_gradients_through_hooks_are_pytorchs(label):
    ours = _grads_through_numpy(ftorch, label)
    theirs = _grads_through_numpy(torch, label)
    for a, b in zip(ours, theirs):
        assert (a is None) == (b is None)
        if a is not None:
            np.testing.assert_allclose(a, b, rtol=1e-10, atol=1e-12)


def test_tutorial_packs_and_unpacks_in_pytorchs_order():
    """PyTorch's saved-tensors-hooks tutorial: ``a * b`` packs b, then a; backward unpacks
    them in that order."""
    def run(lib):
        seen = []
        a = lib.ones(5, requires_grad=True)
        b = lib.ones(5, requires_grad=True) * 2
        with lib.autograd.graph.saved_tensors_hooks(
                lambda t: seen.append(("pack", t.tolist())) or t,
                lambda t: seen.append(("unpack", t.tolist())) or t):
            y = a * b
        y.sum().backward()
        return seen
    assert run(ftorch) == run(torch)
