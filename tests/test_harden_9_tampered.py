"""Issue 26, tampered results folders: a results folder is a shared CI artifact, so every value in it is
untrusted. Numbers and kinds in the logs (compactions.jsonl's counts, requests.jsonl's request kind and
tokens), scenario strings (title, event text) and config.yaml's model names carry script; view.html and
report.html, opened in headless Chromium, run none of it (the page marks `data-pwned` if any did), and
report.md holds no raw tag. One small run is tampered once per module; the browser loads are few."""
from __future__ import annotations

import json
import re

import pytest
import yaml

from browser import chromium, dump_dom
from harden import WATCH, cli

pytestmark = pytest.mark.figures   # the figures' captions and readings carry values from the folder too
MARK = "document.body.dataset.pwned"
PAYLOADS = [f"<img src=x onerror=\"{MARK}='img'\">", f"<script>{MARK}='script'</script>",
            f"<svg onload=\"{MARK}='svg'\"></svg>", f"</script><script>{MARK}='end'</script>",
            f"<!--<script>{MARK}='comment'</script>", f"`<img src=x onerror=\"{MARK}='md'\">`"]
HOSTILE = " ".join(PAYLOADS)
NAME = "hostile-watch"


def hostile_scenario(path):
    data = yaml.safe_load(WATCH.read_text(encoding="utf-8"))
    data["id"] = NAME
    data["title"] = "Title " + HOSTILE
    first = data["events"][0]
    first["text"] += " " + HOSTILE
    path.write_text(yaml.safe_dump(data, sort_keys=False, allow_unicode=True), encoding="utf-8")
    return path


def tamper(run, tokens: bool = False):
    """Script in every number and kind the view and the report read from the logs, and in config.yaml
    (`tokens`: in the requests' token counts too, which the report's cache simulator refuses in one line)."""
    comps = [json.loads(ln) for ln in (run / "compactions.jsonl").read_text(encoding="utf-8").splitlines()]
    for i, c in enumerate(comps):
        c.update(n=PAYLOADS[i % 3], before=PAYLOADS[0], after=PAYLOADS[2], repairs=PAYLOADS[0],
                 fallback=HOSTILE, error=HOSTILE if not c.get("ok") else None)
        for call in c.get("calls") or []:
            call["latency_s"] = PAYLOADS[0]
            call["model"] = HOSTILE
    (run / "compactions.jsonl").write_text("".join(json.dumps(c) + "\n" for c in comps), encoding="utf-8")
    reqs = [json.loads(ln) for ln in (run / "requests.jsonl").read_text(encoding="utf-8").splitlines()]
    for r in reqs:
        if r.get("kind") != "agent":
            r["kind"] = PAYLOADS[0]
            r["purpose"] = HOSTILE
        if tokens and r.get("kind") != "agent":
            r["tokens"] = PAYLOADS[2]
        r["event"] = HOSTILE if "event" in r else r.get("event")
    (run / "requests.jsonl").write_text("".join(json.dumps(r) + "\n" for r in reqs), encoding="utf-8")
    trail = [json.loads(ln) for ln in (run / "verdicts.jsonl").read_text(encoding="utf-8").splitlines()]
    for t in trail:            # the scorer's trail: script in its details, item keys and marks
        for v in (t.get("set") or {}).values():
            v[1] = HOSTILE
        if "set" in t:
            t["set"][f"goal:{PAYLOADS[0]}"] = [0, HOSTILE]
        if "marks" in t:
            t["marks"] = {k: [*v, f"fact:{PAYLOADS[2]}"] for k, v in t["marks"].items()}
    (run / "verdicts.jsonl").write_text("".join(json.dumps(t) + "\n" for t in trail), encoding="utf-8")
    cfg = yaml.safe_load((run / "config.yaml").read_text(encoding="utf-8"))
    for role in ("agent", "judge"):
        cfg[role]["model"] = HOSTILE
    cfg.setdefault("cache", {})["name"] = HOSTILE
    cfg["bench"]["commit"] = HOSTILE
    (run / "config.yaml").write_text(yaml.safe_dump(cfg, sort_keys=False), encoding="utf-8")


