"""`import --review`: a short Markdown page a person skims before using an imported scenario.

The derived truth is a guess about what the user wanted; the scores are only as good as that guess. So each
item is one line with its confidence and the place in the source file it came from, the least sure first
within each section, and the harness's recorded compactions are listed with what they installed. The person
edits the scenario file itself (delete an item, fix a key); this page only says where to look.
"""
from __future__ import annotations

from typing import Any

CHECK = 0.7   # items below this confidence are marked for a look


def review(data: dict[str, Any]) -> str:
    truth = data.get("truth", {})
    lines = [f"# Review: {data['id']}", "",
             f"{len(data['events'])} events, window {data['window']:,}. Each derived item: confidence, where it came "
             f"from, what it holds. Items marked **check** are below {CHECK}; delete or fix them in the scenario "
             "file before you rely on its scores.", ""]
    prov = data.get("provenance")
    if prov:
        licence = prov.get("licence", "unknown")
        lines += [f"Source: {prov['format']} {prov.get('source', '')}"
                  + (f", sha256 {prov['sha256'][:16]}..." if prov.get("sha256") else "")
                  + f"; licence: {licence}" + (" (fill it in before you share the file)" if licence == "unknown" else "")
                  + f"; {prov.get('secrets_redacted', 0)} secret(s) redacted"
                  + (f" ({', '.join(prov['secret_kinds'])})" if prov.get("secret_kinds") else ""), ""]
    tasks = [{**it, "text": f"{w['title']}: item {n} of {len(w['items'])}"
              + (f", {'withdrawn' if it.get('withdrawn') else 'done'} at `{it['done']}`" if it.get("done") else ", open")}
             for w in truth.get("workstreams", []) for n, it in enumerate(w["items"], 1)]
    for section, what in (("mission", "Goal"), ("tasks", "The user's later tasks (workstream items)"),
                          ("constraints", "The user's rules"), ("facts", "Facts")):
        items = sorted(tasks if section == "tasks" else truth.get(section, []), key=lambda x: x.get("confidence", 1.0))
        lines.append(f"## {what} ({len(items)})")
        lines.append("")
        for x in items:
            sure = x.get("confidence")
            mark = " **check**" if sure is not None and sure < CHECK else ""
            said = [f"`{x['id']}`" if section == "tasks" else "", _short(x.get("text") or x.get("quote") or ""),
                    f"keys: {', '.join(x['keys'])}" if x.get("keys") else ""]
            kind = f" {x['kind']}" if x.get("kind") else ""
            name = f"item from `{x['from']}`" if section == "tasks" else f"`{x['id']}`"
            lines.append(f"- {name}{kind} ({sure if sure is not None else '?'}, {x.get('source', x['from'])}){mark}: "
                         + " | ".join(p for p in said if p))
        if not items:
            lines.append("- none derived")
        lines.append("")
    comps = data.get("compactions", [])
    if comps:
        lines.append(f"## The harness's own compactions ({len(comps)}; replayed by the `recorded` strategy)")
        lines.append("")
        for c in comps:
            what = ", ".join(x.get("event") or f"{x['kind']} ({len(x.get('text', '')):,} chars)" for x in c["installed"])
            size = f", {c['pre_tokens']:,} tokens before" if c.get("pre_tokens") is not None else ""
            lines.append(f"- after `{c['after']}` ({c['trigger']}{size}): installed {what or 'nothing'}")
        lines.append("")
    return "\n".join(lines)


def _short(text: str, most: int = 160) -> str:
    text = " ".join(text.split())
    return text if len(text) <= most else text[:most - 1].rsplit(" ", 1)[0] + " ..."
