"""One report document, rendered twice: Markdown and self-contained HTML.

A report is a list of blocks (headings, paragraphs, tables, figures). Figures are
PNG bytes: written to figures/NAME.png and linked from the Markdown, embedded as
base64 in the HTML, so report.html needs no other file. Each heading opens a section:
both renderings start with a table of contents linking every one, and in the HTML each
is a <details> a reader can fold (no script, so the page works from a file and offline).
A figure never comes alone: its one-line reading, computed from the numbers, says what
it shows, because a plot nobody reads the same way is not a finding.
"""
from __future__ import annotations

import base64
import html
import re
from concurrent.futures import Future
from dataclasses import dataclass, field
from typing import Any


@dataclass
class Table:
    columns: list[str]
    rows: list[list[Any]]
    note: str = ""
    id: str = ""          # the HTML table's id (the headline is `headline`)


@dataclass
class Figure:
    name: str
    png: bytes
    caption: str = ""
    reading: str = ""     # the one line that says what the figure shows (Doc.figure sets it)


@dataclass(frozen=True)
class Mark:
    """A table cell with a verdict: coloured in HTML (better / worse / tied / not measurable), its words in
    Markdown. `sub`: a second, smaller line (an interval)."""
    text: str
    kind: str
    sub: str = ""

    def __str__(self) -> str:
        return " ".join(x for x in (self.kind if self.kind not in self.text else "", self.text,
                                    f"[{self.sub}]" if self.sub else "") if x)


@dataclass
class Doc:
    title: str
    blocks: list[tuple[str, Any]] = field(default_factory=list)

    def h(self, text: str) -> None:
        self.blocks.append(("h", text))

    def p(self, text: str) -> None:
        self.blocks.append(("p", text))

    def table(self, t: Table) -> None:
        self.blocks.append(("table", t))

    def side(self, on: bool) -> None:
        """Blocks between side(True) and side(False) sit side by side in the HTML (a figure beside its table,
        so the first screen holds both); one after another in the Markdown."""
        self.blocks.append(("side", on))

    def link(self, text: str, href: str) -> None:
        """A link to a file beside the report (relative, so the folder can move)."""
        self.blocks.append(("link", (text, href)))

    def figure(self, f: "Figure | Future | None", reading: str) -> None:
        """A figure, or the future of one being drawn elsewhere (`figures.Painter`): `resolve()` waits.
        `reading`: one line saying what it shows."""
        if f is not None:
            self.blocks.append(("figure", (f, reading)))

    def resolve(self) -> None:
        """Every figure drawn: futures replaced by their result, figures that came out empty dropped."""
        blocks = []
        for k, b in self.blocks:
            if k == "figure" and isinstance(b, tuple):
                f, reading = b
                f = f.result() if isinstance(f, Future) else f
                if f is None:
                    continue
                f.reading = reading
                b = f
            blocks.append((k, b))
        self.blocks = blocks

    def sections(self) -> list[tuple[str, str]]:
        """(anchor, heading) of every section, in order: the table of contents."""
        return list(zip(anchors([b for k, b in self.blocks if k == "h"]), [b for k, b in self.blocks if k == "h"]))

    def figures(self) -> list[Figure]:
        return [b for kind, b in self.blocks if kind == "figure"]


def anchors(headings: list[str]) -> list[str]:
    """GitHub's heading anchors (lower case, punctuation dropped, spaces as hyphens, repeats numbered), so the
    Markdown's contents link on GitHub and the HTML's ids are the same words."""
    out, seen = [], {}
    for h in headings:
        slug = re.sub(r"[^\w\- ]", "", str(h).strip().lower()).replace(" ", "-")
        n = seen.get(slug, 0)
        seen[slug] = n + 1
        out.append(slug if n == 0 else f"{slug}-{n}")
    return out


def cell(v: Any) -> str:
    if isinstance(v, Mark):
        return str(v)
    if v is None or v == "" or (isinstance(v, float) and v != v):
        return ""
    if isinstance(v, float):
        if 0 < abs(v) < 0.01:
            return f"{v:.3g}"
        return f"{v:.3f}" if abs(v) < 1000 else f"{v:,.0f}"
    if isinstance(v, int):
        return f"{v:,}"
    return str(v)


def md(text: Any) -> str:
    """Text for report.md, where Markdown renderers pass raw HTML through: no `<` (so no tag, comment or
    autolink can start: `&lt;` reads as `<`), no inline link (`](` kept apart), no line breaks. Scenario
    strings, model names and whatever a results folder holds reach the report: none of it may become
    markup."""
    return " ".join(str(text).replace("<", "&lt;").replace("](", "]\\(").splitlines())


def markdown(doc: Doc) -> str:
    out = [f"# {md(doc.title)}", ""]
    toc = doc.sections()
    first = next((i for i, (k, _) in enumerate(doc.blocks) if k == "h"), len(doc.blocks))
    for i, (kind, b) in enumerate(doc.blocks):
        if i == first and toc:
            out += ["Contents: " + " · ".join(f"[{md(h)}](#{a})" for a, h in toc), ""]
        if kind == "side":
            continue
        if kind == "h":
            out += [f"## {md(b)}", ""]
        elif kind == "p":
            out += [md(b), ""]
        elif kind == "link":   # the report's own links to files beside it
            out += [f"[{md(b[0])}]({b[1]})", ""]
        elif kind == "table":
            out.append("| " + " | ".join(md(c).replace("|", "\\|") for c in b.columns) + " |")
            out.append("|" + "|".join("---" for _ in b.columns) + "|")
            out += ["| " + " | ".join(md(cell(v)).replace("|", "\\|") for v in row) + " |" for row in b.rows]
            out += ([f"\n{md(b.note)}"] if b.note else []) + [""]
        elif kind == "figure":
            out += [f"![{md(b.name)}](figures/{b.name}.png)", ""]
            if b.caption:
                out += [f"*{md(b.caption)}*", ""]
            out += [f"**Reading:** {md(b.reading)}", ""]
    return "\n".join(out)


