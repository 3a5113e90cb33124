"""torch.save / torch.load: safe by default, PyTorch's format both ways, clear errors on
damaged files. Differential against real PyTorch where it is installed (CI installs it)."""
from __future__ import annotations

import io
import os
import pickle
import subprocess
import zipfile

import numpy as np
import pytest

import funcgrad.torch as torch
from funcgrad.torch import serialization
from funcgrad.torch.serialization import _writer

DTYPES = ["float64", "float32", "float16", "bfloat16", "int8", "int16", "int32", "int64",
          "uint8", "bool", "complex64", "complex128"]
BAREBONES = ["uint16", "uint32", "uint64", "float8_e4m3fn", "float8_e5m2", "float8_e4m3fnuz",
             "float8_e5m2fnuz"]  # PyTorch's dtypes that convert and save, and promote with nothing


class _Payload:
    """A pickle that creates a marker file when unpickled (by calling ``open``)."""

    def __init__(self, marker: str):
        self.marker = marker

    def __reduce__(self):
        return (open, (self.marker, "w"))


class _Point:  # a user class, for the safe-globals tests
    def __init__(self, x: int = 0):
        self.x = x


# -- safe by default ------------------------------------------------------------------------

def _payload_files(tmp_path) -> dict:
    marker = str(tmp_path / "pwned")
    files = {}
    for name, write in (("zip", lambda p: torch.save({"x": _Payload(marker)}, p)),
                        ("legacy", lambda p: torch.save([_Payload(marker)], p,
                                                        _use_new_zipfile_serialization=False)),
                        ("plain pickle", lambda p: pickle.dump(_Payload(marker),
                                                               open(p, "wb")))):
        path = str(tmp_path / f"{name.replace(' ', '_')}.pt")
        write(path)
        files[name] = path
    return marker, files


def test_a_malicious_pickle_runs_only_with_weights_only_false(tmp_path, monkeypatch):
    marker, files = _payload_files(tmp_path)
    for path in files.values():
        for kwargs in ({}, {"weights_only": True}, {"map_location": "cpu"}):
            with pytest.raises(pickle.UnpicklingError, match="Weights only load failed"):
                torch.load(path, **kwargs)
        with open(path, "rb") as fh:
            with pytest.raises(pickle.UnpicklingError, match="builtins.open|io.open"):
                torch.load(fh)
        monkeypatch.setenv("TORCH_FORCE_WEIGHTS_ONLY_LOAD", "1")
        with pytest.raises(pickle.UnpicklingError):
            torch.load(path, weights_only=False)
        monkeypatch.delenv("TORCH_FORCE_WEIGHTS_ONLY_LOAD")
        assert not os.path.exists(marker)
    torch.load(files["zip"], weights_only=False)
    assert os.path.exists(marker)  # the explicit opt-in is full pickle


def test_weights_only_switches_like_pytorch(tmp_path, monkeypatch):
    path = str(tmp_path / "a.pt")
    torch.save({"w": torch.ones(2)}, path)
    with pytest.raises(RuntimeError, match="Can not safely load weights when explicit "
                                           "pickle_module is specified"):
        torch.load(path, pickle_module=pickle)
    assert torch.load(path, pickle_module=pickle, weights_only=False)["w"].tolist() == [1, 1]
    monkeypatch.setenv("TORCH_FORCE_WEIGHTS_ONLY_LOAD", "1")
    monkeypatch.setenv("TORCH_FORCE_NO_WEIGHTS_ONLY_LOAD", "1")
    with pytest.raises(RuntimeError, match="Only one of `TORCH_FORCE_WEIGHTS_ONLY_LOAD`"):
        torch.load(path)
    monkeypatch.delenv("TORCH_FORCE_WEIGHTS_ONLY_LOAD")
    marker, files = _payload_files(tmp_path)
    with pytest.warns(UserWarning, match="forcing weights_only=False"):
        torch.load(files["zip"])
    assert os.path.exists(marker)


