"""The reference scripts' quirks: what the official profile reproduces and what the fixed profile does instead.

Each entry: ``id``, ``metric`` (a METRIC_KEYS name, or ``*`` for which rows a file's score
counts, app.core.metrics.selection), ``official`` (the reference
behaviour), ``fixed`` (the fixed profile's behaviour) and ``changed`` (False when
both profiles deliberately keep the reference behaviour).
"""

from __future__ import annotations


def _quirk(quirk_id: str, metric: str, official: str, fixed: str, changed: bool = True) -> dict:
    return {"id": quirk_id, "metric": metric, "official": official, "fixed": fixed, "changed": changed}


QUIRKS: tuple[dict, ...] = (
    # --- which rows a file's score counts (selection.py) ------------------------------
    _quirk("evaluation_exact_spelling", "*",
           "auto_eval.py counts a row only if its evaluation is exactly \"f1\", \"rouge\" or \"exam\": "
           "\"F1\", \" rouge\", \"EXAM\", null, \"LLM\" and \"human\" rows are skipped.",
           "Spelling is read case- and space-insensitively (\"F1\" counts as f1); LLM and human rows are still "
           "skipped."),
    _quirk("last_row_metric", "*",
           "Every counted row is scored with the metric of the file's LAST counted row: a file mixing f1 and "
           "rouge rows is scored entirely with ROUGE when its last such row is rouge.",
           "Each counted row is scored with its own evaluation; a mixed file reports both."),
    _quirk("refuse_uncounted_file", "*",
           "A file with no counted row (all LLM/human, or all \"F1\") fails its assert: refused, here with an "
           "error naming the file and its evaluations.",
           "Same (a file of \"F1\" rows is no longer refused, as they count).", changed=False),
    _quirk("llm_human_rows_analysis_only", "*",
           "LLM and human rows are not scored at all.",
           "Both profiles score them by their own evaluation (F1 and ROUGE) under the separate analysis scope "
           "for the metric-versus-human comparison; they never enter a file or task score.", changed=False),
    _quirk("missing_evaluation", "*",
           "A row without an evaluation key crashes auto_eval.py (KeyError); here it is not counted (a stored "
           "prediction without one takes its document's evaluation).",
           "Same.", changed=False),
    _quirk("bad_json_line", "*",
           "auto_eval.py skips a line that is not valid JSON silently (and the row index used by "
           "topic_retrieval_longchat's groups skips it too).",
           "Both profiles refuse the file, naming the line: nothing is dropped silently.", changed=False),
    _quirk("prediction_key_per_row", "*",
           "auto_eval.py takes the prediction key from the first row (its first key containing \"_pred\") and "
           "crashes (KeyError) on a later row without that key.",
           "Both profiles read each row's own first key containing \"_pred\"; a file with a row without one is "
           "refused, naming the file and the row.", changed=False),
    _quirk("non_string_texts", "*",
           "A gt that is a list, or a prediction that is not a string, crashes auto_eval.py's normalisation.",
           "Both profiles score a list gt as several references (the best one counts, as with ROUGE's "
           "several references) and a number or other JSON value as its text.", changed=False),
    _quirk("output_keys", "*",
           "auto_eval.py prints its whole metrics dict: rouge/rouge1, rouge/rouge2, rouge/rougeL, "
           "rouge/rougeLsum, rouge/geometric_mean (again as LEval_score), num_predicted, "
           "mean_prediction_length_characters, display_keys and display.",
           "Both profiles name the same values rouge1, rouge2, rougeL, rouge_geo and n, leave out rougeLsum and "
           "the length in characters, and add avg_words and delta_words (labelled length columns, never in a "
           "task score).", changed=False),
    _quirk("topic_final_rounding", "exact_match",
           "topic_retrieval_longchat's and sci_fi's final averages are printed unrounded; here every file score "
           "is rounded to 4 decimals (display only).",
           "Same.", changed=False),
    # --- exam exact match -------------------------------------------------------
    _quirk("mc_first_capital", "exact_match",
           "quality/tpo: the first capital A-D anywhere in the answer is taken, so "
           "\"Based on the text, the answer is C\" reads as B.",
           "A leading option label, then \"answer/option is X\", then \"(X)\", then a standalone "
           "letter; a capital \"A\" before a lowercase word is read as the article."),
    _quirk("mc_random_guess", "exact_match",
           "When no letter is found the answer defaults to \"A\" (a \"random guess\"), which can score.",
           "No letter means no answer: 0."),
    _quirk("coursera_lists", "exact_match",
           "coursera: \"A, B, C\" reads as A only (0.25 instead of 1), and any capital before a space "
           "or period (the article \"A\", \"I\") can be taken as an option.",
           "Reads letter lists (\"A, B, C\", \"B and D\", \"ABCD\") and option labels (\"A. ...\", \"(C)\")."),
    _quirk("em_partial_credit", "exact_match",
           "0.25 whenever the predicted letters are a subset of the answer's, including an empty "
           "prediction; the letter rule applies to any answer that normalises to A-D letters only "
           "(even a codeU or topic answer).",
           "Partial credit needs at least one letter; the letter rule is used for coursera, quality "
           "and tpo (and for tasks it does not know)."),
    _quirk("em_no_lowercase", "exact_match",
           "Exact-match normalisation removes ASCII punctuation, articles and extra spaces but does not "
           "lowercase; the free-text rule lowercases inside its substring test.",
           "Same.", changed=False),
    _quirk("gsm_signs_decimals", "exact_match",
           "gsm100 keeps the digits before the first '.', dropping signs and decimals: \"-3.5\" gives 3 "
           "and \"$41.75\" matches 41.",
           "The signed decimal number is extracted and compared by value."),
    _quirk("gsm_answer_phrase", "exact_match",
           "\"The answer is\" is matched case-sensitively and only the next token is read "
           "(\"The answer is $ 18\" finds no number).",
           "Case-insensitive; the first number after the phrase."),
    _quirk("codeu_filler_substrings", "exact_match",
           "codeU deletes filler words as substrings (\"is\" inside \"this\" or \"list\"), so an answer "
           "containing \"is\" can never match.",
           "Fillers go as whole words only, and never when the answer contains them."),
    _quirk("codeu_final_output", "exact_match",
           "\"the final output\" is matched case-sensitively; a sentence starting \"The final output\" "
           "falls back to the response's last words.",
           "Case-insensitive, and both the words after it and the last words are searched."),
    _quirk("codeu_bare_substring", "exact_match",
           "The answer is a bare substring once spaces are removed: \"0\" matches \"10\", \"2\" matches "
           "\"operation2\".",
           "Still space-insensitive, but not inside a longer number or word."),
    _quirk("codeu_dot_zero", "exact_match",
           "Every \".0\" is deleted, so \"10.05\" becomes \"105\".",
           "Only zero fractions: \"3.0\" becomes \"3\"."),
    _quirk("topic_group_rounding", "exact_match",
           "topic_retrieval_longchat: each of the three index-mod-3 scores is rounded to 4 decimals "
           "before they are averaged.",
           "The unrounded group scores are averaged."),
    _quirk("scifi_missing_fact", "exact_match",
           "sci_fi: a prediction without \"[fact:\" crashes the reference (IndexError); here it scores 0.",
           "The loyalty verdict is read from the whole text; the fact verdict scores 0."),
    _quirk("scifi_last_character", "exact_match",
           "The text after \"[fact:\" always loses its last character, assumed to be \"]\": "
           "\"[fact: false\" yields \"fals\" and no verdict.",
           "Only a closing \"]\" is removed."),
    _quirk("scifi_substring_verdict", "exact_match",
           "A word counts as \"true\" if it contains it, so \"untrue\" is true.",
           "\"true\"/\"false\" must be whole words."),
    _quirk("path_dispatch", "exact_match",
           "The reference routes tasks by substrings of the whole file path (a folder named \"tpo\" "
           "changes the scoring) and reads the prediction key off the first row.",
           "Both profiles route by the task name only.", changed=False),
    # --- token F1 -----------------------------------------------------------------
    _quirk("f1_ascii_punctuation", "f1",
           "Only ASCII punctuation is removed: curly quotes and dashes stay glued to words, and Chinese "
           "text without spaces is one single token.",
           "All Unicode punctuation and symbols are removed; Chinese is segmented with jieba."),
    # --- ROUGE --------------------------------------------------------------------
    _quirk("rouge_non_ascii", "rouge1",
           "rouge-score keeps only [a-z0-9] runs: Chinese scores 0 and \"café\" becomes \"caf\".",
           "Unicode letters and digits are kept; Chinese is segmented with jieba."),
    _quirk("rouge_max_per_type", "rouge1",
           "With several references the maximum is taken per ROUGE type, so rouge1 and rougeL may come "
           "from different references; the summary is the geometric mean of the three averages.",
           "Same.", changed=False),
    # --- LV-Eval keyword-recall F1 ------------------------------------------------
    _quirk("lveval_blacklist_denominator", "keyword_f1",
           "Blacklisted keywords cannot be recalled but still count in the recall denominator.",
           "They leave the denominator too (all of them stay if every keyword is blacklisted)."),
    _quirk("lveval_thresholds", "keyword_f1",
           "The code gates at recall 0.2 for English and 0.4 for Chinese.",
           "The paper's thresholds: 0.4 for English, 0.2 for Chinese."),
    _quirk("lveval_f1_blacklist", "keyword_f1",
           "The final F1 is computed with blacklisted words still in place.",
           "Blacklisted words are removed from prediction and answer before F1, as the paper describes."),
    _quirk("lveval_empty_keywords", "keyword_f1",
           "Keywords that normalise to nothing divide by zero in the reference (in Chinese also an answer that "
           "normalises to nothing when gold_ans is empty); here the row scores 0 and the import and the table "
           "note it by file and line.",
           "Same.", changed=False),
    _quirk("lveval_missing_keywords", "keyword_f1",
           "Without gold_ans, English skips the gate and Chinese uses the answer as its keywords; only the "
           "first answer is scored.",
           "Same.", changed=False),
    # --- LV-Eval: rows, dureader, files and the table -----------------------------------
    _quirk("lveval_string_answers", "lveval",
           "An `answers` given as a string is iterated, so the reference is its first character "
           "(\"Orrin Vale\" is scored against \"O\"); an empty list scores 0.",
           "A string is the answer itself; an empty list still scores 0."),
    _quirk("lveval_dureader_rouge", "lveval",
           "dureader_mixup: jieba cuts the text twice, blacklisted words go, and the `rouge` package's ROUGE-L "
           "counts distinct words (sets) and divides by P + R + 1e-8, so a perfect answer scores 0.999999995.",
           "ROUGE-L over the jieba word sequences (no sets, no epsilon): a perfect answer scores 1."),
    _quirk("lveval_dureader_empty_words", "lveval",
           "dureader_mixup: two texts that are only punctuation (two or more pieces each) both become one empty "
           "word, which matches: \"！？！\" against \"。。！！\" scores 0.999999995.",
           "Texts with no words left score 0."),
    _quirk("lveval_rouge_recursion", "lveval",
           "dureader_mixup: the `rouge` package back-tracks its LCS recursively; past 990 nested calls (as "
           "evaluation.py runs on CPython's default stack) it raises RecursionError, which LV-Eval swallows: "
           "the row scores 0. Reproduced from the LCS itself, whatever the caller's stack; the row is noted.",
           "Long answers are scored."),
    _quirk("lveval_crash_cases", "lveval",
           "Rows without `answers` or whose first answer is not a string, a `pred` that is not a string, a "
           "non-empty `gold_ans` that is not a string in a gated dataset, unknown datasets, blank lines and "
           "empty files make evaluation.py stop with an exception. Here they are errors naming the file, line "
           "and field (blank lines are skipped), and nothing of that model is imported.",
           "Same.", changed=False),
    _quirk("lveval_levels", "lveval",
           "Any level of 1-3 characters before \"k\" passes LV-Eval's file-name pattern (cmrc_mixup_48k is "
           "scored as level 48k); two files for one dataset and level (cmrc_mixup_16k.jsonl and "
           "cmrc_mixup_16k.v2.jsonl) silently keep the later one.",
           "Only the five levels 16k-256k are accepted, and one file per dataset and level.", changed=False),
    _quirk("lveval_file_rounding", "lveval",
           "A file's score is round(100 × Σ row scores / n, 2), the sum taken in file order; averaging per-row "
           "percentages or re-rounding a 4-decimal aggregate can differ in the last digit (54.37 vs 54.38).",
           "Same: the table is computed from the stored raw row scores.", changed=False),
    _quirk("lveval_line_ends", "lveval",
           "Files are read in Python's text mode: \\n, \\r\\n and a lone \\r each end a line; U+2028 and U+0085 "
           "inside strings do not. A UTF-8 BOM or a blank line makes json.loads stop.",
           "Same line ends (LV-Eval files only); a BOM is accepted and blank lines are skipped.", changed=False),
    _quirk("lveval_unread_fields", "lveval",
           "evaluation.py reads only `pred`, the first item of `answers` and `gold_ans`: later items of `answers` "
           "may be anything, an object's first key is its answer, `gold_ans` is never read by factrecall and "
           "dureader_mixup and an empty one of any type (0, false, [], {}) skips or defaults the keyword gate; "
           "`input`, `length` and other fields may hold anything.",
           "Same: such rows are imported and scored; a value of the wrong type in a field LV-Eval never reads "
           "(`input`, `length`, our `depth`) is ignored and noted by file and line, never an error.",
           changed=False),
    _quirk("lveval_gold_per_folder", "lveval",
           "evaluation.py scores each model folder with its own rows' `gold_ans`: two models answering the same "
           "question may be held to different keywords. Each stored prediction keeps its own row's gold_ans "
           "and is scored with it (predictions imported before it was kept carry their question's first one "
           "until their model is imported again with --replace).",
           "Stored predictions of every model are scored with the question's one gold_ans, the first upload's, "
           "so all meet the same keywords (`eval` on files reads each file's own, having no other)."),
    _quirk("lveval_surrogates", "lveval",
           "A \\u escape naming half a surrogate pair decodes to a string LV-Eval scores.",
           "It is an error naming the file and line: no database (and no UTF-8 file) can hold that string.",
           changed=False),
    # --- length -------------------------------------------------------------------
    _quirk("length_han", "avg_words",
           "Words are whitespace-separated tokens, so a Chinese answer counts as a handful of words.",
           "Each Han character counts as one word."),
)

