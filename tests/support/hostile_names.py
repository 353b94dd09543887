"""Names an attacker (or an unlucky import) puts where the app builds a download's file name."""
from __future__ import annotations

HOSTILE_NAMES = [
    'x"; filename*=UTF-8\'\'evil.html',  # the audit's injection: a second filename* Chromium preferred
    'quote"inside',
    "semi;colon; filename=evil.html",
    "line\r\nbreak",
    "Content-Type: text/html\r\n\r\n<script>alert(1)</script>",
    "中文来源",  # Chinese text: 500 before (latin-1 header)
    "café – ü",
    "../../etc/passwd",
    "..\\..\\windows\\system32",
    "..",
    "...",
    ".hidden",
    "evil\u202egnp.html",  # right-to-left override: reads "evillmth.png"
    "a\u200bzero\u2066width\u2069",
    "CON",
    "nul.txt",
    "report.html",
    "x" * 400,
    "长" * 300,
    "tab\there",
    "a:b*c?d<e>f|g~h",
    "%22%0d%0a",
    " ",
]
