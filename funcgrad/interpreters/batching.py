"""``jax.interpreters.batching``'s names: ``primitive_batchers[p] = rule`` with
``rule(args, dims, **params) -> (out, out_dim)``, which is funcgrad's batching rule
(`funcgrad.core.Primitive.defbatch`) as it is; ``not_mapped`` is its unbatched axis."""
from __future__ import annotations

from funcgrad.interpreters._table import RuleTable

__all__ = ["primitive_batchers", "not_mapped"]

not_mapped = None

primitive_batchers = RuleTable("batching rules", lambda p: p.batch_rule,
                               lambda p, rule: p.defbatch(rule))
