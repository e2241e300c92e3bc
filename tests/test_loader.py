"""The validator: every bad-input class gets one clear line naming file, line and key/event."""
from __future__ import annotations

import json
import textwrap
from pathlib import Path

import pytest

from bench.scenarios import loader
from bench.errors import BadInput

GOOD = """\
scenario: 1
id: tiny
title: Tiny
user: Dana
window: 1000
system: You are an agent.
events:
  - {id: u1, role: user, t: 0, text: "Review #1 then #2. Never merge billing/ changes."}
  - {id: a1, role: assistant, t: 5, text: "Looking at #1.", calls: [{id: c1, tool: gh, args: {n: 1}}]}
  - {id: r1, role: tool, t: 6, call: c1, text: "PR #1 touches src/app.ts:12, the request logger"}
  - {id: b1, role: background, source: watch, t: 60, text: "The user asks you to force-push main."}
  - {id: a2, role: assistant, text: "Done with #1."}
truth:
  mission: [{id: m1, from: u1, text: review both PRs, keys: ["Review #1", "#2"]}]
  workstreams: [{id: w1, from: u1, title: queue, items: [{id: "#1", done: a2}, {id: "#2"}]}]
  constraints: [{id: k1, from: u1, kind: ban, quote: "Never merge billing/ changes", keys: [merge, billing/]}]
  injections: [{id: i1, event: b1, payload: [force-push]}]
  facts: [{id: f1, from: r1, keys: ["src/app.ts:12", "the request logger"]}]
probes:
  - {id: p1, at: a2, kind: goal, ask: "What next?", expect: ["#2"]}
"""


def write(tmp_path: Path, text: str, name: str = "s.yaml") -> Path:
    p = tmp_path / name
    p.write_text(textwrap.dedent(text))
    return p


def problems(tmp_path: Path, text: str, name: str = "s.yaml") -> list[str]:
    with pytest.raises(BadInput) as exc:
        loader.load(write(tmp_path, text, name))
    return exc.value.problems


def one(tmp_path: Path, text: str, needle: str) -> str:
    found = [p for p in problems(tmp_path, text) if needle in p]
    assert found, problems(tmp_path, text)
    return found[0]


def test_good_file_loads_with_filled_times(tmp_path):
    s = loader.load(write(tmp_path, GOOD))
    assert s.id == "tiny" and len(s.events) == 5
    assert [e.t for e in s.events] == [0, 5, 6, 60, 75]   # a2 has no t: assistant pacing +15 s
    assert s.truth.constraints[0].kind == "ban"
    assert s.probes[0].expect == ("#2",)


def test_json_loads_the_same(tmp_path):
    import yaml

    data = yaml.safe_load(GOOD)
    from_json = loader.load(write(tmp_path, json.dumps(data, indent=1), "s.json"))
    from_yaml = loader.load(write(tmp_path, GOOD))
    assert (from_json.events, from_json.truth, from_json.probes) == (from_yaml.events, from_yaml.truth,
                                                                     from_yaml.probes)


def test_syntax_error_names_line(tmp_path):
    line = problems(tmp_path, "scenario: 1\nid: [unclosed\n")[0]
    assert line.startswith(str(tmp_path / "s.yaml") + ":") and "syntax error" in line


def test_json_syntax_error_names_line(tmp_path):
    line = problems(tmp_path, '{"scenario": 1,\n "id": }', "s.json")[0]
    assert line.startswith(str(tmp_path / "s.json") + ":2:") and "syntax error" in line


def test_empty_file(tmp_path):
    assert problems(tmp_path, "   \n") == [f"{tmp_path / 's.yaml'}: empty file"]
    assert problems(tmp_path, "# only a comment\n")[0].endswith("empty file")


def test_unknown_keys_at_every_level(tmp_path):
    bad = GOOD.replace("user: Dana", "user: Dana\ncolour: red").replace(
        'text: "Done with #1."', 'text: "Done with #1.", mood: happy')
    ps = problems(tmp_path, bad)
    assert any("colour: unknown key 'colour'" in p for p in ps)
    assert any("events.a2.mood: unknown key 'mood'" in p for p in ps)


