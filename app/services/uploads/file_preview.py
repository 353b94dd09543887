"""What importing one uploaded file would do: the record the preview fills and the confirmation reads."""
from __future__ import annotations

from dataclasses import asdict, dataclass, field

MAX_ERRORS = 20
# A file of documents (an L-Eval task file or the human-eval reference file), not predictions.
DOCUMENTS_KIND = "documents"


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
    unmatched_lines: list[int] = field(default_factory=list)  # the first MAX_ERRORS of them
    named_system: str = ""  # the system the file's name or folder gives (before the API's `system` renames it)
    new: int = 0
    unchanged: int = 0
    conflicts: int = 0
    errors: list[dict] = field(default_factory=list)
    more_errors: int = 0
    kind: str = "leval"  # or another benchmark's key ("lveval": `<model>/<dataset>_<level>.jsonl`), imported per
    # model by its plugin (services.benchmarks),
    # or "documents": L-Eval task or reference files (`format` says which), imported before the predictions
    format: str = ""
    new_questions: int = 0
    new_documents: int = 0
    notes: list[dict] = field(default_factory=list)

    @property
    def ok(self) -> bool:
        return not self.errors

    @property
    def skipped(self) -> int:
        """Rows confirming leaves as they are: already stored unchanged, or matching no stored question."""
        return self.unchanged + (self.unmatched or 0)

    @property
    def skip_text(self) -> str:
        """Say how many rows are skipped and why, e.g. "56 skipped (50 unmatched, 6 unchanged)"."""
        if not self.skipped:
            return ""
        reasons = [f"{count} {why}" for count, why in ((self.unmatched or 0, "unmatched"), (self.unchanged, "unchanged"))
                   if count]
        return f"{self.skipped} skipped ({', '.join(reasons)})"

    @property
    def outcome(self) -> tuple[str, str]:
        """(badge class, what confirming does with this file): a file that adds nothing must not read "ready",
        and one that skips rows must say so (amber) rather than look like a clean import."""
        if not self.ok:
            return "err", "not importable"
        if self.kind == DOCUMENTS_KIND:
            if not self.new:
                return "", f"adds nothing: its {self.unchanged} questions are already stored"
            return "ok", f"adds {self.new} questions ({self.new_documents} new documents)" + (
                f"; {self.unchanged} already stored" if self.unchanged else "")
        parts = [f"adds {self.new} new" if self.new else "adds nothing"]
        if self.conflicts:
            parts.append(f"{self.conflicts} differ, replaced only if ticked")
        if self.skipped and (self.new or self.conflicts or self.unmatched):
            parts.append(self.skip_text)
        if self.new and not self.conflicts and not self.skipped:
            return "ok", parts[0]
        if not self.new and not self.conflicts and not self.unmatched:
            return "", "adds nothing: already stored"
        return "warn", "; ".join(parts)

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
