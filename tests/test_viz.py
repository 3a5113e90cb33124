"""funcgrad.viz: graphs rendered for real by Graphviz (nodes and edges checked in the SVG),
the fallback when the `dot` program is missing, and the HTML reprs."""
import shutil
import sys
import xml.etree.ElementTree as ET

import numpy as np
import pytest

import funcgrad
import funcgrad.numpy as fnp
from funcgrad.transforms.checkpoint import Residual, ResidualReport
from funcgrad.viz import graph as viz_graph

graphviz = pytest.importorskip("graphviz", reason="the viz extra (graphviz) is not installed")
needs_dot = pytest.mark.skipif(shutil.which("dot") is None,
                               reason="the Graphviz `dot` program is not installed")
SVG = "{http://www.w3.org/2000/svg}"
COLORS = {"lightblue": ("lightblue", "#add8e6"), "green": ("#caff70", "darkolivegreen1"),
          "orange": ("orange", "#ffa500"), "salmon": ("lightsalmon", "#ffa07a")}


class Svg:
    """Nodes (title -> (texts, fill)), edges {(src, dst)} and clusters of a rendered SVG."""

    def __init__(self, text: str):
        root = ET.fromstring(text)
        self.nodes, self.edges, self.clusters = {}, set(), {}
        for g in root.iter(f"{SVG}g"):
            title = g.findtext(f"{SVG}title")
            texts = [t.text for t in g.iter(f"{SVG}text")]
            kind = g.get("class")
            if kind == "node":
                shape = next(e for e in g if e.tag in (f"{SVG}polygon", f"{SVG}ellipse"))
                self.nodes[title] = (texts, shape.get("fill"))
            elif kind == "edge":
                self.edges.add(tuple(title.split("->")))
            elif kind == "cluster":
                self.clusters[title] = texts

    def find(self, text: str) -> list[str]:
        """Titles of the nodes whose first text line is ``text``."""
        return [k for k, (texts, _) in self.nodes.items() if texts and texts[0] == text]

    def fill(self, title: str, color: str) -> bool:
        return self.nodes[title][1] in COLORS.get(color, (color,))


def render(g) -> Svg:
    return Svg(g.pipe(format="svg", encoding="utf-8"))


def loss(x):
    return fnp.sum(fnp.tanh(x) ** 2)


X = fnp.asarray([0.5, -1.0, 2.0])


# ---------------------------------------------------------------------------------------
# draw(tape)
# ---------------------------------------------------------------------------------------

@needs_dot
def test_draw_plain_tape_nodes_edges_and_labels():
    tape = funcgrad.make_tape(loss)(X)
    svg = render(tape.draw())
    assert svg.nodes["in0"][0] == ["input 0", "a:f64[3]"] and svg.fill("in0", "lightblue")
    assert svg.nodes["out0"][0] == ["output 0", "d:f64[]"] and svg.fill("out0", "green")
    tanh, = svg.find("tanh")
    power, = svg.find("power")
    reduce, = svg.find("reduce_sum")
    assert svg.nodes[tanh][0][1] == "f64[3] -> b:f64[3]"
    assert svg.nodes[reduce][0][1] == "axis=(0,) keepdims=False"
    assert {("in0", tanh), (tanh, power), (power, reduce), (reduce, "out0")} <= svg.edges
    const, = [k for k, (t, _) in svg.nodes.items() if t == ["2:i64"]]
    assert (const, power) in svg.edges
    assert not svg.clusters  # one phase: no clusters
    assert len(svg.nodes) == len(tape) + 3


@needs_dot
def test_draw_gradient_tape_separates_forward_and_backward():
    tape = funcgrad.make_tape(funcgrad.grad(loss))(X)
    svg = render(funcgrad.viz.draw(tape, show_consts=False))
    assert svg.clusters["cluster_forward"] == ["forward pass"]
    assert svg.clusters["cluster_backward"] == ["backward pass"]
    records = [k for k in svg.nodes if k.startswith("r")]
    backward = [k for k in records if svg.fill(k, "salmon")]
    assert len(records) == len(tape)
    assert len(backward) == sum(r.phase == "backward" for r in tape.records) > 0
    tanh, = svg.find("tanh")  # the backward pass reads tanh's output
    assert any(src == tanh and dst in backward for src, dst in svg.edges)
    assert any(dst == "out0" and src in backward for src, dst in svg.edges)


