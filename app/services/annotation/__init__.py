"""Human scoring: who scores what, in which blind order, and how scores are kept.

Modules: `rounds` (an annotator's open round, "begin again"), `workload` (the questions and
answers to score, document-first), `blinding` (shuffled labels per annotator and question),
`scoring` (validated, idempotent saves with history), `documents` (the long-document panel),
`oversight` (the researchers' view: progress and the systems in the evaluation).
"""