@pytest.fixture(scope="module")
def tampered(tmp_path_factory):
    tmp = tmp_path_factory.mktemp("tampered")
    scenario = hostile_scenario(tmp / f"{NAME}.yaml")
    run = tmp / "run"
    code, _, err = cli("run", f"scenarios=[{scenario}]", "strategies=[truncate,naive]", "stress=[]", f"out={run}")
    assert code == 0, err
    tamper(run)
    report = cli("report", str(run))
    tamper(run, tokens=True)
    view = cli("view", str(run))
    again = cli("report", str(run))
    return run, view, report, again


def test_the_view_and_the_report_are_written_from_a_tampered_folder(tampered):
    run, (vcode, _, verr), (rcode, _, rerr), (acode, _, aerr) = tampered
    assert vcode == 0, verr
    assert rcode == 0, rerr
    assert (run / "view.html").exists() and (run / "report.html").exists()
    assert acode == 2 and len(aerr.splitlines()) == 1 and "requests.jsonl" in aerr, aerr   # tokens not numbers


def test_report_md_holds_no_raw_tag(tampered):
    run = tampered[0]
    text = (run / "report.md").read_text(encoding="utf-8")
    assert "onerror" in text or "&lt;img" in text               # the values are shown ...
    assert not re.search(r"<[a-zA-Z!/?]", text), re.search(r".{40}<[a-zA-Z!/?].{40}", text)   # ... as text


def test_report_html_escapes_every_value(tampered):
    run = tampered[0]
    page = (run / "report.html").read_text(encoding="utf-8")
    assert "<script" not in page and "<img src=x" not in page and "<svg" not in page and "<!--" not in page


def test_view_html_carries_values_only_as_data(tampered):
    """Outside the page's own script, no tag from the folder; each data file beside the page is one call of
    an id and a JSON literal with no "<" (`blobs` checks that); the logs' counts are numbers in the data."""
    from test_view import blobs

    run = tampered[0]
    page = (run / "view.html").read_text(encoding="utf-8")
    own = page.split("<script>\n\"use strict\";")[0]
    assert "<img" not in own and "<svg" not in own and "<script" not in own
    index, data = blobs(run / "view.html")
    assert index and all(c["id"] in data for c in index)
    for c in index:
        cell = data[c["id"]]
        assert all(isinstance(r[0], int) and isinstance(r[2], int) and r[1] in ("agent", "compaction", "probe", "other")
                   for r in cell["requests"])
        for comp in cell["compactions"]:
            assert all(isinstance(comp[k], (int, float)) for k in ("n", "request", "before", "after", "repairs",
                                                                    "calls", "latency_s"))
    assert any(PAYLOADS[1] in json.dumps(d, ensure_ascii=False) for d in data.values())   # the payloads are there, as data


needs_chromium = pytest.mark.skipif(chromium() is None, reason="Chromium is not installed (apt-get install chromium)")


@needs_chromium
def test_no_script_runs_in_chromium(tampered, tmp_path):
    """The landing grid, the cell that compacted (timeline, compactions, context and items all drawn) and
    its first compaction's diff, and report.html: the payloads show as text, none runs."""
    run = tampered[0]
    cell = f"{NAME}/naive/offline/4500/0"
    for link in ("", f"#cell={cell}", f"#cell={cell}&compaction=0"):   # the grid, a cell, a compaction's diff
        view = dump_dom(f"{(run / 'view.html').as_uri()}{link}", tmp_path / "profile")
        body = re.search(r"<body[^>]*>", view).group(0)
        assert 'data-ready="1"' in body and "data-errors" not in body, body
        assert "pwned" not in body, body
    assert "onerror" in view and "&lt;img" in view and 'class="lost-item"' in view      # shown, as text
    report = dump_dom((run / "report.html").as_uri(), tmp_path / "profile")
    assert "pwned" not in re.search(r"<body[^>]*>", report).group(0)
    assert "&lt;img" in report


@needs_chromium
def test_the_probe_catches_script_when_it_runs(tmp_path):
    """The check above would see script that runs: the same payloads in a page that inserts them raw."""
    page = tmp_path / "raw.html"
    page.write_text(f"<!doctype html><body><div id=d></div><script>document.getElementById('d').innerHTML = "
                    f"{json.dumps(PAYLOADS[0])};</script></body>", encoding="utf-8")
    dom = dump_dom(page.as_uri(), tmp_path / "profile")
    assert 'data-pwned="img"' in dom