@needs_dot
def test_draw_checkpoint_is_a_cluster_holding_its_sub_tape():
    def f(x):
        y = funcgrad.checkpoint(lambda z: fnp.sin(fnp.cos(z)))(x * 2.0)
        return fnp.sum(fnp.tanh(y))
    svg = render(funcgrad.make_tape(f)(X).draw())
    (title, texts), = svg.clusters.items()
    assert title.startswith("cluster_sub") and texts[0].startswith("checkpoint: <lambda>")
    mul, = svg.find("mul")
    cos, = svg.find("cos")
    sin, = svg.find("sin")
    tanh, = svg.find("tanh")
    sub_in, = [k for k in svg.nodes if k.startswith("subin")]
    assert svg.nodes[sub_in][0] == ["a:f64[3]"]
    assert {(mul, sub_in), (sub_in, cos), (cos, sin), (sin, tanh)} <= svg.edges


def test_draw_source_names_variables_on_edges():
    src = funcgrad.make_tape(loss)(X).draw(edge_labels=True).source
    assert "in0 -> r1 [label=a]" in src
    src = funcgrad.make_tape(loss)(X).draw(edge_labels=False, rankdir="LR").source
    assert "label=a]" not in src and "rankdir=LR" in src


@needs_dot
def test_render_to_file_like_the_seed(tmp_path):
    path = funcgrad.make_tape(loss)(X).draw().render(tmp_path / "tape", format="png")
    with open(path, "rb") as f:
        assert f.read(8) == b"\x89PNG\r\n\x1a\n"


@needs_dot
def test_jupyter_display_is_inline_svg():
    g = funcgrad.make_tape(loss)(X).draw()
    bundle = g._repr_mimebundle_()
    assert list(bundle) == ["image/svg+xml"] and "<svg" in bundle["image/svg+xml"]
    assert g._repr_svg_() is bundle["image/svg+xml"]  # rendered once per source
    g.node("extra")
    assert "extra" in g._repr_svg_()


# ---------------------------------------------------------------------------------------
# make_dot on objects with PyTorch's autograd interface
# ---------------------------------------------------------------------------------------

class FakeTensor:
    def __init__(self, shape, grad_fn=None, requires_grad=True):
        self.shape, self.grad_fn, self.requires_grad = shape, grad_fn, requires_grad


def node(name, *nexts, **attrs):
    cls = type(name, (), {"next_functions": tuple((n, 0) for n in nexts)})
    fn = cls()
    for k, v in attrs.items():
        setattr(fn, k, v)
    return fn


def fake_graph():
    """z = (x * y).sum() with x, y leaves; MulBackward0 saved both."""
    x, y = FakeTensor((3,)), FakeTensor((3,))
    acc_x, acc_y = node("AccumulateGrad", variable=x), node("AccumulateGrad", variable=y)
    mul = node("MulBackward0", acc_x, acc_y, _saved_self=x, _saved_other=y)
    total = node("SumBackward0", mul, None, _saved_self_sym_sizes=(3,))
    return x, y, mul, total, FakeTensor((), grad_fn=total)


@needs_dot
def test_make_dot_follows_torchviz_conventions():
    x, y, mul, total, z = fake_graph()
    svg = render(funcgrad.viz.make_dot(z, params={"x": x, "y": y}))
    assert svg.nodes[str(id(x))][0] == ["x", " (3)"] and svg.fill(str(id(x)), "lightblue")
    assert svg.nodes[str(id(y))][0] == ["y", " (3)"]
    assert svg.nodes[str(id(z))][0] == [" ()"] and svg.fill(str(id(z)), "green")
    assert svg.nodes[str(id(mul))][0] == ["MulBackward0"]
    assert svg.fill(str(id(mul)), "lightgrey")
    acc = [str(id(u)) for u, _ in mul.next_functions]
    assert all(svg.nodes[a][0] == ["AccumulateGrad"] for a in acc)
    i = str
    assert {(i(id(x)), acc[0]), (i(id(y)), acc[1]), (acc[0], i(id(mul))),
            (i(id(mul)), i(id(total))), (i(id(total)), i(id(z)))} <= svg.edges
    assert len(svg.nodes) == 7