STYLE = """body{font-family:system-ui,sans-serif;max-width:1180px;margin:1.5em auto;padding:0 1em;color:#222}
#headline{font-size:.85em}#headline td,#headline th{padding:.2em .45em}
.wide{overflow-x:auto;max-width:100%}table{border-collapse:collapse;margin:.5em 0 1.5em;font-size:.9em}
nav{font-size:.9em;line-height:1.6;border-bottom:1px solid #ddd;padding-bottom:.4em}nav a{white-space:nowrap}
details>summary{cursor:pointer}details>summary h2{display:inline}section{margin-top:1em}
.verdicts{font-size:.74em}.verdicts td,.verdicts th{padding:.15em .25em}.verdicts td{white-space:nowrap}
td small{color:#555}.wide+p{font-size:.85em;color:#444}
td.better{background:#e3f4e6}td.worse{background:#fbe3e0}td.tied{background:#f4f4f4}td.unmeasured{color:#888}
p.reading{margin-top:-1em;font-size:.9em}figure{margin:0}
.side{display:flex;flex-wrap:wrap;gap:1.5em;align-items:flex-start}.side>div{flex:1 1 420px;min-width:0}
code{background:#f3f3f3;padding:0 .2em}th,td{border:1px solid #ccc;padding:.25em .6em}
th{background:#f3f3f3}td{text-align:right}td:first-child,td:nth-child(2){text-align:left}
img{max-width:100%;border:1px solid #eee}figcaption{color:#555;font-size:.9em;margin-bottom:1.5em}"""


def inline(text: str) -> str:
    """Markdown's `code` spans as <code>, everything else escaped (the same prose feeds report.md)."""
    parts = html.escape(text).split("`")
    return "".join(f"<code>{p}</code>" if i % 2 else p for i, p in enumerate(parts))


SYMBOL = {"better": "▲ ", "worse": "▼ ", "tied": "= "}


def td(v: Any) -> str:
    """A table cell; a Mark coloured by its verdict, the word kept for a reader who cannot tell the colours."""
    if not isinstance(v, Mark):
        return f"<td>{html.escape(cell(v))}</td>"
    kind = v.kind if v.kind in SYMBOL else "unmeasured"
    sub = f"<br><small>{html.escape(v.sub)}</small>" if v.sub else ""
    return f"<td class='{kind}' title='{html.escape(v.kind)}'>{SYMBOL.get(kind, '')}{html.escape(v.text)}{sub}</td>"


def to_html(doc: Doc) -> str:
    e = html.escape
    out = ["<!doctype html><html><head><meta charset='utf-8'>", f"<title>{e(doc.title)}</title>",
           f"<style>{STYLE}</style></head><body>", f"<h1>{e(doc.title)}</h1>"]
    toc = iter(doc.sections())
    opened = side = False
    first = next((i for i, (k, _) in enumerate(doc.blocks) if k == "h"), len(doc.blocks))
    for i, (kind, b) in enumerate(doc.blocks):
        if i == first and doc.sections():
            out.append("<nav id='toc'><b>Contents:</b> " + " · ".join(
                f"<a href='#{e(a)}'>{e(h)}</a>" for a, h in doc.sections()) + "</nav>")
        if kind == "side":
            out.append("<div class='side'>" if b else "</div>")
            side = bool(b)
            continue
        if side:
            out.append("<div>")
        if kind == "h":
            out.append(("</details>" if opened else "") + f"<details open id='{e(next(toc)[0])}'><summary><h2>"
                       f"{e(b)}</h2></summary>")
            opened = True
        elif kind == "p":
            out.append(f"<p>{inline(b)}</p>")
        elif kind == "link":
            out.append(f"<p><a href='{e(b[1])}'>{e(b[0])}</a></p>")
        elif kind == "table":
            ident = f" id='{e(b.id)}'" if b.id else ""
            kind_ = " class='verdicts'" if any(isinstance(v, Mark) for row in b.rows for v in row) else ""
            out.append(f"<div class='wide'><table{ident}{kind_}><tr>" + "".join(f"<th>{e(c)}</th>" for c in b.columns)
                       + "</tr>")
            out += ["<tr>" + "".join(td(v) for v in row) + "</tr>" for row in b.rows]
            out.append("</table></div>" + (f"<p>{inline(b.note)}</p>" if b.note else ""))
        elif kind == "figure":
            data = base64.b64encode(b.png).decode()
            out.append(f"<figure><img alt='{e(b.name)}' src='data:image/png;base64,{data}'>"
                       f"<figcaption>{e(b.caption)}</figcaption></figure>"
                       f"<p class='reading'><b>Reading:</b> {inline(b.reading)}</p>")
        if side:
            out.append("</div>")
    out.append(("</details>" if opened else "") + "</body></html>")
    return "\n".join(out)
