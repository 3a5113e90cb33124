"""PyTorch's barebones dtypes (uint16/32/64 and the float8 formats): they exist, convert,
print, compare and save, and promote with nothing else, with PyTorch's errors. Differential
against real PyTorch where it is installed."""
from __future__ import annotations

import numpy as np
import pytest

import funcgrad.torch as torch

BAREBONES = ["uint16", "uint32", "uint64", "float8_e4m3fn", "float8_e5m2", "float8_e4m3fnuz",
             "float8_e5m2fnuz"]
OTHERS = ["float64", "float32", "float16", "bfloat16", "int8", "int16", "int32", "int64",
          "uint8", "bool", "complex64", "complex128"]
VALUES = [0.0, 1.0, -2.5, 3.25, 7.0, 300.0, 1000.0, 70000.0, 1e-3, float("nan"),
          float("inf"), -float("inf")]


def _promotion(T, a: str, b: str) -> str:
    try:
        return str(T.promote_types(getattr(T, a), getattr(T, b)))
    except RuntimeError as e:
        return f"RuntimeError: {e}"


@pytest.mark.parametrize("name", BAREBONES)
def test_promotion_is_pytorchs_with_every_dtype(real, name):
    for other in BAREBONES + OTHERS:
        for a, b in ((name, other), (other, name)):
            assert _promotion(torch, a, b) == _promotion(real, a, b), (a, b)


def test_the_errors_name_both_dtypes():
    with pytest.raises(RuntimeError, match="attempted to promote UInt16 and Int$"):
        torch.tensor([1, 2], dtype=torch.uint16) + torch.tensor([1, 2], dtype=torch.int32)
    with pytest.raises(RuntimeError, match="Float8 Types .* Float and Float8_e4m3fn$"):
        torch.ones(2) * torch.ones(2, dtype=torch.float8_e4m3fn)
    with pytest.raises(RuntimeError, match="promote UInt16 and Byte"):
        torch.cat([torch.ones(2, dtype=torch.uint16), torch.ones(2, dtype=torch.uint8)])


@pytest.mark.parametrize("name", [n for n in BAREBONES if n.startswith("float8")])
def test_float32_converts_to_float8_as_pytorch_rounds(real, name):
    """Round to nearest even; out of range is nan (fn formats) or saturates to inf (e5m2)."""
    ours = torch.tensor(VALUES).to(getattr(torch, name))
    theirs = real.tensor(VALUES).to(getattr(real, name))
    np.testing.assert_array_equal(ours.to(torch.float32).numpy(),
                                  theirs.to(real.float32).numpy())
    assert repr(ours) == repr(theirs)


@pytest.mark.parametrize("name", [n for n in BAREBONES if n.startswith("uint")])
def test_unsigned_values_print_compare_and_convert(real, name):
    values = [0, 1, 7, 255, 65535]
    ours = torch.tensor(values, dtype=getattr(torch, name))
    theirs = real.tensor(values, dtype=getattr(real, name))
    assert repr(ours) == repr(theirs) and ours.type() == theirs.type()
    assert ours.tolist() == theirs.tolist()
    assert (ours == 7).tolist() == (theirs == 7).tolist()
    assert ours.to(torch.float64).tolist() == theirs.to(real.float64).tolist()
    assert (ours * 2.5).dtype == torch.float32  # with a real float it promotes, as PyTorch
    assert ours.sum().dtype == torch.int64


def _facts(T, name: str) -> tuple:
    d = getattr(T, name)
    info = T.finfo if d.is_floating_point or d.is_complex else T.iinfo
    try:
        described = repr(info(d))
    except TypeError as e:
        described = f"TypeError: {e}"
    return d.is_floating_point, d.is_complex, d.is_signed, d.itemsize, described


@pytest.mark.parametrize("name", BAREBONES + OTHERS)
def test_dtype_facts_are_pytorchs(real, name):
    ours, theirs = _facts(torch, name), _facts(real, name)
    if name == "float8_e5m2fnuz":  # (PyTorch's c10 gives this format eps 2**-3, not 2**-2)
        ours, theirs = ours[:-1], theirs[:-1]
    assert ours == theirs


def test_views_of_float8_share_memory():
    base = torch.arange(6.0).to(torch.float8_e4m3fn).reshape(2, 3)
    view = base.t()[1:]
    base[1, 1] = 0.5
    assert view[0, 1].item() == 0.5
    strided = base.as_strided((2,), (3,), 1)
    assert strided.float().tolist() == [1.0, 0.5]
