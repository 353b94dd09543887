"""Compiled templates are kept in the instance folder for the next start; a cache that cannot be written is a miss."""
from __future__ import annotations

import shutil
from pathlib import Path

from app.services.folders import template_cache_folder


def test_rendered_templates_are_kept_for_the_next_start(app, client):
    folder = template_cache_folder(Path(app.instance_path))
    assert client.get("/login").status_code == 200
    assert list(folder.glob("*.cache")), "the login page's templates were compiled and not kept"


def test_a_cache_folder_that_cannot_be_written_only_costs_a_compile(app, client):
    folder = template_cache_folder(Path(app.instance_path))
    shutil.rmtree(folder)
    folder.write_text("not a folder")  # every write into it now fails
    response = client.get("/login")
    assert response.status_code == 200 and b"Sign in" in response.data
