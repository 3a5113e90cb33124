"""PyTorch's "Neural Networks" tutorial (the 60-minute blitz: LeNet with conv2d and
max_pool2d, MSELoss, the grad_fn chain, manual and optim.SGD updates), run verbatim with
``import torch`` served by funcgrad.torch, and its printed output compared with what real
PyTorch prints (random values and object addresses masked: the two draw different
numbers)."""
import re
import sys
import textwrap

import pytest

import funcgrad.torch

LENET = '''
import torch
import torch.nn as nn
import torch.nn.functional as F


class Net(nn.Module):

    def __init__(self):
        super(Net, self).__init__()
        # 1 input image channel, 6 output channels, 5x5 square convolution
        # kernel
        self.conv1 = nn.Conv2d(1, 6, 5)
        self.conv2 = nn.Conv2d(6, 16, 5)
        # an affine operation: y = Wx + b
        self.fc1 = nn.Linear(16 * 5 * 5, 120)  # 5*5 from image dimension
        self.fc2 = nn.Linear(120, 84)
        self.fc3 = nn.Linear(84, 10)

    def forward(self, input):
        # Convolution layer C1: 1 input image channel, 6 output channels,
        # 5x5 square convolution, it uses RELU activation function, and
        # outputs a Tensor with size (N, 6, 28, 28), where N is the size of the batch
        c1 = F.relu(self.conv1(input))
        # Subsampling layer S2: 2x2 grid, purely functional,
        # this layer does not have any parameter, and outputs a (N, 6, 14, 14) Tensor
        s2 = F.max_pool2d(c1, (2, 2))
        # Convolution layer C3: 6 input channels, 16 output channels,
        # 5x5 square convolution, it uses RELU activation function, and
        # outputs a (N, 16, 10, 10) Tensor
        c3 = F.relu(self.conv2(s2))
        # Subsampling layer S4: 2x2 grid, purely functional,
        # this layer does not have any parameter, and outputs a (N, 16, 5, 5) Tensor
        s4 = F.max_pool2d(c3, 2)
        # Flatten operation: purely functional, outputs a (N, 400) Tensor
        s4 = torch.flatten(s4, 1)
        # Fully connected layer F5: (N, 400) Tensor input,
        # and outputs a (N, 120) Tensor, it uses RELU activation function
        f5 = F.relu(self.fc1(s4))
        # Fully connected layer F6: (N, 120) Tensor input,
        # and outputs a (N, 84) Tensor, it uses RELU activation function
        f6 = F.relu(self.fc2(f5))
        # Gaussian layer OUTPUT: (N, 84) Tensor input, and
        # outputs a (N, 10) Tensor
        output = self.fc3(f6)
        return output


net = Net()
print(net)

params = list(net.parameters())
print(len(params))
print(params[0].size())  # conv1's .weight

input = torch.randn(1, 1, 32, 32)
out = net(input)
print(out)

net.zero_grad()
out.backward(torch.randn(1, 10))

output = net(input)
target = torch.randn(10)  # a dummy target, for example
target = target.view(1, -1)  # make it the same shape as output
criterion = nn.MSELoss()

loss = criterion(output, target)
print(loss)

print(loss.grad_fn)  # MSELoss
print(loss.grad_fn.next_functions[0][0])  # Linear
print(loss.grad_fn.next_functions[0][0].next_functions[0][0])  # ReLU

net.zero_grad()     # zeroes the gradient buffers of all parameters

print('conv1.bias.grad before backward')
print(net.conv1.bias.grad)

loss.backward()

print('conv1.bias.grad after backward')
print(net.conv1.bias.grad)

learning_rate = 0.01
for f in net.parameters():
    f.data.sub_(f.grad.data * learning_rate)

import torch.optim as optim

# create your optimizer
optimizer = optim.SGD(net.parameters(), lr=0.01)

# in your training loop:
optimizer.zero_grad()   # zero the gradient buffers
output = net(input)
loss = criterion(output, target)
loss.backward()
optimizer.step()    # Does the update
'''


def _masked(text: str) -> str:
    """The printed text with numbers and addresses masked and whitespace dropped (how
    random values print changes their alignment and where lines wrap)."""
    text = re.sub(r"0x[0-9a-f]+", "ADDR", text)
    text = re.sub(r"-?\d+\.\d*(e[+-]\d+)?", "NUM", text)
    return re.sub(r"\s+", "", text)


def _run(module: object, code: str, monkeypatch: pytest.MonkeyPatch, capsys) -> str:
    with monkeypatch.context() as m:
        for name in ("torch", "torch.nn", "torch.nn.functional", "torch.optim"):
            parts = name.split(".")[1:]
            target = module
            for part in parts:
                target = getattr(target, part)
            m.setitem(sys.modules, name, target)
        exec(compile(textwrap.dedent(code), "<tutorial>", "exec"), {"__name__": "tutorial"})
    return capsys.readouterr().out


def test_neural_networks_tutorial_prints_what_pytorch_prints(monkeypatch, capsys):
    ours = _run(funcgrad.torch, LENET, monkeypatch, capsys)
    assert "MseLossBackward0" in ours and "AddmmBackward0" in ours
    real = pytest.importorskip("torch")
    if not hasattr(real, "tensor"):
        pytest.skip("PyTorch is not installed")
    theirs = _run(real, LENET, monkeypatch, capsys)
    assert _masked(ours) == _masked(theirs)
