"""funcgrad.numpy: numpy's API, differentiable, on immutable Arrays; an Array API
(2024.12) namespace.

Functions take Arrays, numpy arrays, Python scalars and nested lists, and return Arrays.
Names and signatures follow numpy (axis, keepdims, dtype, initial, where) and the Array API
standard (``__array_namespace_info__``, every dtype object, ``device=`` on every creation
function, ``copy=``, ``correction=``, ``descending=``/``stable=``, concat, permute_dims,
unstack, unique_all...), and jax.numpy where numpy has no answer (``vectorize`` with
``signature``, ``ufunc``/``frompyfunc``, ``x.at[]``). Every function is differentiable in
its floating arguments where the mathematics is (sort and unique through their gathers,
quantile in a and q, linspace in its endpoints, roots and eig where the roots are simple,
histograms in their weights); positions, counts and predicates are not.

Immutability: ``x[idx] = v`` raises and points to ``x = x.at[idx].set(v)``; ``x += y``
rebinds the name to a new Array (as in JAX); there is no ``out=`` (it raises a TypeError
saying so); numpy's in-place functions (put, place, putmask, put_along_axis,
fill_diagonal, ufunc.at) take ``inplace=False``, as in JAX, and raise without it.

Choices where numpy and JAX differ or numpy's answer depends on the values: ``eig``,
``eigvals`` and ``roots`` are always complex (JAX); ``x.sort()`` returns the sorted Array
(JAX; numpy sorts in place); ``partition`` returns the full sort (a valid partition);
``meshgrid`` and ``broadcast_arrays`` return lists (the Array API 2024.12, JAX).
Default dtypes follow `funcgrad.config` (``jax_enable_x64``: 64-bit by default).

Public names of numpy and jax.numpy left out, and why (`funcgrad.numpy._coverage` has
the full list; tests/test_numpy_coverage.py checks it against the installed libraries):

=======================================  ===============================================
name(s)                                  reason
=======================================  ===============================================
copyto, nditer, nested_iters, flatiter,  they write into arrays; Arrays are immutable (use
memmap                                   .at[], where, or the inplace=False forms)
isfortran, broadcast                     memory layout / iterators over mutable buffers
                                         (broadcast_shapes, broadcast_arrays instead)
matrix, asmatrix, bmat, poly1d,          legacy classes (numpy deprecates matrix; the
polynomial                               poly* functions take coefficient arrays)
object_, str_, bytes_, void, datetime64, non-numeric dtypes: Arrays hold booleans and
timedelta64, busday_*, datetime_*,       numbers only
is_busday, isnat, char, strings, rec,
recarray, record
float128, complex256                     platform aliases of longdouble / clongdouble
                                         (exported under those names)
random                                   global state; funcgrad.random has JAX's keys
ma                                       masked arrays: use where= or the nan* functions
emath                                    value-dependent output dtype; cast to complex
testing, typing                          use numpy.testing; annotate with funcgrad.Array
core, lib, ctypeslib, f2py, get_include, numpy's tooling, not array functionality
info, show_config, show_runtime, test
bfloat16, float4/6/8_*, int1/2/4,        JAX's ml_dtypes types: numpy's kernels do not
uint1/2/4                                compute in them
=======================================  ===============================================
"""
from funcgrad.numpy._dtypes import *  # noqa: F401,F403
from funcgrad.numpy._dtypes import __array_api_version__, __array_namespace_info__  # noqa: F401
from funcgrad.numpy._creation import *  # noqa: F401,F403
from funcgrad.numpy._ranges import *  # noqa: F401,F403
from funcgrad.numpy._elementwise import *  # noqa: F401,F403
from funcgrad.numpy._reductions import *  # noqa: F401,F403
from funcgrad.numpy._shape import *  # noqa: F401,F403
from funcgrad.numpy._indexing import *  # noqa: F401,F403
from funcgrad.numpy._index_modes import getitem, take, take_along_axis  # noqa: F401
from funcgrad.numpy._sorting import *  # noqa: F401,F403
from funcgrad.numpy._manipulation import *  # noqa: F401,F403
from funcgrad.numpy._numeric import *  # noqa: F401,F403
from funcgrad.numpy._statistics import *  # noqa: F401,F403
from funcgrad.numpy._nanfunctions import *  # noqa: F401,F403
from funcgrad.numpy._index_tricks import *  # noqa: F401,F403
from funcgrad.numpy._polynomial import *  # noqa: F401,F403
from funcgrad.numpy._vectorize import *  # noqa: F401,F403
from funcgrad.numpy._utilities import *  # noqa: F401,F403
from funcgrad.numpy._linalg import *  # noqa: F401,F403
from funcgrad.numpy import linalg, fft, lib
from funcgrad.numpy import _methods
from funcgrad.array import Array as ndarray  # isinstance(x, funcgrad.numpy.ndarray)

import sys as _sys
_methods.install(_sys.modules[__name__])
del _sys
