"""Helpers for upload, metric-job and leaderboard tests: demo data, prediction files, zips, form posts."""
from __future__ import annotations

import io
import json
import re
import stat
import zipfile
from pathlib import Path

from app.services.demo import DEMO_PATH, load_demo

BATCH_URL_RE = re.compile(r"/predictions/uploads/([0-9a-f]{32})$")


def load_demo_data(app) -> None:
    with app.app_context():
        report = load_demo()
        assert not report.failed, report.failed


def demo_rows(relative: str) -> list[dict]:
    text = (DEMO_PATH / relative).read_text(encoding="utf-8")
    return [json.loads(line) for line in text.splitlines() if line.strip()]


def as_system(rows: list[dict], system: str, *, change=None) -> list[dict]:
    """Rename the rows' `<model>_pred` key to `<system>_pred`; `change(i, text)` may alter answers."""
    out = []
    for i, row in enumerate(rows):
        key = next(k for k in row if k.endswith("_pred"))
        new = {k: v for k, v in row.items() if k != key}
        new[f"{system}_pred"] = change(i, row[key]) if change else row[key]
        out.append(new)
    return out


def jsonl(rows: list[dict]) -> bytes:
    return ("\n".join(json.dumps(row, ensure_ascii=False) for row in rows) + "\n").encode("utf-8")


def demo_file(relative: str, system: str, *, change=None) -> bytes:
    return jsonl(as_system(demo_rows(relative), system, change=change))


def make_zip(members: dict[str, bytes], *, symlinks: tuple[str, ...] = (), modes: dict[str, int] | None = None) -> bytes:
    """A zip of the members; `symlinks` are recorded as links, `modes` gives others a Unix file mode."""
    buffer = io.BytesIO()
    with zipfile.ZipFile(buffer, "w", compression=zipfile.ZIP_DEFLATED) as archive:
        for name, data in members.items():
            info = zipfile.ZipInfo(name)
            info.compress_type = zipfile.ZIP_DEFLATED
            if name in symlinks:
                info.external_attr = (stat.S_IFLNK | 0o777) << 16
            if name in (modes or {}):
                info.external_attr = modes[name] << 16
            archive.writestr(info, data)
    return buffer.getvalue()


def post_upload(client, auth, files: list[tuple[str, bytes]], *, system: str = ""):
    """POST files to the upload form with a CSRF token, as the browser does."""
    data = {"csrf_token": auth.token(), "system": system,
            "files": [(io.BytesIO(content), name) for name, content in files]}
    return client.post("/predictions/upload", data=data, content_type="multipart/form-data")


def batch_id(response) -> str:
    assert response.status_code == 302, response.get_data(as_text=True)[:500]
    match = BATCH_URL_RE.search(response.headers["Location"])
    assert match, response.headers["Location"]
    return match.group(1)


def confirm(client, auth, batch: str, *, replace: bool = False):
    data = {"csrf_token": auth.token()}
    if replace:
        data["replace"] = "1"
    return client.post(f"/predictions/uploads/{batch}/confirm", data=data)


def staged_files(app) -> list[Path]:
    return sorted((Path(app.config["UPLOAD_FOLDER"]) / "staging").glob("*.jsonl"))


def stored_files(app) -> list[Path]:
    return sorted(Path(app.config["UPLOAD_FOLDER"]).glob("*.jsonl"))
