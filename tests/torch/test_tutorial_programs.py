"""What broke when PyTorch's tutorials (pytorch/tutorials: beginner_source, intermediate_source,
recipes_source) ran with ``import torch`` served by funcgrad.torch: each test is a short
snippet of our own using the API the way the tutorial does, compared with PyTorch where it
is installed (the `aliasing` fixture: facts compared one by one)."""
import math

import numpy as np
import pytest

import funcgrad.torch as ft


# -- introyt/tensors_deeper_tutorial: in-place view ops ---------------------------------------

def test_unsqueeze_in_place_batches_a_tensor(aliasing):
    def program(T):
        batch = T.arange(6.).view(2, 3)
        out = batch.unsqueeze_(0)
        return {"same": out is batch, "shape": tuple(batch.shape), "values": batch,
                "version": batch._version, "stride": batch.stride()}
    aliasing.same(program)


def test_in_place_view_ops_record_their_in_place_nodes(aliasing):
    def program(T):
        w = T.arange(6., requires_grad=True)
        d = (w * 1).view(2, 3)
        facts = {}
        for step, call in [("t_", lambda: d.t_()), ("transpose_", lambda: d.transpose_(0, 1)),
                           ("unsqueeze_", lambda: d.unsqueeze_(0)),
                           ("squeeze_dim", lambda: d.squeeze_(0)),
                           ("unsqueeze_2", lambda: d.unsqueeze_(2)),
                           ("squeeze_all", lambda: d.squeeze_()),
                           ("unsqueeze_3", lambda: d.unsqueeze_(0).unsqueeze_(-1)),
                           ("squeeze_dims", lambda: d.squeeze_((0, 3))),
                           ("swapdims_", lambda: d.swapdims_(0, 1))]:
            call()
            facts[step] = (type(d.grad_fn).__name__, tuple(d.shape), d._version)
        (d * T.arange(6.).view(3, 2)).sum().backward()
        facts["grad"] = w.grad
        return facts
    aliasing.same(program)


def test_in_place_view_ops_refuse_a_leaf_and_keep_views_views(aliasing):
    def program(T):
        leaf = T.ones(2, 3, requires_grad=True)
        base = T.zeros(2, 3)
        row = base[0]
        row.unsqueeze_(0)
        row.fill_(5.)
        grown = T.zeros(2, 3, requires_grad=True).clone()
        part = grown[1]
        part.unsqueeze_(0)
        part.mul_(2)
        return {"leaf": lambda: leaf.unsqueeze_(0), "leaf_shape": tuple(leaf.shape),
                "base": base, "is_view": row._base is base, "row": tuple(row.shape),
                "part_fn": type(part.grad_fn).__name__,
                "grown_fn": lambda: type(grown.grad_fn).__name__,
                "range": lambda: T.zeros(2, 3).transpose_(0, 5),
                "t_3d": lambda: T.zeros(2, 3, 4).t_()}
    aliasing.same(program)


# -- introyt/modelsyt_tutorial: ``import torch.functional as F`` ----------------------------

def test_torch_functional_is_a_module_naming_the_torch_functions():
    import funcgrad.torch.functional as F
    assert F.einsum is ft.einsum and F.meshgrid is ft.meshgrid and F.norm is ft.norm
    assert ft.functional is F
    assert set(F.__all__) <= set(dir(F))


# -- introyt/autogradyt_tutorial: sin(linspace(0, 2 pi, 25)) near zero ----------------------

@pytest.mark.parametrize("dtype", ["float32", "float64", "float16", "bfloat16", "int64",
                                   "int32"])
@pytest.mark.parametrize("start,end,steps", [(0., 2 * math.pi, 25), (-math.pi, math.pi, 2000),
                                             (-3, 5, 100), (0.1, 0.7, 33), (10, 0, 5),
                                             (3, 4, 1), (1, 2, 0), (-7.3, 11.1, 1001)])
def test_linspace_values_are_pytorchs_to_the_bit(aliasing, dtype, start, end, steps):
    def program(T):
        return {"values": T.linspace(start, end, steps, dtype=getattr(T, dtype)).double()}
    aliasing.same(program)


