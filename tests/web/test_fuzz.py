"""Property tests: random JSON lines into the importers, the upload endpoint and the score API.

Every input either imports fully or fails with an error naming its line; never a crash (a 500),
never a partial import. Lines are built from real demo rows, then broken the ways files break:
wrong types, missing or extra keys, odd Unicode (lone surrogates too), huge strings and numbers,
deep nesting, invalid UTF-8, a BOM, CRLF, blank lines, a line cut short.
"""
from __future__ import annotations

import io
import itertools
import json
import tempfile
import zipfile
from pathlib import Path

import pytest
from hypothesis import HealthCheck, assume, event, given, settings
from hypothesis import strategies as st
from sqlalchemy import func, select

from app.extensions import db
from app.models import Prediction, PredictionFile, Score, ScoreRevision, System, User
from app.services import summary
from app.services.importers import import_path
from app.core.metrics.files import FileFormatError as ImportFailure
from app.core.metrics.files import parse_jsonl
from app.services.judge.settings import SettingsError, parse_prices
from app.services.uploads import load_batch
from app.services.uploads.archive import UploadRejected, ZipLimits, read_zip
from tests.support.scoring_helpers import ANSWERS_RE
from tests.support.predictions import demo_rows, post_upload

FUZZ = settings(max_examples=60, deadline=None, derandomize=True, suppress_health_check=[
    HealthCheck.function_scoped_fixture, HealthCheck.too_slow, HealthCheck.data_too_large])
PRED_KEY = "fuzz_pred"
# Errors about a whole file rather than one of its lines.
FILE_LEVEL = ("the file has no JSON lines", "no row matches a stored question")
# Rows of the demo that match stored questions: human-eval answers and exam answers.
BASE_ROWS = [
    {"query": row["query"], "gt": row["gt"], PRED_KEY: next(v for k, v in row.items() if k.endswith("_pred")),
     "evaluation": row["evaluation"]}
    for relative in ("human_eval/terse-13b.pred.jsonl", "exam_eval/terse-13b/quality.pred.jsonl")
    for row in demo_rows(relative)
]
_names = itertools.count(1)

odd_text = st.one_of(
    st.text(max_size=20),
    st.text(alphabet=st.characters(categories=["Cs"]), min_size=1, max_size=2),  # lone surrogates
    st.sampled_from(["\u202e", "\u2028\u2029", "\x00", "\ufeff", "\r", "\x85", "e\u0301", "\U0001d518", "\U0010ffff",
                     "<script>x</script>", "'; DROP TABLE scores; --"]),
    st.integers(3, 6).map(lambda k: "ü" * 10 ** k),  # up to a million characters
)
any_json = st.recursive(
    st.none() | st.booleans() | st.integers() | st.floats() | odd_text,
    lambda inner: st.lists(inner, max_size=3) | st.dictionaries(odd_text, inner, max_size=3),
    max_leaves=6,
)
BREAKAGES = ("wrong type", "missing key", "extra key", "odd text", "huge number", "deep nesting", "invalid utf-8",
             "cut short", "not an object", "not json")


@st.composite
def jsonl_file(draw) -> tuple[bytes, bool, int]:
    """Return (file bytes, whether every line is a good row, number of non-blank lines)."""
    picks = draw(st.lists(st.integers(0, len(BASE_ROWS) - 1), min_size=0, max_size=6, unique=True))
    lines, good = [], True
    for index in picks:
        row = dict(BASE_ROWS[index])
        if draw(st.integers(0, 2)) == 0:
            good = False
            lines.append(_break(draw, row, draw(st.sampled_from(BREAKAGES))))
        else:
            lines.append(_encode(draw, row))
    for _ in range(draw(st.integers(0, 2))):  # blank lines anywhere are skipped
        lines.insert(draw(st.integers(0, len(lines))), draw(st.sampled_from([b"", b"   ", b"\t"])))
    separator = draw(st.sampled_from([b"\n", b"\r\n"]))
    raw = separator.join(lines) + (separator if draw(st.booleans()) else b"")
    if draw(st.booleans()):
        raw = b"\xef\xbb\xbf" + raw
    return raw, good and bool(picks), len(picks)


def _encode(draw, value) -> bytes:
    # ensure_ascii=False writes a lone surrogate raw, which "surrogatepass" turns into invalid UTF-8.
    text = json.dumps(value, ensure_ascii=draw(st.booleans()))
    return text.encode("utf-8", "surrogatepass")


