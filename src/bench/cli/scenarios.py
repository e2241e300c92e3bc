"""`compaction-bench scenarios list | show | validate | generate | audit`."""
from __future__ import annotations

from collections import Counter
import sys
import time
from pathlib import Path

from bench import HOME
from bench.cli import COMMANDS
from bench.cli.audit import main as audit_main
from bench.cli.parser import Parser
from bench.errors import BadInput
from bench.harness.messages import render_all, system_message
from bench.scenarios import loader
from bench.scenarios.generators import DEFAULT_OUT, LIBRARY, generate, write
from bench.scenarios.model import Scenario
from bench.scoring import oracle_reading
from bench.scoring.checks import Judge
from bench.tokens import default_reserve, tokenizer, trigger_limit

DEFAULT_DIR = HOME / "scenarios"


def scenario_tokens(s: Scenario) -> int:
    """Tokens of the whole session as the harness renders it (system prompt + every event)."""
    tok = tokenizer()
    msgs = [system_message(tok, s), *render_all(tok, s)]
    return tok.size_of(msgs)


CACHE_FILE = "scenario-rows.json"


def expected_compactions(total: int, system: int, window: int) -> int:
    """How often the conversation fills the room a compaction leaves, at the default trigger.

    Estimate: floor((total - system) / (trigger - system)), with trigger =
    min(0.9 window, window - reserve - margin): each compaction is assumed to
    empty the conversation, so strategies that keep recent turns compact more often.
    """
    trigger = trigger_limit(window, *default_reserve(window))
    room = trigger - system
    return max(0, (total - system) // room) if room > 0 else -1


def _cache_path():
    import os
    from pathlib import Path

    return Path(os.environ.get("XDG_CACHE_HOME") or Path.home() / ".cache") / "compaction-bench" / CACHE_FILE


ROW_TYPES = {"stamp": list, "id": str, "tags": list, "events": int, "tokens": int, "system": int, "window": int}


def _valid_row(row) -> bool:
    return (isinstance(row, dict) and all(isinstance(row.get(k), t) and not isinstance(row.get(k), bool)
                                          for k, t in ROW_TYPES.items())
            and len(row["stamp"]) == 2 and all(isinstance(x, int) for x in row["stamp"])
            and all(isinstance(t, str) for t in row["tags"]) and isinstance(row.get("title"), (str, type(None))))


def _load_cache() -> dict:
    """The row cache; anything unreadable or not shaped like rows counts as not cached
    (it is only a cache, so a hand-edited or foreign file must never break `list`)."""
    import json

    try:
        data = json.loads(_cache_path().read_text(encoding="utf-8"))
    except (OSError, ValueError, RecursionError):
        return {}
    if not isinstance(data, dict):
        return {}
    return {k: row for k, row in data.items() if _valid_row(row)}


def _save_cache(cache: dict) -> None:
    import json

    path = _cache_path()
    try:
        text = json.dumps(cache)
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text, encoding="utf-8")
    except (OSError, TypeError, ValueError):
        pass   # a read-only home, or a row that is not JSON, only costs speed


def list_row(path, cache: dict) -> dict:
    """id, tags, events, tokens, system tokens, window, title of one file; cached by path, size and mtime,
    because counting a 1M-token scenario is the slow part of `scenarios list`."""

    st = path.stat()
    key = str(path.resolve())
    hit = cache.get(key)
    if _valid_row(hit) and hit["stamp"] == [st.st_mtime_ns, st.st_size]:
        return hit
    s = loader.load(path)
    try:
        tokens, system = scenario_tokens(s), system_message(tokenizer(), s).tokens
    except (TypeError, ValueError) as exc:   # something the validator let through cannot be rendered
        raise BadInput(f"{path}: cannot render the scenario to count its tokens: {exc}")
    row = {"stamp": [st.st_mtime_ns, st.st_size], "id": s.id, "tags": list(s.tags), "events": len(s.events),
           "tokens": tokens, "system": system, "window": s.window, "title": s.title}
    cache[key] = row
    return row


def cmd_list(argv: list[str]) -> int:
    p = Parser(prog="compaction-bench scenarios list",
                                epilog="compactions: expected count at the scenario's window if each compaction empties the "
                                       "conversation: (tokens - system) / (trigger - system), trigger = min(0.9 window, "
                                       "window - reserve - margin). Strategies that keep recent turns compact more often.")
    p.add_argument("paths", nargs="*", help="files, directories or globs (default: the bundled scenarios)")
    p.add_argument("--window", type=int, help="estimate compactions at this window instead of each scenario's own")
    a = p.parse_args(argv)
    if a.window is not None and a.window <= 0:
        raise BadInput(f"--window: must be a positive integer, got {a.window}")
    cache = _load_cache()
    rows, problems = [], []
    for path in loader.expand(a.paths or [str(DEFAULT_DIR)], base=HOME):
        try:
            rows.append(list_row(path, cache))
        except BadInput as exc:
            problems.extend(exc.problems)
    _save_cache(cache)
    if problems:
        raise BadInput(problems)
    table = []
    for r in rows:
        window = a.window or r["window"]
        table.append([r["id"], ",".join(r["tags"]), str(r["events"]), str(r["tokens"]), str(window),
                      str(expected_compactions(r["tokens"], r["system"], window)), r["title"]])
    head = ["id", "tags", "events", "tokens", "window", "compactions", "title"]
    widths = [max(len(h), *(len(r[i]) for r in table)) if table else len(h) for i, h in enumerate(head)]
    print("  ".join(h.ljust(w) for h, w in zip(head, widths)).rstrip())
    for r in table:
        print("  ".join(v.ljust(w) for v, w in zip(r, widths)).rstrip())
    total = sum(r["tokens"] for r in rows)
    print(f"{len(rows)} scenarios, {total} tokens; compactions = (tokens - system) / (trigger - system) at the default trigger")
    return 0


