"""The nn layers and losses beyond the basic set (distances, Bilinear, shuffles,
EmbeddingBag, LazyLinear, RReLU, LocalResponseNorm, the margin / embedding / likelihood
losses, gumbel_softmax, affine_grid) against PyTorch: values and the gradients of every
floating input, for each option and reduction."""
import warnings

import numpy as np
import pytest

import funcgrad.torch as ft

RNG = np.random.RandomState(0)
REDUCTIONS = ["none", "mean", "sum"]


def r(*shape):
    return RNG.randn(*shape)


def signs(*shape):
    return np.where(RNG.rand(*shape) < 0.5, -1.0, 1.0)


# -- functional forms --------------------------------------------------------------------------

@pytest.mark.parametrize("dim", [1, -1, 0])
def test_cosine_similarity(peer, dim):
    peer.check(lambda T, a, b: T.nn.functional.cosine_similarity(a, b, dim=dim), r(3, 4),
               r(3, 4), names=False)
    peer.check(lambda T, a, b: T.nn.functional.cosine_similarity(a, b, dim=dim, eps=0.5),
               r(3, 4) * 0.1, r(1, 4), names=False)


@pytest.mark.parametrize("p", [2.0, 1.0, 3.0])
@pytest.mark.parametrize("keepdim", [False, True])
def test_pairwise_distance(peer, p, keepdim):
    peer.check(lambda T, a, b: T.nn.functional.pairwise_distance(a, b, p=p, keepdim=keepdim),
               r(4, 3), r(4, 3), names=False)
    peer.check(lambda T, a, b: T.nn.functional.pairwise_distance(a, b, p=p), r(3), r(3),
               names=False)


@pytest.mark.parametrize("bias", [True, False])
def test_bilinear(peer, bias):
    args = (r(5, 2), r(5, 3), r(4, 2, 3)) + ((r(4),) if bias else ())
    peer.check(lambda T, *a: T.nn.functional.bilinear(*a), *args, names=False)
    args3 = (r(2, 5, 2), r(2, 5, 3), r(4, 2, 3)) + ((r(4),) if bias else ())
    peer.check(lambda T, *a: T.nn.functional.bilinear(*a), *args3, names=False)


def test_pixel_shuffle_unshuffle_and_channel_shuffle(peer):
    peer.check(lambda T, x: T.nn.functional.pixel_shuffle(x, 2), r(2, 8, 3, 2), names=False)
    peer.check(lambda T, x: T.nn.functional.pixel_shuffle(x, 3), r(9, 2, 2), names=False)
    peer.check(lambda T, x: T.nn.functional.pixel_unshuffle(x, 2), r(2, 2, 4, 6), names=False)
    peer.check(lambda T, x: T.nn.functional.pixel_unshuffle(x, 2), r(1, 2, 3, 4, 2),
               names=False)
    peer.check(lambda T, x: T.nn.functional.channel_shuffle(x, 3), r(2, 6, 2), names=False)
    peer.check(lambda T, x: T.nn.PixelShuffle(2)(T.nn.PixelUnshuffle(2)(x)), r(1, 3, 4, 4),
               names=False)
    peer.check(lambda T, x: T.nn.ChannelShuffle(2)(x), r(2, 4, 2, 3), names=False)


@pytest.mark.parametrize("shape", [(2, 5, 3), (2, 6, 3, 2), (1, 4, 2, 2, 2)])
@pytest.mark.parametrize("size", [1, 2, 3])
def test_local_response_norm(peer, shape, size):
    peer.check(lambda T, x: T.nn.functional.local_response_norm(x, size, alpha=0.1, beta=0.6,
                                                                k=2.0), r(*shape), names=False)
    peer.check(lambda T, x: T.nn.LocalResponseNorm(size)(x), r(*shape), names=False)


def test_rrelu_in_evaluation_matches_and_training_draws_slopes_in_range(peer):
    peer.check(lambda T, x: T.nn.functional.rrelu(x, 0.1, 0.3), r(4, 5), names=False)
    peer.check(lambda T, x: T.nn.RReLU().eval()(x), r(4, 5), names=False)
    x = ft.tensor(-np.abs(r(2000)) - 0.1, requires_grad=True)
    y = ft.nn.functional.rrelu(x, 0.1, 0.3, training=True)
    slopes = (y / x).detach().numpy()
    assert slopes.min() >= 0.1 and slopes.max() <= 0.3 and slopes.std() > 0.03
    y.sum().backward()
    np.testing.assert_allclose(x.grad.numpy(), slopes)
    positive = ft.tensor(np.abs(r(5)))
    np.testing.assert_array_equal(ft.nn.RReLU()(positive).numpy(), positive.numpy())
    z = ft.tensor(-np.ones(3))
    assert ft.nn.functional.rrelu_(z) is z and np.allclose(z.numpy(), -(1 / 8 + 1 / 3) / 2)


