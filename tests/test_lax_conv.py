"""funcgrad.lax convolutions and window reductions against jax.lax (values, gradients and
error messages), run where JAX is installed; plus the checks that need no peer."""
import numpy as np
import pytest

import funcgrad
import funcgrad.lax as lax
import funcgrad.numpy as fnp
from funcgrad.test_util import check_grads

RNG = np.random.RandomState(0)


def rand(*shape):
    return RNG.uniform(-1, 1, shape)


@pytest.fixture(scope="module")
def jlax():
    jax = pytest.importorskip("jax")
    with jax.enable_x64(True):
        yield jax


def _same(ours, theirs, rtol=1e-10, atol=1e-12):
    np.testing.assert_allclose(np.asarray(ours), np.asarray(theirs), rtol=rtol, atol=atol)


def _compare(jax, ours_fn, theirs_fn, *args, forward=False, grads=True):
    """Values and gradients (of a random projection of the output) of both functions;
    ``forward``: JVPs in a random direction instead (where JAX has no VJP); ``grads``
    False: values only (each JAX gradient compiles more; the registry's finite
    differences check ours in every case)."""
    out, ref = ours_fn(*args), theirs_fn(*[jax.numpy.asarray(a) for a in args])
    assert tuple(out.shape) == tuple(ref.shape)
    _same(out, ref)
    if not grads:
        return
    if forward:
        tangents = [RNG.uniform(-1, 1, np.shape(a)) for a in args]
        _same(funcgrad.jvp(ours_fn, args, tangents)[1],
              jax.jvp(theirs_fn, tuple(map(jax.numpy.asarray, args)),
                      tuple(map(jax.numpy.asarray, tangents)))[1])
        return
    proj = RNG.uniform(-1, 1, np.shape(ref))
    argnums = tuple(range(len(args)))
    g = funcgrad.grad(lambda *a: fnp.sum(ours_fn(*a) * proj), argnums)(*args)
    gj = jax.grad(lambda *a: (theirs_fn(*a) * proj).sum(), argnums)(
        *[jax.numpy.asarray(a) for a in args])
    for a, b in zip(g, gj):
        _same(a, b)


CONV_CASES = [  # lhs shape, rhs shape, kwargs
    ((2, 3, 7), (4, 3, 3), dict(window_strides=(2,), padding="SAME")),
    ((2, 3, 7), (4, 3, 3), dict(window_strides=(1,), padding="SAME_LOWER",
                               rhs_dilation=(2,))),
    ((2, 3, 6, 5), (4, 3, 3, 2), dict(window_strides=(1, 2), padding="VALID")),
    ((2, 3, 6, 5), (4, 3, 3, 2), dict(window_strides=(2, 1), padding=((1, 2), (-1, 1)),
                                     lhs_dilation=(2, 1), rhs_dilation=(1, 2))),
    ((2, 4, 5, 5), (6, 2, 3, 3), dict(window_strides=(1, 1), padding=((1, 1), (1, 1)),
                                     feature_group_count=2)),
    ((2, 4, 5, 5), (4, 1, 3, 3), dict(window_strides=(2, 2), padding="SAME",
                                     feature_group_count=4)),
    ((4, 3, 5, 4), (6, 3, 2, 2), dict(window_strides=(1, 1), padding="VALID",
                                     batch_group_count=2)),
    ((2, 5, 6, 3), (3, 3, 3, 2), dict(window_strides=(1, 1), padding="SAME",
                                     dimension_numbers=("NHWC", "HWIO", "NHWC"))),
    ((5, 2, 4, 2), (2, 3, 3, 2), dict(window_strides=(2, 1), padding=((0, 1), (2, 0)),
                                     rhs_dilation=(1, 2),
                                     dimension_numbers=("HNWC", "OHWI", "CHNW"))),
    ((1, 2, 4, 4, 3), (2, 2, 2, 2, 2), dict(window_strides=(1, 2, 1), padding="SAME")),
]


