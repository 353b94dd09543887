"""Documents, questions, references, systems and their predictions."""
from __future__ import annotations

from datetime import datetime

from sqlalchemy import Boolean, Float, ForeignKey, Integer, String, Text, UniqueConstraint
from sqlalchemy.orm import Mapped, mapped_column, relationship

from app.extensions import db
from app.models.base import created_at_column

# Collections keep the human-evaluation subset apart from the full task files:
# the same long text can appear in both, with different question sets.
HUMAN_EVAL = "human_eval"
TASKS = "tasks"
# LV-Eval's benchmark: one document per (dataset, level), without its long context.
LVEVAL = "lveval"

REFERENCE_KINDS = ("human", "gpt4-32k", "claude-100k")
REFERENCE_LABELS = {
    "human": "Human reference",
    "gpt4-32k": "GPT-4-32k reference",
    "claude-100k": "Claude-100k reference",
}


class Document(db.Model):
    __tablename__ = "documents"
    __table_args__ = (UniqueConstraint("collection", "task", "sha256"),)

    id: Mapped[int] = mapped_column(primary_key=True)
    collection: Mapped[str] = mapped_column(String(40), index=True)
    task: Mapped[str] = mapped_column(String(80), index=True)
    source: Mapped[str] = mapped_column(String(200), default="")
    title: Mapped[str] = mapped_column(String(200))
    text: Mapped[str] = mapped_column(Text)
    sha256: Mapped[str] = mapped_column(String(64))
    word_count: Mapped[int] = mapped_column(Integer)
    char_count: Mapped[int] = mapped_column(Integer)
    evaluation: Mapped[str] = mapped_column(String(20), default="")
    source_file: Mapped[str] = mapped_column(String(500), default="")
    line_no: Mapped[int] = mapped_column(Integer, default=0)
    # Part of the shipped fictional demo: kept out of real studies, deleted with the demo.
    is_demo: Mapped[bool] = mapped_column(Boolean, default=False)
    created_at: Mapped[datetime] = created_at_column()

    questions: Mapped[list[Question]] = relationship(
        back_populates="document", order_by="Question.position", cascade="all, delete-orphan"
    )


class Question(db.Model):
    __tablename__ = "questions"
    __table_args__ = (UniqueConstraint("document_id", "position"),)

    id: Mapped[int] = mapped_column(primary_key=True)
    document_id: Mapped[int] = mapped_column(ForeignKey("documents.id", ondelete="CASCADE"), index=True)
    position: Mapped[int] = mapped_column(Integer)
    instruction: Mapped[str] = mapped_column(Text)
    reference: Mapped[str] = mapped_column(Text)
    evaluation: Mapped[str] = mapped_column(String(20), default="")
    # sha256 of the whitespace-normalised (query, gt) pair, used to match prediction rows.
    match_key: Mapped[str] = mapped_column(String(64), index=True)
    created_at: Mapped[datetime] = created_at_column()

    document: Mapped[Document] = relationship(back_populates="questions")
    references: Mapped[list[Reference]] = relationship(
        back_populates="question", cascade="all, delete-orphan", order_by="Reference.id"
    )


class Reference(db.Model):
    __tablename__ = "references"
    __table_args__ = (UniqueConstraint("question_id", "kind"),)

    id: Mapped[int] = mapped_column(primary_key=True)
    question_id: Mapped[int] = mapped_column(ForeignKey("questions.id", ondelete="CASCADE"), index=True)
    kind: Mapped[str] = mapped_column(String(40))
    text: Mapped[str] = mapped_column(Text)

    question: Mapped[Question] = relationship(back_populates="references")

    @property
    def label(self) -> str:
        return REFERENCE_LABELS.get(self.kind, f"{self.kind} reference")


class System(db.Model):
    __tablename__ = "systems"

    id: Mapped[int] = mapped_column(primary_key=True)
    name: Mapped[str] = mapped_column(String(120), unique=True)
    # The `<key>_pred` field of its files, e.g. gpt4-x_pred for gpt4-32k.
    pred_key: Mapped[str] = mapped_column(String(160), default="")
    length_instruction: Mapped[bool] = mapped_column(Boolean, default=False)
    is_demo: Mapped[bool] = mapped_column(Boolean, default=False)
    uploaded_by_id: Mapped[int | None] = mapped_column(ForeignKey("users.id", ondelete="SET NULL"))
    created_at: Mapped[datetime] = created_at_column()
    # L-Eval's leaderboard keys (researchers edit them; None means not stated).
    context_window: Mapped[int | None] = mapped_column(Integer)  # Max-Ctx, in tokens
    input_tokens: Mapped[int | None] = mapped_column(Integer)  # Tokens: input tokens used in the experiments
    retrieval: Mapped[bool | None] = mapped_column(Boolean)  # Ret.
    prompt_engineering: Mapped[bool | None] = mapped_column(Boolean)  # PE
    in_domain_data: Mapped[bool | None] = mapped_column(Boolean)  # IDD
    parameters: Mapped[str] = mapped_column(String(40), default="")  # e.g. "7B"
    links: Mapped[str] = mapped_column(Text, default="")  # one URL per line
    # An LV-Eval ablation: this system is `variant_kind` (see app.core.stats.lveval.VARIANT_KINDS) of another.
    # A plain id, not a foreign key: adding one to `systems` would make SQLite rebuild the table, and the
    # rebuild cascades into every prediction; a tag whose base is gone reads as no tag.
    variant_of_id: Mapped[int | None] = mapped_column(Integer)
    variant_kind: Mapped[str] = mapped_column(String(20), default="")

    files: Mapped[list[PredictionFile]] = relationship(back_populates="system", order_by="PredictionFile.id")


