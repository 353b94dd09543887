"""Generated documents in Chinese, English and both, quotes planted in them, and an independent oracle.

Every text is invented (fictional names, places and years). `chinese_quote_set` plants at least 1,000 Chinese
quotes of the kinds a judge writes and the audit of issue 36 counted: verbatim copies (whole sentences,
mid-sentence, across a paragraph break), spacing-only changes, and alterations (one digit, a negation added
or removed, a name swapped) that must never be exact or close.

The oracle (`oracle_status`) restates the documented rules without app.core.quotes: exact is str.find on texts
folded by NFKC, typographic quotes and dashes and whitespace runs, at word boundaries; close is difflib finding
the quote's tokens (a Han, Kana, Hangul or Thai character each, else a run of letters and digits) as one
contiguous block of the document's; too short is the per-script minimum of docs/judge.md.
"""
from __future__ import annotations

import difflib
import random
import re
import unicodedata
from dataclasses import dataclass

EXACT, CLOSE, UNSUPPORTED = "exact", "close", "unsupported"

ZH_SURNAMES = "林周沈顾陆苏温叶秦韩"
ZH_GIVEN = ("远舟", "书雁", "知秋", "若溪", "云帆", "听澜", "明川", "晚晴", "子衿", "望舒")
ZH_PLACES = ("青石镇", "云岭村", "白沙湾", "星海城", "落霞渡", "松风岭", "临川港", "雁回山")
ZH_THINGS = ("灯塔", "钟楼", "种子库", "渡船", "观星台", "琉璃市集", "石桥", "藏书阁")
# (verb, its negated form): the negation a quote may gain or lose.
ZH_VERBS = (("喜欢", "不喜欢"), ("参加了", "没参加"), ("知道", "不知道"), ("同意", "不同意"), ("去过", "没去过"),
            ("相信", "不相信"))
ZH_TEMPLATES = (
    "{name}说他{verb}{place}的冬天。",
    "{name}在{year}年搬到了{place}。",
    "{place}的{thing}始建于{year}年，由{name}主持修建。",
    "据{name}回忆，{place}共有{count}座{thing}，其中{small}座已经倒塌。",
    "{name}{verb}{other}在{place}修建{thing}的计划。",
    "那年冬天，{name}在{place}无意中发现了一本{year}年的旧账册。",
    "{thing}并非{name}所建，而是{other}在{year}年捐资建成的。",
    "{place}的居民{verb}{name}的说法，{count}户人家联名写信给县里。",
    "{year}年以后，{place}再无人守护{thing}。",
)
EN_FIRST = ("Orrin", "Maelis", "Tobiah", "Sefa", "Idris", "Wenna", "Caspar", "Liora", "Bram", "Ysolde")
EN_LAST = ("Vale", "Fenwold", "Ashgrove", "Quillon", "Marrow", "Thistlebank", "Corvane", "Halloway")
EN_PLACES = ("Velmora", "Lumeria", "Brackenreach", "Saltmere", "Dunhollow", "Kestrel Bay")
EN_THINGS = ("lighthouse", "clock tower", "seed vault", "river ferry", "observatory", "glass market")
EN_TEMPLATES = (
    "In {year} the council of {place} asked {name} to restore the {thing}.",
    "{name} did not trust the {thing}, and {other} was never told why.",
    "The {thing} of {place} was rebuilt {count} times before {year}.",
    "According to {name}, the {thing} was not finished until the spring of {year}.",
    "{other} wrote that {name} had left {place} with {count} crates of maps.",
    "Nobody in {place} remembers who paid for the {thing}; {name} says it was {other}.",
)
MIXED_TEMPLATES = (
    "{en}在{year}年访问了{place}，并写下了“The {thing} is older than the town”。",
    "据{en}说，{place}的{zthing}建于{year}年，共有{count}层。",
    "{name}和{en}一起{verb}{place}的{zthing}。",
)


def _zh_name(rng: random.Random) -> str:
    return rng.choice(ZH_SURNAMES) + rng.choice(ZH_GIVEN)


def _en_name(rng: random.Random) -> str:
    return f"{rng.choice(EN_FIRST)} {rng.choice(EN_LAST)}"


def _fill(template: str, rng: random.Random) -> str:
    english = template.isascii()
    name = _en_name if english else _zh_name
    return template.format(
        name=name(rng), other=name(rng), en=_en_name(rng), verb=rng.choice(ZH_VERBS)[rng.randrange(2)],
        place=rng.choice(EN_PLACES if english else ZH_PLACES), thing=rng.choice(EN_THINGS if english or "{en}" in
                                                                                 template else ZH_THINGS),
        zthing=rng.choice(ZH_THINGS), year=rng.randint(1650, 2020), count=rng.randint(12, 99), small=rng.randint(2, 9))


