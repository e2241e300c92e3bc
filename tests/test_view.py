"""The viewer: a small view.html with a landing grid, each cell's data in a script file beside it, verdicts
that are the scorer's own (its trail, verdicts.jsonl), and the pages in a real browser."""
from __future__ import annotations

import json
import re
import shutil
from pathlib import Path

import pytest

from bench.cli import main as cli
from bench.results.store import load, read_config, read_csv
from bench.results.trace import Run, cells
from bench.scoring.metric import HEADLINE
from bench.scoring.metrics import shown
from browser import chromium, dump_dom, screenshot

pytestmark = [pytest.mark.heavy, pytest.mark.figures]   # whole runs, scheduled first; their reports draw figures (tests/conftest.py)

STATUS = {"kept", "partial", "lost", "leaked", "stale", "revived", "clean"}
NAIVE = "pr-queue-small/naive/offline/4500/0"


@pytest.fixture(scope="module")
def run(tmp_path_factory):
    out = tmp_path_factory.mktemp("view") / "run"
    assert cli(["run", "scenarios=[scenarios/hand/pr-queue-small.yaml,scenarios/hand/injected-watch.yaml]",
                "strategies=[full,naive]", "stress=[]", f"out={out}"]) == 0
    assert cli(["view", str(out)]) == 0
    return out


def blobs(page: Path) -> tuple[list[dict], dict[str, object]]:
    """The page's index, and the data of each file in its folder, read as the page reads them: each file
    must be exactly one VIEW.put call of an id and a JSON literal (JSON holds no code)."""
    text = page.read_text(encoding="utf-8")
    index = json.loads(re.search(r"^const INDEX = (.*);$", text, re.M).group(1))
    folder = page.parent / json.loads(re.search(r"^const DIR = (.*);$", text, re.M).group(1))
    data = {}
    for f in folder.glob("*.js"):
        m = re.fullmatch(r'VIEW\.put\("([cs]\d+)",(.*)\);\n', f.read_text(encoding="utf-8"), re.S)
        assert m and m.group(1) == f.stem and "<" not in m.group(2), f
        data[m.group(1)] = json.loads(m.group(2))
    return index, data


def test_the_page_is_small_and_its_cells_are_files_beside_it(run):
    page = (run / "view.html").read_text()
    assert not re.search(r"""(src|href)=['"](?!#|data:)""", page)      # no file, no network in the markup
    assert "application/gzip" not in page and "VIEW.put(" not in page.split("window.VIEW")[0]
    index, data = blobs(run / "view.html")
    assert {c["name"] for c in index} == {r["scenario"] + "/" + "/".join(r[k] for k in ("strategy", "writer", "window",
                                          "seed")) for r in read_csv(run / "summary.csv")}
    assert all(c["id"] in data and data[c["id"]]["table"] in data for c in index)
    assert len(page) < 40_000 < sum(f.stat().st_size for f in (run / "view").iterdir())


def test_the_grid_holds_the_summary_scores(run):
    """Each cell's row carries its summary.csv values for the headline metrics, in the registry's order."""
    index, _ = blobs(run / "view.html")
    page = (run / "view.html").read_text()
    metrics = json.loads(re.search(r"^const METRICS = (.*);$", page, re.M).group(1))
    assert [m["column"] for m in metrics] == [m.column for m in shown(HEADLINE)]
    rows = {"/".join(r[k] for k in ("scenario", "strategy", "writer", "window", "seed")): r
            for r in read_csv(run / "summary.csv")}
    for c in index:
        want = [float(rows[c["name"]][m["column"]]) if rows[c["name"]][m["column"]] else None for m in metrics]
        assert c["scores"] == want, c["name"]
    assert any(v is not None and v < 1 for c in index for v in c["scores"])


def test_verdicts_are_the_scorers(run):
    """Every check point row in checks.csv (the scorer's rows) reads the same at that request in the page."""
    index, data = blobs(run / "view.html")
    checks = [r for r in read_csv(run / "checks.csv") if r["point"] in ("compaction", "final")
              and r["metric"] != "next_action"]
    compared = 0
    for c in index:
        cell, scen = data[c["id"]], data[data[c["id"]]["table"]]
        state, at = {}, {}
        for req in cell["requests"]:       # only the requests whose verdicts changed carry them
            for k, v in (req[6] or {}).items():
                state.pop(k) if v is None else state.__setitem__(k, v)
            if req[1] == "agent":
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
    index, data = blobs(run / "view.html")
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


def test_a_context_rebuilds_to_the_logged_messages(run):
    """The page's context at a request (its deltas applied) is the request the scorer reads: the same
    messages' text, in order, with the tokens the log says it sent."""
    index, data = blobs(run / "view.html")
    c = next(x for x in index if x["name"] == NAIVE)
    cell, scen = data[c["id"]], data[data[c["id"]]["table"]]
    trace = Run(run, read_config(run))
    logged = list(trace.requests(next(x for x in cells(load(run)) if x.name == NAIVE)))
    prev: list[int] = []
    assert len(logged) == len(cell["requests"])
    for req, want in zip(cell["requests"], logged):
        cur = [m for s in req[5] for m in (prev[s[0]:s[1]] if isinstance(s, list) else [s])]
        rows = [scen["messages"][-1 - r] if r < 0 else cell["messages"][r] for r in cur]
        assert [r[3] for r in rows] == [m.text for m in want.messages], req[0]
        assert [r[2] for r in rows] == [m.tokens for m in want.messages] and req[2] == want.tokens
        prev = cur