def _break(draw, row: dict, how: str) -> bytes:
    key = draw(st.sampled_from(sorted(row)))
    if how == "wrong type":
        row[key] = draw(st.one_of(st.none(), st.booleans(), st.integers(), st.floats(), st.lists(st.integers(), max_size=2),
                                  st.dictionaries(st.text(max_size=3), st.integers(), max_size=2)))
    elif how == "missing key":
        del row[key]
    elif how == "extra key":
        row[draw(odd_text)] = draw(any_json)
    elif how == "odd text":
        row[key] = draw(odd_text)
    elif how == "huge number":
        return _encode(draw, row)[:-1] + b', "n": ' + b"9" * draw(st.sampled_from([4301, 10_000])) + b"}"
    elif how == "deep nesting":
        depth = draw(st.sampled_from([50, 5_000, 100_000]))
        return _encode(draw, row)[:-1] + b', "deep": ' + b"[" * depth + b"]" * depth + b"}"
    elif how == "invalid utf-8":
        encoded = _encode(draw, row)
        cut = draw(st.integers(0, len(encoded)))
        return encoded[:cut] + draw(st.sampled_from([b"\xff", b"\xc3", b"\xed\xa0\x80", b"\xf8\x88\x80\x80\x80"])) + encoded[cut:]
    elif how == "cut short":
        encoded = _encode(draw, row)
        return encoded[: draw(st.integers(1, len(encoded) - 1))]
    elif how == "not an object":
        return _encode(draw, draw(st.one_of(st.lists(st.integers(), max_size=2), st.integers(), st.text(max_size=5),
                                            st.none())))
    elif how == "not json":
        return b"#" + draw(st.binary(max_size=40)).replace(b"\n", b" ")
    return _encode(draw, row)


def counts(app) -> dict:
    with app.app_context():
        found = summary.counts()
        found["prediction_files"] = db.session.scalar(select(func.count()).select_from(PredictionFile))
        return found


def assert_names_its_line(error: dict, raw: bytes) -> None:
    if error["line"] is None:
        assert error["message"].startswith(FILE_LEVEL), error
    else:
        assert 1 <= error["line"] <= raw.count(b"\n") + 1, error


@given(st.data())
@FUZZ
def test_parse_jsonl_returns_every_line_or_names_the_bad_one(data):
    raw, good, lines = data.draw(jsonl_file())
    try:
        rows = parse_jsonl(raw, "fuzz.pred.jsonl")
    except ImportFailure as failure:
        event("refused")
        assert not good
        assert_names_its_line(failure.as_dict(), raw)
        assert str(failure).startswith("fuzz.pred.jsonl")
        return
    assert len(rows) == lines and all(isinstance(row.data, dict) for row in rows)


@given(st.data())
@FUZZ
def test_import_path_imports_a_file_whole_or_not_at_all(demo, tmp_path_factory, data):
    raw, good, lines = data.draw(jsonl_file())
    system = f"fuzz{next(_names)}"
    path = tmp_path_factory.mktemp("fuzz") / f"{system}.pred.jsonl"
    path.write_bytes(raw)
    before = counts(demo)
    with demo.app_context():
        report = import_path(path)
    after = counts(demo)
    (file,) = report.files
    event("refused" if file.error else "imported")
    if file.error:
        assert not good, file.error
        assert_names_its_line(file.error, raw)
        assert after == before, "a rejected file must leave nothing behind"
        return
    assert file.rows == lines and file.counts["matched"] + file.counts["unmatched"] == lines
    with demo.app_context():
        stored = db.session.scalar(select(func.count(Prediction.id)).join(System).where(System.name == system))
    assert stored == file.counts["created"] == file.counts["matched"]
    assert after["predictions"] == before["predictions"] + stored
    if good:
        assert file.counts["unmatched"] == 0


