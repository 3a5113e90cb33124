"""Losses (every reduction, weights, ignore_index, label smoothing, class probabilities,
the legacy size_average/reduce pair and its warning) and attention (scaled dot product,
MultiheadAttention, Transformer modules) against real PyTorch."""
import warnings

import numpy as np
import pytest

RNG = np.random.RandomState(0)


def rand(*shape):
    return RNG.uniform(-1, 1, shape)


def probs(*shape, axis=1):
    e = np.exp(rand(*shape) * 2)
    return e / e.sum(axis, keepdims=True)


LABELS = np.array([0, 2, 1, 2])
REDUCTIONS = ["mean", "sum", "none"]


@pytest.mark.parametrize("reduction", REDUCTIONS)
def test_pointwise_losses(peer, reduction):
    x, t, w = rand(4, 3), rand(4, 3), RNG.uniform(0.5, 2, (4, 3))
    cases = [
        lambda T, x, t: T.nn.functional.mse_loss(x, t, reduction=reduction),
        lambda T, x, t: T.nn.functional.l1_loss(x, t, reduction=reduction),
        lambda T, x, t: T.nn.functional.smooth_l1_loss(x, t, reduction=reduction, beta=0.3),
        lambda T, x, t: T.nn.functional.smooth_l1_loss(x, t, reduction=reduction, beta=0.0),
        lambda T, x, t: T.nn.functional.huber_loss(x, t, reduction=reduction, delta=0.4),
        lambda T, x, t: T.nn.functional.kl_div(x, t, reduction=reduction, log_target=True),
    ]
    for case in cases:
        peer.check(case, x, t)
    for name in ("mse_loss", "l1_loss", "huber_loss"):
        peer.check(lambda T, x, t, w: getattr(T.nn.functional, name)(
            x, t, reduction=reduction, weight=w), x, t, w)


def test_kl_div_reductions_and_warning(peer):
    x, t = np.log(probs(4, 3)), probs(4, 3)
    for reduction in ("batchmean", "sum", "none"):
        peer.check(lambda T, x, t: T.nn.functional.kl_div(x, t, reduction=reduction), x, t)
    for T in (peer.real, peer.ours):
        with pytest.warns(UserWarning, match="'batchmean' divides only by the batch size"):
            T.nn.functional.kl_div(T.tensor(x), T.tensor(t))


@pytest.mark.parametrize("reduction", REDUCTIONS)
def test_binary_cross_entropy(peer, reduction):
    p, y = RNG.uniform(0.05, 0.95, (4, 3)), RNG.uniform(0, 1, (4, 3))
    w, pw = RNG.uniform(0.5, 2, (3,)), RNG.uniform(0.5, 2, (3,))
    peer.check(lambda T, p, y: T.nn.functional.binary_cross_entropy(p, y, reduction=reduction),
               p, y)
    peer.check(lambda T, p, y: T.nn.functional.binary_cross_entropy(
        p, y, T.tensor(w), reduction=reduction), p, y)
    peer.check(lambda T, x, y: T.nn.functional.binary_cross_entropy_with_logits(
        x, y, T.tensor(w), reduction=reduction, pos_weight=T.tensor(pw)), rand(4, 3) * 3, y)


@pytest.mark.parametrize("kw", [
    dict(), dict(reduction="sum"), dict(reduction="none"), dict(ignore_index=2),
    dict(ignore_index=2, reduction="none"), dict(label_smoothing=0.2),
    dict(label_smoothing=0.2, reduction="sum"), dict(label_smoothing=0.2, reduction="none"),
    dict(label_smoothing=0.1, ignore_index=1), dict(weight=True), dict(weight=True, ignore_index=0),
    dict(weight=True, label_smoothing=0.3), dict(weight=True, label_smoothing=0.3, ignore_index=2),
])
def test_cross_entropy_with_class_indices(peer, kw):
    def fn(T, x):
        args = dict(kw)
        if args.pop("weight", False):
            args["weight"] = T.tensor([0.5, 2.0, 1.5], dtype=T.float64)
        return T.nn.functional.cross_entropy(x, T.tensor(LABELS), **args)
    peer.check(fn, rand(4, 3) * 2)