def test_cell_writes_its_own_page_and_bad_cell(run, capsys):
    """--cell writes view-<cell>.html and its own folder; the full page and its files stay as they were."""
    before = {f.name: f.read_bytes() for f in [run / "view.html", *(run / "view").iterdir()]}
    assert cli(["view", str(run), "--cell", "pr-queue-small/naive"]) == 0
    page = run / "view-pr-queue-small_naive.html"
    index, data = blobs(page)
    assert [c["name"] for c in index] == [NAIVE] and len(data) == 2
    assert before == {f.name: f.read_bytes() for f in [run / "view.html", *(run / "view").iterdir()]}
    assert cli(["view", str(run), "--cell", "nope"]) == 2
    assert "--cell nope: no cell" in capsys.readouterr().err


def test_a_run_without_the_scorers_trail_says_so(run, tmp_path):
    """A results folder from before verdicts.jsonl: contexts and compactions still show, the verdicts are
    absent (never re-scored here), and the page says how to get them."""
    old = tmp_path / "old"
    shutil.copytree(run, old, ignore=shutil.ignore_patterns("view*"))
    (old / "verdicts.jsonl").unlink()
    assert cli(["view", str(old)]) == 0
    index, data = blobs(old / "view.html")
    cell = data[next(c["id"] for c in index if c["name"] == NAIVE)]
    assert cell["scored"] is False and cell["marks"] == {} and all(r[6] is None for r in cell["requests"])
    assert cell["compactions"] and "compaction-bench score RUN_DIR" in (old / "view.html").read_text()
    assert cli(["score", str(old)]) == 0                     # re-scoring writes the trail the run wrote
    assert (old / "verdicts.jsonl").read_bytes() == (run / "verdicts.jsonl").read_bytes()


needs_chromium = pytest.mark.skipif(chromium() is None, reason="Chromium is not installed (apt-get install chromium; "
                                                               ".ci/run installs it)")


@needs_chromium
def test_report_and_viewer_render_in_a_browser(run, tmp_path):
    """The landing grid (a row per cell, coloured scores), a cell opened by a deep link, and a compaction's
    diff opened by its own deep link, with what it lost marked."""
    report = dump_dom((run / "report.html").as_uri(), tmp_path / "profile")
    assert "<table id=\"headline\">" in report and 'alt="sawtooth"' in report
    assert 'href="view.html"' in report
    url = (run / "view.html").as_uri()
    landing = dump_dom(url, tmp_path / "profile")
    body = re.search(r"<body[^>]*>", landing).group(0)
    assert 'data-ready="1"' in body and "data-errors" not in body, body
    grid = landing.split('id="grid"')[1].split("</table>")[0]
    assert grid.count('class="row"') == len(read_csv(run / "summary.csv")) and "background:hsl(" in grid
    assert f'data-name="{NAIVE}"' in grid and 'id="cell" hidden' in landing
    view = dump_dom(f"{url}#cell={NAIVE}", tmp_path / "profile")
    body = re.search(r"<body[^>]*>", view).group(0)
    assert 'data-ready="1"' in body and "data-errors" not in body, body
    assert 'id="landing" hidden' in view
    items = view.split('id="items"')[1].split('id="compactions"')[0]
    assert 'class="item st-lost"' in items and 'class="strip"' in items   # the first lost item, with its timeline
    context = view.split('id="context"')[1].split('id="nextact"')[0]
    assert context.count('class="msg ') > 3 and 'class="chip ' in context
    diff = dump_dom(f"{url}#cell={NAIVE}&compaction=0", tmp_path / "profile")
    start = diff.index('<details class="comp on" data-n="0"')
    opened = diff[start:diff.index('<details class="comp" data-n="1"', start)]
    assert 'open=""' in opened.split(">")[0], opened[:300]
    assert "Dropped (" in opened and "Kept (" in opened and "Added (" in opened
    lost = re.findall(r'<li class="lost-item">.*?</span> ([a-z_]+:[^ <]+)', opened)
    checks = [r for r in read_csv(run / "checks.csv") if "/".join(r[k] for k in ("scenario", "strategy", "writer",
              "window", "seed")) == NAIVE and r["point"] == "compaction" and r["check_point"] == "1"]
    assert lost and all(any(f"{r['metric']}:{r['item']}" == k and float(r["score"]) < 1 for r in checks) for k in lost)
    assert 'class="msg role-user carries"' in opened or "carries" in opened   # the dropped carrier is marked
    for name, link in (("landing", url), ("diff", f"{url}#cell={NAIVE}&compaction=0")):
        shot = screenshot(link, tmp_path / f"{name}.png", tmp_path / "profile")
        assert shot.stat().st_size > 10_000


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
