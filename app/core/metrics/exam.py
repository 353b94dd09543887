"""L-Eval exam exact match and the per-task answer extraction in front of it."""

from __future__ import annotations

import re
from typing import Sequence

from app.core.metrics.normalize import em_normalize
from app.core.metrics.profiles import FIXED, OFFICIAL, resolve_profile

OPTION_TASKS = ("coursera", "quality", "tpo")
MULTI_ANSWER_TASKS = ("coursera",)

# --- task routing --------------------------------------------------------------


def task_kind(task: str) -> str:
    """Classify a task the way L-Eval routes it: options, math, code, topic, judge or plain.

    Upstream tests substrings of the whole file path; only the task name is used here.
    """
    if any(name in task for name in OPTION_TASKS):
        return "options"
    if "gsm" in task:
        return "math"
    if "codeU" in task:
        return "code"
    if "topic_retrieval_longchat" in task:
        return "topic"
    if "sci_fi" in task:
        return "judge"
    return "plain"


# --- the exact-match rule ----------------------------------------------------


def em_score(prediction: str, answer: str, profile: str = OFFICIAL, *, option_answer: bool | None = None) -> float:
    """Score one extracted prediction against one answer: 1, 0.25 or 0.

    ``option_answer`` forces the letter rule on or off; by default the answer
    decides (all of its normalised characters are A-D).  In the fixed profile
    an empty prediction never earns the 0.25 partial credit.
    """
    norm_answer = em_normalize(answer)
    if option_answer is None:
        option_answer = all(ch in "ABCD" for ch in norm_answer)
    if option_answer:
        norm_prediction = em_normalize(prediction)
        if norm_prediction == norm_answer:
            return 1
        partial = set(norm_prediction) <= set(norm_answer)
        if resolve_profile(profile) != OFFICIAL:
            partial = partial and bool(norm_prediction)
        return 0.25 if partial else 0
    try:
        return int(float(prediction) == float(answer))
    except ValueError:
        return int(answer.lower().replace(" ", "") in prediction.lower().replace(" ", ""))


# --- option letters (coursera, quality, tpo) --------------------------------

_CAPITAL_OPTION_RE = re.compile(r"\s*[A-Z](?=[\s.)])")
# A letter standing alone; a capital "A" followed by a lowercase word is the article.
_LONE_LETTER = r"(?:[B-D]|A(?!\s+[a-z]))(?![A-Za-z0-9'’])"
_LEADING_LETTER_RE = re.compile(r"^[\s(\[*\"'“]*(" + _LONE_LETTER + ")")
_STATED_LETTER_RE = re.compile(
    r"(?i:answer|option|choice)s?\s*(?i:is|are|would be|should be)?\s*:?\s*[(\[]?(" + _LONE_LETTER + ")"
)
_BRACKETED_LETTER_RE = re.compile(r"[(\[]([A-D])[)\]]")
_STANDALONE_LETTER_RE = re.compile(r"(?<![A-Za-z0-9'’])(" + _LONE_LETTER + ")")
_LETTER_RUN = r"(?:[B-D]|A(?!\s+[a-z]))(?:(?:[\s,;&/+(\[)\]]|\band\b|\bor\b)*(?:[B-D]|A(?!\s+[a-z])))*(?![A-Za-z0-9'’])"
_LEADING_RUN_RE = re.compile(r"^[\s(\[*\"'“]*(" + _LETTER_RUN + ")")
_STATED_RUN_RE = re.compile(r"(?i:answers?|options?|choices?)\s*(?i:is|are)?\s*:?\s*[(\[]?(" + _LETTER_RUN + ")")
# An option label such as "B." or "(C)" followed by its text: "A. Plus sign and B. Minus sign".
_OPTION_LABEL_RE = re.compile(r"(?<![A-Za-z0-9'’(\[])[(\[]?([A-D])[)\].:](?=\s|$)")


def official_option_letters(response: str, multi_answer: bool) -> str:
    """Extract option letters as L-Eval's ``process_output_mc`` does, quirks included."""
    if not response.strip():
        return "None"
    if response in "ABCD":  # a substring test: "BC" or "ABCD" come back unchanged
        return response
    if not multi_answer:
        first = re.search(r"[ABCD]", response)  # the first capital A-D anywhere, e.g. the B of "Based"
        if first:
            return first.group()
    lead = re.match(r"[ABCD]*", response).group()
    if len(lead) > 1:
        return "".join(sorted(set(lead)))
    rest = response[len(lead):].split("Question")[0]
    found = lead + " ".join(_CAPITAL_OPTION_RE.findall(rest)).strip()
    letters = "".join(sorted(set(re.sub(r"[^A-D]", "", found))))
    if not letters:
        run = re.search(r"[ABCD]+", rest)
        letters = run.group() if run else ""
    return letters or "A"  # upstream's "random guess"