@pytest.mark.parametrize("mode", ["sum", "mean", "max"])
@pytest.mark.parametrize("padding_idx", [None, 2])
def test_embedding_bag_with_offsets(peer, mode, padding_idx):
    idx = np.array([1, 2, 4, 5, 4, 3, 2, 9, 2])
    offsets = np.array([0, 3, 3, 5])  # an empty bag among them
    peer.check(lambda T, w: T.nn.functional.embedding_bag(
        T.tensor(idx), w, T.tensor(offsets), mode=mode, padding_idx=padding_idx),
        r(10, 3), names=False)
    peer.check(lambda T, w: T.nn.functional.embedding_bag(
        T.tensor(idx), w, T.tensor(np.append(offsets, 9)), mode=mode,
        include_last_offset=True, padding_idx=padding_idx), r(10, 3), names=False)
    peer.check(lambda T, w: T.nn.functional.embedding_bag(
        T.tensor(idx.reshape(3, 3)), w, mode=mode, padding_idx=padding_idx), r(10, 3),
        names=False)


def test_embedding_bag_last_offset_must_end_the_input():
    """PyTorch ignores a last offset short of the input's end (the last bag runs on to
    the end); funcgrad says so instead of answering something else than was asked."""
    with pytest.raises(RuntimeError, match="must equal the number of indices"):
        ft.nn.functional.embedding_bag(ft.tensor([1, 2, 3]), ft.randn(5, 2),
                                       ft.tensor([0, 1, 2]), include_last_offset=True)


def test_embedding_bag_per_sample_weights_and_the_module(peer):
    idx = np.array([[1, 2, 4], [5, 4, 3]])
    peer.check(lambda T, w, s: T.nn.functional.embedding_bag(
        T.tensor(idx), w, mode="sum", per_sample_weights=s), r(10, 3), r(2, 3), names=False)
    peer.check(lambda T, w, s: T.nn.functional.embedding_bag(
        T.tensor(idx.reshape(-1)), w, T.tensor([0, 2]), mode="sum", per_sample_weights=s,
        padding_idx=4), r(10, 3), r(6), names=False)

    def module(T, w):
        bag = T.nn.EmbeddingBag.from_pretrained(w, freeze=False, mode="max")
        return bag(T.tensor(idx))
    peer.check(module, r(10, 3), names=False)
    assert repr(ft.nn.EmbeddingBag(5, 3, padding_idx=1)) == \
        repr(peer.real.nn.EmbeddingBag(5, 3, padding_idx=1))
    bag = ft.nn.EmbeddingBag(5, 3, padding_idx=1)
    assert np.all(bag.weight.detach().numpy()[1] == 0)


def test_embedding_bag_max_norm_renormalises_rows(peer):
    w = r(10, 3) * 3

    def run(T, weight):
        out = T.nn.functional.embedding_bag(T.tensor([[1, 2], [3, 1]]), weight, max_norm=1.0)
        return out, weight
    peer.check(run, w, grad=False, names=False)


@pytest.mark.parametrize("call", [
    lambda T, w: T.nn.functional.embedding_bag(T.tensor([[[1]]]), w),
    lambda T, w: T.nn.functional.embedding_bag(T.tensor([[1, 2]]), w, T.tensor([0])),
    lambda T, w: T.nn.functional.embedding_bag(T.tensor([1, 2]), w),
    lambda T, w: T.nn.functional.embedding_bag(T.tensor([1, 2]), w, T.tensor([[0]])),
    lambda T, w: T.nn.functional.embedding_bag(T.tensor([1, 2]), w, T.tensor([0]),
                                               per_sample_weights=T.ones(2)),
    lambda T, w: T.nn.functional.embedding_bag(T.tensor([1, 2]), w, T.tensor([0]),
                                               mode="sum", per_sample_weights=T.ones(3)),
    lambda T, w: T.nn.functional.embedding_bag(T.tensor([1, 2]), w, T.tensor([1])),
    lambda T, w: T.nn.functional.embedding_bag(T.tensor([1, 2]), w, T.tensor([0, 3])),
    lambda T, w: T.nn.functional.embedding_bag(T.tensor([1, 12]), w, T.tensor([0])),
    lambda T, w: T.nn.functional.embedding_bag(T.tensor([1, 2]), w, T.tensor([0]), mode="x"),
    lambda T, w: T.nn.functional.embedding_bag(T.tensor([1., 2]), w, T.tensor([0])),
    lambda T, w: T.nn.functional.embedding_bag(T.tensor([1, 2]), w, T.tensor([0]),
                                               padding_idx=10),
])
def test_embedding_bag_errors(peer, call):
    peer.raises(call, r(10, 3))