def test_the_extension_registry_is_no_way_around_the_allow_list(tmp_path):
    import copyreg
    copyreg.add_extension("subprocess", "call", 0x7ffff0)
    try:
        body = pickle.dumps(subprocess.call, protocol=2)
    finally:
        copyreg.remove_extension("subprocess", "call", 0x7ffff0)
    assert b"subprocess" not in body  # an EXT opcode: no name in the pickle
    header = b"".join(pickle.dumps(v, protocol=2) for v in
                      (0x1950A86A20F9469CFC6C, 1001, {"little_endian": True}))
    copyreg.add_extension("subprocess", "call", 0x7ffff0)
    try:
        with pytest.raises(pickle.UnpicklingError, match="subprocess.call"):
            torch.load(io.BytesIO(header + body))
    finally:
        copyreg.remove_extension("subprocess", "call", 0x7ffff0)


def test_safe_globals_allow_what_the_user_trusts(tmp_path):
    path = str(tmp_path / "p.pt")
    torch.save({"p": _Point(3), "w": torch.zeros(1)}, path)
    name = f"{_Point.__module__}._Point"
    with pytest.raises(pickle.UnpicklingError) as info:
        torch.load(path)
    text = str(info.value)
    assert f"Unsupported global: GLOBAL {name} was not an allowed global by default" in text
    assert f"torch.serialization.add_safe_globals([{name}])" in text
    assert f"torch.serialization.safe_globals([{name}])" in text and "(1) In PyTorch 2.6" in text
    assert serialization.get_unsafe_globals_in_checkpoint(path) == [name]
    with serialization.safe_globals([_Point]):
        assert torch.load(path)["p"].x == 3
        assert _Point in serialization.get_safe_globals()
    assert _Point not in serialization.get_safe_globals()
    with pytest.raises(pickle.UnpicklingError):
        torch.load(path)
    serialization.add_safe_globals([(_Point, name)])
    try:
        assert torch.load(path)["p"].x == 3
    finally:
        serialization.clear_safe_globals()
    assert serialization.get_safe_globals() == []
    with pytest.raises(ValueError, match="Expected tuple of length 2"):
        serialization.add_safe_globals([(_Point,)])


def test_a_whole_module_pickles_with_full_pickle_only(tmp_path):
    path = str(tmp_path / "m.pt")
    net = torch.nn.Linear(2, 3)
    torch.save(net, path)
    with pytest.raises(pickle.UnpicklingError, match="Unsupported global"):
        torch.load(path)
    back = torch.load(path, weights_only=False)
    x = torch.randn(4, 2)
    assert torch.equal(back(x), net(x))


# -- the format, both ways with real PyTorch ------------------------------------------------

def _low(T, name: str) -> bool:
    """Whether numpy holds dtype ``name`` through ml_dtypes (compared via float64)."""
    return name == "bfloat16" or name.startswith("float8")


def _ours(T, barebones: bool = True) -> dict:
    base = T.arange(24, dtype=T.float32).reshape(4, 6)
    out = {"base": base, "view": base[1:3, ::2], "t": base.t(), "row": base[3],
           "expanded": T.arange(3.0).expand(2, 3), "scalar": T.tensor(1.5),
           "empty": T.zeros(2, 0), "param": T.nn.Parameter(T.ones(3)),
           "size": T.Size([4, 5]), "dtype": T.bfloat16, "device": T.device("cpu")}
    for name in DTYPES + (BAREBONES if barebones else []):
        out[name] = (T.arange(5) % 2 == 0 if name == "bool" else
                     (T.arange(5) * 3 - 4).to(getattr(T, name)) if name != "uint8" else
                     T.arange(5).to(T.uint8))
    return out


def _check_loaded(T, got: dict, expected: dict) -> None:
    for k, v in expected.items():
        if isinstance(v, (T.Tensor,)):
            w = got[k]
            assert w.dtype == v.dtype and tuple(w.shape) == tuple(v.shape), k
            if v.numel():  # (an empty tensor's strides are a convention)
                assert tuple(w.stride()) == tuple(v.stride()), k
            assert w.storage_offset() == v.storage_offset(), k
            a = v.detach().to(T.float64) if _low(T, k) else v.detach()
            b = w.detach().to(T.float64) if _low(T, k) else w.detach()
            np.testing.assert_array_equal(b.numpy(), a.numpy(), err_msg=k)
        else:
            assert got[k] == v, k
    ptr = got["base"].untyped_storage().data_ptr()
    assert all(got[k].untyped_storage().data_ptr() == ptr for k in ("view", "t", "row"))
    assert type(got["param"]).__name__ == "Parameter" and got["param"].requires_grad


