"""torch.jit.save / load / freeze: a scripted module stored in funcgrad's zip format and run
without its source (in a fresh process), the file's checks, and frozen modules."""
import io
import json
import re
import subprocess
import sys
import textwrap
import zipfile

import numpy as np
import pytest

import funcgrad.torch as torch
from funcgrad.torch import nn


def helper(x, k: int):
    for i in range(k):
        x = x * 0.5 + i
    return x


class Block(nn.Module):
    def __init__(self):
        super().__init__()
        self.lin = nn.Linear(3, 3)
        self.drop = nn.Dropout(0.25)
        self.scale: float = 0.5
        self.register_buffer("shift", torch.ones(3))

    def forward(self, x):
        return self.drop(torch.tanh(self.lin(x))) * self.scale + self.shift


class Net(nn.Module):
    def __init__(self):
        super().__init__()
        self.blocks = nn.ModuleList([Block() for _ in range(2)])
        self.act = nn.LeakyReLU(0.3)
        self.head = nn.Sequential(nn.Linear(3, 2), nn.ReLU())

    def forward(self, x, steps: int):
        for b in self.blocks:
            x = b(x)
        if bool(x.sum() > 0):
            x = helper(x, steps)
        return self.head(self.act(x))

    @torch.jit.export
    def twice(self, x):
        return self.forward(x, 1) * 2


X = np.random.default_rng(0).normal(size=(4, 3)).astype(np.float32)


def _saved(obj) -> io.BytesIO:
    buf = io.BytesIO()
    torch.jit.save(obj, buf)
    buf.seek(0)
    return buf


def _out_and_grads(m, *args):
    y = m(torch.tensor(X), *args)
    y.sum().backward()
    return y.detach().numpy(), {k: p.grad.numpy() for k, p in m.named_parameters()}


def test_round_trip_in_a_process_without_the_class(tmp_path):
    s = torch.jit.script(Net().eval())  # (dropout off: the same outputs in both processes)
    path = tmp_path / "net.pt"
    torch.jit.save(s, str(path))
    y, grads = _out_and_grads(s, 3)
    code = textwrap.dedent(f"""
        import json, sys, numpy as np
        import funcgrad.torch as torch
        m = torch.jit.load({str(path)!r})
        x = torch.tensor(np.array({X.tolist()!r}, np.float32))
        y = m(x, 3)
        y.sum().backward()
        print(json.dumps({{"y": y.detach().numpy().tolist(),
                          "grads": {{k: p.grad.numpy().tolist()
                                     for k, p in m.named_parameters()}},
                          "twice": m.twice(x).detach().numpy().tolist(),
                          "has_net": "Net" in dir(sys.modules["__main__"])}}))
    """)
    run = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                         cwd=str(tmp_path), timeout=120)
    assert run.returncode == 0, run.stderr
    got = json.loads(run.stdout.strip().splitlines()[-1])
    assert not got["has_net"]
    np.testing.assert_allclose(got["y"], y, rtol=1e-6)
    assert got["grads"].keys() == grads.keys()
    for k in grads:
        np.testing.assert_allclose(got["grads"][k], grads[k], rtol=1e-5, err_msg=k)
    np.testing.assert_allclose(got["twice"], s.twice(torch.tensor(X)).detach().numpy())


def test_loaded_module_is_a_script_module():
    net = Net()
    loaded = torch.jit.load(_saved(torch.jit.script(net)))
    assert isinstance(loaded, torch.jit.ScriptModule)
    assert str(loaded.graph).count("prim::CallMethod") == str(
        torch.jit.script(net).graph).count("prim::CallMethod")
    assert "def forward" in loaded.code
    assert loaded.state_dict().keys() == net.state_dict().keys()
    for k, v in net.state_dict().items():
        np.testing.assert_array_equal(loaded.state_dict()[k].numpy(), v.numpy())
    assert loaded.blocks[0].drop.p == 0.25 and loaded.act.negative_slope == 0.3
    assert loaded.blocks[1].scale == 0.5 and loaded.training
    loaded.eval()
    assert not loaded.blocks[0].drop.training
    torch.manual_seed(1)
    a = loaded(torch.tensor(X), 2).detach().numpy()
    np.testing.assert_array_equal(a, loaded(torch.tensor(X), 2).detach().numpy())


def test_function_round_trip_and_tied_parameters():
    def f(x, n: int):
        if n > 1:
            return helper(x, n) - 1.0
        return x

    loaded = torch.jit.load(_saved(torch.jit.script(f)))
    x = torch.tensor(X)
    np.testing.assert_allclose(loaded(x, 3).numpy(), torch.jit.script(f)(x, 3).numpy())
    assert isinstance(loaded, torch.jit.ScriptFunction) and "prim::CallFunction" in str(
        loaded.graph)

    class Tied(nn.Module):
        def __init__(self):
            super().__init__()
            self.a = nn.Linear(3, 3)
            self.b = nn.Linear(3, 3)
            self.b.weight = self.a.weight

        def forward(self, x):
            return self.b(self.a(x))

    m = torch.jit.load(_saved(torch.jit.script(Tied())))
    assert m.a.weight is m.b.weight


