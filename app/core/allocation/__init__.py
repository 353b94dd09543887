"""Who reads what in a human study, and when an adaptive study's ranking is settled. Pure: plain values in
and out (the database side is services/studies/allocation.py and services/studies/assignment.py).

- sharing.py: a fixed study's documents, each to k annotators, balanced by words to read;
- reliability.py: each annotator's noise and signal, from the answers they share with others;
- status.py: the weighted ranking and the stopping rule (paired t tests, Bonferroni, TOST);
- calibration.py: which calibration document(s) each annotator of an adaptive study reads first;
- policy.py: an adaptive study's next document, questions and answers for an annotator;
- tdist.py: Student's t, written out so that no request imports scipy.
"""
from app.core.allocation.policy import (
    EXHAUSTED,
    FILLERS,
    NOT_NEEDED,
    READ_AGAIN_COST,
    WAIT,
    Candidate,
    Choice,
    Decision,
    Design,
    Document,
    Situation,
    decide,
)
from app.core.allocation.calibration import calibration_documents, calibration_groups, is_calibrated, not_calibrated
from app.core.allocation.reliability import Reliability, reliabilities, typical_noise, weights
from app.core.allocation.sharing import reading_load, share_documents
from app.core.allocation.status import (
    OPEN,
    SEPARATED,
    TIED,
    PairState,
    Rules,
    Status,
    additive_effects,
    cell_means,
    study_status,
)

__all__ = [
    "EXHAUSTED", "FILLERS", "NOT_NEEDED", "OPEN", "READ_AGAIN_COST", "SEPARATED", "TIED", "WAIT",
    "Candidate", "Choice", "Decision", "Design", "Document", "PairState", "Reliability", "Rules", "Situation",
    "Status", "additive_effects", "calibration_documents", "calibration_groups", "cell_means", "decide",
    "is_calibrated", "not_calibrated", "reading_load", "reliabilities", "share_documents", "study_status", "typical_noise", "weights",
]