@pytest.mark.parametrize("zip_format", [True, False])
def test_what_the_facade_saves_real_pytorch_loads(tmp_path, zip_format):
    real = pytest.importorskip("torch")
    path = str(tmp_path / "f.pt")
    # (PyTorch 2.13 fails to read its own legacy files of the barebones dtypes: "type object
    # 'torch.storage.UntypedStorage' has no attribute 'dtype'"; the facade writes what it does)
    saved = _ours(torch, barebones=zip_format)
    torch.save(saved, path, _use_new_zipfile_serialization=zip_format)
    got = real.load(path, weights_only=True)
    expected = {k: (real.from_numpy(v.detach().to(torch.float32).numpy()).to(
                        getattr(real, k))
                    if isinstance(v, torch.Tensor) and _low(torch, k) else
                    real.from_numpy(v.detach().numpy().copy()) if isinstance(v, torch.Tensor)
                    else v) for k, v in saved.items()}
    for k in ("view", "t", "row", "expanded"):  # the saved layouts, not a copy's
        expected[k] = real.as_strided(real.from_numpy(saved["base"].numpy().copy())
                                      if k != "expanded" else real.arange(3.0),
                                      tuple(saved[k].shape), saved[k].stride(),
                                      saved[k].storage_offset())
    expected["size"], expected["dtype"] = real.Size([4, 5]), real.bfloat16
    expected["device"] = real.device("cpu")
    _check_loaded(real, got, expected)
    got["base"][1, 0] = -5.0  # views of one storage in PyTorch too
    assert got["view"][0, 0].item() == -5.0


@pytest.mark.parametrize("zip_format", [True, False])
def test_what_real_pytorch_saves_the_facade_loads(tmp_path, zip_format):
    real = pytest.importorskip("torch")
    path = str(tmp_path / "p.pt")
    saved = _ours(real)
    real.save(saved, path, _use_new_zipfile_serialization=zip_format)
    got = torch.load(path)
    expected = _ours(torch)
    _check_loaded(torch, got, expected)
    got["base"][1, 0] = -5.0
    assert got["view"][0, 0].item() == -5.0


def test_training_resumes_to_the_same_numbers_on_both_sides(tmp_path):
    real = pytest.importorskip("torch")
    x = np.linspace(-1, 1, 24).reshape(8, 3)
    y = np.linspace(0, 1, 16).reshape(8, 2)

    def setup(T):
        T.manual_seed(0)
        net = T.nn.Sequential(T.nn.Linear(3, 5), T.nn.Tanh(), T.nn.BatchNorm1d(5),
                              T.nn.Linear(5, 2))
        return net, T.optim.AdamW(net.parameters(), lr=0.05, weight_decay=0.1)

    def train(T, net, opt, steps):
        xs, ys = T.tensor(x, dtype=T.float32), T.tensor(y, dtype=T.float32)
        losses = []
        for _ in range(steps):
            opt.zero_grad()
            loss = T.nn.functional.mse_loss(net(xs), ys)
            loss.backward()
            opt.step()
            losses.append(loss.item())
        return losses

    for first, second in ((torch, real), (real, torch)):
        net, opt = setup(first)
        if first is real:  # the same starting weights on both sides
            net.load_state_dict(real.load(_facade_file(tmp_path), weights_only=True))
        train(first, net, opt, 3)
        path = str(tmp_path / "ck.pt")
        first.save({"model": net.state_dict(), "optim": opt.state_dict()}, path)
        ck = second.load(path, weights_only=True)
        net2, opt2 = setup(second)
        net2.load_state_dict(ck["model"])
        opt2.load_state_dict(ck["optim"])
        np.testing.assert_allclose(train(second, net2, opt2, 4), train(first, net, opt, 4),
                                   rtol=2e-5, atol=1e-6)


