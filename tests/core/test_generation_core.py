"""Truncation, token counting, manifests and prediction rows of app.core.generation."""
from __future__ import annotations

import time

import pytest

from app.core.generation import manifest, predfile, tokens, truncate

pytestmark = pytest.mark.database_free  # a pure core: the PostgreSQL pass leaves it out


def words(n: int) -> str:
    return " ".join(f"w{i}" for i in range(n))


def per_piece(text: str) -> int:
    return len([p for p in text.split(" ") if p])


# --- truncation ------------------------------------------------------------------------------

def test_leval_cut_keeps_budget_minus_cnt_pieces_and_records_it():
    # Two tokens per piece: the first cut keeps 100 pieces (200 tokens), the next 100 - 250 -> empty.
    count = lambda text: 2 * per_piece(text)
    cut = truncate.truncate_leval(words(1000), 100, count)
    assert cut.text == ""
    assert (cut.tokens_before, cut.tokens_after, cut.rounds, cut.kept) == (2000, 0, 2, "start")
    assert cut.cut and cut.record()["chars_cut"] == len(words(1000))


def test_leval_cut_from_the_left_for_code_keeps_the_end():
    text = words(5000)
    cut = truncate.truncate_leval(text, 1000, per_piece, keep_end=True)
    assert cut.text == " ".join(text.split(" ")[-1000:])
    assert cut.kept == "end" and cut.rounds == 1 and cut.tokens_after == 1000


def test_leval_cut_leaves_a_fitting_document_alone():
    cut = truncate.truncate_leval("short text", 10, per_piece)
    assert not cut.cut and cut.rounds == 0 and cut.text == "short text"
    assert cut.record()["chars_cut"] == 0


def test_leval_cut_of_a_text_without_spaces_ends_empty_as_the_script_does():
    cut = truncate.truncate_leval("字" * 5000, 1000, tokens.estimate_tokens)
    assert cut.text == "" and cut.rounds >= 1


def test_fit_keeps_the_most_pieces_that_fit():
    text = words(5000)
    cut = truncate.truncate_fit(text, 777, per_piece)
    assert cut.text == " ".join(text.split(" ")[:777]) and cut.tokens_after == 777
    end = truncate.truncate_fit(text, 777, per_piece, keep_end=True)
    assert end.text == " ".join(text.split(" ")[-777:])


def test_fit_cuts_inside_a_text_without_spaces():
    cut = truncate.truncate_fit("字" * 5000, 1000, tokens.estimate_tokens)
    assert cut.text == "字" * 1000 and cut.tokens_after == 1000


@pytest.mark.parametrize("budget", [0, -5, 2.5, True, "10"])
def test_a_budget_must_be_a_positive_integer(budget):
    with pytest.raises(ValueError, match="positive integer"):
        truncate.truncate("x", budget, per_piece)


def test_document_budget_is_the_context_less_the_answer_room():
    assert truncate.document_budget(16000, 512) == 15488  # L-Eval's "16k" with max_new_tokens 512
    assert truncate.document_budget(16000, 512, 300) == 15188
    with pytest.raises(ValueError, match="leaves no room"):
        truncate.document_budget(512, 512)
    with pytest.raises(ValueError, match="unknown"):
        truncate.truncate("x", 5, per_piece, method="unknown")


# --- tokens ------------------------------------------------------------------------------------

@pytest.fixture(autouse=True)
def _no_forced_estimate(monkeypatch):
    monkeypatch.delenv("LEVAL_TOKENIZER", raising=False)


def test_estimate_counts_ascii_by_three_and_other_characters_one_each():
    assert tokens.estimate_tokens("") == 0
    assert tokens.estimate_tokens("abcd") == 2
    assert tokens.estimate_tokens("abc") == 1
    assert tokens.estimate_tokens("日本語") == 3
    assert tokens.estimate_tokens("naïve") == 3  # 4 ascii -> 2, plus 1


def test_openai_names_use_tiktoken_with_the_model_encoding():
    import tiktoken

    byte_level = tiktoken.Encoding(
        name="bytes", pat_str=r"\S+|\s+", mergeable_ranks={bytes([i]): i for i in range(256)}, special_tokens={}
    )
    loaded = []

    def loader(name):
        loaded.append(name)
        return byte_level, ""

    counter = tokens.counter_for("gpt-4o-2024-08-06", encoding_loader=loader)
    assert loaded == ["o200k_base"]
    assert counter.exact and counter.method == "tiktoken:o200k_base"
    assert counter("héllo <|endoftext|>") == len("héllo <|endoftext|>".encode("utf-8"))
    assert tokens.counter_for("openai/gpt-3.5-turbo", encoding_loader=loader).method == "tiktoken:cl100k_base"


def test_other_models_are_estimated_and_say_why():
    counter = tokens.counter_for("llama-3-8b-instruct")
    assert not counter.exact and counter.method == "estimate"
    assert "no tokenizer library is known for model 'llama-3-8b-instruct'" in counter.reason
    assert tokens.ESTIMATE_RULE in counter.reason
    assert counter("abcdef") == 2


def test_a_failed_load_falls_back_to_the_estimate_with_the_reason():
    counter = tokens.counter_for("gpt-4", encoding_loader=lambda name: (None, f"cannot load {name}"))
    assert not counter.exact and counter.reason.startswith("cannot load cl100k_base")


def test_the_estimate_can_be_forced(monkeypatch):
    monkeypatch.setenv("LEVAL_TOKENIZER", "estimate")
    assert tokens.counter_for("gpt-4").describe()["method"] == "estimate"


