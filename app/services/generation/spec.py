"""What a generation run is asked to do, checked, and planned against the database's questions."""
from __future__ import annotations

import re
from dataclasses import asdict, dataclass, field, fields

from app.core.generation import manifest as manifests
from app.core.generation import plan as plans
from app.core.generation import tokens
from app.core.generation.prompts import PromptProfile, Question
from app.models import GenerationPrompt
from app.services.generation import prompt_versions
from app.services.input_rules import system_name_problem
from app.services.llm import endpoints
from app.services.question_sets import QuestionSetError, documents_for, select_questions

JOB_KIND = "generate"
TRUNCATIONS = ("leval", "fit")
MAX_CONCURRENCY = 64
_SYSTEM_NAME = re.compile(r"^[A-Za-z0-9][A-Za-z0-9._+-]{0,119}$")


class GenerationError(ValueError):
    """A run that cannot be launched as asked; the message says why."""


@dataclass(frozen=True)
class RunSpec:
    """A run's parameters (never a secret: these go into job params and manifests)."""

    base_url: str
    model: str
    question_set: str
    system_name: str
    prompt_id: int | None = None
    length_instruction: bool = False
    context_tokens: int = 16000
    max_tokens: int = 512
    temperature: float = 0.0001  # L-Eval's turbo16k-test.py
    seed: int | None = None
    truncation: str = "leval"
    concurrency: int = 8
    budget_usd: float | None = None
    existing_system: bool = False  # store the answers as new answer versions of this existing system
    # The admin-configured endpoint the run calls ("" for a command-line run's own --base-url).
    endpoint: str = ""

    def params(self) -> dict:
        return asdict(self)

    @classmethod
    def from_params(cls, params: dict) -> RunSpec:
        names = {f.name for f in fields(cls)}
        return cls(**{k: v for k, v in params.items() if k in names})


def default_system_name(model: str, length_instruction: bool, context_tokens: int) -> str:
    base = re.sub(r"[^A-Za-z0-9._+-]+", "-", model.rsplit("/", 1)[-1]).strip("-.") or "model"
    name = f"{base}-{context_tokens // 1000}k" if context_tokens >= 1000 else f"{base}-{context_tokens}"
    return (name + "-len")[:120] if length_instruction else name[:120]


def spec_for_endpoint(endpoint_name: str, *, model: str, system_name: str = "", **options) -> RunSpec:
    """A run on an admin's named endpoint (the pages and the API name it; only the admin sets its URL); a blank
    system name becomes the model's default one."""
    try:
        endpoint = endpoints.load(endpoint_name)
    except endpoints.UnknownEndpoint as exc:
        raise GenerationError(str(exc)) from None
    model = model.strip()
    system_name = (system_name or "").strip() or default_system_name(
        model, bool(options.get("length_instruction")), options.get("context_tokens", 16000))
    return RunSpec(endpoint=endpoint.name, base_url=endpoint.effective_base_url, model=model,
                   system_name=system_name, **options)


def check_spec(spec: RunSpec) -> None:
    """Raise GenerationError naming the first field that is wrong."""
    try:
        manifests.base_url_host(spec.base_url)
    except ValueError as exc:
        raise GenerationError(f"base URL: {exc}") from None
    if not spec.model.strip() or len(spec.model) > 200:
        raise GenerationError("model: name the model the server serves")
    if problem := system_name_problem(spec.system_name or ""):
        raise GenerationError(f"system name: {problem}")
    if not _SYSTEM_NAME.match(spec.system_name):  # besides the rule every system name follows: plain ASCII
        raise GenerationError("system name: letters, digits and . _ + - only (at most 120), starting with a letter or digit")
    checks = (
        (isinstance(spec.context_tokens, int) and 1 <= spec.context_tokens <= 10_000_000, "context tokens: a whole number of tokens"),
        (isinstance(spec.max_tokens, int) and 1 <= spec.max_tokens <= 1_000_000, "max tokens: a whole number of at least 1"),
        (isinstance(spec.temperature, (int, float)) and 0 <= spec.temperature <= 2, "temperature: between 0 and 2"),
        (spec.seed is None or isinstance(spec.seed, int), "seed: a whole number or empty"),
        (spec.truncation in TRUNCATIONS, f"truncation: one of {', '.join(TRUNCATIONS)}"),
        (isinstance(spec.concurrency, int) and 1 <= spec.concurrency <= MAX_CONCURRENCY,
         f"concurrency: between 1 and {MAX_CONCURRENCY}"),
        (spec.budget_usd is None or (isinstance(spec.budget_usd, (int, float)) and spec.budget_usd > 0),
         "budget: more than 0 USD, or empty for no cap"),
    )
    for ok, message in checks:
        if not ok:
            raise GenerationError(message)
    if spec.max_tokens >= spec.context_tokens:
        raise GenerationError("context tokens: the context must hold more than the answer's max tokens")


