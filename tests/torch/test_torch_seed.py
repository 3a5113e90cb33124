"""The seed document's PyTorch examples (sections 2.1, 4, 5 and 8), run verbatim.

Each snippet's ``import torch`` is served by funcgrad.torch (``sys.modules['torch']`` is
patched for the duration of the test) and its printed output is compared with what
PyTorch prints; object addresses are matched by pattern. The snippets are the seed's code
with the punctuation the extraction lost restored (``=``, quotes, ``@``, ``**``).
"""
import re
import sys
import textwrap

import numpy as np
import pytest

import funcgrad.torch

ADDR = r"0x[0-9a-f]+"


@pytest.fixture
def run(monkeypatch, capsys):
    monkeypatch.setitem(sys.modules, "torch", funcgrad.torch)

    def run_code(code: str, namespace: dict | None = None) -> tuple:
        ns = {} if namespace is None else namespace
        exec(compile(textwrap.dedent(code), "<seed>", "exec"), ns)
        return capsys.readouterr().out, ns
    return run_code


SECTION_2_1 = """
import torch
x = torch.tensor([1., 2., 3.], requires_grad=True)
y = x * 2
z = y.mean()
print(x)
print(x.requires_grad) # True
print(x.grad_fn) # None，因为x是叶子节点
print(y.grad_fn) # <MulBackward0 object at ...>
print(z.grad_fn) # <MeanBackward0 object at ...>
"""

SECTION_2_2 = """
z.backward() # 触发反向传播
print(x.grad) # 输出：tensor([0.6667, 0.6667, 0.6667])
"""


def test_section_2_1_tensor_metadata_and_backward(run):
    out, ns = run(SECTION_2_1)
    expected = [r"tensor\(\[1\., 2\., 3\.\], requires_grad=True\)", "True", "None",
                rf"<MulBackward0 object at {ADDR}>", rf"<MeanBackward0 object at {ADDR}>"]
    lines = out.splitlines()
    assert len(lines) == len(expected)
    for line, pattern in zip(lines, expected):
        assert re.fullmatch(pattern, line), (line, pattern)
    assert ns["x"].is_leaf and not ns["y"].is_leaf
    out, _ = run(SECTION_2_2, ns)
    assert out == "tensor([0.6667, 0.6667, 0.6667])\n"


SECTION_4 = """
import torch
a = torch.randn(2, 2, requires_grad=True)
b = torch.randn(2, 2, requires_grad=True)
c = a * b  # 操作1：逐元素乘法
d = c.sum() # 操作2：求和
loss = d.log() # 操作3：取对数
loss.backward()
print(a.grad) # 查看叶子节点a的梯度
print(b.grad) # 查看叶子节点b的梯度
"""

MATRIX = r"tensor\(\[\[ ?-?\d\.\d{4}, +-?\d\.\d{4}\],\n        \[ ?-?\d\.\d{4}, +-?\d\.\d{4}\]\]\)"


def test_section_4_backward_of_mul_sum_log(run):
    funcgrad.torch.manual_seed(0)  # a draw where sum(a * b) > 0, so that log is finite
    out, ns = run(SECTION_4)
    printed = out.split("\n")
    assert re.fullmatch(MATRIX, "\n".join(printed[0:2])), out
    assert re.fullmatch(MATRIX, "\n".join(printed[2:4])), out
    a, b, d = (ns[k].detach().numpy() for k in "abd")
    # d log(sum(a*b)) / da = b / sum(a*b)
    np.testing.assert_allclose(ns["a"].grad.numpy(), b / d, rtol=1e-5)
    np.testing.assert_allclose(ns["b"].grad.numpy(), a / d, rtol=1e-5)
    assert ns["loss"].grad_fn.name() == "LogBackward0"
    assert ns["d"].grad_fn.name() == "SumBackward0"
    assert ns["c"].grad_fn.name() == "MulBackward0"


