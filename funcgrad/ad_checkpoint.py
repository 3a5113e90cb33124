"""JAX's ``jax.ad_checkpoint`` names: rematerialisation (`checkpoint`, alias `remat`), its
policies, `checkpoint_name` to tag values a policy can keep by name, and
`print_saved_residuals` to see what a differentiated function keeps for its backward pass.
They are funcgrad's own (`funcgrad.transforms.checkpoint`); this module gives them the path
JAX's documentation imports them from (``from jax.ad_checkpoint import checkpoint_name``).
"""
from funcgrad.transforms import (checkpoint, checkpoint_name, checkpoint_policies,
                                 print_saved_residuals, remat, saved_residuals)

__all__ = ["checkpoint", "remat", "checkpoint_name", "checkpoint_policies",
           "print_saved_residuals", "saved_residuals"]