@given(st.data())
@FUZZ
def test_upload_preview_and_confirm_never_fail_and_never_import_in_part(demo, client, auth, data):
    raw, good, lines = data.draw(jsonl_file())
    system = f"upload{next(_names)}"
    auth.login("researcher")
    before = counts(demo)
    response = post_upload(client, auth, [(f"{system}.pred.jsonl", raw)])
    assert response.status_code == 302, response.status_code
    batch_id = response.headers["Location"].rsplit("/", 1)[-1]
    assert client.get(f"/predictions/uploads/{batch_id}").status_code == 200
    with demo.app_context():
        researcher = db.session.scalar(select(User.id).where(User.username == "researcher"))
        (preview,) = load_batch(batch_id, researcher).files
    event("refused" if preview.errors else "imported")
    for error in preview.errors:
        assert_names_its_line(error, raw)
    if good:
        assert preview.ok and preview.matched == lines, preview.errors
    assert counts(demo) == before, "the preview must not write"
    confirmed = client.post(f"/predictions/uploads/{batch_id}/confirm", data={"csrf_token": auth.token()})
    assert confirmed.status_code == 302, confirmed.status_code
    after = counts(demo)
    if not preview.ok:
        assert after == before, "a file with errors must import nothing"
        return
    with demo.app_context():
        stored = db.session.scalar(select(func.count(Prediction.id)).join(System).where(System.name == system))
    assert stored == preview.matched and after["predictions"] == before["predictions"] + stored


@st.composite
def score_body(draw, study_id: int, question_id: int, answers: dict[str, str]) -> bytes:
    """A save of the real question, often with one field broken, or something else entirely."""
    label = draw(st.sampled_from(sorted(answers)))
    body = {"study": study_id, "question_id": question_id, "label": label, "answer": answers[label],
            "value": draw(st.integers(1, 5))}
    if draw(st.booleans()):
        body["comment"] = draw(odd_text)
    if draw(st.booleans()):
        body["round"] = 1
    how = draw(st.sampled_from(["valid", "valid", "broken field", "extra key", "not a save"]))
    if how == "broken field":
        body[draw(st.sampled_from(sorted(body)))] = draw(
            any_json | st.sampled_from([0, -1, 6, 10**30, True, 3.0, "4", "", "Z", "a", [1], {"v": 1}]))
    elif how == "extra key":
        body[draw(odd_text)] = draw(any_json)
    elif how == "not a save":
        return draw(st.one_of(any_json.map(lambda value: json.dumps(value).encode()), st.binary(max_size=60),
                              st.sampled_from([1000, 100_000]).map(lambda depth: b"[" * depth + b"]" * depth)))
    return json.dumps(body).encode()


@given(st.data())
@FUZZ
def test_score_api_answers_every_body_with_a_save_or_a_4xx(demo, client, auth, data):
    auth.login("annotator")
    first = client.get("/annotate/", follow_redirects=True)
    study_id, question_id = int(first.request.path.split("/")[2]), int(first.request.path.rsplit("/", 1)[-1])
    answers = dict(ANSWERS_RE.findall(first.get_data(as_text=True)))
    token = auth.token()
    raw = data.draw(score_body(study_id, question_id, answers))
    with demo.app_context():
        before = (db.session.scalar(select(func.count(Score.id))), db.session.scalar(select(func.count(ScoreRevision.id))))
    response = client.post("/annotate/api/score", data=raw,
                           headers={"Content-Type": "application/json", "X-CSRFToken": token})
    event(f"HTTP {response.status_code}")
    assert response.status_code in (200, 400, 404, 409), response.status_code  # 404: a study or question not theirs
    answer = response.get_json()
    with demo.app_context():
        after = (db.session.scalar(select(func.count(Score.id))), db.session.scalar(select(func.count(ScoreRevision.id))))
    if response.status_code == 200:
        assert answer["saved"] is True and answer["value"] == json.loads(raw)["value"]
    else:
        assert answer["error"] and after == before, "a refused save must write nothing"


@given(st.one_of(any_json.map(json.dumps), st.text(max_size=50),
                 st.sampled_from(["{\"m\": [" + "1" * 5000 + ", 1]}", "[" * 100_000, "{\"m\": [1e999, 1]}"])))
@FUZZ
def test_price_table_is_parsed_or_refused_with_a_reason(text):
    try:
        prices = parse_prices(text)
    except SettingsError as exc:
        assert str(exc)
        return
    assert all(p.prompt_per_million >= 0 and p.completion_per_million >= 0 for p in prices.values())


def _zip(compression: int) -> bytes:
    buffer = io.BytesIO()
    with zipfile.ZipFile(buffer, "w", compression=compression) as archive:
        archive.writestr("m/quality.pred.jsonl", b"".join(_line(row) for row in BASE_ROWS[:8]))
        archive.writestr("m.pred.jsonl", b"".join(_line(row) for row in BASE_ROWS[8:]))
    return buffer.getvalue()