def test_lazy_linear_takes_its_input_size_from_the_first_call(peer):
    ft.manual_seed(0)
    lazy = ft.nn.LazyLinear(4)
    assert lazy.has_uninitialized_params()
    assert isinstance(lazy.weight, ft.nn.UninitializedParameter)  # (as PyTorch's)
    with pytest.raises(RuntimeError, match="Can't access the shape of an uninitialized"):
        lazy.weight.shape
    opt = ft.optim.SGD(lazy.parameters(), lr=0.1)  # built before the first call
    y = lazy(ft.randn(2, 3))
    assert type(lazy) is ft.nn.Linear and lazy.in_features == 3
    assert tuple(y.shape) == (2, 4) and tuple(lazy.weight.shape) == (4, 3)
    assert type(lazy.weight) is ft.nn.Parameter and opt.param_groups[0]["params"][0] is \
        lazy.weight
    assert repr(lazy) == repr(peer.real.nn.Linear(3, 4))
    bound = 1 / np.sqrt(3)
    assert np.abs(lazy.weight.detach().numpy()).max() <= bound
    y.sum().backward()
    assert tuple(lazy.weight.grad.shape) == (4, 3)
    assert ft.nn.LazyLinear(2, bias=False)(ft.randn(5)).shape == (2,)


LAZY = [("LazyLinear", (4,), {}, (2, 3)), ("LazyConv1d", (4, 3), {"padding": 1}, (2, 3, 5)),
        ("LazyConv2d", (4, 3), {"stride": 2}, (2, 3, 5, 5)),
        ("LazyConv2d", (4, 3), {}, (3, 5, 5)),
        ("LazyConv3d", (2, 2), {}, (1, 2, 3, 3, 3)),
        ("LazyConvTranspose2d", (4, 3), {"groups": 1}, (2, 3, 4, 4)),
        ("LazyConvTranspose1d", (2, 3), {}, (2, 3, 4)),
        ("LazyBatchNorm1d", (), {}, (4, 3)), ("LazyBatchNorm2d", (), {"momentum": 0.2},
                                              (2, 3, 2, 2)),
        ("LazyBatchNorm3d", (), {}, (2, 3, 2, 2, 2)),
        ("LazyInstanceNorm1d", (), {}, (2, 3, 6)),
        ("LazyInstanceNorm2d", (), {"affine": False}, (2, 3, 4, 4))]