@needs_dot
def test_make_dot_show_saved_and_show_attrs():
    x, y, mul, total, z = fake_graph()
    svg = render(funcgrad.viz.make_dot(z, show_saved=True, show_attrs=True))
    # saved leaves are the same objects as the leaves: drawn once, as leaves
    assert svg.fill(str(id(x)), "lightblue")
    assert svg.nodes[str(id(total))][0] == ["SumBackward0", "--------------------",
                                            "self_sym_sizes: (3,)"]
    assert svg.nodes[str(id(mul))][0][2:] == ["other: [saved tensor]",
                                              "self : [saved tensor]"]
    saved = FakeTensor((2, 2))
    fn = node("ExpBackward0", _saved_result=saved)
    svg = render(funcgrad.viz.make_dot(FakeTensor((2, 2), grad_fn=fn), show_saved=True))
    node_id = f"saved{id(fn)}_0"
    assert svg.nodes[node_id][0] == ["result", " (2, 2)"]
    assert svg.fill(node_id, "orange") and (str(id(fn)), node_id) in svg.edges


def test_make_dot_custom_function_saved_tensors_and_multiple_outputs():
    saved = FakeTensor((4,))
    fn = node("MyFunctionBackward", saved_tensors=(saved,))
    a, b = FakeTensor((4,), grad_fn=fn), FakeTensor((4,), grad_fn=fn)
    src = funcgrad.viz.make_dot((a, b)).source
    assert src.count("MyFunctionBackward") == 1
    assert f"ctx{id(fn)}_0 -> {id(fn)} [dir=none]" in src and "fillcolor=orange" in src
    assert f"{id(fn)} -> {id(a)}" in src and f"{id(fn)} -> {id(b)}" in src


@needs_dot
def test_make_dot_on_facade_tensors_the_seed_example(tmp_path):
    import funcgrad.torch as torch
    x = torch.tensor([1., 2.], requires_grad=True)
    z = (x * x).sum()
    dot = funcgrad.viz.make_dot(z, params={"x": x})
    with open(dot.render(tmp_path / "computational_graph", format="png"), "rb") as f:
        assert f.read(4) == b"\x89PNG"
    svg = render(dot)
    mul = z.grad_fn.next_functions[0][0]
    acc = mul.next_functions[0][0]
    assert svg.nodes[str(id(x))][0] == ["x", " (2)"] and svg.fill(str(id(x)), "lightblue")
    assert svg.nodes[str(id(z.grad_fn))][0] == ["SumBackward0"]
    assert svg.nodes[str(id(mul))][0] == ["MulBackward0"]
    assert svg.nodes[str(id(acc))][0] == ["AccumulateGrad"]
    assert {(str(id(x)), str(id(acc))), (str(id(acc)), str(id(mul))),
            (str(id(mul)), str(id(z.grad_fn))), (str(id(z.grad_fn)), str(id(z)))} <= svg.edges
    saved = render(funcgrad.viz.make_dot(x.exp().sum(), show_saved=True))
    assert [t for t, fill in saved.nodes.values() if fill in COLORS["orange"]] == [
        ["result", " (2)"]]


def test_make_dot_on_a_facade_custom_function_before_and_after_backward():
    import funcgrad.torch as torch

    class Exp(torch.autograd.Function):
        @staticmethod
        def forward(ctx, i):
            out = i.exp()
            ctx.save_for_backward(out)
            return out

        @staticmethod
        def backward(ctx, g):
            out, = ctx.saved_tensors
            return g * out
    x = torch.tensor([1., 2.], requires_grad=True)
    y = Exp.apply(x).sum()
    before = funcgrad.viz.make_dot(y, params={"x": x}, show_saved=True).source
    assert "ExpBackward" in before and before.count("fillcolor=orange") == 1
    y.backward()
    after = funcgrad.viz.make_dot(y, params={"x": x}, show_saved=True).source
    assert "ExpBackward" in after and "fillcolor=orange" not in after  # freed


