"""Tests of app/core: pure code, so every test here opens no database (CI's PostgreSQL pass leaves them out)."""
from __future__ import annotations

import pytest


@pytest.hookimpl(tryfirst=True)  # before -m "not database_free" deselects by marker
def pytest_collection_modifyitems(config, items):
    for item in items:
        if "/tests/core/" in str(item.fspath).replace("\\", "/"):
            item.add_marker(pytest.mark.database_free)
