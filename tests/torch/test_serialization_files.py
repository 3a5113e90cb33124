"""Checkpoints written by real PyTorch (checked in: `data/make_checkpoints.py` wrote them),
loaded without PyTorch: every dtype, views of one storage, a model's and an optimizer's
state that resume training to PyTorch's numbers, in the zip and the legacy format."""
from __future__ import annotations

import mmap
import os

import numpy as np
import pytest

import funcgrad.torch as torch
from funcgrad.torch._runtime import storage as _storage

DATA = os.path.join(os.path.dirname(__file__), "data")
FILES = ["pytorch_checkpoint.pt", "pytorch_checkpoint_legacy.pt"]
DTYPES = ["float64", "float32", "float16", "bfloat16", "int8", "int16", "int32", "int64",
          "uint8", "bool", "complex64", "complex128"]
BAREBONES = ["uint16", "uint32", "uint64", "float8_e4m3fn", "float8_e5m2", "float8_e4m3fnuz",
             "float8_e5m2fnuz"]  # PyTorch's dtypes that convert and save, and promote with nothing


def _model() -> torch.nn.Module:
    return torch.nn.Sequential(torch.nn.Linear(3, 4), torch.nn.Tanh(),
                               torch.nn.BatchNorm1d(4), torch.nn.Linear(4, 2))


@pytest.fixture(params=FILES)
def checkpoint(request) -> dict:
    return torch.load(os.path.join(DATA, request.param))


def test_every_dtype_loads_with_its_values(checkpoint):
    for name in DTYPES + BAREBONES:
        t = checkpoint[name]
        assert t.dtype == getattr(torch, name), name
        expected = (np.arange(6) % 2 == 1 if name == "bool" else
                    np.arange(6) - (1 if name != "uint8" else 0))
        if name.startswith("uint"):
            expected = expected.astype(t.dtype.np)  # -1 wraps, as PyTorch's cast
        np.testing.assert_array_equal(t.to(torch.float64).numpy() if name == "bfloat16" or
                                      name.startswith("float8") else t.numpy(), expected)


def test_views_of_one_storage_come_back_as_views(checkpoint):
    base, view, t, row = (checkpoint[k] for k in ("base", "view", "t", "row"))
    np.testing.assert_array_equal(base.numpy(), np.arange(12).reshape(3, 4) / 4)
    np.testing.assert_array_equal(view.numpy(), base.numpy()[1:, ::2])
    assert view.stride() == (4, 2) and view.storage_offset() == 4
    assert t.stride() == (1, 4) and row.storage_offset() == 8
    ptr = base.untyped_storage().data_ptr()
    assert all(x.untyped_storage().data_ptr() == ptr for x in (view, t, row))
    base[1, 0] = 100.0  # one memory: the views see the write
    assert view[0, 0].item() == 100.0 and t[0, 1].item() == 100.0


def test_plain_values_and_torch_objects(checkpoint):
    assert checkpoint["scalar"].shape == () and checkpoint["scalar"].item() == 2.5
    assert checkpoint["empty"].shape == (0, 3)
    p = checkpoint["param"]
    assert isinstance(p, torch.nn.Parameter) and p.requires_grad
    assert checkpoint["size"] == torch.Size([2, 3]) and type(checkpoint["size"]) is torch.Size
    assert checkpoint["dtype"] is torch.float16
    assert checkpoint["device"] == torch.device("cpu")
    assert checkpoint["number"] == 3 and checkpoint["text"] == "funcgrad"
    assert checkpoint["nested"] == [(1, 2.0), {"k": None}]


def test_model_and_optimizer_resume_training_to_pytorchs_numbers(checkpoint):
    state = checkpoint["model"]
    assert state["2.num_batches_tracked"].item() == 2
    assert state._metadata["2"] == {"version": 2}  # PyTorch's module versions ride along
    net = _model()
    net.load_state_dict(state)
    opt = torch.optim.Adam(net.parameters(), lr=0.01)
    opt.load_state_dict(checkpoint["optim"])
    net.eval()
    with torch.no_grad():
        np.testing.assert_allclose(net(checkpoint["x"]).numpy(),
                                   checkpoint["eval_out"].numpy(), rtol=1e-6, atol=1e-6)
    net.train()
    opt.zero_grad()
    torch.nn.functional.mse_loss(net(checkpoint["x"]), checkpoint["target"]).backward()
    opt.step()
    for p, expected in zip(net.parameters(), checkpoint["params_after_step"]):
        np.testing.assert_allclose(p.detach().numpy(), expected.numpy(), rtol=1e-5,
                                   atol=2e-6)


def test_mmap_maps_the_storages_copy_on_write(tmp_path):
    path = os.path.join(DATA, FILES[0])
    before = open(path, "rb").read()
    ck = torch.load(path, mmap=True)
    memory = _storage.owner(ck["base"].numpy())
    assert isinstance(memory, (mmap.mmap, np.memmap)), type(memory)  # mapped, not read
    ck["base"][0, 0] = -7.0
    assert ck["t"][0, 0].item() == -7.0  # still views of one storage
    assert open(path, "rb").read() == before  # the file is untouched
    with pytest.raises(ValueError, match="f must be a file path in order to use the mmap"):
        with open(path, "rb") as fh:
            torch.load(fh, mmap=True)


def test_map_location_forms(tmp_path):
    path = os.path.join(DATA, FILES[0])
    seen = []

    def where(storage, location):
        seen.append(location)
        return storage

    for form in ("cpu", torch.device("cpu"), {"cpu": "cpu"}, where,
                 lambda storage, location: None, lambda storage, location: storage.cpu()):
        ck = torch.load(path, map_location=form)
        assert ck["view"].device == torch.device("cpu")
        np.testing.assert_array_equal(ck["view"].numpy(), ck["base"].numpy()[1:, ::2])
    assert seen and set(seen) == {"cpu"}
    with pytest.raises(TypeError, match="map_location must return the storage"):
        torch.load(path, map_location=lambda storage, location: 3)
    with pytest.raises(TypeError, match="map_location must be"):
        torch.load(path, map_location=3.5)
