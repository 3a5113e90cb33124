"""Writes the checkpoints `tests/torch/test_serialization_files.py` loads without PyTorch:
run with real PyTorch (``python tests/torch/data/make_checkpoints.py``) to make them anew.

Each file holds tensors of every dtype the facade has (the barebones uint16/32/64 and
float8 too), views of one storage, a model's and
an Adam optimizer's state after one training step, and what PyTorch computed from them
(the model's output on ``x``; the parameters after one more step), so the test can check
that funcgrad resumes training to PyTorch's numbers.
"""
import copy
import os

import torch

HERE = os.path.dirname(os.path.abspath(__file__))
DTYPES = ["float64", "float32", "float16", "bfloat16", "int8", "int16", "int32", "int64",
          "uint8", "bool", "complex64", "complex128"]
BAREBONES = ["uint16", "uint32", "uint64", "float8_e4m3fn", "float8_e5m2", "float8_e4m3fnuz",
             "float8_e5m2fnuz"]  # PyTorch's dtypes that convert and save, and promote with nothing


def model() -> torch.nn.Module:
    torch.manual_seed(0)
    return torch.nn.Sequential(torch.nn.Linear(3, 4), torch.nn.Tanh(),
                               torch.nn.BatchNorm1d(4), torch.nn.Linear(4, 2))


def contents() -> dict:
    base = torch.arange(12, dtype=torch.float32).reshape(3, 4) / 4
    out = {"base": base, "view": base[1:, ::2], "t": base.t(), "row": base[2],
           "scalar": torch.tensor(2.5), "empty": torch.zeros(0, 3),
           "param": torch.nn.Parameter(torch.ones(2)), "size": torch.Size([2, 3]),
           "dtype": torch.float16, "device": torch.device("cpu"), "number": 3,
           "text": "funcgrad", "nested": [(1, 2.0), {"k": None}]}
    for name in DTYPES:
        out[name] = (torch.arange(6) % 2 == 1 if name == "bool" else
                     torch.arange(6).to(getattr(torch, name)) - (1 if name != "uint8" else 0))
    for name in BAREBONES:  # (no arithmetic in these dtypes: converted from int64)
        out[name] = (torch.arange(6) - 1).to(getattr(torch, name))
    net = model()
    opt = torch.optim.Adam(net.parameters(), lr=0.01)
    x = torch.linspace(-1, 1, 15).reshape(5, 3)
    target = torch.linspace(0, 1, 10).reshape(5, 2)
    for _ in range(2):
        opt.zero_grad()
        torch.nn.functional.mse_loss(net(x), target).backward()
        opt.step()
    out["model"] = copy.deepcopy(net.state_dict())  # (a state dict views the live tensors)
    out["optim"] = copy.deepcopy(opt.state_dict())
    out["x"], out["target"] = x, target
    net.eval()
    with torch.no_grad():
        out["eval_out"] = net(x)
    net.train()
    opt.zero_grad()
    torch.nn.functional.mse_loss(net(x), target).backward()
    opt.step()
    out["params_after_step"] = [p.detach().clone() for p in net.parameters()]
    return out


if __name__ == "__main__":
    torch.save(contents(), os.path.join(HERE, "pytorch_checkpoint.pt"))
    torch.save(contents(), os.path.join(HERE, "pytorch_checkpoint_legacy.pt"),
               _use_new_zipfile_serialization=False)