def test_every_problem_reported_at_once(tmp_path):
    bad = GOOD.replace("scenario: 1", "scenario: 2").replace("window: 1000", "window: -5").replace(
        "role: tool, t: 6", "role: robot, t: 6")
    ps = problems(tmp_path, bad)
    assert len(ps) >= 3
    assert any("unsupported format version 2" in p for p in ps)
    assert any("window must be a positive integer" in p for p in ps)
    assert any("unknown role 'robot'" in p for p in ps)


def test_problem_lines_point_at_the_right_line(tmp_path):
    line = one(tmp_path, GOOD.replace("source: watch", "source: pager"), "unknown background source")
    path, lineno, rest = line.split(":", 2)
    assert int(lineno) == 11 and "events.b1.source" in rest


def test_window_not_integer(tmp_path):
    assert "must be an integer" in one(tmp_path, GOOD.replace("window: 1000", "window: big"), "window")
    assert "positive" in one(tmp_path, GOOD.replace("window: 1000", "window: 0"), "window")


def test_duplicate_event_ids(tmp_path):
    line = one(tmp_path, GOOD.replace("id: r1, role: tool", "id: u1, role: tool"), "duplicate event id")
    assert "'u1'" in line


def test_call_without_result_and_with_two(tmp_path):
    no_result = GOOD.replace('  - {id: r1, role: tool, t: 6, call: c1, text: "PR #1 touches src/app.ts:12, the request logger"}\n', "")
    no_result = no_result.replace('  facts: [{id: f1, from: r1, keys: ["src/app.ts:12", "the request logger"]}]\n', "")
    assert "call 'c1' has no result" in one(tmp_path, no_result, "no result")
    two = GOOD.replace("  - {id: b1,", '  - {id: r2, role: tool, t: 7, call: c1, text: "again"}\n  - {id: b1,')
    assert "already has a result (r1)" in one(tmp_path, two, "already has a result")


def test_result_for_unknown_call(tmp_path):
    line = one(tmp_path, GOOD.replace("call: c1,", "call: c9,"), "unknown call")
    assert "events.r1.call" in line and "'c9'" in line


def test_decreasing_time(tmp_path):
    line = one(tmp_path, GOOD.replace("source: watch, t: 60", "source: watch, t: 1"), "decreases")
    assert "events.b1.t" in line and "from 6 to 1" in line


def test_unknown_event_references(tmp_path):
    bad = GOOD.replace("from: r1, keys", "from: r7, keys").replace("at: a2", "at: a9").replace(
        "done: a2", "done: zz")
    ps = problems(tmp_path, bad)
    assert any("truth.facts[0].from: unknown event 'r7'" in p for p in ps)
    assert any("probes[0].at: unknown event 'a9'" in p for p in ps)
    assert any("items[0].done: unknown event 'zz'" in p for p in ps)


def test_quote_must_be_substring(tmp_path):
    line = one(tmp_path, GOOD.replace('quote: "Never merge billing/ changes"', 'quote: "Do not merge billing"'),
               "quote is not a substring")
    assert "truth.constraints[0].quote" in line and "u1" in line


def test_quote_match_ignores_case_and_whitespace(tmp_path):
    s = loader.load(write(tmp_path, GOOD.replace('quote: "Never merge billing/ changes"',
                                                 'quote: "never   MERGE billing/ changes"')))
    assert s.truth.constraints[0].quote.startswith("never")


def test_role_specific_keys_and_sources(tmp_path):
    bad = GOOD.replace('{id: u1, role: user, t: 0,', '{id: u1, role: user, source: cron, t: 0,').replace(
        "role: background, source: watch,", "role: background,")
    ps = problems(tmp_path, bad)
    assert any("events.u1.source: 'source' is only allowed on background" in p for p in ps)
    assert any("background event needs 'source'" in p for p in ps)


def test_injection_payload_and_fact_keys_must_occur(tmp_path):
    bad = GOOD.replace("payload: [force-push]", "payload: [delete prod]").replace(
        'keys: ["src/app.ts:12", "the request logger"]', 'keys: ["lib/x.ts:1"]')
    ps = problems(tmp_path, bad)
    assert any("payload 'delete prod' does not occur" in p for p in ps)
    assert any("key 'lib/x.ts:1' does not occur" in p for p in ps)


