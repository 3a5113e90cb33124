"""``torch.special``: special functions under PyTorch's names — the facade's ops where it
has them (``digamma``, ``gammaln``, ``i0``, ``erfinv``...) and funcgrad.scipy.special's
under one node each for the rest (``ndtr``, ``log_ndtr``, ``ndtri``, ``i0e``, ``i1``,
``i1e``, ``zeta``, ``entr``, ``xlog1py``, ``gammainc``/``gammaincc``); integer inputs are
computed in the default float dtype, as PyTorch's."""
from __future__ import annotations

from typing import Any as _Any, Callable as _Callable

import funcgrad.scipy.special as _sps
from funcgrad.torch._runtime import dtypes as _D
from funcgrad.torch._dispatch import apply as _apply
from funcgrad.torch._factories import tensor as _tensor
from funcgrad.torch._ops_basic import FUNCTIONS as _FUNCTIONS
from funcgrad.torch._tensor import Tensor

__all__ = ["expit", "logit", "erf", "erfc", "erfinv", "expm1", "exp2", "log1p", "logsumexp",
           "softmax", "log_softmax", "digamma", "psi", "gammaln", "polygamma",
           "multigammaln", "i0", "i0e", "i1", "i1e", "ndtr", "log_ndtr", "ndtri", "zeta",
           "entr", "xlogy", "xlog1py", "sinc", "round", "gammainc", "gammaincc"]


def _floating(x: _Any, like: _Any = None) -> _Any:
    """``x`` as a floating tensor (the default float dtype for integers and numbers)."""
    if not isinstance(x, Tensor):
        dtype = like.dtype if isinstance(like, Tensor) and like.dtype.is_floating_point \
            else _D.get_default_dtype()
        return _tensor(x, dtype=dtype)
    return x if x.dtype.is_floating_point else x.to(_D.get_default_dtype())


def _unary(node: str, fn: _Callable) -> _Callable:
    def special_fn(input: Tensor, *, out: _Any = None) -> Tensor:
        result = _apply(node, fn, [_floating(input)])
        return result if out is None else out.copy_(result)
    return special_fn


def _binary(node: str, fn: _Callable) -> _Callable:
    def special_fn(input: _Any, other: _Any, *, out: _Any = None) -> Tensor:
        a, b = _floating(input, other), _floating(other, input)
        result = _apply(node, fn, [a, b])
        return result if out is None else out.copy_(result)
    return special_fn


expit = _FUNCTIONS["sigmoid"]
logit = _FUNCTIONS["logit"]
erf = _FUNCTIONS["erf"]
erfc = _FUNCTIONS["erfc"]
erfinv = _FUNCTIONS["erfinv"]
expm1 = _FUNCTIONS["expm1"]
exp2 = _FUNCTIONS["exp2"]
log1p = _FUNCTIONS["log1p"]
logsumexp = _FUNCTIONS["logsumexp"]
softmax = _FUNCTIONS["softmax"]
log_softmax = _FUNCTIONS["log_softmax"]
digamma = psi = _FUNCTIONS["digamma"]
gammaln = _FUNCTIONS["lgamma"]
polygamma = _FUNCTIONS["polygamma"]
multigammaln = _FUNCTIONS["mvlgamma"]
i0 = _FUNCTIONS["i0"]
xlogy = _FUNCTIONS["xlogy"]
sinc = _FUNCTIONS["sinc"]
round = _FUNCTIONS["round"]  # noqa: A001 (PyTorch's name)
i0e = _unary("SpecialI0EBackward0", _sps.i0e)
i1 = _unary("SpecialI1Backward0", _sps.i1)
i1e = _unary("SpecialI1EBackward0", _sps.i1e)
ndtr = _unary("SpecialNdtrBackward0", _sps.ndtr)
log_ndtr = _unary("SpecialLogNdtrBackward0", _sps.log_ndtr)
ndtri = _unary("SpecialNdtriBackward0", _sps.ndtri)
entr = _unary("SpecialEntrBackward0", _sps.entr)
zeta = _binary("SpecialZetaBackward0", _sps.zeta)
xlog1py = _binary("SpecialXlog1PyBackward0", _sps.xlog1py)
gammainc = _binary("IgammaBackward0", _sps.gammainc)
gammaincc = _binary("IgammacBackward0", _sps.gammaincc)