def document(rng: random.Random, *, script: str = "zh", paragraphs: int = 12) -> str:
    """Paragraphs of invented sentences: `zh`, `en` or `mixed` (Chinese with English names and a quoted
    English phrase). Chinese sentences follow each other without spaces; paragraphs are split by blank lines."""
    templates = {"zh": ZH_TEMPLATES, "en": EN_TEMPLATES, "mixed": ZH_TEMPLATES + MIXED_TEMPLATES}[script]
    joiner = " " if script == "en" else ""
    return "\n\n".join(joiner.join(_fill(rng.choice(templates), rng) for _ in range(rng.randint(3, 6)))
                       for _ in range(paragraphs))


# --- the oracle ----------------------------------------------------------------------------------

_FOLD = str.maketrans({**dict.fromkeys("‘’‚‛′‵‹›＇`´", "'"), **dict.fromkeys("“”„‟″‶«»＂", '"'),
                       **dict.fromkeys("‐‑‒–—―−⁃﹘﹣－", "-")})
_CHARACTERS = re.compile(r"[\u1100-\u11ff\u3040-\u30ff\u3130-\u318f\u3400-\u4dbf\u4e00-\u9fff\uac00-\ud7af"
                         r"\uf900-\ufaff\u0e00-\u0e7f\u3005\u3007\U00020000-\U0003ffff]")
MINIMUM = {"words": 4, "characters": 6, "thai": 10}  # docs/judge.md: a quote's minimum substance per script


def fold(text: str) -> str:
    return " ".join(unicodedata.normalize("NFKC", text.translate(_FOLD)).translate(_FOLD).split())


def tokens(text: str) -> list[str]:
    """A Han, Kana, Hangul or Thai character each; else a run of letters, digits and marks; lower-cased."""
    found, run = [], ""
    for char in fold(text).lower():
        if _CHARACTERS.match(char) and not unicodedata.category(char).startswith("M"):
            found += [run] if run else []
            found.append(char)
            run = ""
        elif char.isalnum() or unicodedata.category(char).startswith("M"):
            if unicodedata.category(char).startswith("M") and found and not run:
                found[-1] += char  # a mark belongs to the character before it
            else:
                run += char
        else:
            found += [run] if run else []
            run = ""
    return found + ([run] if run else [])


def substance(text: str) -> float:
    """The share of the minimum a quote reaches: words / 4 + Han, Kana or Hangul characters / 6 + Thai / 10."""
    total = 0.0
    for token in tokens(text):
        if "\u0e00" <= token[0] <= "\u0e7f":
            total += 1 / MINIMUM["thai"]
        elif _CHARACTERS.match(token[0]):
            total += 1 / MINIMUM["characters"]
        else:
            total += 1 / MINIMUM["words"]
    return total


def _word_char(char: str) -> bool:
    return (char.isalnum() or unicodedata.category(char).startswith("M")) and not _CHARACTERS.match(char)


def oracle_status(doc: str, quote: str) -> str:
    if substance(quote) < 1 - 1e-9:
        return UNSUPPORTED
    folded, needle = fold(doc), fold(quote)
    at = folded.find(needle)
    while at >= 0:
        before, after = folded[at - 1:at], folded[at + len(needle):at + len(needle) + 1]
        if not (before and _word_char(before) and _word_char(needle[0])) and \
                not (after and _word_char(after) and _word_char(needle[-1])) and \
                not (after and unicodedata.category(after).startswith("M")):
            return EXACT
        at = folded.find(needle, at + 1)
    wanted = tokens(quote)
    if not wanted:
        return UNSUPPORTED
    matcher = difflib.SequenceMatcher(None, tokens(doc), wanted, autojunk=False)
    return CLOSE if matcher.find_longest_match().size == len(wanted) else UNSUPPORTED


def token_changes(source: str, altered: str) -> list[tuple[str, str]]:
    """difflib's (source side, altered side) of each changed stretch of tokens."""
    a, b = tokens(source), tokens(altered)
    return [("".join(a[i1:i2]), "".join(b[j1:j2]))
            for tag, i1, i2, j1, j2 in difflib.SequenceMatcher(None, a, b, autojunk=False).get_opcodes()
            if tag != "equal"]


# --- planted Chinese quotes -------------------------------------------------------------------------