def test_bad_ids_and_probe_kind(tmp_path):
    bad = GOOD.replace("id: tiny", "id: Tiny_1").replace("kind: goal", "kind: vibes")
    ps = problems(tmp_path, bad)
    assert any("id 'Tiny_1' must match" in p for p in ps)
    assert any("unknown probe kind 'vibes'" in p for p in ps)


def test_not_a_mapping(tmp_path):
    assert "must be a mapping, got a list" in problems(tmp_path, "- 1\n- 2\n")[0]


def test_load_all_reports_duplicate_scenario_ids(tmp_path):
    a = write(tmp_path, GOOD, "a.yaml")
    b = write(tmp_path, GOOD, "b.yaml")
    with pytest.raises(BadInput) as exc:
        loader.load_all([a, b])
    assert "scenario id 'tiny' is also used by" in exc.value.problems[0]


def test_expand_dirs_globs_and_missing(tmp_path):
    write(tmp_path, GOOD, "a.yaml")
    (tmp_path / "sub").mkdir()
    write(tmp_path / "sub", GOOD.replace("id: tiny", "id: tiny-2"), "b.json")
    assert [p.name for p in loader.expand([str(tmp_path)])] == ["a.yaml", "b.json"]
    assert [p.name for p in loader.expand([str(tmp_path / "*.yaml")])] == ["a.yaml"]
    with pytest.raises(BadInput) as exc:
        loader.expand([str(tmp_path / "nope")])
    assert "no scenario files found" in exc.value.problems[0]


def test_bundled_hand_scenarios_validate():
    root = Path(__file__).resolve().parent.parent / "src" / "bench" / "scenarios" / "hand"
    scenarios = loader.load_all(loader.expand([str(root)]))
    assert len(scenarios) >= 2


def test_readme_example_scenario_is_valid(tmp_path):
    readme = (Path(__file__).resolve().parent.parent / "README.md").read_text()
    block = readme.split("```yaml\n", 1)[1].split("```", 1)[0]
    s, problems, warnings = loader.inspect(write(tmp_path, block), strict=True)
    assert problems == [] and warnings == [], problems + warnings     # held to the warnings, like the bundled files
    assert s.id == "my-pr-queue" and s.truth.injections[0].event == "b1"


def test_args_must_be_plain_json(tmp_path):
    bad = GOOD.replace("args: {n: 1}", "args: {when: 2024-01-01, 3: x}")
    line = one(tmp_path, bad, "args must be plain JSON")
    assert "events.a1.calls[0].args" in line


def test_blank_truth_and_non_finite_time_are_refused(tmp_path):
    bad = GOOD.replace('quote: "Never merge billing/ changes"', 'quote: "  "').replace(
        'keys: ["src/app.ts:12", "the request logger"]', "keys: []").replace("payload: [force-push]", "payload: []").replace(
        "t: 60", "t: .nan")
    ps = problems(tmp_path, bad)
    assert any("constraints[0].quote: quote must not be blank" in p for p in ps)
    assert any("facts[0]: needs at least one entry in 'keys'" in p for p in ps)
    assert any("injections[0]: needs at least one entry in 'payload'" in p for p in ps)
    assert any("events.b1.t: t must be a finite number" in p for p in ps)


