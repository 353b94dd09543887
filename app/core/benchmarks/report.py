"""What a benchmark plugin's importer reports (app.core.benchmarks.spec.Plugin.import_model): one model folder's
counts, its report line, and a whole import's reports; LV-Eval and LongBench share them."""
from __future__ import annotations

from dataclasses import dataclass, field


@dataclass
class ModelCounts:
    """What one model's files did to the stored predictions (a plugin's store adds fields of its own)."""
    system: str = ""
    files: int = 0
    rows: int = 0
    questions_new: int = 0
    created: int = 0
    unchanged: int = 0
    replaced: int = 0
    conflicts: int = 0
    removed: int = 0

    def as_dict(self) -> dict:
        return dict(self.__dict__)


@dataclass
class ModelReport:
    system: str  # "" for a benchmark's own data files (its questions and documents)
    files: list[str] = field(default_factory=list)
    counts: dict = field(default_factory=dict)
    errors: list[dict] = field(default_factory=list)
    warnings: list[dict] = field(default_factory=list)

    def as_dict(self) -> dict:
        return dict(self.__dict__)


@dataclass
class ImportReport:
    """Every model's report of one import: a model with errors stored nothing."""
    models: list[ModelReport] = field(default_factory=list)

    @property
    def failed(self) -> list[ModelReport]:
        return [m for m in self.models if m.errors]

    def as_dict(self) -> dict:
        return {"models": [m.as_dict() for m in self.models]}
