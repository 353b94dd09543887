"""Simulated annotators score fixed (overlap k = 3) and adaptive studies through the real study services.

Run: python tests/benchmarks/bench_allocation.py [--seeds N] [--cases main,hard,easy] [--workers W] [--json]

What is real: both studies are created by services.studies.setup.create_study (the fixed one's
questions shared out by assignment.rebalance, read back from the database). In the adaptive study
each simulated annotator asks annotation.pages.next_question for their next question (the policy of
services/studies/allocation.py), opens it with load_question_page (the blind, shuffled answers the
browser would get) and saves every answer with annotation.scoring.save_from_request, the save
endpoint's own path. A fixed study gives every answer of every assigned question whatever the
scores say, so its scores are drawn in process (saving them changes no choice) to keep a seed
affordable. Only the simulator's oracle (which system wrote an answer) reads the answers' systems.

The ground truth (hierarchical): quality(q, s) = 3 + system_s + question_q + interaction_qs, and an
annotator's score is round(quality + bias_a + noise_a), clipped to 1–5, each annotator with a bias
and a noise level of their own. Parameters (chosen, not fitted: L-Eval publishes no per-rating
human scores for its 85-question subset, only its answers): system effects N(0, 0.35²) (a spread
of about one point between the best and worst of seven, as in the L-Eval paper's human ranking),
question difficulty sd 0.6, interaction sd 0.5, annotator bias sd 0.2, annotator noise sd
0.7 × U(0.7, 1.3) (Krippendorff's alpha about 0.5 on such data, the agreement range human 1–5
ratings usually reach). Common random numbers: annotator a's score of answer (q, s) is drawn once
per seed and is the same in both studies, so the policies are compared on the same draws. The design is L-Eval's: 7 systems, 85 questions over 12
documents. Cases: `main` (system effects drawn as above), `hard` (as main, then the two middle
systems 0.03 apart: nearly tied) and `easy` (systems 0.5 apart).

Cost: documents read = distinct (annotator, document) pairs opened; answers scored = saves.
Accuracy of a ranking (by the additive model system + question, the ranking by mean on a complete
design): exactly right or not, and Kendall's tau against the true ranking. Fixed k = 1, 2 are read
off the k = 3 run (the first j of each question's three annotators, in random order): the same
design as a k = j study. Savings at equal accuracy, per seed: 1 - adaptive cost at its stop / fixed
k = 3 cost, averaged over the seeds, with the spread; the accuracy of both is printed beside them.
"""
from __future__ import annotations

import argparse
import json
import random
import statistics
import sys
import tempfile
import time
from collections import defaultdict
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[2]))

N_SYSTEMS, N_QUESTIONS, N_DOCUMENTS, N_ANNOTATORS = 7, 85, 12, 3
SYSTEM_SD, QUESTION_SD, INTERACTION_SD, BIAS_SD, NOISE_SD = 0.35, 0.6, 0.5, 0.2, 0.7
NOISE_SPREAD = 0.3  # each annotator's own noise sd is NOISE_SD × U(0.7, 1.3)
TIE_MARGIN = 0.3  # the researcher's margin: systems within 0.3 points on 1-5 count as tied
CHECKPOINTS = (0.2, 0.3, 0.4, 0.5, 0.6, 0.65, 0.7, 0.75, 0.8, 0.85, 0.9, 1.0)  # shares of fixed k = 3's documents
TARGET_SHARE = 0.7  # the issue's target: fixed k = 3's accuracy with at least 30% fewer documents