def fixed_option_letters(response: str, multi_answer: bool) -> str:
    """Extract option letters from their position and wording; return "" when none is given."""
    text = response.split("Question")[0]  # models often go on to invent the next question
    if not multi_answer:
        for pattern in (_LEADING_LETTER_RE, _STATED_LETTER_RE, _BRACKETED_LETTER_RE, _STANDALONE_LETTER_RE):
            match = pattern.search(text)
            if match:
                return match.group(1)
        return ""
    letters: set[str] = set()
    for pattern in (_LEADING_RUN_RE, _STATED_RUN_RE):
        match = pattern.search(text)
        if match:
            letters.update(re.findall(r"[A-D]", match.group(1)))
    letters.update(_OPTION_LABEL_RE.findall(text))
    if not letters:
        letters.update(_BRACKETED_LETTER_RE.findall(text))
    if not letters:
        letters.update(_STANDALONE_LETTER_RE.findall(text))
    return "".join(sorted(letters))


def option_answer_letters(answer: str, profile: str = OFFICIAL) -> str:
    """Read the letters of an option answer from its first word ("(D) Because ..." gives "D")."""
    words = answer.split()
    letters = re.sub(r"[^A-D]", "", words[0]) if words else ""
    if resolve_profile(profile) == OFFICIAL:
        return letters or "A"
    return "".join(sorted(set(letters)))


# --- gsm100 ----------------------------------------------------------------------

_NUMBER_RE = re.compile(r"[-−]?\d[\d,]*(?:\.\d+)?")


def official_math_answer(text: str) -> str:
    """Extract the answer like L-Eval's ``process_math``: digits only, cut at the first '.'."""
    match = re.search(r"The answer is (\S+)", text)
    if match:
        token = match.group(1)
    else:
        words = text.split("\n\n")[0].split(" ")
        token = next((w for w in reversed(words) if any(ch.isdigit() for ch in w)), "")
    # Signs, commas and everything after a '.' are lost: "-3.5" gives "3".
    return "".join(ch for ch in token.split(".")[0] if ch.isdigit())


def fixed_math_answer(text: str) -> str:
    """Extract the signed decimal number after "the answer is", else the last number of the first paragraph."""
    stated = re.search(r"(?i)the answer is(.*)", text)
    numbers = _NUMBER_RE.findall(stated.group(1)) if stated else []
    if numbers:
        number = numbers[0]
    else:
        numbers = _NUMBER_RE.findall(text.split("\n\n")[0])
        number = numbers[-1] if numbers else ""
    return number.replace(",", "").replace("−", "-")


def fixed_math_match(prediction: str, answer: str) -> int:
    """Compare two extracted numbers by value; a missing number never matches."""
    if not prediction or not answer:
        return 0
    return int(float(prediction) == float(answer))


# --- codeU -----------------------------------------------------------------------

_CODE_FILLERS = ("will be", "of the code", "is", "would be", "the value of", "the result of", "printed")


def _code_clean(text: str, profile: str) -> str:
    text = re.sub(r"\s+", " ", text).replace(",", "").replace("'", "").replace("\\", "")
    if resolve_profile(profile) == OFFICIAL:
        text = text.replace(".0", "")  # also turns "10.05" into "105"
    else:
        text = re.sub(r"(\d)\.0+(?![0-9])", r"\1", text)  # only a zero fraction: "3.0" -> "3"
    return text.replace("] [", "][").replace("[ [", "[[").replace("] ]", "]]")


def code_answer(answer: str, profile: str = OFFICIAL) -> str:
    """Clean a codeU answer (commas, quotes, backslashes and ".0" dropped)."""
    return _code_clean(answer, profile)


def official_code_output(response: str, answer: str) -> str:
    """Cut the prediction down to the words that should hold the output, as L-Eval does."""
    keep = len(answer.split()) + 3
    text = _code_clean(response, OFFICIAL)
    for filler in _CODE_FILLERS:
        text = text.replace(filler, "")  # plain substring removal: "list" becomes "lt"
    if "the final output" in text:
        return " ".join(re.split(r"\s+", text.split("the final output")[-1])[:keep])
    return " ".join(re.split(r"\s+", text)[-keep:])


def fixed_code_windows(response: str, answer: str) -> list[str]:
    """Return the stretches that should hold the output: the words after the last "final output"
    (any case) and the last words of the response, both as long as the official cut.

    Fillers are removed only as whole words, and never when the answer itself contains them.
    """
    keep = len(answer.split()) + 3
    text = _code_clean(response, FIXED)
    lowered_answer = answer.lower()
    for filler in _CODE_FILLERS:
        if not re.search(rf"\b{filler}\b", lowered_answer):
            text = re.sub(rf"(?i)\b{filler}\b", "", text)
    windows = [" ".join(text.split()[-keep:])]
    parts = re.split(r"(?i)the final output", text)
    if len(parts) > 1:
        windows.insert(0, " ".join(parts[-1].split()[:keep]))
    return windows