class PredictionFile(db.Model):
    """One imported or uploaded `.pred.jsonl`: the provenance of a system's predictions."""

    __tablename__ = "prediction_files"
    __table_args__ = (UniqueConstraint("system_id", "sha256"),)

    id: Mapped[int] = mapped_column(primary_key=True)
    system_id: Mapped[int] = mapped_column(ForeignKey("systems.id", ondelete="CASCADE"), index=True)
    filename: Mapped[str] = mapped_column(String(500))
    stored_path: Mapped[str] = mapped_column(String(500), default="")
    sha256: Mapped[str] = mapped_column(String(64), index=True)
    task: Mapped[str] = mapped_column(String(80), default="")
    pred_key: Mapped[str] = mapped_column(String(160))
    rows: Mapped[int] = mapped_column(Integer, default=0)
    matched: Mapped[int] = mapped_column(Integer, default=0)
    unmatched: Mapped[int] = mapped_column(Integer, default=0)
    uploaded_by_id: Mapped[int | None] = mapped_column(ForeignKey("users.id", ondelete="SET NULL"))
    created_at: Mapped[datetime] = created_at_column()

    system: Mapped[System] = relationship(back_populates="files")


class Prediction(db.Model):
    __tablename__ = "predictions"
    __table_args__ = (UniqueConstraint("system_id", "question_id"),)

    id: Mapped[int] = mapped_column(primary_key=True)
    system_id: Mapped[int] = mapped_column(ForeignKey("systems.id", ondelete="CASCADE"), index=True)
    question_id: Mapped[int] = mapped_column(ForeignKey("questions.id", ondelete="CASCADE"), index=True)
    file_id: Mapped[int | None] = mapped_column(ForeignKey("prediction_files.id", ondelete="SET NULL"))
    line_no: Mapped[int] = mapped_column(Integer, default=0)
    text: Mapped[str] = mapped_column(Text)
    # sha256 of `text`: tells whether a study's pinned answer version is still the current text.
    text_sha256: Mapped[str] = mapped_column(String(64), default="")
    prompt: Mapped[str | None] = mapped_column(Text)
    evaluation: Mapped[str] = mapped_column(String(20), default="")
    word_count: Mapped[int] = mapped_column(Integer)
    # An answer longer than the cap for human evaluation (LONG_ANSWER_* values): scored by the metrics, kept
    # out of studies while "held", shown to annotators once a researcher chose "shown". "" = within the cap.
    long_answer: Mapped[str] = mapped_column(String(10), default="", server_default="")
    # LV-Eval: the keywords (`gold_ans`) of this prediction's own row, as its upload gave them. Another model's
    # folder may give the same question other keywords; evaluation.py scores each folder with its own
    # (quirk lveval_gold_per_folder). None: the row had none, or the prediction is not LV-Eval's.
    gold_ans: Mapped[str | None] = mapped_column(Text)
    created_at: Mapped[datetime] = created_at_column()

    system: Mapped[System] = relationship()
    question: Mapped[Question] = relationship()
    file: Mapped[PredictionFile | None] = relationship()


LONG_ANSWER_HELD = "held"
LONG_ANSWER_SHOWN = "shown"


class UploadBatch(db.Model):
    """A confirmed upload: its id makes a second confirm of the same preview say "already imported"."""

    __tablename__ = "upload_batches"

    id: Mapped[str] = mapped_column(String(32), primary_key=True)
    user_id: Mapped[int | None] = mapped_column(ForeignKey("users.id", ondelete="SET NULL"))
    files: Mapped[int] = mapped_column(Integer, default=0)
    predictions: Mapped[int] = mapped_column(Integer, default=0)
    systems: Mapped[str] = mapped_column(Text, default="")  # the systems it imported into, one per line
    created_at: Mapped[datetime] = created_at_column()



class LvevalItem(db.Model):
    """What LV-Eval's rows say about a question beyond its text: dataset, level, answers, keywords, needle."""

    __tablename__ = "lveval_items"

    question_id: Mapped[int] = mapped_column(ForeignKey("questions.id", ondelete="CASCADE"), primary_key=True)
    dataset: Mapped[str] = mapped_column(String(40), index=True)
    level: Mapped[str] = mapped_column(String(8))
    occurrence: Mapped[int] = mapped_column(Integer, default=0)  # the k-th row with this input and answers
    answers: Mapped[str] = mapped_column(Text)  # JSON: a list, or a string as the file gave it
    gold_ans: Mapped[str | None] = mapped_column(Text)
    length: Mapped[int | None] = mapped_column(Integer)  # context length in words (characters for Chinese)
    depth: Mapped[float | None] = mapped_column(Float)  # needle position in the context, 0 = start

    question: Mapped[Question] = relationship()