# ---------------------------------------------------------------------------------------
# Without Graphviz
# ---------------------------------------------------------------------------------------

def test_missing_dot_returns_source_and_says_how_to_install(monkeypatch, tmp_path, capsys):
    monkeypatch.setenv("PATH", str(tmp_path))  # no `dot` anywhere
    g = funcgrad.make_tape(loss)(X).draw()
    out = g.render(tmp_path / "tape", format="png")
    assert out == g.source and out.startswith("digraph")
    err = capsys.readouterr().err
    assert "apt-get install graphviz" in err and "brew install graphviz" in err
    assert g.pipe(format="svg") == g.source.encode()
    assert g.pipe(format="svg", encoding="utf-8") == g.source
    assert g._repr_svg_() is None
    text = g._repr_mimebundle_()["text/plain"]
    assert "conda install" in text and g.source in text


def test_missing_graphviz_package_names_the_extra(monkeypatch):
    viz_graph._graph_class.cache_clear()
    monkeypatch.setitem(sys.modules, "graphviz", None)
    try:
        with pytest.raises(ImportError, match=r"funcgrad\[viz\]"):
            funcgrad.make_tape(loss)(X).draw()
    finally:
        viz_graph._graph_class.cache_clear()


# ---------------------------------------------------------------------------------------
# HTML reprs
# ---------------------------------------------------------------------------------------

def test_array_html_shows_shape_dtype_device_and_a_few_values():
    h = fnp.arange(1000, dtype=np.float32)._repr_html_()
    assert "<td>(1000,)</td><td>float32</td><td>cpu</td>" in h
    assert "[  0.,   1.,   2., ..., 997., 998., 999.]" in h
    assert fnp.asarray(3.5)._repr_html_().count("3.5") == 1
    assert "&lt;" not in fnp.asarray([1.0])._repr_html_()

    seen = []

    def f(x):
        seen.append(x._repr_html_())
        return fnp.sum(x)
    funcgrad.grad(f)(X)
    assert "traced" in seen[0] and "0.5" in seen[0]


def test_tape_html_has_one_row_per_record():
    def f(x):
        return funcgrad.checkpoint(lambda z: fnp.sin(fnp.sin(z)))(x)
    tape = funcgrad.make_tape(funcgrad.grad(lambda x: fnp.sum(f(x) ** 2)))(X)
    h = tape._repr_html_()
    assert h.count("<tr style=") == len(tape)
    assert h.count("<td>backward</td>") == sum(r.phase == "backward" for r in tape.records)
    assert "background:#fdf0e8" in h and "&lt;lambda&gt;" in h
    sub = funcgrad.make_tape(f)(X)._repr_html_()
    assert sub.count("<tr style=") == 3 and sub.count("&nbsp;" * 4 + "<b>sin</b>") == 2


def test_facade_tensor_html():
    import funcgrad.torch as torch
    x = torch.tensor([1., 2.], requires_grad=True)
    h = (x * 2)._repr_html_()
    assert "<td>(2,)</td><td>torch.float32</td><td>cpu</td><td>True</td><td>MulBackward0" in h
    assert "[2., 4.]" in h and "leaf (AccumulateGrad)" in x._repr_html_()
    assert "<td>False</td><td>-</td>" in torch.arange(3)._repr_html_()


def test_residual_report_is_a_list_with_text_and_html_tables(capsys):
    def f(x):
        return fnp.sum(fnp.tanh(x) * fnp.sin(x))
    report = funcgrad.saved_residuals(f, X)
    assert isinstance(report, ResidualReport) and isinstance(report, list)
    assert all(isinstance(r, Residual) for r in report)
    assert report.nbytes == sum(r.nbytes for r in report) == 24 * len(report)
    funcgrad.print_saved_residuals(f, X)
    printed = capsys.readouterr().out.strip()
    assert printed == str(report) and printed.endswith(f"{len(report)} residuals, "
                                                       f"{report.nbytes:,} bytes")
    h = report._repr_html_()
    assert h.count("<tr style=") == len(report) and "test_viz.py:" in h
    assert f"{len(report)} residuals" in h