def cmd_show(argv: list[str]) -> int:
    p = Parser(prog="compaction-bench scenarios show")
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
    for path in loader.expand([directory], base=HOME):
        try:
            data, _ = loader.parse(path)
        except BadInput:
            continue
        if isinstance(data, dict) and data.get("id") == ident:
            return loader.load(path)
    raise BadInput(f"{directory}: no scenario with id '{ident}'")


def cmd_validate(argv: list[str]) -> int:

    p = Parser(prog="compaction-bench scenarios validate",
                                epilog="A problem makes a file unusable (exit 2). A warning says what a valid file measures "
                                       "less well than it seems to (a truth key the system prompt carries, a probe whose "
                                       "question holds its answer, a fact a bag of identifiers would keep, a workstream whose "
                                       "events never say where it stands); warnings exit 0, except with --strict and for "
                                       "the bundled scenarios (scenarios/library, scenarios/hand), which count them as problems.")
    p.add_argument("paths", nargs="+", help="scenario files, directories or globs")
    p.add_argument("--strict", action="store_true", help="count warnings as problems (always so for the bundled scenarios)")
    a = p.parse_args(argv)
    problems: list[str] = []
    files = loader.expand(a.paths)
    for path in files:
        try:
            s, found, warnings = loader.inspect(path, strict=True if a.strict else None)
        except BadInput as exc:
            problems.extend(exc.problems)
            continue
        for line in warnings:
            print(line, file=sys.stderr)
        if s is None:
            problems.extend(found)
            continue
        unread = measurability(s, path)
        if unread and (a.strict or loader.bundled(path)):
            problems.extend(unread)
            continue
        for line in unread:
            print(line, file=sys.stderr)
        warnings = [*warnings, *unread]
        note = f", {len(warnings)} warning{'s' if len(warnings) != 1 else ''}" if warnings else ""
        print(f"ok {path}: {s.id}, {len(s.events)} events{note}")
    if problems:
        raise BadInput(problems)
    return 0


def measurability(s: Scenario, path: Path) -> list[str]:
    """A warning per metric the oracle itself does not score perfectly at every request of the scenario (the
    same reading `run` makes, bench.scoring.oracle): not measurable there, with the first request, item and the
    scorer's reason — the cause to fix in the record or the truth."""
    found = oracle_reading(Judge(s, tokenizer(), True), True)
    return [f"{path}: {x.column}: warning: {x.detail()}" for x in found.values()]


def cmd_generate(argv: list[str]) -> int:
    p = Parser(prog="compaction-bench scenarios generate",
                                description="Write the seeded scenario library (one JSON file per scenario).")
    p.add_argument("--seed", type=int, default=0, help="seed for every generator (the committed library uses 0)")
    p.add_argument("--out", default=str(DEFAULT_OUT), help=f"output directory (default {DEFAULT_OUT.relative_to(HOME)})")
    p.add_argument("--only", nargs="+", metavar="NAME", help="generate only these scenarios")
    p.add_argument("--scale", type=float, default=1.0, help="multiply every size target (e.g. 0.1 for quick variants)")
    p.add_argument("--list", action="store_true", help="list the generators and exit")
    a = p.parse_args(argv)
    if a.list:
        for name, spec in LIBRARY.items():
            print(f"{name:<20} window {spec.window:>7}  ~{spec.target:>9} tokens  {', '.join(spec.tags)}\n{'':<20} tests: {spec.tests}")
        return 0
    unknown = [n for n in a.only or () if n not in LIBRARY]
    if unknown:
        raise BadInput([f"--only: unknown scenario '{n}' (known: {', '.join(LIBRARY)})" for n in unknown])
    if not 0 < a.scale <= 4:
        raise BadInput(f"--scale: must be in (0, 4], got {a.scale}")
    out = Path(a.out)
    try:   # before the (slow) generation, so a bad --out fails at once
        out.mkdir(parents=True, exist_ok=True)
    except OSError as exc:
        raise BadInput(f"--out: cannot create the directory {out}: {exc.strerror or exc}")
    for name in a.only or LIBRARY:
        start = time.perf_counter()
        script = generate(name, a.seed, a.scale)
        try:
            path = write(script, out)
        except OSError as exc:
            raise BadInput(f"--out: cannot write {out / (script.id + '.json')}: {exc.strerror or exc}")
        print(f"wrote {path}: {len(script.events)} events, {script.tokens()} tokens, window {script.window} "
              f"({time.perf_counter() - start:.1f}s)")
    return 0


SUBCOMMANDS = {"list": cmd_list, "show": cmd_show, "validate": cmd_validate, "generate": cmd_generate,
               "audit": audit_main}
def main(argv: list[str]) -> int:
    if argv and argv[0] in ("-h", "--help"):
        print("usage: compaction-bench scenarios COMMAND [ARGS]\n\ncommands:\n"
              + COMMANDS["scenarios"].synopsis)
        return 0
    if not argv or argv[0] not in SUBCOMMANDS:
        known = " | ".join(SUBCOMMANDS)
        raise BadInput(f"scenarios: expected one of {known}" + (f", got '{argv[0]}'" if argv else ""))
    return SUBCOMMANDS[argv[0]](argv[1:])