@pytest.mark.parametrize("case", range(len(CONV_CASES)))
def test_conv_general_dilated_matches_jax(jlax, case):
    lhs_shape, rhs_shape, kw = CONV_CASES[case]
    x, w = rand(*lhs_shape), rand(*rhs_shape)
    _compare(jlax, lambda a, b: lax.conv_general_dilated(a, b, **kw),
             lambda a, b: jlax.lax.conv_general_dilated(a, b, **kw), x, w,
             grads=case in (3, 4, 6, 8))


def test_conv_and_general_padding_match_jax(jlax):
    x, w = rand(2, 3, 6, 6), rand(4, 3, 3, 3)
    _compare(jlax, lambda a, b: lax.conv(a, b, (2, 1), "SAME"),
             lambda a, b: jlax.lax.conv(a, b, (2, 1), "SAME"), x, w)
    _compare(jlax, lambda a, b: lax.conv_with_general_padding(a, b, (1, 2), ((1, 0), (2, 1)),
                                                              (2, 1), (1, 2)),
             lambda a, b: jlax.lax.conv_with_general_padding(a, b, (1, 2), ((1, 0), (2, 1)),
                                                             (2, 1), (1, 2)), x, w,
             grads=False)


@pytest.mark.parametrize("kw", [
    dict(strides=(2, 2), padding="SAME"),
    dict(strides=(2, 1), padding="VALID", rhs_dilation=(1, 2)),
    dict(strides=(3, 2), padding=((1, 2), (0, 1))),
    dict(strides=(2, 2), padding=((1, 1), (0, 1)), use_consistent_padding=True),
    dict(strides=(2, 2), padding="SAME", transpose_kernel=True),
])
def test_conv_transpose_matches_jax(jlax, kw):
    x = rand(2, 4, 5, 3)  # NHWC, and an HWIO kernel (HWOI when it is transposed)
    w = rand(3, 2, 5, 3) if kw.get("transpose_kernel") else rand(3, 2, 3, 5)
    _compare(jlax, lambda a, b: lax.conv_transpose(a, b, **kw),
             lambda a, b: jlax.lax.conv_transpose(a, b, **kw), x, w,
             grads="rhs_dilation" in kw)


@pytest.mark.parametrize("kw", [
    dict(filter_shape=(2, 3), window_strides=(1, 2), padding="SAME"),
    dict(filter_shape=(3, 2), window_strides=(2, 1), padding=((1, 0), (0, 2)),
         lhs_dilation=(1, 2), rhs_dilation=(2, 1)),
    dict(filter_shape=(2, 2), window_strides=(1, 1), padding="VALID",
         dimension_numbers=("NHWC", "OIHW", "NCHW")),
])
def test_conv_general_dilated_patches_matches_jax(jlax, kw):
    shape = (2, 5, 6, 3) if kw.get("dimension_numbers") else (2, 3, 5, 6)
    _compare(jlax, lambda a: lax.conv_general_dilated_patches(a, **kw),
             lambda a: jlax.lax.conv_general_dilated_patches(a, **kw), rand(*shape))


def _ties(*shape):
    return RNG.randint(-2, 3, shape).astype(float)  # many equal values


@pytest.mark.parametrize("name,init", [("add", 0.0), ("max", -np.inf), ("min", np.inf),
                                       ("mul", 1.0), ("max", 0.5)])
