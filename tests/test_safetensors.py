"""safetensors: funcgrad.safetensors (arrays, pytrees) and funcgrad.torch.safetensors
(``safetensors.torch``'s names), both ways with real PyTorch where installed."""
from __future__ import annotations

import numpy as np
import pytest

pytest.importorskip("safetensors")

import funcgrad  # noqa: E402
import funcgrad.numpy as fnp  # noqa: E402
import funcgrad.torch as torch  # noqa: E402
from funcgrad import safetensors as fs  # noqa: E402
from funcgrad import tree_util  # noqa: E402
from funcgrad.dtypes import require_bfloat16  # noqa: E402
from funcgrad.example_libraries import stax  # noqa: E402
from funcgrad.torch import safetensors as fts  # noqa: E402

DTYPES = ["float64", "float32", "float16", "bfloat16", "int8", "int16", "int32", "int64",
          "uint8", "bool", "complex64",  # (the format has no complex128)
          "uint16", "uint32", "uint64", "float8_e4m3fn", "float8_e5m2"]


def _tensors(T) -> dict:
    out = {}
    for name in DTYPES:
        out[name] = (T.arange(6) % 2 == 0 if name == "bool" else
                     T.arange(6).to(getattr(T, name)).reshape(2, 3))
    out["scalar"] = T.tensor(2.5)
    return out


def test_arrays_round_trip_with_their_dtypes(tmp_path):
    arrays = {"f": fnp.linspace(0, 1, 6).reshape(2, 3), "i": fnp.arange(4, dtype=fnp.int32),
              "b": fnp.asarray([True, False]), "s": fnp.asarray(1.5, dtype=fnp.float32),
              "h": fnp.ones(3, dtype=require_bfloat16()), "n": np.arange(3.0)}
    path = str(tmp_path / "a.safetensors")
    fs.save_file(arrays, path, metadata={"who": "funcgrad"})
    for back in (fs.load_file(path), fs.load(fs.save(arrays))):
        assert set(back) == set(arrays)
        for k, v in arrays.items():
            assert back[k].dtype == np.asarray(v).dtype and back[k].shape == np.shape(v), k
            np.testing.assert_array_equal(np.asarray(back[k], np.float64),
                                          np.asarray(v, np.float64))
    with pytest.raises(ValueError, match="Expected a dict"):
        fs.save_file([fnp.ones(2)], path)
    with pytest.raises(ValueError, match="Key `3` is invalid"):
        fs.save_file({3: fnp.ones(2)}, path)


def test_a_parameter_tree_round_trips_by_key_path(tmp_path):
    init, _ = stax.serial(stax.Dense(4), stax.Relu, stax.Dense(2))
    _, params = init(funcgrad.random.PRNGKey(0), (-1, 3))
    path = str(tmp_path / "params.safetensors")
    fs.save_tree(params, path)
    assert set(fs.load_file(path)) == {"[0][0]", "[0][1]", "[2][0]", "[2][1]"}
    back = fs.load_tree(path, like=params)
    assert tree_util.tree_structure(back) == tree_util.tree_structure(params)
    for a, b in zip(tree_util.tree_leaves(back), tree_util.tree_leaves(params)):
        np.testing.assert_array_equal(np.asarray(a), np.asarray(b))
    nested = {"layers": [{"w": fnp.ones((2, 3)), "b": fnp.zeros(3)}], "scale": fnp.asarray(2.0)}
    fs.save_tree(nested, path)
    rebuilt = fs.load_tree(path)  # no template: dicts and lists from the names
    assert tree_util.tree_structure(rebuilt) == tree_util.tree_structure(nested)
    with pytest.raises(ValueError, match="unexpected"):
        fs.load_tree(path, like={"layers": nested["layers"]})
    with pytest.raises(ValueError, match="has shape"):
        fs.load_tree(path, like={**nested, "scale": fnp.ones(2)})


def test_a_damaged_file_names_itself(tmp_path):
    path = str(tmp_path / "bad.safetensors")
    fs.save_file({"w": fnp.ones(100)}, path)
    data = open(path, "rb").read()
    for cut in (0, 5, 20, len(data) - 8):
        open(path, "wb").write(data[:cut])
        with pytest.raises(fs.SafetensorsError, match="bad.safetensors"):
            fs.load_file(path)


def test_facade_checks_are_safetensors_torchs(tmp_path):
    path = str(tmp_path / "t.safetensors")
    x = torch.zeros(6)
    with pytest.raises(RuntimeError, match="Some tensors share memory"):
        fts.save_file({"a": x, "b": x[2:]}, path)
    with pytest.raises(ValueError, match="You are trying to save a non contiguous tensor: `a`"):
        fts.save_file({"a": torch.zeros(3, 2).t()}, path)
    with pytest.raises(ValueError, match="Key `a` is invalid, expected torch.Tensor"):
        fts.save_file({"a": np.ones(2)}, path)
    with pytest.raises(Exception, match="Unknown dtype \"complex128\""):
        fts.save_file({"a": torch.zeros(2, dtype=torch.complex128)}, path)
    fts.save_file({"a": x[:3], "b": x[3:]}, path)  # one storage, no overlap: allowed
    assert fts.load_file(path)["b"].shape == (3,)


def test_facade_files_go_both_ways_with_real_pytorch(tmp_path):
    real = pytest.importorskip("torch")
    st = pytest.importorskip("safetensors.torch")
    ours, theirs = str(tmp_path / "ours.safetensors"), str(tmp_path / "theirs.safetensors")
    fts.save_file(_tensors(torch), ours, metadata={"format": "pt"})
    st.save_file(_tensors(real), theirs)
    for got, expected in ((st.load_file(ours), _tensors(real)),
                          (fts.load_file(theirs), _tensors(torch)),
                          (torch.load(theirs), _tensors(torch)),
                          (fts.load(open(theirs, "rb").read()), _tensors(torch))):
        assert set(got) == set(expected)
        for k, v in expected.items():
            assert str(got[k].dtype) == str(v.dtype) and tuple(got[k].shape) == tuple(v.shape)
            assert got[k].to(got[k].dtype if k != "bfloat16" else v.dtype).tolist() == \
                v.tolist(), k
    net = torch.nn.Linear(3, 2)
    fts.save_file(net.state_dict(), ours)
    twin = real.nn.Linear(3, 2)
    twin.load_state_dict(st.load_file(ours))
    x = np.ones((1, 3), np.float32)
    np.testing.assert_allclose(twin(real.from_numpy(x)).detach().numpy(),
                               net(torch.from_numpy(x)).detach().numpy(), rtol=1e-6)
