"""Fixtures of the DAL tests: one local test web per module and a recording sleep."""
from __future__ import annotations

import pytest

from ragbench.dal.testweb import TestWeb

from .helpers import Sleeps


@pytest.fixture(scope="module")
def web():
    with TestWeb(slow_seconds=1.0) as w:
        yield w


@pytest.fixture
def sleeps() -> Sleeps:
    return Sleeps()
