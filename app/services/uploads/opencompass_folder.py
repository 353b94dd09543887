"""Import an OpenCompass output folder from disk (the `import-opencompass` command): preview, then all or nothing."""
from __future__ import annotations

import hashlib
from dataclasses import dataclass, field
from pathlib import Path

from app.core.input_files import NotARegularFile, files_in, open_regular_file
from app.core.metrics.files import FileFormatError
from app.core.opencompass import LABELS, is_opencompass_file
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
    with open_regular_file(path) as stream:
        while chunk := stream.read(READ_CHUNK):
            digest.update(chunk)
    return digest.hexdigest()


def find_opencompass_files(root: Path, models: tuple[str, ...] = ()
                           ) -> tuple[dict[str, Path], list[str], dict[str, str]]:
    """{display name: path} of the files of OpenCompass's datasets of any benchmark under root (a work dir, its predictions/ or a model folder),
    the other .json files, which are ignored, and {display name: why} of the entries named like a dataset file
    that are no regular file inside the folder (a link, a named pipe, …: core/input_files.py), which are refused.
    Names start at the model folder's parent, so they name the model."""
    try:
        paths, refused = files_in(root, (".json",))
    except FileNotFoundError:
        raise FileFormatError(str(root), "no such file or folder") from None
    except NotARegularFile as exc:
        raise FileFormatError(str(root), exc.why) from None
    base = root.parent if root.is_dir() else root.parent.parent  # one file: keep its model folder in the name
    files, ignored, bad = {}, [], {}
    for path, why in [(p, None) for p in paths] + [(e.path, e.why) for e in refused]:
        name = path.relative_to(base).as_posix()
        if not is_opencompass_file(name):
            ignored.append(name)
        elif models and path.parent.name not in models:
            continue
        elif why is not None:
            bad[name] = why
        else:
            files[name] = path.resolve() if path == root else path  # a file named directly may be a link
    return files, sorted(ignored), bad


def import_opencompass_folder(root: Path, *, models: tuple[str, ...] = (), replace: bool = False,
                              skip_invalid: bool = False, user_id: int | None = None) -> FolderImport:
    """Preview every file; import the valid ones in one transaction when none has errors (or `skip_invalid`)."""
    files, ignored, refused = find_opencompass_files(root, models)
    result = FolderImport(ignored=ignored)
    for name in sorted({*files, *refused}):
        preview = FilePreview(name=name, sha256="", size=0)
        if name not in refused:
            try:
                preview.sha256, preview.size = _sha256(files[name]), files[name].stat().st_size
            except NotARegularFile as exc:  # it changed since it was listed
                refused[name] = exc.why
        preview_opencompass_file(preview)
        if name in refused:
            preview.add_error(refused[name])
        result.previews.append(preview)
    seen = {p.system for p in result.previews}
    for model in models:
        if model not in seen:
            result.error = {"file": str(root), "line": None, "field": "--model",
                            "message": f"no OpenCompass {LABELS} file of model {model!r} under this folder"}
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