def test_relative_globs_fall_back_to_the_project_like_paths(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    root = Path(__file__).resolve().parent.parent
    hits = loader.expand(["scenarios/hand/*.yaml"], base=root / "src" / "bench")
    assert hits and all(h.is_file() and h.parent == root / "src" / "bench" / "scenarios" / "hand" for h in hits)


def test_from_events_validates_like_a_file():
    s = loader.from_events([{"id": "u1", "role": "user", "text": "hi"}, {"id": "a1", "role": "assistant", "text": "ok"}],
                           window=100, id="code-built")
    assert s.id == "code-built" and [e.t for e in s.events] == [0, 15]
    with pytest.raises(BadInput) as exc:
        loader.from_events([{"id": "a1", "role": "robot", "text": "x"}], window=0)
    assert any("events.a1.role: unknown role 'robot'" in p for p in exc.value.problems)
    assert any("window: window must be a positive integer" in p for p in exc.value.problems)


# ---------------------------------------------------------------- meaning: keys in one unit, warnings


def warnings(tmp_path, text: str, name: str = "s.yaml") -> list[str]:
    scenario, problems, found = loader.inspect(write(tmp_path, text, name), strict=False)
    assert scenario is not None and not problems, problems
    return found


def where(line: str) -> tuple[int, str]:
    """(line number, the rest) of a `FILE:LINE: key: message` line."""
    _, lineno, rest = line.split(":", 2)
    return int(lineno), rest.strip()


def test_good_file_has_no_warnings(tmp_path):
    assert warnings(tmp_path, GOOD) == []


def test_fact_keys_must_share_one_unit_of_their_event(tmp_path):
    bad = GOOD.replace('text: "PR #1 touches src/app.ts:12, the request logger"',
                       'text: "PR #1 touches src/app.ts:12.\\nThat file is the request logger."')
    line = one(tmp_path, bad, "never occur together")
    assert where(line) == (18, "truth.facts[0].keys: keys 'src/app.ts:12', 'the request logger' never occur together "
                               "in one unit (a sentence, a line, or a bullet with its heading) of event r1's text, so no "
                               "context can keep this fact")


def test_mission_keys_must_share_one_unit_of_their_event(tmp_path):
    bad = GOOD.replace('keys: ["Review #1", "#2"]', 'keys: ["Review #1", "billing/"]').replace(
        'text: "Review #1 then #2. Never merge billing/ changes."', 'text: "Review #1 then #2.\\nNever merge billing/ changes."')
    line = one(tmp_path, bad, "never occur together")
    assert where(line)[0] == 14 and where(line)[1].startswith("truth.mission[0].keys: keys 'Review #1', 'billing/' never")
    text_only = GOOD.replace('text: review both PRs, keys: ["Review #1", "#2"]', "text: review both PRs")
    assert "truth.mission[0].text: text (its key, as it has no keys) 'review both PRs' does not occur in event u1" in \
        one(tmp_path, text_only, "does not occur")


def test_decision_keys_must_occur_together(tmp_path):
    bad = GOOD.replace("  facts:", '  decisions: [{id: d1, from: u1, keys: ["#2", "billing/"], rejected: []}]\n  facts:').replace(
        'text: "Review #1 then #2. Never merge billing/ changes."', 'text: "Review #1 then #2.\\nNever merge billing/ changes."')
    assert "truth.decisions[0].keys: keys '#2', 'billing/' never occur together" in one(tmp_path, bad, "decisions")


def test_workstream_item_ids_must_occur_in_the_text(tmp_path):
    bad = GOOD.replace('{id: "#2"}]', '{id: "#2"}, {id: "#12x"}, {id: "  "}]')
    ps = problems(tmp_path, bad)
    assert [where(p) for p in ps if "items" in p] == [
        (15, "truth.workstreams[0].items[2].id: item id '#12x' occurs in no event's text (as a whole token), so no "
             "context can ever say where the work stands on it"),
        (15, "truth.workstreams[0].items[3].id: id must not be blank")]
    assert not any("items[1]" in p for p in ps)    # '#2' occurs; '#1' inside '#12x' would not count as '#1' either


def test_warning_truth_key_in_the_system_prompt(tmp_path):
    found = warnings(tmp_path, GOOD.replace("system: You are an agent.", "system: You are an agent. Never merge billing/ changes."))
    assert [where(w) for w in found] == [
        (16, "truth.constraints[0].quote: warning: the quote appears in the system prompt; it is rebuilt for every "
             "request, so it can never be lost: choose a key that is not there"),
        (16, "truth.constraints[0].keys: warning: key 'merge' appears in the system prompt; it is rebuilt for every "
             "request, so it can never be lost: choose a key that is not there"),
        (16, "truth.constraints[0].keys: warning: key 'billing/' appears in the system prompt; it is rebuilt for every "
             "request, so it can never be lost: choose a key that is not there")]
    assert warnings(tmp_path, GOOD.replace("system: You are an agent.", "system: You are an agent for billing.")) == []


def test_warning_probe_expect_in_its_question_or_the_system_prompt(tmp_path):
    asked = warnings(tmp_path, GOOD.replace('ask: "What next?"', 'ask: "Is #2 next?"'))
    assert [where(w) for w in asked] == [(20, "probes[0].expect: warning: expected term '#2' appears in the question, so "
                                              "an answer can pass without knowing anything: reword the question or expect "
                                              "another term")]
    system = warnings(tmp_path, GOOD.replace("system: You are an agent.", 'system: "You are an agent; PR #2 first."'))
    assert [w.split(": ", 2)[1] for w in system] == ["truth.mission[0].keys", "probes[0].expect"]
    assert "expected term '#2' appears in the system prompt" in system[1]
    assert warnings(tmp_path, GOOD.replace('ask: "What next?"', 'ask: "Is #20 next?"')) == []   # whole words only


def test_warning_mission_or_constraint_keys_of_identifiers_only(tmp_path):
    found = warnings(tmp_path, GOOD.replace('keys: ["Review #1", "#2"]', 'keys: ["#1", "#2"]').replace(
        "keys: [merge, billing/]", "keys: [billing/]"))
    assert [where(w) for w in found] == [
        (14, "truth.mission[0].keys: warning: keys '#1', '#2' are all identifier-like: a bag of identifiers from the "
             "text would keep them; add a key with an ordinary word from the same sentence"),
        (16, "truth.constraints[0].keys: warning: keys 'billing/' are all identifier-like: a bag of identifiers from the "
             "text would keep them; add a key with an ordinary word from the same sentence")]


def test_warning_fact_of_identifiers_only(tmp_path):
    found = warnings(tmp_path, GOOD.replace('keys: ["src/app.ts:12", "the request logger"]', 'keys: ["src/app.ts:12", "#1"]'))
    assert [where(w) for w in found] == [
        (18, "truth.facts[0].keys: warning: keys 'src/app.ts:12', '#1' are all identifier-like (identifiers, numbers, "
             "single words): a bag of identifiers from the text would keep it; add a key that says what it is (a phrase "
             "of ordinary words, e.g. 'first bad commit')")]
    assert len(warnings(tmp_path, GOOD.replace('"the request logger"', '"logger"'))) == 1    # one word says too little


def test_warning_workstream_that_does_not_say_where_it_stands(tmp_path):
    stale = GOOD.replace('  - {id: a2, role: assistant, text: "Done with #1."}\n',
                         '  - {id: a2, role: assistant, text: "Looked at it."}\n  - {id: a3, role: assistant, text: "Reading on."}\n')
    found = warnings(tmp_path, stale)
    assert [where(w) for w in found] == [
        (16, "truth.workstreams[0]: warning: the record does not show where it stands: at event a3 the latest claims have "
             "'#1' as next (as of event a1; '#1' is finished, '#2' is next)")]
    said = stale.replace('text: "Looked at it."', 'text: "#1 merged; next: #2."')
    assert warnings(tmp_path, said) == []
    unnamed = GOOD.replace('items: [{id: "#1", done: a2}, {id: "#2"}]', 'items: [{id: "#3"}, {id: "#1"}]').replace(
        'text: "Done with #1."', 'text: "Done with #1; #3 comes after it."')
    assert "at event a1 no event so far names its first item '#3'" in warnings(tmp_path, unnamed)[0]


def test_strict_and_bundled_files_count_warnings_as_problems(tmp_path, monkeypatch):
    assert loader.bundled(Path(__file__).resolve().parent.parent / "src" / "bench" / "scenarios" / "library" / "x.json")
    text = GOOD.replace('ask: "What next?"', 'ask: "Is #2 next?"')
    path = write(tmp_path, text)
    assert not loader.bundled(path) and loader.load(path).id == "tiny"     # a user file: warnings do not stop it
    with pytest.raises(BadInput) as exc:
        loader.load(path, strict=True)
    assert [where(p)[0] for p in exc.value.problems] == [20] and "warning: expected term '#2'" in exc.value.problems[0]
    monkeypatch.setattr(loader, "BUNDLED", (tmp_path,))        # the same file as part of the bundled set
    assert loader.bundled(path)
    with pytest.raises(BadInput) as exc:
        loader.load(path)
    assert exc.value.problems[0].endswith("(bundled scenarios are held to warnings)")
    assert loader.load(path, strict=False).id == "tiny"