def test_tiktoken_without_its_vocabulary_falls_back_quickly(monkeypatch, tmp_path):
    # An empty cache and (on this machine) no internet: the counter must not hang.
    monkeypatch.setenv("TIKTOKEN_CACHE_DIR", str(tmp_path))
    monkeypatch.setenv("LEVAL_TIKTOKEN_TIMEOUT", "5")
    tokens.forget_loaded()
    try:
        started = time.monotonic()
        counter = tokens.counter_for("gpt-3.5-turbo")
        assert time.monotonic() - started < 8
        if counter.exact:  # a machine with internet downloaded it: then it counts for real
            assert counter.method == "tiktoken:cl100k_base" and counter("hello world") == 2
        else:
            assert counter.method == "estimate" and "cl100k_base" in counter.reason
    finally:
        tokens.forget_loaded()


# --- prediction rows ------------------------------------------------------------------------

def test_rows_have_leval_keys_in_leval_order():
    row = predfile.pred_row("Q", "G", "P", "my-model", "A", "human")
    assert list(row) == ["query", "gt", "prompt", "my-model_pred", "evaluation"]
    assert predfile.dumps_rows([row]) == '{"query": "Q", "gt": "G", "prompt": "P", "my-model_pred": "A", "evaluation": "human"}\n'
    assert predfile.dumps_rows([predfile.pred_row("é", "", "", "m", "\u2028", "f1")]).count("\n") == 1
    assert predfile.file_name("my-model") == "my-model.pred.jsonl"
    assert predfile.file_name("my-model", "tpo") == "tpo.pred.jsonl"
    for bad in ("", " x", "../x"):
        with pytest.raises(ValueError):
            predfile.file_name(bad) if "/" in bad else predfile.pred_key(bad)


# --- manifests ---------------------------------------------------------------------------

def _manifest(**changes):
    fields = dict(
        model="gpt-4o", reported_model="gpt-4o-2024-08-06", base_url="https://user:secret@api.example.com/v1?k=1",
        temperature=0.0001, max_tokens=512, seed=None, profile="leval", profile_version=1,
        profile_fingerprint="abc", length_instruction=False, context_tokens=16000, truncation="leval",
        tokenizer={"method": "estimate", "exact": False, "reason": "r"}, documents_cut=3,
        question_set="human_eval", question_count=85, question_fingerprint="f00",
    )
    fields.update(changes)
    return manifest.build(**fields)


def test_the_manifest_keeps_the_host_only():
    data = _manifest()
    assert data["server"] == {"host": "api.example.com"}
    assert "secret" not in repr(data)
    assert manifest.base_url_host("http://127.0.0.1:8001/v1") == "127.0.0.1:8001"
    assert manifest.base_url_host("http://[::1]:9/v1") == "[::1]:9"
    with pytest.raises(ValueError, match="http"):
        manifest.base_url_host("file:///etc/passwd")


def test_compare_lists_what_differs_in_a_stable_order():
    assert manifest.compare(_manifest(), _manifest()) == []
    diff = manifest.compare(_manifest(), _manifest(length_instruction=True, seed=7, context_tokens=4000,
                                                    tokenizer={"method": "tiktoken:o200k_base", "exact": True,
                                                               "reason": ""}))
    assert [d.field for d in diff] == [
        "decoding.seed", "length_instruction", "context.tokens",
        "context.tokenizer.exact", "context.tokenizer.method", "context.tokenizer.reason",
    ]
    assert (diff[0].left, diff[0].right) == (None, 7)
    extra = dict(_manifest(), note="x")
    assert [(d.field, d.left, d.right) for d in manifest.compare(_manifest(), extra)] == [("note", None, "x")]


def test_the_questions_fingerprint_follows_content_and_order():
    a = [("d1", "q1", "r1", "human"), ("d2", "q2", "r2", "LLM")]
    assert manifest.questions_fingerprint(a) == manifest.questions_fingerprint(list(a))
    assert manifest.questions_fingerprint(a) != manifest.questions_fingerprint(a[::-1])
    assert manifest.questions_fingerprint(a) != manifest.questions_fingerprint([("d1", "q1", "r1x", "human"), a[1]])


# --- run plans ------------------------------------------------------------------------------

def test_a_plan_cuts_each_document_once_and_prices_the_calls():
    from app.core.generation import plan, prompts
    from app.core.generation.prompts import Question

    settings = plan.Settings(model="m", endpoint="127.0.0.1:9", context_tokens=1000, max_tokens=100)
    long_doc = words(3000)
    items = [
        plan.Item(1, "d1", long_doc, Question("financial_qa", "f1", "Q1?", "a b c")),
        plan.Item(2, "d1", long_doc, Question("financial_qa", "f1", "Q2?", "a b")),
        plan.Item(3, "d2", "a short story", Question("sci_fi", "exam", "True? based on the world described in the document.", "True")),
        plan.Item(4, "d2", "a short story", Question("sci_fi", "exam", "True? based on the world described in the document.", "True")),
    ]
    run = plan.plan_run(prompts.LEVAL_PROFILE, settings, items, tokens.estimating_counter("test"))
    assert set(run.truncations) == {"d1", "d2"} and run.documents_cut() == 1
    assert run.truncations["d1"].budget_tokens == 900
    assert run.calls == 6
    assert run.questions[2].keys == run.questions[3].keys  # same content, same address
    dry = plan.estimate(run, settings)
    assert (dry["calls"], dry["cached_calls"], dry["max_completion_tokens"]) == (4, 2, 400)
    again = plan.estimate(run, settings, cached_keys={k for q in run.questions for k in q.keys})
    assert (again["calls"], again["prompt_tokens"]) == (0, 0)
    other = plan.call_key(plan.Settings(model="m", endpoint="other:9", context_tokens=1000, max_tokens=100),
                          run.questions[0].prompt.messages)
    assert other != run.questions[0].first_key
