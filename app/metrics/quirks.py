"""The reference scripts' quirks: what the official profile reproduces and what the fixed profile does instead.

Each entry: ``id``, ``metric`` (a METRIC_KEYS name), ``official`` (the reference
behaviour), ``fixed`` (the fixed profile's behaviour) and ``changed`` (False when
both profiles deliberately keep the reference behaviour).
"""

from __future__ import annotations


def _quirk(quirk_id: str, metric: str, official: str, fixed: str, changed: bool = True) -> dict:
    return {"id": quirk_id, "metric": metric, "official": official, "fixed": fixed, "changed": changed}


QUIRKS: tuple[dict, ...] = (
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
           "Keywords that normalise to nothing divide by zero in the reference; here they score 0 with a "
           "KeywordWarning.",
           "Same.", changed=False),
    _quirk("lveval_missing_keywords", "keyword_f1",
           "Without gold_ans, English skips the gate and Chinese uses the answer as its keywords; only the "
           "first answer is scored.",
           "Same.", changed=False),
    # --- length -------------------------------------------------------------------
    _quirk("length_han", "avg_words",
           "Words are whitespace-separated tokens, so a Chinese answer counts as a handful of words.",
           "Each Han character counts as one word."),
)
