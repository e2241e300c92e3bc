"""`compaction-bench calibrate --judge`: the probe judge measured against answers a human labelled.

The shipped file (tests/data/judge/answers.jsonl) was written by reading each answer against its rubric,
never from a judge's output; the offline judge's figures on it are pinned so a change to the judge or the
file shows here. The litellm path runs over real HTTP against the loopback server (which answers the judge
prompt with a score), and a judge call that fails is an abstention: counted, shown, left out of κ, never a pass.
"""
from __future__ import annotations

import json
from pathlib import Path

from bench.cli import main as cli
from bench.report.calibration import judge as judge_section
from bench.report.render import Doc, markdown

HERE = Path(__file__).resolve().parent
ANSWERS = HERE / "data" / "judge" / "answers.jsonl"


def run_json(capsys, *args) -> tuple[int, dict]:
    code = cli(["calibrate", "--judge", *map(str, args), "--format", "json"])
    return code, json.loads(capsys.readouterr().out)


def test_shipped_file_has_both_classes_and_enough_labels():
    rows = [json.loads(x) for x in ANSWERS.read_text(encoding="utf-8").splitlines() if x.strip()]
    labels = [r["label"] for r in rows]
    assert len(rows) >= 40
    assert labels.count("met") >= 15 and labels.count("unmet") >= 15 and "cannot_assess" in labels


def test_offline_judge_on_the_shipped_file(capsys):
    code, out = run_json(capsys, ANSWERS)
    assert code == 0
    assert out["judge"] == "offline" and out["offline"] is True
    assert out["n"] == 46 and out["cannot_assess"] == 3 and out["abstained"] == 0 and out["coverage"] == 1.0
    assert out["confusion"] == {"tp": 3, "fp": 4, "fn": 18, "tn": 18}
    assert out["scored"] == 43 and out["kappa"] == -0.0396   # the word-overlap stand-in: no better than chance
    assert {d["id"] for d in out["disagreements"]} >= {"j16", "j24", "j39", "j03", "j35"}


def test_text_output_says_the_offline_judge_is_a_stand_in(capsys):
    assert cli(["calibrate", "--judge", str(ANSWERS)]) == 0
    out = capsys.readouterr().out
    assert "deterministic stand-in" in out and "not an LLM" in out
    assert "coverage 1.000" in out and "cannot_assess labels: 3 (excluded from kappa)" in out
    assert "kappa -0.040" in out


def test_min_kappa_fails_below(capsys):
    assert cli(["calibrate", "--judge", str(ANSWERS), "--min-kappa", "0.2"]) == 1
    assert "below it (-0.040)" in capsys.readouterr().out


def test_pass_score_override_changes_verdicts(capsys):
    _, strict = run_json(capsys, ANSWERS)
    _, loose = run_json(capsys, ANSWERS, "-o", "probes.pass_score=2")
    assert loose["pass_score"] == 2 and loose["confusion"]["tp"] > strict["confusion"]["tp"]


def test_malformed_file_one_line_per_problem(tmp_path, capsys):
    good = {"id": "a", "question": "q?", "rubric": "r", "answer": "x", "label": "met", "note": ""}
    bad = tmp_path / "bad.jsonl"
    bad.write_text("\n".join([json.dumps(good), "{not json", json.dumps({**good, "id": "b", "label": "yes"}),
                              json.dumps({k: v for k, v in good.items() if k != "rubric"} | {"id": "c"}),
                              json.dumps(good)]) + "\n", encoding="utf-8")
    assert cli(["calibrate", "--judge", str(bad)]) == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 4, err
    assert ":2: not JSON" in err[0] and "label 'yes'" in err[1] and "missing 'rubric'" in err[2] \
        and "duplicate id 'a'" in err[3]


def test_o_without_judge_is_a_usage_error(capsys):
    assert cli(["calibrate", str(ANSWERS), "-o", "judge.model=offline"]) == 2


def test_litellm_judge_over_http_and_failed_call_is_an_abstention(loopback, api_key, tmp_path, capsys):
    five = tmp_path / "five.jsonl"
    five.write_text("".join(x + "\n" for x in ANSWERS.read_text(encoding="utf-8").splitlines()[:5]),
                    encoding="utf-8")
    over = ["-o", "judge.model=openai/judge-test", "-o", f"judge.api_base={loopback.url}", "-o", "judge.retries=0",
            "-o", "responses.enabled=false"]
    loopback.fail("500", 1)
    code, out = run_json(capsys, five, *over)
    assert code == 0 and out["judge"] == "openai/judge-test" and out["offline"] is False
    assert loopback.calls == 5                                 # every answer went over HTTP
    assert out["abstained"] == 1 and out["coverage"] == 0.8
    assert out["scored"] == 4 and sum(out["confusion"].values()) == 4   # the abstention is in no cell
    assert "failed to run: judge" in out["abstentions"][0]["why"]
    # with no fault, the server's scores are the offline judge's: the same verdicts over HTTP as in-process
    code, again = run_json(capsys, five, *over)
    _, local = run_json(capsys, five)
    assert again["abstained"] == 0 and again["confusion"] == local["confusion"]


def checks(detail: str):
    import pandas as pd
    return pd.DataFrame([{"metric": "probe", "detail": detail}, {"metric": "goal", "detail": "judge 5/5"}])


def test_report_says_judge_not_calibrated_or_states_kappa(tmp_path, capsys):
    doc = Doc("t")
    judge_section(doc, {"model": "offline"}, {}, checks("judge 3/5; answer: x"))
    text = markdown(doc)
    assert "judge not calibrated" in text and "graded 1 probe answer" in text and "stand-in" in text

    _, out = run_json(capsys, ANSWERS)
    saved = tmp_path / "judge.json"
    saved.write_text(json.dumps(out), encoding="utf-8")
    doc = Doc("t")
    judge_section(doc, {"model": "offline"}, {"judge_calibration": str(saved)}, checks("judge 3/5; answer: x"))
    text = markdown(doc)
    assert "κ -0.040" in text and "coverage 100%" in text and "3 `cannot_assess`" in text

    doc = Doc("t")
    judge_section(doc, {"model": "offline"}, {"judge_calibration": str(saved), "pass_score": 3}, checks("judge 3/5"))
    assert "passes probes at 3/5, not the calibration's 4/5" in markdown(doc)

    doc = Doc("t")
    judge_section(doc, {"model": "openai/x"}, {"judge_calibration": str(saved)}, checks("judge 3/5; answer: x"))
    text = markdown(doc)
    assert "judge not calibrated" in text and "is of judge `offline`" in text

    doc = Doc("t")
    judge_section(doc, {"model": "offline"}, {}, checks("expected: yes; answer: yes"))
    text = markdown(doc)
    assert "graded by rule" in text