@pytest.mark.parametrize("geometry", [
    dict(window_dimensions=(1, 2, 2), window_strides=(1, 2, 2), padding="VALID"),
    dict(window_dimensions=(2, 3, 2), window_strides=(1, 1, 2), padding="SAME"),
    dict(window_dimensions=(1, 2, 3), window_strides=(1, 2, 1), padding=((0, 0), (1, 1),
                                                                         (2, 1)),
         base_dilation=(1, 2, 1), window_dilation=(1, 1, 2)),
])
def test_reduce_window_matches_jax(jlax, name, init, geometry):
    x = _ties(2, 5, 6) if name in ("max", "min") else rand(2, 5, 6)
    ours = lambda a: lax.reduce_window(a, init, getattr(lax, name), **geometry)  # noqa: E731
    theirs = lambda a: jlax.lax.reduce_window(a, init, getattr(jlax.lax, name),  # noqa: E731
                                              **geometry)
    if name in ("add", "max", "min") and init in (0.0, -np.inf, np.inf):
        # JAX differentiates its monoid reductions only, and max/min with window dilation
        # in forward mode only
        dilated = name != "add" and "window_dilation" in geometry
        _compare(jlax, ours, theirs, x, forward=dilated)
    else:
        _same(ours(x), theirs(jlax.numpy.asarray(x)))
        check_grads(ours, (rand(2, 5, 6),), order=1, modes=("rev", "fwd"))


def test_reduce_window_with_a_general_computation_matches_jax(jlax):
    x = rand(3, 7)
    fold = lambda a, b: a * 0.5 + b  # noqa: E731 (not a monoid: the fold order shows)
    out = lax.reduce_window(x, 0.0, fold, (1, 3), (1, 2), "VALID")
    ref = jlax.lax.reduce_window(x, 0.0, fold, (1, 3), (1, 2), "VALID")
    assert out.shape == ref.shape
    # a tree of operands: the sum and the max of each window at once
    pair = lax.reduce_window((x, x), (0.0, -np.inf),
                             lambda a, b: (a[0] + b[0], fnp.maximum(a[1], b[1])), (2, 2))
    _same(pair[0], jlax.lax.reduce_window(x, 0.0, jlax.lax.add, (2, 2), (1, 1), "VALID"))
    _same(pair[1], jlax.lax.reduce_window(x, -np.inf, jlax.lax.max, (2, 2), (1, 1), "VALID"))


def test_errors_are_jax_texts(jlax):
    x, w = np.zeros((1, 4, 5, 5)), np.zeros((2, 3, 3, 3))
    cases = [
        (w, dict(feature_group_count=3), "feature_group_count must divide lhs feature"),
        (w, dict(feature_group_count=2), "lhs feature dimension size divided by "
                                         "feature_group_count must equal"),
        (np.zeros((2, 4, 3, 3)), dict(batch_group_count=2),
         "batch_group_count must divide lhs batch"),
    ]
    for kernel, kw, text in cases:
        with pytest.raises(ValueError, match=text):
            lax.conv_general_dilated(x, kernel, (1, 1), "SAME", **kw)
        with pytest.raises(ValueError, match=text):
            jlax.lax.conv_general_dilated(x, kernel, (1, 1), "SAME", **kw)
    with pytest.raises(ValueError, match="String padding is not implemented"):
        lax.conv_general_dilated(x, np.zeros((2, 4, 3, 3)), (1, 1), "SAME", (2, 2))
    with pytest.raises(TypeError, match="must contain the characters 'N' and 'C'"):
        lax.conv_general_dilated(x, w, (1, 1), "SAME",
                                 dimension_numbers=("NXHW", "OIHW", "NCHW"))
    with pytest.raises(ValueError, match="Negative padding is larger"):
        lax.conv_general_dilated(x, np.zeros((2, 4, 1, 1)), (1, 1), ((-3, -3), (0, 0)))
    with pytest.raises(RuntimeError, match="Unrecognized padding type"):
        lax.conv_general_dilated(x, np.zeros((2, 4, 1, 1)), (1, 1), "FULL")


def test_second_derivatives_of_a_strided_grouped_conv():
    x, w = rand(2, 4, 5), rand(4, 2, 3)

    def f(x, w):
        return lax.conv_general_dilated(x, w, (2,), ((1, 2),), (1,), (2,),
                                        feature_group_count=2)
    check_grads(f, (x, w), order=2, modes=("rev", "fwd"))


