"""The Graphviz graph that `draw` and `make_dot` return, and what happens without Graphviz.

A `graphviz.Digraph` renders by running the Graphviz ``dot`` program. When that program is
missing, rendering here does not raise: ``render``/``pipe`` print how to install Graphviz
and return the DOT source, and in Jupyter the graph shows as its DOT source with that
message. With ``dot`` present, Jupyter shows the graph as inline SVG.

The Python ``graphviz`` package is optional (the ``viz`` extra); it is imported on first
use, with an error saying how to install it.
"""
from __future__ import annotations

import functools
import sys
from typing import Any

__all__ = ["new_graph", "label", "INSTALL_GRAPHVIZ"]

INSTALL_GRAPHVIZ = (
    "Graphviz's `dot` program was not found on PATH, so this graph cannot be rendered; "
    "its DOT source is returned instead. Install Graphviz to see the picture: "
    "`apt-get install graphviz` (Debian/Ubuntu), `brew install graphviz` (macOS), "
    "`conda install -c conda-forge graphviz`, or https://graphviz.org/download/ (Windows).")

_INSTALL_PACKAGE = (
    "drawing graphs needs the Python package `graphviz`: pip install 'funcgrad[viz]' "
    "(or pip install graphviz), plus the Graphviz program itself (apt-get install graphviz, "
    "brew install graphviz, or conda install -c conda-forge graphviz).")


def _graphviz() -> Any:
    try:
        import graphviz  # optional: the `viz` extra
    except ImportError:
        raise ImportError(_INSTALL_PACKAGE) from None
    return graphviz


@functools.lru_cache(maxsize=None)
def _graph_class() -> type:
    graphviz = _graphviz()
    missing = graphviz.ExecutableNotFound

    class Graph(graphviz.Digraph):
        """A `graphviz.Digraph` that degrades to its DOT source when ``dot`` is missing
        and renders once per source for Jupyter's inline SVG."""

        def render(self, *args: Any, **kwargs: Any) -> str:
            try:
                return super().render(*args, **kwargs)
            except missing:
                print(INSTALL_GRAPHVIZ, file=sys.stderr)
                return self.source

        def pipe(self, *args: Any, **kwargs: Any) -> Any:
            try:
                return super().pipe(*args, **kwargs)
            except missing:
                print(INSTALL_GRAPHVIZ, file=sys.stderr)
                source = self.source
                return source if kwargs.get("encoding") else source.encode(self.encoding)

        def __repr__(self) -> str:
            return (f"<funcgrad.viz Graph {self.name!r}: {len(self.body)} DOT statements; "
                    ".source is the DOT text, .render(...) draws it>")

        def svg(self) -> str | None:
            """The rendered SVG text, or None when ``dot`` is missing (cached per source)."""
            source = self.source
            cached = getattr(self, "_svg_cache", None)
            if cached is None or cached[0] != source:
                try:
                    svg = super().pipe(format="svg", encoding="utf-8")
                except missing:
                    svg = None
                cached = self._svg_cache = (source, svg)
            return cached[1]

        def _repr_svg_(self) -> str | None:
            return self.svg()

        def _repr_mimebundle_(self, include: Any = None, exclude: Any = None,
                              **kwargs: Any) -> dict:
            svg = self.svg()
            if svg is None:
                return {"text/plain": f"{INSTALL_GRAPHVIZ}\n\n{self.source}"}
            return {"image/svg+xml": svg}

    Graph.__module__, Graph.__qualname__ = __name__, "Graph"
    return Graph


def new_graph(name: str, *, graph_attr: dict | None = None, node_attr: dict | None = None,
              edge_attr: dict | None = None) -> Any:
    """An empty `Graph` (a `graphviz.Digraph` subclass) called ``name``."""
    return _graph_class()(name=name, graph_attr=graph_attr, node_attr=node_attr,
                          edge_attr=edge_attr)


def label(text: str) -> str:
    """``text`` as a node label: backslashes and ``<...>`` literal, newlines as line breaks."""
    return _graphviz().escape(text)
