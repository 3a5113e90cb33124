"""The public names of numpy and jax.numpy that funcgrad.numpy leaves out, and why.

Every other public name of ``numpy``, ``numpy.linalg``, ``numpy.fft``, ``jax.numpy``,
``jax.numpy.linalg`` and ``jax.numpy.fft`` exists in funcgrad.numpy (tests/
test_numpy_coverage.py checks both directions against the installed libraries).
"""
from __future__ import annotations

from funcgrad.dtypes import bfloat16_available

_IMMUTABLE = ("it writes into an existing array; funcgrad Arrays are immutable "
              "(use the functional x.at[idx].set(v), where, or the inplace=False forms)")
_NOT_NUMERIC = "a non-numeric dtype; funcgrad Arrays hold booleans and numbers only"
_TOOLING = "numpy's own build/test/configuration tooling, not array functionality"
_LAYOUT = "memory layout and buffers are not part of an immutable Array"
_LOW_PRECISION = ("an ml_dtypes type of JAX's; numpy's kernels, which funcgrad runs, do "
                  "not compute in it")

LEFT_OUT: dict[str, str] = {
    # writes into arrays
    "copyto": _IMMUTABLE,
    "nditer": _IMMUTABLE + "; iterate over an Array or use vectorize",
    "nested_iters": _IMMUTABLE,
    "flatiter": _IMMUTABLE + "; iterate over ravel(x)",
    "memmap": "a mutable file-backed buffer; load the data with load/fromfile instead",
    # memory layout
    "isfortran": _LAYOUT,
    "broadcast": "numpy's broadcasting iterator over mutable buffers; use broadcast_shapes "
                 "or broadcast_arrays",
    # numpy's legacy classes
    "matrix": "numpy.matrix is deprecated by numpy itself; use 2-D Arrays and @",
    "asmatrix": "numpy.matrix is deprecated by numpy itself; use 2-D Arrays",
    "bmat": "numpy.matrix is deprecated by numpy itself; use block",
    "poly1d": "a legacy class (numpy recommends numpy.polynomial); the poly* functions "
              "take coefficient arrays",
    "polynomial": "numpy's polynomial class package; the poly* functions cover the "
                  "coefficient-array API",
    # non-numeric dtypes
    "object_": _NOT_NUMERIC, "str_": _NOT_NUMERIC, "bytes_": _NOT_NUMERIC,
    "void": _NOT_NUMERIC, "datetime64": _NOT_NUMERIC, "timedelta64": _NOT_NUMERIC,
    "datetime_as_string": _NOT_NUMERIC, "datetime_data": _NOT_NUMERIC,
    "busday_count": _NOT_NUMERIC, "busday_offset": _NOT_NUMERIC,
    "busdaycalendar": _NOT_NUMERIC, "is_busday": _NOT_NUMERIC, "isnat": _NOT_NUMERIC,
    "char": _NOT_NUMERIC, "strings": _NOT_NUMERIC, "rec": _NOT_NUMERIC,
    "recarray": _NOT_NUMERIC, "record": _NOT_NUMERIC,
    "float128": "a platform-dependent alias of longdouble, exported under that name",
    "complex256": "a platform-dependent alias of clongdouble, exported under that name",
    # other subsystems
    "random": "numpy's global-state generator; funcgrad's random numbers are functional "
              "(funcgrad.random, JAX's keys)",
    "ma": "masked arrays; use where= in the reductions or the nan* functions",
    "emath": "its output dtype depends on the values (complex only where a value is out of "
             "the real domain), which a traced program cannot know ahead; cast to complex "
             "first (sqrt(x.astype(complex)))",
    "testing": "use numpy.testing, which reads Arrays through np.asarray",
    "typing": "numpy's annotations for ndarray; annotate with funcgrad.Array",
    "core": _TOOLING, "ctypeslib": _TOOLING, "f2py": _TOOLING,
    "get_include": _TOOLING, "info": _TOOLING, "show_config": _TOOLING,
    "show_runtime": _TOOLING, "test": _TOOLING,
    # JAX's low-precision types (bfloat16 is there when ml_dtypes is: see below)
    "float4_e2m1fn": _LOW_PRECISION,
    "float6_e2m3fn": _LOW_PRECISION, "float6_e3m2fn": _LOW_PRECISION,
    "float8_e3m4": _LOW_PRECISION, "float8_e4m3": _LOW_PRECISION,
    "float8_e4m3b11fnuz": _LOW_PRECISION, "float8_e4m3fn": _LOW_PRECISION,
    "float8_e4m3fnuz": _LOW_PRECISION, "float8_e5m2": _LOW_PRECISION,
    "float8_e5m2fnuz": _LOW_PRECISION, "float8_e8m0fnu": _LOW_PRECISION,
    "int1": _LOW_PRECISION, "int2": _LOW_PRECISION, "int4": _LOW_PRECISION,
    "uint1": _LOW_PRECISION, "uint2": _LOW_PRECISION, "uint4": _LOW_PRECISION,
}

if not bfloat16_available():
    LEFT_OUT["bfloat16"] = ("computed through the ml_dtypes package, which is not installed "
                            "(pip install 'funcgrad[lowp]')")

# names left out of the linalg and fft submodules
LEFT_OUT_LINALG: dict[str, str] = {"test": _TOOLING}
LEFT_OUT_FFT: dict[str, str] = {"test": _TOOLING}
