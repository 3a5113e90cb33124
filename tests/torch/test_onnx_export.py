"""torch.onnx.export: common models written as ONNX and run by onnxruntime give the
facade's own outputs; names, initializers, dynamic axes; functional programs too."""
from __future__ import annotations

import io

import numpy as np
import pytest

ort = pytest.importorskip("onnxruntime")
onnx = pytest.importorskip("onnx")

import funcgrad  # noqa: E402
import funcgrad.numpy as fnp  # noqa: E402
import funcgrad.torch as torch  # noqa: E402
import funcgrad.torch.onnx  # noqa: E402,F401
from funcgrad.onnx import tape_to_model  # noqa: E402

nn = torch.nn


def _models() -> dict:
    torch.manual_seed(0)
    return {
        "mlp": (nn.Sequential(nn.Linear(4, 8), nn.GELU(), nn.Dropout(0.1), nn.Linear(8, 3),
                              nn.Softmax(dim=-1)), torch.randn(2, 4)),
        "cnn": (nn.Sequential(nn.Conv2d(1, 2, 3, padding=1), nn.BatchNorm2d(2), nn.ReLU(),
                              nn.MaxPool2d(2), nn.AvgPool2d(2), nn.Flatten(), nn.Linear(8, 2),
                              nn.Sigmoid(), nn.LeakyReLU(0.1), nn.Tanh()),
                torch.randn(1, 1, 8, 8)),
        "strided conv": (nn.Sequential(nn.Conv2d(2, 4, 3, stride=2, dilation=1, groups=2),
                                       nn.Hardtanh()), torch.randn(1, 2, 9, 9)),
        "lstm": (nn.LSTM(3, 4, batch_first=True), torch.randn(2, 5, 3)),
        "gru": (nn.GRU(3, 4), torch.randn(5, 2, 3)),
        "transformer layer": (nn.TransformerEncoderLayer(8, 2, 16, dropout=0.0,
                                                         batch_first=True),
                              torch.randn(2, 3, 8)),
        "embedding": (nn.Sequential(nn.Embedding(10, 4, padding_idx=0), nn.LayerNorm(4)),
                      torch.tensor([[1, 2], [3, 0]])),
    }


def _run(proto, feeds: dict) -> list:
    return ort.InferenceSession(proto.SerializeToString()).run(None, feeds)


@pytest.mark.parametrize("name", list(_models()))
def test_common_models_run_in_onnxruntime_with_the_facades_numbers(name):
    model, x = _models()[name]
    model.eval()
    buffer = io.BytesIO()
    proto = torch.onnx.export(model, (x,), buffer, input_names=["x"])
    assert buffer.getvalue() == proto.SerializeToString()
    expected = model(x)
    expected = expected[0] if isinstance(expected, tuple) else expected
    got = _run(proto, {"x": x.numpy()})[0]
    assert got.shape == tuple(expected.shape)
    np.testing.assert_allclose(got, expected.detach().numpy(), rtol=1e-5, atol=1e-5)


def test_names_initializers_and_dynamic_axes(tmp_path):
    model = nn.Sequential(nn.Linear(4, 3), nn.ReLU(), nn.Flatten(), nn.Linear(3, 2))
    path = str(tmp_path / "m.onnx")
    torch.onnx.export(model, (torch.randn(2, 4),), path, input_names=["features"],
                      output_names=["logits"], dynamic_axes={"features": {0: "batch"},
                                                             "logits": {0: "batch"}})
    proto = onnx.load(path)
    assert [i.name for i in proto.graph.input] == ["features"]
    assert [o.name for o in proto.graph.output] == ["logits"]
    assert {i.name for i in proto.graph.initializer} >= {"0.weight", "0.bias", "3.weight"}
    assert proto.graph.input[0].type.tensor_type.shape.dim[0].dim_param == "batch"
    for batch in (1, 5):  # another batch size than traced
        x = torch.randn(batch, 4)
        got = _run(proto, {"features": x.numpy()})[0]
        np.testing.assert_allclose(got, model(x).detach().numpy(), rtol=1e-5, atol=1e-6)
    kept = torch.onnx.export(model, torch.randn(2, 4), None, export_params=False)
    assert {i.name for i in kept.graph.input} >= {"0.weight", "input_0"}
    assert not kept.graph.initializer


def test_a_functional_program_exports_from_its_lowered_tape():
    def f(w, x):
        return fnp.tanh(x @ w).sum(axis=1) * 2.0
    w, x = fnp.ones((3, 2), dtype=fnp.float32), fnp.asarray(np.arange(6, dtype=np.float32)
                                                            .reshape(2, 3))
    tape = funcgrad.jit(f).lower(w, x).tape
    proto = tape_to_model(tape, ["w", "x"], ["y"])
    got = _run(proto, {"w": np.asarray(w), "x": np.asarray(x)})[0]
    np.testing.assert_allclose(got, np.asarray(f(w, x)), rtol=1e-6)
    with pytest.raises(ValueError, match="2 inputs and 1 outputs"):
        tape_to_model(tape, ["w"], ["y"])


def test_an_operation_without_an_onnx_form_names_itself():
    with pytest.raises(NotImplementedError, match="no ONNX form of the primitive 'cumsum'"):
        torch.onnx.export(lambda x: torch.cumsum(x, 0), (torch.randn(3),), None)
