"""funcgrad.nn and example_libraries tests: ``random`` is funcgrad.random, or a stand-in
until that package is merged (see random_standin.py)."""
import importlib.util
import pathlib

import pytest


def _standin():
    path = pathlib.Path(__file__).with_name("random_standin.py")
    spec = importlib.util.spec_from_file_location("funcgrad_tests_random_standin", path)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


@pytest.fixture(scope="session")
def random():
    return _standin().install()
