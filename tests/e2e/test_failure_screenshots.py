"""A failing browser test leaves a full-page screenshot next to its report, for every page it opened."""
from __future__ import annotations

import struct
import subprocess
import sys
import textwrap

import pytest

from tests.conftest import REPO_ROOT
from tests.e2e.conftest import ARTIFACTS

pytestmark = pytest.mark.e2e

FAILING = textwrap.dedent('''
    import pytest

    pytestmark = pytest.mark.e2e


    def test_with_the_page_fixture(page):
        page.set_content("<h1>tall</h1>" + "<p>line</p>" * 300)
        assert page.title() == "not this"


    def test_with_its_own_context(browser):
        context = browser.new_context(viewport={"width": 800, "height": 600})
        try:
            own = context.new_page()
            own.set_content("<h1>own context</h1>")
            assert own.title() == "not this"
        finally:
            context.close()


    def test_that_passes(page):
        page.set_content("<h1>fine</h1>")
''')


def png_size(path) -> tuple[int, int]:
    width, height = struct.unpack(">II", path.read_bytes()[16:24])
    return width, height


def test_failing_browser_tests_save_full_page_screenshots(browser, tmp_path):
    # The inner run must sit under tests/e2e to use its conftest; artifacts/ is git-ignored, and the
    # file name is not test_*.py, so a run cut short leaves nothing that a later run would collect.
    folder = ARTIFACTS / "selftest"
    folder.mkdir(parents=True, exist_ok=True)
    (folder / "failing_on_purpose.py").write_text(FAILING)
    expected = [ARTIFACTS / "FAILED-test_with_the_page_fixture.png", ARTIFACTS / "FAILED-test_with_its_own_context.png"]
    for path in [*expected, ARTIFACTS / "FAILED-test_that_passes.png"]:
        path.unlink(missing_ok=True)
    try:
        result = subprocess.run(
            [sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider", str(folder / "failing_on_purpose.py")],
            cwd=REPO_ROOT, capture_output=True, text=True, timeout=180,
        )
        assert "2 failed, 1 passed" in result.stdout, result.stdout + result.stderr
        for path in expected:
            assert path.is_file(), result.stdout
            assert f"saved {path}" in result.stdout  # the report names the file
        # Full page: the tall page is taller than the 800 px viewport; the own context keeps its width.
        assert png_size(expected[0])[1] > 3000
        assert png_size(expected[1])[0] == 800
        assert not (ARTIFACTS / "FAILED-test_that_passes.png").exists()
    finally:
        for path in expected:
            path.unlink(missing_ok=True)
        (folder / "failing_on_purpose.py").unlink(missing_ok=True)