def _facade_file(tmp_path) -> str:
    torch.manual_seed(0)
    net = torch.nn.Sequential(torch.nn.Linear(3, 5), torch.nn.Tanh(),
                              torch.nn.BatchNorm1d(5), torch.nn.Linear(5, 2))
    path = str(tmp_path / "init.pt")
    torch.save(net.state_dict(), path)
    return path


def test_the_archive_is_pytorchs_layout(tmp_path):
    path = str(tmp_path / "model.pt")
    x = torch.arange(10.0)
    torch.save({"a": x, "b": x[2:5], "c": torch.ones(3)}, path)
    with zipfile.ZipFile(path) as zf:
        names = zf.namelist()
        assert names[0] == "model/data.pkl"
        assert {"model/byteorder", "model/version", "model/data/0", "model/data/1",
                "model/.format_version", "model/.storage_alignment"} <= set(names)
        assert "model/data/2" not in names  # x and its view: one storage record
        assert zf.read("model/version") == b"3\n"
        for info in zf.infolist():
            if "/data/" in info.filename:
                with open(path, "rb") as fh:
                    fh.seek(info.header_offset + 26)
                    n, e = np.frombuffer(fh.read(4), "<u2")
                assert (info.header_offset + 30 + n + e) % 64 == 0  # aligned for mmap
    buffer = io.BytesIO()
    torch.save(x, buffer)
    assert zipfile.ZipFile(io.BytesIO(buffer.getvalue())).namelist()[0] == "archive/data.pkl"
    buffer.seek(0)
    assert torch.equal(torch.load(buffer), x)


def test_refusal_texts_are_pytorchs(tmp_path):
    real = pytest.importorskip("torch")
    path = str(tmp_path / "p.pt")
    torch.save({"p": _Point(1), "n": np.ones(2)}, path)
    for f in (path,):
        with pytest.raises(pickle.UnpicklingError) as ours:
            torch.load(f)
        with pytest.raises(pickle.UnpicklingError) as theirs:
            real.load(f)
        assert str(ours.value) == str(theirs.value)
    assert serialization.get_unsafe_globals_in_checkpoint(path) == sorted(
        real.serialization.get_unsafe_globals_in_checkpoint(path))
    marker, files = _payload_files(tmp_path)
    with pytest.raises(pickle.UnpicklingError) as ours:
        torch.load(files["zip"])
    with pytest.raises(pickle.UnpicklingError) as theirs:
        real.load(files["zip"])
    assert str(ours.value) == str(theirs.value)
    assert not os.path.exists(marker)


# -- damaged files --------------------------------------------------------------------------

def _checkpoint_bytes(zip_format: bool) -> bytes:
    buffer = io.BytesIO()
    x = torch.arange(64.0)
    torch.save({"x": x, "v": x[3:40:3], "i": torch.arange(7), "n": [1, "two", 3.0]}, buffer,
               _use_new_zipfile_serialization=zip_format)
    return buffer.getvalue()


