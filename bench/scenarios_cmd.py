"""`compaction-bench scenarios list | show | validate | generate`."""
from __future__ import annotations

import argparse
from collections import Counter
from importlib import import_module

from . import loader
from .config import ROOT
from .errors import BadInput
from .scenario import Scenario

DEFAULT_DIR = ROOT / "scenarios"


def scenario_tokens(s: Scenario) -> int:
    """Tokens of the whole session as the harness renders it (system prompt + every event)."""
    from .messages import render_all, system_message
    from .tokens import tokenizer

    tok = tokenizer()
    msgs = [system_message(tok, s), *render_all(tok, s)]
    return tok.request_size([m.tokens for m in msgs])


def cmd_list(argv: list[str]) -> int:
    p = argparse.ArgumentParser(prog="compaction-bench scenarios list")
    p.add_argument("paths", nargs="*", help="files, directories or globs (default: the bundled scenarios)")
    a = p.parse_args(argv)
    scenarios = loader.load_all(loader.expand(a.paths or [str(DEFAULT_DIR)], base=ROOT))
    rows = []
    for s in scenarios:
        rows.append([s.id, ",".join(s.tags), str(len(s.events)), str(scenario_tokens(s)), str(s.window), s.title])
    head = ["id", "tags", "events", "tokens", "window", "title"]
    widths = [max(len(h), *(len(r[i]) for r in rows)) if rows else len(h) for i, h in enumerate(head)]
    print("  ".join(h.ljust(w) for h, w in zip(head, widths)).rstrip())
    for r in rows:
        print("  ".join(v.ljust(w) for v, w in zip(r, widths)).rstrip())
    return 0


def cmd_show(argv: list[str]) -> int:
    p = argparse.ArgumentParser(prog="compaction-bench scenarios show")
    p.add_argument("id", help="a scenario id (or a path to a scenario file)")
    p.add_argument("--dir", default=str(DEFAULT_DIR), help="where to look for the id")
    a = p.parse_args(argv)
    s = find(a.id, a.dir)
    roles = Counter(e.role for e in s.events)
    t = s.truth
    print(f"{s.id}: {s.title}")
    print(f"  file     {s.path}")
    print(f"  user     {s.user}    window {s.window}    tags {', '.join(s.tags) or '-'}")
    print(f"  events   {len(s.events)} ({', '.join(f'{k} {v}' for k, v in sorted(roles.items()))})")
    print(f"  tokens   {scenario_tokens(s)}")
    print(f"  truth    mission {len(t.mission)}, workstreams {len(t.workstreams)}, constraints {len(t.constraints)}, "
          f"injections {len(t.injections)}, facts {len(t.facts)}, decisions {len(t.decisions)}")
    print(f"  probes   {len(s.probes)}")
    for e in s.events:
        extra = e.source or (",".join(c.tool for c in e.calls) if e.calls else "") or e.call or ""
        preview = " ".join(e.text.split())[:90]
        print(f"  {e.t:>8g}s {e.id:<10} {e.role:<10} {extra:<14} {preview}")
    return 0


def find(ident: str, directory: str) -> Scenario:
    from pathlib import Path

    if Path(ident).suffix in loader.SCENARIO_SUFFIXES and Path(ident).exists():
        return loader.load(ident)
    for path in loader.expand([directory], base=ROOT):
        try:
            data, _ = loader.parse(path)
        except BadInput:
            continue
        if isinstance(data, dict) and data.get("id") == ident:
            return loader.load(path)
    raise BadInput(f"{directory}: no scenario with id '{ident}'")


def cmd_validate(argv: list[str]) -> int:
    p = argparse.ArgumentParser(prog="compaction-bench scenarios validate")
    p.add_argument("paths", nargs="+", help="scenario files, directories or globs")
    a = p.parse_args(argv)
    problems: list[str] = []
    files = loader.expand(a.paths)
    for path in files:
        try:
            s = loader.load(path)
        except BadInput as exc:
            problems.extend(exc.problems)
            continue
        print(f"ok {path}: {s.id}, {len(s.events)} events")
    if problems:
        raise BadInput(problems)
    return 0


def cmd_generate(argv: list[str]) -> int:
    return int(import_module("scenarios.generators").main(argv) or 0)


SUBCOMMANDS = {"list": cmd_list, "show": cmd_show, "validate": cmd_validate, "generate": cmd_generate}


def main(argv: list[str]) -> int:
    if not argv or argv[0] not in SUBCOMMANDS:
        known = " | ".join(SUBCOMMANDS)
        raise BadInput(f"scenarios: expected one of {known}" + (f", got '{argv[0]}'" if argv else ""))
    return SUBCOMMANDS[argv[0]](argv[1:])
