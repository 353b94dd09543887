"""bench_allocation's check that the real services give what the pure policy gives, on the same world.

One seed: a fresh instance (its own SQLite file) with the benchmark's data set written in L-Eval's format and
imported, the case's annotators as accounts, and an adaptive study whose secret seed is the seed's own. The
simulated annotators take turns, one question each, exactly as allocation_sim.adaptive_design does: ask
annotation.pages.next_question, open the question page (load_question_page: the blind, shuffled answers the
browser gets) and save every answer with annotation.scoring.save_from_request. Only the oracle (which system
wrote an answer) reads the answers' systems.
"""
from __future__ import annotations

import json
import tempfile
from collections import defaultdict
from pathlib import Path

import allocation_sim as sim


def write_data(folder: Path) -> None:
    """The benchmark's 12 documents, 85 questions and 7 systems in L-Eval's format (fictional text)."""
    references, predictions = [], defaultdict(list)
    for d, size in enumerate(sim.document_sizes()):
        instructions = [f"Record {d}, item {q}: how many entries?" for q in range(size)]
        outputs = [f"{q * 3 + d} entries." for q in range(size)]
        references.append({"instructions": instructions, "outputs": outputs, "input": sim.document_text(d),
                           "source": "multidoc_qa", "evaluation": "human"})
        for s in range(sim.N_SYSTEMS):
            for query, gt in zip(instructions, outputs):
                predictions[s].append({"query": query, "gt": gt, f"system{s}_pred": f"System {s} says: {gt} ({query})",
                                       "evaluation": "human"})
    folder.mkdir(parents=True, exist_ok=True)
    (folder / "bench.ref.jsonl").write_text("".join(json.dumps(r) + "\n" for r in references))
    for s, rows in predictions.items():
        (folder / f"system{s}.pred.jsonl").write_text("".join(json.dumps(r) + "\n" for r in rows))


def compare_seed(case: str, seed: int) -> dict:
    with tempfile.TemporaryDirectory() as folder:
        return _compare(case, seed, Path(folder))


def _compare(case: str, seed: int, instance: Path) -> dict:
    from flask_migrate import upgrade
    from sqlalchemy import select

    from app import create_app
    from app.extensions import db
    from app.models import Answer, Question, Study, System
    from app.services.accounts import create_user
    from app.services.annotation.pages import load_question_page, next_question
    from app.services.annotation.scoring import save_from_request
    from app.services.importers import import_path
    from app.services.studies.allocation import allocation_status
    from app.services.studies.setup import StudySpec, create_study

    app = create_app({"INSTANCE_PATH": instance})
    write_data(instance / "data")
    count = 3 if sim.POOLS[case] is None else len(sim.POOLS[case])
    with app.app_context():
        upgrade()
        assert not import_path(instance / "data").failed
        users = [create_user(f"sim{a}", f"sim-pass-{a}-12345", "annotator").id for a in range(count)]
        systems = list(db.session.scalars(select(System.id).order_by(System.name)))
        documents: dict[int, list[int]] = defaultdict(list)
        for question_id, document_id in db.session.execute(select(Question.id, Question.document_id)
                                                           .order_by(Question.document_id, Question.position)):
            documents[document_id].append(question_id)
        questions = [q for d in sorted(documents) for q in documents[d]]
        loads = sim.document_loads()
        world = sim.make_world(case, seed, systems=systems, questions=questions, documents=dict(documents),
                               annotators=users, words={d: loads[i] for i, d in enumerate(sorted(documents))})
        budget = sim.reading_budget(len(documents))
        study = create_study(StudySpec(name=f"adaptive-{case}-{seed}", question_ids=questions, system_ids=systems,
                                       annotator_ids=users, status="open", reference_kinds=[], allocation="adaptive",
                                       budget_documents=budget))
        study.allocation_seed = f"{case}:{seed}"
        db.session.commit()
        oracle = {sha: (q, s) for sha, q, s in db.session.execute(select(Answer.sha256, Answer.question_id,
                                                                         Answer.system_id))}
        given, read, answers = [], set(), 0
        active = list(users)
        while active:
            waiting = 0
            for user in list(active):
                study = db.session.get(Study, study.id)
                found = next_question(study, user)
                if found.question_id is None:
                    if found.reason == "ahead":
                        waiting += 1
                    else:
                        active.remove(user)
                    continue
                page = load_question_page(study, user, found.question_id)
                read.add((user, page.document_id))
                shown = []
                for card in page.answers:
                    if card.value is not None:
                        continue
                    question, system = oracle[card.sha256]
                    shown.append(system)
                    save_from_request(user, {"study": study.id, "question_id": question, "label": card.label,
                                             "value": world.scores[(question, system, user)], "answer": card.sha256,
                                             "seconds": 60})
                    answers += 1
                if shown:
                    given.append((user, found.question_id, tuple(sorted(shown))))
            if active and waiting == len(active):
                break
        ranking_names = allocation_status(db.session.get(Study, study.id)).ranking
        name_to_id = dict(db.session.execute(select(System.name, System.id)).all())
        services_ranking = [name_to_id[name] for name in ranking_names]
        db.session.remove()
        db.engine.dispose()
    pure = sim.adaptive_design(world, sim.policy.Design(readings=budget), seed_text=f"{case}:{seed}")
    pure_given = sorted(pure.given)
    same = {"documents": len(read) == pure.documents, "answers": answers == pure.answers,
            "given": sorted(given) == pure_given, "ranking": services_ranking == pure.ranking}
    return {"case": case, "seed": seed, "agree": all(same.values()), "same": same,
            "services": {"documents": len(read), "answers": answers}, "pure": {"documents": pure.documents,
                                                                                "answers": pure.answers}}
