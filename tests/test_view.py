"""The viewer: a static view.html whose verdicts are the scorer's own, and the pages in a real browser."""
from __future__ import annotations

import base64
import gzip
import json
import re

import pytest

from bench.cli import main as cli
from bench.results.store import read_csv
from browser import chromium, dump_dom, screenshot

STATUS = {"kept", "partial", "lost", "leaked", "stale", "revived", "clean"}


@pytest.fixture(scope="module")
def run(tmp_path_factory):
    out = tmp_path_factory.mktemp("view") / "run"
    assert cli(["run", "scenarios=[scenarios/hand/pr-queue-small.yaml,scenarios/hand/injected-watch.yaml]",
                "strategies=[full,naive]", "stress=[]", f"out={out}"]) == 0
    assert cli(["view", str(out)]) == 0
    return out


def blobs(page: str) -> tuple[list[dict], dict[str, object]]:
    index = json.loads(re.search(r"const INDEX = (.*);\n", page).group(1))
    data = {m.group(1): json.loads(gzip.decompress(base64.b64decode(m.group(2))))
            for m in re.finditer(r"<script type='application/gzip' id='([^']+)'>([^<]*)</script>", page)}
    return index, data


def test_the_page_is_self_contained(run):
    page = (run / "view.html").read_text()
    assert not re.search(r"""(src|href)=['"](?!#|data:)""", page)      # no file, no network
    index, data = blobs(page)
    assert {c["name"] for c in index} == {r["scenario"] + "/" + "/".join(r[k] for k in ("strategy", "writer", "window",
                                          "seed")) for r in read_csv(run / "summary.csv")}
    assert all(c["id"] in data and f"s:{c['scenario']}" in data for c in index)


def test_verdicts_are_the_scorers(run):
    """Every check point row in checks.csv (the scorer's rows) reads the same at that request in the page."""
    index, data = blobs((run / "view.html").read_text())
    checks = [r for r in read_csv(run / "checks.csv") if r["point"] in ("compaction", "final")
              and r["metric"] != "next_action"]
    compared = 0
    for c in index:
        cell, scen = data[c["id"]], data[f"s:{c['scenario']}"]
        state, at = {}, {}
        for req in cell["requests"]:
            if req[6] is not None:
                for k, v in req[6].items():
                    state.pop(k) if v is None else state.__setitem__(k, v)
                at[req[0]] = dict(state)
        mine = [r for r in checks if "/".join(r[k] for k in ("scenario", "strategy", "writer", "window", "seed")) == c["name"]]
        for r in mine:
            code, detail = at[int(r["request"])][f"{r['metric']}:{r['item']}"]
            name = scen["status"][code]
            score = float(r["score"])
            worse = r["metric"] in ("leakage", "stale_constraint", "rejected_back")
            want = ("clean" if score == 0 else {"leakage": "leaked", "stale_constraint": "stale",
                                                 "rejected_back": "revived"}[r["metric"]]) if worse else \
                "kept" if score >= 1 else "partial" if score > 0 else "lost"
            assert name == want and detail == r["detail"], (c["name"], r)
            compared += 1
    assert compared > 50


def test_the_next_actions_and_faults_are_the_scorers(run):
    """At each continuation point the page shows the actor's call, its class and the scripted call, and each
    structural fault, exactly as checks.csv has them."""
    index, data = blobs((run / "view.html").read_text())
    rows = read_csv(run / "checks.csv")
    shown = 0
    for c in index:
        mine = [r for r in rows if "/".join(r[k] for k in ("scenario", "strategy", "writer", "window", "seed")) == c["name"]]
        want = [[int(r["request"]) if r["request"] else None, r["point"], r["item"], r["detail"]]
                for r in mine if r["metric"] == "next_action"]
        got = [[n[0], n[1], n[2], f"actor: {n[3]}; scripted: {n[4]}"] for n in data[c["id"]]["next"]]
        assert got == want, c["name"]
        assert [[f[1], f[2]] for f in data[c["id"]]["faults"]] == [[r["item"], r["detail"]] for r in mine
                                                                   if r["metric"] == "fault"]
        shown += len(got)
    assert shown > 0


def test_a_context_rebuilds_to_the_logged_size(run):
    """The page's context at a request (its deltas applied) holds the tokens the log says it sent."""
    index, data = blobs((run / "view.html").read_text())
    c = next(x for x in index if x["strategy"] == "naive")
    cell, scen = data[c["id"]], data[f"s:{c['scenario']}"]
    prev: list[int] = []
    for req in cell["requests"]:
        cur = [m for s in req[5] for m in (prev[s[0]:s[1]] if isinstance(s, list) else [s])]
        tokens = [(scen["messages"][-1 - r] if r < 0 else cell["messages"][r])[2] for r in cur]
        assert len(cur) == sum(1 for _ in cur) and sum(tokens) <= req[2] <= sum(tokens) + 4 * len(tokens) + 8
        prev = cur


def test_cell_filter_and_bad_cell(run, capsys):
    assert cli(["view", str(run), "--cell", "pr-queue-small/naive"]) == 0
    index, _ = blobs((run / "view.html").read_text())
    assert [c["name"] for c in index] == ["pr-queue-small/naive/offline/4500/0"]
    assert cli(["view", str(run), "--cell", "nope"]) == 2
    assert "--cell nope: no cell" in capsys.readouterr().err
    assert cli(["view", str(run)]) == 0


needs_chromium = pytest.mark.skipif(chromium() is None, reason="Chromium is not installed (apt-get install chromium; "
                                                               ".ci/run installs it)")


@needs_chromium
def test_report_and_viewer_render_in_a_browser(run, tmp_path):
    report = dump_dom((run / "report.html").as_uri(), tmp_path / "profile")
    assert "<table id=\"headline\">" in report and 'alt="sawtooth"' in report
    assert 'href="view.html"' in report
    name = "pr-queue-small/naive/offline/4500/0"
    view = dump_dom(f"{(run / 'view.html').as_uri()}#cell={name}", tmp_path / "profile")
    body = re.search(r"<body[^>]*>", view).group(0)
    assert 'data-ready="1"' in body and "data-errors" not in body, body
    items = view.split('id="items"')[1].split('id="context"')[0]
    assert 'class="item st-lost"' in items                        # the first lost item is opened
    context = view.split('id="context"')[1].split('id="compactions"')[0]
    assert context.count('class="msg ') > 3 and 'class="chip ' in context


@needs_chromium
def test_the_headline_fits_1280_pixels(run, tmp_path):
    """At 1,280 px the page needs no horizontal scrolling: the headline table is no wider than the body."""
    probe = tmp_path / "probe.html"
    page = (run / "report.html").read_text()
    probe.write_text(page.replace("</body>", "<script>document.body.dataset.width = document.getElementById("
                                             "'headline').scrollWidth + '/' + document.documentElement.clientWidth;"
                                             "</script></body>"))
    dom = dump_dom(probe.as_uri() + "?w", tmp_path / "profile").replace("&quot;", '"')
    table, page_width = map(int, re.search(r'data-width="(\d+)/(\d+)"', dom).group(1, 2))
    assert table <= min(page_width, 1280), (table, page_width)
    shot = screenshot(probe.as_uri(), tmp_path / "first.png", tmp_path / "profile")
    assert shot.stat().st_size > 10_000
