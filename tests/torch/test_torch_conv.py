"""Convolution, pooling, fold/unfold, interpolate and pad against real PyTorch: values,
gradients, node names and error messages, across their parameters (the `peer` fixture)."""
import numpy as np
import pytest

RNG = np.random.RandomState(0)


def rand(*shape):
    return RNG.uniform(-1, 1, shape)


def ints(*shape):
    return RNG.randint(-2, 3, shape).astype(float)  # many ties


CONV2D = [
    dict(),
    dict(stride=2, padding=1),
    dict(stride=(2, 1), padding=(1, 2), dilation=(1, 2)),
    dict(padding="same"),
    dict(padding="same", dilation=2),
    dict(padding="valid", stride=3),
    dict(groups=2, padding=1),
    dict(groups=4, stride=2, dilation=2, padding=2),
]


@pytest.mark.parametrize("kw", CONV2D)
@pytest.mark.parametrize("bias", [True, False])
def test_conv2d(peer, kw, bias):
    groups = kw.get("groups", 1)
    args = (rand(2, 4, 7, 6), rand(6 if groups != 4 else 8, 4 // groups, 3, 3))
    args += (rand(args[1].shape[0]),) if bias else ()
    peer.check(lambda T, *a: T.nn.functional.conv2d(*a, **kw), *args)


def test_conv2d_even_kernel_same_padding_float32_and_unbatched(peer):
    peer.check(lambda T, x, w: T.nn.functional.conv2d(x, w, padding="same"),
               rand(2, 3, 6, 5), rand(2, 3, 4, 2))
    peer.check(lambda T, x, w, b: T.nn.functional.conv2d(x, w, b, stride=2),
               rand(3, 6, 5), rand(2, 3, 3, 3), rand(2), dtype="float32", rtol=1e-5,
               atol=1e-6)


@pytest.mark.parametrize("kw", [dict(), dict(stride=2, padding=2, dilation=2),
                                dict(groups=3, padding="same")])
def test_conv1d_and_conv3d(peer, kw):
    g = kw.get("groups", 1)
    peer.check(lambda T, *a: T.nn.functional.conv1d(*a, **kw), rand(2, 3, 9),
               rand(6, 3 // g, 3), rand(6))
    peer.check(lambda T, *a: T.nn.functional.conv3d(*a, **kw), rand(1, 3, 5, 4, 5),
               rand(3, 3 // g, 3, 2, 3), rand(3))


@pytest.mark.parametrize("kw", [
    dict(),
    dict(stride=2, output_padding=1),
    dict(stride=(2, 3), padding=(1, 2), output_padding=(1, 2)),
    dict(stride=2, dilation=2, padding=1, output_padding=1),
    dict(groups=2, stride=2, padding=1),
])
def test_conv_transpose2d(peer, kw):
    g = kw.get("groups", 1)
    peer.check(lambda T, *a: T.nn.functional.conv_transpose2d(*a, **kw), rand(2, 4, 5, 4),
               rand(4, 6 // g, 3, 3), rand(6))


def test_conv_transpose1d_and_3d(peer):
    peer.check(lambda T, *a: T.nn.functional.conv_transpose1d(a[0], a[1], a[2], stride=3,
                                                              padding=1, output_padding=2),
               rand(2, 3, 5), rand(3, 2, 4), rand(2))
    peer.check(lambda T, *a: T.nn.functional.conv_transpose3d(a[0], a[1], stride=2),
               rand(1, 2, 3, 2, 3), rand(2, 2, 2, 2, 2))


CONV_ERRORS = [
    lambda T: T.nn.functional.conv2d(T.zeros(2, 4), T.zeros(6, 4, 3, 3)),
    lambda T: T.nn.functional.conv2d(T.zeros(2, 3, 8, 8), T.zeros(6, 4, 3, 3)),
    lambda T: T.nn.functional.conv2d(T.zeros(2, 4, 8, 8), T.zeros(5, 2, 3, 3), groups=2),
    lambda T: T.nn.functional.conv2d(T.zeros(2, 4, 2, 2), T.zeros(6, 4, 3, 3)),
    lambda T: T.nn.functional.conv2d(T.zeros(2, 4, 8, 8), T.zeros(6, 4, 3, 3), stride=2,
                                     padding="same"),
    lambda T: T.nn.functional.conv2d(T.zeros(2, 4, 8, 8), T.zeros(6, 4, 3, 3), padding="x"),
    lambda T: T.nn.functional.conv2d(T.zeros(2, 4, 8, 8, dtype=T.float64),
                                     T.zeros(6, 4, 3, 3)),
    lambda T: T.nn.functional.conv2d(T.zeros(2, 4, 8, 8), T.zeros(6, 4, 3, 3), T.zeros(5)),
    lambda T: T.nn.functional.conv2d(T.zeros(2, 4, 8, 8), T.zeros(6, 4, 3, 3), stride=0),
    lambda T: T.nn.functional.conv2d(T.zeros(2, 4, 8, 8), T.zeros(6, 4, 3, 3), padding=-1),
    lambda T: T.nn.functional.conv1d(T.zeros(2, 4, 8), T.zeros(6, 4, 3), stride=[1, 1]),
    lambda T: T.nn.functional.conv_transpose2d(T.zeros(2, 4, 8, 8), T.zeros(4, 3, 3, 3),
                                               stride=2, output_padding=2),
    lambda T: T.nn.functional.conv_transpose2d(T.zeros(2, 4, 8, 8), T.zeros(3, 3, 3, 3)),
]


@pytest.mark.parametrize("case", range(len(CONV_ERRORS)))
def test_conv_errors_are_pytorchs(peer, case):
    peer.raises(CONV_ERRORS[case])


@pytest.mark.parametrize("kw", [
    dict(kernel_size=2),
    dict(kernel_size=3, stride=2, padding=1),
    dict(kernel_size=(3, 2), stride=(2, 1), padding=(1, 0), dilation=(1, 2)),
    dict(kernel_size=3, stride=2, ceil_mode=True),
    dict(kernel_size=2, stride=2, padding=1, ceil_mode=True, dilation=1),
])
@pytest.mark.parametrize("data", [rand, ints])
def test_max_pool2d_with_indices(peer, kw, data):
    out = peer.check(lambda T, x: T.nn.functional.max_pool2d(x, return_indices=True, **kw),
                     data(2, 3, 7, 8))
    assert out[1].dtype == np.int64


def test_max_pool1d_3d_unbatched_and_all_minus_inf_windows(peer):
    peer.check(lambda T, x: T.nn.functional.max_pool1d(x, 3, 2, 1, return_indices=True),
               ints(2, 3, 9))
    peer.check(lambda T, x: T.nn.functional.max_pool1d(x, 2, ceil_mode=True), rand(3, 7))
    peer.check(lambda T, x: T.nn.functional.max_pool3d(x, 2, return_indices=True),
               ints(1, 2, 4, 5, 4))
    peer.check(lambda T, x: T.nn.functional.max_pool2d(x, 3, 1, 1), rand(3, 5, 5))
    x = rand(1, 1, 4, 4)
    x[0, 0, :2, :2] = -np.inf
    peer.check(lambda T, x: T.nn.functional.max_pool2d(x, 3, 2, 1, return_indices=True), x,
               grad=False)


@pytest.mark.parametrize("kw", [
    dict(kernel_size=2),
    dict(kernel_size=3, stride=2, padding=1),
    dict(kernel_size=3, stride=2, padding=1, count_include_pad=False),
    dict(kernel_size=3, stride=2, padding=1, ceil_mode=True),
    dict(kernel_size=3, stride=2, padding=1, ceil_mode=True, count_include_pad=False),
    dict(kernel_size=(2, 3), stride=(1, 2), divisor_override=4),
])
def test_avg_pool2d(peer, kw):
    peer.check(lambda T, x: T.nn.functional.avg_pool2d(x, **kw), rand(2, 3, 7, 8))


def test_avg_pool1d_and_3d(peer):
    peer.check(lambda T, x: T.nn.functional.avg_pool1d(x, 3, 2, 1, True, False),
               rand(2, 3, 8))
    peer.check(lambda T, x: T.nn.functional.avg_pool3d(x, 2, padding=1), rand(1, 2, 4, 3, 5))


@pytest.mark.parametrize("size", [3, (2, 5), (None, 4), 1, (7, 8), (4, 3)])
def test_adaptive_pools(peer, size):
    x = ints(2, 3, 7, 8)
    peer.check(lambda T, x: T.nn.functional.adaptive_avg_pool2d(x, size), rand(2, 3, 7, 8))
    peer.check(lambda T, x: T.nn.functional.adaptive_max_pool2d(x, size, True), x)


def test_adaptive_pools_1d(peer):
    peer.check(lambda T, x: T.nn.functional.adaptive_avg_pool1d(x, 4), rand(2, 3, 9))
    peer.check(lambda T, x: T.nn.functional.adaptive_max_pool1d(x, 4, True), ints(2, 3, 9))
    peer.check(lambda T, x: T.nn.functional.adaptive_avg_pool3d(x, (2, 3, 2)),
               rand(1, 2, 5, 4, 5))


POOL_ERRORS = [
    lambda T: T.nn.functional.max_pool2d(T.zeros(2, 4, 8, 8), 3, padding=2),
    lambda T: T.nn.functional.max_pool2d(T.zeros(2, 4, 8, 8), 3, stride=0),
    lambda T: T.nn.functional.max_pool2d(T.zeros(4), 2),
    lambda T: T.nn.functional.max_pool2d(T.zeros(1, 1, 2, 2), 3),
    lambda T: T.nn.functional.avg_pool2d(T.zeros(2, 4, 8, 8), 3, padding=2),
    lambda T: T.nn.functional.avg_pool2d(T.zeros(1, 1, 2, 2), 3),
    lambda T: T.nn.functional.adaptive_avg_pool2d(T.zeros(2, 4, 8, 8), (2,)),
    lambda T: T.nn.functional.adaptive_avg_pool2d(T.zeros(3), 2),
]


@pytest.mark.parametrize("case", range(len(POOL_ERRORS)))
def test_pool_errors_are_pytorchs(peer, case):
    peer.raises(POOL_ERRORS[case])


@pytest.mark.parametrize("kw", [dict(kernel_size=2), dict(kernel_size=(2, 3), stride=2),
                                dict(kernel_size=3, padding=1, dilation=2, stride=(1, 2))])
def test_unfold_fold(peer, kw):
    x = rand(2, 3, 7, 8)
    cols = peer.check(lambda T, x: T.nn.functional.unfold(x, **kw), x)[0]
    peer.check(lambda T, c: T.nn.functional.fold(c, (7, 8), **kw), cols)
    peer.check(lambda T, x: T.nn.functional.unfold(x, **kw), x[0])


def test_fold_errors_are_pytorchs(peer):
    peer.raises(lambda T: T.nn.functional.fold(T.zeros(2, 12, 8), (4, 4), 2))
    peer.raises(lambda T: T.nn.functional.fold(T.zeros(2, 10, 9), (4, 4), 2))


INTERPOLATIONS = [
    dict(scale_factor=2),
    dict(size=(5, 7)),
    dict(scale_factor=(1.7, 0.6)),
    dict(size=(13, 5), mode="nearest-exact"),
    dict(scale_factor=2.5, mode="nearest-exact"),
    dict(scale_factor=2, mode="bilinear"),
    dict(size=(5, 11), mode="bilinear", align_corners=True),
    dict(scale_factor=(0.5, 1.3), mode="bilinear"),
    dict(scale_factor=1.5, mode="bilinear", recompute_scale_factor=True),
    dict(size=(9, 7), mode="bicubic"),
    dict(scale_factor=2, mode="bicubic", align_corners=True),
    dict(size=(3, 4), mode="area"),
]


@pytest.mark.parametrize("kw", INTERPOLATIONS)
def test_interpolate_2d(peer, kw):
    peer.check(lambda T, x: T.nn.functional.interpolate(x, **kw), rand(2, 3, 6, 8),
               rtol=1e-6)


def test_interpolate_1d_and_3d(peer):
    peer.check(lambda T, x: T.nn.functional.interpolate(x, scale_factor=3, mode="linear"),
               rand(2, 3, 5))
    peer.check(lambda T, x: T.nn.functional.interpolate(x, size=7, mode="linear",
                                                        align_corners=True), rand(2, 3, 5))
    peer.check(lambda T, x: T.nn.functional.interpolate(x, size=(3, 5, 4), mode="trilinear"),
               rand(1, 2, 4, 3, 5))
    peer.check(lambda T, x: T.nn.functional.interpolate(x, scale_factor=2), rand(1, 2, 2, 3, 2))
    peer.check(lambda T, x: T.nn.functional.interpolate(x, size=13), rand(2, 3, 5),
               dtype="float32", rtol=1e-5)


INTERPOLATE_ERRORS = [
    dict(size=3, scale_factor=2), dict(), dict(scale_factor=2, align_corners=True),
    dict(scale_factor=2, mode="linear"), dict(scale_factor=2, mode="foo"),
]


@pytest.mark.parametrize("kw", INTERPOLATE_ERRORS)
def test_interpolate_errors_are_pytorchs(peer, kw):
    peer.raises(lambda T: T.nn.functional.interpolate(T.zeros(2, 4, 8, 8), **kw))


@pytest.mark.parametrize("pad,mode,value", [
    ((1, 2), "constant", None), ((1, 1, 2, 0), "constant", 2.5), ((-1, 2, 0, -2), "constant", 0),
    ((2, 1, 1, 3), "reflect", None), ((1, 2), "reflect", None), ((2, 3, 1, 0), "replicate", None),
    ((1, 2, 3, 1), "circular", None), ((1, 1, 1, 1, 1, 1), "replicate", None),
])
def test_pad(peer, pad, mode, value):
    x = {2: rand(2, 3, 5), 4: rand(2, 3, 4, 5), 6: rand(1, 2, 3, 4, 5)}[len(pad)]
    peer.check(lambda T, x: T.nn.functional.pad(x, pad, mode=mode, value=value), x)


PAD_ERRORS = [
    ((1, 1, 1), "constant"), ((9, 9, 9, 9), "circular"), ((1, 1), "foo"),
    ((-9, 0), "constant"), ((5, 5, 5, 5), "reflect"), ((1, 1), "reflect"),
]


@pytest.mark.parametrize("pad,mode", PAD_ERRORS)
def test_pad_errors_are_pytorchs(peer, pad, mode):
    peer.raises(lambda T: T.nn.functional.pad(T.zeros(2, 4, 4, 4), pad, mode=mode))
    peer.raises(lambda T: T.nn.functional.pad(T.zeros(2, 4, 8, 8), (1, 1, 1, 1),
                                              mode="reflect", value=1.0))


def test_double_backward_through_conv_and_pooling(peer):
    """A gradient penalty: d/dw |d loss / dx|^2 through conv2d, max_pool2d and
    conv_transpose2d (create_graph=True) equals PyTorch's."""
    def fn(T, x, w, w2):
        F = T.nn.functional
        h = F.max_pool2d(F.conv2d(x, w, padding=1).tanh(), 2)
        loss = F.conv_transpose2d(h, w2, stride=2).pow(2).sum()
        (gx,) = T.autograd.grad(loss, x, create_graph=True)
        return gx.pow(2).sum()
    peer.check(fn, rand(2, 2, 6, 6), rand(3, 2, 3, 3), rand(3, 2, 2, 2), rtol=1e-6)
