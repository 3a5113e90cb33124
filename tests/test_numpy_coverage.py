"""funcgrad.numpy against the public names of numpy and jax.numpy: every name exists, or
funcgrad.numpy._coverage says why it is left out, and nothing it lists is present."""
import numpy as np
import pytest

import funcgrad.numpy as fnp
from funcgrad.numpy import _coverage


def _public(module):
    return {n for n in dir(module) if not n.startswith("_")}


def _namespaces():
    spaces = [("numpy", np, np.linalg, np.fft)]
    try:
        import jax.numpy as jnp
    except ImportError:  # JAX is a test peer; numpy's names are checked regardless
        return spaces
    return spaces + [("jax.numpy", jnp, jnp.linalg, jnp.fft)]


@pytest.mark.parametrize("name,top,linalg,fft", _namespaces(),
                         ids=[s[0] for s in _namespaces()])
def test_every_public_name_exists_or_is_documented(name, top, linalg, fft):
    for theirs, ours, left_out in ((top, fnp, _coverage.LEFT_OUT),
                                   (linalg, fnp.linalg, _coverage.LEFT_OUT_LINALG),
                                   (fft, fnp.fft, _coverage.LEFT_OUT_FFT)):
        missing = sorted(_public(theirs) - _public(ours) - set(left_out))
        assert not missing, f"{name}.{theirs.__name__.split('.')[-1]}: {missing}"


def test_documented_names_are_really_absent_and_have_reasons():
    for ns, left_out in ((fnp, _coverage.LEFT_OUT), (fnp.linalg, _coverage.LEFT_OUT_LINALG),
                         (fnp.fft, _coverage.LEFT_OUT_FFT)):
        for name, reason in left_out.items():
            assert not hasattr(ns, name), f"{name} exists: drop it from _coverage"
            assert len(reason) > 20


def test_array_methods_cover_the_array_api_and_jax_ones():
    wanted = ["__array_namespace__", "to_device", "device", "mT", "T", "dtype", "shape",
              "ndim", "size", "__dlpack__", "__dlpack_device__", "__lshift__", "__rshift__",
              "__rlshift__", "__rrshift__", "__matmul__", "__rmatmul__", "__invert__",
              "__abs__", "__pos__", "__neg__", "__contains__", "__index__", "__complex__",
              "sort", "argpartition", "choose", "compress", "searchsorted", "view",
              "tobytes", "at", "conj", "real", "imag", "clip", "round", "ptp"]
    for name in wanted:
        assert hasattr(fnp.ndarray, name), name
    for name in ("__iadd__", "__isub__", "__imul__", "__setitem__"):
        # in-place operators are not defined: Python falls back to x = x + y (a rebinding,
        # as in JAX); __setitem__ exists only to raise with the .at[] hint
        assert name == "__setitem__" or not hasattr(fnp.ndarray, name), name