def test_linspace_refuses_negative_steps_and_keeps_requires_grad(aliasing):
    def program(T):
        a = T.linspace(0., 2. * math.pi, steps=25, requires_grad=True)
        return {"sin": T.sin(a), "leaf": a.is_leaf, "negative": lambda: T.linspace(0, 1, -1)}
    aliasing.same(program, rtol=1e-6)  # (sin itself may differ in the last place)


# -- recipes/reasoning_about_shapes: a convolution of a meta input larger than memory -------

def test_meta_convolution_of_a_huge_input_costs_only_its_shape(aliasing):
    def program(T):
        conv = T.nn.Conv2d(3, 5, 2, device="meta")
        huge = T.rand(2 ** 10, 3, 2 ** 16, 2 ** 16, device="meta")
        out = conv(huge)
        act = T.relu(out) * 2 + 1
        return {"shape": tuple(out.shape), "device": str(out.device),
                "node": type(out.grad_fn).__name__, "act": (tuple(act.shape), str(act.dtype)),
                "strided": tuple(T.nn.functional.conv2d(
                    T.empty(1, 4, 2 ** 17, 9, device="meta"),
                    T.empty(6, 2, 3, 3, device="meta"), stride=(4, 2), padding=1,
                    groups=2).shape)}
    aliasing.same(program)


def test_meta_elementwise_ops_keep_eager_dtypes_and_errors():
    import funcgrad
    import funcgrad.numpy as fnp
    big = funcgrad.device_put(fnp.zeros((3,)), "meta")
    huge = fnp.broadcast_to(big, (2 ** 20, 2 ** 20, 3))
    out = fnp.exp(huge) + fnp.arange(3, dtype="int32")
    assert out.shape == (2 ** 20, 2 ** 20, 3) and out.dtype == np.float32 or \
        out.dtype == fnp.zeros(1).dtype
    assert (huge > 0).dtype == np.bool_
    with pytest.raises(ValueError, match="could not be broadcast"):
        huge + fnp.zeros((2,))


# -- recipes/swap_tensors: torch.utils.swap_tensors and torch.__future__ --------------------

def test_swap_tensors_exchanges_contents_class_and_attributes(aliasing):
    def program(T):
        t1, t2 = T.arange(2), T.arange(3.)
        T.utils.swap_tensors(t1, t2)
        p, q = T.nn.Parameter(T.ones(2)), T.zeros(3)
        T.utils.swap_tensors(p, q)
        x, z = T.ones(2), T.zeros(2)
        x.tag = "x"
        T.utils.swap_tensors(x, z)
        a, b = T.ones(2, requires_grad=True), T.zeros(3, requires_grad=True)
        y = (a * 2).sum()
        T.utils.swap_tensors(a, b)
        return {"t1": t1, "t2": t2, "dtypes": (str(t1.dtype), str(t2.dtype)),
                "classes": (type(p).__name__, type(q).__name__), "p": p, "q": q,
                "tag": (getattr(z, "tag", None), getattr(x, "tag", None)),
                "poisoned": lambda: y.backward(), "grads": lambda: (a.grad, b.grad),
                "fresh": lambda: ((a * 3).sum().backward(), a.grad)[1]}
    aliasing.same(program)


@pytest.mark.parametrize("switch", ["default", "swap", "overwrite"])
def test_module_conversion_follows_the_future_switches(aliasing, switch):
    def program(T):
        setter = {"swap": T.__future__.set_swap_module_params_on_conversion,
                  "overwrite": T.__future__.set_overwrite_module_params_on_conversion}.get(switch)
        m = T.nn.Linear(3, 2)
        opt = T.optim.SGD(m.parameters(), lr=0.5)
        m(T.ones(1, 3)).sum().backward()
        w = m.weight
        if setter:
            setter(True)
        try:
            m.double()
        finally:
            if setter:
                setter(False)
        facts = {"same": w is m.weight, "w": str(w.dtype), "m": str(m.weight.dtype),
                 "grad": str(m.weight.grad.dtype), "opt": str(opt.param_groups[0]["params"][0].dtype),
                 "leaf": (m.weight.is_leaf, m.weight.requires_grad, type(m.weight).__name__)}
        m.bfloat16()
        facts["bf16"] = (str(m.weight.dtype), str(m.bias.dtype))
        return facts
    aliasing.same(program)


