"""The folders the app writes files in, named once: the services that write there and the health probe
(app.services.health, which writes a small file in each) ask here, so /healthz cannot miss a folder.

- instance: the secret key, the SQLite database and huey's SQLite queue (beside it by default);
- uploads (UPLOAD_FOLDER): confirmed prediction files;
- staging (UPLOAD_FOLDER/staging): uploads spooled, previewed and waiting to be confirmed;
- deleted: the scores exported before a study, system or upload is deleted (web and command line);
- downloads: L-Eval's files fetched by `import-leval --download`;
- templates: the compiled page templates, kept so a restarted server need not compile them again;
- exports: score exports kept while the data they were made from is unchanged (services/exports/stored).
"""
from __future__ import annotations

from pathlib import Path

from flask import current_app


def instance_folder() -> Path:
    return Path(current_app.instance_path)


def upload_folder() -> Path:
    return Path(current_app.config["UPLOAD_FOLDER"])


def staging_folder() -> Path:
    return upload_folder() / "staging"


def deleted_folder() -> Path:
    return instance_folder() / "deleted"


def downloads_folder() -> Path:
    return instance_folder() / "downloads"


def template_cache_folder(instance: Path) -> Path:
    """Jinja's compiled templates (set up with the app, before any app context: hence the argument)."""
    return Path(instance) / "cache" / "templates"


def export_cache_folder() -> Path:
    return instance_folder() / "cache" / "exports"


def queue_folder() -> Path:
    """The folder of huey's SQLite queue file (QUEUE_PATH; used when the database is SQLite)."""
    return Path(current_app.config["QUEUE_PATH"]).parent


def written_folders() -> dict[str, Path]:
    """Every folder the app writes in, by name, each once (the queue's is usually the instance folder)."""
    folders = {"instance": instance_folder(), "uploads": upload_folder(), "staging": staging_folder(),
               "deleted": deleted_folder(), "downloads": downloads_folder(), "queue": queue_folder()}
    unique: dict[str, Path] = {}
    for name, path in folders.items():
        if path.resolve() not in {p.resolve() for p in unique.values()}:
            unique[name] = path
    return unique
