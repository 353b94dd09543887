"""`eval` on LV-Eval model folders prints LV-Eval's table; the shipped demo is what its seeded generator writes."""
from __future__ import annotations

import json

from app.services.demo import DEMO_PATH
from tests.support import lveval_reference as ref
from tests.support.lveval_data import write_demo, write_model


def test_eval_json_carries_result_json_and_result_csv_per_model(runner, tmp_path):
    alpha = write_model(tmp_path, "alpha", seed=2, rows=8, long_answer=True)
    beta = write_model(tmp_path, "beta", seed=3, rows=5, datasets=["lic_mixup", "dureader_mixup"], levels=["64k"])
    result = runner.invoke(args=["eval", "--json", str(tmp_path)])
    assert result.exit_code == 0, result.output
    entries = json.loads(result.output)
    tables = {e["system"]: e for e in entries if e["task"] == "lveval"}
    for folder in (alpha, beta):
        expected = ref.evaluate_folder(folder)
        table = tables[folder.name]["lveval"]
        assert json.dumps(table["result_json"], ensure_ascii=False, indent=4) == expected["result_json_text"]
        assert table["result_csv"] == expected["result_csv_text"]
        assert table["averages"]["overall"] == ref.paper_averages(expected["table"])["overall"]
    per_file = {e["file"]: e for e in entries if e["task"] != "lveval"}
    path = str(alpha / "cmrc_mixup_64k.jsonl")
    assert per_file[path]["metrics"]["lveval"] == ref.evaluate_folder(alpha)["result_json"]["cmrc_mixup_64k"]
    assert any("recursive" in note["note"] for note in tables["alpha"]["lveval"]["notes"])


def test_eval_prints_the_table_and_reports_a_broken_folder(runner, tmp_path):
    write_model(tmp_path, "alpha", rows=4, datasets=["factrecall_zh"])
    (tmp_path / "alpha" / "factrecall_zh_16k.v2.jsonl").write_text(
        (tmp_path / "alpha" / "factrecall_zh_16k.jsonl").read_text(encoding="utf-8"), encoding="utf-8")
    result = runner.invoke(args=["eval", str(tmp_path)])
    assert result.exit_code == 1
    assert "LV-Eval table not computed" in result.output and "second file for factrecall_zh_16k" in result.output
    (tmp_path / "alpha" / "factrecall_zh_16k.v2.jsonl").unlink()
    printed = runner.invoke(args=["eval", str(tmp_path)]).output
    assert "LV-Eval alpha (official profile; result.csv of evaluation.py" in printed
    assert "dataset_name" in printed and "overall" in printed


def test_the_shipped_demo_is_the_generators_output(tmp_path):
    written = write_demo(tmp_path / "lveval")
    shipped = DEMO_PATH / "lveval"
    names = sorted(p.relative_to(written).as_posix() for p in written.rglob("*") if p.is_file())
    assert names == sorted(p.relative_to(shipped).as_posix() for p in shipped.rglob("*") if p.is_file())
    for name in names:
        assert (written / name).read_bytes() == (shipped / name).read_bytes(), name
