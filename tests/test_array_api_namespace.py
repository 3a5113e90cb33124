"""funcgrad.numpy as an Array API namespace: its attributes, inspection, dtypes, devices,
the standard's keywords, immutability semantics and funcgrad.config's x64 flag."""
import warnings

import numpy as np
import pytest

import funcgrad
import funcgrad.numpy as fnp
from funcgrad import grad
from funcgrad.test_util import check_grads

DTYPES = ["bool", "int8", "int16", "int32", "int64", "uint8", "uint16", "uint32", "uint64",
          "float32", "float64", "complex64", "complex128"]


def test_namespace_attributes_and_dtype_objects():
    assert fnp.__array_api_version__ == "2024.12"
    for name in DTYPES:
        assert getattr(fnp, name) == np.dtype(name)
    x = fnp.asarray([1.0, 2.0])
    assert x.__array_namespace__() is fnp
    assert x.__array_namespace__(api_version="2023.12") is fnp
    with pytest.raises(ValueError, match="api_version"):
        x.__array_namespace__(api_version="1999.01")
    assert x.device == "cpu" and x.to_device("cpu") is x
    m = fnp.reshape(fnp.arange(6.0), (1, 2, 3))
    assert m.mT.shape == (1, 3, 2)


def test_namespace_info():
    info = fnp.__array_namespace_info__()
    caps = info.capabilities()
    assert caps == {"boolean indexing": True, "data-dependent shapes": True,
                    "max dimensions": 64}
    assert info.default_device() in info.devices()
    assert info.default_dtypes() == {"real floating": np.float64,
                                     "complex floating": np.complex128,
                                     "integral": np.int64, "indexing": np.int64}
    assert list(info.dtypes()) == DTYPES
    assert list(info.dtypes(kind="unsigned integer")) == DTYPES[5:9]
    assert list(info.dtypes(kind=("bool", "complex floating"))) == ["bool", "complex64",
                                                                   "complex128"]
    with pytest.raises(ValueError, match="unknown dtype kind"):
        info.dtypes(kind="decimal")
    with pytest.raises(ValueError, match="unknown device"):
        info.default_dtypes(device="tpu")


def test_dtype_inspection_accepts_arrays_and_traced_arrays():
    x = fnp.asarray([1.0], dtype="float32")
    f = fnp.finfo(x)
    assert (f.bits, f.dtype) == (32, np.float32)
    assert all(isinstance(getattr(f, a), float) for a in ("eps", "max", "min",
                                                          "smallest_normal"))
    assert fnp.iinfo(fnp.asarray(1, dtype="uint16")).max == 65535
    assert fnp.isdtype(fnp.float32, "real floating")
    assert fnp.isdtype(fnp.int8, ("bool", "signed integer"))
    assert not fnp.isdtype(fnp.uint8, "signed integer")
    assert fnp.can_cast(fnp.int8, fnp.int16) and not fnp.can_cast(fnp.int64, fnp.int8)
    assert fnp.can_cast(x, fnp.float64)
    assert fnp.result_type(x, 1.0) == np.float32  # Python scalars are weak
    assert grad(lambda v: fnp.sum(v) * fnp.finfo(v).eps)(1.0) == np.finfo(float).eps


def test_asarray_copy_and_device():
    a = fnp.asarray([1.0, 2.0])
    assert fnp.asarray(a, copy=True) is a  # immutable: nothing to protect
    assert fnp.asarray(a, copy=False) is a
    raw = np.array([1.0, 2.0])
    b = fnp.asarray(raw, copy=True)
    raw[0] = 9.0
    assert b[0] == 1.0  # numpy input is always copied
    with pytest.raises(ValueError, match="copy=False"):
        fnp.asarray(raw, copy=False)
    with pytest.raises(ValueError, match="dtype changes"):
        fnp.asarray(a, dtype="float32", copy=False)
    assert fnp.asarray([1, 2], device="cpu").device == "cpu"
    for make in (lambda: fnp.zeros(2, device="cpu"), lambda: fnp.eye(2, device="cpu"),
                 lambda: fnp.arange(3, device="cpu"), lambda: fnp.linspace(0, 1, 3,
                                                                           device="cpu"),
                 lambda: fnp.full((2,), 1.0, device="cpu"), lambda: fnp.fft.fftfreq(
                     4, device="cpu"), lambda: fnp.astype(a, "float32", device="cpu")):
        assert make().device == "cpu"
    with pytest.raises(ValueError, match="unknown device"):
        fnp.zeros(2, device="tpu")


