"""Full exports of human scores (jsonl, csv, L-Eval's layout, results JSON) and their re-import."""
from app.services.exports.importer import (
    IMPORT_FORMATS,
    AnnotationImportReport,
    import_annotation_bytes,
    import_annotations,
)
from app.services.exports.leval import (
    SCORE_SEPARATOR,
    annotator_from_filename,
    annotators_with_scores,
    left_out_note,
    leval_filename,
    leval_left_out,
    leval_lines,
    split_scored_answer,
)
from app.services.exports.rows import (
    ROUND_CHOICES,
    SCORE_FIELDS,
    count_score_rows,
    iso_utc,
    iter_score_rows,
    score_rows,
)
from app.services.exports.stored import stored_export
from app.services.exports.writers import (
    FORMATS,
    csv_chunks,
    csv_text,
    export_chunks,
    export_text,
    jsonl_chunks,
    jsonl_text,
    record_count,
    results_text,
    write_leval_folder,
)

__all__ = [
    "AnnotationImportReport", "FORMATS", "IMPORT_FORMATS", "ROUND_CHOICES", "SCORE_FIELDS", "SCORE_SEPARATOR",
    "annotator_from_filename", "annotators_with_scores", "count_score_rows", "csv_chunks", "csv_text",
    "export_chunks", "export_text", "import_annotation_bytes", "import_annotations", "iso_utc", "iter_score_rows",
    "jsonl_chunks", "jsonl_text", "leval_filename", "leval_left_out", "leval_lines", "left_out_note",
    "split_scored_answer", "record_count", "results_text", "score_rows", "stored_export", "write_leval_folder",
]