@dataclass(frozen=True)
class Planted:
    kind: str
    document: int  # index into the set's documents
    quote: str
    expected: str  # the oracle's status
    source: str = ""  # the passage an altered quote was made from


GENUINE = ("copy: whole sentence", "copy: mid-sentence", "copy: across a paragraph break",
           "spacing: spaces between characters", "spacing: paragraph break removed")
ALTERED = ("altered: one digit", "altered: negation added", "altered: negation removed", "altered: name swapped")
PER_KIND = {**dict.fromkeys(GENUINE[:3], 200), GENUINE[3]: 150, GENUINE[4]: 100, **dict.fromkeys(ALTERED, 100)}


def _span(doc: str, rng: random.Random, *, across: bool = False) -> tuple[int, int] | None:
    """A passage of 6-30 characters, starting and ending on Han characters (inside a sentence)."""
    if across:
        breaks = [m.start() for m in re.finditer("\n\n", doc)]
        at = rng.choice(breaks)
        start, end = at - rng.randint(4, 14), at + 2 + rng.randint(4, 14)
    else:
        start = rng.randrange(len(doc) - 32)
        end = start + rng.randint(6, 30)
    if start < 0 or end > len(doc) or not (_CHARACTERS.match(doc[start]) and _CHARACTERS.match(doc[end - 1])):
        return None
    if not across and "\n" in doc[start:end]:
        return None
    return start, end


def _alter(kind: str, passage: str, rng: random.Random) -> str | None:
    if kind == "altered: one digit":
        digits = [m.start() for m in re.finditer(r"\d", passage)]
        if not digits:
            return None
        at = rng.choice(digits)
        return passage[:at] + str((int(passage[at]) + rng.randint(1, 9)) % 10) + passage[at + 1:]
    if kind == "altered: negation added":
        verbs = [(m.start(), verb, negated) for verb, negated in ZH_VERBS for m in re.finditer(verb, passage)
                 if not passage[:m.start()].endswith(negated[0])]
        if not verbs:
            return None
        at, verb, negated = rng.choice(verbs)
        return passage[:at] + negated + passage[at + len(verb):]
    if kind == "altered: negation removed":
        marks = [m.start() for m in re.finditer("[不没无非]", passage)]
        if not marks:
            return None
        at = rng.choice(marks)
        return passage[:at] + passage[at + 1:]
    names = [m for m in re.finditer(f"[{ZH_SURNAMES}](?:{'|'.join(ZH_GIVEN)})", passage)]
    if not names:
        return None
    match = rng.choice(names)
    other = match.group()
    while other == match.group():
        other = _zh_name(rng)
    return passage[:match.start()] + other + passage[match.end():]


def chinese_quote_set(seed: int = 36, documents: int = 25) -> tuple[list[str], list[Planted]]:
    """Documents and at least 1,000 quotes planted in them (see PER_KIND), each with the oracle's status."""
    rng = random.Random(seed)
    docs = [document(rng, script="zh", paragraphs=8) for _ in range(documents)]
    planted: list[Planted] = []
    for kind, count in PER_KIND.items():
        made = 0
        while made < count:
            d = rng.randrange(len(docs))
            doc = docs[d]
            across = kind in ("copy: across a paragraph break", "spacing: paragraph break removed")
            span = _span(doc, rng, across=across)
            if span is None:
                continue
            passage = doc[span[0]:span[1]]
            if kind == "copy: whole sentence":
                sentences = re.findall(r"[^。\n]+。", doc)
                passage = rng.choice(sentences)
            if substance(passage) < 1:
                continue  # under the minimum: a genuine quote is long enough (too short ones are tested apart)
            if kind == "spacing: spaces between characters":
                # Between two characters of which one is Han: a space inside 1871 or a Latin word changes a token.
                places = [i for i in range(1, len(passage))
                          if _CHARACTERS.match(passage[i - 1]) or _CHARACTERS.match(passage[i])]
                cuts = sorted(rng.sample(places, k=min(3, len(places))))
                quote = "".join(passage[a:b] + " " for a, b in zip([0] + cuts, cuts)) + passage[cuts[-1]:]
            elif kind == "spacing: paragraph break removed":
                quote = passage.replace("\n\n", "")
            elif kind.startswith("altered"):
                quote = _alter(kind, passage, rng)
                if quote is None:
                    continue
            else:
                quote = passage
            expected = oracle_status(doc, quote)
            if kind.startswith("altered") and expected != UNSUPPORTED:
                continue  # the alteration happens to be in the document too: not an altered quote
            planted.append(Planted(kind, d, quote, expected, passage if kind.startswith("altered") else ""))
            made += 1
    return docs, planted