def test_from_dlpack_copies_foreign_memory():
    raw = np.arange(3.0)
    x = fnp.from_dlpack(raw)
    raw[0] = 5.0
    assert x[0] == 0.0
    with pytest.raises(BufferError, match="copy=False"):
        fnp.from_dlpack(raw, copy=False)
    assert fnp.from_dlpack(x, copy=False) is x
    torch = pytest.importorskip("torch")
    assert np.array_equal(fnp.from_dlpack(torch.arange(4)), np.arange(4))
    back = torch.from_dlpack(fnp.asarray([1.5, 2.5]))
    assert back.tolist() == [1.5, 2.5]
    with pytest.raises(TypeError, match="traced"):
        grad(lambda v: float(torch.from_dlpack(v).sum()))(fnp.ones(2))


def test_in_place_operators_rebind_and_item_assignment_points_to_at():
    x = fnp.asarray([1.0, 2.0])
    y = x
    x += 1
    assert y.tolist() == [1.0, 2.0] and x.tolist() == [2.0, 3.0]
    with pytest.raises(TypeError, match=r"\.at\[idx\]\.set"):
        x[0] = 5.0
    n = fnp.asarray([1, 8], dtype="int16")
    assert (n << 2).tolist() == [4, 32] and (n >> 1).tolist() == [0, 4]
    assert (2 << n).tolist() == [4, 512]
    assert fnp.bitwise_left_shift(n, 1).dtype == np.int16
    assert grad(lambda v: fnp.sum(_accumulate(v)))(fnp.ones(3)).tolist() == [3.0] * 3


def _accumulate(v):
    total = v
    total += v
    total *= 1.5
    return total


def test_out_is_refused_with_the_reason():
    with pytest.raises(TypeError, match="immutable"):
        fnp.sum(fnp.ones(2), out=np.zeros(()))


def test_standard_keywords():
    x = fnp.asarray([[3.0, 1.0, 2.0], [1.0, 1.0, 0.0]])
    assert fnp.var(x, axis=1, correction=1).tolist() == np.var(x, axis=1, ddof=1).tolist()
    with pytest.raises(ValueError, match="simultaneously"):
        fnp.std(x, ddof=1, correction=1)
    assert fnp.sort(x, axis=1, descending=True).tolist() == [[3, 2, 1], [1, 1, 0]]
    # descending and stable: ties keep their order
    assert fnp.argsort(fnp.asarray([1, 2, 1, 2]), descending=True, stable=True).tolist() \
        == [1, 3, 0, 2]
    assert fnp.astype(x, "int8", copy=False).dtype == np.int8
    with pytest.raises(TypeError, match="Cannot cast"):
        fnp.astype(x, "int8", casting="safe")
    assert fnp.fft.fftfreq(4, dtype=fnp.float32).dtype == np.float32
    assert fnp.cumulative_sum(fnp.asarray([1, 2]), include_initial=True).tolist() == [0, 1, 3]
    with pytest.raises(ValueError, match="axis must be specified"):
        fnp.cumulative_prod(x)


@pytest.mark.parametrize("dtype", ["int8", "int16", "uint8", "uint16", "int32"])
def test_sum_and_prod_honour_narrow_integer_dtypes(dtype):
    x = fnp.asarray([100, 100, 3], dtype=dtype)
    for f, nf in ((fnp.sum, np.sum), (fnp.prod, np.prod)):
        got, want = f(x, dtype=dtype), nf(np.asarray(x), dtype=dtype)
        assert got.dtype == np.dtype(dtype) and got.item() == want
        assert f(x).dtype == nf(np.asarray(x)).dtype  # the default accumulator: numpy's


def test_vecdot_checks_sizes_and_keeps_dtype():
    a, b = fnp.asarray([1, 2, 3], dtype="int8"), fnp.asarray([4, 5, 6], dtype="int8")
    assert fnp.linalg.vecdot(a, b).dtype == np.int8
    assert fnp.vecdot(a, b).item() == 32
    with pytest.raises(ValueError, match="same size along axis"):
        fnp.linalg.vecdot(fnp.ones(3), fnp.ones(4))
    z = fnp.asarray([1 + 1j, 2j])
    assert fnp.linalg.vecdot(z, z).item() == pytest.approx(6.0)  # conjugates x1


def test_pinv_takes_a_batched_rtol():
    rng = np.random.RandomState(0)
    x = rng.randn(3, 4, 4) @ np.diag([1.0, 0.5, 1e-3, 1e-9])
    rtol = np.array([1e-12, 1e-2, 0.6])
    np.testing.assert_allclose(fnp.linalg.pinv(x, rtol=rtol), np.linalg.pinv(x, rtol=rtol),
                               atol=1e-8)
    np.testing.assert_allclose(fnp.linalg.pinv(x, rtol=None), np.linalg.pinv(x, rtol=None),
                               atol=1e-8)
    np.testing.assert_allclose(fnp.linalg.pinv(x), np.linalg.pinv(x), atol=1e-8)
    well = rng.randn(2, 3, 3) + 4 * np.eye(3)
    check_grads(lambda a: fnp.linalg.pinv(a, rtol=np.array([1e-6, 1e-3])), (well,),
                order=1, modes=("rev",))