# Where OpenCompass's own L-Eval evaluation (opencompass/configs/datasets/leval/, opencompass/datasets/leval/
# evaluators.py, openicl/icl_evaluator/icl_hf_evaluator.py) computes something differently from L-Eval's scripts.
# `leval` is what L-Eval's auto_eval.py does (the official profile reproduces it); `profile` names the profile that
# reproduces OpenCompass's number, "none" when neither does (then compare with OpenCompass's own report, not here).
# Imported OpenCompass predictions are scored like any upload, by L-Eval's rules: see docs/opencompass.md.


def _difference(difference_id: str, tasks: str, opencompass: str, leval: str, profile: str = "none") -> dict:
    return {"id": difference_id, "tasks": tasks, "opencompass": opencompass, "leval": leval, "profile": profile}


OPENCOMPASS_DIFFERENCES: tuple[dict, ...] = (
    _difference("oc_first_capital", "quality, tpo",
                "AccEvaluator after first_capital_postprocess: the prediction becomes its first upper-case character "
                "of any letter (\"The answer is B\" gives \"T\", \"I think C\" gives \"I\") and must equal the "
                "gold exactly (quality's gold is the answer's option letter, tpo's the letter itself); no partial "
                "credit, no guess.",
                "The first capital A-D (\"The answer is B\" gives B) against the letters of the answer's first word; "
                "0.25 partial credit; \"A\" when no letter is found (quirks mc_first_capital, mc_random_guess)."),
    _difference("oc_coursera_letters", "coursera",
                "first_capital_postprocess_multi: the first run of A-D capitals anywhere (\"Based on …\" gives "
                "\"B\", \"A, C\" gives \"A\"), compared with the gold as a string (\"CA\" is not \"AC\"); no "
                "partial credit.",
                "Leading letters sorted, then option labels; 0.25 when the letters are a subset of the answer "
                "(quirks coursera_lists, em_partial_credit)."),
    _difference("oc_gsm100_digits", "gsm100",
                "gsm100_postprocess: the first token with a digit after the first \"The answer is\", all its digits "
                "kept (\"3.50\" gives \"350\"), nothing when the phrase is missing; the gold loses its commas; "
                "string equality (\"018\" is not \"18\").",
                "process_math: the token after \"The answer is\", else the last number of the first paragraph; "
                "digits before the first \".\"; numeric equality."),
    _difference("oc_topic_substring", "topic_retrieval_longchat",
                "LEvalEMEvaluator: prediction and gold pass general_postprocess (cut at the first newline, period "
                "or comma, punctuation and articles removed); a row counts 1 when the processed or the raw gold is "
                "a case-sensitive substring of the processed prediction; one mean over all rows.",
                "The gold, lower-cased without spaces, must be a substring of the prediction lower-cased without "
                "spaces; rows are grouped by position (1st/2nd/3rd topic), each group's mean rounded, then "
                "averaged."),
    _difference("oc_rouge_for_f1_tasks", "financial_qa, legal_contract_qa, multidoc_qa, narrative_qa, "
                "natural_question, scientific_qa",
                "RougeEvaluator (rouge1, rouge2, rougeL, rougeLsum) for every open-ended dataset, the F1 tasks "
                "included.",
                "Each row's evaluation picks the metric: these tasks are scored with SQuAD-style F1."),
    _difference("oc_rouge_bootstrap", "every open-ended task",
                "ROUGE through HF evaluate's rouge with rouge-score's BootstrapAggregator (1,000 resamples, seed 0): "
                "the reported value is the median of the resampled means (`mid`), not the mean of the rows' "
                "scores; tokens as rouge-score's default, no stemmer (as the official profile).",
                "The mean of the rows' F-measures (× 100), each maximised over the references."),
    _difference("oc_every_row", "every task",
                "Every row of L-Eval's dataset is scored: the documents L-Eval marks `LLM` or `human` and their "
                "copies count like the others.",
                "auto_eval.py counts only rows whose evaluation is exam, f1 or rouge (quirk "
                "evaluation_exact_spelling); here LLM and human rows are scored apart (llm_human_rows_analysis_only)."),
    _difference("oc_gpt_judge", "open-ended tasks (LEvalGPTEvaluator; not in OpenCompass's shipped LEval configs)",
                "GPT-4 compares the answer with turbo-16k-0613's (a file shipped with OpenCompass) in both orders; "
                "ties 0.5, unparsable verdicts left out of the denominator; a row meets every battle sample with "
                "the same reference, so a repeated reference is judged more than once.",
                "The LLM judge of docs/judge.md (its own profiles and quirks)."),
)