SECTION_5 = '''
import torch

class MySigmoid(torch.autograd.Function):
    """
    自定义 Sigmoid 激活函数及其反向传播。
    前向: sigmoid(x) = 1 / (1 + exp(-x))
    反向: grad_input = sigmoid(x) * (1 - sigmoid(x)) * grad_output
    """

    @staticmethod
    def forward(ctx, input):
        """
        前向传播。
        Args:
            ctx: 上下文对象，用于保存反向传播需要的张量。
            input: 输入张量。
        Returns:
            output: 经过sigmoid激活的输出张量。
        """
        # 计算输出
        output = 1 / (1 + torch.exp(-input))
        # 将输出保存到ctx中，供backward使用。这里保存output是因为反向公式需要它。
        ctx.save_for_backward(output)
        return output

    @staticmethod
    def backward(ctx, grad_output):
        """
        反向传播。
        Args:
            ctx: 上下文对象，包含forward保存的张量。
            grad_output: 损失函数对当前Function输出张量的梯度。
        Returns:
            grad_input: 损失函数对当前Function输入张量的梯度。
        """
        # 从ctx中取出forward保存的张量
        output, = ctx.saved_tensors
        # 根据sigmoid的导数公式计算梯度
        # sigmoid'(x) = sigmoid(x) * (1 - sigmoid(x))
        grad_input = output * (1 - output) * grad_output
        # 返回对输入的梯度。如果forward有多个输入，这里需要返回对应数量的梯度。
        return grad_input

# 使用方式
my_sigmoid = MySigmoid.apply  # apply是调用自定义Function的入口
x = torch.tensor([0., 1., -1.], requires_grad=True)
y = my_sigmoid(x)
print("Forward output:", y)

# 计算梯度
loss = y.sum()
loss.backward()
print("Gradient w.r.t x:", x.grad)

# 验证：与PyTorch内置的sigmoid对比
x2 = torch.tensor([0., 1., -1.], requires_grad=True)
y2 = torch.sigmoid(x2)
loss2 = y2.sum()
loss2.backward()
print("PyTorch's gradient:", x2.grad)
'''


def test_section_5_custom_sigmoid_function(run):
    out, ns = run(SECTION_5)
    assert out == ("Forward output: tensor([0.5000, 0.7311, 0.2689], "
                   "grad_fn=<MySigmoidBackward>)\n"
                   "Gradient w.r.t x: tensor([0.2500, 0.1966, 0.1966])\n"
                   "PyTorch's gradient: tensor([0.2500, 0.1966, 0.1966])\n")
    np.testing.assert_allclose(ns["x"].grad.numpy(), ns["x2"].grad.numpy(), rtol=1e-6)
    assert ns["y2"].grad_fn.name() == "SigmoidBackward0"
    # (a Python class in PyTorch: its repr names the module, torch.autograd.function)
    assert re.fullmatch(rf"<torch.autograd.function.MySigmoidBackward object at {ADDR}>",
                        repr(ns["y"].grad_fn))


SECTION_8 = """
# 冻结模型的一部分
for param in model.backbone.parameters():
    param.requires_grad = False

# 推理时禁用梯度
@torch.no_grad()
def evaluate(model, dataloader):
    model.eval()
    # ... 推理代码
"""

SETUP_8 = """
import torch
import torch.nn as nn

class Net(nn.Module):
    def __init__(self):
        super().__init__()
        self.backbone = nn.Sequential(nn.Linear(4, 8), nn.ReLU())
        self.head = nn.Linear(8, 3)

    def forward(self, x):
        return self.head(self.backbone(x))

model = Net()
dataloader = [(torch.randn(5, 4), torch.randint(0, 3, (5,))) for _ in range(3)]
"""


def test_section_8_freezing_and_no_grad_evaluate(run, monkeypatch):
    monkeypatch.setitem(sys.modules, "torch.nn", funcgrad.torch.nn)
    _, ns = run(SETUP_8)
    out, ns = run(SECTION_8, ns)
    assert out == ""
    model = ns["model"]
    assert [p.requires_grad for p in model.backbone.parameters()] == [False, False]
    assert [p.requires_grad for p in model.head.parameters()] == [True, True]
    assert model.training
    assert ns["evaluate"](model, ns["dataloader"]) is None
    assert not model.training and not model.backbone.training
    # training the unfrozen head only: backbone parameters get no gradient
    model.train()
    x, y = ns["dataloader"][0]
    funcgrad.torch.nn.functional.cross_entropy(model(x), y).backward()
    assert all(p.grad is None for p in model.backbone.parameters())
    assert all(p.grad is not None for p in model.head.parameters())


def test_section_8_evaluate_with_a_body_records_no_graph(run, monkeypatch):
    monkeypatch.setitem(sys.modules, "torch.nn", funcgrad.torch.nn)
    _, ns = run(SETUP_8)
    code = SECTION_8.replace("    # ... 推理代码", """    # ... 推理代码
    correct = 0
    for x, y in dataloader:
        out = model(x)
        assert not out.requires_grad and out.grad_fn is None
        correct += (out.argmax(1) == y).sum().item()
    return correct""")
    _, ns = run(code, ns)
    correct = ns["evaluate"](ns["model"], ns["dataloader"])
    assert 0 <= correct <= 15
    assert funcgrad.torch.is_grad_enabled()
