"""The harness's own compactions: the importers keep them (Claude Code, Codex, ATIF fixtures in the real formats),
`recorded` installs exactly what the harness installed, and a scenario without them is refused in one line."""
from __future__ import annotations

import csv
import json
import re
from pathlib import Path

import pytest

from bench.cli import main as cli
from bench.scenarios import loader
from bench.scenarios.importers.common import session_tokens
from bench.strategies.recorded import Recorded

from test_strategy_common import run
from transcripts import ROOT

DATA = ROOT / "tests" / "data"
CC, CODEX, ATIF = DATA / "claude-code-two-compactions.jsonl", DATA / "codex-rollout.jsonl", DATA / "atif-trajectory.json"


def imported(fmt: str, src: Path, tmp_path: Path, name: str = "s.json"):
    out = tmp_path / name
    assert cli(["import", fmt, str(src), "--out", str(out)]) == 0
    return loader.load(out)


def after_boundary(s, n: int):
    """The request Recorded sends right after compaction `n`, and the events between it and that request."""
    _, requests, comps = run(s, Recorded(), name="recorded")
    assert [c["recorded_after"] for c in comps] == [rc.after for rc in s.compactions]
    pos = {e.id: i for i, e in enumerate(s.events)}
    start = pos[s.compactions[n].after] + 1
    ask = next(i for i in range(start, len(s.events)) if s.events[i].role == "assistant")
    k = sum(1 for e in s.events[:ask] if e.role == "assistant")
    return [(m.role, m.text) for m in requests[k][1:]], s.events[start:ask]


def test_claude_code_keeps_both_boundaries_and_recorded_installs_the_summary(tmp_path):
    s = imported("claude-code", CC, tmp_path)
    lines = [json.loads(x) for x in CC.read_text().splitlines()]
    assert [(rc.trigger, rc.pre_tokens) for rc in s.compactions] == [("auto", 158211), ("manual", 91877)]
    summaries = [x["message"]["content"] for x in lines if x.get("isCompactSummary")]
    assert not any(e.text in summaries for e in s.events)            # no other strategy sees Claude Code's summary
    for n, rc in enumerate(s.compactions):
        boundary = [i for i, x in enumerate(lines) if x.get("subtype") == "compact_boundary"][n]
        installed = []
        for x in lines[boundary + 1:]:
            if not (x.get("isCompactSummary") or x.get("isMeta")):
                break
            installed.append(("user", x["message"]["content"]))
        got, between = after_boundary(s, n)
        assert installed[0] == ("user", summaries[n]) and len(installed) == (3 if n == 0 else 1)
        assert got == installed + [("user" if e.role != "tool" else "tool", m) for e, m in
                                   ((e, f"[Harness: {e.source}]\n{e.text}" if e.role == "background" else e.text)
                                    for e in between)]


def test_codex_replacement_history_is_the_context_recorded_continues_from(tmp_path):
    s = imported("codex", CODEX, tmp_path)
    lines = [json.loads(x) for x in CODEX.read_text().splitlines()]
    item = next(x["payload"] for x in lines if x["type"] == "compacted")
    history = [(m["role"], m["content"][0]["text"]) for m in item["replacement_history"]]
    (rc,) = s.compactions
    assert rc.pre_tokens == 233000 and rc.trigger == "unknown"
    assert [x.kind for x in rc.installed] == ["harness", "retained", "retained", "summary"]
    assert all(x.event for x in rc.installed if x.kind == "retained")   # the user's own messages, verbatim
    got, between = after_boundary(s, 0)
    assert not between and got == history


def test_atif_compaction_step(tmp_path):
    s = imported("atif", ATIF, tmp_path)
    steps = json.loads(ATIF.read_text())["steps"]
    (rc,) = s.compactions
    assert (rc.trigger, rc.pre_tokens) == ("auto", 48000)
    summary = next(x["message"] for x in steps if (x.get("extra") or {}).get("is_compact_summary"))
    got, between = after_boundary(s, 0)
    assert not between and got == [("user", summary)]
    assert summary not in {e.text for e in s.events}


def test_a_scenario_without_recorded_compactions_is_one_line(tmp_path, capsys):
    hand = ROOT / "src" / "bench" / "scenarios" / "hand"
    assert cli(["run", f"scenarios=[{hand}]", "strategies=[recorded]", f"out={tmp_path / 'r'}"]) == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and "'recorded'" in err[0] and "records none" in err[0]