@pytest.mark.parametrize("name,args,kwargs,shape", LAZY)
def test_lazy_modules_become_their_target_as_pytorch(peer, name, args, kwargs, shape):
    """Same class, repr, parameter shapes after the first call; with PyTorch's weights,
    the same outputs, running statistics and gradients; an optimizer built before the
    first call trains the materialised parameters."""
    torch = peer.real
    x = r(*shape).astype(np.float32)
    theirs = getattr(torch.nn, name)(*args, **kwargs)
    ours = getattr(ft.nn, name)(*args, **kwargs)
    held = list(ours.parameters())
    opt = ft.optim.SGD(held, lr=0.1) if held else None
    out_t = theirs(torch.tensor(x))
    out_o = ours(ft.tensor(x))
    assert type(ours).__name__ == type(theirs).__name__ and repr(ours) == repr(theirs)
    assert [(k, tuple(v.shape)) for k, v in ours.state_dict().items()] == \
        [(k, tuple(v.shape)) for k, v in theirs.state_dict().items()]
    assert all(a is b for a, b in zip(held, ours.parameters()))
    ours.load_state_dict({k: ft.tensor(v.detach().numpy()) for k, v in
                          theirs.state_dict().items()})
    # rerun both from the same state: outputs, buffers and gradients agree
    xt, xo = torch.tensor(x, requires_grad=True), ft.tensor(x, requires_grad=True)
    out_t, out_o = theirs(xt), ours(xo)
    np.testing.assert_allclose(out_o.detach().numpy(), out_t.detach().numpy(), rtol=1e-5,
                               atol=1e-5)
    out_t.square().sum().backward()
    out_o.square().sum().backward()
    np.testing.assert_allclose(xo.grad.numpy(), xt.grad.numpy(), rtol=1e-4, atol=1e-4)
    for (k, a), (k2, b) in zip(theirs.named_parameters(), ours.named_parameters()):
        np.testing.assert_allclose(b.grad.numpy(), a.grad.numpy(), rtol=1e-4, atol=1e-4,
                                   err_msg=k)
    for (k, a), b in zip(theirs.state_dict().items(), ours.state_dict().values()):
        np.testing.assert_allclose(b.numpy(), a.numpy(), rtol=1e-5, atol=1e-5, err_msg=k)
    if opt is not None:
        before = [p.detach().numpy().copy() for p in held]
        opt.step()
        assert any(not np.array_equal(p.detach().numpy(), b) for p, b in zip(held, before))


def test_lazy_instance_norm_takes_the_channels_of_an_unbatched_input():
    """(C, L) is unbatched: C channels (PyTorch's lazy module reads dim 1 here and then
    fails on its own check)."""
    norm = ft.nn.LazyInstanceNorm1d()
    assert tuple(norm(ft.randn(3, 6)).shape) == (3, 6) and norm.num_features == 3


# -- losses ------------------------------------------------------------------------------------

@pytest.mark.parametrize("reduction", REDUCTIONS)
def test_margin_ranking_hinge_and_soft_margin_losses(peer, reduction):
    F = lambda T: T.nn.functional  # noqa: E731
    peer.check(lambda T, a, b, y: F(T).margin_ranking_loss(a, b, y, margin=0.3,
                                                           reduction=reduction),
               r(6), r(6), signs(6), names=False)
    peer.check(lambda T, a, b, y: T.nn.MarginRankingLoss(reduction=reduction)(a, b, y),
               r(6), r(6), signs(6), names=False)
    peer.check(lambda T, x, y: F(T).hinge_embedding_loss(x, y, margin=0.5, reduction=reduction),
               r(3, 4), signs(3, 4), names=False)
    peer.check(lambda T, x, y: T.nn.HingeEmbeddingLoss(reduction=reduction)(x, y),
               r(3, 4), np.array([[1., -1, 0.5, 2]] * 3), names=False)
    y1, y2 = signs(3, 4), signs(5)  # (PyTorch's soft margin target takes no gradient)
    peer.check(lambda T, x: F(T).soft_margin_loss(x, T.tensor(y1), reduction=reduction),
               r(3, 4), names=False)
    peer.check(lambda T, x: T.nn.SoftMarginLoss(reduction=reduction)(x, T.tensor(y2)), r(5),
               names=False)


@pytest.mark.parametrize("reduction", REDUCTIONS)
def test_cosine_embedding_loss(peer, reduction):
    peer.check(lambda T, a, b, y: T.nn.functional.cosine_embedding_loss(
        a, b, y, margin=0.2, reduction=reduction), r(5, 3), r(5, 3), signs(5), names=False)
    peer.check(lambda T, a, b, y: T.nn.CosineEmbeddingLoss(reduction=reduction)(a, b, y),
               r(3), r(3), np.array(-1.0), names=False)


@pytest.mark.parametrize("reduction", REDUCTIONS)
@pytest.mark.parametrize("swap", [False, True])
def test_triplet_margin_losses(peer, reduction, swap):
    peer.check(lambda T, a, p, n: T.nn.functional.triplet_margin_loss(
        a, p, n, margin=2.0, p=1.5, swap=swap, reduction=reduction), r(4, 3), r(4, 3),
        r(4, 3), names=False)
    peer.check(lambda T, a, p, n: T.nn.TripletMarginLoss(swap=swap, reduction=reduction)(
        a, p, n), r(3), r(3), r(3), names=False)

    def cosine_distance(T):
        return lambda x, y: 1 - T.nn.functional.cosine_similarity(x, y)
    peer.check(lambda T, a, p, n: T.nn.functional.triplet_margin_with_distance_loss(
        a, p, n, distance_function=cosine_distance(T), margin=0.5, swap=swap,
        reduction=reduction), r(4, 3), r(4, 3), r(4, 3), names=False)
    peer.check(lambda T, a, p, n: T.nn.TripletMarginWithDistanceLoss(
        swap=swap, reduction=reduction)(a, p, n), r(4, 3), r(4, 3), r(4, 3), names=False)


