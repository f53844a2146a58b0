"""Fixtures of the distributed tests (redis_server lives in tests/python/conftest.py)."""
import uuid

import pytest


@pytest.fixture
def run_id():
    return str(uuid.uuid4()) + "/"