@pytest.mark.parametrize("kw", [dict(), dict(reduction="sum"), dict(reduction="none"),
                                dict(label_smoothing=0.25), dict(weight=True),
                                dict(weight=True, label_smoothing=0.1, reduction="none")])
def test_cross_entropy_with_class_probabilities(peer, kw):
    def fn(T, x, target):
        args = dict(kw)
        if args.pop("weight", False):
            args["weight"] = T.tensor([0.5, 2.0, 1.5], dtype=T.float64)
        return T.nn.functional.cross_entropy(x, target, **args)
    peer.check(fn, rand(4, 3, 2), probs(4, 3, 2), grad=True)


@pytest.mark.parametrize("shape", [(3,), (4, 3), (2, 3, 5), (2, 3, 2, 4), (2, 3, 2, 2, 2)])
@pytest.mark.parametrize("reduction", REDUCTIONS)
def test_nll_loss_shapes(peer, shape, reduction):
    target = RNG.randint(0, 3, shape[:1] + shape[2:]) if len(shape) > 1 else np.array(1)
    peer.check(lambda T, x: T.nn.functional.nll_loss(x, T.tensor(target),
                                                     reduction=reduction), rand(*shape))


LEGACY = [(None, None), (False, None), (None, False), (True, True), (False, False),
          (True, False)]


@pytest.mark.parametrize("size_average,reduce", LEGACY)
def test_legacy_size_average_and_reduce(peer, size_average, reduce):
    x, t = rand(4, 3), rand(4, 3)
    kw = dict(size_average=size_average, reduce=reduce)
    messages = []
    for T in (peer.real, peer.ours):
        with warnings.catch_warnings(record=True) as seen:
            warnings.simplefilter("always")
            values = [T.nn.MSELoss(**kw)(T.tensor(x), T.tensor(t)),
                      T.nn.functional.l1_loss(T.tensor(x), T.tensor(t), **kw),
                      T.nn.CrossEntropyLoss(**kw)(T.tensor(x), T.tensor(LABELS)),
                      T.nn.NLLLoss(**kw)(T.tensor(x), T.tensor(LABELS)),
                      T.nn.KLDivLoss(**kw, reduction="sum")(T.tensor(x), T.tensor(t).abs()),
                      T.nn.BCEWithLogitsLoss(**kw)(T.tensor(x), T.tensor(t).abs())]
        messages.append(sorted({str(w.message) for w in seen}))
        values = [v.numpy() for v in values]
        if T is peer.real:
            expected = values
    for a, b in zip(values, expected):
        np.testing.assert_allclose(a, b, rtol=1e-6)
    assert messages[1] == messages[0]


def test_loss_modules_take_pytorchs_positional_arguments(peer):
    w = np.array([0.5, 2.0, 1.5])
    for make in [lambda T: T.nn.CrossEntropyLoss(T.tensor(w, dtype=T.float64)),
                 lambda T: T.nn.NLLLoss(T.tensor(w, dtype=T.float64), None, 1),
                 lambda T: T.nn.MSELoss(None, None, "sum"),
                 lambda T: T.nn.SmoothL1Loss(reduction="none", beta=0.5),
                 lambda T: T.nn.HuberLoss("sum", 0.5)]:
        peer.check(lambda T, x: make(T)(x, T.tensor(LABELS) if isinstance(
            make(T), (T.nn.CrossEntropyLoss, T.nn.NLLLoss)) else T.tensor(rand(4, 3) * 0 + 0.5,
                                                                        dtype=T.float64)),
                   rand(4, 3))