def _line(row: dict) -> bytes:
    return json.dumps(row).encode() + b"\n"


ZIPS = {method: _zip(method) for method in (zipfile.ZIP_STORED, zipfile.ZIP_DEFLATED, zipfile.ZIP_BZIP2, zipfile.ZIP_LZMA)}


@given(method=st.sampled_from(sorted(ZIPS)), flips=st.lists(st.tuples(st.floats(0, 1, exclude_max=True),
                                                                      st.integers(0, 255)), min_size=1, max_size=8),
       cut=st.none() | st.floats(0, 1))
@settings(max_examples=300, deadline=None, derandomize=True)
def test_damaged_zips_are_read_whole_or_refused(method, flips, cut):
    data = bytearray(ZIPS[method])
    for where, byte in flips:
        data[int(where * len(data))] = byte
    if cut is not None:
        data = data[: int(cut * len(data))]
    assume(bytes(data) != ZIPS[method])
    with tempfile.TemporaryDirectory() as spool:
        try:
            unpacked = read_zip("damaged.zip", io.BytesIO(bytes(data)), ZipLimits(max_bytes=1 << 20, max_members=10),
                                Path(spool))
        except UploadRejected as exc:
            assert str(exc).startswith("damaged.zip: ")
            assert not list(Path(spool).iterdir()), "a refused zip leaves no spooled member behind"
            return
        assert all(member.name.endswith(".jsonl") and member.path.is_file() for member in unpacked.members)


# The inputs these properties found first: each was a 500 before it was fixed.
FOUND = [
    (b'"n": ' + b"9" * 5000, "a number of 5,000 characters; at most 300 are read", "n"),
    (b'"n": ' + b"[" * 100_000 + b"]" * 100_000, "JSON nested deeper than 100 levels", "n"),
    (b'"n": "\\udc00 half a pair"', "half of a surrogate pair", None),
]


@pytest.mark.parametrize("extra, message, field", FOUND, ids=["huge number", "deep nesting", "lone surrogate"])
def test_lines_that_crashed_the_reader_are_refused_with_their_line(demo, client, auth, extra, message, field):
    good = _line(BASE_ROWS[0])
    raw = good + good.replace(b"}\n", b", " + extra + b"}\n").replace(BASE_ROWS[0]["query"].encode(), b"another")
    with pytest.raises(ImportFailure) as failure:
        parse_jsonl(raw, "found.pred.jsonl")
    assert failure.value.line == 2 and message in failure.value.message and failure.value.field == field
    auth.login("researcher")
    before = counts(demo)
    response = post_upload(client, auth, [("found.pred.jsonl", raw)])
    page = client.get(response.headers["Location"]).get_data(as_text=True)
    assert message.split(":")[-1].strip()[:30] in page and "found.pred.jsonl" in page
    client.post(response.headers["Location"] + "/confirm", data={"csrf_token": auth.token()})
    assert counts(demo) == before


def test_a_comment_with_half_a_surrogate_pair_is_refused_not_a_500(demo, client, auth):
    auth.login("annotator")
    path = client.get("/annotate/", follow_redirects=True).request.path  # /annotate/<study>/q/<question>
    study_id, question_id = int(path.split("/")[2]), int(path.rsplit("/", 1)[-1])
    body = (b'{"study": %d, "question_id": %d, "label": "A", "value": 3, "answer": "%s", "comment": "\\ud800"}'
            % (study_id, question_id, b"a" * 64))
    response = client.post("/annotate/api/score", data=body,
                           headers={"Content-Type": "application/json", "X-CSRFToken": auth.token()})
    assert response.status_code == 400 and response.get_json()["field"] == "comment"


def test_a_zip_with_a_corrupt_member_is_refused_not_a_500():
    for method, damaged in ((zipfile.ZIP_DEFLATED, "zlib"), (zipfile.ZIP_LZMA, "lzma")):
        data = bytearray(ZIPS[method])
        info = zipfile.ZipFile(io.BytesIO(ZIPS[method])).infolist()[0]
        start = info.header_offset + 30 + len(info.filename)  # the member's compressed bytes
        for offset in range(start + 8, start + 40):
            data[offset] ^= 0xFF
        with tempfile.TemporaryDirectory() as spool, pytest.raises(UploadRejected, match="cannot be read"):
            read_zip("damaged.zip", io.BytesIO(bytes(data)), ZipLimits(max_bytes=1 << 20, max_members=10), Path(spool))