@pytest.mark.parametrize("reduction", REDUCTIONS)
@pytest.mark.parametrize("log_input,full", [(True, False), (False, False), (True, True),
                                            (False, True)])
def test_poisson_nll_loss(peer, reduction, log_input, full):
    x = r(3, 4) if log_input else np.abs(r(3, 4)) + 0.1
    y = RNG.poisson(2.0, (3, 4)).astype(np.float64)
    # a count target: constant (PyTorch's gradient in it is NaN at 0 with full=True)
    peer.check(lambda T, x: T.nn.functional.poisson_nll_loss(
        x, T.tensor(y), log_input=log_input, full=full, reduction=reduction), x, names=False)
    peer.check(lambda T, x: T.nn.PoissonNLLLoss(log_input, full, reduction=reduction)(
        x, T.tensor(y)), x, names=False)
    if not full:
        peer.check(lambda T, x, y: T.nn.functional.poisson_nll_loss(
            x, y, log_input=log_input, reduction=reduction), x, y + 0.5, names=False)


@pytest.mark.parametrize("reduction", REDUCTIONS)
@pytest.mark.parametrize("full", [False, True])
def test_gaussian_nll_loss(peer, reduction, full):
    x, y = r(4, 3), r(4, 3)
    for var in (np.abs(r(4, 3)) + 0.1, np.abs(r(4)) + 0.1, np.abs(r(4, 1)) + 0.1,
                np.array([[1e-9, 0.5, 2.0]] * 4)):
        peer.check(lambda T, x, y, v: T.nn.functional.gaussian_nll_loss(
            x, y, v, full=full, reduction=reduction), x, y, var, names=False)
    peer.check(lambda T, x, y: T.nn.GaussianNLLLoss(full=full, reduction=reduction)(x, y, 0.7),
               x, y, names=False)


@pytest.mark.parametrize("reduction", REDUCTIONS)
@pytest.mark.parametrize("weighted", [False, True])
def test_multilabel_soft_margin_loss(peer, reduction, weighted):
    target = (RNG.rand(3, 4) < 0.5).astype(np.float64)
    if weighted:
        peer.check(lambda T, x, y, w: T.nn.MultiLabelSoftMarginLoss(w, reduction=reduction)(
            x, y), r(3, 4) * 5, target, r(4), names=False)
    else:
        peer.check(lambda T, x, y: T.nn.functional.multilabel_soft_margin_loss(
            x, y, reduction=reduction), r(3, 4) * 5, target, names=False)


@pytest.mark.parametrize("reduction", REDUCTIONS)
@pytest.mark.parametrize("p", [1, 2])
def test_multi_margin_loss(peer, reduction, p):
    y = np.array([0, 3, 1, 3])
    peer.check(lambda T, x: T.nn.functional.multi_margin_loss(
        x, T.tensor(y), p=p, margin=0.7, reduction=reduction), r(4, 5), names=False)
    w = np.abs(r(5))  # (PyTorch's class weights take no gradient)
    peer.check(lambda T, x: T.nn.MultiMarginLoss(p=p, weight=T.tensor(w),
                                                 reduction=reduction)(x, T.tensor(y)),
               r(4, 5), names=False)
    peer.check(lambda T, x: T.nn.functional.multi_margin_loss(
        x, T.tensor(2), p=p, reduction=reduction), r(5), names=False)


@pytest.mark.parametrize("reduction", REDUCTIONS)
def test_multilabel_margin_loss(peer, reduction):
    y = np.array([[3, 0, -1, 1], [1, 2, 3, 0], [-1, 1, 2, 0]])
    peer.check(lambda T, x: T.nn.functional.multilabel_margin_loss(
        x, T.tensor(y), reduction=reduction), r(3, 4), names=False)
    peer.check(lambda T, x: T.nn.MultiLabelMarginLoss(reduction=reduction)(
        x, T.tensor(np.array([2, 0, -1, 1]))), r(4), names=False)