def test_preferred_element_type_and_integer_inputs():
    x = np.arange(2 * 3 * 5, dtype=np.float32).reshape(2, 3, 5)
    w = np.ones((1, 3, 2), np.float32)
    out = lax.conv(x, w, (1,), "VALID", preferred_element_type=np.float64)
    assert out.dtype == np.float64
    ints = lax.conv(x.astype(np.int64), w.astype(np.int64), (1,), "VALID")
    assert ints.dtype == np.int64
    np.testing.assert_array_equal(np.asarray(ints), np.asarray(out).astype(np.int64))
    g = funcgrad.grad(lambda a: fnp.sum(lax.conv(a, w, (1,), "VALID",
                                                  preferred_element_type=np.float64)))(x)
    assert g.dtype == np.float32


def test_max_with_indices_routes_the_gradient_to_the_first_maximum():
    x = np.array([[1.0, 3.0, 3.0, 0.0], [-np.inf, -np.inf, 2.0, 2.0]])
    values, index = lax.reduce_window_max_with_indices(x, (1, 2), (1, 2), "VALID")
    np.testing.assert_array_equal(np.asarray(values), [[3.0, 3.0], [-np.inf, 2.0]])
    np.testing.assert_array_equal(np.asarray(index), [[1, 2], [4, 6]])
    g = funcgrad.grad(lambda a: fnp.sum(lax.reduce_window_max_with_indices(
        a, (1, 2), (1, 2), "VALID")[0]))(x)
    np.testing.assert_array_equal(np.asarray(g), [[0, 1, 1, 0], [1, 0, 1, 0]])
    # a padded window of real -inf still points at its real element, never at padding
    v, i = lax.reduce_window_max_with_indices(np.full((1, 3), -np.inf), (1, 2), (1, 2),
                                              ((0, 0), (1, 0)))
    np.testing.assert_array_equal(np.asarray(i), [[0, 1]])


@pytest.mark.parametrize("args", [((2, 3),), (3, 1), ((2, 2), (1, 1)), ((2,), (-2,)),
                                  ((1, 6),)])
def test_sliding_window_view_matches_numpy_and_differentiates(args):
    from numpy.lib.stride_tricks import sliding_window_view as reference
    from funcgrad.numpy.lib.stride_tricks import sliding_window_view
    x = rand(4, 6)
    out = sliding_window_view(x, *args)
    np.testing.assert_array_equal(np.asarray(out), reference(x, *args))
    check_grads(lambda a: sliding_window_view(a, *args), (x,), order=2, modes=("rev", "fwd"))
    with pytest.raises(ValueError, match="window shape cannot be larger"):
        sliding_window_view(x, (5, 1))


@pytest.mark.gpu
def test_conv_and_windows_on_the_gpu_match_the_cpu():
    x, w = rand(2, 4, 7, 6), rand(6, 2, 3, 3)

    def f(x, w):
        h = lax.conv_general_dilated(x, w, (2, 1), ((1, 1), (2, 0)), rhs_dilation=(1, 2),
                                     feature_group_count=2)
        return fnp.sum(lax.reduce_window(h, -np.inf, lax.max, (1, 1, 2, 2), (1, 1, 1, 2),
                                         ((0, 0), (0, 0), (1, 0), (0, 1))) ** 2)
    cpu = funcgrad.value_and_grad(f, (0, 1))(x, w)
    gpu = funcgrad.value_and_grad(f, (0, 1))(funcgrad.device_put(fnp.asarray(x), "gpu"),
                                             funcgrad.device_put(fnp.asarray(w), "gpu"))
    _same(gpu[0].to_numpy(), cpu[0])
    for a, b in zip(gpu[1], cpu[1]):
        assert a.device.startswith("gpu")
        _same(a.to_numpy(), b)
