"""Test-input samplers of the primitive families, one module per family.

Every differentiable primitive declares ``sample=``: a function ``(prim, draw) -> [Case]``
(see `funcgrad.primitives.sampling` for the toolkit). The family-specific ones live here so
that the rule tables read without them; the registry-driven tests call them.
"""
