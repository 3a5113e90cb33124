"""funcgrad.numpy: numpy's API, differentiable, on immutable Arrays.

Functions take Arrays, numpy arrays, Python scalars and nested lists, and return Arrays.
Names and signatures follow numpy (axis, keepdims, dtype); there is no ``out=`` (Arrays are
immutable) and in-place forms are the functional ``x.at[idx].set(v)`` family.
"""
from funcgrad.numpy._dtypes import *  # noqa: F401,F403
from funcgrad.numpy._dtypes import __array_api_version__, __array_namespace_info__  # noqa: F401
from funcgrad.numpy._creation import *  # noqa: F401,F403
from funcgrad.numpy._ranges import *  # noqa: F401,F403
from funcgrad.numpy._elementwise import *  # noqa: F401,F403
from funcgrad.numpy._reductions import *  # noqa: F401,F403
from funcgrad.numpy._shape import *  # noqa: F401,F403
from funcgrad.numpy._indexing import *  # noqa: F401,F403
from funcgrad.numpy._sorting import *  # noqa: F401,F403
from funcgrad.numpy._manipulation import *  # noqa: F401,F403
from funcgrad.numpy._numeric import *  # noqa: F401,F403
from funcgrad.numpy._statistics import *  # noqa: F401,F403
from funcgrad.numpy._nanfunctions import *  # noqa: F401,F403
from funcgrad.numpy._index_tricks import *  # noqa: F401,F403
from funcgrad.numpy._polynomial import *  # noqa: F401,F403
from funcgrad.numpy._linalg import *  # noqa: F401,F403
from funcgrad.numpy import linalg, fft
from funcgrad.numpy import _methods
from funcgrad.array import Array as ndarray  # isinstance(x, funcgrad.numpy.ndarray)

import sys as _sys
_methods.install(_sys.modules[__name__])
del _sys