def test_refusals_at_save():
    @torch.jit.ignore
    def side(x):
        return x + 1

    def f(x):
        return side(x)

    with pytest.raises(RuntimeError, match="Could not export Python function call 'side'. "
                       "Remove calls to Python functions before export"):
        torch.jit.save(torch.jit.script(f), io.BytesIO())

    class M(nn.Module):
        @torch.jit.ignore
        def py(self, x):
            return x

        def forward(self, x):
            return self.py(x)

    with pytest.raises(RuntimeError, match="Could not export Python function call 'py'"):
        torch.jit.save(torch.jit.script(M()), io.BytesIO())
    traced = torch.jit.trace(nn.Linear(2, 2), torch.ones(1, 2))
    with pytest.raises(RuntimeError, match="only modules and functions compiled by "
                       "torch.jit.script can be saved"):
        torch.jit.save(traced, io.BytesIO())


def _edited(buf: io.BytesIO, edit) -> io.BytesIO:
    with zipfile.ZipFile(buf) as zf:
        files = {n: zf.read(n) for n in zf.namelist()}
    desc = json.loads(files["archive/funcgrad_script.json"])
    edit(desc, files)
    files["archive/funcgrad_script.json"] = json.dumps(desc).encode()
    out = io.BytesIO()
    with zipfile.ZipFile(out, "w") as zf:
        for n, data in files.items():
            zf.writestr(n, data)
    out.seek(0)
    return out


def _first_op(desc: dict) -> dict:
    nodes = desc["module"]["methods"]["forward"]["body"]["nodes"]
    return next(n for n in nodes if n["kind"].startswith("aten::"))


@pytest.mark.parametrize("edit, message", [
    (lambda d, f: _first_op(d).update(kind="aten::system"), "Unknown builtin op: aten::system"),
    (lambda d, f: _first_op(d).update(kind="aten::save", attrs={"ns": "torch"}),
     "Unknown builtin op: aten::save"),
    (lambda d, f: _first_op(d).update(kind="prim::PythonOp", attrs={"name": "os.system"}),
     "calls the Python function 'os.system'"),
    (lambda d, f: _first_op(d).update(attrs={"ns": "os"}), "unknown namespace 'os'"),
    (lambda d, f: _first_op(d).update(inputs=[999]), "value 999 is used where it is not"),
    (lambda d, f: d["module"]["methods"]["forward"].update(return_type="Evil"),
     "unknown type 'Evil'"),
    (lambda d, f: d["module"]["children"]["act"].update(type="Popen"),
     "'Popen' is not a facade nn module class"),
    (lambda d, f: d["tensors"][0].update(dtype="object"), "malformed record"),
    (lambda d, f: f.pop("archive/tensors/0"), "tensor 0's bytes are missing"),
    (lambda d, f: d.update(version=99), "format version 99 is not supported"),
])
def test_malformed_files_raise_naming_what(edit, message):
    buf = _edited(_saved(torch.jit.script(Net())), edit)
    with pytest.raises(RuntimeError, match=message) as info:
        torch.jit.load(buf)
    assert "torch.jit.load" in str(info.value)


def test_not_an_archive_and_torch_load(tmp_path):
    path = tmp_path / "m.pt"
    path.write_bytes(b"not a zip")
    with pytest.raises(RuntimeError, match=f"torch.jit.load: {path}: not a zip archive"):
        torch.jit.load(str(path))
    torch.jit.save(torch.jit.script(Net()), str(path))
    with pytest.raises(RuntimeError, match="TorchScript archive: load it with "
                       "torch.jit.load"):
        torch.load(str(path))


def test_freeze_inlines_parameters_and_attributes():
    net = Net()
    s = torch.jit.script(net)
    with pytest.raises(RuntimeError, match="Freezing is currently only implemented for "
                       "modules in eval mode. Please call .eval()"):
        torch.jit.freeze(s)
    with pytest.raises(RuntimeError, match="Freezing expects a ScriptModule as input"):
        torch.jit.freeze(net.eval())
    frozen = torch.jit.freeze(s.eval())
    text = str(frozen.graph)
    assert "prim::Constant[value=<Tensor>]" in text and "prim::Constant[value=0.5]" in text
    reads = re.findall(r'prim::GetAttr\[name="(\w+)"\]', text)
    assert "shift" not in reads and "scale" not in reads and 'name="forward"' in text
    assert len(re.findall(r"%shift\.\d+ : Tensor = prim::Constant", text)) == 2
    x = torch.tensor(X, requires_grad=True)
    y = frozen(x, 2)
    np.testing.assert_allclose(y.detach().numpy(), s(torch.tensor(X), 2).detach().numpy())
    y.sum().backward()
    x2 = torch.tensor(X, requires_grad=True)
    s(x2, 2).sum().backward()
    np.testing.assert_allclose(x.grad.numpy(), x2.grad.numpy(), rtol=1e-6)
    net.blocks[0].shift.data.mul_(0)  # the frozen copy keeps the values it was given
    np.testing.assert_allclose(frozen(torch.tensor(X), 2).detach().numpy(),
                               y.detach().numpy())
    loaded = torch.jit.load(_saved(frozen))
    np.testing.assert_allclose(loaded(torch.tensor(X), 2).detach().numpy(),
                               y.detach().numpy())
