"""What importing one uploaded file would do: the record the preview fills and the confirmation reads."""
from __future__ import annotations

from dataclasses import asdict, dataclass, field

MAX_ERRORS = 20


@dataclass
class FilePreview:
    """What importing one file would do; `errors` non-empty means it will not be imported."""

    name: str
    sha256: str
    size: int
    system: str = ""
    task: str = ""
    pred_key: str = ""
    rows: int = 0
    evaluations: dict[str, int] = field(default_factory=dict)
    matched: int | None = None
    unmatched: int | None = None
    unmatched_examples: list[str] = field(default_factory=list)
    new: int = 0
    unchanged: int = 0
    conflicts: int = 0
    errors: list[dict] = field(default_factory=list)
    more_errors: int = 0
    kind: str = "leval"  # or "lveval": `<model>/<dataset>_<level>.jsonl`, imported per model (uploads.lveval_files)
    new_questions: int = 0
    notes: list[dict] = field(default_factory=list)

    @property
    def ok(self) -> bool:
        return not self.errors

    @property
    def outcome(self) -> tuple[str, str]:
        """(badge class, what confirming does with this file): a file that adds nothing must not read "ready"."""
        if not self.ok:
            return "err", "not importable"
        if self.new:
            text = f"adds {self.new} new"
            return "ok", text + (f"; {self.conflicts} differ, replaced only if ticked" if self.conflicts else "")
        if self.conflicts:
            return "warn", f"adds nothing; {self.conflicts} differ, replaced only if ticked"
        return "", "adds nothing: already stored"

    def add_error(self, message: str, *, line: int | None = None, field_name: str | None = None) -> None:
        if len(self.errors) >= MAX_ERRORS:
            self.more_errors += 1
            return
        self.errors.append({"line": line, "field": field_name, "message": message})

    def as_dict(self) -> dict:
        return asdict(self)

    @classmethod
    def from_dict(cls, data: dict) -> FilePreview:
        return cls(**data)