def test_bad_compactions_name_their_key(tmp_path):
    s = imported("codex", CODEX, tmp_path)
    data = json.loads((tmp_path / "s.json").read_text())
    data["compactions"][0]["installed"][1] = {"kind": "retained", "event": data["events"][-1]["id"], "text": "x"}
    data["compactions"][0]["after"] = data["events"][-1]["id"]
    bad = tmp_path / "bad.json"
    bad.write_text(json.dumps(data))
    scenario, problems, _ = loader.inspect(bad)
    assert scenario is None and s.compactions
    assert any("compactions[0].after" in p and "never reaches a request" in p for p in problems)
    assert any("compactions[0].installed[1]" in p and "not both" in p for p in problems)


def test_a_summary_that_drops_the_active_task_scores_lower(tmp_path):
    """As in reported Codex and Claude Code regressions: the same session, its summaries with the task and the
    next step cut; recorded keeps less of the goal on it."""
    dropped = tmp_path / "dropped.jsonl"
    lines = [json.loads(x) for x in CC.read_text().splitlines()]
    for x in lines:
        if x.get("isCompactSummary"):
            x["message"]["content"] = "\n".join(ln for ln in x["message"]["content"].splitlines()
                                                if not ln.startswith(("1.", "3.", "4.")))
    dropped.write_text("".join(json.dumps(x) + "\n" for x in lines))
    assert cli(["import", "claude-code", str(CC), "--id", "kept", "--out", str(tmp_path / "s" / "kept.json")]) == 0
    assert cli(["import", "claude-code", str(dropped), "--id", "dropped", "--out", str(tmp_path / "s" / "dropped.json")]) == 0
    out = tmp_path / "r"
    assert cli(["run", f"scenarios=[{tmp_path / 's'}]", "strategies=[recorded,full]", f"out={out}"]) == 0
    rows = {(r["scenario"], r["strategy"]): r for r in csv.DictReader((out / "summary.csv").open())}
    goal = {k: float(r["goal_retention"]) for k, r in rows.items()}
    assert goal["kept", "full"] == goal["dropped", "full"] == 1.0
    assert goal["dropped", "recorded"] < goal["kept", "recorded"]


def test_review_lists_every_derived_item_with_its_source_and_confidence(tmp_path):
    out = tmp_path / "cc.json"
    assert cli(["import", "claude-code", str(CC), "--out", str(out), "--review"]) == 0
    page = (tmp_path / "cc.json.review.md").read_text()
    data = json.loads(out.read_text())
    items = [x for section in data["truth"].values() for w in section for x in w.get("items", [w])]
    assert items and all(0 <= x["confidence"] <= 1 and x["source"].startswith(str(CC)) for x in items)
    assert data["truth"]["workstreams"][0]["items"][0]["id"] == "exponential backoff"   # the user's later task
    for x in items:
        line = next(ln for ln in page.splitlines() if ln.startswith(f"- `{x['id']}`") or f": `{x['id']}` |" in ln)
        assert x["source"] in line and str(x["confidence"]) in line
    lines = CC.read_text().splitlines()
    m1 = next(x for x in data["truth"]["mission"] if x["id"] == "m1")
    # the mission comes from TASK.md as the agent read it, not from "Read TASK.md and do what it says"
    assert m1["text"].startswith("Migrate the orders, billing and users services")
    assert "TASK.md" in json.loads(lines[int(m1["source"].rsplit(":", 1)[1]) - 2])["message"]["content"][0]["input"]["file_path"]
    assert "after `" in page and "(auto, 158,211 tokens before)" in page
    # the requirements of TASK.md are the user's too: constraints from the read's result, with its line; in a file of
    # instructions a rule needs no cue word ("Each service keeps its public API unchanged.")
    rules = [c for c in data["truth"]["constraints"] if c["from"] == m1["from"]]
    assert [(c["kind"], c["quote"]) for c in rules] == [("ban", "Never deploy to prod without my sign-off."),
                                                        ("must", "Each service keeps its public API unchanged.")]
    assert all(c["source"] == m1["source"] and 0 < c["confidence"] < 1 for c in rules)
    assert rules[1]["confidence"] < rules[0]["confidence"]   # no cue: less sure