def test_special_values_of_the_standard():
    inf = np.inf
    got = fnp.floor_divide(fnp.asarray([inf, inf, -inf, 1.0, -1.0, 7.0]),
                           fnp.asarray([2.0, -2.0, 2.0, -inf, inf, 2.0]))
    assert got.tolist() == [inf, -inf, -inf, 0.0, 0.0, 3.0]
    assert np.signbit(np.asarray(got)[3:5]).all()  # -0.0, as the standard says
    assert (fnp.asarray([inf]) // 2.0).tolist() == [inf]
    z = fnp.expm1(fnp.asarray([complex(inf, 0), complex(-inf, inf), complex(inf, np.nan),
                               complex(np.nan, 0), complex(-0.0, 0.0)]))
    raw = np.asarray(z)
    assert raw[0] == complex(inf, 0) and raw[1] == complex(-1, 0) and raw[4] == 0
    assert np.isinf(raw[2].real) and np.isnan(raw[2].imag)
    assert np.isnan(raw[3].real) and raw[3].imag == 0
    assert not np.signbit(raw[4].real)
    np.testing.assert_allclose(fnp.expm1(fnp.asarray(1e-10 + 2e-10j)), 1e-10 + 2e-10j)


def test_x64_flag():
    assert funcgrad.config.jax_enable_x64 is True
    assert funcgrad.config.read("jax_enable_x64") is True
    with funcgrad.config.enable_x64(False):
        assert fnp.asarray(1.5).dtype == np.float32
        assert fnp.asarray(np.arange(3.0)).dtype == np.float32
        assert fnp.asarray([1, 2]).dtype == np.int32
        assert fnp.zeros(2).dtype == np.float32 and fnp.arange(3).dtype == np.int32
        assert fnp.linspace(0, 1, 3).dtype == np.float32
        assert fnp.mean(fnp.arange(4)).dtype == np.float32
        assert fnp.sum(fnp.asarray([1, 2], dtype="int8")).dtype == np.int32
        with pytest.warns(UserWarning, match="truncated to dtype float32"):
            assert fnp.zeros(2, dtype="float64").dtype == np.float32  # explicit: as JAX
        assert fnp.__array_namespace_info__().default_dtypes()["real floating"] == \
            np.float32
        assert (fnp.asarray(1.5) * 2.0).dtype == np.float32
        assert grad(lambda v: fnp.sum(v * v))(fnp.asarray([1.0, 2.0])).dtype == np.float32
    assert fnp.asarray(1.5).dtype == np.float64
    funcgrad.config.update("jax_enable_x64", False)
    try:
        assert fnp.ones(1).dtype == np.float32
    finally:
        funcgrad.config.update("jax_enable_x64", True)
    with pytest.raises(AttributeError, match="Unrecognized config option: jax_foo"):
        funcgrad.config.update("jax_foo", True)
    with pytest.raises(TypeError, match="bool"):
        funcgrad.config.update("jax_enable_x64", "yes")


def test_index_results_follow_the_x64_flag():
    """argmax, nonzero, argsort, searchsorted... give the default int: int32 with x64
    disabled, as JAX's (values unchanged), int64 with it on, as numpy's."""
    raw = np.array([[3.0, 0.0, 2.0], [1.0, 5.0, 0.0]])
    bins = fnp.asarray([1.0, 2.5])
    for flag, want in ((True, np.int64), (False, np.int32)):
        with funcgrad.config.enable_x64(flag):
            x = fnp.asarray(raw)
            got = {"argmax": (fnp.argmax(x, axis=1), np.argmax(raw, axis=1)),
                   "argmin": (fnp.argmin(x), np.argmin(raw)),
                   "argsort": (fnp.argsort(x, axis=0), np.argsort(raw, axis=0)),
                   "argsort descending": (fnp.argsort(x, descending=True),
                                          np.argsort(-raw, kind="stable")),
                   "nonzero": (fnp.nonzero(x)[1], np.nonzero(raw)[1]),
                   "argwhere": (fnp.argwhere(x), np.argwhere(raw)),
                   "flatnonzero": (fnp.flatnonzero(x), np.flatnonzero(raw)),
                   "searchsorted": (fnp.searchsorted(bins, x[0]),
                                    np.searchsorted([1.0, 2.5], raw[0])),
                   "digitize": (fnp.digitize(x, bins), np.digitize(raw, [1.0, 2.5])),
                   "jit argmax": (funcgrad.jit(fnp.argmax)(x), np.argmax(raw))}
            for name, (result, expected) in got.items():
                assert result.dtype == want, (name, flag, result.dtype)
                np.testing.assert_array_equal(np.asarray(result), expected, err_msg=name)


def test_warnings_are_numpys():
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        fnp.floor_divide(fnp.asarray([np.inf]), 2.0)  # repaired, so not "invalid"
