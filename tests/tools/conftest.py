"""The tool tests' fixtures: the functions of fixture_code.py, wrapped by to_static."""

from __future__ import annotations

import importlib.util
from pathlib import Path
from types import ModuleType

import pytest

import laxify

FIXTURE_FILE = Path(__file__).with_name("fixture_code.py")


def load_fixture_module() -> ModuleType:
    spec = importlib.util.spec_from_file_location("laxify_tool_fixtures", FIXTURE_FILE)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


@pytest.fixture(scope="session")
def code() -> ModuleType:
    return load_fixture_module()


@pytest.fixture
def static(code):
    return lambda name: laxify.to_static(getattr(code, name))
