"""``Tensor.resize_`` / ``resize_as_`` and the resizing of ``out=`` tensors: PyTorch's rules
(within the storage no memory moves; a numpy array's memory cannot grow), and memory that
others see is never silently replaced (issue: ``out=`` moved a from_numpy tensor to new
memory while the numpy array kept the old values)."""
from __future__ import annotations

import warnings

import numpy as np
import pytest

import funcgrad.torch as torch


def _both():
    real = pytest.importorskip("torch")
    if not hasattr(real, "tensor"):
        pytest.skip("PyTorch is not installed")
    return real, torch


def test_resize_within_the_storage_keeps_the_memory():
    for T in _both():
        x = T.arange(6.0)
        ptr = x.data_ptr()
        assert x.resize_(2, 2) is x and x.shape == (2, 2) and x.data_ptr() == ptr
        assert x.tolist() == [[0.0, 1.0], [2.0, 3.0]]
        a = np.arange(6.0)
        f = T.from_numpy(a)
        f.resize_((2, 3))
        f[1, 2] = 50.0
        assert a[5] == 50.0  # still the numpy array's memory
        v = T.arange(10.0)[4:]
        v.resize_(3)
        assert v.tolist() == [4.0, 5.0, 6.0] and v.storage_offset() == 4
        z = T.ones(2)
        z.resize_as_(T.ones(1))
        assert z.shape == (1,)


def test_growing_a_numpy_arrays_memory_raises_pytorchs_error():
    for T in _both():
        a = np.zeros(2)
        f = T.from_numpy(a)
        with pytest.raises(RuntimeError, match="Trying to resize storage that is not "
                                               "resizable"):
            f.resize_(5)
        with pytest.raises(RuntimeError, match="Trying to resize storage that is not "
                                               "resizable"):
            T.add(T.ones(3, dtype=T.float64), 1, out=f)
        assert a.tolist() == [0.0, 0.0]  # (PyTorch leaves f's sizes changed; funcgrad not)
        assert T is not torch or f.shape == (2,)
        with pytest.raises(RuntimeError, match="cannot resize variables that require grad"):
            T.ones(2, requires_grad=True).resize_(3)


def test_out_resizes_as_pytorch_does():
    for T in _both():
        b = np.zeros(4)
        o = T.from_numpy(b)
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always")
            T.add(T.ones(2, dtype=T.float64), 1, out=o)
        assert "was resized since it had shape [4]" in str(caught[0].message)
        assert b.tolist() == [2.0, 2.0, 0.0, 0.0] and o.tolist() == [2.0, 2.0]
        e = T.empty(0)
        T.mul(T.ones(2, 2), 3.0, out=e)  # a tensor of no elements grows without a warning
        assert e.tolist() == [[3.0, 3.0], [3.0, 3.0]]


def test_a_grown_tensor_keeps_its_values_and_shared_memory_is_refused():
    x = torch.arange(4.0)
    x.resize_(6)
    assert x[:4].tolist() == [0.0, 1.0, 2.0, 3.0] and x.shape == (6,)
    y = torch.arange(3.0)
    view = y[1:]
    with pytest.raises(RuntimeError, match="cannot grow shared memory"):
        y.resize_(8)  # PyTorch would grow it under the view too: funcgrad cannot
    assert view.tolist() == [1.0, 2.0] and y.shape == (3,)
    kept = y.numpy()
    with pytest.raises(RuntimeError, match="not resizable"):
        y.resize_(8)
    del view, kept
    y.resize_(8)
    assert y[:3].tolist() == [0.0, 1.0, 2.0]
