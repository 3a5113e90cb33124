"""`draw(tape)`: a functional `Tape` as a Graphviz picture.

One box per record (primitive, params, input shapes and output variables), light-blue
inputs, green outputs, small notes for constants, edges labelled with the variable that
flows along them. A checkpoint record is a dashed cluster holding its sub-tape (its inputs,
its records); a gradient tape puts the forward and the backward pass in two clusters of
different colours. Display it in Jupyter, or ``.render(format="svg")`` it.
"""
from __future__ import annotations

from typing import Any

from funcgrad.transforms.tape import Record, Tape
from funcgrad.transforms.tape_text import const_text, param_text, short_dtype, tape_var, var_name
from .graph import label, new_graph

__all__ = ["draw"]

# Fill colours: inputs, forward records, backward records, outputs, constants
INPUT, FORWARD, BACKWARD, OUTPUT, CONST = (
    "lightblue", "lightgrey", "lightsalmon", "darkolivegreen1", "white")
PHASES = {"forward": ("forward pass", "#f7f7f7"), "backward": ("backward pass", "#fdf0e8")}


def draw(tape: Tape, *, show_consts: bool = True, edge_labels: bool = True,
         rankdir: str = "TB") -> Any:
    """A `graphviz.Digraph` of ``tape`` (also ``tape.draw()``).

    ``show_consts``: draw constant inputs as small notes; ``edge_labels``: name the
    variable on each edge; ``rankdir``: "TB" (top to bottom) or "LR"."""
    graph = new_graph(tape.name, graph_attr={"rankdir": rankdir},
                      node_attr={"shape": "box", "style": "filled", "fontsize": "10",
                                 "fontname": "monospace", "height": "0.2"},
                      edge_attr={"fontsize": "9", "fontname": "monospace"})
    _Drawer(graph, show_consts, edge_labels).top(tape)
    return graph


def _shape(aval: tuple) -> str:
    shape, dtype = aval[:2]  # (shape, dtype), a layout token after them for some records
    return f"{short_dtype(dtype)}{list(shape)}".replace(" ", "")


class _Drawer:
    """Walks a tape (and its sub-tapes) adding nodes to subgraphs and edges to the graph."""

    def __init__(self, graph: Any, show_consts: bool, edge_labels: bool):
        self.graph = graph
        self.show_consts = show_consts
        self.edge_labels = edge_labels
        self.count = 0

    def fresh(self, kind: str) -> str:
        self.count += 1
        return f"{kind}{self.count}"

    def edge(self, src: str, dst: str, name: str) -> None:
        self.graph.edge(src, dst, label=label(name) if self.edge_labels else None)

    def const(self, where: Any, value: Any, dst: str, tape: Tape) -> None:
        if self.show_consts and value is not None:
            node = self.fresh("const")
            where.node(node, label(const_text(value)), fillcolor=CONST, shape="note",
                       fontsize="8", height="0.1")
            self.graph.edge(node, dst, style="dashed", arrowsize="0.5")

    # -- the top-level tape: inputs, records by phase, outputs -----------------------------
    def top(self, tape: Tape) -> None:
        producer: dict[int, str] = {}
        for i, v in enumerate(tape.in_vars):
            node = producer[v] = f"in{i}"
            self.graph.node(node, label(f"input {i}\n{tape_var(tape, v)}"), fillcolor=INPUT,
                            shape="ellipse")
        phases = {rec.phase for rec in tape.records}
        if len(phases) > 1:
            clusters = {p: self.graph.__class__(name=f"cluster_{p}", graph_attr={
                "label": PHASES[p][0], "style": "filled", "color": PHASES[p][1],
                "fontname": "monospace"}) for p in PHASES}
            for rec in tape.records:
                self.record(clusters[rec.phase], tape, rec, producer)
            for p in PHASES:
                self.graph.subgraph(clusters[p])
        else:
            for rec in tape.records:
                self.record(self.graph, tape, rec, producer)
        for i, (v, c) in enumerate(zip(tape.out_vars, tape.out_consts)):
            node = f"out{i}"
            text = tape_var(tape, v) if v >= 0 else const_text(c)
            self.graph.node(node, label(f"output {i}\n{text}"), fillcolor=OUTPUT,
                            shape="ellipse")
            if v >= 0 and v in producer:
                self.edge(producer[v], node, var_name(v))

    # -- one record: a box, or a cluster for a record holding a sub-tape --------------------
    def record(self, where: Any, tape: Tape, rec: Record, producer: dict) -> None:
        if rec.sub is not None:
            self.sub_tape(where, tape, rec, producer)
            return
        node = self.fresh("r")
        params = " ".join(f"{k}={param_text(p)}" for k, p in rec.params.items())
        ins = " ".join(_shape(a) for a in rec.in_avals)
        outs = " ".join(tape_var(tape, v) if v >= 0 else "_" for v in rec.out_vars)
        text = "\n".join(s for s in (rec.prim.name, params, f"{ins} -> {outs}") if s)
        where.node(node, label(text),
                   fillcolor=BACKWARD if rec.phase == "backward" else FORWARD)
        self.inputs(where, tape, rec, [node] * len(rec.in_vars), producer)
        for v in rec.out_vars:
            if v >= 0:
                producer[v] = node

    def inputs(self, where: Any, tape: Tape, rec: Record, targets: list, producer: dict
               ) -> None:
        """Edges into ``targets`` (one node per input, None to skip) from each input's
        producer, or a constant note."""
        for i, (v, dst) in enumerate(zip(rec.in_vars, targets)):
            if dst is None:
                continue
            if v >= 0:
                if v in producer:
                    self.edge(producer[v], dst, var_name(v))
            else:
                self.const(where, rec.saved[i], dst, tape)

    def sub_tape(self, where: Any, tape: Tape, rec: Record, producer: dict) -> None:
        sub = rec.sub
        call = rec.params.get("call")
        title = f"{rec.prim.name}: {call!r}" if call is not None else rec.prim.name
        cluster = self.graph.__class__(name=self.fresh("cluster_sub"), graph_attr={
            "label": title, "style": "dashed,filled", "color": "grey40",
            "fillcolor": "lightyellow", "fontname": "monospace", "fontsize": "10"})
        # which sub-tape variable each of the record's inputs becomes
        sub_vars = list(getattr(call, "in_vars", ()))
        if len(sub_vars) != len(rec.in_vars):
            it = iter(sub.in_vars)
            sub_vars = [next(it, -1) if v >= 0 else -1 for v in rec.in_vars]
        inner: dict[int, str] = {}
        targets = []
        for sv in sub_vars:
            if sv < 0:
                targets.append(None)
                continue
            node = inner[sv] = self.fresh("subin")
            cluster.node(node, label(tape_var(sub, sv)), fillcolor=INPUT, shape="ellipse",
                         fontsize="9")
            targets.append(node)
        self.inputs(where, tape, rec, targets, producer)
        for r in sub.records:
            self.record(cluster, sub, r, inner)
        for v, sv in zip(rec.out_vars, sub.out_vars):
            if v >= 0 and sv in inner:
                producer[v] = inner[sv]
        where.subgraph(cluster)
