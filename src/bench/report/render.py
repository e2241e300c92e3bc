"""One report document, rendered twice: Markdown and self-contained HTML.

A report is a list of blocks (headings, paragraphs, tables, figures). Figures are
PNG bytes: written to figures/NAME.png and linked from the Markdown, embedded as
base64 in the HTML, so report.html needs no other file.
"""
from __future__ import annotations

import base64
import html
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

    def link(self, text: str, href: str) -> None:
        """A link to a file beside the report (relative, so the folder can move)."""
        self.blocks.append(("link", (text, href)))

    def figure(self, f: "Figure | Future | None") -> None:
        """A figure, or the future of one being drawn elsewhere (`figures.Painter`): `resolve()` waits."""
        if f is not None:
            self.blocks.append(("figure", f))

    def resolve(self) -> None:
        """Every figure drawn: futures replaced by their result, figures that came out empty dropped."""
        blocks = [(k, b.result() if k == "figure" and isinstance(b, Future) else b) for k, b in self.blocks]
        self.blocks = [(k, b) for k, b in blocks if b is not None]

    def figures(self) -> list[Figure]:
        return [b for kind, b in self.blocks if kind == "figure"]


def cell(v: Any) -> str:
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
    for kind, b in doc.blocks:
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
    return "\n".join(out)


STYLE = """body{font-family:system-ui,sans-serif;max-width:1180px;margin:1.5em auto;padding:0 1em;color:#222}
#headline{font-size:.85em}#headline td,#headline th{padding:.2em .45em}
.wide{overflow-x:auto}table{border-collapse:collapse;margin:.5em 0 1.5em;font-size:.9em}
code{background:#f3f3f3;padding:0 .2em}th,td{border:1px solid #ccc;padding:.25em .6em}
th{background:#f3f3f3}td{text-align:right}td:first-child,td:nth-child(2){text-align:left}
img{max-width:100%;border:1px solid #eee}figcaption{color:#555;font-size:.9em;margin-bottom:1.5em}"""


def inline(text: str) -> str:
    """Markdown's `code` spans as <code>, everything else escaped (the same prose feeds report.md)."""
    parts = html.escape(text).split("`")
    return "".join(f"<code>{p}</code>" if i % 2 else p for i, p in enumerate(parts))


def to_html(doc: Doc) -> str:
    e = html.escape
    out = ["<!doctype html><html><head><meta charset='utf-8'>", f"<title>{e(doc.title)}</title>",
           f"<style>{STYLE}</style></head><body>", f"<h1>{e(doc.title)}</h1>"]
    for kind, b in doc.blocks:
        if kind == "h":
            out.append(f"<h2>{e(b)}</h2>")
        elif kind == "p":
            out.append(f"<p>{inline(b)}</p>")
        elif kind == "link":
            out.append(f"<p><a href='{e(b[1])}'>{e(b[0])}</a></p>")
        elif kind == "table":
            ident = f" id='{e(b.id)}'" if b.id else ""
            out.append(f"<div class='wide'><table{ident}><tr>" + "".join(f"<th>{e(c)}</th>" for c in b.columns) + "</tr>")
            out += ["<tr>" + "".join(f"<td>{e(cell(v))}</td>" for v in row) + "</tr>" for row in b.rows]
            out.append("</table></div>" + (f"<p>{inline(b.note)}</p>" if b.note else ""))
        elif kind == "figure":
            data = base64.b64encode(b.png).decode()
            out.append(f"<figure><img alt='{e(b.name)}' src='data:image/png;base64,{data}'>"
                       f"<figcaption>{e(b.caption)}</figcaption></figure>")
    out.append("</body></html>")
    return "\n".join(out)