def fixed_code_match(prediction: str, answer: str) -> int:
    """Find the answer in the prediction ignoring case and spaces, but not inside a longer number or word."""
    try:
        return int(float(prediction) == float(answer))
    except ValueError:
        pass
    squeezed = answer.lower().replace(" ", "")
    if not squeezed:
        return int(not prediction.strip())
    body = r"\s*".join(re.escape(ch) for ch in squeezed)
    pattern = rf"(?<![0-9a-z.]){body}" if squeezed[0].isalnum() else body
    pattern += r"(?![0-9a-z])" if squeezed[-1].isalnum() else ""
    return int(re.search(pattern, prediction.lower()) is not None)


# --- sci_fi ----------------------------------------------------------------------


def split_judge_answer(text: str, profile: str = OFFICIAL) -> tuple[str, str] | None:
    """Split "<loyalty> [fact: <fact>]" into its lowercased parts; None when "[fact:" is missing."""
    lowered = text.lower()
    if "[fact:" not in lowered:
        return None
    loyalty, fact = lowered.split("[fact:")[:2]
    if resolve_profile(profile) == OFFICIAL:
        fact = fact[:-1]  # upstream assumes a closing "]" and drops the last character blindly
    else:
        fact = fact.strip().removesuffix("]")
    return loyalty.strip(), fact.strip()


def judge_verdict(text: str, profile: str = OFFICIAL) -> str:
    """Return "true"/"false" from the first word carrying one, else "<error>"."""
    for word in text.split():
        if resolve_profile(profile) == OFFICIAL:
            # Substring test: "untrue" counts as "true".
            if "true" in word:
                return "true"
            if "false" in word:
                return "false"
        else:
            verdict = re.fullmatch(r"\W*(true|false)\W*", word)
            if verdict:
                return verdict.group(1)
    return "<error>"


def judge_scores(prediction: str, answer: str, profile: str = OFFICIAL) -> tuple[float, float]:
    """Score sci_fi's loyalty and fact verdicts (each 1 or 0)."""
    expected = split_judge_answer(answer, profile) or (answer.lower().strip(), "")
    parts = split_judge_answer(prediction, profile)
    if parts is None:
        if resolve_profile(profile) == OFFICIAL:
            return 0, 0  # upstream raises IndexError here; the row scores 0 instead
        parts = (prediction.lower(), "")
    verdicts = [judge_verdict(part, profile) for part in parts]
    return tuple(em_score(v, e, profile) for v, e in zip(verdicts, expected))  # type: ignore[return-value]


# --- one exam row ----------------------------------------------------------------


def exam_item(task: str, prediction: str, references: Sequence[str], profile: str = OFFICIAL,
              index: int | None = None) -> dict[str, float]:
    """Score one exam row; values are on the 0-100 scale."""
    profile = resolve_profile(profile)
    if not references:
        raise ValueError("exact match needs at least one reference")
    official = profile == OFFICIAL
    kind = task_kind(task)
    if kind == "judge":
        scored = [judge_scores(prediction, ref, profile) for ref in references]
        loyalty, fact = max(s[0] for s in scored), max(s[1] for s in scored)
        return {"loyalty": 100.0 * loyalty, "fact": 100.0 * fact, "exact_match": 50.0 * (loyalty + fact)}
    if kind == "options":
        multi = any(name in task for name in MULTI_ANSWER_TASKS)
        extract = official_option_letters if official else fixed_option_letters
        letters = extract(prediction, multi)
        answers = [option_answer_letters(ref, profile) for ref in references]
        if official:
            score = max(em_score(letters, answer, profile) for answer in answers)
        else:
            score = max((em_score(letters, answer, profile, option_answer=True) for answer in answers if answer),
                        default=0)
    elif kind == "math":
        if official:
            score = max(em_score(official_math_answer(prediction), official_math_answer(ref), profile)
                        for ref in references)
        else:
            score = max(fixed_math_match(fixed_math_answer(prediction), fixed_math_answer(ref)) for ref in references)
    elif kind == "code":
        if official:
            score = max(em_score(official_code_output(prediction, ref), code_answer(ref, profile), profile)
                        for ref in references)
        else:
            score = max(max(fixed_code_match(window, code_answer(ref, profile))
                            for window in fixed_code_windows(prediction, ref))
                        for ref in references)
    else:
        option_answer = None if official or kind == "plain" else False
        score = max(em_score(prediction, ref, profile, option_answer=option_answer) for ref in references)
    item = {"exact_match": 100.0 * score}
    if kind == "topic" and index is not None:
        item["group"] = float(index % 3)  # rows cycle through the 1st/2nd/3rd topic
    return item
