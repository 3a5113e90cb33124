"""Test-input samplers of the random family (`funcgrad.primitives.random`)."""
from __future__ import annotations

from typing import Any

import numpy as np

from .. import sampling


def _gamma_quantile_cases(rng: np.random.RandomState, draw: Any) -> list:
    """The gamma quantile at shapes a in (0.6, 4) and probabilities u in (0.1, 0.9), in
    both forms, from a guess (a itself, or its log) that Newton's method has to leave."""
    # imported here: primitives.random imports this module to declare the sampler
    from ..random import random_gamma_quantile as quantile
    shape = sampling.draw_shape(draw)
    a = sampling.values(rng, shape, (0.6, 4.0))
    u = sampling.values(rng, shape, (0.1, 0.9))
    guess = np.array(a)
    return [sampling.Case(lambda a, u: quantile(a, u, guess, log_space=False), (a, u),
                          f"x {shape}"),
            sampling.Case(lambda a, u: quantile(a, u, np.log(guess), log_space=True),
                          (a, u), f"log x {shape}")]


gamma_quantile_cases = sampling.custom(_gamma_quantile_cases)