def test_openhands_condensation_keeps_the_view_with_its_summary_at_the_offset(tmp_path):
    src = DATA / "openhands-condensation.jsonl"
    s = imported("openhands", src, tmp_path)
    history = json.loads(src.read_text())["history"]
    cond = next(e for e in history if e.get("action") == "condensation")["args"]
    (rc,) = s.compactions
    assert [x.kind for x in rc.installed] == ["summary", "retained", "retained", "retained"]
    kept = [s.events[i] for i in range(3)]   # the user's message and the first call with its result: not forgotten
    assert [x.event for x in rc.installed[1:]] == [e.id for e in kept]
    got, between = after_boundary(s, 0)
    assert not between
    assert got == [("user", cond["summary"])] + [(e.role, e.text) for e in kept]


def test_provenance_records_the_source_and_the_secret_scan_redacts_every_hit(tmp_path):
    import hashlib

    key, pem = "sk-proj-" + "Ab3" * 12, "-----BEGIN RSA PRIVATE KEY-----\nMIIEow" + "x" * 40 + "\n-----END RSA PRIVATE KEY-----"
    lines = [json.loads(x) for x in CC.read_text().splitlines()]
    first = next(i for i, x in enumerate(lines) if x.get("type") == "user")
    lines[first]["message"]["content"] += f" The staging key is OPENAI_API_KEY={key} if you need it."
    result = next(x for x in lines if x.get("type") == "user" and isinstance(x["message"]["content"], list))
    result["message"]["content"][0]["content"] += "\n" + pem
    src = tmp_path / "secret.jsonl"
    src.write_text("".join(json.dumps(x) + "\n" for x in lines))
    out = tmp_path / "s.json"
    assert cli(["import", "claude-code", str(src), "--out", str(out), "--licence", "CC-BY-4.0", "--review"]) == 0
    text = out.read_text()
    assert key not in text and "MIIEow" not in text and "[REDACTED:api-key]" in text and "[REDACTED:private-key]" in text
    prov = json.loads(text)["provenance"]
    assert prov == {"format": "claude-code", "source": str(src), "sha256": hashlib.sha256(src.read_bytes()).hexdigest(),
                    "licence": "CC-BY-4.0", "secrets_redacted": 2, "secret_kinds": ["api-key", "private-key"]}
    assert "licence: CC-BY-4.0" in (tmp_path / "s.json.review.md").read_text()
    assert loader.load(out).truth.mission   # the redacted file is still a valid scenario


def test_a_folder_is_imported_whole_with_a_length_filter_and_a_broken_file_costs_only_itself(tmp_path, capsys):
    folder = tmp_path / "logs"
    (folder / "a").mkdir(parents=True)
    (folder / "b").mkdir()
    (folder / "a" / "s.jsonl").write_text((DATA / "claude-code-session.jsonl").read_text())
    (folder / "b" / "s.jsonl").write_text((DATA / "claude-code-session.jsonl").read_text())
    (folder / "b" / "long.jsonl").write_text(CC.read_text())
    (folder / "b" / "broken.jsonl").write_text("{oops\n")
    out = tmp_path / "lib"
    sizes = {}
    for p in (folder / "a" / "s.jsonl", folder / "b" / "long.jsonl"):
        imported("claude-code", p, tmp_path, p.name + ".json")
        sizes[p.name] = session_tokens(json.loads((tmp_path / (p.name + ".json")).read_text()))
    cut = (min(sizes.values()) + max(sizes.values())) // 2
    assert min(sizes.values()) < cut <= max(sizes.values())
    assert cli(["import", "claude-code", str(folder), "--out", str(out), "--min-tokens", str(cut)]) == 2
    captured = capsys.readouterr()
    assert captured.err.strip().splitlines() == [f"{folder / 'b' / 'broken.jsonl'}:1: not valid JSON: "
                                                 "Expecting property name enclosed in double quotes (column 2)"]
    longest = max(sizes, key=sizes.get)
    assert len(list(out.glob("*.json"))) == (2 if longest == "s.jsonl" else 1)
    assert cli(["import", "claude-code", str(folder / "a"), "--out", str(tmp_path / "all")]) == 0
    assert [p.name for p in (tmp_path / "all").glob("*.json")] == ["s.json"]


SIX, SIX_DROPPED = DATA / "claude-code-six-services.jsonl", DATA / "claude-code-six-services-dropped.jsonl"
ACTIVE = ("Primary Request", "All user messages", "Pending Tasks", "Current Work", "Optional Next Step")


