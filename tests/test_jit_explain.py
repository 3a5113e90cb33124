"""``jax_explain_cache_misses``: a WARNING with JAX's "TRACING CACHE MISS at ..." text and
the reason (new function, different input types, changed static argument, different
pytree) for each traced call, and nothing while the option is off or the cache hits."""
from __future__ import annotations

import functools
import logging

import pytest

import funcgrad
import funcgrad.numpy as fnp

LOGGER = "funcgrad.transforms.jit_explain"


@pytest.fixture
def explaining():
    funcgrad.config.update("jax_explain_cache_misses", True)
    yield
    funcgrad.config.update("jax_explain_cache_misses", False)


def _messages(caplog):
    out = [r.getMessage() for r in caplog.records if r.name == LOGGER]
    caplog.clear()
    return out


def test_each_miss_is_explained(explaining, caplog):
    caplog.set_level(logging.WARNING, logger=LOGGER)

    @functools.partial(funcgrad.jit, static_argnums=1)
    def f(x, n):
        return x * n
    f(fnp.ones(3), 2)
    (first,) = _messages(caplog)
    assert first.startswith(f"TRACING CACHE MISS at {__file__}:")
    assert "  never seen function:\n    f id=" in first and "defined at" in first
    f(fnp.ones(3), 2)
    assert _messages(caplog) == []  # a hit
    f(fnp.ones(4), 2)
    (msg,) = _messages(caplog)
    assert "  for f defined at" in msg
    assert "all previously seen cache keys differ. For the closest previous key:" in msg
    assert "different input types:\n  * at x, now f64[4] and before f64[3]" in msg
    f(fnp.ones(4), 3)
    assert "static argument n differs: now 3 and before 2" in _messages(caplog)[0]
    f([fnp.ones(4)], 3)
    assert "different input pytree:" in _messages(caplog)[0]


def test_nothing_is_logged_when_off(caplog):
    caplog.set_level(logging.WARNING, logger=LOGGER)
    funcgrad.jit(lambda x: x + 1)(fnp.ones(2))
    assert _messages(caplog) == []