def test_legacy_size_average_reduce_translate(peer):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        y = signs(5)
        peer.check(lambda T, x: T.nn.SoftMarginLoss(size_average=False)(x, T.tensor(y)),
                   r(5), names=False)
        peer.check(lambda T, x: T.nn.functional.multi_margin_loss(
            x, T.tensor([1, 0]), reduce=False), r(2, 3), names=False)


@pytest.mark.parametrize("call", [
    lambda T: T.nn.functional.margin_ranking_loss(T.randn(3), T.randn(3), T.randn(3, 1)),
    lambda T: T.nn.functional.cosine_embedding_loss(T.randn(3, 2), T.randn(3, 2),
                                                    T.ones(3, 1)),
    lambda T: T.nn.functional.cosine_embedding_loss(T.randn(3), T.randn(3), T.ones(3)),
    lambda T: T.nn.functional.triplet_margin_loss(T.randn(3), T.randn(3, 2), T.randn(3)),
    lambda T: T.nn.functional.triplet_margin_with_distance_loss(
        T.randn(3), T.randn(3), T.randn(3), margin=0),
    lambda T: T.nn.TripletMarginWithDistanceLoss(margin=-1.0),
    lambda T: T.nn.functional.gaussian_nll_loss(T.randn(3, 2), T.randn(3, 2), T.ones(2, 3)),
    lambda T: T.nn.functional.gaussian_nll_loss(T.randn(3, 2), T.randn(3, 2), -T.ones(3, 2)),
    lambda T: T.nn.functional.gaussian_nll_loss(T.randn(3), T.randn(3), T.ones(3),
                                                reduction="x"),
    lambda T: T.nn.functional.multi_margin_loss(T.randn(2, 3), T.tensor([0, 1]), p=3),
    lambda T: T.nn.MultiMarginLoss(p=3),
    lambda T: T.nn.functional.multi_margin_loss(T.randn(2, 3), T.tensor([0, 3])),
    lambda T: T.nn.functional.multi_margin_loss(T.randn(2, 3), T.tensor([0, 1, 1])),
    lambda T: T.nn.functional.multi_margin_loss(T.randn(2, 3, 2), T.tensor([0, 1])),
    lambda T: T.nn.functional.multi_margin_loss(T.randn(2, 3), T.tensor([0, 1]),
                                                weight=T.ones(2, 2)),
    lambda T: T.nn.functional.multilabel_margin_loss(T.randn(2, 3),
                                                     T.tensor([[0, 3, -1], [0, 1, 2]])),
    lambda T: T.nn.functional.multilabel_margin_loss(T.randn(2, 3), T.tensor([[0, 1], [0, 1]])),
    lambda T: T.nn.functional.soft_margin_loss(T.randn(3), T.randn(3), reduction="x"),
    lambda T: T.nn.functional.multilabel_soft_margin_loss(T.randn(2, 3), T.randn(2, 3),
                                                          reduction="x"),
    lambda T: T.nn.functional.pixel_shuffle(T.randn(2, 3), 2),
    lambda T: T.nn.functional.pixel_shuffle(T.randn(1, 5, 2, 2), 2),
    lambda T: T.nn.functional.pixel_unshuffle(T.randn(1, 1, 3, 2), 2),
    lambda T: T.nn.functional.pixel_unshuffle(T.randn(1, 1, 2, 3), 2),
    lambda T: T.nn.functional.channel_shuffle(T.randn(1, 5, 2), 2),
    lambda T: T.nn.functional.affine_grid(T.randn(1, 2, 3), [1, 1, 2], align_corners=False),
    lambda T: T.nn.functional.affine_grid(T.randn(1, 3, 3), [1, 1, 2, 2],
                                          align_corners=False),
])
def test_errors_match_pytorch(peer, call):
    peer.raises(call)


def test_local_response_norm_rank_error():
    """PyTorch's text has a run of spaces from a line continuation; ours reads cleanly."""
    with pytest.raises(ValueError, match=r"^Expected 3D or higher dimensionality input \(got "
                                         r"2 dimensions\)$"):
        ft.nn.functional.local_response_norm(ft.randn(2, 3), 2)


# -- random and geometric helpers --------------------------------------------------------------

