"""Import an OpenCompass output folder from disk (the `import-opencompass` command): preview, then all or nothing."""
from __future__ import annotations

import hashlib
from dataclasses import dataclass, field
from pathlib import Path

from app.core.metrics.files import FileFormatError
from app.core.opencompass import is_opencompass_file
from app.extensions import db
from app.services.uploads.archive import READ_CHUNK
from app.services.uploads.file_preview import FilePreview
from app.services.uploads.opencompass_files import (
    import_opencompass_previews,
    preview_opencompass,
    preview_opencompass_file,
)


@dataclass
class FolderImport:
    previews: list[FilePreview] = field(default_factory=list)
    ignored: list[str] = field(default_factory=list)
    imported: list[dict] = field(default_factory=list)
    error: dict | None = None  # what stopped a confirmed import (nothing of it was kept)

    @property
    def invalid(self) -> list[FilePreview]:
        return [preview for preview in self.previews if not preview.ok]

    @property
    def systems(self) -> list[str]:
        return list(dict.fromkeys(item["system"] for item in self.imported))


def _sha256(path: Path) -> str:
    digest = hashlib.sha256()
    with path.open("rb") as stream:
        while chunk := stream.read(READ_CHUNK):
            digest.update(chunk)
    return digest.hexdigest()


def find_opencompass_files(root: Path, models: tuple[str, ...] = ()) -> tuple[dict[str, Path], list[str]]:
    """{display name: path} of the L-Eval/LV-Eval files under root (a work dir, its predictions/ or a model folder),
    and the other .json files, which are ignored. Names start at the model folder's parent, so they name the model."""
    if not root.exists():
        raise FileFormatError(str(root), "no such file or folder")
    base = root.parent if root.is_dir() else root.parent.parent  # one file: keep its model folder in the name
    files, ignored = {}, []
    for path in sorted(root.rglob("*.json") if root.is_dir() else [root]):
        name = path.relative_to(base).as_posix()
        if not is_opencompass_file(name):
            ignored.append(name)
        elif not models or path.parent.name in models:
            files[name] = path
    return files, ignored


def import_opencompass_folder(root: Path, *, models: tuple[str, ...] = (), replace: bool = False,
                              skip_invalid: bool = False, user_id: int | None = None) -> FolderImport:
    """Preview every file; import the valid ones in one transaction when none has errors (or `skip_invalid`)."""
    files, ignored = find_opencompass_files(root, models)
    result = FolderImport(ignored=ignored)
    for name, path in files.items():
        preview = FilePreview(name=name, sha256=_sha256(path), size=path.stat().st_size)
        preview_opencompass_file(preview)
        result.previews.append(preview)
    seen = {p.system for p in result.previews}
    for model in models:
        if model not in seen:
            result.error = {"file": str(root), "line": None, "field": "--model",
                            "message": f"no OpenCompass L-Eval or LV-Eval file of model {model!r} under this folder"}
    if result.error is not None:
        return result
    preview_opencompass(result.previews, lambda preview: files[preview.name])
    valid = [preview for preview in result.previews if preview.ok]
    if not valid or (result.invalid and not skip_invalid):
        return result
    try:
        result.imported = import_opencompass_previews(valid, lambda preview: files[preview.name],
                                                      lambda sha256, path: "", user_id=user_id, replace=replace)
        db.session.commit()
    except FileFormatError as exc:
        db.session.rollback()
        result.imported, result.error = [], exc.as_dict()
    except Exception:
        db.session.rollback()
        raise
    return result