def client_for(spec: RunSpec):
    """The run's client, with the key of the endpoint it names (never a key saved for another origin)."""
    if spec.endpoint:
        return endpoints.client_for(spec.endpoint, expected_base_url=spec.base_url)
    return endpoints.adhoc(spec.base_url).client()


@dataclass
class Prepared:
    spec: RunSpec
    prompt: GenerationPrompt
    profile: PromptProfile
    settings: plans.Settings
    counter: tokens.TokenCounter
    run: plans.RunPlan
    question_fingerprint: str
    titles: dict[int, str] = field(default_factory=dict)  # document id -> title, for "What was cut"

    def manifest(self, reported_model: str | None = None) -> dict:
        spec = self.spec
        data = manifests.build(
            model=spec.model, reported_model=reported_model, base_url=spec.base_url,
            temperature=spec.temperature, max_tokens=spec.max_tokens, seed=spec.seed,
            profile=self.profile.name, profile_version=self.profile.version,
            profile_fingerprint=self.profile.fingerprint(), length_instruction=spec.length_instruction,
            context_tokens=spec.context_tokens, truncation=spec.truncation, tokenizer=self.counter.describe(),
            documents_cut=self.run.documents_cut(), question_set=spec.question_set,
            question_count=len(self.run.questions), question_fingerprint=self.question_fingerprint,
        )
        data[manifests.CUTS_KEY] = [
            {"document": key, "title": self.titles.get(key, ""), **cut.record()}
            for key, cut in self.run.truncations.items() if cut.cut
        ]
        return data


def endpoint_of(base_url: str) -> str:
    """Host and path of the base URL: the cache tells two servers' models apart by it."""
    from urllib.parse import urlsplit

    parts = urlsplit(base_url.strip())
    return manifests.base_url_host(base_url) + parts.path.rstrip("/")


def prepare(spec: RunSpec) -> Prepared:
    """Check a spec, pick its prompt version and plan every call; raise GenerationError."""
    check_spec(spec)
    prompt = prompt_versions.current() if spec.prompt_id is None else prompt_versions.get(spec.prompt_id)
    if prompt is None:
        raise GenerationError(f"prompt: no version #{spec.prompt_id}")
    try:
        questions = select_questions(spec.question_set, required=True)
    except QuestionSetError as exc:
        raise GenerationError(f"questions: {exc}") from None
    documents = documents_for(questions)
    items = [plans.Item(q.question_id, q.document_id, documents[q.document_id].text,
                        Question(q.task, q.evaluation, q.instruction, q.reference)) for q in questions]
    settings = plans.Settings(model=spec.model, endpoint=endpoint_of(spec.base_url),
                              context_tokens=spec.context_tokens, max_tokens=spec.max_tokens,
                              temperature=float(spec.temperature), seed=spec.seed,
                              length_instruction=spec.length_instruction, truncation=spec.truncation)
    counter = tokens.counter_for(spec.model)
    profile = prompt_versions.as_profile(prompt)
    try:
        run = plans.plan_run(profile, settings, items, counter)
    except ValueError as exc:
        raise GenerationError(f"context tokens: {exc}") from None
    fingerprint = manifests.questions_fingerprint(
        (documents[q.document_id].sha256, q.instruction, q.reference, q.evaluation) for q in questions)
    return Prepared(spec, prompt, profile, settings, counter, run, fingerprint,
                    {key: document.title for key, document in documents.items()})