def _summaries(src: Path, dst: Path, rewrite) -> None:
    """`src` with each compact summary rewritten: `rewrite(sections, items)` gets its numbered sections (the text
    before the first one at index 0) and the items of the record's calls so far, and returns the new sections."""
    lines = [json.loads(x) for x in src.read_text().splitlines()]
    called: list[str] = []
    for x in lines:
        for part in x.get("message", {}).get("content", []) if isinstance(x.get("message", {}).get("content"), list) else ():
            if part.get("type") == "tool_use" and "/src/" in part["input"].get("file_path", ""):
                called.append(part["input"]["file_path"].split("/src/")[1].split("/")[0])
        if x.get("isCompactSummary"):
            sections = re.split(r"\n(?=\d+\. [A-Z][^\n]*:\n)", x["message"]["content"])
            x["message"]["content"] = "\n".join(rewrite(sections, called))
    dst.write_text("".join(json.dumps(x) + "\n" for x in lines))


def _dropped(sections, called):
    """What reported Codex and Claude Code regressions do: the summary keeps the history, drops the active task."""
    return [s for s in sections if not re.match(r"\d+\. (?:%s)" % "|".join(ACTIVE), s)]


@pytest.fixture(scope="module")
def six(tmp_path_factory):
    """recorded and full on the six-service session: its summaries as Claude Code wrote them (kept), with the
    active task dropped, and dropped plus the cheapest next-lines a gaming summary writes: every item of the
    task, or the item of the record's latest call."""
    tmp = tmp_path_factory.mktemp("six")
    every = ("orders", "billing", "users", "invoices", "refunds", "ledger")
    variants = {"kept": SIX, "dropped": SIX_DROPPED,
                "every": lambda s, c: _dropped(s, c) + [f"Next: {', '.join(every)}."],
                "latest": lambda s, c: _dropped(s, c) + [f"Next: {c[-1]}."]}
    for name, src in variants.items():
        if callable(src):
            _summaries(SIX, tmp / f"{name}.jsonl", src)
            src = tmp / f"{name}.jsonl"
        assert cli(["import", "claude-code", str(src), "--id", name, "--out", str(tmp / "s" / f"{name}.json")]) == 0
    assert cli(["run", f"scenarios=[{tmp / 's'}]", "strategies=[recorded,full]", f"out={tmp / 'r'}"]) == 0
    return {(r["scenario"], r["strategy"]): r for r in csv.DictReader((tmp / "r" / "summary.csv").open())}


def test_the_dropped_fixture_is_the_kept_one_without_its_summaries_active_sections(tmp_path):
    _summaries(SIX, tmp_path / "d.jsonl", lambda s, c: [re.sub(r"^\d+\.", "", x) for x in _dropped(s, c)])
    _summaries(SIX_DROPPED, tmp_path / "f.jsonl", lambda s, c: [re.sub(r"^\d+\.", "", x) for x in s])
    assert (tmp_path / "d.jsonl").read_text() == (tmp_path / "f.jsonl").read_text()
    assert SIX.read_text() != SIX_DROPPED.read_text()


def test_a_summary_that_drops_the_active_task_loses_the_goal_and_the_next_action(six):
    """A real-format session long enough for scheduled continuation points: the oracle's context answers them
    (the offline actor reads the agent's "next: users" and its Read, Edit, test routine), and recorded on the
    summary without the task scores lower on goal and on next_action_agreement than on the summary with it."""
    for name in ("kept", "dropped"):
        assert int(six[name, "full"]["next_points"]) >= 4 and float(six[name, "full"]["next_action_agreement"]) == 1.0
        assert six[name, "recorded"]["next_points"] == six[name, "full"]["next_points"]
    col = lambda name, c: float(six[name, "recorded"][c])   # noqa: E731  (a missing value fails here)
    assert col("dropped", "goal_retention") < col("kept", "goal_retention")
    assert col("dropped", "next_action_agreement") < col("kept", "next_action_agreement")


def test_a_next_line_naming_every_item_or_the_latest_does_not_beat_the_honest_summary(six):
    kept = float(six["kept", "recorded"]["next_action_agreement"])
    for name in ("every", "latest"):
        assert float(six[name, "recorded"]["next_action_agreement"]) < kept
        assert float(six[name, "recorded"]["goal_retention"]) < float(six["kept", "recorded"]["goal_retention"])
