"""Names PyTorch has and the facade lacks raise an AttributeError naming the feature; the
list of those features stays true to both libraries."""
from __future__ import annotations

import pytest

import funcgrad.torch as F
from funcgrad.torch._missing import MISSING


def test_a_missing_feature_is_named_and_hasattr_still_works():
    assert not hasattr(F, "qint8") and hasattr(F, "zeros")
    with pytest.raises(AttributeError, match="does not implement quantized tensors"):
        F.quantize_per_tensor
    with pytest.raises(AttributeError, match="^module 'torch' has no attribute 'no_such'$"):
        F.no_such


def test_the_list_names_what_pytorch_has_and_the_facade_lacks(real):
    for feature, names in MISSING.items():
        for name in names.split():
            assert hasattr(real, name) or hasattr(real.Tensor, name), (feature, name)
            assert not hasattr(F, name) and not hasattr(F.Tensor, name), (feature, name)
