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


@pytest.fixture
def garbage_cycles():
    """``garbage_cycles(fn)``: the types of the objects that running ``fn`` (after a warm-up
    call) leaves in reference cycles; [] when reference counting alone frees everything."""
    import gc

    def run(fn):
        fn()
        gc.collect()
        gc.disable()
        gc.set_debug(gc.DEBUG_SAVEALL)
        try:
            fn()
            gc.collect()
            return sorted({type(o).__name__ for o in gc.garbage})
        finally:
            gc.set_debug(0)
            gc.garbage.clear()
            gc.enable()
    return run