LOSS_ERRORS = [
    lambda T: T.nn.functional.binary_cross_entropy(T.tensor([1.5]), T.tensor([1.0])),
    lambda T: T.nn.functional.binary_cross_entropy(T.rand(3, 1), T.rand(3)),
    lambda T: T.nn.functional.binary_cross_entropy_with_logits(T.rand(3, 1), T.rand(3)),
    lambda T: T.nn.functional.cross_entropy(T.randn(3, 4), T.tensor([1, 2, 4])),
    lambda T: T.nn.functional.kl_div(T.randn(3), T.rand(3), reduction="foo"),
    lambda T: T.nn.functional.mse_loss(T.randn(3), T.rand(3), reduction="foo"),
    lambda T: T.nn.functional.cross_entropy(T.randn(3, 4), T.rand(3, 4), ignore_index=1),
    lambda T: T.nn.functional.cross_entropy(T.randn(3, 4), T.tensor([1, 2, 3]),
                                            label_smoothing=1.5),
    lambda T: T.nn.functional.nll_loss(T.randn(3, 4), T.tensor([1.0, 2.0, 3.0])),
    lambda T: T.nn.functional.smooth_l1_loss(T.randn(3), T.randn(3), beta=-1.0),
    lambda T: T.nn.functional.huber_loss(T.randn(3), T.randn(3), delta=0.0),
]


@pytest.mark.parametrize("case", range(len(LOSS_ERRORS)))
def test_loss_errors_are_pytorchs(peer, case):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        peer.raises(LOSS_ERRORS[case])


# -- attention ------------------------------------------------------------------------------------

Q, K, V = rand(2, 3, 5, 4), rand(2, 3, 6, 4), rand(2, 3, 6, 4)


@pytest.mark.parametrize("kw", [
    dict(), dict(is_causal=True), dict(scale=0.3), dict(mask="bool"), dict(mask="float"),
    dict(mask="bool", is_causal=True), dict(mask="empty_row"),
])
def test_scaled_dot_product_attention(peer, kw):
    kw = dict(kw)
    mask = kw.pop("mask", None)
    m = RNG.uniform(size=(5, 6)) > 0.3
    m[:, 0] = True
    if mask == "empty_row":
        m[2] = False

    def fn(T, q, k, v):
        attn = (None if mask is None else T.tensor(m) if mask in ("bool", "empty_row") else
                T.tensor(np.where(m, 0.0, -2.0)))
        return T.nn.functional.scaled_dot_product_attention(q, k, v, attn_mask=attn, **kw)
    peer.check(fn, Q, K, V)


def test_scaled_dot_product_attention_shapes(peer):
    peer.check(lambda T, q, k, v: T.nn.functional.scaled_dot_product_attention(q, k, v),
               rand(5, 4), rand(6, 4), rand(6, 3))
    peer.check(lambda T, q, k, v: T.nn.functional.scaled_dot_product_attention(
        q, k, v, enable_gqa=True), rand(2, 4, 5, 4), rand(2, 2, 6, 4), rand(2, 2, 6, 4))


def _twin(peer, make):
    real, ours = make(peer.real), make(peer.ours)
    ours.load_state_dict({k: peer.ours.tensor(v.detach().numpy())
                          for k, v in real.state_dict().items()})
    for m in (real, ours):
        m.double()
    assert repr(ours) == repr(real)
    return {peer.real: real, peer.ours: ours}


def _check_params(pair):
    real, ours = pair.values()
    for (n1, p1), (n2, p2) in zip(real.named_parameters(), ours.named_parameters()):
        assert n1 == n2
        if p1.grad is not None:
            np.testing.assert_allclose(p2.grad.numpy(), p1.grad.numpy(), rtol=1e-7,
                                       atol=1e-10, err_msg=n1)


MHA = [
    dict(), dict(batch_first=True), dict(need_weights=False), dict(kpm="bool"),
    dict(kpm="float", batch_first=True), dict(attn="bool"), dict(attn="float3d"),
    dict(attn="bool", kpm="bool", need_weights=False), dict(average_attn_weights=False),
    dict(make=dict(kdim=3, vdim=5)), dict(make=dict(add_bias_kv=True, add_zero_attn=True)),
    dict(make=dict(bias=False), need_weights=False), dict(causal=True, need_weights=False),
    dict(self_attention=True),
]


