"""L-Eval's task names, used to recognise `<model>/<task>.pred.jsonl` layouts."""

CLOSED_TASKS = ("coursera", "quality", "tpo", "gsm100", "topic_retrieval_longchat", "codeU", "sci_fi")
OPEN_TASKS = (
    "financial_qa", "gov_report_summ", "legal_contract_qa", "meeting_summ", "multidoc_qa",
    "narrative_qa", "natural_question", "news_summ", "paper_assistant", "patent_summ",
    "review_summ", "scientific_qa", "tv_show_summ",
)
ALL_TASKS = CLOSED_TASKS + OPEN_TASKS


def is_known_task(name: str) -> bool:
    return name in ALL_TASKS
