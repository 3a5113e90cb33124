"""Shared test configuration: hypothesis profiles and the GPU marker."""
import os

import pytest
from hypothesis import HealthCheck, settings

settings.register_profile(
    "ci", max_examples=8, deadline=None, derandomize=True,
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large])
settings.register_profile(
    "dev", max_examples=25, deadline=None,
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large])
settings.load_profile(os.environ.get("FUNCGRAD_HYPOTHESIS_PROFILE", "ci"))


def pytest_collection_modifyitems(config, items):
    from funcgrad.backend import cupy_available
    if cupy_available():
        return
    skip = pytest.mark.skip(reason="needs cupy and a visible GPU")
    for item in items:
        if "gpu" in item.keywords:
            item.add_marker(skip)
