"""``torch.random``: the default generator's seeding and state, and ``fork_rng``."""
from __future__ import annotations

import contextlib
from typing import Any, Iterator

from funcgrad.torch._factories import (Generator, default_generator, get_rng_state,
                                       initial_seed, manual_seed, seed, set_rng_state)

__all__ = ["Generator", "default_generator", "get_rng_state", "set_rng_state",
           "initial_seed", "manual_seed", "seed", "fork_rng"]


@contextlib.contextmanager
def fork_rng(devices: Any = None, enabled: bool = True, _caller: str = "fork_rng",
             _devices_kw: str = "devices", device_type: str = "cuda") -> Iterator[None]:
    """Run the block with the default generator's state restored afterwards."""
    if not enabled:
        yield
        return
    state = get_rng_state()
    try:
        yield
    finally:
        set_rng_state(state)