@pytest.mark.parametrize("zip_format", [True, False])
def test_a_truncated_file_raises_naming_the_file(tmp_path, zip_format):
    data = _checkpoint_bytes(zip_format)
    path = str(tmp_path / "cut.pt")
    for cut in sorted(set(range(0, len(data), max(1, len(data) // 97))) | {len(data) - 1}):
        with open(path, "wb") as fh:
            fh.write(data[:cut])
        with pytest.raises((RuntimeError, pickle.UnpicklingError)) as info:
            torch.load(path)
        assert "cut.pt" in str(info.value) and ("corrupt" in str(info.value) or
                                                "truncated" in str(info.value)), cut


@pytest.mark.parametrize("zip_format", [True, False])
def test_flipped_bytes_raise_cleanly_or_load(tmp_path, zip_format):
    data = _checkpoint_bytes(zip_format)
    path = str(tmp_path / "flip.pt")
    rng = np.random.RandomState(0)
    for position in rng.choice(len(data), size=min(150, len(data)), replace=False):
        for flip in (0xFF, 0x80):
            damaged = bytearray(data)
            damaged[position] ^= flip
            with open(path, "wb") as fh:
                fh.write(bytes(damaged))
            try:
                torch.load(path)
            except (RuntimeError, pickle.UnpicklingError) as e:
                assert "flip.pt" in str(e) and str(e), (position, flip)


def _forged(tmp_path, offset: int, size: tuple, stride: tuple, location: str = "cpu") -> str:
    """A checkpoint whose one tensor has the given layout on a 4-element storage."""
    storages = _writer.StorageTable()
    record = storages._new(np.zeros(4, np.float32), torch.float32, location)
    name = _writer._name
    reduce = _Reduced((name("torch._utils", "_rebuild_tensor_v2"),
                       (record, offset, size, stride, False, __import__("collections")
                        .OrderedDict())))
    buffer = io.BytesIO()
    _writer.TorchPickler(buffer, 2, storages, legacy=False).dump(reduce)
    path = str(tmp_path / "forged.pt")
    with zipfile.ZipFile(path, "w") as zf:
        zf.writestr("forged/data.pkl", buffer.getvalue())
        zf.writestr("forged/data/0", record.data.tobytes())
    return path


class _Reduced:
    def __init__(self, rv):
        self.rv = rv

    def __reduce__(self):
        return self.rv


def test_a_layout_past_its_storage_is_refused(tmp_path):
    for offset, size, stride in ((0, (5,), (1,)), (3, (2,), (1,)), (0, (2, 2), (3, 1)),
                                 (-1, (2,), (1,)), (0, (2,), (-1,)), (0, (2,), ())):
        path = _forged(tmp_path, offset, size, stride)
        with pytest.raises(RuntimeError, match="forged.pt' cannot be loaded"):
            torch.load(path)
    ok = torch.load(_forged(tmp_path, 1, (3,), (1,)))
    assert ok.tolist() == [0.0, 0.0, 0.0]


def test_a_cuda_checkpoint_without_cuda_says_to_map_it(tmp_path):
    path = _forged(tmp_path, 0, (2, 2), (2, 1), location="cuda:0")
    if not torch.cuda.is_available():
        with pytest.raises(RuntimeError, match="Attempting to deserialize object on a CUDA "
                                               "device but torch.cuda.is_available"):
            torch.load(path)
    assert torch.load(path, map_location="cpu").device == torch.device("cpu")
    assert torch.load(path, map_location={"cuda:0": "cpu"}).shape == (2, 2)


MAP_TO_CUDA = ["cuda", "cuda:0", torch.device("cuda"), {"cpu": "cuda:0"},
               lambda storage, location: storage.cuda()]


@pytest.mark.parametrize("map_location", MAP_TO_CUDA, ids=["str", "str:0", "device", "dict",
                                                           "callable"])
def test_mapping_to_cuda_without_cuda_refuses_as_pytorch(tmp_path, map_location):
    if torch.cuda.is_available():
        pytest.skip("a GPU is visible: test_mapping_to_cuda_puts_tensors_on_the_gpu runs")
    path = str(tmp_path / "cpu.pt")
    torch.save({"a": torch.ones(2)}, path)
    with pytest.raises(RuntimeError, match="Attempting to deserialize object on a CUDA device"):
        torch.load(path, map_location=map_location)


@pytest.mark.gpu
@pytest.mark.parametrize("map_location", MAP_TO_CUDA, ids=["str", "str:0", "device", "dict",
                                                           "callable"])
def test_mapping_to_cuda_puts_tensors_on_the_gpu(tmp_path, map_location):
    path = str(tmp_path / "cpu.pt")
    base = torch.arange(6.0).reshape(2, 3)
    torch.save({"a": base, "row": base[1]}, path)
    got = torch.load(path, map_location=map_location)
    assert got["a"].device == torch.device("cuda", 0) and got["a"].is_cuda
    assert got["row"].cpu().tolist() == [3.0, 4.0, 5.0]
    back = torch.load(path, map_location="cpu")
    assert back["a"].device == torch.device("cpu")


def test_load_state_dict_writes_nothing_unless_everything_fits():
    net = torch.nn.Sequential(torch.nn.Linear(2, 3), torch.nn.Linear(3, 1))
    before = {k: v.clone() for k, v in net.state_dict().items()}
    good = {k: torch.full_like(v, 7.0) for k, v in before.items()}
    for bad in ({**good, "1.weight": torch.zeros(2, 2)},
                {**good, "1.bias": "not a tensor"},
                {k: v for k, v in good.items() if k != "1.bias"},
                {**good, "extra": torch.zeros(1)}):
        with pytest.raises(RuntimeError, match="Error\\(s\\) in loading state_dict"):
            net.load_state_dict(bad)
        for k, v in net.state_dict().items():
            assert torch.equal(v, before[k]), k
    net.load_state_dict(good)
    assert all((v == 7.0).all() for v in net.state_dict().values())


def test_an_old_batchnorm_state_without_num_batches_tracked_loads_as_in_pytorch():
    """A state dict of BatchNorm's version 1 (before ``num_batches_tracked``) gets the
    module's own count; a version 2 one missing it is a missing key. The versions ride in
    ``_metadata``, both ways with PyTorch."""
    net = torch.nn.Sequential(torch.nn.Linear(2, 3), torch.nn.BatchNorm1d(3))
    state = net.state_dict()
    assert state._metadata == {"": {"version": 1}, "0": {"version": 1},
                               "1": {"version": 2}}
    old = type(state)((k, v) for k, v in state.items() if k != "1.num_batches_tracked")
    old._metadata = {"1": {"version": 1}}
    net[1].num_batches_tracked.fill_(4)
    net.load_state_dict(old)
    assert net[1].num_batches_tracked.item() == 4
    net.load_state_dict({k: v for k, v in old.items()})  # no metadata: the oldest layout
    old._metadata = {"1": {"version": 2}}
    with pytest.raises(RuntimeError, match='Missing key\\(s\\) in state_dict: '
                                           '"1.num_batches_tracked"'):
        net.load_state_dict(old)
    real = pytest.importorskip("torch")
    buffer = io.BytesIO()
    torch.save(state, buffer)
    buffer.seek(0)
    theirs = real.load(buffer)
    assert theirs._metadata["1"] == {"version": 2}
    twin = real.nn.Sequential(real.nn.Linear(2, 3), real.nn.BatchNorm1d(3))
    twin.load_state_dict(theirs)


def test_a_whole_model_pickled_by_real_pytorch_loads_into_facade_modules(tmp_path):
    """``torch.save(model)`` in PyTorch names its classes by ``torch.nn.modules.<file>``
    paths; with ``weights_only=False`` they load as the facade's classes and compute the
    same; ``weights_only=True`` refuses them as PyTorch does."""
    real = pytest.importorskip("torch")
    real.manual_seed(0)
    cases = [(real.nn.Sequential(real.nn.Conv2d(1, 2, 3), real.nn.BatchNorm2d(2),
                                 real.nn.ReLU(), real.nn.Flatten(), real.nn.Linear(8, 2)),
              real.randn(2, 1, 4, 4)),
             (real.nn.LSTM(3, 4, batch_first=True), real.randn(2, 5, 3))]
    for model, x in cases:
        model.eval()
        path = str(tmp_path / "model.pt")
        real.save(model, path)
        with pytest.raises(pickle.UnpicklingError, match="Unsupported global: GLOBAL "
                                                         "torch.nn.modules"):
            torch.load(path)
        ours = torch.load(path, weights_only=False)
        assert isinstance(ours, torch.nn.Module) and not ours.training
        assert type(ours).__name__ == type(model).__name__
        assert isinstance(ours, getattr(torch.nn.modules, type(model).__module__
                                        .rsplit(".", 1)[1]).__dict__[type(model).__name__])
        expected, got = model(x), ours(torch.from_numpy(x.numpy()))
        expected = expected[0] if isinstance(expected, tuple) else expected
        got = got[0] if isinstance(got, tuple) else got
        np.testing.assert_allclose(got.detach().numpy(), expected.detach().numpy(),
                                   rtol=1e-5, atol=1e-6)
        assert list(ours.state_dict()) == list(model.state_dict())