def write_data(folder: Path) -> None:
    """A human-evaluation set in L-Eval's format: 12 documents, 85 questions, 7 systems (fictional text)."""
    sizes = [N_QUESTIONS // N_DOCUMENTS + (1 if d < N_QUESTIONS % N_DOCUMENTS else 0) for d in range(N_DOCUMENTS)]
    references, predictions = [], defaultdict(list)
    for d, size in enumerate(sizes):
        text = "\n\n".join(f"Page {i} of record {d}: {i * 3 + d} entries were filed." for i in range(40))
        instructions = [f"Record {d}, item {q}: how many entries?" for q in range(size)]
        outputs = [f"{q * 3 + d} entries." for q in range(size)]
        references.append({"instructions": instructions, "outputs": outputs, "input": text, "source": "multidoc_qa",
                           "evaluation": "human"})
        for s in range(N_SYSTEMS):
            for query, gt in zip(instructions, outputs):
                predictions[s].append({"query": query, "gt": gt, f"system{s}_pred": f"System {s} says: {gt} ({query})",
                                       "evaluation": "human"})
    folder.mkdir(parents=True, exist_ok=True)
    (folder / "bench.ref.jsonl").write_text("".join(json.dumps(r) + "\n" for r in references))
    for s, rows in predictions.items():
        (folder / f"system{s}.pred.jsonl").write_text("".join(json.dumps(r) + "\n" for r in rows))


def truth(case: str, seed: int, systems: list[int], questions: list[int], annotators: list[int]):
    rng = random.Random(f"{case}:{seed}")
    if case == "easy":
        effects = {s: 0.5 * (i - (len(systems) - 1) / 2) for i, s in enumerate(rng.sample(systems, len(systems)))}
    else:
        effects = {s: rng.gauss(0, SYSTEM_SD) for s in systems}
        if case == "hard":
            order = sorted(systems, key=lambda s: effects[s])
            middle = len(order) // 2
            effects[order[middle]] = effects[order[middle - 1]] + 0.03
    difficulty = {q: rng.gauss(0, QUESTION_SD) for q in questions}
    quality = {(q, s): 3 + effects[s] + difficulty[q] + rng.gauss(0, INTERACTION_SD) for q in questions for s in systems}
    bias = {a: rng.gauss(0, BIAS_SD) for a in annotators}
    spread = {a: NOISE_SD * rng.uniform(1 - NOISE_SPREAD, 1 + NOISE_SPREAD) for a in annotators}
    # Common random numbers: annotator a scoring answer (q, s) gives the same score in the fixed and in the
    # adaptive study, so the two policies differ only by which answers they give to whom (a paired comparison).
    noise = {(q, s, a): rng.gauss(0, spread[a]) for q in questions for s in systems for a in annotators}

    def score(q: int, s: int, a: int) -> int:
        return max(1, min(5, round(quality[(q, s)] + bias[a] + noise[(q, s, a)])))

    ranking = sorted(systems, key=lambda s: -effects[s])
    return score, ranking, rng


def kendall_tau(ranking: list[int], true: list[int]) -> float:
    place = {s: i for i, s in enumerate(ranking)}
    pairs = [(a, b) for i, a in enumerate(true) for b in true[i + 1:]]
    agree = sum(1 if place[a] < place[b] else -1 for a, b in pairs)
    return agree / len(pairs)


def ranking_of(ratings: dict, systems: list[int]) -> list[int]:
    from app.core.allocation import additive_effects, cell_means

    effects = additive_effects(cell_means(ratings), systems)
    return sorted(systems, key=lambda s: (-effects[s], s))


class Simulation:
    """One study scored by the simulated annotators through the real services."""

    def __init__(self, study, users, oracle, score):
        self.study, self.users, self.oracle, self.score = study, users, oracle, score
        self.read: set[tuple[int, int]] = set()
        self.answers = 0
        self.ratings: dict[tuple[int, int], list[float]] = defaultdict(list)
        self.by_annotator: dict[tuple[int, int], dict[int, float]] = defaultdict(dict)  # (q, s) -> {user: value}
        self.snapshots: list[tuple[int, int, list[int]]] = []  # (documents, answers, ranking)

    def one_question(self, user: int, systems: list[int]) -> str | None:
        from app.services.annotation.pages import load_question_page, next_question
        from app.services.annotation.scoring import save_from_request

        found = next_question(self.study, user)
        if found.question_id is None:
            return found.reason or "done"
        page = load_question_page(self.study, user, found.question_id)
        new_document = (user, page.document_id) not in self.read
        self.read.add((user, page.document_id))
        for card in page.answers:
            if card.value is not None:
                continue
            question, system = self.oracle[card.sha256]
            value = self.score(question, system, user)
            save_from_request(user, {"study": self.study.id, "question_id": question, "label": card.label,
                                     "value": value, "answer": card.sha256, "seconds": 60})
            self.answers += 1
            self.ratings[(question, system)].append(value)
            self.by_annotator[(question, system)][user] = value
        if new_document:
            self.snapshots.append((len(self.read), self.answers, ranking_of(self.ratings, systems)))
        return None

    def run(self, systems: list[int]) -> None:
        """The annotators take turns, one question each, until none is given anything more."""
        active = list(self.users)
        while active:
            waiting = 0
            for user in list(active):
                reason = self.one_question(user, systems)
                if reason == "ahead":
                    waiting += 1
                elif reason is not None:
                    active.remove(user)
            if active and waiting == len(active):
                break  # everyone left is waiting for someone who has stopped


def fixed_design(study_id: int, users: list[int], systems: list[int], documents_of: dict[int, int],
                 score, rng: random.Random):
    """(k, documents, answers, ranking) for k = 1, 2, 3.

    The k = 3 study is created by the real services (create_study shares its questions out with
    assignment.rebalance); scoring every answer of every assigned question adds nothing to the
    policy (a fixed study gives every answer of its share), so those scores are drawn here rather
    than saved one by one. k = 1, 2 keep the first k of each question's annotators, in random order.
    """
    from sqlalchemy import select

    from app.extensions import db
    from app.models import StudyAssignment

    given: dict[int, list[int]] = defaultdict(list)
    for user, question in db.session.execute(select(StudyAssignment.user_id, StudyAssignment.question_id)
                                             .where(StudyAssignment.study_id == study_id)):
        given[question].append(user)
    scores = {(q, s, u): score(q, s, u) for q, users_of in given.items() for u in users_of for s in systems}
    order = {q: rng.sample(users_of, len(users_of)) for q, users_of in given.items()}
    rows = []
    for k in (1, 2, 3):
        ratings: dict[tuple[int, int], list[float]] = defaultdict(list)
        read, answers = set(), 0
        for q, users_of in order.items():
            for u in users_of[:k]:
                read.add((u, documents_of[q]))
                for s in systems:
                    ratings[(q, s)].append(scores[(q, s, u)])
                    answers += 1
        rows.append((k, len(read), answers, ranking_of(ratings, systems)))
    return rows


def run_seed(app, case: str, seed: int, ctx: dict) -> dict:
    from app.extensions import db
    from app.services.studies.setup import StudySpec, create_study

    systems, questions, users = ctx["systems"], ctx["questions"], ctx["users"]
    score, true, rng = truth(case, seed, systems, questions, users)
    with app.app_context():
        fixed = create_study(StudySpec(name=f"fixed-{case}-{seed}", question_ids=questions, system_ids=systems,
                                       overlap=3, annotator_ids=users, status="open", reference_kinds=[]))
        if not ctx["oracle"]:
            ctx["refresh_oracle"]()
        fixed_rows = fixed_design(fixed.id, users, systems, ctx["documents_of"], score, random.Random(rng.random()))
        budget, budget_answers = fixed_rows[-1][1], fixed_rows[-1][2]
        adaptive = create_study(StudySpec(name=f"adaptive-{case}-{seed}", question_ids=questions, system_ids=systems,
                                          annotator_ids=users, status="open", reference_kinds=[], allocation="adaptive",
                                          budget_documents=budget, budget_answers=budget_answers,
                                          tie_margin=TIE_MARGIN))
        sim = Simulation(adaptive, users, ctx["oracle"], score)
        sim.run(systems)
        db.session.remove()
    final = ranking_of(sim.ratings, systems)
    curve = []
    for share in CHECKPOINTS:
        limit = share * budget
        reached = [snap for snap in sim.snapshots if snap[0] <= limit]
        if not reached:
            curve.append(None)
            continue
        ranking = final if reached[-1] is sim.snapshots[-1] else reached[-1][2]  # stopped before: final stands
        answers = sim.answers if reached[-1] is sim.snapshots[-1] else reached[-1][1]
        curve.append((ranking == true, kendall_tau(ranking, true), answers))
    return {
        "fixed": [{"k": k, "documents": d, "answers": a, "exact": r == true, "tau": kendall_tau(r, true)}
                  for k, d, a, r in fixed_rows],
        "adaptive": {"documents": len(sim.read), "answers": sim.answers, "exact": final == true,
                     "tau": kendall_tau(final, true)},
        "curve": curve,
    }


def prepare(instance: Path, annotators: int = N_ANNOTATORS):
    from flask_migrate import upgrade
    from sqlalchemy import select

    from app import create_app
    from app.extensions import db
    from app.models import Answer, Question, System
    from app.services.accounts import create_user
    from app.services.importers import import_path

    app = create_app({"INSTANCE_PATH": instance})
    data = instance / "data"
    write_data(data)
    with app.app_context():
        upgrade()
        report = import_path(data)
        assert not report.failed, report.failed
        users = [create_user(f"sim{a}", f"sim-pass-{a}-12345", "annotator").id for a in range(annotators)]
        systems = list(db.session.scalars(select(System.id).order_by(System.id)))
        questions = list(db.session.scalars(select(Question.id).order_by(Question.id)))
        documents_of = dict(db.session.execute(select(Question.id, Question.document_id)).all())
        # Answers are pinned when the first study is created; the oracle is filled after that.
        ctx = {"systems": systems, "questions": questions, "users": users, "documents_of": documents_of, "oracle": {}}
        ctx["refresh_oracle"] = lambda: ctx["oracle"].update(
            {sha: (q, s) for sha, q, s in db.session.execute(select(Answer.sha256, Answer.question_id,
                                                                    Answer.system_id))})
    return app, ctx


def summarise(case: str, results: list[dict]) -> dict:
    def mean_sd(values):
        return statistics.fmean(values), (statistics.stdev(values) if len(values) > 1 else 0.0)

    fixed3 = [r["fixed"][2] for r in results]
    docs_saved = [1 - r["adaptive"]["documents"] / f["documents"] for r, f in zip(results, fixed3)]
    answers_saved = [1 - r["adaptive"]["answers"] / f["answers"] for r, f in zip(results, fixed3)]
    table = []
    for k in (1, 2, 3):
        rows = [r["fixed"][k - 1] for r in results]
        table.append({"policy": f"fixed k={k}", "documents": statistics.fmean(x["documents"] for x in rows),
                      "answers": statistics.fmean(x["answers"] for x in rows),
                      "p_exact": statistics.fmean(x["exact"] for x in rows),
                      "tau": statistics.fmean(x["tau"] for x in rows)})
    budget = statistics.fmean(f["documents"] for f in fixed3)
    for i, share in enumerate(CHECKPOINTS):
        points = [r["curve"][i] for r in results if r["curve"][i] is not None]
        if points:
            table.append({"policy": f"adaptive ≤{share:.0%} of fixed k=3 documents", "documents": share * budget,
                          "answers": statistics.fmean(p[2] for p in points), "p_exact": statistics.fmean(p[0] for p in points),
                          "tau": statistics.fmean(p[1] for p in points), "seeds": len(points)})
    adaptive = [r["adaptive"] for r in results]
    table.append({"policy": "adaptive at its stop", "documents": statistics.fmean(a["documents"] for a in adaptive),
                  "answers": statistics.fmean(a["answers"] for a in adaptive),
                  "p_exact": statistics.fmean(a["exact"] for a in adaptive),
                  "tau": statistics.fmean(a["tau"] for a in adaptive)})
    d_mean, d_sd = mean_sd(docs_saved)
    a_mean, a_sd = mean_sd(answers_saved)
    equal = equal_accuracy(results, budget)
    return {"case": case, "seeds": len(results), "documents_saved": equal["documents_saved"],
            "answers_saved": equal["answers_saved"], "equal_accuracy": equal,
            "at_target": paired_gap(results, TARGET_SHARE),
            "at_stop": {"documents_saved": d_mean, "documents_saved_sd": d_sd, "answers_saved": a_mean,
                        "answers_saved_sd": a_sd, "p_exact": statistics.fmean(a["exact"] for a in adaptive),
                        "tau": statistics.fmean(a["tau"] for a in adaptive)},
            "table": table}


def paired_gap(results: list[dict], share: float) -> dict:
    """Adaptive at `share` of fixed k = 3's documents against fixed k = 3 on the same seeds (the same true
    qualities): the mean per-seed differences of tau and of exactness, each with its standard error."""
    i = CHECKPOINTS.index(share)
    pairs = [(r["curve"][i], r["fixed"][2]) for r in results if r["curve"][i] is not None]

    def mean_se(values):
        return statistics.fmean(values), (statistics.stdev(values) / len(values) ** 0.5 if len(values) > 1 else 0.0)

    tau, tau_se = mean_se([point[1] - fixed["tau"] for point, fixed in pairs])
    exact, exact_se = mean_se([float(point[0]) - float(fixed["exact"]) for point, fixed in pairs])
    saved = [1 - point[2] / fixed["answers"] for point, fixed in pairs]
    return {"share_of_documents": share, "seeds": len(pairs), "tau_difference": tau, "tau_difference_se": tau_se,
            "p_exact_difference": exact, "p_exact_difference_se": exact_se,
            "answers_saved": statistics.fmean(saved) if saved else None}


def equal_accuracy(results: list[dict], budget: float) -> dict:
    """The first checkpoint where adaptive's mean tau and P(exact) over the seeds reach fixed k = 3's, and the
    savings there (None when adaptive does not reach it within fixed k = 3's documents); per-seed spread of
    the answers saved at that checkpoint."""
    fixed_tau = statistics.fmean(r["fixed"][2]["tau"] for r in results)
    fixed_exact = statistics.fmean(r["fixed"][2]["exact"] for r in results)
    for i, share in enumerate(CHECKPOINTS):
        points = [(r["curve"][i], r["fixed"][2]) for r in results if r["curve"][i] is not None]
        if len(points) < len(results):
            continue
        if (statistics.fmean(p[1] for p, _ in points) >= fixed_tau
                and statistics.fmean(p[0] for p, _ in points) >= fixed_exact):
            saved = [1 - p[2] / f["answers"] for p, f in points]
            return {"share_of_documents": share, "documents_saved": 1 - share, "answers_saved": statistics.fmean(saved),
                    "answers_saved_sd": statistics.stdev(saved) if len(saved) > 1 else 0.0,
                    "fixed_tau": fixed_tau, "fixed_p_exact": fixed_exact}
    return {"share_of_documents": None, "documents_saved": None, "answers_saved": None,
            "fixed_tau": fixed_tau, "fixed_p_exact": fixed_exact}


def print_summary(summary: dict, out=sys.stdout) -> None:
    stop, equal = summary["at_stop"], summary["equal_accuracy"]
    print(f"\n== case {summary['case']}: {summary['seeds']} seeds", file=out)
    if equal["share_of_documents"] is None:
        print("   adaptive does not reach fixed k=3's accuracy (mean tau and P(exact)) within its documents", file=out)
    else:
        print(f"   at equal accuracy (mean tau >= {equal['fixed_tau']:.3f}, P(exact) >= {equal['fixed_p_exact']:.2f}): "
              f"documents saved {equal['documents_saved']:.0%}, answers saved {equal['answers_saved']:.1%} "
              f"± {equal['answers_saved_sd']:.1%}", file=out)
    gap = summary["at_target"]
    print(f"   at {gap['share_of_documents']:.0%} of fixed k=3's documents, adaptive minus fixed k=3 on the same seeds: "
          f"tau {gap['tau_difference']:+.4f} ± {gap['tau_difference_se']:.4f}, P(exact) {gap['p_exact_difference']:+.3f} "
          f"± {gap['p_exact_difference_se']:.3f} (mean ± standard error), answers saved {gap['answers_saved']:.1%}",
          file=out)
    print(f"   at adaptive's own stop: documents saved {stop['documents_saved']:.1%} ± {stop['documents_saved_sd']:.1%}, "
          f"answers saved {stop['answers_saved']:.1%} ± {stop['answers_saved_sd']:.1%} (mean ± sd over seeds)", file=out)
    print(f"{'policy':44} {'documents':>10} {'answers':>9} {'P(exact)':>9} {'tau':>6}", file=out)
    for row in summary["table"]:
        answers = "" if row["answers"] is None else f"{row['answers']:.0f}"
        print(f"{row['policy']:44} {row['documents']:10.1f} {answers:>9} {row['p_exact']:9.2f} {row['tau']:6.3f}",
              file=out)


def _one_seed(case: str, seed: int, annotators: int) -> dict:
    """One seed in an instance of its own (a fresh SQLite file: seeds do not slow each other down)."""
    with tempfile.TemporaryDirectory() as folder:
        app, ctx = prepare(Path(folder), annotators)
        return run_seed(app, case, seed, ctx)


def simulate(cases: list[str], seeds: int, side_seeds: int | None = None, annotators: int = N_ANNOTATORS,
             log=None, workers: int = 1) -> list[dict]:
    """Run every case on its seeds, each seed in its own instance, `workers` processes at once; one summary per
    case (the per-seed results go to `log`)."""
    from concurrent.futures import ProcessPoolExecutor

    summaries = []
    for case in cases:
        count = seeds if case == "main" or side_seeds is None else side_seeds
        if workers > 1:
            with ProcessPoolExecutor(workers) as pool:
                results = list(pool.map(_one_seed, [case] * count, range(count), [annotators] * count))
        else:
            results = [_one_seed(case, seed, annotators) for seed in range(count)]
        if log is not None:
            for seed, result in enumerate(results):
                print(json.dumps({"case": case, "seed": seed, **result}), file=log, flush=True)
        summaries.append(summarise(case, results))
    return summaries


def run(quick: bool = False) -> list[dict]:
    """run_all's rows: the main case's savings at fixed k = 3's accuracy (a few seeds: the CLI runs the 100)."""
    seeds = 2 if quick else 20
    started = time.perf_counter()
    summary = simulate(["main"], seeds)[0]
    print_summary(summary)
    seconds = time.perf_counter() - started
    fixed3 = next(row for row in summary["table"] if row["policy"] == "fixed k=3")
    equal, stop = summary["equal_accuracy"], summary["at_stop"]
    reached = equal["share_of_documents"] is not None
    where = "at fixed k=3's accuracy" if reached else "at its own stop (fixed k=3's accuracy not reached)"
    documents = equal["documents_saved"] if reached else stop["documents_saved"]
    answers = equal["answers_saved"] if reached else stop["answers_saved"]
    return [
        {"name": f"adaptive allocation: documents saved {where}, main case, {seeds} seeds", "value": 100 * documents,
         "unit": "%", "target": None if quick else "≥ 30%", "baseline": fixed3["documents"],
         "baseline_name": "fixed k=3 round-robin: documents read (same seeds, same run)", "ratio": 1 / max(1 - documents, 1e-9)},
        {"name": f"adaptive allocation: answers saved {where}, main case, {seeds} seeds", "value": 100 * answers,
         "unit": "%", "target": None if quick else "≥ 30%", "baseline": fixed3["answers"],
         "baseline_name": "fixed k=3 round-robin: answers scored (same seeds, same run)", "ratio": 1 / max(1 - answers, 1e-9)},
        {"name": f"simulate {seeds} seeds (fixed and adaptive studies through the services)", "value": seconds,
         "unit": "s", "target": None, "baseline": None, "baseline_name": "", "ratio": None},
    ]


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--seeds", type=int, default=100)
    parser.add_argument("--cases", default="main,hard,easy")
    parser.add_argument("--side-seeds", type=int, default=None, help="seeds for the hard and easy cases (default: --seeds)")
    parser.add_argument("--annotators", type=int, default=N_ANNOTATORS, help="annotators in both studies")
    parser.add_argument("--workers", type=int, default=1, help="seeds run in this many processes at once")
    parser.add_argument("--json", action="store_true", help="print one JSON object (after the tables, on stdout)")
    args = parser.parse_args()
    started = time.perf_counter()
    summaries = simulate(args.cases.split(","), args.seeds, args.side_seeds, args.annotators, log=sys.stderr,
                         workers=args.workers)
    for summary in summaries:
        print_summary(summary, out=sys.stderr if args.json else sys.stdout)
    main_case = summaries[0]
    if args.json:
        print(json.dumps({"seeds": main_case["seeds"], "documents_saved": main_case["documents_saved"],
                          "answers_saved": main_case["answers_saved"], "annotators": args.annotators,
                          "cases": summaries, "seconds": round(time.perf_counter() - started, 1)}, indent=1))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