@pytest.mark.parametrize("hard", [False, True])
def test_gumbel_softmax_samples_the_categorical(hard):
    ft.manual_seed(0)
    probs = np.array([0.6, 0.3, 0.1])
    logits = ft.tensor(np.log(np.tile(probs, (4000, 1))), requires_grad=True)
    y = ft.nn.functional.gumbel_softmax(logits, tau=0.5, hard=hard)
    values = y.detach().numpy()
    np.testing.assert_allclose(values.sum(1), 1.0, rtol=1e-12)
    if hard:
        assert set(np.unique(values)) <= {0.0, 1.0}
    frequencies = np.bincount(values.argmax(1), minlength=3) / 4000
    np.testing.assert_allclose(frequencies, probs, atol=0.03)
    (y * ft.tensor(np.array([1.0, 2.0, 3.0]))).sum().backward()
    assert logits.grad is not None and np.abs(logits.grad.numpy()).sum() > 0
    np.testing.assert_allclose(logits.grad.numpy().sum(1), 0.0, atol=1e-9)


@pytest.mark.parametrize("align_corners", [False, True])
@pytest.mark.parametrize("size", [(2, 3, 4, 5), (1, 1, 1, 3), (2, 1, 2, 3, 4)])
def test_affine_grid(peer, align_corners, size):
    theta = r(size[0], len(size) - 2, len(size) - 1)
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        peer.check(lambda T, t: T.nn.functional.affine_grid(t, list(size),
                                                            align_corners=align_corners),
                   theta, names=False)
    unit_warnings = [w for w in caught if "unit-size grids" in str(w.message)]
    assert len(unit_warnings) == (2 if align_corners and min(size[2:]) == 1 else 0)


def test_affine_grid_default_align_corners_warns_as_pytorch():
    with pytest.warns(UserWarning, match="align_corners=False since 1.3.0"):
        ft.nn.functional.affine_grid(ft.randn(1, 2, 3), [1, 1, 2, 2])


def test_module_reprs_match_pytorch(peer):
    for build in (lambda T: T.nn.Bilinear(2, 3, 4, bias=False), lambda T: T.nn.PixelShuffle(3),
                  lambda T: T.nn.PixelUnshuffle(2), lambda T: T.nn.ChannelShuffle(2),
                  lambda T: T.nn.LocalResponseNorm(3, k=2.0), lambda T: T.nn.RReLU(0.1, 0.2),
                  lambda T: T.nn.CosineSimilarity(), lambda T: T.nn.PairwiseDistance(),
                  lambda T: T.nn.EmbeddingBag(4, 2, mode="sum", max_norm=1.0)):
        assert repr(build(ft)) == repr(build(peer.real))


def test_bilinear_module_init_and_parameters(peer):
    ft.manual_seed(0)
    m = ft.nn.Bilinear(20, 3, 4)
    assert [(n, tuple(p.shape)) for n, p in m.named_parameters()] == \
        [(n, tuple(p.shape)) for n, p in peer.real.nn.Bilinear(20, 3, 4).named_parameters()]
    w = m.weight.detach().numpy()
    assert np.abs(w).max() <= 1 / np.sqrt(20) and np.abs(w).max() > 0.9 / np.sqrt(20)
    peer.check(lambda T, w, b, x1, x2: T.nn.functional.bilinear(x1, x2, w, b),
               w.astype(np.float64), r(4), r(2, 20), r(2, 3), names=False)


def test_lazy_state_dicts_hold_placeholders_and_load_as_pytorch(real):
    """A lazy module's state dict holds its placeholders; loading a real state dict
    materialises them with its shapes, and the first call then keeps those values."""
    def facts(m):
        m.manual_seed(0)
        lazy = m.nn.LazyBatchNorm1d()
        kinds = {k: type(v).__name__ for k, v in lazy.state_dict().items()}
        again = m.nn.LazyBatchNorm1d()
        result = str(again.load_state_dict(lazy.state_dict()))
        try:
            m.nn.BatchNorm1d(3).load_state_dict(lazy.state_dict())
            refused = None
        except RuntimeError as e:
            refused = str(e)
        source = m.nn.Linear(3, 2)
        loaded = m.nn.LazyLinear(2)
        loaded.load_state_dict(source.state_dict())
        still_lazy = type(loaded).__name__
        loaded(m.ones(1, 3))
        kept = bool((loaded.weight == source.weight).all())
        return [kinds, result, refused, still_lazy, type(loaded).__name__, kept,
                again.has_uninitialized_params(), loaded.in_features]
    assert facts(ft) == facts(real)