def test_module_buffer_and_submodule_lookups(aliasing):
    def program(T):
        m = T.nn.Sequential(T.nn.Linear(1, 1), T.nn.BatchNorm1d(2))
        m.set_submodule("0", T.nn.ReLU())
        return {"buffer": m.get_buffer("1.running_mean"),
                "not_buffer": lambda: m.get_buffer("1.weight"),
                "missing": lambda: m.get_buffer("1.nope"),
                "not_param": lambda: m.get_parameter("1.running_var"),
                "path": lambda: m.get_submodule("1.x"), "replaced": repr(m[0]),
                "type": str(m.type(T.float64)[1].weight.dtype), "shared": m.share_memory() is m}
    aliasing.same(program)


# -- module backward hooks (visualizing_gradients' alternative; nn docs) -------------------

def test_full_backward_hooks_see_and_replace_gradients(aliasing):
    def program(T):
        log = []
        lin = T.nn.Linear(3, 2)
        with T.no_grad():
            lin.weight.copy_(T.arange(6.).view(2, 3) / 10)
            lin.bias.fill_(0.5)

        def full(m, gi, go):
            log.append(("full", type(m).__name__, [None if g is None else g.tolist()
                                                   for g in gi], [g.tolist() for g in go]))

        def pre(m, go):
            log.append(("pre", [g.tolist() for g in go]))
            return (go[0] * 2,)
        h1 = lin.register_full_backward_hook(full)
        h2 = lin.register_full_backward_pre_hook(pre)
        x = T.ones(4, 3, requires_grad=True)
        y = lin(x)
        node = type(y.grad_fn).__name__
        y.sum().backward()
        facts = {"node": node, "log": list(log), "x_grad": x.grad, "b_grad": lin.bias.grad}
        log.clear()
        lin.zero_grad()
        import warnings
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always")
            lin(T.ones(4, 3)).sum().backward()
        facts.update(no_input=list(log), warned=["no inputs require gradients" in str(w.message)
                                                  for w in caught])
        h1.remove()
        h2.remove()
        log.clear()
        lin(x).sum().backward()
        facts["removed"] = list(log)
        seq = T.nn.Sequential(T.nn.Linear(3, 3), T.nn.ReLU(), T.nn.Linear(3, 1))
        seq[1].register_full_backward_hook(lambda m, gi, go: (gi[0] * 0,))
        x2 = T.ones(2, 3, requires_grad=True)
        seq(x2).sum().backward()
        facts.update(zeroed=x2.grad, upstream=seq[0].bias.grad)
        return facts
    aliasing.same(program, rtol=1e-6)


def test_custom_function_nodes_print_as_python_classes(aliasing):
    def program(T):
        class Cube(T.autograd.Function):
            @staticmethod
            def forward(ctx, x):
                ctx.save_for_backward(x)
                return x ** 3

            @staticmethod
            def backward(ctx, g):
                x, = ctx.saved_tensors
                return g * 3 * x ** 2
        y = Cube.apply(T.tensor(2., requires_grad=True))
        text = repr(y.grad_fn)
        return {"repr": text[:text.index(" at 0x")], "name": y.grad_fn.name(),
                "tensor": str(y)}
    aliasing.same(program)


def test_data_parallel_without_gpus_calls_the_module(aliasing):
    def program(T):
        inner = T.nn.Linear(2, 1)
        net = T.nn.DataParallel(inner)
        out = net(T.ones(3, 2))
        out.sum().backward()
        return {"module": net.module is inner, "ids": net.device_ids,
                "out": tuple(out.shape), "grad": inner.bias.grad,
                "keys": list(net.state_dict()), "repr": repr(net).splitlines()[0]}
    aliasing.same(program)


# -- Tensor methods the tutorials call that were missing -------------------------------------

def test_small_tensor_methods(aliasing):
    def program(T):
        x = T.tensor([1.0, 2.5, -3.0])
        y = x + 1e-7
        return {"byte": x.byte(), "char": str(x.char().dtype), "short": str(x.short().dtype),
                "allclose": x.allclose(y), "isclose": x.isclose(y, atol=0, rtol=1e-9),
                "is_cpu": x.is_cpu, "itemsize": x.double().itemsize, "nbytes": x.nbytes,
                "device": x.get_device()}
    aliasing.same(program)
