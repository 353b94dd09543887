"""LV-Eval as a benchmark: import model folders, score them as LV-Eval does, and assemble its pages."""
from app.services.lveval.importer import (
    LvevalImportReport,
    ModelReport,
    find_models,
    import_models,
    import_payloads,
    parse_model,
)

__all__ = ["LvevalImportReport", "ModelReport", "find_models", "import_models", "import_payloads", "parse_model"]
