"""Studies: the unit a researcher runs; every human score belongs to one.

Modules: `membership` (the one rule for which answers a study shows, and its valid and stale
scores), `answers` (immutable answer versions, pinning and stale counts), `setup` (create, edit,
open and close), `references` (answers that repeat a reference shown beside them), `twins` (identical
answers of several systems shown once, their one score recorded for each), `assignment`
(overlap k and load balancing), `lookup` (the one resolver of a study by id or by name, as the caller
says, or the default one), `deletion` (deleting studies, systems, uploads and the demo, with the scores
exported first).
"""
