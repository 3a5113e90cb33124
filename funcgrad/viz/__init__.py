"""funcgrad.viz: pictures and rich reprs for exploring autodiff in notebooks.

- `draw(tape)` (also ``tape.draw()``): a functional `Tape` as a Graphviz graph
- `make_dot(output, params)`: the backward graph of `funcgrad.torch` tensors, as torchviz
  draws PyTorch's
- `html`: the ``_repr_html_`` tables of arrays, tapes, residual reports and tensors

Graphs need the ``viz`` extra (the Python ``graphviz`` package) and, to render, the
Graphviz ``dot`` program; without ``dot`` they fall back to their DOT source and say how
to install it. Both are imported only when a graph is made.
"""
from funcgrad.transforms.tape import Tape
from .tape_graph import draw
from .autograd_graph import make_dot
from .graph import INSTALL_GRAPHVIZ
from . import html

__all__ = ["draw", "make_dot", "html", "INSTALL_GRAPHVIZ"]

html.install()
Tape.draw = draw  # ``tape.draw()``: the tape knows nothing of pictures