@pytest.mark.parametrize("kw", MHA)
def test_multihead_attention(peer, kw):
    kw = dict(kw)
    make_kw = kw.pop("make", {})
    batch_first = kw.pop("batch_first", False)
    kpm, attn = kw.pop("kpm", None), kw.pop("attn", None)
    causal, self_attention = kw.pop("causal", False), kw.pop("self_attention", False)
    pair = _twin(peer, lambda T: T.nn.MultiheadAttention(6, 2, batch_first=batch_first,
                                                         **make_kw))
    kdim, vdim = make_kw.get("kdim", 6), make_kw.get("vdim", 6)
    shape = (lambda L, d: (3, L, d)) if batch_first else (lambda L, d: (L, 3, d))
    pad = RNG.uniform(size=(3, 5)) < 0.3
    pad[:, 0] = False
    mask2 = np.triu(np.ones((4, 5), bool), 2)

    def fn(T, q, k, v):
        extra = dict(kw)
        if kpm:
            extra["key_padding_mask"] = T.tensor(pad if kpm == "bool" else pad * -1.5)
        if attn == "bool":
            extra["attn_mask"] = T.tensor(mask2)
        elif attn == "float3d":
            extra["attn_mask"] = T.tensor(np.tile(mask2 * -1.0, (6, 1, 1)))
        if causal:
            extra["attn_mask"] = T.nn.Transformer.generate_square_subsequent_mask(
                4, dtype=T.float64)[:, :4]
            extra["is_causal"] = True
            k, v = k[:4] if not batch_first else k[:, :4], v[:4] if not batch_first else v[:, :4]
        if self_attention:
            return pair[T](q, q, q, **extra)
        return pair[T](q, k, v, **extra)
    peer.check(fn, rand(*shape(4, 6)), rand(*shape(5, kdim)), rand(*shape(5, vdim)))
    _check_params(pair)


def test_multihead_attention_unbatched_and_errors(peer):
    pair = _twin(peer, lambda T: T.nn.MultiheadAttention(4, 2))
    peer.check(lambda T, q, k: pair[T](q, k, k), rand(3, 4), rand(5, 4))
    peer.raises(lambda T: T.nn.MultiheadAttention(5, 2))
    peer.raises(lambda T: T.nn.MultiheadAttention(4, 2)(T.zeros(3, 2, 4), T.zeros(5, 4),
                                                        T.zeros(5, 4)))


@pytest.mark.parametrize("kw", [dict(), dict(norm_first=True), dict(activation="gelu"),
                                dict(batch_first=True, norm_first=True),
                                dict(activation="callable", bias=False)])
def test_transformer_encoder(peer, kw):
    kw = dict(kw)
    batch_first = kw.get("batch_first", False)

    def make(T):
        args = dict(kw)
        if args.get("activation") == "callable":
            args["activation"] = T.nn.functional.silu
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            layer = T.nn.TransformerEncoderLayer(8, 2, 16, dropout=0.0, **args)
            return T.nn.TransformerEncoder(layer, 2, norm=T.nn.LayerNorm(8))
    pair = _twin(peer, make)
    mask = np.triu(np.full((5, 5), -np.inf), 1)
    pad = np.zeros((3, 5), bool)
    pad[0, 3:] = True
    shape = (3, 5, 8) if batch_first else (5, 3, 8)
    peer.check(lambda T, x: pair[T](x, mask=T.tensor(mask)), rand(*shape))
    peer.check(lambda T, x: pair[T](x, src_key_padding_mask=T.tensor(pad)), rand(*shape))
    _check_params(pair)


def test_transformer_encoder_warning_and_full_transformer(peer):
    for T in (peer.real, peer.ours):
        with pytest.warns(UserWarning, match="self.use_nested_tensor is False because "
                                             "encoder_layer.self_attn.batch_first was not True"):
            T.nn.TransformerEncoder(T.nn.TransformerEncoderLayer(4, 2, 8), 1)
    pair = _twin(peer, lambda T: T.nn.Transformer(8, 2, 1, 1, 16, dropout=0.0,
                                                  batch_first=True))
    tgt_mask = np.triu(np.full((4, 4), -np.inf), 1)
    peer.check(lambda T, s, t: pair[T](s, t, tgt_mask=T.tensor(tgt_mask)), rand(2, 5, 8),
               rand(2, 4, 8))
    _check_params(pair)
