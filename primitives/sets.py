"""Set and search primitives. All are non-differentiable: they answer with positions or
truth values. `funcgrad.numpy` gathers values at those positions (``unique``'s values,
``sort_complex``...), which is what makes those functions differentiable.

| primitive        | result                                                   |
|------------------|----------------------------------------------------------|
| unique_positions | first index, inverse indices, counts of the unique values |
| isin             | element in test_elements (or not, with invert)            |
| searchsorted     | insertion points of v in the sorted 1-D a                 |
| digitize         | the bin of each x                                         |
| lexsort          | the stable sort order by several keys, the last primary   |
"""
from __future__ import annotations

from funcgrad.core import Primitive
from .kernels import sets as K

unique_positions = Primitive(
    "unique_positions", K.unique_positions, ("x",), ("axis", "equal_nan"),
    multiple_results=True, differentiable=False, dynamic_shape=True,
    doc="(first index, inverse indices, counts) of the sorted unique values of x.")
isin = Primitive("isin", K.isin, ("element", "test_elements"), ("invert",),
                 differentiable=False, doc="whether each element is in test_elements.")
searchsorted = Primitive("searchsorted", K.searchsorted, ("a", "v"), ("side",),
                         differentiable=False,
                         doc="the indices where v would be inserted to keep a sorted.")
digitize = Primitive("digitize", K.digitize, ("x", "bins"), ("right",),
                     differentiable=False, doc="the index of the bin of each x.")
lexsort = Primitive("lexsort", lambda *keys, axis: K.lexsort(keys, axis), None, ("axis",),
                    differentiable=False,
                    doc="the indirect stable sort by the keys (the last one primary).")
