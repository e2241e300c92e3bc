"""report.html in a real browser at 1,280 px: the first screen decides (verdict tables, the cost-versus-knowledge
figure, robustness), the table of contents reaches every section, nothing is wider than the page, and every
figure has its reading."""
from __future__ import annotations

import json
import re

import pytest

from bench.cli import main as cli
from browser import chromium, dump_dom

pytestmark = [pytest.mark.heavy, pytest.mark.figures]   # whole runs, scheduled first; their reports draw figures (tests/conftest.py)

needs_chromium = pytest.mark.skipif(chromium() is None, reason="Chromium is not installed (apt-get install chromium; "
                                                               ".ci/run installs it)")

PROBE = """<script>
const vw = document.documentElement.clientWidth, out = {vw: vw, page: document.documentElement.scrollWidth};
const inside = e => e.closest('.wide') && e.closest('.wide') !== e;   // a table scrolls inside its wrapper
out.wide = [...document.body.querySelectorAll('*')].filter(e => !inside(e) && e.getBoundingClientRect().right > vw + 1)
  .map(e => e.tagName + '.' + e.className).slice(0, 5);
out.toc = [...document.querySelectorAll('#toc a')].map(a => [a.getAttribute('href'),
  !!document.getElementById(a.getAttribute('href').slice(1))]);
out.sections = [...document.querySelectorAll('details > summary > h2')].map(h => h.closest('details').id);
const first = document.querySelector('details');
out.first = first ? first.id : '';
out.verdicts = [...first.querySelectorAll('#versus-floor td:not(:last-child)')].filter(td =>
  ['better', 'worse', 'tied'].includes(td.className)).length;
out.columns = first.querySelectorAll('#versus-floor th').length - 3;   // strategy, cost ×full, worst under
out.oracle = !!first.querySelector('#versus-oracle');
out.front = !!first.querySelector('img[alt=front]');
out.robust = [...first.querySelectorAll('#versus-floor th')].some(th => th.textContent.startsWith('worst under'));
out.figures = [...document.querySelectorAll('figure')].map(f => (f.nextElementSibling || {}).className === 'reading'
  && f.nextElementSibling.textContent.length > 20);
document.body.dataset.probe = JSON.stringify(out);
</script></body>"""


@pytest.fixture(scope="module")
def run(tmp_path_factory):
    out = tmp_path_factory.mktemp("report_browser") / "run"
    assert cli(["run", "scenarios=[scenarios/hand/injected-watch.yaml,scenarios/hand/pr-queue-small.yaml]",
                "strategies=[full,naive,truncate,anchored]", f"out={out}"]) == 0   # naive, anchored: offline:realistic too
    return out


@needs_chromium
def test_the_first_screen_decides_and_the_page_fits_1280_pixels(run, tmp_path):
    probe = tmp_path / "probe.html"
    probe.write_text((run / "report.html").read_text().replace("</body>", PROBE))
    dom = dump_dom(probe.as_uri(), tmp_path / "profile", width=1280)
    found = json.loads(re.search(r'data-probe="([^"]*)"', dom).group(1).replace("&quot;", '"').replace("&amp;", "&"))
    assert found["first"] == "what-to-ship"
    assert found["columns"] >= 7 and found["verdicts"] == 2 * found["columns"], found   # naive, anchored
    assert found["oracle"] and found["front"] and found["robust"], found
    assert found["page"] <= found["vw"] <= 1280 and found["wide"] == [], found
    assert found["toc"] and all(ok for _, ok in found["toc"]), found["toc"]
    assert [h[1:] for h, _ in found["toc"]] == found["sections"]          # every section, in order
    assert found["figures"] and all(found["figures"]), found["figures"]


def test_report_md_has_the_same_first_screen(run):
    md = (run / "report.md").read_text()
    contents = re.search(r"^Contents: (.*)$", md, re.M).group(1)
    anchors = re.findall(r"\]\(#([^)]+)\)", contents)
    assert anchors[0] == "what-to-ship" and len(anchors) == md.count("\n## ")
    first = md.split("## What to ship", 1)[1].split("\n## ", 1)[0]
    assert first.lstrip().startswith("What to ship:")
    assert re.search(r"\| anchored \| [\d.]+ \| better \+", first)      # its verdict against truncate
    assert "![front](figures/front.png)" in first and "**Reading:** The front, cheapest first" in first
    assert "worst under offline:realistic" in first
    assert (run / "figures" / "front.png").exists()
