"""Names that end up as file names: the characters and names no file name (nor system name) may hold,
and the sanitised name of a download.

Two owners use these rules: app.services.input_rules refuses a system name that breaks them, and
app.web.downloads names every download (its header) from safe_file_name / ascii_fallback.
"""
from __future__ import annotations

import re
import unicodedata

# Control characters, surrogates, line/paragraph separators and every format character (Cf): the
# bidi controls U+200E/F, U+202A–U+202E, U+2066–U+2069, U+061C, zero-width spaces and joiners, the BOM.
# A right-to-left override makes "evil\u202egnp.html" read "evillmth.png"; the rest hide in plain sight.
HIDDEN_CATEGORIES = frozenset({"Cc", "Cf", "Cs", "Zl", "Zp"})
# Device names Windows reserves whatever the case and extension ("con.txt" opens the console).
WINDOWS_RESERVED = frozenset({"CON", "PRN", "AUX", "NUL", *(f"COM{i}" for i in range(1, 10)),
                              *(f"LPT{i}" for i in range(1, 10))})
# Characters Chromium (and Windows) replace in a saved file's name, plus ; and the path separators.
_UNSAFE_IN_FILE_NAMES = frozenset('/\\:*?"<>|~;')
_ASCII_FALLBACK_UNSAFE = re.compile(r"[^A-Za-z0-9.-]+")  # "_" too: a run of them becomes one
# Linux allows 255 bytes per name; Chromium adds ".crdownload" and " (1)" while saving.
MAX_NAME_BYTES = 180
FALLBACK_STEM = "download"


def is_hidden(ch: str) -> bool:
    """A control, format (bidi, zero-width), surrogate or line-separator character."""
    return unicodedata.category(ch) in HIDDEN_CATEGORIES


def is_windows_reserved(name: str) -> bool:
    """CON, PRN, AUX, NUL, COM1–COM9, LPT1–LPT9, in any case, alone or before an extension ("nul.txt")."""
    return name.split(".", 1)[0].rstrip(" ").upper() in WINDOWS_RESERVED


def is_only_dots(name: str) -> bool:
    """".", "..", "..." and so on: names a path resolves to a folder."""
    return bool(name) and set(name) == {"."}


def safe_file_name(name: str, extension: str) -> str:
    """A file name for `name` that is safe in a header and on any disk, ends in `extension`, never empty.

    Hidden characters are dropped; path separators, quotes, ; and the characters browsers replace become
    "_"; a whitespace run becomes one "_" (a name with spaces needs quoting in every shell; "L-Eval human
    evaluation" saves as L-Eval_human_evaluation-…); leading/trailing dots and spaces go; a Windows device name
    gets a "_" in front; the stem is cut to fit MAX_NAME_BYTES. The extension is always `extension`
    (a name ending otherwise keeps its own as part of the stem: "x.html" becomes "x.html.jsonl").
    """
    name = unicodedata.normalize("NFC", name)
    if name.lower().endswith(extension.lower()):
        name = name[:-len(extension)]
    kept = "".join("_" if ch in _UNSAFE_IN_FILE_NAMES else " " if ch in "\r\n\t" else ch
                   for ch in name if ch in "\r\n\t" or not is_hidden(ch))
    stem = _trim("_".join(kept.split()))
    budget = MAX_NAME_BYTES - len(extension.encode("utf-8"))
    while len(stem.encode("utf-8")) > budget:
        stem = stem[:-1]
    stem = _trim(stem) or FALLBACK_STEM
    if is_windows_reserved(stem):
        stem = "_" + stem
    return stem + extension


def ascii_fallback(name: str) -> str:
    """The ASCII-only form of a safe_file_name() result, for clients that ignore filename*.

    Accents lose their marks ("é" → "e"), other characters become "_"; never empty, same extension.
    """
    stem, dot, extension = name.rpartition(".")
    if not dot:
        stem, extension = name, ""
    letters = "".join(ch if ch.isascii() else "" if unicodedata.combining(ch) else "_"
                      for ch in unicodedata.normalize("NFKD", stem))
    stem = _ASCII_FALLBACK_UNSAFE.sub("_", letters).strip("._ ") or FALLBACK_STEM
    ascii_extension = _ASCII_FALLBACK_UNSAFE.sub("_", extension)
    stem = "_" + stem if is_windows_reserved(stem) else stem
    return f"{stem}.{ascii_extension}" if ascii_extension else stem


def _trim(stem: str) -> str:
    return stem.strip(". ")
